"""Jacobian-based solvers: Jacobian transpose (the paper's JT) and damped least squares (DLS).

Both iterate on the angles θ of the first ``count`` joints to move the effector ``p`` to the target
``t``; ``e = t − p`` (m). The Jacobian column of an angle with world axis ``w`` about a joint head
``h`` is ``w × (p − h)``.

* JT: ``Δθ = α Jᵀe`` with Buss's step ``α = ⟨e, JJᵀe⟩ / |JJᵀe|²``.
* DLS: ``Δθ = Jᵀ (J Jᵀ + λ² I)⁻¹ e`` (λ in metres).

Limits are an active set: an angle at a bound whose gradient pushes outward does not move this
iteration; every step is clamped into the limits and to ``max_step`` radians per angle.
"""

from __future__ import annotations

import numpy as np

from ._effector import cross, cross3, dot3, effector_of, free_dofs


def _jacobian(chain, base, angles, count, eff_local):
    mats, heads, waxes = chain.fk_detail(base, angles, count)
    p = effector_of(mats, eff_local)
    cols = cross(waxes, (p - heads)[:, None, :]).reshape(-1, 3)
    return p, cols.T  # (3,), (3, 3*count)


def _step(chain, angles, delta, count, max_step):
    big = np.max(np.abs(delta)) if delta.size else 0.0
    if big > max_step:
        delta = delta * (max_step / big)
    out = angles.copy()
    out[:count] = np.minimum(np.maximum(angles[:count] + delta.reshape(count, 3), chain.lower[:count]),
                             chain.upper[:count])
    return out


def jacobian_transpose(chain, base, target, angles, count, eff_local, tol=1e-6, max_iter=3000, max_step=0.25):
    """Solve by Jacobian transpose; returns ``(angles (n, 3), iterations)``.

    The per-angle arithmetic (columns ``w × (p − h)``, ``Jᵀe``, ``JJᵀe``) runs on plain floats: with
    three joints numpy's per-call cost would dominate.
    """
    th = np.array(angles, float)
    t = [float(x) for x in target]
    lower, upper = chain.lower[:count].tolist(), chain.upper[:count].tolist()
    locked = [[hi - lo < 1e-9 for lo, hi in zip(lo3, hi3)] for lo3, hi3 in zip(lower, upper)]
    eps = 1e-9
    for it in range(max_iter):
        mats, heads, waxes = chain.fk_detail(base, th, count)
        p = effector_of(mats, eff_local).tolist()
        e = [t[0] - p[0], t[1] - p[1], t[2] - p[2]]
        if dot3(e, e) < tol * tol:
            return th, it
        ang = th[:count].tolist()
        heads_l, waxes_l = heads.tolist(), waxes.tolist()
        cols, grads = [], []
        jg = [0.0, 0.0, 0.0]
        for j in range(count):
            h = heads_l[j]
            r = [p[0] - h[0], p[1] - h[1], p[2] - h[2]]
            for k in range(3):
                c = cross3(waxes_l[j][k], r)
                g = dot3(c, e)
                a = ang[j][k]
                # active set: a locked angle, or one at a bound pushed outward, stays put
                if locked[j][k] or (a <= lower[j][k] + eps and g < 0) or (a >= upper[j][k] - eps and g > 0):
                    g = 0.0
                cols.append(c)
                grads.append(g)
                jg[0] += c[0] * g
                jg[1] += c[1] * g
                jg[2] += c[2] * g
        denom = dot3(jg, jg)
        if denom < 1e-20:
            return th, it
        alpha = dot3(e, jg) / denom  # Buss's step
        biggest = max(abs(g) for g in grads) * abs(alpha)
        if biggest > max_step:
            alpha *= max_step / biggest
        i = 0
        for j in range(count):
            for k in range(3):
                ang[j][k] = min(max(ang[j][k] + alpha * grads[i], lower[j][k]), upper[j][k])
                i += 1
        th = th.copy()
        th[:count] = ang
    return th, max_iter


def damped_least_squares(chain, base, target, angles, count, eff_local, tol=1e-6, max_iter=100, max_step=0.25,
                         damping=0.005):
    """Solve by damped least squares; returns ``(angles (n, 3), iterations)``."""
    th = np.array(angles, float)
    lam2 = damping * damping
    for it in range(max_iter):
        p, jac = _jacobian(chain, base, th, count, eff_local)
        e = target - p
        if e @ e < tol * tol:
            return th, it
        free = free_dofs(chain, th, jac.T @ e, count)
        j = jac * free[None, :]
        delta = j.T @ np.linalg.solve(j @ j.T + lam2 * np.eye(3), e)
        th = _step(chain, th, delta, count, max_step)
    return th, max_iter
