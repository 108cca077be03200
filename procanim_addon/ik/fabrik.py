"""FABRIK (forward and backward reaching IK) with joint limits.

Joint positions ``P_0 … P_m`` (heads, then the effector) are moved in two passes keeping each
segment length ``L_i``: backward from ``P_m = t``, forward from the fixed root ``P_0``. The new
positions are then turned back into angles bone by bone — each bone swung (shortest arc) so its
segment points at its new child position, the rotation expressed in the joint's axes and clamped
into the limits — and the clamped pose's FK gives the positions of the next iteration. So every
iterate is a valid, limited pose.

Plain floats on the kernel's axis coordinates (see :mod:`.kernel`): a joint's frame before its
own turn is ``G_j``, its segment in axis coordinates ``d_j``, so the segment in the world is
``G_j M(θ_j) d_j`` and a world rotation ``q`` of it gives the joint ``M' = G_jᵀ q G_j M``.
"""

from __future__ import annotations

import math

import numpy as np

from .. import transforms as tf
from ._effector import distance2
from .extrapolate import Extrapolator
from .kernel import euler_xyz, mat_mul, mat_t_mul, mat_vec


def _turn_between(a, b) -> tuple:
    """Shortest-arc rotation (9-tuple) taking direction ``a`` onto ``b``:
    ``I + [v]× + [v]×² / (1 + c)`` with ``v = â × b̂``, ``c = â · b̂``."""
    na = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    nb = math.sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2])
    ax, ay, az = a[0] / na, a[1] / na, a[2] / na
    bx, by, bz = b[0] / nb, b[1] / nb, b[2] / nb
    c = ax * bx + ay * by + az * bz
    if c < -1.0 + 1e-9:  # opposite: any half turn
        m = tf.quat_to_mat3(tf.rotation_between(np.array([ax, ay, az]), np.array([bx, by, bz])))
        return tuple(float(x) for x in m.reshape(9))
    x, y, z = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    f = 1.0 / (1.0 + c)
    return (1.0 - (y * y + z * z) * f, -z + x * y * f, y + x * z * f,
            z + x * y * f, 1.0 - (x * x + z * z) * f, -x + y * z * f,
            -y + x * z * f, x + y * z * f, 1.0 - (x * x + y * y) * f)


def _to_angles(kern, g0, h0, th, pts, count):
    """Angles that swing each bone toward the next of ``pts`` (root first, limits kept)."""
    g, (hx, hy, hz) = g0, h0
    for j in range(count):
        gm = mat_mul(g, euler_xyz(*th[3 * j:3 * j + 3]))
        cur = mat_vec(gm, kern.d[j])
        want = (pts[j + 1][0] - hx, pts[j + 1][1] - hy, pts[j + 1][2] - hz)
        if want[0] ** 2 + want[1] ** 2 + want[2] ** 2 > 1e-24 and cur[0] ** 2 + cur[1] ** 2 + cur[2] ** 2 > 1e-24:
            kern.set_joint(th, j, mat_t_mul(g, mat_mul(_turn_between(cur, want), gm)))
            gm = mat_mul(g, euler_xyz(*th[3 * j:3 * j + 3]))
        dx, dy, dz = mat_vec(gm, kern.d[j])
        hx, hy, hz = hx + dx, hy + dy, hz + dz
        if j + 1 < kern.n:
            g = mat_mul(gm, kern.c[j + 1])
    return th


def _feasible_direction(kern, g, j, want):
    """World direction of bone ``j``'s segment closest to ``want`` that its limits allow, with the
    joint's frame before its turn ``g`` (``G_j``) from the current pose; None for no direction."""
    if want[0] ** 2 + want[1] ** 2 + want[2] ** 2 < 1e-24:
        return None
    d = kern.d[j]
    q = _turn_between(d, mat_vec((g[0], g[3], g[6], g[1], g[4], g[7], g[2], g[5], g[8]), want))
    ang = [0.0] * (3 * j + 3)
    kern.set_joint(ang, j, q)
    r = euler_xyz(*ang[3 * j:])
    x, y, z = mat_vec(g, mat_vec(r, d))
    n = math.sqrt(x * x + y * y + z * z)
    return x / n, y / n, z / n


def _stretch(pts, seg, target, count):
    """Out of reach: the chain straight from its root toward the target."""
    root = pts[0]
    dx, dy, dz = target[0] - root[0], target[1] - root[1], target[2] - root[2]
    reach = max(math.sqrt(dx * dx + dy * dy + dz * dz), 1e-12)
    for i in range(count):
        pts[i + 1] = (pts[i][0] + seg[i] * dx / reach, pts[i][1] + seg[i] * dy / reach, pts[i][2] + seg[i] * dz / reach)


def _passes(kern, gs, pts, seg, target, count):
    """Backward from the target (each segment the nearest direction its limits allow), then
    forward from the fixed root."""
    root = pts[0]
    pts[-1] = tuple(target)
    for i in range(count - 1, -1, -1):
        a, b = pts[i + 1], pts[i]
        d = _feasible_direction(kern, gs[i], i, (a[0] - b[0], a[1] - b[1], a[2] - b[2]))
        if d is not None:
            pts[i] = (a[0] - seg[i] * d[0], a[1] - seg[i] * d[1], a[2] - seg[i] * d[2])
    pts[0] = root
    for i in range(count):
        a, b = pts[i], pts[i + 1]
        dx, dy, dz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
        n = max(math.sqrt(dx * dx + dy * dy + dz * dz), 1e-12)
        pts[i + 1] = (a[0] + seg[i] * dx / n, a[1] + seg[i] * dy / n, a[2] + seg[i] * dz / n)


def fabrik(kern, g0, h0, target, th, count, tol=1e-6, max_iter=300, extrapolate=True):
    """Solve by FABRIK from the flat angles ``th`` (updated in place); returns ``(th, iterations)``.

    The backward pass is constrained too: each segment takes the direction nearest the wanted one
    that its joint's limits allow, in its parent's current frame. With ``extrapolate`` the
    iterations jump ahead to their limit when they can (:class:`.extrapolate.Extrapolator`; a jump
    counts as an iteration).
    """
    seg = [math.sqrt(x * x + y * y + z * z) for x, y, z in kern.d[:count]]
    total = sum(seg)
    ahead = Extrapolator(kern, count, "FABRIK") if extrapolate else None
    for it in range(max_iter):
        p, heads, _ = kern.detail(g0, h0, th, count)
        if distance2(target, p) < (tol * tol * ahead.stop2 if ahead else tol * tol):
            return th, it
        jumped = ahead and ahead.next(th, p, target, g0, h0)
        if jumped:
            th = jumped
            continue
        pts = heads + [p]
        if math.sqrt(distance2(target, pts[0])) >= total:
            _stretch(pts, seg, target, count)
        else:
            _passes(kern, kern.frames(g0, th, count), pts, seg, target, count)
        th = _to_angles(kern, g0, h0, th, pts, count)
    return th, max_iter
