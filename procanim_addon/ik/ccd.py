"""Cyclic coordinate descent (CCD), one angle at a time.

From the last joint to the first, each angle about its world axis ``w`` turns by the signed angle
between ``u = p − h`` and ``v = t − h`` projected on the plane ⊥ ``w`` (``h`` the joint's head,
``p`` the effector, ``t`` the target), clamped into its limits. Sweeps repeat until
``|t − p| < tol``.

Going from the tip to the root, and within a joint from its innermost angle out, a turn never
changes the axes or heads still to be visited (they sit above it), only the effector — so one FK
per sweep is enough and ``p`` is turned in place.
"""

from __future__ import annotations

import numpy as np

from ._effector import cross, effector_of, turn_point


def ccd(chain, base, target, angles, count, eff_local, tol=1e-6, max_iter=300):
    """Solve by CCD; returns ``(angles (n, 3), sweeps)``."""
    th = np.array(angles, float)
    locked = (chain.upper - chain.lower) < 1e-9
    for sweep in range(max_iter):
        mats, heads, waxes = chain.fk_detail(base, th, count)
        p = effector_of(mats, eff_local)
        if np.sum((target - p) ** 2) < tol * tol:
            return th, sweep
        for j in range(count - 1, -1, -1):
            for k in (2, 1, 0):
                if locked[j, k]:
                    continue
                w = waxes[j, k]
                u = p - heads[j]
                v = target - heads[j]
                u = u - w * (w @ u)
                v = v - w * (w @ v)
                if u @ u < 1e-14 or v @ v < 1e-14:
                    continue
                ang = np.arctan2(w @ cross(u, v), u @ v)
                new = min(max(th[j, k] + ang, chain.lower[j, k]), chain.upper[j, k])
                if new == th[j, k]:
                    continue
                p = turn_point(p, heads[j], w, new - th[j, k])
                th[j, k] = new
    return th, max_iter
