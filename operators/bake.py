"""Clip → a new Action on the armature: which bones receive the keys, and the bake's figures.

**Key targets** (``key_target``): the Clip holds the pose of the deform skeleton. On a plain
skeleton (``DEFORM``, and ``AUTO`` on anything that is not a known control rig) its channels are
written onto its own bones as they are (:func:`write_onto_bones`). On a control rig (``AUTO`` on a
generated Rigify rig: ``IK_CONTROLS``; ``FK_CONTROLS``) the engine converts the pose into the
animator's controls and the keys go on the controls and the IK/FK switches (``operators/control_rig.py``),
and a sample of frames is evaluated by Blender to measure how far the deform bones are from the
intended pose (metrics ``control_residual_cm_max`` / ``_mean``; above the engine's tolerance the
bake says it is approximate, :func:`bake_warning`).

**Key tolerance** (``key_tolerance``, m): above 0 the bake writes the fewest keys that keep every
deform joint within the tolerance of the motion on every frame, with handles and key types, and pose
markers on the action (contacts, phases: ``Generator.key_marks``) — the key planner
(:mod:`procanim_addon.keys`) decides them from the clip (:func:`plan_bone_keys`) or from the
conversion onto controls (:func:`.control_rig.plan_control_bake`); 0 keys every clip frame, the dense
bake. The figures (keys written and of the dense bake, the largest deform error, contacts kept) join
the metrics.

Both write through :mod:`.keys`: one new action (or the previous bake of the same generator
rewritten in place), the user's previous action kept, and the metrics stored on the action
(``action.procanim.generator``, ``.metrics_json``, ``.owner``; :func:`read_metrics`); ``bake_to``
says whether the action becomes the active one or plays in an NLA strip of its own.

A walk loop's Clip (:func:`procanim_addon.loop.cycle_of`) is baked with its closing key
(:func:`procanim_addon.loop.repeated`: the first key one loop on), so that the Cycles modifiers
:meth:`.keys.BakeKeys.finish` adds repeat exactly one loop; on a control rig the closing pose is
converted like every other frame.
"""

from __future__ import annotations

import numpy as np

from ..procanim_addon import keys as planner
from ..procanim_addon.bake_settings import BakeSettings
from ..procanim_addon.clip import Clip
from ..procanim_addon.controls import KEY_TARGETS
from ..procanim_addon.deform_tree import as_posed
from ..procanim_addon.errors import InputError
from ..procanim_addon.key_marks import KeyMarks
from ..procanim_addon.loop import cycle_of, repeated
from ..procanim_addon.registry import figure_keys
from ..procanim_addon.verification import finish
from .bridge import read_skeleton
from .control_rig import control_mode, convert_onto_controls, plan_control_bake, write_onto_controls
from .keys import (
    animated_channels,
    bone_path,
    check_bake_to,
    keyed_bone_names,
    open_bake,
    pose_channels,
    read_metrics,
    rest_channels,
    set_pose_channels,
)
from .verify import not_taking_effect, verify_bones

# re-exported from .keys: operators/base.py, operators/adapt_terrain.py and the panels import them from here
__all__ = [
    "animated_channels",
    "bake_clip",
    "bake_error",
    "bake_warning",
    "keyed_bone_names",
    "pose_channels",
    "prepare_bake",
    "read_metrics",
    "rest_channels",
    "set_pose_channels",
    "write_onto_bones",
]


def prepare_bake(obj, clip: Clip, key_target: str = "AUTO", bake_to: str = "ACTION", blend_type: str = "COMBINE",
                 key_tolerance: float = 0.0, marks: KeyMarks | None = None):
    """Everything of a bake that can fail, done before anything is written: returns ``write(notes)``,
    which writes ``clip`` onto armature ``obj`` and returns the action. A generator that bakes
    several characters prepares them all first, so that a refusal leaves every one of them as it was.

    ``key_target`` (``AUTO``, ``IK_CONTROLS``, ``FK_CONTROLS``, ``DEFORM``): which bones receive the
    keys — the controls of a known control rig (``AUTO``: IK), else the clip's own bones.
    ``bake_to`` (``ACTION``, ``NLA_STRIP``) and ``blend_type``: where the action plays
    (:func:`.keys.open_bake`). ``key_tolerance`` (m): the fewest keys within it of the motion on
    every deform joint (:mod:`procanim_addon.keys`); 0 keys every clip frame. ``marks``: what the
    keys say (contacts, phases: key types, pose markers; ``Generator.key_marks``). Messages for the
    user (an edited bake kept aside, an approximate bake onto controls …) are appended to ``notes``.

    Raises :class:`InputError` if the clip holds a non-finite value, the key target or the bake's
    place does not fit the rig or the tolerance is outside its limits (nothing is written then).
    """
    if not clip.is_finite():
        raise InputError("The generator produced invalid (NaN) values; nothing was baked. Try less extreme settings.")
    if key_target not in KEY_TARGETS:
        raise InputError(f"Unknown key target '{key_target}'; use one of {', '.join(KEY_TARGETS)}.")
    check_bake_to(obj, bake_to, blend_type)
    tolerance = BakeSettings(key_tolerance).validate().key_tolerance
    marks = marks or KeyMarks()
    if cycle_of(clip) is not None:
        clip = repeated(clip)  # the loop and its closing key: both keys of a reduced bake too
    place = {"bake_to": bake_to, "blend_type": blend_type}
    mode = control_mode(obj, key_target)
    if mode is not None:
        converted = convert_onto_controls(obj, clip, mode)
        plan_control_bake(converted, tolerance, marks)
        return lambda notes=None: write_onto_controls(converted, notes, **place)
    keyed = plan_bone_keys(obj, clip, tolerance, marks)
    return lambda notes=None: write_onto_bones(obj, clip, notes, keyed, marks.markers(), **place)


def bake_clip(obj, clip: Clip, key_target: str = "AUTO", notes: list | None = None, key_tolerance: float = 0.0,
              marks: KeyMarks | None = None):
    """Write ``clip`` onto armature ``obj`` as its active action (:func:`prepare_bake`, then its
    write); returns the action. Raises :class:`InputError` before writing anything."""
    return prepare_bake(obj, clip, key_target, key_tolerance=key_tolerance, marks=marks)(notes)


def plan_bone_keys(obj, clip: Clip, tolerance: float, marks: KeyMarks) -> planner.KeyedAction | None:
    """The reduced keys of ``clip`` on ``obj``'s own bones (None for a dense bake: ``tolerance`` 0), the
    error measured on the skeleton the clip is of, in each pose bone's rotation mode. The clip's
    channels are the armature's own: on a deform tree rebuilt from bones Blender poses under other
    parents (a Rigify rig exported without its controls) they pose each bone under the bone Blender
    poses it under, and so does the skeleton measured (``deform_tree.as_posed``)."""
    if tolerance == 0.0:
        return None
    skeleton = as_posed(read_skeleton(obj))
    modes = {pb.name: pb.rotation_mode for pb in obj.pose.bones}
    try:
        return planner.plan_clip_keys(clip, skeleton, tolerance, modes, obj.rotation_mode, marks.marks,
                                      marks.contacts, marks.feet)
    except ValueError as err:
        raise InputError(f"Could not plan the keys of '{obj.name}' ({err}); nothing was baked.") from err


def write_onto_bones(obj, clip: Clip, notes: list | None = None, keyed: planner.KeyedAction | None = None,
                     markers=(), bake_to: str = "ACTION", blend_type: str = "COMBINE"):
    """The clip's own channels on its own bones (a plain skeleton, or key target ``DEFORM``) — the
    planned curves of ``keyed`` (:func:`plan_bone_keys`), or without it a key on every clip frame,
    each rotation in its pose bone's rotation mode — and the pose ``markers`` ``(frame, name)``, into
    the place ``bake_to`` and ``blend_type`` say (:func:`.keys.open_bake`); returns the action."""
    bake = open_bake(obj, clip.generator, notes, bake_to, blend_type)
    if keyed is not None:
        for curve in keyed.curves:
            bake.planned(curve)
    else:
        _write_dense(bake, obj, clip)
    bake.markers(markers)
    metrics = dict(clip.metrics)
    metrics["fcurves"] = bake.curves
    metrics["key_target"] = "DEFORM"
    metrics.update(bake.figures(keyed))
    if keyed is not None and notes is not None:
        notes.extend(f"{obj.name}: {note}" for note in keyed.notes)
    with bake.playing():  # Blender evaluates a few frames: does the rig show the motion?
        metrics.update(verify_bones(obj, clip))
    return bake.finish(clip, finish(metrics, figure_keys(clip.generator)))


def _write_dense(bake, obj, clip: Clip) -> None:
    """A key on every clip frame of every keyed channel (the dense bake)."""
    frames = clip.frames.astype(np.float32)
    key_location, key_rotation = np.asarray(clip.key_location), np.asarray(clip.key_rotation)
    pose_bones = obj.pose.bones
    for i, name in enumerate(clip.bone_names):
        if not (key_location[i] or key_rotation[i]):
            continue
        pb = pose_bones.get(name)
        if pb is None:
            continue
        if key_location[i]:
            bake.location(name, bone_path(name), clip.locations[:, i], frames)
        if key_rotation[i]:
            bake.rotation(name, bone_path(name), pb.rotation_mode, clip.rotations[:, i], frames)
    bake.object_channels(clip, frames)


def _bake_metrics(obj, action=None) -> dict:
    """The metrics of ``action``, else of the armature's active action ({} without one)."""
    ad = obj.animation_data
    if action is None and ad is not None:
        action = ad.action
    return read_metrics(action) if action is not None else {}


def bake_error(obj, action=None) -> str:
    """The error of the armature's bake (its active action, or ``action``: an NLA strip's) when
    Blender's deform bones do not follow it ('' if they do: :func:`.verify.not_taking_effect`)."""
    return not_taking_effect(obj, _bake_metrics(obj, action))


def bake_warning(obj, action=None) -> str:
    """A sentence for the user when the armature's bake (its active action, or ``action``) is
    approximate ('' if not, or when it does not take effect at all: :func:`bake_error`)."""
    m = _bake_metrics(obj, action)
    if not m.get("control_bake_approximate") or not m.get("bake_takes_effect", True):
        return ""
    return (
        f"{obj.name}: the bake is approximate — deform bones within "
        f"{m.get('control_residual_cm_max', 0.0):.2f} cm of the generated pose (worst: "
        f"{m.get('control_residual_bone', '')}). {m.get('control_notes', '')}"
    ).strip()
