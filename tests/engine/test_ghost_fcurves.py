"""procanim_addon/fcurves.py: Blender's interpolation of baked keys (auto clamped, continuous
acceleration, constant extrapolation), checked here by its defining properties; the comparison
with Blender's own ``FCurve.evaluate`` on random curves is in tests/blender/test_preview.py."""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon import fcurves


def curve(t, y, step=1e-3):
    """Values, first and second derivatives (central differences) of the curve at ``t``."""
    key_t = np.asarray(t, float)

    def f(x):
        return fcurves.evaluate(key_t, np.asarray(y, float)[:, None], np.asarray(x, float))[:, 0]

    return f


def test_keys_are_kept_and_held_outside():
    t = np.array([1.0, 4.0, 5.0, 9.0, 12.0])
    y = np.array([0.0, 2.0, 1.0, 3.0, -1.0])
    f = curve(t, y)
    assert np.allclose(f(t), y, atol=1e-12)
    assert np.allclose(f([-10.0, 0.0, 13.0, 100.0]), [0.0, 0.0, -1.0, -1.0])


def test_flat_at_the_ends_and_at_every_extreme():
    t = np.arange(8, dtype=float) * 3
    y = np.array([0.0, 1.0, 3.0, 2.0, 2.0, 5.0, 4.0, 6.0])  # extremes at 2 (max), 3-4 (flat), 5 (max), 6 (min)
    m = fcurves.slopes(t, y[:, None])[:, 0]
    assert m[0] == 0.0 and m[-1] == 0.0
    assert np.all(m[[2, 3, 4, 5, 6]] == 0.0)
    assert m[1] > 0.0  # between its neighbours: a slope of its own


def test_continuous_acceleration_where_nothing_is_clamped():
    t = np.array([0.0, 2.0, 5.0, 6.0, 9.0, 13.0, 14.0])
    y = np.sqrt(t + 1.0) * 3  # rising, gently bending: no slope reaches a limit inside
    f = curve(t, y)
    e = 1e-4
    for k in (2, 3, 4):  # inner keys away from the ends (whose slopes are held at 0)
        left = (f([t[k]]) - 2 * f([t[k] - e]) + f([t[k] - 2 * e])) / e**2
        right = (f([t[k] + 2 * e]) - 2 * f([t[k] + e]) + f([t[k]])) / e**2
        assert left == pytest.approx(right, rel=1e-3, abs=1e-3), k


def test_no_overshoot_between_monotone_keys():
    rng = np.random.default_rng(7)
    for _ in range(50):
        t = np.cumsum(rng.integers(1, 6, 12)).astype(float)
        y = np.cumsum(rng.random(12) ** 3)  # rising by very uneven steps
        f = curve(t, y)
        q = np.linspace(t[0], t[-1], 2000)
        v = f(q)
        assert np.all(np.diff(v) >= -1e-12)  # never turns back
        seg = np.clip(np.searchsorted(t, q, side="right") - 1, 0, len(t) - 2)
        assert np.all((v >= y[seg] - 1e-12) & (v <= y[seg + 1] + 1e-12))  # stays between its keys


def test_channels_are_independent():
    t = np.arange(6, dtype=float) * 2
    a, b = np.array([0.0, 1.0, 0.5, 2.0, 3.0, 1.0]), np.array([5.0, 4.0, 4.5, 1.0, 0.0, 0.0])
    both = fcurves.evaluate(t, np.column_stack((a, b)), np.linspace(0, 10, 41))
    assert np.allclose(both[:, 0], curve(t, a)(np.linspace(0, 10, 41)))
    assert np.allclose(both[:, 1], curve(t, b)(np.linspace(0, 10, 41)))
