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

from ..curves import hermite, hermite_basis
from .handles import hermite_values

PULL = 1e-9  # weight of the chord's slope (per frame²), for segments with too few frames to fit two slopes
ALIGN_SHARE = 0.9  # a key takes one slope where its two segments then keep this fraction of their bound
STILL = 1e-9  # a segment whose target varies less than this (its channels' units) is still


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
    return fit_keys_many(x, [target], [keys])[0]


def fit_keys_many(x: np.ndarray, targets: list[np.ndarray], keys: list[np.ndarray]) -> list[tuple]:
    """:func:`fit_keys` of several curves on the same samples ``x`` (``targets[i]`` ``(S, C_i)`` with
    ``keys[i]``), their samples laid end to end (:class:`_Laid`): one fit for all of them."""
    out: list = [None] * len(targets)
    laid = _Laid(x, targets, keys)
    for i in laid.few:
        k = laid.keys[i]
        zero = np.zeros((len(k), targets[i].shape[1]))
        out[i] = (np.repeat(targets[i][k[:1]], len(x), axis=0), zero, zero)
    if not laid.many:
        return out
    starts, ends = laid.segments()
    rows, _, residual, m0, m1 = fit_rows(laid.x, laid.target, starts, ends)
    values = np.empty((laid.target.shape[1], laid.target.shape[0]))
    values[rows] = laid.target.T[rows] - residual.T  # a key shared by two segments gets its target from both
    for j, i in enumerate(laid.many):
        c = targets[i].shape[1]
        seg = slice(laid.first_segment[j], laid.first_segment[j + 1])
        a, b = m0[:c, seg], m1[:c, seg]
        out[i] = (values[laid.samples(i), :c], np.concatenate([a[:, :1], b], axis=1).T,
                  np.concatenate([a, b[:, -1:]], axis=1).T)
    return out


class _Laid:
    """Curves on the same samples ``x`` ``(S,)`` laid end to end: curve ``i``'s samples are ``i·S …
    (i + 1)·S − 1`` of ``x`` (``(n·S,)``) and of ``target`` ``(C, n·S)`` (channels first, zero past a curve's
    own); ``keys``: each curve's keys (sample indices); ``many``: the curves of two keys or more, whose
    keys are laid end to end in ``laid_keys`` (``first_key[j]`` the first of ``many[j]``'s), ``few`` the
    others. Each curve's segments and keys are its own: no segment joins two curves."""

    def __init__(self, x: np.ndarray, targets: list[np.ndarray], keys: list[np.ndarray]):
        self.n = len(x)
        self.x = np.tile(np.asarray(x, float), len(targets))
        width = max(t.shape[1] for t in targets)
        self.target = np.zeros((width, self.n * len(targets)))
        for i, t in enumerate(targets):
            self.target[: t.shape[1], self.samples(i)] = t.T
        self.keys = [np.asarray(k, dtype=int) for k in keys]
        self.many = [i for i, k in enumerate(self.keys) if len(k) >= 2]
        self.few = [i for i, k in enumerate(self.keys) if len(k) < 2]
        sizes = np.array([len(self.keys[i]) for i in self.many], dtype=int)
        self.first_key = np.concatenate([[0], np.cumsum(sizes)])
        self.first_segment = np.concatenate([[0], np.cumsum(sizes - 1)])
        self.laid_keys = np.concatenate([self.keys[i] + i * self.n for i in self.many] or [np.zeros(0, int)])

    def samples(self, i: int) -> slice:
        return slice(i * self.n, (i + 1) * self.n)

    def segments(self) -> tuple[np.ndarray, np.ndarray]:
        """The first and last sample of every curve's segments between neighbouring keys."""
        inside = np.ones(max(len(self.laid_keys) - 1, 0), dtype=bool)
        inside[self.first_key[1:-1] - 1] = False  # a curve's last key and the next curve's first
        return self.laid_keys[:-1][inside], self.laid_keys[1:][inside]


def align(x: np.ndarray, target: np.ndarray, keys: np.ndarray, left: np.ndarray, right: np.ndarray,
          maps: np.ndarray, bound: np.ndarray, where: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Give keys one slope (``ALIGNED`` handles) where the curve stays within its bound.

    For each inner key, the common slope that best follows the target over its two segments (their
    other ends kept) — zero (flat handles) for a key next to a still segment (the target constant over
    it: a phase's still part, whose fitted slopes are zero) — replaces its two slopes when both
    segments then keep ``|M_s r_s| ≤ τ_s`` (``maps`` ``(S, 3, C)``, ``bound`` ``(S,)``) within
    :data:`ALIGN_SHARE` (the rest is room for the joint error); every other key first, then the
    others (a segment has one changed end at a time).
    ``where`` ``(S,)``: the samples whose keys may be aligned (default all). Returns the values
    ``(S, C)`` and the left and right slopes ``(K, C)``."""
    return align_many(x, [target], [keys], [left], [right], [maps], [bound], [where])[0]


def align_many(x, targets, keys, lefts, rights, maps, bounds, wheres) -> list[tuple[np.ndarray, ...]]:
    """:func:`align` of several curves on the same samples ``x`` (one list entry per curve, ``where``
    None for all samples), their samples laid end to end (:class:`_Laid`): each step once for all."""
    laid = _Laid(x, targets, keys)
    width = laid.target.shape[0]
    keys_all, tgt, x_all = laid.laid_keys, laid.target, laid.x
    left = np.zeros((len(keys_all), width))
    right = np.zeros((len(keys_all), width))
    mats = np.zeros((3, width, tgt.shape[1]))
    bound = np.ones(tgt.shape[1])
    may = np.zeros(len(keys_all), dtype=bool)  # the keys that may be aligned, of every curve
    for j, i in enumerate(laid.many):
        c, at, cols = targets[i].shape[1], slice(laid.first_key[j], laid.first_key[j + 1]), laid.samples(i)
        left[at, :c], right[at, :c] = lefts[i], rights[i]
        mats[:, :c, cols] = np.transpose(maps[i], (1, 2, 0))
        bound[cols] = bounds[i]
        local = np.arange(laid.first_key[j + 1] - laid.first_key[j])
        inner = (local >= 1) & (local < len(local) - 1)
        may[at] = inner if wheres[i] is None else inner & np.asarray(wheres[i])[laid.keys[i]]
    local = np.arange(len(keys_all)) - np.repeat(laid.first_key[:-1], np.diff(laid.first_key))
    for parity in (1, 2):
        inner = np.nonzero(may & (local % 2 == parity % 2))[0]
        if not len(inner):
            continue
        starts, ends = keys_all[inner - 1], keys_all[inner + 1]  # the key's two segments as one row range
        rows, seg, _ = segment_rows(x_all, starts, ends)
        centre = np.take(x_all[keys_all[inner]], seg)
        before = x_all[rows] <= centre
        lo = np.where(before, np.take(x_all[starts], seg), centre)
        hi = np.where(before, centre, np.take(x_all[ends], seg))
        d = hi - lo
        v = (x_all[rows] - lo) / np.where(d > 0, d, 1.0)
        h00, h10, h01, h11 = hermite_basis(v)
        i_lo = np.where(before, np.take(inner - 1, seg), np.take(inner, seg))
        y0, y1 = np.take(tgt, keys_all[i_lo], axis=1), np.take(tgt, keys_all[i_lo + 1], axis=1)
        outer = np.where(before, np.take(right, i_lo, axis=0).T, np.take(left, i_lo + 1, axis=0).T)  # kept slopes
        weight = np.where(before, h11, h10) * d  # the coefficient of the key's common slope
        fixed = h00 * y0 + h01 * y1 + np.where(before, h10, h11) * d * outer
        r = np.take(tgt, rows, axis=1) - fixed
        first = np.concatenate([[0], np.cumsum(ends - starts + 1)[:-1]])
        m = np.add.reduceat(weight * r, first, axis=1) / np.maximum(np.add.reduceat(weight * weight, first), 1e-300)
        m[:, _next_to_still(tgt, keys_all, inner)] = 0.0  # flat: a still part stays still up to the key
        residual = r - weight * np.take(m, seg, axis=1)
        moved = np.zeros((mats.shape[0], len(rows)))
        for c in range(residual.shape[0]):
            moved += np.take(mats[:, c], rows, axis=1) * residual[c]
        err = np.sqrt(np.sum(moved * moved, axis=0)) / np.take(bound, rows)
        ok = np.maximum.reduceat(err, first) <= ALIGN_SHARE
        left[inner[ok]] = right[inner[ok]] = m[:, ok].T
    out: list = [None] * len(targets)
    for i in laid.few:
        out[i] = (hermite_values(x[laid.keys[i]], targets[i][laid.keys[i]], lefts[i], rights[i], x), lefts[i].copy(),
                  rights[i].copy())
    if laid.many:
        values = _laid_hermite(laid, tgt, left, right)
        for j, i in enumerate(laid.many):
            c, at = targets[i].shape[1], slice(laid.first_key[j], laid.first_key[j + 1])
            out[i] = (values[laid.samples(i), :c], left[at, :c].copy(), right[at, :c].copy())
    return out


def _laid_hermite(laid: _Laid, tgt: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """:func:`.handles.hermite_values` of every laid curve of two keys or more on its own samples
    ``(n·S, C)``."""
    keys_all = laid.laid_keys
    samples = np.arange(len(laid.x))
    owner = samples // laid.n  # the curve of each sample: its first and last segment, key frames
    first, last = np.zeros(len(laid.keys), dtype=int), np.zeros(len(laid.keys), dtype=int)
    first[laid.many], last[laid.many] = laid.first_key[:-1], laid.first_key[1:] - 2
    seg = np.clip(np.searchsorted(keys_all, samples, side="right") - 1, first[owner], last[owner])
    key_x = laid.x[keys_all]
    x = np.clip(laid.x, key_x[first[owner]], key_x[last[owner] + 1])  # held outside the keys
    h = (key_x[seg + 1] - key_x[seg])[:, None]
    u = (x - key_x[seg])[:, None] / h
    key_y = tgt.T[keys_all]
    return hermite(key_y[seg], h * right[seg], key_y[seg + 1], h * left[seg + 1], u)


def _next_to_still(target: np.ndarray, keys: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """Which of the keys ``inner`` (indices into ``keys``) border a still segment: ``target``
    ``(C, S)`` constant within :data:`STILL` from that key to the previous or the next one."""
    lo, hi = keys[:-1], keys[1:]
    rows, seg, _ = segment_rows(np.arange(target.shape[1], dtype=float), lo, hi)
    first = np.concatenate([[0], np.cumsum(hi - lo + 1)[:-1]])
    values = np.take(target, rows, axis=1)
    spread = np.maximum.reduceat(values, first, axis=1) - np.minimum.reduceat(values, first, axis=1)
    still = spread.max(axis=0) <= STILL  # per segment
    return still[inner - 1] | still[inner]
