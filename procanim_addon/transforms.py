"""Batched rotation and matrix helpers (numpy only, no Blender).

Conventions match Blender's so that values can be written to pose channels as they are:

* quaternions are ``(w, x, y, z)``, unit length, arrays shaped ``(..., 4)``;
* matrices are column-vector matrices (``v' = M @ v``), ``(..., 3, 3)`` or ``(..., 4, 4)``;
* Euler angles are radians ``(x, y, z)`` with Blender's order names: order ``'XYZ'`` applies X
  first, so ``R = Rz @ Ry @ Rx``.

Every function broadcasts over leading axes, so a whole clip ``(frames, bones, ...)`` is converted
in one call.
"""

from __future__ import annotations

import numpy as np

EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
_AXIS = {"X": 0, "Y": 1, "Z": 2}


# --------------------------------------------------------------------------- quaternions


def quat_identity(shape=()) -> np.ndarray:
    """Identity quaternions shaped ``shape + (4,)``."""
    q = np.zeros(tuple(shape) + (4,))
    q[..., 0] = 1.0
    return q


def quat_normalize(q: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    return q / np.where(n < 1e-300, 1.0, n)


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
    axis = axis / np.maximum(np.linalg.norm(axis, axis=-1, keepdims=True), 1e-300)
    half = 0.5 * np.asarray(angle, float)[..., None]
    return np.concatenate((np.cos(half), np.sin(half) * axis), axis=-1)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v`` (..., 3) by quaternions ``q`` (..., 4)."""
    return np.einsum("...ij,...j->...i", quat_to_mat3(q), np.asarray(v, float))


def quat_to_mat3(q: np.ndarray) -> np.ndarray:
    q = quat_normalize(np.asarray(q, float))
    return unit_quat_to_mat3(*np.moveaxis(q, -1, 0))


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


def mat3_to_quat(m: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) to unit quaternions with ``w >= 0`` (Shepperd's method)."""
    m = np.asarray(m, float)
    shape = m.shape[:-2]
    m = m.reshape(-1, 3, 3)
    tr = m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2]
    cand = np.stack((tr, m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]), axis=-1)
    pick = np.argmax(cand, axis=-1)
    q = np.empty((m.shape[0], 4))
    for k in range(4):
        sel = pick == k
        if not np.any(sel):
            continue
        s = m[sel]
        if k == 0:
            r = np.sqrt(np.maximum(1.0 + tr[sel], 1e-300)) * 2
            q[sel] = np.stack(
                (
                    (0.25 * r),
                    (s[:, 2, 1] - s[:, 1, 2]) / r,
                    (s[:, 0, 2] - s[:, 2, 0]) / r,
                    (s[:, 1, 0] - s[:, 0, 1]) / r,
                ),
                -1,
            )
        elif k == 1:
            r = np.sqrt(np.maximum(1.0 + s[:, 0, 0] - s[:, 1, 1] - s[:, 2, 2], 1e-300)) * 2
            q[sel] = np.stack(
                ((s[:, 2, 1] - s[:, 1, 2]) / r, 0.25 * r, (s[:, 0, 1] + s[:, 1, 0]) / r, (s[:, 0, 2] + s[:, 2, 0]) / r),
                -1,
            )
        elif k == 2:
            r = np.sqrt(np.maximum(1.0 + s[:, 1, 1] - s[:, 0, 0] - s[:, 2, 2], 1e-300)) * 2
            q[sel] = np.stack(
                ((s[:, 0, 2] - s[:, 2, 0]) / r, (s[:, 0, 1] + s[:, 1, 0]) / r, 0.25 * r, (s[:, 1, 2] + s[:, 2, 1]) / r),
                -1,
            )
        else:
            r = np.sqrt(np.maximum(1.0 + s[:, 2, 2] - s[:, 0, 0] - s[:, 1, 1], 1e-300)) * 2
            q[sel] = np.stack(
                ((s[:, 1, 0] - s[:, 0, 1]) / r, (s[:, 0, 2] + s[:, 2, 0]) / r, (s[:, 1, 2] + s[:, 2, 1]) / r, 0.25 * r),
                -1,
            )
    q = quat_normalize(q)
    q *= np.where(q[:, :1] < 0, -1.0, 1.0)
    return q.reshape(shape + (4,))


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


def quat_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle (radians) of the rotation taking ``a`` to ``b``."""
    d = np.abs(np.sum(quat_normalize(a) * quat_normalize(b), axis=-1))
    return 2.0 * np.arccos(np.clip(d, -1.0, 1.0))


def quat_slerp(a: np.ndarray, b: np.ndarray, t) -> np.ndarray:
    a = quat_normalize(np.asarray(a, float))
    b = quat_normalize(np.asarray(b, float))
    t = np.asarray(t, float)[..., None]
    dot = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(dot < 0, -b, b)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    s = np.sin(theta)
    small = s < 1e-6
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / np.where(small, 1.0, s))
    wb = np.where(small, t, np.sin(t * theta) / np.where(small, 1.0, s))
    return quat_normalize(wa * a + wb * b)


# --------------------------------------------------------------------------- Euler angles


def _axis_rot(axis: int, angle: np.ndarray) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    m = np.zeros(np.shape(angle) + (3, 3))
    i, j = (axis + 1) % 3, (axis + 2) % 3
    m[..., axis, axis] = 1.0
    m[..., i, i] = c
    m[..., j, j] = c
    m[..., j, i] = s
    m[..., i, j] = -s
    return m


def euler_to_mat3(euler: np.ndarray, order: str = "XYZ") -> np.ndarray:
    """Blender Euler (radians, components x, y, z) to a rotation matrix; first axis applied first."""
    e = np.asarray(euler, float)
    m = None
    for ch in order:
        r = _axis_rot(_AXIS[ch], e[..., _AXIS[ch]])
        m = r if m is None else r @ m
    return m


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
    a = np.arctan2(parity * m[..., k, j], m[..., k, k])
    c = np.arctan2(parity * m[..., j, i], m[..., i, i])
    # gimbal lock: put everything into the first angle
    a_g = np.arctan2(-parity * m[..., j, k], m[..., j, j])
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
    """Euler angles along axis 0 (frames), each compatible with the frame before it."""
    out, alt = _euler_pair(m, order)  # every frame's two triples at once; then only the choices
    if out.ndim == 2:  # one bone: the same arithmetic as _closest on plain floats (much faster)
        return np.array(_closest_sequence(out.tolist(), alt.tolist()))
    for f in range(1, out.shape[0]):
        out[f] = _closest(out[f], alt[f], out[f - 1])
    return out


def _closest_sequence(out: list, alt: list) -> list:
    turn = 2 * np.pi
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
    """``T(location) @ R(rotation quaternion) @ S(scale)`` as (..., 4, 4) matrices."""
    if shape is None:
        for x, n in ((location, 1), (rotation, 1), (scale, 1)):
            if x is not None:
                shape = np.shape(x)[:-n]
                break
        else:
            shape = ()
    m = np.zeros(tuple(shape) + (4, 4))
    r = quat_to_mat3(rotation) if rotation is not None else np.broadcast_to(np.eye(3), tuple(shape) + (3, 3))
    if scale is not None:
        r = r * np.asarray(scale, float)[..., None, :]
    m[..., :3, :3] = r
    if location is not None:
        m[..., :3, 3] = location
    m[..., 3, 3] = 1.0
    return m


def decompose(m: np.ndarray):
    """(..., 4, 4) → location (..., 3), rotation quaternion (..., 4), scale (..., 3).

    Assumes no shear (true for everything ProcAnim writes).
    """
    m = np.asarray(m, float)
    loc = m[..., :3, 3].copy()
    r = m[..., :3, :3]
    scale = np.linalg.norm(r, axis=-2)
    det = np.linalg.det(r)
    scale[..., 0] *= np.where(det < 0, -1.0, 1.0)
    rot = mat3_to_quat(r / np.where(np.abs(scale) < 1e-300, 1.0, scale)[..., None, :])
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


def transform_points(m: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Apply (..., 4, 4) matrices to (..., 3) points."""
    m = np.asarray(m, float)
    return np.einsum("...ij,...j->...i", m[..., :3, :3], p) + m[..., :3, 3]


def rotation_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shortest-arc quaternion taking direction ``a`` onto direction ``b`` (both (..., 3))."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    a = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-300)
    b = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-300)
    d = np.sum(a * b, axis=-1)
    axis = np.cross(a, b)
    # opposite vectors: any axis perpendicular to a
    perp = np.cross(a, np.array([1.0, 0.0, 0.0]))
    perp2 = np.cross(a, np.array([0.0, 1.0, 0.0]))
    perp = np.where((np.linalg.norm(perp, axis=-1) < 1e-6)[..., None], perp2, perp)
    opposite = d < -1.0 + 1e-12
    axis = np.where(opposite[..., None], perp, axis)
    w = np.where(opposite, 0.0, 1.0 + d)
    q = np.concatenate((w[..., None], axis), axis=-1)
    return quat_normalize(q)


def normalize(v: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    v = np.asarray(v, float)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, eps)
