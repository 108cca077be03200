"""Reach: how far the pelvis must come down, the smooth drop, the held spot giving way, shortening."""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon.fix_feet.contacts import Plant
from procanim_addon.fix_feet.reach import needed_drop, pelvis_drop, reach_limits, reachable_shift, shorten


def test_the_drop_puts_the_ankle_exactly_at_reach():
    rng = np.random.default_rng(0)
    hip = rng.uniform(-1, 1, (50, 3))
    ankle = hip + np.column_stack((rng.uniform(-0.4, 0.4, (50, 2)), rng.uniform(-1.0, -0.6, 50)))
    radius = np.full(50, 0.84)
    drop = needed_drop(hip, ankle, radius)
    reached = np.linalg.norm(ankle - (hip - drop[:, None] * [0, 0, 1]), axis=1)
    far = np.linalg.norm(ankle - hip, axis=1) > radius
    assert np.all(drop[~far] == 0.0)
    assert np.allclose(reached[far & np.isfinite(drop)], 0.84)
    assert needed_drop(np.zeros((1, 3)), np.array([[0.9, 0.0, -0.1]]), np.array([0.84]))[0] == np.inf


def test_the_source_keeps_its_own_straight_legs():
    assert reach_limits(np.array([0.5, 0.99, 1.0]), 0.985).tolist() == [0.985, 0.99, 1.0]


def test_the_drop_is_smooth_covers_the_need_and_respects_the_limit():
    need = np.zeros(60)
    need[20:25] = [0.01, 0.03, 0.05, 0.02, 0.01]
    need[40] = np.inf  # out of reach whatever the drop: the contact is shortened, not the pelvis dropped
    drop = pelvis_drop(need, max_drop=0.04, blend=4)
    assert np.all(drop[:40] >= np.minimum(need[:40], 0.04) - 1e-12) and drop.max() <= 0.04
    assert np.max(np.abs(np.diff(drop))) < 0.02  # eased in and out over the blend
    assert drop[0] == 0.0 and drop[40] == 0.0


def test_the_held_spot_gives_way_to_the_nearest_reachable_one_within_its_limit():
    offsets = np.array([[0.3, 0.0], [-0.3, 0.0], [0.0, 0.1]])
    radii = np.array([0.25, 0.45, 0.5])
    s = reachable_shift(offsets, radii, limit=1.0)
    assert np.all(np.linalg.norm(offsets + s, axis=1) <= radii + 1e-6)
    assert np.linalg.norm(s) == pytest.approx(0.05, abs=1e-6)
    assert np.linalg.norm(reachable_shift(offsets, radii, limit=0.02)) == pytest.approx(0.02)
    assert np.all(reachable_shift(offsets, np.full(3, 1.0), limit=1.0) == 0.0)
    assert np.all(reachable_shift(offsets, np.full(3, np.nan), limit=1.0) == 0.0)


def test_shortening_keeps_the_longest_reachable_stretch_and_remembers_the_detected_one():
    plant = Plant(0, 10, 19, np.ones((10, 2), bool))
    bad = np.zeros(10, bool)
    bad[[0, 1, 6]] = True
    short = shorten(plant, bad)
    assert (short.first, short.last) == (12, 15) and short.detected == (10, 19)
    again = shorten(short, np.array([True, False, False, False]))
    assert (again.first, again.last) == (13, 15) and again.detected == (10, 19)
    assert shorten(plant, np.ones(10, bool)) is None
