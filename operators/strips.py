"""The NLA strips a bake made (``bake_to = "NLA_STRIP"``, :mod:`.keys`): finding a character's own."""

from __future__ import annotations


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
