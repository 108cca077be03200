"""The elementary solves of a conversion, each on whole clips at once (numpy, armature space).

* :func:`follow` keys a control so that a deform bone it drives reaches its intended pose. The
  deform bone is evaluated through the rig (:class:`~.evaluate.RigPose`); the control is then moved
  by the rigid correction that would put the deform bone on target, ``C ← G · (C⁻¹·D)⁻¹`` with
  C the control's pose, D the deform bone's and G the goal. A rigid relation (parenting, copies)
  converges in one step; a blended one (a mechanism bone copying half of another) in a few.
* :func:`rigid_fit` moves a control (the torso) by the best rigid transform between the points of
  the deform bones it carries and their intended places (Kabsch's method per frame).
* :func:`knee_twist` and :func:`pole_position` give the knee (elbow) direction of an IK limb.
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..transforms import affine_inverse, norms
from .evaluate import RigPose

TOLERANCE_M = 1e-6
MAX_ITERATIONS = 24


def bone_points(pose: np.ndarray, length: float, twist: bool = False) -> np.ndarray:
    """Head and tail of a bone ``(F, 2, 3)`` from its matrices (the tail carries the bone's scale);
    with ``twist`` also a point off its axis (head + X·length/2), ``(F, 3, 3)``."""
    head = pose[:, :3, 3]
    points = [head, head + pose[:, :3, 1] * length]
    if twist:
        points.append(head + pose[:, :3, 0] * (0.5 * length))
    return np.stack(points, axis=1)


def _rigid(m: np.ndarray) -> np.ndarray:
    """``m`` with its 3×3 part made a rotation (Y kept, then X made perpendicular to it)."""
    out = m.copy()
    y = tf.normalize(m[:, :3, 1])
    x = m[:, :3, 0] - y * np.sum(m[:, :3, 0] * y, axis=-1, keepdims=True)
    x = tf.normalize(x)
    out[:, :3, 0], out[:, :3, 1], out[:, :3, 2] = x, y, np.cross(x, y)
    return out


def follow(state: RigPose, control: int, probe: int, goal: np.ndarray) -> float:
    """Key ``control`` so that bone ``probe`` reaches ``goal`` (F, 4, 4); returns the remaining
    largest head/tail error (m).

    Where the error shrinks by a steady ratio r per step (a half-blend: r ≈ ½), the step is
    stretched by 1/(1 − r), which lands on the fixed point of a linear contraction at once."""
    rig = state.rig
    length = float(rig.lengths[probe])
    want = bone_points(goal, length)
    err, previous = np.inf, None
    for _ in range(MAX_ITERATIONS):
        got = state.pose(probe)
        err = float(np.max(norms(bone_points(got, length) - want)))
        if err < TOLERANCE_M:
            break
        ratio = err / previous if previous else 1.0
        previous = err
        c = state.pose(control)
        relative = _rigid(affine_inverse(c) @ got)  # D expressed in C's frame, scale removed
        wanted_control = _rigid(goal @ affine_inverse(relative))
        if 0.05 < ratio < 0.9:
            wanted_control = _power(wanted_control @ affine_inverse(_rigid(c)), min(1.0 / (1.0 - ratio), 4.0)) @ _rigid(
                c
            )
        wanted_control[:, :3, :3] *= tf.column_scale(c)[:, None, :]
        wanted_control = state.unconstrained(control, wanted_control)
        state.set_basis(control, _unscaled(state.basis_for(control, wanted_control)))
    return err


def _power(delta: np.ndarray, w: float) -> np.ndarray:
    """A rigid change taken ``w`` times (rotation by slerp past the end, translation scaled)."""
    q = tf.mat3_to_quat(delta[:, :3, :3])
    qw = tf.quat_slerp(tf.quat_identity(q.shape[:-1]), q, w)
    out = delta.copy()
    out[:, :3, :3] = tf.quat_to_mat3(qw)
    out[:, :3, 3] = delta[:, :3, 3] * w
    return out


def _unscaled(basis: np.ndarray) -> np.ndarray:
    """A basis with its scale taken out: controls are keyed in location and rotation only."""
    loc, rot, _ = tf.decompose(basis)
    return tf.compose(loc, rot)


def kabsch(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per-frame rigid transforms ``(F, 4, 4)`` taking points ``source`` (F, N, 3) onto ``target``."""
    cs, ct = source.mean(axis=1), target.mean(axis=1)
    h = np.einsum("fni,fnj->fij", source - cs[:, None], target - ct[:, None])
    rot = _kabsch_rotation(h)
    out = np.broadcast_to(np.eye(4), (len(h), 4, 4)).copy()
    out[:, :3, :3] = rot
    out[:, :3, 3] = ct - np.einsum("fij,fj->fi", rot, cs)
    return out


def _kabsch_rotation(h: np.ndarray) -> np.ndarray:
    """The rotations ``V · diag(1, 1, d) · Uᵀ`` of Kabsch's method for covariances ``h = U S Vᵀ``
    (F, 3, 3), ``d`` making them proper. ``V`` and ``S²`` come from the eigen-decomposition of
    ``hᵀh`` (cheaper than an SVD on stacks of 3×3), ``uᵢ = h vᵢ / sᵢ`` for the two largest
    singular values and ``d · u₃ = sign(det V) · u₁ × u₂``; frames whose points lie on a line
    (second singular value ~0) take numpy's SVD."""
    w, v = np.linalg.eigh(np.swapaxes(h, -1, -2) @ h)
    w, v = w[:, ::-1], v[:, :, ::-1]  # descending
    s = np.sqrt(np.maximum(w, 0.0))
    safe = s[:, 1] > 1e-9 * s[:, 0]
    s1, s2 = np.where(safe, s[:, 0], 1.0), np.where(safe, s[:, 1], 1.0)
    u1 = np.einsum("fij,fj->fi", h, v[:, :, 0]) / s1[:, None]
    u2 = np.einsum("fij,fj->fi", h, v[:, :, 1]) / s2[:, None]
    u3 = tf.cross(u1, u2) * np.sign(tf.det3(v))[:, None]
    rot = v[:, :, 0, None] * u1[:, None, :] + v[:, :, 1, None] * u2[:, None, :] + v[:, :, 2, None] * u3[:, None, :]
    if not np.all(safe):
        bad = ~safe
        u, _, vt = np.linalg.svd(h[bad])
        d = np.sign(np.linalg.det(np.swapaxes(vt, -1, -2) @ np.swapaxes(u, -1, -2)))
        fix = np.broadcast_to(np.eye(3), u.shape).copy()
        fix[:, 2, 2] = d
        rot[bad] = np.swapaxes(vt, -1, -2) @ fix @ np.swapaxes(u, -1, -2)
    return rot


def rigid_fit(state: RigPose, control: int, bones: list[int], goals: dict[int, np.ndarray]) -> float:
    """Move ``control`` by the rigid transform that best carries ``bones`` (heads, tails and an
    off-axis point each) onto their goals; returns the remaining largest point error (m)."""
    rig = state.rig
    want = np.concatenate([bone_points(goals[b], float(rig.lengths[b]), True) for b in bones], axis=1)
    previous = np.inf
    err = np.inf
    for _ in range(MAX_ITERATIONS):
        got = np.concatenate([bone_points(state.pose(b), float(rig.lengths[b]), True) for b in bones], axis=1)
        err = float(np.max(norms(got - want)))
        if err < TOLERANCE_M or previous - err < TOLERANCE_M:
            break
        previous = err
        wanted = state.unconstrained(control, kabsch(got, want) @ state.pose(control))
        state.set_basis(control, _unscaled(state.basis_for(control, wanted)))
    return err


def knee_direction(hip: np.ndarray, knee: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit hip→end axis and the unit knee direction perpendicular to it, ``(F, 3)`` each."""
    axis = tf.normalize(end - hip)
    k = knee - hip
    k = k - axis * np.sum(k * axis, axis=-1, keepdims=True)
    return axis, tf.normalize(k)


def knee_twist(axis: np.ndarray, current: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Signed angle (rad, about ``axis``) from knee direction ``current`` to ``wanted``."""
    return np.arctan2(np.sum(np.cross(current, wanted) * axis, axis=-1), np.sum(current * wanted, axis=-1))


def pole_position(hip: np.ndarray, knee: np.ndarray, end: np.ndarray, distance: float) -> np.ndarray:
    """Where an IK pole target goes so that the chain bends toward the intended knee (F, 3)."""
    _, k = knee_direction(hip, knee, end)
    return knee + k * distance
