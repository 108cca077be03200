"""Clip → a new Action on the armature: fast F-curve writes, rotation modes, metrics.

Keys are written with ``keyframe_points.add(n)`` + ``foreach_set("co", …)`` — one call per F-curve,
never ``keyframe_insert`` per key. Each pose bone's rotation mode is respected: quaternion curves
(signs made continuous), Euler curves (each frame's angles compatible with the previous frame's),
or axis-angle. F-curves are grouped per bone, as Blender's own keying does.

What happens to what was there (nothing of the user's is lost):
* the armature's previous action, if it is not a ProcAnim bake of the same generator, gets a fake
  user and its name is kept in the new action's ``procanim.previous_action``;
* a previous bake of the same generator on the same armature is cleared and rewritten in place
  (re-running replaces, it does not stack).

Metrics live on the action: ``action.procanim.generator``, ``action.procanim.metrics_json``
(a JSON object) and ``action.procanim.owner``.

**Key targets** (``key_target``): the Clip holds the pose of the deform skeleton. On a plain
skeleton (``DEFORM``, and ``AUTO`` on anything that is not a known control rig) its channels are
written as they are. On a control rig (``AUTO`` on a generated Rigify rig: ``IK_CONTROLS``;
``FK_CONTROLS``) the engine converts the pose into the animator's controls
(:mod:`procanim_addon.controls`), the keys go on the controls and the IK/FK switches, and a sample
of frames is evaluated by Blender to measure how far the deform bones are from the intended pose
(metrics ``control_residual_cm_max`` / ``_mean``; above 0.5 cm the bake says it is approximate):
``operators/control_rig.py``.
"""

from __future__ import annotations

import json

import numpy as np

from ..procanim_addon import transforms as tf
from ..procanim_addon.clip import Clip
from ..procanim_addon.errors import InputError
from .compat import action_fcurves, assign_action
from .fingerprint import digest, keep_edited, untouched

EULER_MODES = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"}
KEY_TARGETS = ("AUTO", "IK_CONTROLS", "FK_CONTROLS", "DEFORM")


_REST_CHANNELS = {
    "location": (0.0, 0.0, 0.0),
    "rotation_quaternion": (1.0, 0.0, 0.0, 0.0),
    "rotation_euler": (0.0, 0.0, 0.0),
    "rotation_axis_angle": (0.0, 0.0, 1.0, 0.0),
    "scale": (1.0, 1.0, 1.0),
}
_BONE_PREFIX = 'pose.bones["'


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


def _target_action(obj, generator: str, notes: list | None = None):
    """The action to write into, and the previous action to keep (or None).

    A previous bake of the same generator is rewritten in place while its keys are untouched; once
    the animator has edited them it is kept (``<name>.edited``, fake user) and a new action is baked,
    with a note saying so. The pose channels the current action animated are put back to rest
    (:func:`rest_channels`): the new bake then plays exactly as its own keys say.
    """
    import bpy

    ad = obj.animation_data
    current = ad.action if ad else None
    if current is not None:
        rest_channels(obj, animated_channels(current, obj))
    if current is not None and current.procanim.generator == generator and current.procanim.owner == obj.name:
        if untouched(current, obj):
            for fc in action_fcurves(current):
                _remove_fcurve(current, fc)
            return current, None
        kept = keep_edited(current)
        if notes is not None:
            notes.append(f"'{kept}' holds your edits of the previous bake; it is kept and a new action was baked.")
        action = bpy.data.actions.new(f"{obj.name}.{generator}")
        # the new bake follows what the edited one followed: the animator's action before ProcAnim
        # (for a terrain adaptation, its source motion)
        action.procanim.previous_action = current.procanim.previous_action
        return action, None
    action = bpy.data.actions.new(f"{obj.name}.{generator}")
    return action, current


def _remove_fcurve(action, fc):
    """Remove an F-curve from whichever collection holds it."""
    from .compat import SLOTTED_ACTIONS

    if not SLOTTED_ACTIONS:
        action.fcurves.remove(fc)
        return
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                if fc in bag.fcurves.values():
                    bag.fcurves.remove(fc)
                    return


def _write(fcurves, group, path: str, index: int, frames: np.ndarray, values: np.ndarray, written: dict) -> None:
    """One F-curve of keys at ``frames`` (one ``foreach_set``); its keys go into ``written``."""
    fc = fcurves.new(path, index=index)
    fc.group = group
    n = len(frames)
    points = fc.keyframe_points
    points.add(n)
    co = np.empty(2 * n, dtype=np.float32)
    co[0::2] = frames
    co[1::2] = values
    points.foreach_set("co", co)
    fc.update()
    written[path, index] = co


def _rotation_channels(mode: str, quats: np.ndarray):
    """(data path suffix, (F, k) values) for a bone/object rotation mode."""
    if mode == "QUATERNION":
        return "rotation_quaternion", tf.quat_continuity(quats, axis=0)
    if mode in EULER_MODES:
        return "rotation_euler", tf.euler_sequence_from_mat3(tf.quat_to_mat3(quats), mode)
    return "rotation_axis_angle", tf.quat_to_axis_angle(tf.quat_continuity(quats, axis=0))


def prepare_bake(obj, clip: Clip, key_target: str = "AUTO"):
    """Everything of a bake that can fail, done before anything is written: returns ``write(notes)``,
    which writes ``clip`` onto armature ``obj`` as its active action and returns the action. A
    generator that bakes several characters prepares them all first, so that a refusal leaves
    every one of them as it was.

    ``key_target`` (``AUTO``, ``IK_CONTROLS``, ``FK_CONTROLS``, ``DEFORM``): which bones receive the
    keys — the controls of a known control rig (``AUTO``: IK), else the clip's own bones. Messages
    for the user (an edited bake kept aside, an approximate bake onto controls …) are appended to
    ``notes``.

    Raises :class:`InputError` if the clip holds a non-finite value or the key target does not fit
    the rig (nothing is written then).
    """
    if not clip.is_finite():
        raise InputError("The generator produced invalid (NaN) values; nothing was baked. Try less extreme settings.")
    if key_target not in KEY_TARGETS:
        raise InputError(f"Unknown key target '{key_target}'; use one of {', '.join(KEY_TARGETS)}.")
    from .control_rig import control_mode, convert_onto_controls, write_onto_controls

    mode = control_mode(obj, key_target)
    if mode is not None:
        converted = convert_onto_controls(obj, clip, mode)
        return lambda notes=None: write_onto_controls(converted, notes)
    return lambda notes=None: _bake_deform(obj, clip, notes)


def bake_clip(obj, clip: Clip, key_target: str = "AUTO", notes: list | None = None):
    """Write ``clip`` onto armature ``obj`` as its active action (:func:`prepare_bake`, then its
    write); returns the action. Raises :class:`InputError` before writing anything."""
    return prepare_bake(obj, clip, key_target)(notes)


def new_target_action(obj, generator: str, notes: list | None = None):
    """Start a bake: the action to write into (assigned to ``obj``), the previous action to keep,
    its ``(fcurves, groups)``, and a function that puts everything back if the bake fails."""
    import bpy

    ad = obj.animation_data
    before = ad.action if ad else None
    slot = getattr(ad, "action_slot", None) if ad else None
    action, previous = _target_action(obj, generator, notes)
    created = action is not before
    if previous is not None:
        action.procanim.previous_action = previous.name
    fcurves, groups = assign_action(obj, action)

    def undo():
        obj.animation_data.action = before
        if slot is not None and before is not None:
            obj.animation_data.action_slot = slot
        if created:
            bpy.data.actions.remove(action)

    return action, previous, fcurves, groups, undo


def write_curve(fcurves, group, path: str, index: int, frames, values, written: dict) -> None:
    """One F-curve of keys at ``frames`` (one ``foreach_set``); its keys go into ``written``."""
    _write(fcurves, group, path, index, frames, values, written)


def write_location(fcurves, group, base: str, locations: np.ndarray, frames, written: dict) -> int:
    for k in range(3):
        _write(fcurves, group, base + "location", k, frames, locations[:, k], written)
    return 3


def write_rotation(fcurves, group, base: str, mode: str, quats: np.ndarray, frames, written: dict) -> int:
    """Rotation keys of a bone (``base`` its data path prefix; '' for the object) in its rotation mode."""
    suffix, values = _rotation_channels(mode, quats)
    for k in range(values.shape[1]):
        _write(fcurves, group, base + suffix, k, frames, values[:, k], written)
    return values.shape[1]


def write_object_channels(obj, clip: Clip, fcurves, groups, frames, written: dict) -> int:
    """The clip's object-level root motion (path walk with root motion 'Object')."""
    n = 0
    if clip.object_locations is not None:
        group = groups.get("Object Transforms") or groups.new("Object Transforms")
        n += write_location(fcurves, group, "", clip.object_locations, frames, written)
    if clip.object_rotations is not None:
        group = groups.get("Object Transforms") or groups.new("Object Transforms")
        n += write_rotation(fcurves, group, "", obj.rotation_mode, clip.object_rotations, frames, written)
    return n


def finish_action(action, obj, clip: Clip, metrics: dict, written: dict) -> None:
    """Store generator, owner, metrics and the keys' fingerprint on the action; set its frame range."""
    info = action.procanim
    info.generator = clip.generator
    info.owner = obj.name
    metrics["frame_start"], metrics["frame_end"] = clip.frame_range
    info.metrics_json = json.dumps(_plain(metrics))
    action.frame_range = (
        clip.frame_range
        if clip.frame_range[1] > clip.frame_range[0]
        else (clip.frame_range[0], clip.frame_range[0] + 1)
    )
    action.use_frame_range = False
    info.fingerprint = digest(written)


def _bake_deform(obj, clip: Clip, notes: list | None):
    """The clip's own channels on its own bones (a plain skeleton, or key target DEFORM)."""
    action, previous = _target_action(obj, clip.generator, notes)
    if previous is not None:
        previous.use_fake_user = True
        action.procanim.previous_action = previous.name
    fcurves, groups = assign_action(obj, action)
    written: dict = {}  # (data path, index) -> the keys written: the bake's fingerprint
    frames = clip.frames.astype(np.float32)
    key_location, key_rotation = np.asarray(clip.key_location), np.asarray(clip.key_rotation)
    pose_bones = obj.pose.bones
    n_curves = 0
    for i, name in enumerate(clip.bone_names):
        if not (key_location[i] or key_rotation[i]):
            continue
        pb = pose_bones.get(name)
        if pb is None:
            continue
        group = groups.get(name) or groups.new(name)
        base = f'pose.bones["{_escape(name)}"].'
        if key_location[i]:
            n_curves += write_location(fcurves, group, base, clip.locations[:, i], frames, written)
        if key_rotation[i]:
            n_curves += write_rotation(fcurves, group, base, pb.rotation_mode, clip.rotations[:, i], frames, written)
    n_curves += write_object_channels(obj, clip, fcurves, groups, frames, written)
    metrics = dict(clip.metrics)
    metrics["fcurves"] = n_curves
    metrics["key_target"] = "DEFORM"
    finish_action(action, obj, clip, metrics, written)
    return action


def keyed_bone_names(obj) -> list[str]:
    """Names of the pose bones the armature's action keys."""
    ad = obj.animation_data
    if ad is None or ad.action is None:
        return []
    out = []
    for fc in action_fcurves(ad.action, obj):
        if fc.data_path.startswith('pose.bones["'):
            name = fc.data_path[len('pose.bones["') :].split('"]', 1)[0]
            if name not in out:
                out.append(name)
    return out


def bake_warning(obj) -> str:
    """A sentence for the user when the armature's bake onto controls is approximate ('' if not)."""
    ad = obj.animation_data
    m = read_metrics(ad.action) if ad is not None and ad.action is not None else {}
    if not m.get("control_bake_approximate"):
        return ""
    return (
        f"{obj.name}: the bake onto controls is approximate — deform bones within "
        f"{m.get('control_residual_cm_max', 0.0):.2f} cm of the generated pose (worst: "
        f"{m.get('control_residual_bone', '')}). {m.get('control_notes', '')}"
    ).strip()


def read_metrics(action) -> dict:
    """The metrics a bake stored on ``action`` ({} when none)."""
    try:
        return json.loads(action.procanim.metrics_json or "{}")
    except (ValueError, AttributeError):
        return {}


def escape(name: str) -> str:
    """A bone name quoted for an RNA data path."""
    return _escape(name)


def _escape(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')


def _plain(d):
    out = {}
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
