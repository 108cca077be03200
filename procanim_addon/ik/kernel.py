"""Plain-float kinematics of a short chain: the inner loop of every solver.

A chain here has 3–4 joints: an FK with world axes is a few hundred multiplications, fewer than
numpy's fixed cost per call would pay for, so plain Python floats in tuples do it faster and
allocate nothing but a few tuples (docs/performance.md, Handshake and IK).

Joint ``j`` turns by ``R_j = A_jᵀ Rx(θ0) Ry(θ1) Rz(θ2) A_j`` (``A_j``: its axes a0, a1, a2 as rows,
see :mod:`.chain`). With ``G_j`` the joint's frame before its own turn in its axis coordinates
(``pose[parent] · rest_rel_j · A_jᵀ``, rotation part) and ``M_j = Rx(θ0) Ry(θ1) Rz(θ2)``::

    world axes of θ0, θ1, θ2:  G_j e_x,   G_j Rx(θ0) e_y,   (G_j M_j) e_z
    G_{j+1} = G_j M_j C_{j+1}         C_{j+1} = A_j · rest_rot_{j+1} · A_{j+1}ᵀ     (constant)
    h_{j+1} = h_j + G_j M_j d_j       d_j = A_j · (head of j + 1, or the effector, in j's frame)
    world rotation of bone j = G_j M_j A_j

3×3 matrices are 9-tuples, row-major; angles a flat list ``θ[3j + k]``.
"""

from __future__ import annotations

import math

import numpy as np


def mat_mul(a, b) -> tuple:
    """``a @ b`` for row-major 9-tuples."""
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = b
    return (a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
            a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
            a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8)


def mat_t_mul(a, b) -> tuple:
    """``aᵀ @ b`` for row-major 9-tuples."""
    return mat_mul((a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]), b)


def mat_vec(m, v) -> tuple:
    x, y, z = v
    return (m[0] * x + m[1] * y + m[2] * z, m[3] * x + m[4] * y + m[5] * z, m[6] * x + m[7] * y + m[8] * z)


def euler_xyz(a: float, b: float, c: float) -> tuple:
    """``Rx(a) @ Ry(b) @ Rz(c)`` as a 9-tuple."""
    ca, sa, cb, sb, cc, sc = math.cos(a), math.sin(a), math.cos(b), math.sin(b), math.cos(c), math.sin(c)
    sa_sb, ca_sb = sa * sb, ca * sb
    return (cb * cc, -cb * sc, sb,
            sa_sb * cc + ca * sc, ca * cc - sa_sb * sc, -sa * cb,
            sa * sc - ca_sb * cc, sa * cc + ca_sb * sc, ca * cb)


def xyz_angles(m) -> tuple[float, float, float]:
    """Angles ``(θ0, θ1, θ2)`` with ``Rx(θ0) Ry(θ1) Rz(θ2) = m`` (Blender's 'ZYX' order); at the
    gimbal lock the whole turn goes to θ0."""
    sb = min(1.0, max(-1.0, m[2]))
    if abs(sb) > 1.0 - 1e-12:
        return math.atan2(m[7], m[4]), math.asin(sb), 0.0
    return math.atan2(-m[5], m[8]), math.asin(sb), math.atan2(-m[1], m[0])


def axis_rotation(k, angle: float) -> tuple:
    """Rotation about the unit axis ``k`` by ``angle`` (rad), a 9-tuple (Rodrigues)."""
    x, y, z = k
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return (t * x * x + c, t * x * y - s * z, t * x * z + s * y,
            t * x * y + s * z, t * y * y + c, t * y * z - s * x,
            t * x * z - s * y, t * y * z + s * x, t * z * z + c)


def _t9(m) -> tuple:
    return tuple(float(x) for x in np.asarray(m, float).reshape(9))


def _t3(v) -> tuple:
    return tuple(float(x) for x in np.asarray(v, float).reshape(3))


class Kernel:
    """The constants of a chain's FK in plain floats (built once per chain, see :meth:`Chain.kernel`)."""

    def __init__(self, chain):
        n = chain.n
        axes = chain.axes  # (n, 3, 3) rows a0, a1, a2 per joint
        rest = chain.rest_rel
        self.n = n
        self.pre0 = _t9(rest[0, :3, :3] @ axes[0].T)
        self.t0 = _t3(rest[0, :3, 3])
        self.c = [None] + [_t9(axes[j - 1] @ rest[j, :3, :3] @ axes[j].T) for j in range(1, n)]
        self.d = [_t3(axes[j] @ rest[j + 1, :3, 3]) for j in range(n - 1)] + [_t3(axes[n - 1] @ chain.effector_local)]
        self.axes = [_t9(axes[j]) for j in range(n)]  # A_j
        self.lower = [float(x) for x in chain.lower.reshape(-1)]
        self.upper = [float(x) for x in chain.upper.reshape(-1)]
        self.locked = [hi - lo < 1e-9 for lo, hi in zip(self.lower, self.upper)]
        self._last_key, self._last = None, None
        # the last bone's twist passes to its parent's twist axis (a2) when that axis runs through
        # the last bone's head: that axis in the last joint's axis coordinates, else None
        self.twist_k = None
        if n > 1:
            axis, head = axes[n - 2, 2], rest[n - 1, :3, 3]
            if np.linalg.norm(head - axis * (axis @ head)) < 1e-4 * max(1.0, np.linalg.norm(head)):
                self.twist_k = _t3(axes[n - 1] @ rest[n - 1, :3, :3].T @ axis)

    def start(self, base) -> tuple[tuple, tuple]:
        """``(G_0, h_0)`` for a base matrix (4×4: the chain root's parent pose, armature space)."""
        r0, r1, r2 = np.asarray(base, float).tolist()[:3]
        rot = (r0[0], r0[1], r0[2], r1[0], r1[1], r1[2], r2[0], r2[1], r2[2])
        t = mat_vec(rot, self.t0)
        return mat_mul(rot, self.pre0), (t[0] + r0[3], t[1] + r1[3], t[2] + r2[3])

    def point(self, g, h, th, count: int):
        """The point the first ``count`` joints carry (the head of joint ``count``, or the effector
        when ``count`` is the whole chain) and ``G`` of joint ``count`` (None past the chain)."""
        c, d = self.c, self.d
        hx, hy, hz = h
        for j in range(count):
            gm = mat_mul(g, euler_xyz(th[3 * j], th[3 * j + 1], th[3 * j + 2]))
            dx, dy, dz = d[j]
            hx += gm[0] * dx + gm[1] * dy + gm[2] * dz
            hy += gm[3] * dx + gm[4] * dy + gm[5] * dz
            hz += gm[6] * dx + gm[7] * dy + gm[8] * dz
            g = mat_mul(gm, c[j + 1]) if j + 1 < self.n else None
        return (hx, hy, hz), g

    def detail(self, g, h, th, count: int):
        """Like :meth:`point`, and each joint's head ``[(x, y, z)] * count`` and the world axis of
        every angle (a flat list, ``3 · count`` unit 3-tuples) — what CCD and the Jacobian need.
        The last call's result is kept: a solver's final check and the swivel after it share one FK."""
        key = (g, h, count, tuple(th))
        if key == self._last_key:
            return self._last
        self._last_key, self._last = key, self._detail(g, h, th, count)
        return self._last

    def _detail(self, g, h, th, count: int):
        c, d = self.c, self.d
        hx, hy, hz = h
        heads, axes = [], []
        for j in range(count):
            a, b, cc_ = th[3 * j], th[3 * j + 1], th[3 * j + 2]
            ca, sa = math.cos(a), math.sin(a)
            gm = mat_mul(g, euler_xyz(a, b, cc_))
            heads.append((hx, hy, hz))
            axes.append((g[0], g[3], g[6]))
            axes.append((g[1] * ca + g[2] * sa, g[4] * ca + g[5] * sa, g[7] * ca + g[8] * sa))
            axes.append((gm[2], gm[5], gm[8]))
            dx, dy, dz = d[j]
            hx += gm[0] * dx + gm[1] * dy + gm[2] * dz
            hy += gm[3] * dx + gm[4] * dy + gm[5] * dz
            hz += gm[6] * dx + gm[7] * dy + gm[8] * dz
            if j + 1 < count:  # the next joint's frame (none needed after the last one asked for)
                g = mat_mul(gm, c[j + 1])
        return (hx, hy, hz), heads, axes

    def frames(self, g, th, count: int) -> list:
        """``G_j`` of the joints ``0 … count`` (count + 1 9-tuples; the last is None past the chain)."""
        out = [g]
        for j in range(count):
            g = mat_mul(mat_mul(g, euler_xyz(th[3 * j], th[3 * j + 1], th[3 * j + 2])), self.c[j + 1]) \
                if j + 1 < self.n else None
            out.append(g)
        return out

    def matrices(self, g, h, th) -> np.ndarray:
        """Armature-space matrices ``(n, 4, 4)`` of the chain's bones (``W_j = G_j M_j A_j``, head
        ``h_j``): :meth:`.chain.Chain.fk` for one frame, on floats."""
        rows = []
        hx, hy, hz = h
        for j in range(self.n):
            gm = mat_mul(g, euler_xyz(th[3 * j], th[3 * j + 1], th[3 * j + 2]))
            w = mat_mul(gm, self.axes[j])
            rows += (w[0], w[1], w[2], hx, w[3], w[4], w[5], hy, w[6], w[7], w[8], hz, 0.0, 0.0, 0.0, 1.0)
            dx, dy, dz = self.d[j]
            hx += gm[0] * dx + gm[1] * dy + gm[2] * dz
            hy += gm[3] * dx + gm[4] * dy + gm[5] * dz
            hz += gm[6] * dx + gm[7] * dy + gm[8] * dz
            if j + 1 < self.n:
                g = mat_mul(gm, self.c[j + 1])
        return np.array(rows).reshape(self.n, 4, 4)

    def set_joint(self, th, j: int, m) -> bool:
        """Joint ``j``'s angles in ``th`` (in place) from its turn ``m`` in axis coordinates,
        clamped into its limits; True when a limit clamped one."""
        lo, hi = self.lower, self.upper
        want = xyz_angles(m)
        th[3 * j:3 * j + 3] = got = [min(max(a, lo[3 * j + k]), hi[3 * j + k]) for k, a in enumerate(want)]
        return got != list(want)

    def clamp(self, th) -> list:
        lo, hi = self.lower, self.upper
        return [min(max(x, lo[i]), hi[i]) for i, x in enumerate(th)]
