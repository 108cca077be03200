"""Small curve helpers shared by the generators: easing, cubic Hermite segments and splines,
Gaussian smoothing and a smooth upper envelope. Pure numpy; every function is vectorised."""

from __future__ import annotations

import numpy as np


def smoothstep(u):
    """3u² − 2u³ of ``u`` clipped to [0, 1]: 0 → 1 with zero slope at both ends."""
    u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
    return u * u * (3.0 - 2.0 * u)


def hermite_basis(u):
    """The cubic Hermite basis ``(h00, h10, h01, h11)`` at ``u`` (0 … 1 along the segment)."""
    u2 = u * u
    u3 = u2 * u
    return 2 * u3 - 3 * u2 + 1, u3 - 2 * u2 + u, -2 * u3 + 3 * u2, u3 - u2


def hermite(p0, m0, p1, m1, u):
    """Cubic Hermite segment from ``p0`` to ``p1`` at ``u`` ∈ [0, 1].

    ``m0`` and ``m1`` are the end tangents per unit of ``u`` (a tangent per second times the
    segment's duration in seconds). Arrays broadcast against each other.
    """
    h00, h10, h01, h11 = hermite_basis(u)
    return h00 * p0 + h10 * m0 + h01 * p1 + h11 * m1


def catmull_rom(key_t: np.ndarray, key_v: np.ndarray, t: np.ndarray) -> np.ndarray:
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
    return hermite(key_v[seg], h * m[seg], key_v[seg + 1], h * m[seg + 1], s)


def gaussian_smooth(values: np.ndarray, sigma_samples: float) -> np.ndarray:
    """Smooth ``values`` (N, C) along axis 0 with a Gaussian of ``sigma_samples`` samples; the end
    values are kept (the signal is extended by odd reflection about its end points)."""
    if sigma_samples < 0.5 or len(values) < 3:
        return values.copy()
    r = int(min(np.ceil(3 * sigma_samples), len(values) - 1))
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma_samples) ** 2)
    k /= k.sum()
    head = 2 * values[0] - values[r:0:-1]
    tail = 2 * values[-1] - values[-2 : -r - 2 : -1]
    ext = np.concatenate((head, values, tail), axis=0)
    return np.stack([np.convolve(ext[:, c], k, mode="valid") for c in range(values.shape[1])], axis=-1)


def envelope(x: np.ndarray, width: int) -> np.ndarray:
    """A smooth curve ≥ ``x`` along its last axis: the running maximum over ±``width`` samples,
    blurred by a raised cosine of the same width, then the maximum with ``x`` again. ``x`` may be
    (N,) or (…, N) (rows done at once)."""
    x = np.asarray(x, float)
    if width < 1:
        return x.copy()
    pw = [(0, 0)] * (x.ndim - 1) + [(width, width)]
    pad = np.pad(x, pw, mode="edge")
    win = np.lib.stride_tricks.sliding_window_view(pad, 2 * width + 1, axis=-1).max(axis=-1)
    k = np.hanning(2 * width + 3)[1:-1]
    k /= k.sum()
    padded = np.pad(win, pw, mode="edge")
    if x.ndim == 1:
        smooth = np.convolve(padded, k, mode="valid")
    else:  # the same sums, row by row (the kernel is symmetric)
        smooth = np.lib.stride_tricks.sliding_window_view(padded, len(k), axis=-1) @ k
    return np.maximum(smooth, x)
