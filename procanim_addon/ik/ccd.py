"""Cyclic coordinate descent (CCD), one angle at a time.

From the last joint to the first, each angle about its world axis ``w`` turns by the signed angle
between ``u = p − h`` and ``v = t − h`` projected on the plane ⊥ ``w`` (``h`` the joint's head,
``p`` the effector, ``t`` the target), clamped into its limits. Sweeps repeat until
``|t − p| < tol``. The sweep is :func:`._effector.sweep_tip_to_root` (shared with the fuzzy
controllers): one FK per sweep, on plain floats.
"""

from __future__ import annotations

from ._effector import distance2, sweep_tip_to_root
from .extrapolate import Extrapolator


def ccd(kern, g0, h0, target, th, count, tol=1e-6, max_iter=300, extrapolate=True):
    """Solve by CCD from the flat angles ``th`` (updated in place); returns ``(th, sweeps)``.

    ``kern`` is the chain's :class:`~.kernel.Kernel`, ``(g0, h0)`` its :meth:`~.kernel.Kernel.start`.
    With ``extrapolate`` the sweeps jump ahead to their limit when they can
    (:class:`.extrapolate.Extrapolator`; a jump counts as a sweep).
    """
    lower, upper, locked = kern.lower, kern.upper, kern.locked
    tol2 = tol * tol
    ahead = Extrapolator(kern, count, "CCD") if extrapolate else None

    def turn_to(i, ang, old):
        return min(max(old + ang, lower[i]), upper[i])

    for sweep in range(max_iter):
        p, heads, axes = kern.detail(g0, h0, th, count)
        if distance2(target, p) < (tol2 * ahead.stop2 if ahead else tol2):
            return th, sweep
        jumped = ahead and ahead.next(th, p, target, g0, h0)
        if jumped:
            th = jumped
            continue
        sweep_tip_to_root(p, target, heads, axes, th, locked, count, turn_to)
    return th, max_iter
