"""What a bake writes into one F-curve, as plain data, and the channel values of a rotation mode.

:class:`CurveKeys` holds one F-curve's keys: frames and values, and optionally per key its Bezier
handles (frame, value), handle types, interpolation and key type, named as Blender names them. What
is left out is Blender's to choose: the user's defaults for new keys (handle type, interpolation,
key type) and the handles Blender computes for automatic handle types (:mod:`.fcurves` models
those). The Blender side writes it (``operators/keys.py``).

:func:`rotation_channels` turns quaternions into the values of the channels a rotation mode keys:
quaternions with continuous signs, Euler angles each compatible with the previous frame's, or
axis-angle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import transforms as tf

INTERPOLATIONS = (
    "CONSTANT", "LINEAR", "BEZIER", "SINE", "QUAD", "CUBIC", "QUART", "QUINT", "EXPO", "CIRC", "BACK", "BOUNCE",
    "ELASTIC",
)
HANDLE_TYPES = ("FREE", "ALIGNED", "VECTOR", "AUTO", "AUTO_CLAMPED")
KEY_TYPES = ("KEYFRAME", "EXTREME", "BREAKDOWN", "JITTER", "MOVING_HOLD", "GENERATED")
# handle types whose handles Blender keeps as written (the others it computes from the keys)
WRITTEN_HANDLES = ("FREE", "ALIGNED")

Names = str | Sequence[str] | None  # one name for every key, one per key, or None (Blender's default)


@dataclass(frozen=True)
class CurveKeys:
    """The keys of one F-curve.

    ``frames`` ``(n,)`` in increasing order (Blender sorts keys by frame; a bake's fingerprint is
    taken from the arrays as given) and ``values`` ``(n,)`` in the channel's unit (m, rad,
    quaternion component, or the property's own). ``handle_left`` / ``handle_right`` ``(n, 2)``:
    each key's Bezier handles as (frame, value); given only together with handle types Blender
    keeps (``FREE``, ``ALIGNED`` — Blender turns an aligned pair collinear). The enum fields take
    one name for every key, a name per key, or None: ``handle_left_type`` / ``handle_right_type``
    (:data:`HANDLE_TYPES`), ``interpolation`` (:data:`INTERPOLATIONS`, from each key to the next),
    ``key_type`` (:data:`KEY_TYPES`). Raises ValueError on mismatched shapes, unsorted frames, a
    non-finite number or an unknown name.
    """

    frames: np.ndarray
    values: np.ndarray
    handle_left: np.ndarray | None = None
    handle_right: np.ndarray | None = None
    handle_left_type: Names = None
    handle_right_type: Names = None
    interpolation: Names = None
    key_type: Names = None

    def __post_init__(self):
        frames, values = np.asarray(self.frames), np.asarray(self.values)
        n = len(frames)
        if frames.shape != (n,) or values.shape != (n,):
            raise ValueError(f"frames {frames.shape} and values {values.shape} must both be (n,)")
        if n > 1 and np.any(frames[1:] < frames[:-1]):
            raise ValueError("frames must be in increasing order")
        if not (np.all(np.isfinite(frames)) and np.all(np.isfinite(values))):
            raise ValueError("frames and values must be finite")
        handles = (self.handle_left, self.handle_right)
        if (handles[0] is None) != (handles[1] is None):
            raise ValueError("give both handles or neither")
        if handles[0] is not None:
            for h in handles:
                if np.shape(h) != (n, 2) or not np.all(np.isfinite(h)):
                    raise ValueError(f"handles must be finite (n, 2) arrays, not {np.shape(h)}")
            for side in (self.handle_left_type, self.handle_right_type):
                if side is None or not set(_names(side, n)) <= set(WRITTEN_HANDLES):
                    raise ValueError(f"handles are written with handle types {WRITTEN_HANDLES} only")
        for field_name, allowed in (
            ("handle_left_type", HANDLE_TYPES),
            ("handle_right_type", HANDLE_TYPES),
            ("interpolation", INTERPOLATIONS),
            ("key_type", KEY_TYPES),
        ):
            given = getattr(self, field_name)
            if given is not None:
                unknown = set(_names(given, n)) - set(allowed)
                if unknown:
                    raise ValueError(f"{field_name}: unknown {sorted(unknown)}; use {allowed}")

    def __len__(self) -> int:
        return len(self.frames)

    def names(self, field_name: str) -> tuple[str, ...] | None:
        """The enum field ``field_name`` as one name per key (None when not given)."""
        given = getattr(self, field_name)
        return None if given is None else _names(given, len(self))


def _names(given: str | Sequence[str], n: int) -> tuple[str, ...]:
    if isinstance(given, str):
        return (given,) * n
    if len(given) != n:
        raise ValueError(f"{len(given)} names for {n} keys")
    return tuple(given)


def rotation_channels(mode: str, quats: np.ndarray) -> tuple[str, np.ndarray]:
    """The data path suffix and the ``(F, k)`` channel values that keep the rotations ``quats``
    ``(F, 4)`` of one bone (or object) in rotation ``mode``: ``rotation_quaternion`` (signs made
    continuous), ``rotation_euler`` for an Euler order (angles compatible frame to frame), else
    ``rotation_axis_angle`` (angle, x, y, z)."""
    if mode == "QUATERNION":
        return "rotation_quaternion", tf.quat_continuity(quats, axis=0)
    if mode in tf.EULER_ORDERS:
        return "rotation_euler", tf.euler_sequence_from_mat3(tf.quat_to_mat3(quats), mode)
    return "rotation_axis_angle", tf.quat_to_axis_angle(tf.quat_continuity(quats, axis=0))
