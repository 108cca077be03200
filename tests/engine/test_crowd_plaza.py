"""A dense plaza where walkers stop and set off again keeps personal space on the clips.

Twenty-four walkers cross a 4 m circle, each to a point about opposite (the plaza of
``bench/crowd_engine.py``, smaller, so denser): walkers held up stand and walk on. Measured on the
clips by forward kinematics (never the plan): pelvises at least twice the personal radius less
5 cm apart on every frame. Before the plan and the walks shared one definition of standing
(``crowd/pace.py``), the plan let a held-up walker creep slower than any walk goes, the walk stood
or hurried instead, and two pelvises came 33 cm apart here.
"""

from __future__ import annotations

import numpy as np

from procanim_addon.crowd import CrowdParams, Walker, generate_crowd
from procanim_addon.ground import FlatGround
from procanim_addon.walk import PathWalkParams

from .test_crowd import RADIUS, RM, SK, closest_pelvises

PLAZA_M = 4.0  # the circle's radius (m)
SPREAD = np.radians(35.0)  # each end opposite its start, ± this
APART_M = 0.7  # no two walkers start or end closer than this (m)


def plaza(n: int, seed: int) -> list[Walker]:
    """``n`` walkers from slots round the circle (jittered) to the slots ranking as their wanted
    ends (opposite ± :data:`SPREAD`) rank among all wanted ends."""
    rng = np.random.default_rng(seed)
    gap = 2 * np.pi / n
    jitter = max(0.0, (gap * PLAZA_M - APART_M) / 2) / PLAZA_M
    starts = np.arange(n) * gap + rng.uniform(-jitter, jitter, n)
    wanted = starts + np.pi + rng.uniform(-SPREAD, SPREAD, n)
    slots = np.arange(n) * gap + rng.uniform(-jitter, jitter, n) + np.pi
    ends = np.empty(n)
    ends[np.argsort(wanted, kind="stable")] = np.sort(slots)
    return [Walker(f"W{i:03d}", SK, RM, PLAZA_M * np.array([[np.cos(a), np.sin(a), 0.0], [np.cos(b), np.sin(b), 0.0]]),
                   FlatGround(0.0), PathWalkParams()) for i, (a, b) in enumerate(zip(starts, ends))]


def test_a_dense_plaza_keeps_personal_space_where_walkers_stop_and_set_off():
    walkers = plaza(24, seed=0)
    result = generate_crowd(walkers, CrowdParams(personal_radius_m=RADIUS, variation=0.5, seed=1))
    assert any(w.stops for w in result.walkers)  # some stood and walked on
    assert closest_pelvises(result.clips) >= 2 * RADIUS - 0.05


def test_the_slowest_walk_is_what_the_steps_can_do():
    """Slower than :data:`SLOWEST` of its speed, a walk would need steps shorter than the shortest
    or slower than the slowest (the retimed steps' limits)."""
    from procanim_addon.crowd.pace import SHORTEST_STEP, SLOW_MAX, SLOWEST

    for share in (SLOWEST * 0.95, SLOWEST * 1.05):
        step = max(np.sqrt(share), SHORTEST_STEP)  # step length ∝ √speed, at least the shortest
        assert (step / share <= SLOW_MAX + 1e-9) == (share >= SLOWEST)
