"""Jacobian-based solvers: Jacobian transpose (the paper's JT) and damped least squares (DLS).

Both iterate on the angles θ of the first ``count`` joints to move the effector ``p`` to the target
``t``; ``e = t − p`` (m). The Jacobian column of an angle with world axis ``w`` about a joint head
``h`` is ``w × (p − h)``.

* JT: ``Δθ = α Jᵀe`` with Buss's step ``α = ⟨e, JJᵀe⟩ / |JJᵀe|²``.
* DLS: ``Δθ = Jᵀ (J Jᵀ + λ² I)⁻¹ e`` (λ in metres).

Limits are an active set: an angle at a bound whose gradient pushes outward does not move this
iteration; every step is clamped into the limits and to ``max_step`` radians per angle. Plain
floats throughout (a 3×3 system for DLS, solved by cofactors): with three joints numpy's per-call
cost would dominate.
"""

from __future__ import annotations

from .extrapolate import Extrapolator

ACTIVE_EPS = 1e-9  # rad: an angle this close to a bound counts as at it


def _columns(p, heads, axes, e, th, kern, count):
    """Jacobian columns ``w × (p − h)`` and gradients ``col · e`` of the angles free to move."""
    lower, upper, locked = kern.lower, kern.upper, kern.locked
    ex, ey, ez = e
    px, py, pz = p
    cols, grads, free = [], [], []
    for i in range(3 * count):
        if locked[i]:
            continue
        hx, hy, hz = heads[i // 3]
        rx, ry, rz = px - hx, py - hy, pz - hz
        wx, wy, wz = axes[i]
        c0, c1, c2 = wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx
        g = c0 * ex + c1 * ey + c2 * ez
        a = th[i]
        if (a <= lower[i] + ACTIVE_EPS and g < 0) or (a >= upper[i] - ACTIVE_EPS and g > 0):
            continue
        cols.append((c0, c1, c2))
        grads.append(g)
        free.append(i)
    return cols, grads, free


def _apply(th, free, delta, max_step, kern):
    """Add ``delta`` (on the free angles) scaled to at most ``max_step`` per angle, within limits."""
    big = 0.0
    for x in delta:
        if x > big:
            big = x
        elif -x > big:
            big = -x
    scale = max_step / big if big > max_step else 1.0
    lower, upper = kern.lower, kern.upper
    for i, d in zip(free, delta):
        v = th[i] + d * scale
        lo, hi = lower[i], upper[i]
        th[i] = lo if v < lo else (hi if v > hi else v)


def jacobian_transpose(kern, g0, h0, target, th, count, tol=1e-6, max_iter=3000, max_step=0.25, extrapolate=True):
    """Solve by Jacobian transpose from the flat angles ``th`` (updated in place); returns
    ``(th, iterations)``. With ``extrapolate`` the steps jump ahead to their limit when they can
    (:class:`.extrapolate.Extrapolator`; a jump counts as an iteration)."""
    tx, ty, tz = target
    ahead = Extrapolator(kern, count, "JACOBIAN_TRANSPOSE") if extrapolate else None
    for it in range(max_iter):
        p, heads, axes = kern.detail(g0, h0, th, count)
        e = (tx - p[0], ty - p[1], tz - p[2])
        if e[0] * e[0] + e[1] * e[1] + e[2] * e[2] < (tol * tol * ahead.stop2 if ahead else tol * tol):
            return th, it
        jumped = ahead and ahead.next(th, p, target, g0, h0)
        if jumped:
            th = jumped
            continue
        cols, grads, free = _columns(p, heads, axes, e, th, kern, count)
        jx = sum(c[0] * g for c, g in zip(cols, grads))  # J Jᵀ e
        jy = sum(c[1] * g for c, g in zip(cols, grads))
        jz = sum(c[2] * g for c, g in zip(cols, grads))
        denom = jx * jx + jy * jy + jz * jz
        if denom < 1e-20:
            return th, it
        alpha = (e[0] * jx + e[1] * jy + e[2] * jz) / denom  # Buss's step
        _apply(th, free, [alpha * g for g in grads], max_step, kern)
    return th, max_iter


def damped_least_squares(kern, g0, h0, target, th, count, tol=1e-6, max_iter=100, max_step=0.25, damping=0.005):
    """Solve by damped least squares from the flat angles ``th`` (updated in place); returns
    ``(th, iterations)``."""
    tx, ty, tz = target
    lam2 = damping * damping
    for it in range(max_iter):
        p, heads, axes = kern.detail(g0, h0, th, count)
        e = (tx - p[0], ty - p[1], tz - p[2])
        if e[0] * e[0] + e[1] * e[1] + e[2] * e[2] < tol * tol:
            return th, it
        cols, _, free = _columns(p, heads, axes, e, th, kern, count)
        # A = J Jᵀ + λ² I (symmetric 3×3), y = A⁻¹ e by cofactors, Δθ = Jᵀ y
        a00 = a01 = a02 = a11 = a12 = a22 = 0.0
        for cx, cy, cz in cols:
            a00 += cx * cx
            a01 += cx * cy
            a02 += cx * cz
            a11 += cy * cy
            a12 += cy * cz
            a22 += cz * cz
        a00 += lam2
        a11 += lam2
        a22 += lam2
        c00, c01, c02 = a11 * a22 - a12 * a12, a02 * a12 - a01 * a22, a01 * a12 - a02 * a11
        c11, c12, c22 = a00 * a22 - a02 * a02, a01 * a02 - a00 * a12, a00 * a11 - a01 * a01
        det = a00 * c00 + a01 * c01 + a02 * c02
        ex, ey, ez = e
        yx = (c00 * ex + c01 * ey + c02 * ez) / det
        yy = (c01 * ex + c11 * ey + c12 * ez) / det
        yz = (c02 * ex + c12 * ey + c22 * ez) / det
        _apply(th, free, [cx * yx + cy * yy + cz * yz for cx, cy, cz in cols], max_step, kern)
    return th, max_iter
