"""The NLA strips a bake made (``bake_to = "NLA_STRIP"``, :mod:`.keys`): finding a character's own,
and playing one bake's action alone while Blender evaluates it (its verification, its export)."""

from __future__ import annotations

from .compat import assign_action

_ANIMATION = ("action", "use_nla", "action_blend_type", "action_influence", "action_extrapolation")


def own_strip(obj, generator: str):
    """``(track, strip)`` of the topmost NLA strip holding ``obj``'s own bake of ``generator``
    (``(None, None)`` when it has none)."""
    ad = obj.animation_data
    for track in reversed(ad.nla_tracks if ad is not None else ()):
        for strip in track.strips:
            a = strip.action
            if a is not None and a.procanim.generator == generator and a.procanim.owner == obj.name:
                return track, strip
    return None, None


class PlayingAlone:
    """While inside: ``obj`` plays ``action`` alone (as its active action, NLA off, full influence);
    its animation settings are put back on leaving."""

    def __init__(self, obj, action):
        self.obj, self.action = obj, action

    def __enter__(self):
        ad = self.obj.animation_data or self.obj.animation_data_create()
        self.saved = {name: getattr(ad, name) for name in _ANIMATION}
        self.slot = getattr(ad, "action_slot", None)  # Blender 4.4+ (None before)
        assign_action(self.obj, self.action)
        ad.use_nla = False
        ad.action_blend_type, ad.action_influence, ad.action_extrapolation = "REPLACE", 1.0, "HOLD"
        return self

    def __exit__(self, *_exc):
        ad = self.obj.animation_data
        for name, value in self.saved.items():
            setattr(ad, name, value)
        if self.slot is not None:
            ad.action_slot = self.slot
        return False
