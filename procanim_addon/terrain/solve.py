"""The iterative update of Jo & Choi's Table 1 and the multi-resolution solve over a clip.

Per frame, starting from the source joints (p_previous = p_current = source)::

    p_update = d·(p_current − p_previous) + ½·(p_estimate − p_current)/k        (Eq. 3)
    p_new    = p_current + p_update
    p_new    ← bone lengths restored (Eq. 4, parents first)

repeated until the largest update is under ``tolerance_m``. d is the damping coefficient (it
carries part of the previous update: momentum) and k = 9 at first. **RECON**: the paper calls k
"the constant of the number of repetitions" and gives only its first value; here k shrinks by
``k_decay`` per iteration down to ``k_min`` so the solve settles in tens of iterations.

Multi-resolution (Lee & Shin 1999): frames at ``key_interval`` are solved, the joint
displacements (solved − source) are splined between them, and each interval is halved where the
spline misses the solved midpoint by more than ``tolerance_m`` — refined until under tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class SolveStats:
    iterations: int = 0
    frames_solved: int = 0
    levels: int = 0


def damped_solve(source: np.ndarray, target: np.ndarray, restore, damping: float = 0.0, k0: float = 9.0,
                 k_decay: float = 0.8, k_min: float = 0.5, tolerance_m: float = 1e-4, max_iterations: int = 200,
                 stats: SolveStats | None = None) -> np.ndarray:
    """Joint positions ``(N, J, 3)`` moved from ``source`` toward the Eq. 2 ``target`` (same shape)
    with Eq. 3, lengths restored by ``restore(p)`` after every step."""
    p_cur = np.array(source, dtype=float)
    p_prev = p_cur.copy()
    k = k0
    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        update = damping * (p_cur - p_prev) + 0.5 * (target - p_cur) / k  # Eq. 3
        p_prev = p_cur
        p_cur = restore(p_cur + update)  # Eq. 4
        k = max(k_min, k * k_decay)
        if np.max(np.abs(p_cur - p_prev)) < tolerance_m:
            break
    if stats is not None:
        stats.iterations = max(stats.iterations, iterations)
    return p_cur


def hermite(key_t: np.ndarray, key_v: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Cubic Hermite spline through ``(key_t (K,), key_v (K, ...))`` with Catmull-Rom tangents
    (one-sided at the ends), evaluated at ``t`` → ``(len(t), ...)``."""
    key_t = np.asarray(key_t, float)
    if len(key_t) == 1:
        return np.repeat(key_v[:1], len(t), axis=0)
    m = np.empty_like(key_v)
    dt = np.diff(key_t)
    shape = (-1,) + (1,) * (key_v.ndim - 1)
    m[1:-1] = (key_v[2:] - key_v[:-2]) / (key_t[2:] - key_t[:-2]).reshape(shape)
    m[0] = (key_v[1] - key_v[0]) / dt[0]
    m[-1] = (key_v[-1] - key_v[-2]) / dt[-1]
    seg = np.clip(np.searchsorted(key_t, t, side="right") - 1, 0, len(key_t) - 2)
    h = dt[seg].reshape(shape)
    s = ((t - key_t[seg]) / dt[seg]).reshape(shape)
    h00 = 2 * s**3 - 3 * s**2 + 1
    h10 = s**3 - 2 * s**2 + s
    h01 = -2 * s**3 + 3 * s**2
    h11 = s**3 - s**2
    return h00 * key_v[seg] + h10 * h * m[seg] + h01 * key_v[seg + 1] + h11 * h * m[seg + 1]


def multires_solve(frames: int, solve_frames, key_interval: int = 8, tolerance_m: float = 0.005,
                   stats: SolveStats | None = None) -> np.ndarray:
    """Displacements ``(F, J, 3)`` for a whole clip from ``solve_frames(idx) -> (len(idx), J, 3)``
    (the solved displacement at those frame indices), solving only the frames the refinement needs."""
    step = max(1, int(key_interval))
    keys = sorted(set(range(0, frames, step)) | {frames - 1})
    solved = dict(zip(keys, solve_frames(np.array(keys))))
    open_intervals = [(a, b) for a, b in zip(keys[:-1], keys[1:]) if b - a > 1]
    levels = 1
    while open_intervals:
        mids = np.array([(a + b) // 2 for a, b in open_intervals])
        kt = np.array(sorted(solved))
        spline = hermite(kt, np.stack([solved[k] for k in kt]), mids.astype(float))
        fresh = solve_frames(mids)
        err = np.max(np.linalg.norm(spline - fresh, axis=-1), axis=-1)
        nxt = []
        for (a, b), m, v, e in zip(open_intervals, mids, fresh, err):
            solved[int(m)] = v
            if e > tolerance_m:
                nxt += [(x, y) for x, y in ((a, int(m)), (int(m), b)) if y - x > 1]
        open_intervals = nxt
        levels += 1
    kt = np.array(sorted(solved))
    out = hermite(kt, np.stack([solved[k] for k in kt]), np.arange(frames, dtype=float))
    out[kt] = np.stack([solved[k] for k in kt])
    if stats is not None:
        stats.frames_solved = len(kt)
        stats.levels = levels
    return out
