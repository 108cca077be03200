"""The key reduction fits every curve of a level at once (``fit.fit_keys_many``, ``fit.align_many``:
the curves' samples laid end to end, channels padded): each curve comes out as it does fitted alone,
bit for bit, whatever curves it is fitted with — no segment, slope or value crosses from one curve
to the next."""

from __future__ import annotations

import numpy as np

from procanim_addon.keys.fit import align, align_many, fit_keys, fit_keys_many, fit_rows
from procanim_addon.keys.handles import hermite_values

N = 61


def _curves():
    """Curves of 1 to 4 channels on the same 61 samples: smooth ones, one with a kink, one with a
    single key, one with a still part, one whose keys stop short of both ends; keys at random
    samples (the first and last among them)."""
    rng = np.random.default_rng(21)
    x = np.arange(N, dtype=float) * 0.5 + 3.0  # frames that are not the sample indices
    out = []
    for channels, size in ((3, 9), (4, 5), (1, 2), (2, 1), (3, 14), (4, 7), (2, 0)):
        phase = rng.uniform(0, 6, channels)
        target = np.sin(0.11 * x[:, None] * (1 + np.arange(channels)) + phase)
        target[N // 2 :, 0] += 0.3 * (x[N // 2 :] - x[N // 2])  # a kink
        if channels == 2:
            target[: N // 3] = target[N // 3]  # a still part
        keys = np.unique(np.r_[0, rng.choice(np.arange(1, N - 1), size, replace=False), N - 1])
        if size == 1:
            keys = np.array([N // 2])  # a single key
        if size == 0:
            keys = np.array([5, 20, 33, 40])  # keys short of both ends: the curve held beyond them
        maps = rng.normal(0, 1, (N, 3, channels))
        bound = rng.uniform(0.005, 0.05, N)
        where = rng.random(N) > 0.2
        out.append((target, keys, maps, bound, where))
    return x, out


def test_curves_fitted_together_are_fitted_as_each_alone():
    x, curves = _curves()
    together = fit_keys_many(x, [c[0] for c in curves], [c[1] for c in curves])
    for (target, keys, *_), got in zip(curves, together):
        alone = fit_keys(x, target, keys)
        for a, b in zip(got[1:], alone[1:]):  # the slopes
            assert a.shape == b.shape and np.array_equal(a, b)
        if len(keys) >= 2:  # the segments' end slopes by least squares, the curve on its own
            _, _, _, m0, m1 = fit_rows(x, np.ascontiguousarray(target.T), keys[:-1], keys[1:])
            assert np.array_equal(got[1], np.concatenate([m0[:, :1], m1], axis=1).T)
            assert np.array_equal(got[2], np.concatenate([m0, m1[:, -1:]], axis=1).T)
        covered = slice(keys[0], keys[-1] + 1)
        assert np.array_equal(got[0][covered], alone[0][covered])


def test_curves_aligned_together_are_aligned_as_each_alone_and_play_their_slopes():
    x, curves = _curves()
    slopes = [fit_keys(x, target, keys)[1:] for target, keys, *_ in curves]
    together = align_many(x, [c[0] for c in curves], [c[1] for c in curves], [s[0] for s in slopes],
                          [s[1] for s in slopes], [c[2] for c in curves], [c[3] for c in curves],
                          [c[4] for c in curves])
    aligned = 0
    for (target, keys, maps, bound, where), (left, right), got in zip(curves, slopes, together):
        alone = align(x, target, keys, left, right, maps, bound, where)
        for a, b in zip(got, alone):
            assert a.shape == b.shape and np.array_equal(a, b)
        values, new_left, new_right = got
        # the values are the Hermite curve of the keys and the new slopes (handles.hermite_values)
        assert np.array_equal(values, hermite_values(x[keys], target[keys], new_left, new_right, x))
        aligned += int(np.sum(np.all(new_left == new_right, axis=1)[1:-1]))
    assert aligned > 0  # some keys took one slope
