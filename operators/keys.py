"""Keys into Blender: the action a bake writes into, its F-curves, and the pose channels around it.

Every bake (onto the deform bones or onto a rig's controls) goes through the same three steps:

1. :func:`open_bake` chooses the action and where it plays (``bake_to``, one of :data:`BAKE_TO`).
   ``ACTION``: the armature's active action. A previous bake of the same generator is cleared and
   rewritten in place while the animator has not edited it (:mod:`.fingerprint`); otherwise a new
   action is made, and the action it replaces is kept (a fake user, its name in the new action's
   ``procanim.previous_action``), so nothing of the user's is lost. ``NLA_STRIP``: a strip on a new
   NLA track named after the generator (blend ``blend_type``, Combine by default), the active
   action and the other tracks left as they are; a previous strip of the same generator is replaced
   on its own track while untouched, and an edited one is kept (muted, its action ``.edited``).
2. :class:`BakeKeys` writes F-curves, one ``foreach_set`` per key attribute: :meth:`BakeKeys.curve`
   any :class:`~procanim_addon.curve_keys.CurveKeys` (frames, values, Bezier handles and their types,
   interpolation, key types), :meth:`BakeKeys.location`, :meth:`BakeKeys.rotation` (in the bone's
   rotation mode) and :meth:`BakeKeys.object_channels` a key on each of the given frames. F-curves
   are grouped per bone, as Blender's own keying does.
3. :meth:`BakeKeys.finish` stores the generator, owner, metrics (``procanim.metrics_json``, read by
   :func:`read_metrics`) and the keys' fingerprint on the action and sets its frame range; for a
   walk loop (:func:`procanim_addon.loop.cycle_of`) it adds a *Cycles* modifier on every F-curve
   and makes the action cyclic over the loop (docs/loops.md); for an NLA strip it places the strip.

The pose channels an action animates keep the last evaluated values once it stops animating them:
:func:`animated_channels`, :func:`rest_channels`, :func:`pose_channels`, :func:`set_pose_channels`
and :func:`set_action_aside` (while a rig is read) deal with them.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import dataclass
from functools import cache
from typing import Any

import bpy
import numpy as np

from ..procanim_addon.clip import Clip
from ..procanim_addon.curve_keys import CurveKeys, rotation_channels
from ..procanim_addon.errors import InputError
from ..procanim_addon.loop import CycleInfo, cycle_of
from ..procanim_addon.registry import BY_ID
from .compat import action_channels, action_fcurves, assign_action, assign_strip_slot, remove_fcurve
from .fingerprint import digest, keep_edited, untouched
from .strips import PlayingAlone, own_strip

BAKE_TO = ("ACTION", "NLA_STRIP")  # the armature's active action; a strip on an NLA track of its own
BLEND_TYPES = ("COMBINE", "REPLACE", "ADD", "SUBTRACT", "MULTIPLY")  # an NLA strip's (Blender's names)
#: A loop's carrier channel advances per loop (Cycles REPEAT_OFFSET) when its closing key is further
#: than this from its first (m); the rest repeat as they are.
ADVANCE_EPS = 1e-6
#: What a re-run keeps of the strip it replaces (the animator may have set them in the NLA editor).
_STRIP_KEPT = ("extrapolation", "influence", "mute", "blend_in", "blend_out", "use_auto_blend")

_REST_CHANNELS = {
    "location": (0.0, 0.0, 0.0),
    "rotation_quaternion": (1.0, 0.0, 0.0, 0.0),
    "rotation_euler": (0.0, 0.0, 0.0),
    "rotation_axis_angle": (0.0, 0.0, 1.0, 0.0),
    "scale": (1.0, 1.0, 1.0),
}
_BONE_PREFIX = 'pose.bones["'
_OBJECT_GROUP = "Object Transforms"
# CurveKeys field → the Keyframe property it is written to
_ENUM_FIELDS = {
    "handle_left_type": "handle_left_type",
    "handle_right_type": "handle_right_type",
    "interpolation": "interpolation",
    "key_type": "type",
}


# ----------------------------------------------------------------------------- names and paths


def escape(name: str) -> str:
    """A bone name quoted for an RNA data path."""
    return name.replace("\\", "\\\\").replace('"', '\\"')


def bone_path(name: str) -> str:
    """The data path prefix of pose bone ``name``'s channels (``pose.bones["name"].``)."""
    return f'{_BONE_PREFIX}{escape(name)}"].'


def property_path(bone: str, prop: str) -> str:
    """The data path of pose bone ``bone``'s custom property ``prop``."""
    return f'{_BONE_PREFIX}{escape(bone)}"]["{prop}"]'


def keyed_bone_names(obj, action=None) -> list[str]:
    """Names of the pose bones the armature's active action (or ``action``, a bake of it in an NLA
    strip) keys, in the order of its F-curves."""
    ad = obj.animation_data
    if action is None and (ad is None or ad.action is None):
        return []
    out = []
    for fc in action_fcurves(action, None) if action is not None else action_fcurves(ad.action, obj):
        if fc.data_path.startswith(_BONE_PREFIX):
            name = fc.data_path[len(_BONE_PREFIX) :].split('"]', 1)[0]
            if name not in out:
                out.append(name)
    return out


def read_metrics(action) -> dict:
    """The metrics a bake stored on ``action`` ({} when none)."""
    try:
        return json.loads(action.procanim.metrics_json or "{}")
    except (ValueError, AttributeError):
        return {}


# ----------------------------------------------------------------------------- pose channels


def animated_channels(action, obj) -> set[tuple[str, str]]:
    """``(bone name, channel)`` of every pose-bone transform (location, rotation, scale) that
    ``action`` animates on ``obj``."""
    out = set()
    for fc in action_fcurves(action, obj):
        head, _, channel = fc.data_path.rpartition('"].')
        if head.startswith(_BONE_PREFIX) and channel in _REST_CHANNELS:
            out.add((head[len(_BONE_PREFIX) :].replace('\\"', '"').replace("\\\\", "\\"), channel))
    return out


def rest_channels(obj, channels) -> None:
    """Put ``channels`` (``(bone name, channel)``) of ``obj``'s pose back to rest.

    A channel an action animated keeps the value of the last frame Blender evaluated once the
    action stops animating it; those values are the action's, not the animator's. Left there, the
    bones a previous bake keyed and a new one does not (the ``ORG-`` bones of a ``DEFORM`` bake under
    a bake onto the controls) would offset the new motion.
    """
    bones = obj.pose.bones
    for name, channel in channels:
        pb = bones.get(name)
        if pb is not None:
            setattr(pb, channel, _REST_CHANNELS[channel])


def pose_channels(obj, channels) -> dict:
    """``{(bone name, channel): value}`` of ``obj``'s pose now, for :func:`set_pose_channels`."""
    bones = obj.pose.bones
    return {(n, c): tuple(getattr(bones[n], c)) for n, c in channels if n in bones}


def set_pose_channels(obj, values: dict) -> None:
    """Put back what :func:`pose_channels` read."""
    bones = obj.pose.bones
    for (name, channel), value in values.items():
        if name in bones:
            setattr(bones[name], channel, value)


def set_action_aside(obj):
    """Unassign ``obj``'s action (its channels put at rest) while a rig is read; returns a function
    that assigns it back (with its slot) and puts those channels back as they were. Nothing of the
    action is changed, so a bake that fails after this loses nothing."""
    ad = obj.animation_data
    action = ad.action if ad is not None else None
    if action is None:
        return lambda: None
    slot = getattr(ad, "action_slot", None)  # Blender 4.4+ (None before)
    channels = animated_channels(action, obj)
    saved = pose_channels(obj, channels)
    ad.action = None
    rest_channels(obj, channels)

    def put_back():
        ad.action = action
        if slot is not None:
            ad.action_slot = slot
        set_pose_channels(obj, saved)

    return put_back


# ----------------------------------------------------------------------------- writing keys


@cache
def _enum_values(prop: str) -> dict[str, int]:
    """Blender's integer value of each name of the Keyframe enum ``prop`` (what ``foreach_set`` takes)."""
    rna = bpy.types.Keyframe.bl_rna.properties[prop]
    assert isinstance(rna, bpy.types.EnumProperty)
    return {item.identifier: item.value for item in rna.enum_items}


def write_keys(fc, keys: CurveKeys) -> np.ndarray:
    """Write ``keys`` into the F-curve ``fc`` (which has no keys yet) and let Blender compute what it
    computes (automatic handles); returns the keys' coordinates as written, float32
    ``[f0, v0, f1, v1, …]``."""
    n = len(keys)
    points = fc.keyframe_points
    points.add(n)
    co = np.empty(2 * n, dtype=np.float32)
    co[0::2] = keys.frames
    co[1::2] = keys.values
    points.foreach_set("co", co)
    for field, prop in _ENUM_FIELDS.items():
        names = keys.names(field)
        if names is not None:
            values = _enum_values(prop)
            unique, inverse = np.unique(np.array(names), return_inverse=True)
            points.foreach_set(prop, np.array([values[u] for u in unique], dtype=np.int32)[inverse])
    if keys.handle_left is not None:
        points.foreach_set("handle_left", np.asarray(keys.handle_left, dtype=np.float32).ravel())
        points.foreach_set("handle_right", np.asarray(keys.handle_right, dtype=np.float32).ravel())
    fc.update()
    return co


@dataclass
class StripPlace:
    """Where an ``NLA_STRIP`` bake's strip goes once its keys are written: on ``track`` in place of
    ``replaced`` (its settings in ``kept``), or on a new track named ``track_name`` at the top of the
    stack; blended by ``blend_type``."""

    track_name: str
    blend_type: str
    track: Any = None  # bpy NlaTrack
    replaced: Any = None  # bpy NlaStrip
    kept: dict | None = None

    def put(self, obj, action) -> object:
        """Make the strip playing ``action`` over its frame range on ``obj``; returns it."""
        lo = action.frame_range[0]
        tracks = obj.animation_data.nla_tracks
        strip = None
        if self.track is not None:
            if self.replaced is not None:
                self.track.strips.remove(self.replaced)
            try:
                strip = self.track.strips.new(action.name, int(np.floor(lo)), action)
            except RuntimeError:  # the animator put another strip where the new one would go
                strip = None
        if strip is None:
            track = tracks.new()
            track.name = self.track_name
            strip = track.strips.new(action.name, int(np.floor(lo)), action)
        assign_strip_slot(strip, obj)
        strip.blend_type = self.blend_type
        for name, value in (self.kept or {}).items():
            setattr(strip, name, value)
        return strip


class BakeKeys:
    """The F-curves of one bake being written into ``action`` on ``obj`` (see :func:`open_bake`);
    ``previous``: the action it replaced, kept with a fake user (None when it rewrites its own bake
    or bakes into an NLA strip); ``place``: the NLA strip to make (None: the active action)."""

    def __init__(self, obj, action, previous, fcurves, groups, place: StripPlace | None = None):
        self.obj, self.action, self.previous, self.place = obj, action, previous, place
        self._fcurves, self._groups = fcurves, groups
        self._curves: list = []  # the F-curves written, in order
        self.written: dict[tuple[str, int], np.ndarray] = {}  # (data path, index) → co: the fingerprint

    @property
    def curves(self) -> int:
        """How many F-curves were written."""
        return len(self.written)

    def curve(self, group: str, path: str, index: int, keys: CurveKeys) -> None:
        """One F-curve ``path[index]`` of ``keys``, in the channel group ``group``."""
        fc = self._fcurves.new(path, index=index)
        fc.group = self._groups.get(group) or self._groups.new(group)
        self.written[path, index] = write_keys(fc, keys)
        self._curves.append(fc)

    def channel(self, group: str, path: str, frames: np.ndarray, values: np.ndarray) -> None:
        """F-curves ``path[0 … k-1]`` with a key on each of ``frames`` ``(F,)``: ``values`` ``(F, k)``."""
        for k in range(values.shape[1]):
            self.curve(group, path, k, CurveKeys(frames, values[:, k]))

    def location(self, group: str, base: str, locations: np.ndarray, frames: np.ndarray) -> None:
        """Location keys ``(F, 3)`` of a bone (``base``: :func:`bone_path`) or of the object (``''``)."""
        self.channel(group, base + "location", frames, locations)

    def rotation(self, group: str, base: str, mode: str, quats: np.ndarray, frames: np.ndarray) -> None:
        """Rotation keys of quaternions ``(F, 4)`` in rotation ``mode`` (a bone's, or the object's
        with ``base`` ``''``)."""
        suffix, values = rotation_channels(mode, quats)
        self.channel(group, base + suffix, frames, values)

    def object_channels(self, clip: Clip, frames: np.ndarray) -> None:
        """The clip's object-level root motion, when it has one (a path walk with root motion 'Object')."""
        if clip.object_locations is not None:
            self.location(_OBJECT_GROUP, "", clip.object_locations, frames)
        if clip.object_rotations is not None:
            self.rotation(_OBJECT_GROUP, "", self.obj.rotation_mode, clip.object_rotations, frames)

    def playing(self):
        """A context in which Blender plays this bake as it will once finished, to verify it: an
        ``NLA_STRIP`` bake's action alone (:class:`.strips.PlayingAlone`; its strip is placed by
        :meth:`finish`); the active action already plays."""
        return nullcontext() if self.place is None else PlayingAlone(self.obj, self.action)

    def finish(self, clip: Clip, metrics: dict):
        """Store generator, owner, ``metrics`` (the clip's frame range added) and the keys'
        fingerprint on the action; set its frame range — a walk loop's (``clip`` holds its closing
        key, :func:`procanim_addon.loop.repeated`) cyclic, with a Cycles modifier on every F-curve —
        and place the NLA strip when the bake goes into one. Returns the action."""
        action, info = self.action, self.action.procanim
        info.generator = clip.generator
        info.owner = self.obj.name
        metrics["frame_start"], metrics["frame_end"] = clip.frame_range
        info.metrics_json = json.dumps(_plain(metrics))
        lo, hi = clip.frame_range
        action.frame_range = (lo, hi) if hi > lo else (lo, lo + 1)
        action.use_frame_range = action.use_cyclic = False  # a rewritten loop's flags go with it
        loop = cycle_of(clip)
        if loop is not None:
            self._make_cyclic(loop)
        info.fingerprint = digest(self.written)
        if self.place is not None:
            self.place.put(self.obj, action)
        return action

    def _make_cyclic(self, loop: CycleInfo) -> None:
        """A Cycles modifier on every F-curve — REPEAT_OFFSET on the carrier's location channels
        that advance per loop (their closing key minus their first is the per-loop offset), REPEAT
        elsewhere — with handles computed as the cycle plays (``fc.update()`` once the modifier is
        on); the action's manual frame range is the loop's, its Cyclic Animation flag set."""
        carrier: str | None
        if loop.travel_role == "object":
            carrier = "location"
        else:
            carrier = bone_path(loop.travel_bone) + "location" if loop.travel_bone else None
        for fc in self._curves:
            co = self.written[fc.data_path, fc.array_index]
            advances = fc.data_path == carrier and abs(float(co[-1]) - float(co[1])) > ADVANCE_EPS
            cycles = fc.modifiers.new("CYCLES")
            cycles.mode_before = cycles.mode_after = "REPEAT_OFFSET" if advances else "REPEAT"
            fc.update()
        start, end = loop.frame_range
        action = self.action
        action.use_frame_range = True
        action.frame_start, action.frame_end = start, end
        action.use_cyclic = True


def check_bake_to(obj, bake_to: str, blend_type: str = "COMBINE") -> None:
    """Raise :class:`InputError` when a bake cannot go where ``bake_to`` says on ``obj`` (checked
    before anything is written)."""
    if bake_to not in BAKE_TO:
        raise InputError(f"Unknown Bake To '{bake_to}'; use one of {', '.join(BAKE_TO)}.")
    if blend_type not in BLEND_TYPES:
        raise InputError(f"Unknown blend type '{blend_type}'; use one of {', '.join(BLEND_TYPES)}.")
    ad = obj.animation_data
    if bake_to == "NLA_STRIP" and ad is not None and ad.use_tweak_mode:
        raise InputError(f"'{obj.name}' is in NLA tweak mode; leave it (Tab in the NLA editor) to bake into a strip.")


def open_bake(obj, generator: str, notes: list | None = None, bake_to: str = "ACTION",
              blend_type: str = "COMBINE") -> BakeKeys:
    """Start writing a bake of ``generator`` onto armature ``obj``: the action is chosen, cleared or
    made, and assigned — as the active action, or (``bake_to`` ``NLA_STRIP``) kept for the NLA strip
    :meth:`BakeKeys.finish` places, blended by ``blend_type`` — and what it replaces is kept (see
    the module docstring). Messages for the user (an edited bake kept aside) are appended to
    ``notes``. ``bake_to``: one of :data:`BAKE_TO`; ``blend_type``: one of :data:`BLEND_TYPES`."""
    if bake_to not in BAKE_TO:
        raise ValueError(f"bake_to must be one of {BAKE_TO}, not {bake_to!r}")
    if blend_type not in BLEND_TYPES:
        raise ValueError(f"blend_type must be one of {BLEND_TYPES}, not {blend_type!r}")
    if bake_to == "NLA_STRIP":
        action, place = _target_strip(obj, generator, blend_type, notes)
        fcurves, groups = action_channels(action, obj)
        return BakeKeys(obj, action, None, fcurves, groups, place)
    action, previous = _target_action(obj, generator, notes)
    if previous is not None:
        previous.use_fake_user = True
        action.procanim.previous_action = previous.name
    fcurves, groups = assign_action(obj, action)
    return BakeKeys(obj, action, previous, fcurves, groups)


def _target_strip(obj, generator: str, blend_type: str, notes: list | None):
    """The action an ``NLA_STRIP`` bake writes into, and where its strip goes.

    The object's own strip of the same generator is replaced on its track, its action cleared and
    rewritten, while its keys are untouched; once the animator has edited them it is kept — muted,
    its action ``<name>.edited`` with a fake user — and the new bake goes onto a new track, with a
    note saying so. Nothing else of the object's animation is changed.
    """
    obj.animation_data or obj.animation_data_create()
    spec = BY_ID.get(generator)
    place = StripPlace(spec.label if spec is not None else generator, blend_type)
    track, strip = own_strip(obj, generator)
    if strip is not None:
        action = strip.action
        if untouched(action):
            for fc in action_fcurves(action):
                remove_fcurve(action, fc)
            place.track, place.replaced = track, strip
            place.kept = {name: getattr(strip, name) for name in _STRIP_KEPT}
            return action, place
        kept = keep_edited(action)
        strip.mute = True
        if notes is not None:
            notes.append(f"'{kept}' holds your edits of the previous bake; its strip on track '{track.name}' is "
                         "muted and kept, and a new strip was baked.")
    return bpy.data.actions.new(f"{obj.name}.{generator}"), place


def _target_action(obj, generator: str, notes: list | None):
    """The action to write into, and the previous action to keep (or None).

    A previous bake of the same generator is rewritten in place while its keys are untouched; once
    the animator has edited them it is kept (``<name>.edited``, fake user) and a new action is baked,
    with a note saying so. The pose channels the current action animated are put back to rest
    (:func:`rest_channels`): the new bake then plays exactly as its own keys say.
    """
    ad = obj.animation_data
    current = ad.action if ad else None
    if current is not None:
        rest_channels(obj, animated_channels(current, obj))
    if current is not None and current.procanim.generator == generator and current.procanim.owner == obj.name:
        if untouched(current, obj):
            for fc in action_fcurves(current):
                remove_fcurve(current, fc)
            return current, None
        kept = keep_edited(current)
        if notes is not None:
            notes.append(f"'{kept}' holds your edits of the previous bake; it is kept and a new action was baked.")
        action = bpy.data.actions.new(f"{obj.name}.{generator}")
        # the new bake follows what the edited one followed: the animator's action before ProcAnim
        # (for a terrain adaptation, its source motion)
        action.procanim.previous_action = current.procanim.previous_action
        return action, None
    return bpy.data.actions.new(f"{obj.name}.{generator}"), current


def _plain(d: dict) -> dict:
    """``d`` with numpy scalars made Python numbers (non-finite ones None) for JSON."""
    out: dict[str, object] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out[k] = _plain(v)
        elif isinstance(v, (np.floating, float)):
            out[k] = float(v) if np.isfinite(v) else None
        elif isinstance(v, (np.integer, int, bool, np.bool_)):
            out[k] = v.item() if hasattr(v, "item") else v
        else:
            out[k] = str(v) if not isinstance(v, (str, list)) else v
    return out
