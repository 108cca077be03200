"""Poses as wanted armature-space matrices, and their pose-bone channels.

Every part of the walk (pelvis, legs, trunk, arms, root) says what it wants of a bone as an
armature-space rotation ``(F, 3, 3)`` and, optionally, a position ``(F, 3)``; :func:`channels`
turns those into pose-bone channels parents first (``basis = (pose[parent] @ rest_rel)⁻¹ @ W``).
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..ground import UP
from ..progress import ProgressFn, loop, no_progress


def rz(angle):
    """(…, 3, 3) rotations about +Z (the vertical) by ``angle`` (rad)."""
    angle = np.asarray(angle, float)
    return tf.quat_to_mat3(tf.quat_from_axis_angle(np.broadcast_to(UP, angle.shape + (3,)), angle))


def raxis(axis, angle):
    """(…, 3, 3) rotations about one fixed unit ``axis`` by ``angle`` (rad)."""
    angle = np.asarray(angle, float)
    return tf.quat_to_mat3(tf.quat_from_axis_angle(np.broadcast_to(axis, angle.shape + (3,)), angle))


def wrap(a):
    """Angles wrapped to [−π, π)."""
    return (a + np.pi) % (2 * np.pi) - np.pi


def _frame(y, n):
    """Orthonormal frames (…, 3, 3) with columns (n⊥, y, n⊥ × y)."""
    y = tf.normalize(y)
    n = n - np.sum(n * y, axis=-1, keepdims=True) * y
    n = tf.normalize(n)
    return np.stack([n, y, np.cross(n, y)], axis=-1)


def map_rot(rest_rot, y0, n0, y1, n1):
    """Rotation (F, 3, 3) of a bone whose rest axis y0/hinge n0 go to y1/n1: F1·F0ᵀ·R_rest."""
    F0 = _frame(np.asarray(y0, float), np.asarray(n0, float))
    F1 = _frame(y1, n1)
    return F1 @ F0.T @ rest_rot


def channels(sk, want: dict, frames, fps, progress: ProgressFn = no_progress) -> Clip:
    """Pose-bone channels, parents first, for wanted armature-space rotations/positions.

    want: {bone index: (R (F, 3, 3), position (F, 3) or None)}; bones not in it keep their rest
    pose relative to their parent. ``progress`` gets the fraction of the bones done.
    """
    F, B = len(frames), len(sk)
    pose = np.empty((F, B, 4, 4))
    locs = np.zeros((F, B, 3))
    rots = tf.quat_identity((F, B))
    key_loc = np.zeros(B, dtype=bool)
    key_rot = np.zeros(B, dtype=bool)
    tick = loop(progress, B)
    for i in range(B):
        tick(i)
        par = sk.parents[i]
        U = np.broadcast_to(sk.rest_rel[i], (F, 4, 4)) if par < 0 else pose[:, par] @ sk.rest_rel[i]
        if i not in want:
            pose[:, i] = U
            continue
        R, pos = want[i]
        W = np.zeros((F, 4, 4))
        W[:, :3, :3] = R
        W[:, :3, 3] = U[:, :3, 3] if pos is None else pos
        W[:, 3, 3] = 1.0
        basis = tf.rigid_inverse(U) @ W  # = Skeleton.basis_for, for rigid parents (cheaper)
        loc, q, _ = tf.decompose(basis)
        locs[:, i] = loc
        rots[:, i] = q
        key_rot[i] = True
        key_loc[i] = pos is not None and bool(np.max(np.abs(loc)) > 1e-6)
        pose[:, i] = U @ tf.compose(loc, q)
    return Clip(list(sk.names), frames, fps, locs, rots, key_location=key_loc, key_rotation=key_rot)
