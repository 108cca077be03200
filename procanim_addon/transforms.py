"""Batched rotation and matrix helpers (numpy only, no Blender).

Conventions match Blender's so that values can be written to pose channels as they are:

* quaternions are ``(w, x, y, z)``, unit length, arrays shaped ``(..., 4)``;
* matrices are column-vector matrices (``v' = M @ v``), ``(..., 3, 3)`` or ``(..., 4, 4)``;
* Euler angles are radians ``(x, y, z)`` with Blender's order names: order ``'XYZ'`` applies X
  first, so ``R = Rz @ Ry @ Rx``.

Every function broadcasts over leading axes, so a whole clip ``(frames, bones, ...)`` is converted
in one call. They are the engine's only copy of this arithmetic (the conversion onto controls, the
path walk, the terrain fix and FK all call them) and are written for whole clips: component by
component where numpy's reductions over an axis of 3 or 4 would loop once per vector, with the
operations of numpy's general functions in their order (``np.linalg.norm``'s sums, ``np.cross``'s
products, ``np.argmax``'s branch choice), so that the numbers are theirs to the last bit
(tests/engine/test_transforms_fast.py).
"""

from __future__ import annotations

import numpy as np

EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
_AXIS = {"X": 0, "Y": 1, "Z": 2}


# --------------------------------------------------------------------------- vectors


def norms(v: np.ndarray, axis: int = -1) -> np.ndarray:
    """Euclidean lengths of ``v`` along ``axis`` (units of ``v``): the same sums as ``np.linalg.norm``
    (bit for bit) without its per-call checks. Along an axis of 3 or 4 (vectors, quaternions, matrix
    columns with ``axis=-2``) of 32 vectors or more the squares are added as whole arrays, first to
    last: numpy's reduction over so short an axis loops once per vector, which costs several times
    the arithmetic."""
    v = np.asarray(v, float)
    n = v.shape[axis]
    if (n == 3 or n == 4) and (axis == -1 or axis == -2) and v.size >= 32 * n:
        if axis == -2:
            v = np.swapaxes(v, -1, -2)
        total = np.square(v[..., 0])
        for k in range(1, n):
            total += np.square(v[..., k])
        return np.sqrt(total, out=total)
    return np.sqrt(np.add.reduce(v * v, axis=axis))  # the same sums; cheaper under ~32 vectors


def normalize(v: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """``v`` (..., n) over its length, the length floored at ``eps`` (units of ``v``)."""
    v = np.asarray(v, float)
    return v / np.maximum(norms(v), eps)[..., None]


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a × b`` of vectors (..., 3), broadcast: the products ``np.cross`` computes, in its order,
    without its axis handling (~15 numpy calls around six multiplications)."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


# --------------------------------------------------------------------------- quaternions


def quat_identity(shape=()) -> np.ndarray:
    """Identity quaternions shaped ``shape + (4,)``."""
    q = np.zeros(tuple(shape) + (4,))
    q[..., 0] = 1.0
    return q


def quat_normalize(q: np.ndarray) -> np.ndarray:
    """Quaternions (..., 4) over their length (a zero one, length below 1e-300, left as it is)."""
    q = np.asarray(q, float)
    n = norms(q)
    return q / np.where(n < 1e-300, 1.0, n)[..., None]


def _unit_components(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The components ``w, x, y, z`` (...) of quaternions (..., 4) over their length
    (:func:`quat_normalize`'s numbers, without assembling the normalised array)."""
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    n = np.sqrt(w * w + x * x + y * y + z * z)
    n = np.where(n < 1e-300, 1.0, n)
    return w / n, x / n, y / n, z / n


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``)."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, float), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, float), -1, 0)
    return np.stack(
        (
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ),
        axis=-1,
    )


def quat_conj(q: np.ndarray) -> np.ndarray:
    return np.asarray(q, float) * np.array([1.0, -1.0, -1.0, -1.0])


def quat_from_axis_angle(axis, angle) -> np.ndarray:
    """Rotation of ``angle`` radians about ``axis`` (normalised here); broadcasts."""
    axis = np.asarray(axis, float)
    axis = axis / np.maximum(norms(axis), 1e-300)[..., None]
    half = 0.5 * np.asarray(angle, float)[..., None]
    return np.concatenate((np.cos(half), np.sin(half) * axis), axis=-1)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v`` (..., 3) by quaternions ``q`` (..., 4)."""
    return np.einsum("...ij,...j->...i", quat_to_mat3(q), np.asarray(v, float))


def quat_to_mat3(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of quaternions (..., 4), normalised here."""
    return unit_quat_to_mat3(*_unit_components(np.asarray(q, float)))


def unit_quat_to_mat3(w, x, y, z) -> np.ndarray:
    """The rotation matrices (..., 3, 3) of unit quaternions given by their components (...)."""
    m = np.empty(np.shape(w) + (3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - w * z)
    m[..., 0, 2] = 2 * (x * z + w * y)
    m[..., 1, 0] = 2 * (x * y + w * z)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - w * x)
    m[..., 2, 0] = 2 * (x * z - w * y)
    m[..., 2, 1] = 2 * (y * z + w * x)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def _shepperd(k: int, e: tuple, tr: np.ndarray) -> tuple:
    """Shepperd's branch ``k`` (0: from the trace, 1–3: from the diagonal entry k − 1) of the
    quaternion of matrices whose nine entries (...) are ``e`` (row by row), not yet normalised."""
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = e
    if k == 0:
        r = np.sqrt(np.maximum(1.0 + tr, 1e-300)) * 2
        return 0.25 * r, (m21 - m12) / r, (m02 - m20) / r, (m10 - m01) / r
    if k == 1:
        r = np.sqrt(np.maximum(1.0 + m00 - m11 - m22, 1e-300)) * 2
        return (m21 - m12) / r, 0.25 * r, (m01 + m10) / r, (m02 + m20) / r
    if k == 2:
        r = np.sqrt(np.maximum(1.0 + m11 - m00 - m22, 1e-300)) * 2
        return (m02 - m20) / r, (m01 + m10) / r, 0.25 * r, (m12 + m21) / r
    r = np.sqrt(np.maximum(1.0 + m22 - m00 - m11, 1e-300)) * 2
    return (m10 - m01) / r, (m02 + m20) / r, (m12 + m21) / r, 0.25 * r


def mat3_to_quat(m: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) to unit quaternions with ``w >= 0`` (Shepperd's method).

    Each matrix takes the branch of the first largest of (trace, m00, m11, m22), as ``np.argmax``
    picks it. When every matrix takes the trace branch (rotations under a half turn: most of a
    clip) the components are computed without selections; else each branch that occurs is computed
    for the whole stack and copied where it was picked.
    """
    m = np.asarray(m, float)
    e = tuple(m[..., i, j] for i in range(3) for j in range(3))
    m00, m11, m22 = e[0], e[4], e[8]
    tr = m00 + m11 + m22
    q = np.empty(m.shape[:-2] + (4,))
    if np.all((tr >= m00) & (tr >= m11) & (tr >= m22)):
        for c, value in enumerate(_shepperd(0, e, tr)):
            q[..., c] = value
    else:
        pick = np.where(tr >= m00, 0, 1)
        best = np.maximum(tr, m00)
        pick = np.where(m11 > best, 2, pick)
        best = np.maximum(best, m11)
        pick = np.where(m22 > best, 3, pick)
        for k in range(4):
            sel = pick == k
            if np.any(sel):
                for c, value in enumerate(_shepperd(k, e, tr)):
                    np.copyto(q[..., c], value, where=sel)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    n = np.sqrt(w * w + x * x + y * y + z * z)
    n = np.where(n < 1e-300, 1.0, n)
    q /= np.where(w / n < 0, -n, n)[..., None]  # normalised, w >= 0
    return q


def quat_continuity(q: np.ndarray, axis: int = 0) -> np.ndarray:
    """Flip signs along ``axis`` (frames) so consecutive quaternions lie in one hemisphere.

    ``q`` and ``-q`` are the same rotation, but F-curves interpolate component-wise: without this,
    a sign flip between two keys makes the bone spin the long way round.
    """
    q = np.moveaxis(np.array(q, float, copy=True), axis, 0)
    if q.shape[0] < 2:
        return np.moveaxis(q, 0, axis)
    # each frame's sign is the previous frame's times the sign of their (unflipped) dot product,
    # a running product; a dot of exactly 0 resets the sign to +1 (the frame-by-frame rule)
    dot = np.sum(q[1:] * q[:-1], axis=-1, keepdims=True)
    if np.any(dot == 0.0):
        for i in range(1, q.shape[0]):
            q[i] *= np.where(np.sum(q[i] * q[i - 1], axis=-1, keepdims=True) < 0, -1.0, 1.0)
        return np.moveaxis(q, 0, axis)
    sign = np.cumprod(np.where(dot < 0, -1.0, 1.0), axis=0)
    q[1:] *= sign
    return np.moveaxis(q, 0, axis)


def quat_to_axis_angle(q: np.ndarray) -> np.ndarray:
    """Quaternions ``(..., 4)`` to Blender's axis-angle channels ``(..., 4)``: (angle, x, y, z).

    The angle is in [0, π] (a quaternion and its negative give the same value); the axis is unit
    length, and (0, 1, 0) — Blender's default — where the angle is 0 and no axis is defined.
    """
    q = np.asarray(q, float)
    q = q * np.where(q[..., :1] < 0, -1.0, 1.0)
    angle = 2.0 * np.arccos(np.clip(q[..., 0], -1.0, 1.0))
    s = np.sqrt(np.maximum(1.0 - q[..., 0] ** 2, 0.0))[..., None]
    axis = np.where(s > 1e-8, q[..., 1:] / np.maximum(s, 1e-8), [0.0, 1.0, 0.0])
    return np.concatenate((angle[..., None], axis), axis=-1)


def quat_angle(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """Angle (radians, in [0, π]) of the rotation taking ``a`` to ``b`` (quaternions (..., 4),
    normalised here); without ``b``, of the rotation ``a`` itself (from the identity: the same
    numbers as ``quat_angle(quat_identity(), a)``)."""
    aw, ax, ay, az = _unit_components(np.asarray(a, float))
    if b is None:
        d = np.abs(aw)
    else:
        bw, bx, by, bz = _unit_components(np.asarray(b, float))
        d = np.abs(aw * bw + ax * bx + ay * by + az * bz)
    return 2.0 * np.arccos(np.clip(d, -1.0, 1.0))


def quat_slerp(a: np.ndarray, b: np.ndarray, t) -> np.ndarray:
    """Spherical interpolation from ``a`` to ``b`` (quaternions (..., 4), normalised here) by ``t``
    (a number or an array broadcast with the quaternions' leading axes), along the shorter arc."""
    aw, ax, ay, az = _unit_components(np.asarray(a, float))
    bw, bx, by, bz = _unit_components(np.asarray(b, float))
    t = np.asarray(t, float)
    dot = aw * bw + ax * bx + ay * by + az * bz
    flip = np.where(dot < 0, -1.0, 1.0)
    theta = np.arccos(np.clip(np.abs(dot), -1.0, 1.0))
    s = np.sin(theta)
    small = s < 1e-6
    safe = np.where(small, 1.0, s)
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    wb = np.where(small, t, np.sin(t * theta) / safe) * flip
    parts = [wa * pa + wb * pb for pa, pb in ((aw, bw), (ax, bx), (ay, by), (az, bz))]
    out = np.empty(np.shape(parts[0]) + (4,))
    for c, part in enumerate(parts):
        out[..., c] = part
    return quat_normalize(out)


# --------------------------------------------------------------------------- Euler angles


def euler_to_mat3(euler: np.ndarray, order: str = "XYZ") -> np.ndarray:
    """Blender Euler (radians, components x, y, z) to a rotation matrix; first axis applied first.

    Blender's closed form (``eulO_to_mat3``): with the order's axes ``i, j, k`` (angles negated for
    the odd orders XZY, YXZ, ZYX), the product ``R_k R_j R_i`` written out entry by entry."""
    e = np.asarray(euler, float)
    i, j, k = (_AXIS[c] for c in order)
    odd = (j - i) % 3 != 1
    ti, tj, tk = (-e[..., a] if odd else e[..., a] for a in (i, j, k))
    ci, cj, ck = np.cos(ti), np.cos(tj), np.cos(tk)
    si, sj, sk = np.sin(ti), np.sin(tj), np.sin(tk)
    cc, cs, sc, ss = ci * ck, ci * sk, si * ck, si * sk
    m = np.empty(e.shape[:-1] + (3, 3))
    m[..., i, i] = cj * ck
    m[..., i, j] = sj * sc - cs
    m[..., i, k] = sj * cc + ss
    m[..., j, i] = cj * sk
    m[..., j, j] = sj * ss + cc
    m[..., j, k] = sj * cs - sc
    m[..., k, i] = -sj
    m[..., k, j] = cj * si
    m[..., k, k] = cj * ci
    return m


def _atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``np.arctan2`` of contiguous copies. On a strided view (a matrix entry of a stack) numpy 1.26
    takes its SIMD loop on some calls and libm's ``atan2`` on others, which differ in the last bit
    on about a third of the values: the same matrices gave other angles from one call to the next."""
    return np.arctan2(np.ascontiguousarray(y), np.ascontiguousarray(x))


def _euler_pair(m: np.ndarray, order: str) -> tuple[np.ndarray, np.ndarray]:
    """Both Euler triples (x, y, z components, radians) of rotation matrices: the principal one and
    its equivalent ``(a + π, π − b, c + π)``."""
    m = np.asarray(m, float)
    i, j, k = (_AXIS[c] for c in order)
    # parity: even orders (XYZ, YZX, ZXY) are cyclic
    parity = 1.0 if (j - i) % 3 == 1 else -1.0
    # R = R_k @ R_j @ R_i applied to columns; angle about j from element [k, i]
    sy = -parity * m[..., k, i]
    b = np.arcsin(np.clip(sy, -1.0, 1.0))
    cb = np.cos(b)
    gimbal = np.abs(cb) < 1e-9
    a = _atan2(parity * m[..., k, j], m[..., k, k])
    c = _atan2(parity * m[..., j, i], m[..., i, i])
    # gimbal lock: put everything into the first angle
    a_g = _atan2(-parity * m[..., j, k], m[..., j, j])
    a = np.where(gimbal, a_g, a)
    c = np.where(gimbal, 0.0, c)
    out = np.zeros(m.shape[:-2] + (3,))
    out[..., i], out[..., j], out[..., k] = a, b, c
    alt = np.zeros_like(out)
    alt[..., i], alt[..., j], alt[..., k] = a + np.pi, np.pi - b, c + np.pi
    return out, alt


def _closest(out: np.ndarray, alt: np.ndarray, compat: np.ndarray) -> np.ndarray:
    """Of the two triples, moved by whole turns toward ``compat``, the one nearer to it."""
    best = []
    for cand in (out, alt):
        cand = cand + 2 * np.pi * np.round((compat - cand) / (2 * np.pi))
        best.append(cand)
    d0 = np.sum(np.abs(best[0] - compat), axis=-1, keepdims=True)
    d1 = np.sum(np.abs(best[1] - compat), axis=-1, keepdims=True)
    return np.where(d1 < d0, best[1], best[0])


def mat3_to_euler(m: np.ndarray, order: str = "XYZ", compat: np.ndarray | None = None) -> np.ndarray:
    """Rotation matrices to Blender Euler angles (x, y, z components, radians).

    With ``compat`` (previous angles, same shape) the result is the equivalent triple closest
    to it, like ``Matrix.to_euler(order, compat)``: both solutions of the decomposition are
    tried and each angle is moved by whole turns toward ``compat``.
    """
    out, alt = _euler_pair(m, order)
    if compat is None:
        return out
    return _closest(out, alt, np.asarray(compat, float))


def euler_sequence_from_mat3(m: np.ndarray, order: str = "XYZ") -> np.ndarray:
    """Euler angles along axis 0 (frames), each compatible with the frame before it (the rule of
    :func:`mat3_to_euler` with ``compat``, frame after frame)."""
    out, alt = _euler_pair(m, order)  # every frame's two triples at once; then only the choices
    if out.ndim == 2:  # one bone
        if len(out) < 2:
            return out
        chained = _chained_sequence(out, alt)
        if chained is not None:
            return chained
        return np.array(_closest_sequence(out.tolist(), alt.tolist()))
    for f in range(1, out.shape[0]):
        out[f] = _closest(out[f], alt[f], out[f - 1])
    return out


_TURN = 2.0 * np.pi


def _nearer(prev: np.ndarray, principal: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the Euler triple (of ``principal`` and its equivalent ``other``, each moved by whole
    turns toward ``prev``) nearer to ``prev`` — :func:`_closest_sequence`'s rule with its
    arithmetic — and whether it is ``other``."""
    c0 = principal + _TURN * np.round((prev - principal) / _TURN)
    c1 = other + _TURN * np.round((prev - other) / _TURN)
    a0, a1 = np.abs(c0 - prev), np.abs(c1 - prev)
    pick = (a1[:, 0] + a1[:, 1]) + a1[:, 2] < (a0[:, 0] + a0[:, 1]) + a0[:, 2]
    return np.where(pick[:, None], c1, c0), pick


def _chained_sequence(out: np.ndarray, alt: np.ndarray) -> np.ndarray | None:
    """The sequence of :func:`_closest_sequence` (frames (F, 3), F >= 2) without its frame-by-frame
    arithmetic when the angles are smooth; None where that shortcut does not hold.

    Each frame's value is one of its two triples plus whole turns. Which triple follows which does
    not depend on the turns, so the choices are found from the triples alone (a two-state chain over
    frames) and the turns added up; the result is then checked against the rule on every frame at
    once, and None returned when it differs anywhere (angles jumping half a turn)."""
    # choice at frame f (False: principal, True: other) given the choice at f - 1, turns left out
    after = [_nearer(prev[:-1], out[1:], alt[1:])[1] for prev in (out, alt)]
    choice = np.zeros(len(out), dtype=bool)
    previous = False
    for f, (from0, from1) in enumerate(zip(after[0].tolist(), after[1].tolist()), start=1):
        previous = from1 if previous else from0
        choice[f] = previous
    cand = np.where(choice[:, None], alt, out)
    turns = np.cumsum(np.round((cand[:-1] - cand[1:]) / _TURN), axis=0)
    guess = cand.copy()
    guess[1:] = cand[1:] + _TURN * turns
    if np.array_equal(_nearer(guess[:-1], out[1:], alt[1:])[0], guess[1:]):
        return guess
    return None


def _closest_sequence(out: list, alt: list) -> list:
    turn = _TURN
    seq = [out[0]]
    for principal, other in zip(out[1:], alt[1:]):
        prev = seq[-1]
        c0 = [x + turn * round((p - x) / turn) for x, p in zip(principal, prev)]
        c1 = [x + turn * round((p - x) / turn) for x, p in zip(other, prev)]
        d0 = abs(c0[0] - prev[0]) + abs(c0[1] - prev[1]) + abs(c0[2] - prev[2])
        d1 = abs(c1[0] - prev[0]) + abs(c1[1] - prev[1]) + abs(c1[2] - prev[2])
        seq.append(c1 if d1 < d0 else c0)
    return seq


# --------------------------------------------------------------------------- 4x4 matrices


def compose(location=None, rotation=None, scale=None, shape=None) -> np.ndarray:
    """``T(location) @ R(rotation quaternion) @ S(scale)`` as (..., 4, 4) matrices; leading axes
    ``shape``, by default those of the given parts broadcast together."""
    if shape is None:
        given = [np.shape(x)[:-1] for x in (location, rotation, scale) if x is not None]
        shape = np.broadcast_shapes(*given) if given else ()
    m = np.zeros(tuple(shape) + (4, 4))
    r = quat_to_mat3(rotation) if rotation is not None else np.broadcast_to(np.eye(3), tuple(shape) + (3, 3))
    if scale is not None:
        r = r * np.asarray(scale, float)[..., None, :]
    m[..., :3, :3] = r
    if location is not None:
        m[..., :3, 3] = location
    m[..., 3, 3] = 1.0
    return m


def det3(m: np.ndarray) -> np.ndarray:
    """Determinants of the 3×3 parts of matrices (..., 3, 3) or (..., 4, 4), by cofactors along
    the first row (``np.linalg.det`` factorises each matrix: its sign agrees wherever the
    determinant is not within rounding of 0)."""
    a, b, c = m[..., 0, 0], m[..., 0, 1], m[..., 0, 2]
    d, e, f = m[..., 1, 0], m[..., 1, 1], m[..., 1, 2]
    g, h, k = m[..., 2, 0], m[..., 2, 1], m[..., 2, 2]
    return a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g)


def column_scale(m: np.ndarray) -> np.ndarray:
    """Lengths (..., 3) of the columns of the 3×3 parts of matrices (..., 3, 3) or (..., 4, 4)."""
    return norms(np.asarray(m, float)[..., :3, :3], axis=-2)


def decompose(m: np.ndarray):
    """(..., 4, 4) → location (..., 3), rotation quaternion (..., 4), scale (..., 3).

    Assumes no shear (true for everything ProcAnim writes); a mirroring matrix (negative
    determinant) gets a negative X scale.
    """
    m = np.asarray(m, float)
    loc = m[..., :3, 3].copy()
    scale = column_scale(m)
    scale[..., 0] *= np.where(det3(m) < 0, -1.0, 1.0)
    rot = mat3_to_quat(m[..., :3, :3] / np.where(np.abs(scale) < 1e-300, 1.0, scale)[..., None, :])
    return loc, rot, scale


def translation(v) -> np.ndarray:
    return compose(location=np.asarray(v, float))


def rigid_inverse(m: np.ndarray) -> np.ndarray:
    """Inverse of rotation+translation matrices (no scale), cheaper and exact."""
    m = np.asarray(m, float)
    out = np.zeros_like(m)
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", rt, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def inverse3(m: np.ndarray) -> np.ndarray:
    """Inverse of matrices (..., 3, 3) by the adjugate: rows c1 × c2, c2 × c0, c0 × c1 (columns c,
    :func:`cross`'s products written out) over the determinant c0 · (c1 × c2): a few array
    operations for the whole stack, where ``np.linalg.inv`` factorises matrix by matrix."""
    m = np.asarray(m, float)
    a, b, c = m[..., 0, 0], m[..., 0, 1], m[..., 0, 2]
    d, e, f = m[..., 1, 0], m[..., 1, 1], m[..., 1, 2]
    g, h, k = m[..., 2, 0], m[..., 2, 1], m[..., 2, 2]
    adj = np.empty(m.shape)
    adj[..., 0, 0], adj[..., 0, 1], adj[..., 0, 2] = e * k - h * f, h * c - b * k, b * f - e * c
    adj[..., 1, 0], adj[..., 1, 1], adj[..., 1, 2] = f * g - k * d, k * a - c * g, c * d - f * a
    adj[..., 2, 0], adj[..., 2, 1], adj[..., 2, 2] = d * h - g * e, g * b - a * h, a * e - d * b
    det = a * adj[..., 0, 0] + d * adj[..., 0, 1] + g * adj[..., 0, 2]
    return adj / det[..., None, None]


def affine_inverse(m: np.ndarray) -> np.ndarray:
    """Inverse of affine matrices (..., 4, 4) (last row 0, 0, 0, 1): :func:`inverse3` of the 3×3 part,
    and the translation taken back through it."""
    m = np.asarray(m, float)
    inv3 = inverse3(m[..., :3, :3])
    out = np.zeros(m.shape)
    out[..., :3, :3] = inv3
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", inv3, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def transform_points(m: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Apply (..., 4, 4) matrices to (..., 3) points."""
    m = np.asarray(m, float)
    return np.einsum("...ij,...j->...i", m[..., :3, :3], p) + m[..., :3, 3]


def rotation_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shortest-arc quaternions (..., 4) taking directions ``a`` onto directions ``b`` (both (..., 3)):
    ``(1 + â·b̂, â × b̂)`` normalised; for opposite directions a half turn about an axis ⊥ ``a``."""
    a = normalize(a, 1e-300)
    b = normalize(b, 1e-300)
    d = a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]
    axis = cross(a, b)
    w = 1.0 + d
    opposite = d < -1.0 + 1e-12
    if np.any(opposite):
        perp = cross(a, np.array([1.0, 0.0, 0.0]))
        perp2 = cross(a, np.array([0.0, 1.0, 0.0]))
        perp = np.where((norms(perp) < 1e-6)[..., None], perp2, perp)
        axis = np.where(opposite[..., None], perp, axis)
        w = np.where(opposite, 0.0, w)
    q = np.empty(np.shape(w) + (4,))
    q[..., 0] = w
    q[..., 1:] = axis
    return quat_normalize(q)
