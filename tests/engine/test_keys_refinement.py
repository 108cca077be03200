"""The refinement rounds of the key reduction (``procanim_addon.keys.reduce``): which bounds a round
tightens where the exact check finds a point beyond the tolerance, and when a skate round reaches
above the legs."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from procanim_addon.keys import reduce as rd

TOL = 0.001


def _state(own_mm: list[float]) -> SimpleNamespace:
    """Groups that all move point 0 on 21 samples, keyed on samples 0, 10 and 20; group ``g``'s own
    error on sample 5 is ``own_mm[g]`` mm (along x), nothing elsewhere."""
    n, groups = 21, len(own_mm)
    own = np.zeros((groups, n, 3))
    own[:, 5, 0] = np.asarray(own_mm) / 1000.0
    return SimpleNamespace(own=own, affects=np.ones((groups, 1), dtype=bool),
                           keys=[np.array([0, 10, 20])] * groups, allowed=np.ones(n, dtype=bool),
                           bound=np.full((groups, n), TOL))


def _tightened(own_mm: list[float], err_mm: float) -> tuple[set[int], np.ndarray]:
    state = _state(own_mm)
    err = np.zeros((21, 1))
    err[5, 0] = err_mm / 1000.0
    again = rd._tighten_errors(state, err, np.array([5]), TOL)
    return again, state.bound


def test_a_small_excess_tightens_the_group_with_the_largest_own_error_alone():
    again, bound = _tightened([0.3, 0.6, 0.5], err_mm=1.05)
    assert again == {1}
    factor = min(rd.TIGHTEN, 1 / 1.05)
    np.testing.assert_allclose(bound[1, 0:11], TOL * factor)  # over the segment holding the frame
    np.testing.assert_allclose(bound[1, 11:], TOL)
    np.testing.assert_allclose(bound[[0, 2]], TOL)


def test_a_large_excess_tightens_as_many_groups_as_it_needs_largest_first():
    """1.25 mm against 1 mm: halving the 0.6 mm group's bound is counted to remove a quarter of its
    error (half of the half: the refit rarely removes all it could), 0.15 of the 0.25 mm excess; the
    0.5 mm group's 0.125 covers the rest."""
    again, bound = _tightened([0.3, 0.6, 0.5], err_mm=1.25)
    assert again == {1, 2}
    np.testing.assert_allclose(bound[0], TOL)


def test_a_group_whose_segment_holds_no_free_frame_is_passed_over():
    state = _state([0.3, 0.6])
    state.keys = [np.array([0, 15, 20]), np.array([0, 10, 20])]
    state.allowed[1:10] = False  # no key can go between 0 and 10: group 1's segment is full
    err = np.zeros((21, 1))
    err[5, 0] = 0.00105
    assert rd._tighten_errors(state, err, np.array([5]), TOL) == {0}


@pytest.mark.parametrize("skates, expected", [
    ([10.0, 9.5, 4.0, 3.0], [False, True, True, True]),  # stalled once: every later round escalates
    ([10.0, 5.0, 2.0], [False, False, False]),  # the leg's own groups keep removing the skate
    ([10.0, 5.0, 4.8, 1.0], [False, False, True, True]),
])
def test_skate_rounds_reach_above_the_legs_from_the_round_after_one_that_stalled(skates, expected):
    escalation = rd._Escalation()
    assert [escalation(s) for s in skates] == expected
