"""The fuzzy joint controller of Deglorie et al. 2015 (§6.2): memberships, the five rules, defuzzification."""

import numpy as np
import pytest

from procanim_addon.ik.fuzzy import (
    ARM_JOINT,
    INPUT_SETS,
    OUTPUT_SETS,
    RULES,
    FuzzyJoint,
    angular_speed,
    angular_speed_scalar,
    memberships,
    ticks_per_frame,
)

J = FuzzyJoint(dead_zone_deg=1.0, outer_deg=60.0, slow_deg_s=80.0, fast_deg_s=300.0)


def test_five_sets_in_and_out_and_the_rules_map_left_errors_to_right_speeds():
    assert INPUT_SETS == ("FarL", "CloseL", "Zero", "CloseR", "FarR")
    assert OUTPUT_SETS == ("FastR", "SlowR", "Zero", "SlowL", "FastL")
    assert RULES == {"FarL": "FastR", "CloseL": "SlowR", "Zero": "Zero", "CloseR": "SlowL", "FarR": "FastL"}


def test_memberships_at_the_breakpoints():
    mu = dict(zip(INPUT_SETS, memberships(0.0, J)))
    assert mu["Zero"] == 1.0 and mu["CloseL"] == mu["CloseR"] == mu["FarL"] == mu["FarR"] == 0.0
    mu = dict(zip(INPUT_SETS, memberships(1.0, J)))  # the dead zone's edge: fully CloseL
    assert mu["CloseL"] == 1.0 and mu["Zero"] == 0.0 and mu["FarL"] == 0.0
    mu = dict(zip(INPUT_SETS, memberships(-75.0, J)))  # beyond the outer limit: fully FarR
    assert mu["FarR"] == 1.0 and sum(mu.values()) == 1.0


def test_memberships_partition_the_input_range():
    e = np.linspace(-90, 90, 721)
    mu = memberships(e, J)
    assert np.all(mu >= 0) and np.all(mu <= 1)
    assert np.allclose(mu.sum(axis=-1), 1.0)


def test_speed_opposes_the_error_and_grows_with_it():
    e = np.linspace(-90, 90, 721)
    v = angular_speed(e, J)
    assert np.all(v[e > 0] < 0) and np.all(v[e < 0] > 0) and angular_speed(0.0, J) == 0.0
    assert np.all(np.diff(v) <= 1e-12)  # monotone: more error, more speed
    assert np.isclose(angular_speed(1.0, J), -80.0)  # CloseL alone → SlowR
    assert np.isclose(angular_speed(-60.0, J), 300.0)  # FarR alone → FastL
    assert np.all(np.abs(v) <= 300.0 + 1e-9)


def test_centroid_of_singletons_is_the_weighted_average():
    e = 30.5  # halfway between the dead zone (1°) and the outer limit (60°): ½ CloseL, ½ FarL
    mu = dict(zip(INPUT_SETS, memberships(e, J)))
    assert mu["CloseL"] == pytest.approx(0.5) and mu["FarL"] == pytest.approx(0.5)
    assert angular_speed(e, J) == pytest.approx(-(80.0 + 300.0) / 2)


def test_ticks_keep_a_slow_step_inside_the_dead_zone():
    n = ticks_per_frame([ARM_JOINT], 1 / 24)
    assert ARM_JOINT.slow_deg_s / 24 / n <= ARM_JOINT.dead_zone_deg


def test_invalid_controller_numbers_are_refused():
    with pytest.raises(ValueError):
        FuzzyJoint(dead_zone_deg=70, outer_deg=60).validate()
    with pytest.raises(ValueError):
        FuzzyJoint(slow_deg_s=400, fast_deg_s=300).validate()


def test_the_scalar_inner_loop_infers_the_same_speed():
    for e in np.linspace(-80, 80, 321):
        assert angular_speed_scalar(float(e), J) == pytest.approx(float(angular_speed(e, J)), abs=1e-9)
