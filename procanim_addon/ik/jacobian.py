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

from ._effector import cross, effector_of, free_dofs


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
    """Solve by Jacobian transpose; returns ``(angles (n, 3), iterations)``."""
    th = np.array(angles, float)
    for it in range(max_iter):
        p, jac = _jacobian(chain, base, th, count, eff_local)
        e = target - p
        if e @ e < tol * tol:
            return th, it
        g = jac.T @ e
        g = np.where(free_dofs(chain, th, g, count), g, 0.0)
        jg = jac @ g
        denom = jg @ jg
        if denom < 1e-20:
            return th, it
        th = _step(chain, th, (e @ jg / denom) * g, count, max_step)
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
