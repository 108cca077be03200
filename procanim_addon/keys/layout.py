"""Which F-curves a bake writes, and their dense values: the channels the reduction works on.

A bake writes, per keyed bone, a location curve for each axis and rotation curves in the pose
bone's rotation mode — quaternion (signs made continuous over frames), Euler (each frame's angles
compatible with the previous frame's) or axis-angle — and, for root motion on the object, the
object's own channels. :func:`clip_channels` gives exactly those values, in the baker's order
(``operators/bake.py`` writes them; the arithmetic here is the same calls on the same arrays).

Channels that share a bone and a property (the three of a location, the four of a quaternion) are
one **key group**: they get keys on the same frames, since the error they make is measured
together, on the bone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from ..clip import Clip

EULER_MODES = frozenset(tf.EULER_ORDERS)
OBJECT = ""  # the bone name of the object's own channels


@dataclass(frozen=True)
class Channel:
    """One F-curve: ``bone`` (``''`` for the object), ``prop`` (``location``, ``rotation_quaternion``,
    ``rotation_euler``, ``rotation_axis_angle`` or ``scale``), ``index`` (the array index) and
    ``mode`` (the rotation mode its values are in: ``QUATERNION``, an Euler order, ``AXIS_ANGLE``;
    '' for location and scale)."""

    bone: str
    prop: str
    index: int
    mode: str = ""

    @property
    def data_path(self) -> str:
        """The F-curve's RNA data path."""
        if self.bone == OBJECT:
            return self.prop
        name = self.bone.replace("\\", "\\\\").replace('"', '\\"')
        return f'pose.bones["{name}"].{self.prop}'

    @property
    def group_name(self) -> str:
        """The action group Blender's keying puts the curve in (the bone's name)."""
        return self.bone or "Object Transforms"


def rotation_prop(mode: str) -> str:
    if mode == "QUATERNION":
        return "rotation_quaternion"
    if mode in EULER_MODES:
        return "rotation_euler"
    return "rotation_axis_angle"


def rotation_values(mode: str, quats: np.ndarray) -> np.ndarray:
    """Channel values ``(F, k)`` of rotations ``quats`` ``(F, 4)`` in rotation mode ``mode``."""
    if mode == "QUATERNION":
        return tf.quat_continuity(quats, axis=0)
    if mode in EULER_MODES:
        return tf.euler_sequence_from_mat3(tf.quat_to_mat3(quats), mode)
    return tf.quat_to_axis_angle(tf.quat_continuity(quats, axis=0))


def _rotation_channels(bone: str, mode: str) -> list[Channel]:
    prop = rotation_prop(mode)
    mode = mode if mode in EULER_MODES or mode == "QUATERNION" else "AXIS_ANGLE"
    return [Channel(bone, prop, k, mode) for k in range(3 if prop == "rotation_euler" else 4)]


def clip_channels(clip: Clip, rotation_modes: dict[str, str] | None = None,
                  object_mode: str = "XYZ") -> tuple[list[Channel], np.ndarray]:
    """The F-curves a bake of ``clip`` onto a plain skeleton writes and their values ``(F, C)``
    (float32-rounded, as Blender stores them). ``rotation_modes``: pose bone name → rotation mode
    (missing: ``QUATERNION``); ``object_mode``: the object's rotation mode (root motion on the object)."""
    modes = rotation_modes or {}
    channels: list[Channel] = []
    columns: list[np.ndarray] = []
    for i, name in enumerate(clip.bone_names):
        if clip.key_location[i]:
            channels += [Channel(name, "location", k) for k in range(3)]
            columns.append(clip.locations[:, i])
        if clip.key_rotation[i]:
            mode = modes.get(name, "QUATERNION")
            channels += _rotation_channels(name, mode)
            columns.append(rotation_values(mode, clip.rotations[:, i]))
    if clip.object_locations is not None:
        channels += [Channel(OBJECT, "location", k) for k in range(3)]
        columns.append(clip.object_locations)
    if clip.object_rotations is not None:
        channels += _rotation_channels(OBJECT, object_mode)
        columns.append(rotation_values(object_mode, clip.object_rotations))
    values = np.concatenate(columns, axis=1) if columns else np.zeros((clip.frame_count, 0))
    return channels, values.astype(np.float32).astype(float)


def key_groups(channels: list[Channel]) -> list[list[int]]:
    """Channel indices of each key group (consecutive channels of one bone and property)."""
    groups: list[list[int]] = []
    for c, ch in enumerate(channels):
        if groups and channels[groups[-1][0]].bone == ch.bone and channels[groups[-1][0]].prop == ch.prop:
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def channel_basis(channels: list[Channel], values: np.ndarray, columns: list[int]) -> tuple:
    """``(location (N, 3) | None, rotation (N, 3, 3) | None, scale (N, 3) | None)`` of one bone from
    its channels' ``values`` ``(N, C)`` (``columns``: the bone's channel indices). Rotations as
    Blender builds the pose: a quaternion normalised, Euler angles in their order, axis-angle about
    the normalised axis."""
    loc = rot = scale = None
    for c in columns:
        ch = channels[c]
        if ch.prop == "location" and ch.index == 0:
            loc = values[:, c : c + 3]
        elif ch.prop == "scale" and ch.index == 0:
            scale = values[:, c : c + 3]
        elif ch.prop == "rotation_quaternion" and ch.index == 0:
            rot = tf.quat_to_mat3(values[:, c : c + 4])
        elif ch.prop == "rotation_euler" and ch.index == 0:
            rot = tf.euler_to_mat3(values[:, c : c + 3], ch.mode)
        elif ch.prop == "rotation_axis_angle" and ch.index == 0:
            aa = values[:, c : c + 4]
            rot = tf.quat_to_mat3(tf.quat_from_axis_angle(aa[:, 1:], aa[:, 0]))
    return loc, rot, scale
