"""Turning wanted joint positions into pose channels, parents first.

A bone's *unposed* matrix at a frame is where it would be with an identity basis:
``U = pose[parent] @ rest_rel[b]``. Aiming the bone along a direction v with no added twist is the
shortest-arc rotation, in U's local frame, from +Y to U⁻¹·v — the pose-bone quaternion itself.
"""

from __future__ import annotations

import numpy as np

from . import transforms as tf
from .skeleton import Skeleton
from .transforms import affine_inverse


def unposed(skeleton: Skeleton, pose: np.ndarray, i: int) -> np.ndarray:
    """``(F, 4, 4)`` matrix of bone ``i`` with an identity basis under its posed parent."""
    p = skeleton.parents[i]
    if p < 0:
        return np.broadcast_to(skeleton.rest_rel[i], pose.shape[:1] + (4, 4)).copy()
    return pose[:, p] @ skeleton.rest_rel[i]


def aim_rotation(unposed_matrix: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Pose-bone quaternions ``(F, 4)`` that point the bone's +Y along armature-space ``direction``."""
    local = np.einsum("fji,fj->fi", unposed_matrix[:, :3, :3], np.asarray(direction, float))  # Uᵀ·v
    return tf.rotation_between(np.broadcast_to([0.0, 1.0, 0.0], local.shape), local)


def world_rotation_to_local(unposed_matrix: np.ndarray, rotation_world: np.ndarray) -> np.ndarray:
    """Pose-bone quaternion for a bone whose armature-space orientation should be
    ``rotation_world @ rest orientation`` (an extra rotation applied in armature space)."""
    u = tf.mat3_to_quat(unposed_matrix[:, :3, :3])
    return tf.quat_mul(tf.quat_conj(u), tf.quat_mul(rotation_world, u))


def basis_for(skeleton: Skeleton, pose: np.ndarray, i: int, target: np.ndarray) -> np.ndarray:
    """Basis matrices ``(F, 4, 4)`` that put bone ``i`` at armature-space matrices ``target`` under
    its posed parent: ``(pose[parent] @ rest_rel[i])⁻¹ @ target`` (see :meth:`Skeleton.basis_for`)."""
    return affine_inverse(unposed(skeleton, pose, i)) @ target


def refresh(skeleton: Skeleton, locations: np.ndarray, rotations: np.ndarray, pose: np.ndarray, i: int,
            local: np.ndarray | None = None) -> None:
    """Recompute ``pose[:, j]`` for bone ``i`` and all its descendants after its channels changed
    (a connected bone's location is ignored, as in Blender).

    ``local`` (optional, ``(F, B, 4, 4)``) caches each bone's basis matrix ``T(location) R(rotation)``:
    only bone ``i``'s is rebuilt, the descendants' are reused.
    """
    for j in [i, *skeleton.descendants(i)]:
        if local is None or j == i:
            loc = np.zeros_like(locations[:, j]) if skeleton.connected[j] else locations[:, j]
            basis = tf.compose(loc, rotations[:, j])
            if local is not None:
                local[:, j] = basis
        else:
            basis = local[:, j]
        pose[:, j] = unposed(skeleton, pose, j) @ basis
