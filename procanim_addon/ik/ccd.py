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

from ._effector import effector_of, plane_angle, turn3


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
        heads_l, waxes_l = heads.tolist(), waxes.tolist()
        for j in range(count - 1, -1, -1):
            h = heads_l[j]
            for k in (2, 1, 0):
                if locked[j][k]:
                    continue
                w = waxes_l[j][k]
                u = [p[0] - h[0], p[1] - h[1], p[2] - h[2]]
                v = [t[0] - h[0], t[1] - h[1], t[2] - h[2]]
                ang, uu, vv = plane_angle(w, u, v)
                if uu < 1e-14 or vv < 1e-14:
                    continue
                old = ang_list[j][k]
                new = min(max(old + ang, lower[j][k]), upper[j][k])
                if new == old:
                    continue
                p = turn3(p, h, w, new - old)
                ang_list[j][k] = new
        th = np.array(ang_list)
    return th, max_iter
