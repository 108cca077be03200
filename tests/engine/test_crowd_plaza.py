"""Where a walker of a dense plaza stops and sets off again, its walk keeps to its plan.

The crowd's plan holds a walker still, moves it a little, holds it again and sets it off another
way; the walks (``crowd/retime.py``) cut its trace at the stops into path walks from standing to
standing. Measured on the clips by forward kinematics (never the plan): a walker passing the one
that stopped, as far from it as the plan has it, finds it there. Before, a leg shorter than
0.5 m between two stops was stood through (the walker stayed where it first stopped while its
plan had moved on) and a leg after a stop left straight the way the walker faced for 0.3 m,
however its plan left.
"""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon.crowd.retime import WalkerWalk, legs_of, walk_legs
from procanim_addon.ground import FlatGround
from procanim_addon.walk import PathWalkParams

from .test_crowd import RADIUS, RM, SK, closest_pelvises

DT = 0.1  # the plan's time step (s)
SPEED = 1.1  # the walkers' speed alone (m/s)
T = np.arange(0.0, 18.0, DT)


def trace(times, x, y) -> tuple[np.ndarray, np.ndarray]:
    """A planned trace through the points (x, y) (m) at ``times`` (s), standing before and after:
    its place every Δt and its progress along it."""
    xy = np.column_stack([np.interp(T, times, x), np.interp(T, times, y)])
    return xy, np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))))


def walked(*traces):
    ww = WalkerWalk(SK, RM, FlatGround(0.0), PathWalkParams(), np.eye(4), 1.0, lambda q: np.zeros(len(q)), 1.2,
                    SPEED)
    return [walk_legs(ww, legs_of(xy, s, DT, SPEED), 1)[0] for xy, s in traces]


@pytest.mark.parametrize("name, stopping, passing", [
    # stops at (4, 0), steps on 0.4 m, stops again, sets off north; the other passes 0.7 m west
    # of its second stop while it stands there
    ("short step between two stops", trace([0.4, 4.4, 6.4, 6.9, 9.4, 13.4], [0, 4, 4, 4.4, 4.4, 4.4],
                                           [0, 0, 0, 0, 0, 4]),
     trace([2.0, 14.0], [3.7, 3.7], [-6, 6])),
    # stops at (4, 0) facing east, sets off north; the other comes south 0.65 m east of the stop
    # as it sets off
    ("setting off to its left", trace([0.4, 4.4, 7.4, 11.4], [0, 4, 4, 4], [0, 0, 0, 4]),
     trace([1.8, 13.8], [4.65, 4.65], [6, -6])),
])
def test_a_walker_that_stops_and_sets_off_again_is_where_its_plan_has_it(name, stopping, passing):
    planned = float(np.linalg.norm(stopping[0] - passing[0], axis=1).min())
    assert planned >= 2 * RADIUS + 0.05  # the plan keeps them apart
    clips = walked(stopping, passing)
    assert closest_pelvises(clips) >= 2 * RADIUS - 0.05, name
    assert len(clips[0].metrics["crowd_stops"]) == (2 if name.startswith("short") else 1)  # it stood each time
