"""Shared helper: the effector of a (sub)chain, and the active-set mask used by gradient solvers."""

from __future__ import annotations

import math

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


# ---- plain-Python 3-vectors: the per-angle inner loops of CCD and the fuzzy controllers run on
# ---- lists of floats, which is an order of magnitude faster than numpy on 3 elements

def dot3(a, b) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross3(a, b) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def plane_angle(w, u, v) -> tuple[float, float, float]:
    """Signed angle (rad) about unit ``w`` from ``u`` to ``v`` (both projected on the plane ⊥ w), and
    the squared lengths of the projections."""
    wu, wv = dot3(w, u), dot3(w, v)
    up = [u[0] - w[0] * wu, u[1] - w[1] * wu, u[2] - w[2] * wu]
    vp = [v[0] - w[0] * wv, v[1] - w[1] * wv, v[2] - w[2] * wv]
    return math.atan2(dot3(w, cross3(up, vp)), dot3(up, vp)), dot3(up, up), dot3(vp, vp)


def turn3(p, pivot, k, angle: float) -> list:
    """:func:`turn_point` on lists of floats."""
    v = [p[0] - pivot[0], p[1] - pivot[1], p[2] - pivot[2]]
    c, s = math.cos(angle), math.sin(angle)
    kxv = cross3(k, v)
    kv = dot3(k, v) * (1.0 - c)
    return [pivot[i] + v[i] * c + kxv[i] * s + k[i] * kv for i in range(3)]


def sweep_tip_to_root(p, t, heads, waxes, angles, locked, count, turn_to) -> list:
    """One sweep over the angles of the first ``count`` joints, tip to root (CCD and the fuzzy
    controllers): each angle about its world axis ``w`` through its joint's head ``h`` sees the
    signed angle from ``u = p − h`` to ``v = t − h`` (projected on the plane ⊥ w, radians) and
    ``turn_to(j, angle, old)`` returns its new value (limits applied); the effector ``p`` is turned
    with it. Going tip to root, and within a joint from its innermost angle out, a turn moves
    only the effector for the angles still to come (their axes and heads sit above it), so one
    FK per sweep is enough. ``angles`` (lists of floats per joint) is updated in place; returns
    the effector."""
    tx, ty, tz = t
    for j in range(count - 1, -1, -1):
        h = heads[j]
        for k in (2, 1, 0):
            if locked[j][k]:
                continue
            w = waxes[j][k]
            ang, uu, vv = plane_angle(w, [p[0] - h[0], p[1] - h[1], p[2] - h[2]], [tx - h[0], ty - h[1], tz - h[2]])
            if uu < 1e-14 or vv < 1e-14:
                continue
            old = angles[j][k]
            new = turn_to(j, ang, old, k)
            if new == old:
                continue
            p = turn3(p, h, w, new - old)
            angles[j][k] = new
    return p
