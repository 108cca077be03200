"""The engine's frame of an armature: its own space turned so that the scene's up is +Z, in the
scene's units.

Every generator works with +Z up and lengths in metres. An armature whose own axes stand another
way — a glTF or FBX import keeps a Y-up armature under a rotated (often scaled) object or empty —
is read into this frame once by the bridge (``operators/bridge.py``: the rest pose, paths and
meshes), and each generator's call (its spec's ``call``) hands its Clips back in the armature's own
terms with :func:`clip_to_armature`.

The frame is the similarity ``M = [s·Q | 0]`` from armature space: ``Q`` turns the scene's up, as
the armature sees it, onto +Z by the shortest arc (no turn about the vertical, so an upright rig
keeps its own axes exactly), ``s`` is the object's uniform scale in the world. With ``S = s·I``::

    rest matrices    ML_e = M · ML_a · S⁻¹   (rotations Q·R_a, heads s·Q·h_a; lengths × s)
    pose             pose_e = M · pose_a · S⁻¹
    pose channels    rotations and scales as they are; locations × s
    object motion    D_a = M⁻¹ · D_e · M
    a loop           per-loop offset as its carrier's channels, direction of travel turned by Q;
                     strides, travel and every other figure stay in metres
    engine → world   matrix_world · M⁻¹ (rigid)

Blender's pose evaluation refers to nothing but the rest matrices, so the same channels pose the
bones alike in both frames (locations scaled). An armature already upright and unscaled has no
frame (``None``): nothing is converted, bit for bit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import transforms as tf
from .clip import Clip
from .deform_tree import clip_to_anchors
from .loop import CycleInfo, cycle_of
from .skeleton import Skeleton

UP = np.array([0.0, 0.0, 1.0])
_UPRIGHT_TOL = 1e-9  # the scene's up this close to the armature's +Z (cosine): no turn
_UNIT_TOL = 1e-6  # a world scale this close to 1 is 1


def upright_matrix(matrix_world) -> np.ndarray | None:
    """``M`` (4, 4) for an armature object whose ``matrix_world`` is given; ``None`` when the
    armature stands up its +Z at scale 1 already, or when its world matrix is not a rotation and a
    uniform scale (skewed, mirrored, flattened: the generators' own checks say so)."""
    linear = np.asarray(matrix_world, float)[:3, :3]
    scales = np.sqrt(np.sum(linear * linear, axis=0))
    if not np.all(np.isfinite(linear)):
        return None
    det = float(np.linalg.det(linear))
    if not (scales.min() > 1e-9 and det > 0) or np.ptp(scales) > 1e-4 * scales.max():
        return None
    s = float(scales.mean())
    up = (linear / scales).T @ UP  # the scene's up in armature space
    turn = np.eye(3) if up @ UP > 1.0 - _UPRIGHT_TOL else tf.quat_to_mat3(tf.rotation_between(up, UP))
    s = 1.0 if abs(s - 1.0) < _UNIT_TOL else s
    if s == 1.0 and np.array_equal(turn, np.eye(3)):
        return None
    m = np.eye(4)
    m[:3, :3] = s * turn
    return m


def scale_of(m: np.ndarray) -> float:
    """The scale ``s`` of a frame ``M``."""
    return float(np.linalg.norm(m[:3, 0]))


def upright_skeleton(skeleton: Skeleton, m: np.ndarray | None) -> Skeleton:
    """``skeleton`` (armature space) in the frame ``M``; itself when ``M`` is None."""
    if m is None:
        return skeleton
    s = scale_of(m)
    ml = np.einsum("ij,bjk->bik", m, skeleton.matrix_local)
    ml[:, :3, :3] /= s
    return Skeleton(list(skeleton.names), skeleton.parents.copy(), ml, skeleton.lengths * s,
                    list(skeleton.inherit_rotation), list(skeleton.inherit_scale), list(skeleton.local_location),
                    list(skeleton.connected), from_armature=m.copy(), armature_parents=skeleton.armature_parents)


def points_to_frame(m: np.ndarray | None, points: np.ndarray) -> np.ndarray:
    """Armature-space points ``(N, 3)`` in the frame ``M``."""
    return points if m is None else points @ m[:3, :3].T


def clip_to_armature(clip: Clip, skeleton: Skeleton) -> Clip:
    """A Clip the engine made on ``skeleton`` (its frame, its tree), in the armature's own terms:
    channels under the parents Blender poses the bones under (:mod:`.deform_tree`), locations in
    armature units. Object channels, when present, are the engine's object motion (a delta in its
    frame)."""
    return _converted(clip_to_anchors(clip, skeleton), skeleton.from_armature, inverse=True)


def clip_to_frame(clip: Clip, skeleton: Skeleton) -> Clip:
    """A Clip of the armature's own channels (an action read from the scene) in ``skeleton``'s
    frame and tree."""
    return clip_to_anchors(_converted(clip, skeleton.from_armature, inverse=False), skeleton, inverse=True)


def _converted(clip: Clip, m: np.ndarray | None, inverse: bool) -> Clip:
    if m is None:
        return clip
    s = scale_of(m)
    k = 1.0 / s if inverse else s
    out = replace(clip, locations=clip.locations * k)
    if clip.object_locations is not None or clip.object_rotations is not None:
        q = m[:3, :3] / s  # D_a = M⁻¹·D_e·M: rotation Qᵀ·R·Q, translation Qᵀ·t / s (and back)
        a, b = (q.T, q) if inverse else (q, q.T)
        if clip.object_rotations is not None:
            r = tf.quat_to_mat3(clip.object_rotations)
            out.object_rotations = tf.quat_continuity(tf.mat3_to_quat(a @ r @ b), axis=0)
        if clip.object_locations is not None:
            out.object_locations = clip.object_locations @ a.T * k
    loop = cycle_of(clip)
    if loop is not None:
        out.metrics = {**clip.metrics, **_loop_converted(loop, m[:3, :3] / s, k, inverse).to_metrics()}
    return out


def _loop_converted(loop: CycleInfo, q: np.ndarray, k: float, inverse: bool) -> CycleInfo:
    """A loop's terms in the other space: the per-loop offset as its carrier's channels convert (a
    bone's location channels × k; the object's motion turned as well), the direction of travel
    turned; strides and travel stay in metres."""
    turn = q.T if inverse else q
    offset = np.asarray(loop.travel_offset) * k
    if loop.travel_role == "object":
        offset = turn @ offset
    forward = turn @ np.asarray(loop.forward)
    return replace(loop, travel_offset=(float(offset[0]), float(offset[1]), float(offset[2])),
                   forward=(float(forward[0]), float(forward[1]), float(forward[2])))


def world_of_frame(matrix_world, skeleton: Skeleton) -> np.ndarray:
    """The matrix from ``skeleton``'s frame to the world, given the armature's ``matrix_world``."""
    world = np.asarray(matrix_world, float)
    m = skeleton.from_armature
    return world if m is None else world @ tf.affine_inverse(m)


def unit_in_frame(unit_m: float, skeleton: Skeleton) -> float:
    """Metres per unit of ``skeleton``'s frame, given metres per armature unit."""
    m = skeleton.from_armature
    return unit_m if m is None else unit_m / scale_of(m)
