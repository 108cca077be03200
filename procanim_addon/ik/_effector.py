"""Shared helper: the effector of a (sub)chain, and the active-set mask used by gradient solvers."""

from __future__ import annotations

import numpy as np


def effector_of(mats: np.ndarray, eff_local: np.ndarray) -> np.ndarray:
    """Point ``eff_local`` (m, frame of the last matrix) in armature space."""
    return mats[-1, :3, :3] @ eff_local + mats[-1, :3, 3]


def free_dofs(chain, angles: np.ndarray, gradient: np.ndarray, count: int) -> np.ndarray:
    """Angles a gradient step may move ``(count*3,)``: not locked, and not pushing past a bound."""
    th = angles[:count].reshape(-1)
    lo = chain.lower[:count].reshape(-1)
    hi = chain.upper[:count].reshape(-1)
    eps = 1e-9
    locked = hi - lo < eps
    at_lo = (th <= lo + eps) & (gradient < 0)
    at_hi = (th >= hi - eps) & (gradient > 0)
    return ~(locked | at_lo | at_hi)
