"""Fitted handles: per segment between two keys, the end slopes that follow the target motion best.

A reduced curve passes through the target value of each of its keys (the dense motion compensated
for the reduced bones above, :mod:`.compensate`). Each segment between keys ``j`` and ``j + 1`` (``d`` frames
long) is the cubic Hermite curve ``y(u) = h₀₀ y_j + h₁₀ d m_j⁺ + h₀₁ y_{j+1} + h₁₁ d m_{j+1}⁻``,
``u ∈ [0, 1]`` — the curve of handles at thirds (:mod:`.handles`). With the key values fixed the two
end slopes ``m_j⁺`` and ``m_{j+1}⁻`` enter linearly and touch that segment only, so the slopes that
minimise the squared difference from the target over the segment's frames are a 2×2 least-squares
problem per segment and channel, solved for every segment at once. A key's two slopes (one from
each of its segments) may differ: its handles are then ``FREE``. Where one slope serves both of its
segments within their bound (:func:`align`), the key gets it: ``ALIGNED`` handles, a smooth curve
through the key for the animator.

Fitting both slopes of every segment (rather than one slope per key, or the dense curve's own
derivative) lets a key sit where the motion changes direction sharply — a heel strike, a knee that
pops — with each side following its own segment; segments are independent, which is what makes the
key placement of :mod:`.place` exact and fast.
"""

from __future__ import annotations

import numpy as np

from ..curves import hermite_basis
from .handles import hermite_values

PULL = 1e-9  # weight of the chord's slope (per frame²), for segments with too few frames to fit two slopes
ALIGN_SHARE = 0.9  # a key takes one slope where its two segments then keep this fraction of their bound


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
    """Fit segments ``starts[i]``–``ends[i]`` of ``target`` ``(C, S)`` (channels first; frames ``x``
    ``(S,)``): the Hermite curve through the target at both ends whose end slopes (value per frame)
    best follow the target in between. Returns ``(rows, seg, residual (C, rows), start slopes (C, n),
    end slopes (C, n))`` with the rows of :func:`segment_rows` (segments may overlap: each has its own
    rows). Channels come first so that every operation runs along the rows (numpy is slow on a last
    axis of 3 or 4)."""
    rows, seg, u = segment_rows(x, starts, ends)
    first = np.concatenate([[0], np.cumsum(ends - starts + 1)[:-1]])  # each segment's first row
    span = x[ends] - x[starts]
    d = span[seg]
    h00, h10, h01, h11 = hermite_basis(u)
    y0, y1 = np.take(target, starts, axis=1), np.take(target, ends, axis=1)
    r = np.take(target, rows, axis=1) - h00 * np.take(y0, seg, axis=1) - h01 * np.take(y1, seg, axis=1)
    a, b = h10 * d, h11 * d
    aa = np.add.reduceat(a * a, first) + PULL
    ab = np.add.reduceat(a * b, first)
    bb = np.add.reduceat(b * b, first) + PULL
    chord = PULL * (y1 - y0) / np.maximum(span, 1e-12)
    ra = np.add.reduceat(a * r, first, axis=1) + chord
    rb = np.add.reduceat(b * r, first, axis=1) + chord
    det = aa * bb - ab * ab
    m0 = (bb * ra - ab * rb) / det
    m1 = (aa * rb - ab * ra) / det
    residual = r - a * np.take(m0, seg, axis=1) - b * np.take(m1, seg, axis=1)
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
    rows, _, residual, m0, m1 = fit_rows(x, np.ascontiguousarray(target.T), keys[:-1], keys[1:])
    values = np.empty_like(target)
    values[rows] = target[rows] - residual.T  # a key shared by two segments gets its target from both
    left = np.concatenate([m0[:, :1], m1], axis=1).T
    right = np.concatenate([m0, m1[:, -1:]], axis=1).T
    return values, left, right


def align(x: np.ndarray, target: np.ndarray, keys: np.ndarray, left: np.ndarray, right: np.ndarray,
          maps: np.ndarray, bound: np.ndarray, where: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Give keys one slope (``ALIGNED`` handles) where the curve stays within its bound.

    For each inner key, the common slope that best follows the target over its two segments (their
    other ends kept) replaces its two slopes when both segments then keep ``|M_s r_s| ≤ τ_s``
    (``maps`` ``(S, 3, C)``, ``bound`` ``(S,)``) within :data:`ALIGN_SHARE` (the rest is room for the
    joint error); every other key first, then the others (a segment has one changed end at a time).
    ``where`` ``(S,)``: the samples whose keys may be aligned (default all). Returns the values
    ``(S, C)`` and the left and right slopes ``(K, C)``."""
    keys = np.asarray(keys, dtype=int)
    left, right = left.copy(), right.copy()
    tgt = np.ascontiguousarray(target.T)
    mats = np.transpose(maps, (1, 2, 0))
    for parity in (1, 2):
        inner = np.arange(parity, len(keys) - 1, 2)
        if where is not None:
            inner = inner[where[keys[inner]]]
        if not len(inner):
            continue
        starts, ends = keys[inner - 1], keys[inner + 1]  # the key's two segments as one row range
        rows, seg, u = segment_rows(x, starts, ends)
        centre = np.take(x[keys[inner]], seg)
        before = x[rows] <= centre
        lo = np.where(before, np.take(x[starts], seg), centre)
        hi = np.where(before, centre, np.take(x[ends], seg))
        d = hi - lo
        v = (x[rows] - lo) / np.where(d > 0, d, 1.0)
        h00, h10, h01, h11 = hermite_basis(v)
        i_lo = np.where(before, np.take(inner - 1, seg), np.take(inner, seg))
        y0, y1 = np.take(tgt, keys[i_lo], axis=1), np.take(tgt, keys[i_lo + 1], axis=1)
        outer = np.where(before, np.take(right, i_lo, axis=0).T, np.take(left, i_lo + 1, axis=0).T)  # kept slopes
        weight = np.where(before, h11, h10) * d  # the coefficient of the key's common slope
        fixed = h00 * y0 + h01 * y1 + np.where(before, h10, h11) * d * outer
        r = np.take(tgt, rows, axis=1) - fixed
        first = np.concatenate([[0], np.cumsum(ends - starts + 1)[:-1]])
        m = np.add.reduceat(weight * r, first, axis=1) / np.maximum(np.add.reduceat(weight * weight, first), 1e-300)
        residual = r - weight * np.take(m, seg, axis=1)
        moved = np.zeros((mats.shape[0], len(rows)))
        for c in range(residual.shape[0]):
            moved += np.take(mats[:, c], rows, axis=1) * residual[c]
        err = np.sqrt(np.sum(moved * moved, axis=0)) / np.take(bound, rows)
        ok = np.maximum.reduceat(err, first) <= ALIGN_SHARE
        left[inner[ok]] = right[inner[ok]] = m[:, ok].T
    values = hermite_values(x[keys], target[keys], left, right, x)
    return values, left, right
