"""Solved handles: the key slopes that make a curve follow the dense motion best between its keys.

For keys at fixed frames and values, each segment between keys ``j`` and ``j + 1`` (``d`` frames
long) is the Hermite cubic ``y(u) = h₀₀ y_j + h₁₀ d m_j⁺ + h₀₁ y_{j+1} + h₁₁ d m_{j+1}⁻`` in
``u ∈ [0, 1]`` — the curve of handles at thirds (:mod:`.handles`). The slopes ``m`` enter linearly, so
the slopes that minimise the squared difference from the dense curve over every frame between keys
solve a linear least-squares problem; a slope touches its two segments only, so its normal
equations are tridiagonal (Thomas' algorithm, all channels at once). A key gets one slope (ALIGNED
handles) unless it is a *corner* (a heel strike: the dense velocity jumps), where the segments on
its two sides get a slope each (FREE handles). A small pull ``λ`` toward the dense curve's own slope
(:func:`.reduce.data_slopes`) keeps a slope defined where no frame lies between keys.

Fitting the slopes rather than copying the dense curve's derivative matters on motion with
frame-to-frame roughness (a knee that pops): the fitted curve passes through the middle of the
roughness instead of following its steepest frame.
"""

from __future__ import annotations

import numpy as np

from ..curves import hermite_basis

PULL = 1e-3  # λ: weight of the dense curve's slope, relative to the largest diagonal term


def solve_slopes(x: np.ndarray, keys: np.ndarray, reference: np.ndarray, prior: np.ndarray,
                 corner: np.ndarray | None = None, pull: float = PULL) -> tuple[np.ndarray, np.ndarray]:
    """Left and right slopes ``(K, C)`` (value per frame) at sample indices ``keys`` ``(K,)`` of the
    curves through ``reference[keys]`` that best follow ``reference`` ``(S, C)`` on the samples at
    frames ``x`` ``(S,)``; ``prior`` ``(S, C)``: the dense slopes; ``corner`` ``(K,)`` booleans: keys
    with two slopes."""
    return solve_many([(x, keys, reference, prior, corner)], pull)[0]


def _system(x, keys, reference, prior, corner, pull):
    """The normal equations of one curve group: ``(diag, off, rhs, left slot, right slot)``."""
    x = np.asarray(x, float)
    k = np.asarray(keys, dtype=int)
    ref = np.asarray(reference, float)
    n_keys = len(k)
    corner = np.zeros(n_keys, dtype=bool) if corner is None else np.asarray(corner, dtype=bool).copy()
    corner[[0, -1]] = False
    # unknowns: one slot per key, two (left, right) at corners; segment j uses right(j), left(j + 1)
    slots = 1 + corner.astype(int)
    first = np.concatenate([[0], np.cumsum(slots)[:-1]])
    left_slot, right_slot = first, first + corner
    n_slots = int(slots.sum())
    between = np.ones(len(x), dtype=bool)
    between[k] = False
    s = np.nonzero(between)[0]
    seg = np.clip(np.searchsorted(k, s) - 1, 0, n_keys - 2)
    xk = x[k]
    d = xk[seg + 1] - xk[seg]
    u = (x[s] - xk[seg]) / d
    h00, h10, h01, h11 = hermite_basis(u)
    a = h10 * d  # coefficient of the right slope of key seg
    b = h11 * d  # coefficient of the left slope of key seg + 1
    r = ref[s] - h00[:, None] * ref[k[seg]] - h01[:, None] * ref[k[seg + 1]]
    ra, rb = right_slot[seg], left_slot[seg + 1]
    diag = np.bincount(ra, a * a, n_slots) + np.bincount(rb, b * b, n_slots)
    off = np.bincount(ra, a * b, n_slots)[: n_slots - 1]  # ra + 1 == rb: a segment's two slots are neighbours
    rhs = np.stack([np.bincount(ra, r[:, c] * a, n_slots) + np.bincount(rb, r[:, c] * b, n_slots)
                    for c in range(ref.shape[1])], axis=-1)
    lam = pull * max(float(diag.max()) if n_slots else 0.0, 1.0)
    diag += lam
    rhs += lam * prior[k][np.repeat(np.arange(n_keys), slots)]
    return diag, off, rhs, left_slot, right_slot


def solve_many(curves: list[tuple], pull: float = PULL) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`solve_slopes` of several curve groups ``(x, keys, reference, prior, corner)`` at once:
    their systems side by side in one tridiagonal system (uncoupled), solved in one pass."""
    out: list = [None] * len(curves)
    systems, where = [], []
    for i, (x, keys, reference, prior, corner) in enumerate(curves):
        keys = np.asarray(keys, dtype=int)
        if len(keys) < 2:
            m = np.asarray(prior, float)[keys]
            out[i] = (m, m.copy())
            continue
        systems.append(_system(x, keys, reference, prior, corner, pull))
        where.append(i)
    if not systems:
        return out
    width = max(sys_[2].shape[1] for sys_ in systems)
    sizes = [len(sys_[0]) for sys_ in systems]
    diag = np.concatenate([sys_[0] for sys_ in systems])
    off = np.concatenate([np.append(sys_[1], 0.0) for sys_ in systems])[:-1]  # 0 between systems
    rhs = np.zeros((len(diag), width))
    start = 0
    for sys_, n in zip(systems, sizes):
        rhs[start : start + n, : sys_[2].shape[1]] = sys_[2]
        start += n
    m = _thomas(diag, off, rhs)
    start = 0
    for i, sys_, n in zip(where, systems, sizes):
        block = m[start : start + n, : sys_[2].shape[1]]
        out[i] = (block[sys_[3]], block[sys_[4]])
        start += n
    return out


def _thomas(diag: np.ndarray, off: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve the symmetric tridiagonal system (``diag`` (n,), ``off`` (n − 1,) above and below) for
    ``rhs`` (n, C) by cyclic reduction: each level eliminates the odd unknowns from the even rows
    (whole-array operations), the half-size system is solved the same way, and the odd unknowns
    follow. The normal equations here are diagonally dominant (see :func:`solve_slopes`), where
    cyclic reduction is stable."""
    n = len(diag)
    lower = np.zeros(n)
    upper = np.zeros(n)
    lower[1:] = off[: n - 1]
    upper[:-1] = off[: n - 1]
    return _reduce(lower, np.asarray(diag, float), upper, np.asarray(rhs, float))


def _reduce(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """One level of cyclic reduction of ``a x[i-1] + b x[i] + c x[i+1] = d`` (``a[0] = c[-1] = 0``)."""
    n = len(b)
    if n == 1:
        return d / b[0]
    if n == 2:
        det = b[0] * b[1] - c[0] * a[1]
        return np.stack([(d[0] * b[1] - c[0] * d[1]) / det, (b[0] * d[1] - a[1] * d[0]) / det])
    even = np.arange(0, n, 2)
    prev, nxt = even - 1, even + 1
    has_prev, has_next = prev >= 0, nxt < n
    p, q = np.maximum(prev, 0), np.minimum(nxt, n - 1)
    alpha = np.where(has_prev, -a[even] / b[p], 0.0)
    gamma = np.where(has_next, -c[even] / b[q], 0.0)
    a2 = alpha * np.where(has_prev, a[p], 0.0)
    c2 = gamma * np.where(has_next, c[q], 0.0)
    b2 = b[even] + alpha * np.where(has_prev, c[p], 0.0) + gamma * np.where(has_next, a[q], 0.0)
    d2 = d[even] + alpha[:, None] * np.where(has_prev[:, None], d[p], 0.0)
    d2 += gamma[:, None] * np.where(has_next[:, None], d[q], 0.0)
    x = np.empty(d.shape)
    x[even] = _reduce(a2, b2, c2, d2)
    odd = np.arange(1, n, 2)
    right = np.where(odd + 1 < n, x[np.minimum(odd + 1, n - 1)].T, 0.0).T
    x[odd] = (d[odd] - a[odd][:, None] * x[odd - 1] - c[odd][:, None] * right) / b[odd][:, None]
    return x
