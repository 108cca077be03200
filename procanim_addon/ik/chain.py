"""A kinematic chain cut from a Skeleton, with joint angles and limits — what every solver moves.

Each chain bone is a joint with three rotation axes ``a0, a1, a2`` (unit rows, in the bone's rest
frame, right-handed) and angles ``θ = (θ0, θ1, θ2)`` (radians)::

    R_j = Rot(a0, θ0) @ Rot(a1, θ1) @ Rot(a2, θ2)        (a2 applied first: the twist)

``R_j`` is the pose bone's rotation (Blender's pose-bone convention: relative to rest, bone-local),
so ``pose[j] = pose[parent] @ rest_rel[j] @ R_j`` as in :class:`~procanim_addon.skeleton.Skeleton`.
Limits are per-angle intervals ``lower <= θ <= upper``; a locked axis has ``lower == upper``.

The end effector is a point fixed on the last bone (``effector_local``, metres, last bone's frame;
its tail by default — the handshake uses the grip point on the hand).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from .kernel import Kernel

FULL_TURN = np.pi


@dataclass
class JointLimit:
    """Three rotation axes (rows, bone rest frame, orthonormal right-handed) and angle ranges (rad)."""

    axes: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self):
        self.axes = np.asarray(self.axes, float).reshape(3, 3)
        self.lower = np.asarray(self.lower, float).reshape(3)
        self.upper = np.asarray(self.upper, float).reshape(3)
        if np.linalg.det(self.axes) < 0.999 or not np.allclose(self.axes @ self.axes.T, np.eye(3), atol=1e-6):
            raise ValueError("joint axes must be orthonormal and right-handed")
        if np.any(self.lower > self.upper):
            raise ValueError("joint limit lower bound above upper bound")

    @classmethod
    def free(cls, axes=None) -> JointLimit:
        """No limit (±180° about the bone's own X, Z, Y axes)."""
        axes = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]]) if axes is None else axes
        axes = np.asarray(axes, float)
        axes = _right_handed(axes)
        return cls(axes, np.full(3, -FULL_TURN), np.full(3, FULL_TURN))


def _right_handed(axes: np.ndarray) -> np.ndarray:
    a = np.array(axes, float)
    if np.linalg.det(a) < 0:
        a[1] = -a[1]
    return a


def _skew(k: np.ndarray) -> np.ndarray:
    x, y, z = np.moveaxis(k, -1, 0)
    o = np.zeros_like(x)
    return np.stack((np.stack((o, -z, y), -1), np.stack((z, o, -x), -1), np.stack((-y, x, o), -1)), -2)


def _rodrigues_pre(skew: np.ndarray, outer: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """``R = cos θ · I + sin θ · [k]× + (1 − cos θ) · k kᵀ`` with ``[k]×`` and ``k kᵀ`` given."""
    c = np.cos(angles)[..., None, None]
    s = np.sin(angles)[..., None, None]
    return c * _EYE3 + s * skew + (1.0 - c) * outer


_EYE3 = np.eye(3)


def _rodrigues_floats(k, angle: float) -> list:
    x, y, z = k
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return [[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c]]


def _matmul3(a, b) -> list:
    return [[a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j] for j in range(3)] for i in range(3)]


class Chain:
    """Bones ``bones`` (indices into ``skeleton``, root first, each the parent of the next or an
    ancestor of it) with one :class:`JointLimit` per bone.

    ``base`` matrices passed to the methods are the armature-space pose of the chain root's parent
    (the identity for a root bone), so the chain can ride on a moving body.
    """

    def __init__(self, skeleton, bones, limits=None, effector_local=None):
        self.skeleton = skeleton
        self.bones = [int(b) for b in bones]
        if not self.bones:
            raise ValueError("a chain needs at least one bone")
        for a, b in zip(self.bones, self.bones[1:]):
            if int(skeleton.parents[b]) != a:
                raise ValueError(f"{skeleton.names[a]!r} is not the parent of {skeleton.names[b]!r}")
        self.n = len(self.bones)
        self.limits = list(limits) if limits is not None else [JointLimit.free() for _ in self.bones]
        if len(self.limits) != self.n:
            raise ValueError("one joint limit per chain bone")
        self.rest_rel = skeleton.rest_rel[self.bones].copy()
        self.axes = np.stack([lim.axes for lim in self.limits])  # (n, 3, 3)
        self._skew = _skew(self.axes)  # (n, 3, 3, 3) [a]× per joint axis
        self._outer = self.axes[..., :, None] * self.axes[..., None, :]  # (n, 3, 3, 3) a aᵀ
        self._axes_list = self.axes.tolist()
        self.lower = np.stack([lim.lower for lim in self.limits])  # (n, 3)
        self.upper = np.stack([lim.upper for lim in self.limits])
        last = self.bones[-1]
        if effector_local is None:
            self.effector_local = np.array([0.0, skeleton.lengths[last], 0.0])
        else:
            self.effector_local = np.asarray(effector_local, float)
        self.base_parent = int(skeleton.parents[self.bones[0]])
        self._kernel = None

    def kernel(self):
        """The chain's plain-float FK (:class:`~.kernel.Kernel`), built once."""
        if self._kernel is None:
            self._kernel = Kernel(self)
        return self._kernel

    # ------------------------------------------------------------------ angles <-> rotations
    def zero_angles(self) -> np.ndarray:
        """The rest pose's angles ``(n, 3)`` (zero, clamped into the limits)."""
        return self.clamp(np.zeros((self.n, 3)))

    def clamp(self, angles: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(angles, self.lower), self.upper)

    def clamp_joint(self, j: int, angles3: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(angles3, self.lower[j]), self.upper[j])

    def local_matrices(self, angles: np.ndarray, count: int | None = None) -> np.ndarray:
        """``R_j`` for the first ``count`` joints, ``(count, 3, 3)``; ``angles`` may carry leading frame axes."""
        count = self.n if count is None else count
        a = np.asarray(angles, float)[..., :count, :]
        per_axis = _rodrigues_pre(self._skew[:count], self._outer[:count], a)  # (..., count, 3, 3, 3)
        return per_axis[..., 0, :, :] @ per_axis[..., 1, :, :] @ per_axis[..., 2, :, :]

    def joint_matrix(self, j: int, angles3) -> np.ndarray:
        """``R_j`` (3×3) of joint ``j`` for its three angles (plain floats inside: called per
        iteration by FABRIK)."""
        m = None
        for axis, angle in zip(self._axes_list[j], [float(a) for a in angles3]):
            r = _rodrigues_floats(axis, angle)
            m = r if m is None else _matmul3(m, r)
        return np.array(m)

    def quaternions(self, angles: np.ndarray) -> np.ndarray:
        """Pose-bone rotation quaternions ``(..., n, 4)`` (w, x, y, z) for ``angles (..., n, 3)``."""
        return tf.mat3_to_quat(self.local_matrices(angles))

    def angles_of(self, j: int, local_rotation: np.ndarray) -> np.ndarray:
        """Angles ``(3,)`` of joint ``j`` that give the local rotation matrix (unclamped).

        In the joint's axes frame ``A`` (rows a0, a1, a2): ``m = A R Aᵀ = Rx(θ0) Ry(θ1) Rz(θ2)``, so
        ``θ1 = asin(m02)``, ``θ0 = atan2(−m12, m22)``, ``θ2 = atan2(−m01, m00)`` (Blender's 'ZYX').
        """
        a = self.axes[j]
        m = (a @ local_rotation @ a.T).tolist()
        sb = min(1.0, max(-1.0, m[0][2]))
        if abs(sb) > 1.0 - 1e-12:  # gimbal: put the turn on θ0
            return np.array([math.atan2(m[2][1], m[1][1]), math.asin(sb), 0.0])
        return np.array([math.atan2(-m[1][2], m[2][2]), math.asin(sb), math.atan2(-m[0][1], m[0][0])])

    def angles_from_quaternions(self, q: np.ndarray) -> np.ndarray:
        """Angles ``(n, 3)`` from pose-bone quaternions ``(n, 4)`` (clamped into the limits)."""
        m = tf.quat_to_mat3(q)
        return self.clamp(np.stack([self.angles_of(j, m[j]) for j in range(self.n)]))

    # ------------------------------------------------------------------ kinematics
    def fk(self, base: np.ndarray, angles: np.ndarray, count: int | None = None) -> np.ndarray:
        """Armature-space matrices ``(count, 4, 4)`` of the first ``count`` chain bones."""
        count = self.n if count is None else count
        rot = self.local_matrices(angles, count)
        local = self.rest_rel[:count].copy()
        local[:, :3, :3] = local[:, :3, :3] @ rot
        out = np.empty((count, 4, 4))
        m = np.asarray(base, float)
        for j in range(count):
            m = m @ local[j]
            out[j] = m
        return out

    def fk_detail(self, base, angles, count=None):
        """Like :meth:`fk`, and also each joint's head ``(count, 3)`` and world axes ``(count, 3, 3)``.

        World axes are what the Jacobian and CCD need: for ``R = R0 R1 R2`` the axis of ``θ0`` is
        ``P a0``, of ``θ1`` is ``P R0 a1``, of ``θ2`` is ``P R0 R1 a2`` with ``P`` the joint's frame
        before its own rotation (``pose[parent] @ rest_rel``).
        """
        count = self.n if count is None else count
        a = np.asarray(angles, float)[:count]
        per_axis = _rodrigues_pre(self._skew[:count], self._outer[:count], a)  # (count, 3, 3, 3)
        out = np.empty((count, 4, 4))
        m = np.asarray(base, float)
        r01 = per_axis[:, 0] @ per_axis[:, 1]
        rot = r01 @ per_axis[:, 2]
        # each angle's axis in the joint's pre-rotation frame, as columns: a0, R0 a1, R0 R1 a2
        local_axes = np.empty((count, 3, 3))
        local_axes[:, :, 0] = self.axes[:count, 0]
        local_axes[:, :, 1] = (per_axis[:, 0] @ self.axes[:count, 1, :, None])[..., 0]
        local_axes[:, :, 2] = (r01 @ self.axes[:count, 2, :, None])[..., 0]
        pres = np.empty((count, 3, 3))
        for j in range(count):
            m = m @ self.rest_rel[j]
            pres[j] = m[:3, :3]
            m[:3, :3] = m[:3, :3] @ rot[j]
            out[j] = m
        heads = out[:, :3, 3].copy()
        waxes = np.swapaxes(pres @ local_axes, 1, 2)  # (count, 3 angles, xyz)
        return out, heads, waxes

    def point_on(self, mats: np.ndarray, j: int, local_point) -> np.ndarray:
        return mats[j, :3, :3] @ np.asarray(local_point, float) + mats[j, :3, 3]

    def effector(self, mats: np.ndarray) -> np.ndarray:
        """End-effector position (armature space) from the chain's matrices."""
        return self.point_on(mats, self.n - 1, self.effector_local)

    def head_offset(self, j: int) -> np.ndarray:
        """Head of bone ``j + 1`` in bone ``j``'s frame (the 'bone vector' FABRIK keeps)."""
        if j + 1 < self.n:
            return self.rest_rel[j + 1][:3, 3].copy()
        return self.effector_local.copy()

    def base_from_pose(self, pose: np.ndarray) -> np.ndarray:
        """The chain's base matrix from a full-skeleton pose ``(B, 4, 4)`` (identity for a root)."""
        return np.eye(4) if self.base_parent < 0 else pose[self.base_parent]
