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
    """(…, 3, 3) rotations about +Z (the vertical) by ``angle`` (rad), written out (no quaternion)."""
    angle = np.asarray(angle, float)
    c, s = np.cos(angle), np.sin(angle)
    m = np.zeros(angle.shape + (3, 3))
    m[..., 0, 0], m[..., 0, 1], m[..., 1, 0], m[..., 1, 1], m[..., 2, 2] = c, -s, s, c, 1.0
    return m


def mat_const(A, B) -> np.ndarray:
    """(…, 3, k) ``A @ B`` for matrices A (…, 3, 3) and one B (3, k), as one 2-D product of all
    rows (numpy's matmul of a stack multiplies matrix by matrix; the same numbers)."""
    A = np.asarray(A)
    B = np.asarray(B, float)
    return (A.reshape(-1, A.shape[-1]) @ B).reshape(A.shape[:-1] + B.shape[-1:])


def vec_const(A, v) -> np.ndarray:
    """(…, 3) ``A @ v`` for matrices A (…, 3, 3) and one vector v (3,), as :func:`mat_const`."""
    A = np.asarray(A)
    return (A.reshape(-1, A.shape[-1]) @ np.asarray(v, float)).reshape(A.shape[:-1])


def raxis(axis, angle):
    """(…, 3, 3) rotations about one fixed ``axis`` by ``angle`` (rad) (Rodrigues' formula)."""
    return pitch_rot(axis, angle)


def wrap(a):
    """Angles wrapped to [−π, π)."""
    return (a + np.pi) % (2 * np.pi) - np.pi


def _frame(y, n):
    """Orthonormal frames (…, 3, 3) with columns (n⊥, y, n⊥ × y)."""
    y = tf.normalize(y)
    n = n - np.sum(n * y, axis=-1, keepdims=True) * y
    n = tf.normalize(n)
    return np.stack([n, y, tf.cross(n, y)], axis=-1)


def map_rot(rest_rot, y0, n0, y1, n1):
    """Rotation (F, 3, 3) of a bone whose rest axis y0/hinge n0 go to y1/n1: F1·F0ᵀ·R_rest."""
    F0 = _frame(np.asarray(y0, float), np.asarray(n0, float))
    F1 = _frame(y1, n1)
    return mat_const(mat_const(F1, F0.T), rest_rot)


def with_ancestors(sk, bones) -> list[int]:
    """``bones`` and all their ancestors, parents first (bone indices are in that order)."""
    out = set()
    for i in bones:
        while i >= 0 and i not in out:
            out.add(int(i))
            i = int(sk.parents[i])
    return sorted(out)


def fk_of(sk, locations, rotations, bones) -> dict:
    """{bone: armature-space pose matrices (F, 4, 4)} as :meth:`Skeleton.fk` gives them, for
    ``bones`` and their ancestors only."""
    F = len(rotations)
    rt: dict[int, tuple] = {}  # bone: (rotation (F, 3, 3), head (F, 3)); rest_rel @ T(loc) R(q), parents first
    for i in with_ancestors(sk, bones):
        rest = sk.rest_rel[i]
        R = rest[:3, :3] @ tf.unit_quat_to_mat3(*np.moveaxis(rotations[:, i], -1, 0))  # the Clip's are unit
        pos = np.broadcast_to(rest[:3, 3], (F, 3)) if sk.connected[i] else \
            locations[:, i] @ rest[:3, :3].T + rest[:3, 3]
        p = sk.parents[i]
        if p >= 0:
            P_R, P_p = rt[p]
            R, pos = P_R @ R, np.einsum("fij,fj->fi", P_R, pos) + P_p
        rt[i] = (R, pos)
    pose = {}
    for i, (R, pos) in rt.items():
        m = np.zeros((F, 4, 4))
        m[:, :3, :3], m[:, :3, 3], m[:, 3, 3] = R, pos, 1.0
        pose[i] = m
    return pose


def channels(sk, want: dict, frames, fps, progress: ProgressFn = no_progress) -> Clip:
    """Pose-bone channels, parents first, for wanted armature-space rotations/positions.

    want: {bone index: (R (F, 3, 3), position (F, 3) or None)}; bones not in it keep their rest
    pose relative to their parent (identity channels; only the wanted bones' ancestors are posed,
    the rest of a rig — fingers, face — costs nothing). ``progress`` gets the fraction done.
    """
    F, B = len(frames), len(sk)
    locs = np.zeros((F, B, 3))
    rots = tf.quat_identity((F, B))
    key_loc = np.zeros(B, dtype=bool)
    key_rot = np.zeros(B, dtype=bool)
    pose: dict[int, tuple] = {}  # bone: (rotation (F, 3, 3), head (F, 3)) of the posed bone
    order = with_ancestors(sk, want)
    parents = {int(sk.parents[i]) for i in order}
    tick = loop(progress, len(order))
    for n, i in enumerate(order):
        tick(n)
        par = sk.parents[i]
        rest = sk.rest_rel[i]
        if par < 0:
            U_R, U_p = np.broadcast_to(rest[:3, :3], (F, 3, 3)), np.broadcast_to(rest[:3, 3], (F, 3))
        else:  # pose[parent] @ rest_rel
            P_R, P_p = pose[par]
            U_R, U_p = mat_const(P_R, rest[:3, :3]), vec_const(P_R, rest[:3, 3]) + P_p
        if i not in want:
            pose[i] = (U_R, U_p)
            continue
        R, pos = want[i]
        # basis = (pose[parent] @ rest_rel)⁻¹ @ W (Skeleton.basis_for) for a rigid parent: rotation
        # Uᵀ·R with the float32 rest matrices' tiny scale taken out (tf.decompose), location Uᵀ·(p − U_p)
        Ut = np.swapaxes(U_R, -1, -2)
        r = Ut @ R
        scale = np.sqrt(np.einsum("fij,fij->fj", r, r))  # the columns' lengths
        c0, c1, c2 = r[:, :, 0], r[:, :, 1], r[:, :, 2]
        det = (c0[:, 1] * c1[:, 2] - c0[:, 2] * c1[:, 1]) * c2[:, 0] + (c0[:, 2] * c1[:, 0] - c0[:, 0] * c1[:, 2]) \
            * c2[:, 1] + (c0[:, 0] * c1[:, 1] - c0[:, 1] * c1[:, 0]) * c2[:, 2]
        scale[:, 0] *= np.where(det < 0, -1.0, 1.0)
        r = r / scale[:, None, :]
        q = tf.mat3_to_quat(r)
        loc = np.zeros((F, 3)) if pos is None else \
            np.einsum("fij,fj->fi", Ut, pos) - np.einsum("fij,fj->fi", Ut, U_p)
        locs[:, i] = loc
        rots[:, i] = q
        key_rot[i] = True
        key_loc[i] = pos is not None and bool(np.max(np.abs(loc)) > 1e-6)
        if i in parents:  # only bones with posed children need their own pose: U @ T(loc) R(q)
            pose[i] = (U_R @ tf.quat_to_mat3(q), np.einsum("fij,fj->fi", U_R, loc) + U_p)
    # quaternion signs made continuous per keyed bone (all of them at once)
    rots[:, key_rot] = tf.quat_continuity(tf.quat_normalize(rots[:, key_rot]), axis=0)
    return Clip(list(sk.names), frames, fps, locs, rots, key_location=key_loc, key_rotation=key_rot)


def yaw_tilt(heading: np.ndarray, rest_heading: float, normal: np.ndarray) -> np.ndarray:
    """(…, 3, 3) rotation: turn the rest foot to ``heading`` then tilt its up onto ``normal``."""
    heading = np.asarray(heading, float)
    if np.all(np.asarray(normal) == UP):  # level ground: no tilt (the same rotation, cheaper)
        return rz(heading - rest_heading)
    qz = tf.quat_from_axis_angle(np.broadcast_to(UP, heading.shape + (3,)), heading - rest_heading)
    qt = tf.rotation_between(np.broadcast_to(UP, np.shape(normal)), normal)
    return tf.quat_to_mat3(tf.quat_mul(qt, qz))


def axis_matrices(axis) -> tuple[np.ndarray, np.ndarray]:
    """(K, K²): the cross-product matrix of the unit ``axis`` and its square (Rodrigues' formula)."""
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return K, K @ K


def pitch_rot(axis, angle, mats: tuple | None = None) -> np.ndarray:
    """(…, 3, 3) rotations by ``angle`` (rad) about one fixed unit ``axis`` (Rodrigues' formula);
    ``mats`` = :func:`axis_matrices` of the axis when already known."""
    angle = np.asarray(angle, float)
    K, K2 = mats if mats is not None else axis_matrices(axis)
    s, c = np.sin(angle)[..., None, None], np.cos(angle)[..., None, None]
    return np.eye(3) + s * K + (1.0 - c) * K2


def turn_then_pitch(R, angle, mats) -> np.ndarray:
    """(N, 3, 3) ``R @ pitch_rot(axis, angle)`` for rotations R (N, 3, 3) and pitches ``angle`` (N,),
    ``mats`` = :func:`axis_matrices` of the axis: R + sin·(R K) + (1 − cos)·(R K²), the products
    with the fixed K, K² made as single 2-D products (not one per matrix)."""
    K, K2 = mats
    angle = np.asarray(angle, float)
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return R + s * mat_const(R, K) + (1.0 - c) * mat_const(R, K2)
