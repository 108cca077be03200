"""Fitted handles: per segment between two keys, the end slopes that follow the target motion best.

A reduced curve passes through the target value of each of its keys (the dense motion, or the
compensated one of :mod:`.forward`). Each segment between keys ``j`` and ``j + 1`` (``d`` frames
long) is the cubic Hermite curve ``y(u) = h₀₀ y_j + h₁₀ d m_j⁺ + h₀₁ y_{j+1} + h₁₁ d m_{j+1}⁻``,
``u ∈ [0, 1]`` — the curve of handles at thirds (:mod:`.handles`). With the key values fixed the two
end slopes ``m_j⁺`` and ``m_{j+1}⁻`` enter linearly and touch that segment only, so the slopes that
minimise the squared difference from the target over the segment's frames are a 2×2 least-squares
problem per segment and channel, solved for every segment at once. A key's two slopes (one from
each of its segments) may differ: its handles are then ``FREE`` (a corner, where the motion's
velocity turns), else ``ALIGNED``.

Fitting both slopes of every segment (rather than one slope per key, or the dense curve's own
derivative) lets a key sit where the motion changes direction sharply — a heel strike, a knee that
pops — with each side following its own segment; segments are independent, which is what makes the
key placement of :mod:`.place` exact and fast.
"""

from __future__ import annotations

import numpy as np

from ..curves import hermite_basis

PULL = 1e-9  # weight of the chord's slope (per frame²), for segments with too few frames to fit two slopes


def segment_rows(x: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The samples of segments ``starts[i]``–``ends[i]`` (sample indices, inclusive) laid end to end:
    ``(rows, segment of each row, u of each row)`` — ``u`` the row's place along its segment (0…1)."""
    lengths = ends - starts + 1
    seg = np.repeat(np.arange(len(starts)), lengths)
    first = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    rows = starts[seg] + np.arange(int(lengths.sum())) - first[seg]
    span = (x[ends] - x[starts])[seg]
    u = (x[rows] - x[starts][seg]) / np.where(span > 0, span, 1.0)
    return rows, seg, u


def fit_rows(x: np.ndarray, target: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """Fit segments ``starts[i]``–``ends[i]`` of ``target`` ``(S, C)`` (frames ``x`` ``(S,)``): the
    Hermite curve through the target at both ends whose end slopes (value per frame) best follow the
    target in between. Returns ``(rows, seg, residual (rows, C), start slopes (n, C), end slopes (n, C))``
    with the rows of :func:`segment_rows` (segments may overlap: each has its own rows)."""
    rows, seg, u = segment_rows(x, starts, ends)
    first = np.concatenate([[0], np.cumsum(ends - starts + 1)[:-1]])  # each segment's first row
    d = (x[ends] - x[starts])[seg]
    h00, h10, h01, h11 = hermite_basis(u)
    y0, y1 = target[starts], target[ends]
    r = target[rows] - h00[:, None] * y0[seg] - h01[:, None] * y1[seg]
    a, b = h10 * d, h11 * d
    sums = np.add.reduceat(np.stack([a * a, a * b, b * b], axis=-1), first)
    aa, ab, bb = sums[:, 0] + PULL, sums[:, 1], sums[:, 2] + PULL
    chord = (y1 - y0) / np.maximum(x[ends] - x[starts], 1e-12)[:, None]
    ra = np.add.reduceat(a[:, None] * r, first) + PULL * chord
    rb = np.add.reduceat(b[:, None] * r, first) + PULL * chord
    det = aa * bb - ab * ab
    m0 = (bb[:, None] * ra - ab[:, None] * rb) / det[:, None]
    m1 = (aa[:, None] * rb - ab[:, None] * ra) / det[:, None]
    residual = r - a[:, None] * m0[seg] - b[:, None] * m1[seg]
    return rows, seg, residual, m0, m1


def fit_keys(x: np.ndarray, target: np.ndarray, keys: np.ndarray):
    """The fitted curve of ``target`` ``(S, C)`` with ``keys`` (sorted sample indices, the first and
    last sample among them): its values on every sample ``(S, C)`` and each key's left and right
    slopes ``(K, C)`` (the first key's left slope is its right one, the last key's right its left)."""
    keys = np.asarray(keys, dtype=int)
    if len(keys) < 2:
        values = np.repeat(target[keys[:1]], len(x), axis=0)
        zero = np.zeros((len(keys), target.shape[1]))
        return values, zero, zero
    rows, seg, residual, m0, m1 = fit_rows(x, target, keys[:-1], keys[1:])
    values = np.empty_like(target)
    values[rows] = target[rows] - residual  # a key shared by two segments gets its target from both
    left = np.concatenate([m0[:1], m1])
    right = np.concatenate([m0, m1[-1:]])
    return values, left, right
