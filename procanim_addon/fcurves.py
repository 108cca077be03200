"""Between two baked keys: the values Blender's F-curves give there (numpy only, no Blender).

The baker writes keys with ``keyframe_points.add`` + ``foreach_set``; Blender gives them its
default handles — *Auto Clamped*, on curves whose smoothing is *Continuous Acceleration* (the
default for new F-curves) and whose extrapolation is *Constant*. As Blender's manual describes
those settings, that makes each curve a piecewise cubic in the frame (the handles' horizontal
length is a third of the key interval) whose slopes are:

* zero at the first and last key (constant extrapolation eases in and out) and at every key that
  is not between its neighbours (a local extreme or a flat stretch: *clamped*, no overshoot);
* elsewhere, the slopes that make the curve's second derivative continuous across the keys
  (*continuous acceleration*), limited so that a handle never reaches beyond the neighbouring key's
  value nor turns against the curve's direction (*clamped*); the slope furthest beyond its limit
  in each run of free keys is held at the limit and the run is solved again, until none is beyond.

:func:`slopes` solves for those slopes, :func:`evaluate` evaluates the curves. On the keys the
values are the keys; the preview's ghost uses it so that it matches the baked pose between keys
too (the Blender tests measure how closely).
"""

from __future__ import annotations

import numpy as np

from .curves import hermite

MAX_PASSES = 256  # clamp-and-solve passes (each holds one more slope per run of free keys at its limit)


def _solve(h: np.ndarray, dy: np.ndarray, held: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Slopes ``(K, C)``: ``value`` where ``held``, else the C² (continuous second derivative)
    condition ``m[i-1]/h[i-1] + 2 m[i] (1/h[i-1] + 1/h[i]) + m[i+1]/h[i] = 3 (dy[i-1]/h[i-1]² +
    dy[i]/h[i]²)``; a tridiagonal system solved for every channel at once (Thomas' algorithm)."""
    k = held.shape[0]
    a = np.zeros(held.shape)
    b = np.ones(held.shape)
    c = np.zeros(held.shape)
    d = np.where(held, value, 0.0)
    inner = ~held[1:-1]
    hl, hr = h[:-1, None], h[1:, None]
    a[1:-1] = np.where(inner, 1.0 / hl, 0.0)
    b[1:-1] = np.where(inner, 2.0 * (1.0 / hl + 1.0 / hr), 1.0)
    c[1:-1] = np.where(inner, 1.0 / hr, 0.0)
    d[1:-1] = np.where(inner, 3.0 * (dy[:-1] / hl**2 + dy[1:] / hr**2), d[1:-1])
    cp, dp = np.empty(held.shape), np.empty(held.shape)
    cp[0], dp[0] = c[0] / b[0], d[0] / b[0]
    for i in range(1, k):
        den = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / den
        dp[i] = (d[i] - a[i] * dp[i - 1]) / den
    m = np.empty(held.shape)
    m[-1] = dp[-1]
    for i in range(k - 2, -1, -1):
        m[i] = dp[i] - cp[i] * m[i + 1]
    return m


def slopes(key_t: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Slopes (value per frame) ``(K, C)`` of Blender's curves through keys at frames ``key_t``
    ``(K,)`` with ``values`` ``(K, C)`` (see the module docstring)."""
    t = np.asarray(key_t, float)
    y = np.asarray(values, float)
    held = np.ones(y.shape, dtype=bool)
    value = np.zeros(y.shape)
    if len(t) < 3:
        return value
    h = np.diff(t)
    dy = np.diff(y, axis=0)
    between = dy[:-1] * dy[1:] > 0  # strictly between its neighbours: free, else held flat
    held[1:-1] = ~between
    # limits of a free slope: its sign, and handles (a third of an interval long) not beyond a neighbour
    reach = 3.0 * np.minimum(np.abs(dy[:-1]) / h[:-1, None], np.abs(dy[1:]) / h[1:, None])
    sign = np.sign(dy[1:])
    m = _solve(h, dy, held, value)
    for _ in range(MAX_PASSES):
        inner = m[1:-1] * sign
        excess = np.where(between & ~held[1:-1], np.maximum(-inner, inner - reach), 0.0)
        at, chans = np.nonzero(excess > 0.0)
        if not len(at):
            break
        # per run of free keys (held keys split a curve into independent runs): its worst slope
        run = np.cumsum(held, axis=0)[1:-1][at, chans]
        order = np.lexsort((-excess[at, chans], run, chans))
        first = np.ones(len(order), dtype=bool)
        first[1:] = (chans[order][1:] != chans[order][:-1]) | (run[order][1:] != run[order][:-1])
        at, chans = at[order[first]], chans[order[first]]
        held[at + 1, chans] = True
        value[at + 1, chans] = np.clip(inner[at, chans], 0.0, reach[at, chans]) * sign[at, chans]
        redo = np.unique(chans)  # only the curves that changed are solved again
        m[:, redo] = _solve(h, dy[:, redo], held[:, redo], value[:, redo])
    return m


def evaluate(key_t: np.ndarray, values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The curves through ``values`` ``(K, ...)`` at frames ``t`` ``(N,)`` → ``(N, ...)``: the keys'
    values on the keys, the first and last key's before and after (constant extrapolation)."""
    key_t = np.asarray(key_t, float)
    y = np.asarray(values, float)
    shape = y.shape
    flat = y.reshape(len(key_t), -1)
    t = np.clip(np.asarray(t, float), key_t[0], key_t[-1])
    if len(key_t) == 1:
        return np.repeat(y[:1], len(t), axis=0)
    m = slopes(key_t, flat)
    seg = np.clip(np.searchsorted(key_t, t, side="right") - 1, 0, len(key_t) - 2)
    h = (key_t[seg + 1] - key_t[seg])[:, None]
    u = (t - key_t[seg])[:, None] / h
    out = hermite(flat[seg], h * m[seg], flat[seg + 1], h * m[seg + 1], u)
    return out.reshape((len(t),) + shape[1:])
