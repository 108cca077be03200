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


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a × b`` for (..., 3) arrays (np.cross is slow on tiny arrays)."""
    return np.stack((a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]), axis=-1)


def turn_point(p: np.ndarray, pivot: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """``p`` turned by ``angle`` (rad) about the unit ``axis`` through ``pivot`` (Rodrigues)."""
    v = p - pivot
    c, s = np.cos(angle), np.sin(angle)
    k = axis
    kxv = np.array([k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0]])
    return pivot + v * c + kxv * s + k * ((k @ v) * (1.0 - c))
