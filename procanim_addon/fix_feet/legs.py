"""Legs re-solved to the held feet, the knee kept in the source's own plane, and the pelvis moved.

Kovar et al. re-solve each leg analytically toward its held foot after moving the root. Here the
two-bone solve (:func:`..ik.two_bone.solve_two_bone`) is given the source's swivel: the knee's
offset from the hip → ankle axis, carried to the new axis by the shortest turn between the two
axes. Each leg bone then turns by the rotation taking its source frame (bone direction, bend-plane
normal n = (knee − hip) × (ankle − knee)) onto its new one, so the knee stays a hinge about its own
axis and keeps the source's twist. The foot takes its held orientation. Only rotations change
(and the pelvis' location): every bone keeps its length exactly.
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..ik.two_bone import solve_two_bone
from ..posing import refresh, unposed
from ..skeleton import Skeleton
from .feet import Leg

# A bend plane whose normal is shorter than this fraction of the squared leg length is taken as a
# straight leg: its plane comes from the direction the knees bend in the rest pose.
STRAIGHT = 1e-8


def extension(hip: np.ndarray, ankle: np.ndarray, leg: Leg) -> np.ndarray:
    """Hip–ankle distance over the leg's length ``(F,)`` (1 = straight)."""
    return np.linalg.norm(ankle - hip, axis=-1) / leg.length


def _frames(direction: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """Orthonormal frames ``(F, 3, 3)``, columns (direction, normal ⊥ direction, their cross)."""
    u = tf.normalize(direction)
    n = normal - np.sum(normal * u, axis=-1, keepdims=True) * u
    n = tf.normalize(n)
    return np.stack((u, n, tf.cross(u, n)), axis=-1)


def _bend_normal(hip, knee, ankle, forward) -> np.ndarray:
    """Unit normals ``(F, 3)`` of the leg's bend plane; a straight leg's from the knees' rest side."""
    n = tf.cross(knee - hip, ankle - knee)
    size = np.sum(n * n, axis=-1)
    scale = np.sum((ankle - hip) ** 2, axis=-1)
    fallback = tf.cross(ankle - hip, np.broadcast_to(forward, hip.shape))
    return tf.normalize(np.where((size <= STRAIGHT * scale * scale)[:, None], fallback, n))


def move_pelvis(skeleton: Skeleton, locations: np.ndarray, pose: np.ndarray, hips: int, offset: np.ndarray) -> None:
    """Move the hips bone (and everything under it) by ``offset (F, 3)`` in armature space, in
    place: its location channel takes the change, ``pose`` follows."""
    moved = np.flatnonzero(np.any(offset != 0.0, axis=1))
    if moved.size == 0:
        return
    u = unposed(skeleton, pose[moved], hips)
    locations[moved, hips] += np.einsum("fij,fj->fi", tf.inverse3(u[:, :3, :3]), offset[moved])
    for j in [hips, *skeleton.descendants(hips)]:
        pose[moved, j, :3, 3] += offset[moved]


def solve_leg(skeleton: Skeleton, leg: Leg, channels: tuple[np.ndarray, np.ndarray], pose: np.ndarray,
              target: tuple[np.ndarray, np.ndarray], reach: np.ndarray, forward: np.ndarray) -> None:
    """Re-solve ``leg`` on every frame of ``pose`` (F, B, 4, 4; already carrying the pelvis move)
    so its ankle reaches ``target = (rotation (F, 4), ankle (F, 3))``, the foot bone's armature-space
    orientation and head;
    ``channels = (locations, rotations)`` (F, B, ·) and ``pose`` are updated in place. The
    hip–ankle distance is kept within ``reach (F,)`` × the leg's length."""
    locations, rotations = channels
    foot_rotation, ankle = target
    hip = pose[:, leg.thigh, :3, 3]
    knee = pose[:, leg.shin, :3, 3]
    src_ankle = pose[:, leg.foot, :3, 3]
    axis = src_ankle - hip
    along = tf.normalize(axis)
    pole = knee - hip - np.sum((knee - hip) * along, axis=-1, keepdims=True) * along
    carry = tf.quat_to_mat3(tf.rotation_between(axis, ankle - hip))  # the source swivel, on the new axis
    pole = np.einsum("fij,fj->fi", carry, pole) + 1e-6 * leg.length * forward
    upper = np.linalg.norm(knee - hip, axis=-1)  # the rest lengths, unless the source moves a joint's location
    lower = np.linalg.norm(src_ankle - knee, axis=-1)
    new_knee, new_ankle = solve_two_bone(hip, ankle, pole, upper, lower, max_stretch=reach)
    normal = _bend_normal(hip, knee, src_ankle, forward)
    new_normal = _bend_normal(hip, new_knee, new_ankle, forward)
    turned = []
    for bone, old_dir, new_dir in ((leg.thigh, knee - hip, new_knee - hip), (leg.shin, src_ankle - knee,
                                                                            new_ankle - new_knee)):
        turn = _frames(new_dir, new_normal) @ np.swapaxes(_frames(old_dir, normal), -1, -2)
        turned.append((bone, turn @ pose[:, bone, :3, :3]))  # from the source's orientation, before any turn
    for bone, world in turned:
        _set_rotation(skeleton, locations, rotations, pose, bone, world)
    _set_rotation(skeleton, locations, rotations, pose, leg.foot, tf.quat_to_mat3(foot_rotation))


def _set_rotation(skeleton, locations, rotations, pose, i: int, world: np.ndarray) -> None:
    """Give bone ``i`` the armature-space orientation ``world (F, 3, 3)`` by its rotation channel;
    its head stays where its parent puts it, its descendants follow."""
    u = unposed(skeleton, pose, i)
    local = tf.inverse3(u[:, :3, :3]) @ world
    local /= np.linalg.norm(local, axis=-2, keepdims=True)
    q = tf.mat3_to_quat(local)
    rotations[:, i] = np.where(np.sum(q * rotations[:, i], axis=-1, keepdims=True) < 0, -q, q)
    refresh(skeleton, locations, rotations, pose, i)
