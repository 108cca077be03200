"""An F-curve's value at a frame, computed as Blender computes it (numpy only, no Blender).

Blender stores a key (``BezTriple``) as three float32 points — left handle, key, right handle —
plus an interpolation mode for the segment that starts at the key. Between two keys ``P0`` (a key),
``P1`` (its right handle), ``P2`` (the next key's left handle) and ``P3`` (the next key) make a cubic
Bézier curve in the (frame, value) plane; to find the value at frame ``x`` Blender

1. limits each handle's horizontal reach to the key interval (``BKE_fcurve_correct_bezpart``),
2. solves ``x(t) = x`` for the curve parameter ``t`` — the cubic ``c₀ + c₁t + c₂t² + c₃t³`` whose
   coefficients it forms in float32 and solves in double by Cardano's formula, taking the first root
   in [−1e-10, 1.000001] (``findzero``/``solve_cubic`` in ``fcurve.cc``),
3. evaluates ``y(t)`` in float32 (``berekeny``).

A frame within 1e-4 of a key gives the key's value (the binary search's threshold); before the
first key and after the last the curve holds their values (constant extrapolation, the default);
``LINEAR`` and ``CONSTANT`` segments are a straight line and a step. This module repeats that
arithmetic — the same float32 and float64 operations in the same order — over many frames at once,
so that the engine can measure exactly what Blender will play (tests/blender/test_key_reduction_eval.py
compares it with ``FCurve.evaluate`` and with the evaluated pose on every frame).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32 = np.float32
# Blender's enum values (what ``foreach_set`` takes for the key's enum properties)
INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}
HANDLE = {"FREE": 0, "AUTO": 1, "VECTOR": 2, "ALIGNED": 3, "AUTO_CLAMPED": 4}
KEY_TYPE = {"KEYFRAME": 0, "EXTREME": 1, "BREAKDOWN": 2, "JITTER": 3, "MOVING_HOLD": 4, "GENERATED": 5}

BINARY_SEARCH_THRESHOLD = F32(1e-4)  # a frame this close to a key gives the key's value
_ON_KEY = F32(1e-8)
_SMALL = F32(-1.0e-10)  # solve_cubic's bounds of an accepted root
_ONE = F32(1.000001)
_FLT_EPSILON = F32(np.finfo(np.float32).eps)


@dataclass
class Keys:
    """The keys of one F-curve as Blender stores them (converted to float32 here).

    frames, values: ``(K,)`` key coordinates (frame, value), frames increasing;
    handle_left, handle_right: ``(K, 2)`` handle coordinates (frame, value);
    interpolation: ``(K,)`` codes of :data:`INTERPOLATION` (the segment after each key).
    """

    frames: np.ndarray
    values: np.ndarray
    handle_left: np.ndarray
    handle_right: np.ndarray
    interpolation: np.ndarray

    def __post_init__(self):
        self.frames = np.asarray(self.frames, F32)
        self.values = np.asarray(self.values, F32)
        self.handle_left = np.asarray(self.handle_left, F32).reshape(-1, 2)
        self.handle_right = np.asarray(self.handle_right, F32).reshape(-1, 2)
        self.interpolation = np.asarray(self.interpolation, np.int32)


def _sqrt3d(d: np.ndarray) -> np.ndarray:
    """Signed cube root as Blender's ``sqrt3d``: ``±exp(log(|d|) / 3)``, 0 at 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.exp(np.log(np.abs(d)) / 3.0)
    return np.where(d == 0.0, 0.0, np.where(d < 0.0, -r, r))


def _accept(r: np.ndarray) -> np.ndarray:
    return (r >= _SMALL) & (r <= _ONE)


def _first_root(candidates: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The first accepted root of float32 ``candidates`` (in Blender's order) and whether one was."""
    root = candidates[-1].copy()
    found = np.zeros(root.shape, dtype=bool)
    for r in reversed(candidates):
        ok = _accept(r)
        root = np.where(ok, r, root)
        found |= ok
    return root, found


def solve_cubic(c0, c1, c2, c3) -> tuple[np.ndarray, np.ndarray]:
    """First root ``t`` (float32) of ``c0 + c1 t + c2 t² + c3 t³`` in [−1e-10, 1.000001] found by
    Blender's ``solve_cubic`` (float64 coefficients), and whether there is one. Each of its cases
    (one, two or three real roots of a cubic; a quadratic, a line, a constant) is worked out on the
    coefficients it applies to only."""
    c0, c1, c2, c3 = np.broadcast_arrays(*(np.asarray(c, np.float64) for c in (c0, c1, c2, c3)))
    root = np.zeros(c0.shape, F32)
    found = np.zeros(c0.shape, dtype=bool)
    with np.errstate(all="ignore"):
        cubic = c3 != 0.0
        if cubic.any():
            k0, k1, k2, k3 = c0[cubic], c1[cubic], c2[cubic], c3[cubic]
            a = k2 / k3 / 3
            b = k1 / k3
            p = b / 3 - a * a
            q = (2 * a * a * a - a * b + k0 / k3) / 2
            d = q * q + p * p * p
            r, f = np.zeros(len(d), F32), np.zeros(len(d), dtype=bool)
            one = d > 0.0
            if one.any():
                t = np.sqrt(d[one])
                r[one] = (_sqrt3d(-q[one] + t) + _sqrt3d(-q[one] - t) - a[one]).astype(F32)
                f[one] = _accept(r[one])
            two = d == 0.0
            if two.any():
                t0 = _sqrt3d(-q[two])
                r[two], f[two] = _first_root([(2 * t0 - a[two]).astype(F32), (-t0 - a[two]).astype(F32)])
            three = d < 0.0
            if three.any():
                a3, p3 = a[three], p[three]
                phi = np.arccos(-q[three] / np.sqrt(-(p3 * p3 * p3)))
                tt = np.sqrt(-p3)
                pp = np.cos(phi / 3)
                qq = np.sqrt(3 - 3 * pp * pp)
                r[three], f[three] = _first_root([(2 * tt * pp - a3).astype(F32), (-tt * (pp + qq) - a3).astype(F32),
                                                  (-tt * (pp - qq) - a3).astype(F32)])
            root[cubic], found[cubic] = r, f  # (d NaN: no root, as Blender's comparisons all fail)
        quadratic = ~cubic & (c2 != 0.0)
        if quadratic.any():
            k0, k1, k2 = c0[quadratic], c1[quadratic], c2[quadratic]
            disc = k1 * k1 - 4 * k2 * k0
            r_two, f_two = _first_root([((-k1 - np.sqrt(disc)) / (2 * k2)).astype(F32),
                                        ((-k1 + np.sqrt(disc)) / (2 * k2)).astype(F32)])
            r_one = (-k1 / (2 * k2)).astype(F32)
            root[quadratic] = np.where(disc > 0, r_two, r_one)
            found[quadratic] = np.where(disc > 0, f_two, (disc == 0) & _accept(r_one))
        line = ~cubic & (c2 == 0.0) & (c1 != 0.0)
        if line.any():
            r_lin = (-c0[line] / c1[line]).astype(F32)
            root[line], found[line] = r_lin, _accept(r_lin)
        constant = ~cubic & (c2 == 0.0) & (c1 == 0.0)
        found[constant] = c0[constant] == 0.0
    return root, found


def correct_bezpart(v1, v2, v3, v4):
    """Handles ``v2`` (of the key ``v1``) and ``v3`` (of the key ``v4``) shortened so that neither
    reaches past the other key in time (``BKE_fcurve_correct_bezpart``); arrays ``(..., 2)`` float32."""
    v2, v3 = v2.copy(), v3.copy()
    h1 = v1 - v2
    h2 = v4 - v3
    span = v4[..., 0] - v1[..., 0]
    len1, len2 = np.abs(h1[..., 0]), np.abs(h2[..., 0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for v, vk, hk, lk in ((v2, v1, h1, len1), (v3, v4, h2, len2)):
            over = (lk > span) & ((len1 + len2) != 0)
            fac = span / lk
            v[..., 0] = np.where(over, vk[..., 0] - fac * hk[..., 0], v[..., 0])
            v[..., 1] = np.where(over, vk[..., 1] - fac * hk[..., 1], v[..., 1])
    return v2, v3


def bezier_segment(v1, v2, v3, v4, x) -> np.ndarray:
    """Values (float32) at frames ``x`` of the Bézier segments ``v1``–``v4`` ``(..., 2)`` as
    Blender's BEZIER interpolation gives them (0 where its root search fails, as Blender's does)."""
    v1, v2, v3, v4 = (np.asarray(v, F32) for v in (v1, v2, v3, v4))
    x = np.asarray(x, F32)
    flat = (np.abs(v1[..., 1] - v4[..., 1]) < _FLT_EPSILON) & (np.abs(v2[..., 1] - v3[..., 1]) < _FLT_EPSILON)
    flat &= np.abs(v3[..., 1] - v4[..., 1]) < _FLT_EPSILON
    v2, v3 = correct_bezpart(v1, v2, v3, v4)
    q0, q1, q2, q3 = v1[..., 0], v2[..., 0], v3[..., 0], v4[..., 0]
    three, two = F32(3.0), F32(2.0)
    c0 = q0 - x
    c1 = three * (q1 - q0)
    c2 = three * (q0 - two * q1 + q2)
    c3 = q3 - q0 + three * (q1 - q2)
    t, found = solve_cubic(c0, c1, c2, c3)
    f1, f2, f3, f4 = v1[..., 1], v2[..., 1], v3[..., 1], v4[..., 1]
    b0 = f1
    b1 = three * (f2 - f1)
    b2 = three * (f1 - two * f2 + f3)
    b3 = f4 - f1 + three * (f2 - f3)
    y = b0 + t * b1 + t * t * b2 + t * t * t * b3
    y = np.where(found, y, F32(0.0))
    return np.where(flat, f1, y).astype(F32)


def evaluate(keys: Keys, t) -> np.ndarray:
    """Values (float32) of the curve ``keys`` at frames ``t`` ``(N,)``: Blender's
    ``evaluate_fcurve`` with constant extrapolation and no modifiers."""
    t = np.asarray(t, F32)
    value, seg = _locate(keys, t)
    todo = np.nonzero(np.isnan(value))[0]
    if len(todo):
        value[todo] = _segments(keys, seg[todo], t[todo])
    return value


def _locate(keys: Keys, t: np.ndarray):
    """For frames ``t`` (float32): the value where it needs no segment (outside the keys, or within
    the binary search's threshold of a key), else NaN; and the index of the segment's first key."""
    x, y = keys.frames, keys.values
    value = np.full(t.shape, np.nan, F32)
    seg = np.zeros(t.shape, dtype=np.int64)
    if len(x) == 0:
        value[:] = 0.0
        return value, seg
    before, after = t <= x[0], t >= x[-1]
    value[before] = y[0]
    value[after & ~before] = y[-1]
    inner = np.nonzero(~(before | after))[0]
    if len(inner):
        ti = t[inner]
        i = np.searchsorted(x, ti, side="left")  # first key at or after the frame
        near_next = np.abs(x[i] - ti) <= BINARY_SEARCH_THRESHOLD
        near_prev = np.abs(ti - x[i - 1]) <= BINARY_SEARCH_THRESHOLD
        on = near_next | near_prev | (np.abs(x[i] - ti) < _ON_KEY)
        value[inner[on]] = np.where(near_prev[on] & ~near_next[on], y[i[on] - 1], y[i[on]])
        seg[inner[~on]] = i[~on] - 1
    return value, seg


def frames_of_changes(x: np.ndarray, i: np.ndarray, same: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Booleans over the increasing frames ``t`` (float32): where a curve whose keys changed may evaluate
    otherwise than before — the frames of each of its segments whose two keys are not two neighbouring
    old keys with the same coordinates, handles and interpolation (a segment's values depend on those
    alone), ends included, and beyond a first or last key that changed. ``x``: the new keys' frames
    ``(K ≥ 2,)``; ``i``: the old key each was matched with (the first at or after its frame);
    ``same``: whether it is that key unchanged."""
    changed = ~(same[:-1] & same[1:] & (i[1:] == i[:-1] + 1))
    marks = np.zeros(len(t) + 1, dtype=int)
    np.add.at(marks, np.searchsorted(t, x[:-1][changed], side="left"), 1)
    np.add.at(marks, np.searchsorted(t, x[1:][changed], side="right"), -1)
    out = np.cumsum(marks[:-1]) > 0
    out |= (t <= x[0]) & ~same[0]
    out |= (t >= x[-1]) & ~same[-1]
    return out


def evaluate_many(curves: list[Keys], t) -> np.ndarray:
    """Values (float32) ``(N, C)`` of several curves at frames ``t`` ``(N,)``: :func:`evaluate` of each,
    the curves' keys laid end to end so that every step but the search of each curve's keys runs
    once for all of them."""
    t = np.asarray(t, F32)
    out = np.zeros((len(t), len(curves)), F32)  # a curve without keys evaluates to 0
    live = [c for c, keys in enumerate(curves) if len(keys.frames)]
    if not live or not len(t):
        return out
    every = Keys(*(np.concatenate([getattr(curves[c], f) for c in live])
                   for f in ("frames", "values", "handle_left", "handle_right", "interpolation")))
    sizes = np.array([len(curves[c].frames) for c in live])
    found = np.stack([np.searchsorted(curves[c].frames, t, side="left") for c in live], axis=1)
    out[:, live] = evaluate_laid(every, sizes, found, t)
    return out


def evaluate_laid(every: Keys, sizes: np.ndarray, found: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Values (float32) ``(N, L)`` at frames ``t`` (float32 ``(N,)``) of ``L`` curves whose keys are laid
    end to end in ``every`` (``sizes`` keys each, one at least); ``found`` ``(N, L)``: per frame and curve
    the first of its keys at or after the frame (``np.searchsorted`` of its frames, ``side="left"``)."""
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    last = first + sizes - 1
    x, y = every.frames, every.values
    at = found + first
    before, after = t[:, None] <= x[first], t[:, None] >= x[last]
    value = np.where(before, y[first], y[last])  # outside the keys: the first or the last key's value
    rows, cols = np.nonzero(~(before | after))
    if len(rows):
        i, ti = at[rows, cols], t[rows]  # the first key at or after the frame
        near_next = np.abs(x[i] - ti) <= BINARY_SEARCH_THRESHOLD
        near_prev = np.abs(ti - x[i - 1]) <= BINARY_SEARCH_THRESHOLD
        on = near_next | near_prev | (np.abs(x[i] - ti) < _ON_KEY)
        value[rows[on], cols[on]] = np.where(near_prev[on] & ~near_next[on], y[i[on] - 1], y[i[on]])
        off = ~on
        value[rows[off], cols[off]] = _segments(every, i[off] - 1, ti[off])
    return value


def _segments(keys: Keys, a: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Values (float32) at frames ``t`` of the segments of ``keys`` that start at keys ``a``, by their
    interpolation."""
    x, y = keys.frames, keys.values
    x0, x1, y0, y1 = x[a], x[a + 1], y[a], y[a + 1]
    kind = keys.interpolation[a]
    duration = x1 - x0
    bez = (kind == INTERPOLATION["BEZIER"]) & (duration != 0)
    ends = np.stack([x0, y0], axis=-1), np.stack([x1, y1], axis=-1)
    right, left = keys.handle_right[a], keys.handle_left[a + 1]
    if bez.all():  # (a planned curve's segments: no subsets to gather)
        return bezier_segment(ends[0], right, left, ends[1], t)
    value = y0.copy()  # CONSTANT, and segments of no duration
    lin = (kind == INTERPOLATION["LINEAR"]) & (duration != 0)
    value[lin] = ((y1 - y0) * (t - x0) / np.where(lin, duration, F32(1)) + y0)[lin]
    if np.any(bez):
        value[bez] = bezier_segment(ends[0][bez], right[bez], left[bez], ends[1][bez], t[bez])
    return value
