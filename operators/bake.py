"""Clip → a new Action on the armature: which bones receive the keys, and the bake's figures.

**Key targets** (``key_target``): the Clip holds the pose of the deform skeleton. On a plain
skeleton (``DEFORM``, and ``AUTO`` on anything that is not a known control rig) its channels are
written onto its own bones as they are (:func:`write_onto_bones`). On a control rig (``AUTO`` on a
generated Rigify rig: ``IK_CONTROLS``; ``FK_CONTROLS``) the engine converts the pose into the
animator's controls and the keys go on the controls and the IK/FK switches (``operators/control_rig.py``),
and a sample of frames is evaluated by Blender to measure how far the deform bones are from the
intended pose (metrics ``control_residual_cm_max`` / ``_mean``; above the engine's tolerance the
bake says it is approximate, :func:`bake_warning`).

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

from ..procanim_addon.clip import Clip
from ..procanim_addon.controls import KEY_TARGETS
from ..procanim_addon.errors import InputError
from ..procanim_addon.loop import cycle_of, repeated
from ..procanim_addon.registry import figure_keys
from ..procanim_addon.verification import finish
from .control_rig import control_mode, convert_onto_controls, write_onto_controls
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


def prepare_bake(obj, clip: Clip, key_target: str = "AUTO", bake_to: str = "ACTION", blend_type: str = "COMBINE"):
    """Everything of a bake that can fail, done before anything is written: returns ``write(notes)``,
    which writes ``clip`` onto armature ``obj`` and returns the action. A generator that bakes
    several characters prepares them all first, so that a refusal leaves every one of them as it was.

    ``key_target`` (``AUTO``, ``IK_CONTROLS``, ``FK_CONTROLS``, ``DEFORM``): which bones receive the
    keys — the controls of a known control rig (``AUTO``: IK), else the clip's own bones.
    ``bake_to`` (``ACTION``, ``NLA_STRIP``) and ``blend_type``: where the action plays
    (:func:`.keys.open_bake`). Messages for the user (an edited bake kept aside, an approximate bake
    onto controls …) are appended to ``notes``.

    Raises :class:`InputError` if the clip holds a non-finite value, or the key target or the bake's
    place does not fit the rig (nothing is written then).
    """
    if not clip.is_finite():
        raise InputError("The generator produced invalid (NaN) values; nothing was baked. Try less extreme settings.")
    if key_target not in KEY_TARGETS:
        raise InputError(f"Unknown key target '{key_target}'; use one of {', '.join(KEY_TARGETS)}.")
    check_bake_to(obj, bake_to, blend_type)
    if cycle_of(clip) is not None:
        clip = repeated(clip)  # the loop and its closing key
    place = {"bake_to": bake_to, "blend_type": blend_type}
    mode = control_mode(obj, key_target)
    if mode is not None:
        converted = convert_onto_controls(obj, clip, mode)
        return lambda notes=None: write_onto_controls(converted, notes, **place)
    return lambda notes=None: write_onto_bones(obj, clip, notes, **place)


def bake_clip(obj, clip: Clip, key_target: str = "AUTO", notes: list | None = None):
    """Write ``clip`` onto armature ``obj`` as its active action (:func:`prepare_bake`, then its
    write); returns the action. Raises :class:`InputError` before writing anything."""
    return prepare_bake(obj, clip, key_target)(notes)


def write_onto_bones(obj, clip: Clip, notes: list | None = None, bake_to: str = "ACTION",
                     blend_type: str = "COMBINE"):
    """The clip's own channels on its own bones (a plain skeleton, or key target ``DEFORM``), a key
    on every clip frame, each rotation in its pose bone's rotation mode, into the place ``bake_to``
    and ``blend_type`` say (:func:`.keys.open_bake`); returns the action."""
    bake = open_bake(obj, clip.generator, notes, bake_to, blend_type)
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
    metrics = dict(clip.metrics)
    metrics["fcurves"] = bake.curves
    metrics["key_target"] = "DEFORM"
    with bake.playing():  # Blender evaluates a few frames: does the rig show the motion?
        metrics.update(verify_bones(obj, clip))
    return bake.finish(clip, finish(metrics, figure_keys(clip.generator)))


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
