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

from ._effector import effector_of, sweep_tip_to_root


def ccd(chain, base, target, angles, count, eff_local, tol=1e-6, max_iter=300):
    """Solve by CCD; returns ``(angles (n, 3), sweeps)``."""
    th = np.array(angles, float)
    locked = ((chain.upper - chain.lower) < 1e-9).tolist()
    lower, upper = chain.lower.tolist(), chain.upper.tolist()
    t = [float(x) for x in target]
    tol2 = tol * tol
    for sweep in range(max_iter):
        mats, heads, waxes = chain.fk_detail(base, th, count)
        p = effector_of(mats, eff_local).tolist()
        if sum((t[i] - p[i]) ** 2 for i in range(3)) < tol2:
            return th, sweep
        ang_list = th.tolist()
        sweep_tip_to_root(p, t, heads.tolist(), waxes.tolist(), ang_list, locked, count,
                          lambda j, ang, old, k: min(max(old + ang, lower[j][k]), upper[j][k]))
        th = np.array(ang_list)
    return th, max_iter
