"""Rotation kernels of a conversion, written component by component for whole clips.

The conversion's matrices are stacks ``(F, 4, 4)`` of a thousand frames. numpy's reductions and
fancy indexing over an axis of 3 or 4 (a vector, a quaternion, a matrix column) loop once per
frame, which costs several times the arithmetic; these kernels compute the same quantities from the
components as whole ``(F,)`` arrays instead. Each gives what :mod:`procanim_addon.transforms` gives
(same formulas, same branch choices, same operation order: equal to the last bit or within a few
units of it) — only faster on stacks:

* :func:`mat3_to_quat` — Shepperd's method, ``w >= 0`` (as :func:`transforms.mat3_to_quat`);
* :func:`quat_to_mat3` — a quaternion normalised, then its matrix; :func:`compose`,
  :func:`decompose` and :func:`det3` as their namesakes in ``transforms`` / ``numpy.linalg``;
* :func:`quat_slerp` — spherical interpolation along the shorter arc (as :func:`transforms.quat_slerp`);
* :func:`rotation_between` — the shortest arc taking one direction onto another;
* :func:`rotation_scale` — a matrix's rotation (columns made unit length) and column scale.
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf


def _norm4(w, x, y, z):
    n = np.sqrt(w * w + x * x + y * y + z * z)
    return np.where(n < 1e-300, 1.0, n)


def mat3_to_quat(m: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` to unit quaternions ``(..., 4)`` with ``w >= 0``."""
    m00, m01, m02 = m[..., 0, 0], m[..., 0, 1], m[..., 0, 2]
    m10, m11, m12 = m[..., 1, 0], m[..., 1, 1], m[..., 1, 2]
    m20, m21, m22 = m[..., 2, 0], m[..., 2, 1], m[..., 2, 2]
    tr = m00 + m11 + m22
    # the first largest of (tr, m00, m11, m22), as np.argmax picks it
    pick = np.where(tr >= m00, 0, 1)
    best = np.maximum(tr, m00)
    pick = np.where(m11 > best, 2, pick)
    best = np.maximum(best, m11)
    pick = np.where(m22 > best, 3, pick)
    q = np.empty(m.shape[:-2] + (4,))
    for k in range(4):
        sel = pick == k
        if not np.any(sel):
            continue
        if k == 0:
            r = np.sqrt(np.maximum(1.0 + tr, 1e-300)) * 2
            comp = (0.25 * r, (m21 - m12) / r, (m02 - m20) / r, (m10 - m01) / r)
        elif k == 1:
            r = np.sqrt(np.maximum(1.0 + m00 - m11 - m22, 1e-300)) * 2
            comp = ((m21 - m12) / r, 0.25 * r, (m01 + m10) / r, (m02 + m20) / r)
        elif k == 2:
            r = np.sqrt(np.maximum(1.0 + m11 - m00 - m22, 1e-300)) * 2
            comp = ((m02 - m20) / r, (m01 + m10) / r, 0.25 * r, (m12 + m21) / r)
        else:
            r = np.sqrt(np.maximum(1.0 + m22 - m00 - m11, 1e-300)) * 2
            comp = ((m10 - m01) / r, (m02 + m20) / r, (m12 + m21) / r, 0.25 * r)
        for c in range(4):
            np.copyto(q[..., c], comp[c], where=sel)
    w, x, y, z = (q[..., c] for c in range(4))
    n = _norm4(w, x, y, z)
    n = np.where(w / n < 0, -n, n)
    q /= n[..., None]
    return q


def quat_to_mat3(q: np.ndarray) -> np.ndarray:
    """Quaternions ``(..., 4)`` (normalised here) to rotation matrices ``(..., 3, 3)`` (the
    formula of :func:`transforms.unit_quat_to_mat3`, its nine entries stacked at once)."""
    w, x, y, z = (q[..., c] for c in range(4))
    n = _norm4(w, x, y, z)
    w, x, y, z = w / n, x / n, y / n, z / n
    xx, yy, zz, xy, xz, yz, wx, wy, wz = x * x, y * y, z * z, x * y, x * z, y * z, w * x, w * y, w * z
    m = (1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy))
    m += (2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx))
    m += (2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy))
    return np.stack(m, axis=-1).reshape(np.shape(w) + (3, 3))


def compose(location: np.ndarray | None, rotation: np.ndarray) -> np.ndarray:
    """``T(location) @ R(rotation)`` ``(..., 4, 4)`` from locations ``(..., 3)`` (None: zero) and
    quaternions ``(..., 4)`` (as :func:`transforms.compose`)."""
    m = np.zeros(rotation.shape[:-1] + (4, 4))
    m[..., :3, :3] = quat_to_mat3(rotation)
    if location is not None:
        m[..., :3, 3] = location
    m[..., 3, 3] = 1.0
    return m


def det3(m: np.ndarray) -> np.ndarray:
    """Determinants of the 3×3 parts of ``m`` (cofactor expansion along the first row)."""
    a, b, c = m[..., 0, 0], m[..., 0, 1], m[..., 0, 2]
    d, e, f = m[..., 1, 0], m[..., 1, 1], m[..., 1, 2]
    g, h, k = m[..., 2, 0], m[..., 2, 1], m[..., 2, 2]
    return a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g)


def decompose(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(..., 4, 4)`` → location ``(..., 3)``, quaternion ``(..., 4)``, scale ``(..., 3)`` (as
    :func:`transforms.decompose`: no shear; a mirroring matrix gets a negative X scale)."""
    loc = m[..., :3, 3].copy()
    scale = column_scale(m)
    scale[..., 0] *= np.where(det3(m) < 0, -1.0, 1.0)
    rot = mat3_to_quat(m[..., :3, :3] / np.where(np.abs(scale) < 1e-300, 1.0, scale)[..., None, :])
    return loc, rot, scale


def quat_angle(q: np.ndarray) -> np.ndarray:
    """Angle (rad) of the rotations of quaternions ``(..., 4)`` (as ``transforms.quat_angle`` from identity)."""
    w = q[..., 0] / _norm4(*(q[..., c] for c in range(4)))
    return 2.0 * np.arccos(np.clip(np.abs(w), -1.0, 1.0))


def quat_slerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    """Spherical interpolation from ``a`` to ``b`` by ``t`` (a number), along the shorter arc."""
    aw, ax, ay, az = (a[..., c] for c in range(4))
    bw, bx, by, bz = (b[..., c] for c in range(4))
    na, nb = _norm4(aw, ax, ay, az), _norm4(bw, bx, by, bz)
    aw, ax, ay, az = aw / na, ax / na, ay / na, az / na
    bw, bx, by, bz = bw / nb, bx / nb, by / nb, bz / nb
    dot = aw * bw + ax * bx + ay * by + az * bz
    flip = np.where(dot < 0, -1.0, 1.0)
    theta = np.arccos(np.clip(np.abs(dot), -1.0, 1.0))
    s = np.sin(theta)
    small = s < 1e-6
    safe = np.where(small, 1.0, s)
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    wb = np.where(small, t, np.sin(t * theta) / safe) * flip
    out = np.empty(np.shape(dot) + (4,))
    for c, (pa, pb) in enumerate(((aw, bw), (ax, bx), (ay, by), (az, bz))):
        out[..., c] = wa * pa + wb * pb
    return out / _norm4(*(out[..., c] for c in range(4)))[..., None]


def rotation_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shortest-arc quaternions ``(..., 4)`` taking directions ``a`` onto ``b`` (both ``(..., 3)``)."""
    a = a / np.maximum(np.sqrt(a[..., 0] ** 2 + a[..., 1] ** 2 + a[..., 2] ** 2), 1e-300)[..., None]
    b = b / np.maximum(np.sqrt(b[..., 0] ** 2 + b[..., 1] ** 2 + b[..., 2] ** 2), 1e-300)[..., None]
    d = a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]
    if np.any(d < -1.0 + 1e-12):  # opposite directions: the general formula (rare)
        return tf.rotation_between(a, b)
    q = np.empty(d.shape + (4,))
    q[..., 0] = 1.0 + d
    q[..., 1] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    q[..., 2] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    q[..., 3] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return q / _norm4(*(q[..., c] for c in range(4)))[..., None]


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` of vectors ``(..., 3)`` (the same products), without its axis handling."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def unit(v: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """``transforms.normalize`` of vectors ``(..., 3)`` (the same sums)."""
    n = np.sqrt(v[..., 0] * v[..., 0] + v[..., 1] * v[..., 1] + v[..., 2] * v[..., 2])
    return v / np.maximum(n, eps)[..., None]


def column_scale(m: np.ndarray) -> np.ndarray:
    """Lengths ``(..., 3)`` of the columns of the 3×3 part of ``m`` (``(..., 3, 3)`` or ``(..., 4, 4)``)."""
    return np.sqrt(m[..., 0, :3] ** 2 + m[..., 1, :3] ** 2 + m[..., 2, :3] ** 2)


def rotation_scale(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 3×3 part of ``m`` with unit columns, and the column lengths (floored at 1e-12 to divide)."""
    scale = column_scale(m)
    return m[..., :3, :3] / np.maximum(scale, 1e-12)[..., None, :], scale


TURN = 2.0 * np.pi


def _nearer(prev: np.ndarray, principal: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the Euler triple (of ``principal`` and its equivalent ``other``, each moved by whole
    turns toward ``prev``) nearer to ``prev`` — the rule of ``transforms.euler_sequence_from_mat3``,
    with the same arithmetic — and whether it is ``other``."""
    c0 = principal + TURN * np.round((prev - principal) / TURN)
    c1 = other + TURN * np.round((prev - other) / TURN)
    a0, a1 = np.abs(c0 - prev), np.abs(c1 - prev)
    pick = (a1[:, 0] + a1[:, 1]) + a1[:, 2] < (a0[:, 0] + a0[:, 1]) + a0[:, 2]
    return np.where(pick[:, None], c1, c0), pick


def euler_sequence(quats: np.ndarray, order: str) -> np.ndarray:
    """Euler angles ``(F, 3)`` of quaternions ``(F, 4)``, each frame's compatible with the frame before
    it: exactly ``transforms.euler_sequence_from_mat3(quat_to_mat3(quats), order)``, without its
    frame-by-frame loop when the sequence is smooth.

    Each frame's value is one of its two equivalent triples plus whole turns. Which triple follows
    which does not depend on the turns, so the choices are found from the triples alone (a two-state
    chain over frames) and the turns added up; the result is then checked against the rule on every
    frame at once, and the loop is used when it differs anywhere (angles jumping half a turn)."""
    m = tf.quat_to_mat3(quats)
    out = tf.mat3_to_euler(m, order)
    if len(out) < 2:
        return out
    i, j, k = ("XYZ".index(c) for c in order)
    alt = out.copy()
    alt[:, i] = out[:, i] + np.pi
    alt[:, j] = np.pi - out[:, j]
    alt[:, k] = out[:, k] + np.pi
    # choice at frame f (0: principal, 1: other) given the choice at f - 1, turns left out
    after = [_nearer(prev[:-1], out[1:], alt[1:])[1] for prev in (out, alt)]
    choice = np.zeros(len(out), dtype=bool)
    previous = False
    for f, (from0, from1) in enumerate(zip(after[0].tolist(), after[1].tolist()), start=1):
        previous = from1 if previous else from0
        choice[f] = previous
    cand = np.where(choice[:, None], alt, out)
    turns = np.cumsum(np.round((cand[:-1] - cand[1:]) / TURN), axis=0)
    guess = cand.copy()
    guess[1:] = cand[1:] + TURN * turns
    if np.array_equal(_nearer(guess[:-1], out[1:], alt[1:])[0], guess[1:]):
        return guess
    return tf.euler_sequence_from_mat3(m, order)
