"""The dense bake as Blender plays it: the reference every reduced curve is measured against.

A dense bake keys every curve on each of the generator's frames (every frame, or every N frames) and
lets Blender give the keys its default handles: *Auto Clamped* on curves with *Continuous
Acceleration* smoothing, constant extrapolation. The motion an animator sees is that curve on every
frame, so the reduction checks every integer frame of the range (and the generator's own frames):
on a per-frame bake these are the keys themselves; between keys set N frames apart they are
Blender's interpolation, as :mod:`procanim_addon.fcurves` models it (within 2e-6 of a curve's
range, docs/preview.md).
"""

from __future__ import annotations

import numpy as np

from ..fcurves import evaluate


def sample_frames(frames: np.ndarray) -> np.ndarray:
    """Every integer frame from the first to the last of ``frames``, and ``frames`` themselves."""
    frames = np.asarray(frames, float)
    if len(frames) == 0:
        return frames
    whole = np.arange(np.ceil(frames[0]), np.floor(frames[-1]) + 1.0)
    return np.union1d(whole, frames)


def dense_reference(frames: np.ndarray, values: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """Values ``(S, C)`` at ``samples`` of the dense bake's curves: keys ``values`` ``(F, C)`` at
    ``frames`` ``(F,)`` with Blender's default handles. On the keys the values are the keys' own."""
    x = np.asarray(frames, float)
    y = np.asarray(values, float)
    s = np.asarray(samples, float)
    if len(x) < 2:
        return np.repeat(y[:1], len(s), axis=0)
    ref = evaluate(x, y, s)
    on_key = np.isin(s, x)
    ref[on_key] = y[np.searchsorted(x, s[on_key])]
    return ref
