"""Contact detection (after Ikemoto et al. 2006) and the user's markers, piece by piece and in a fix."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import motions
from procanim_addon.fix_feet import fix_feet, overrides_from_markers
from procanim_addon.fix_feet.contacts import (
    LOWEST_RATIO,
    adapted_thresholds,
    classify,
    enforce_durations,
    point_speeds,
)
from procanim_addon.ground import FlatGround
from procanim_addon.rigs import human_skeleton

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_fix_feet_walk import foot_points, pose_of, truth_contacts  # noqa: E402


def test_a_point_enters_below_both_thresholds_and_leaves_only_past_the_hysteresis():
    gap = np.array([0.05, 0.02, 0.02, 0.035, 0.02, 0.039, 0.02, 0.02])
    slow = np.zeros(len(gap))
    got = classify(gap, slow, height=0.03, speed_limit=0.5, hysteresis=1.25)  # leaves above 0.0375
    assert got.tolist() == [False, True, True, True, True, False, True, True]
    fast = np.array([0.0, 0.0, 0.55, 0.7, 0.0, 0.0, 0.0, 0.0])
    got = classify(np.zeros(8), fast, height=0.03, speed_limit=0.5, hysteresis=1.25)  # leaves above 0.625
    assert got.tolist() == [True, True, True, False, True, True, True, True]
    assert not classify(np.array([0.02, 0.02]), np.array([0.6, 0.55]), 0.03, 0.5, 1.25).any()  # never entered


def test_short_lifts_are_closed_then_short_contacts_dropped():
    mask = np.array([1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1], bool)
    got = enforce_durations(mask, min_contact=2, min_lift=2)
    assert got.tolist() == [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1]


def test_speed_is_the_slower_side_so_strike_and_toe_off_frames_are_still():
    x = np.array([0.0, 0.0, 0.0, 0.1, 0.3, 0.4, 0.4, 0.4])
    points = np.stack((x, np.zeros(8), np.zeros(8)), axis=1)
    speed = point_speeds(points, np.arange(8) / 10.0)
    assert speed.tolist() == pytest.approx([0, 0, 0, 1.0, 1.0, 0, 0, 0])  # frame 2 leaves, frame 5 lands
    wide = point_speeds(points, np.arange(8) / 10.0, window_s=0.2)  # two frames each side
    assert wide[2] == 0 and wide[5] == 0 and wide[3] == pytest.approx(0.5)  # 0.1 m back over 0.2 s


def test_thresholds_fit_the_motions_own_noise():
    rng = np.random.default_rng(0)
    contact = np.ones((200, 1), bool)
    contact[90:110] = False
    clean = adapted_thresholds(np.zeros((200, 1)), np.zeros((200, 1)), contact, (0.03, 0.6), 4.0)
    assert clean == pytest.approx((LOWEST_RATIO * 0.03, LOWEST_RATIO * 0.6))
    noisy = adapted_thresholds(rng.uniform(-0.01, 0.01, (200, 1)), rng.uniform(0.2, 0.4, (200, 1)), contact,
                               (0.03, 0.6), 4.0)
    assert noisy == pytest.approx((0.03, 0.6))  # capped at the given ones
    small = adapted_thresholds(rng.normal(0, 0.001, (200, 1)), np.full((200, 1), 0.05), contact, (0.03, 0.6), 4.0)
    assert 0.003 < small[0] < 0.006 and small[1] == pytest.approx(0.2)


def test_markers_are_read_by_name_and_decide_between_the_first_and_the_last():
    ov = overrides_from_markers([(" l Contact ", 10), ("L lift", 20), ("L contact", 30), ("phase 2", 5),
                                 ("R lift", 4), ("R contact", 4.0), ("Left contact", 1)])
    assert ov.markers["L"] == [(10.0, "contact"), (20.0, "lift"), (30.0, "contact")]
    assert ov.markers["R"] == [(4.0, "contact")]  # two on one frame: the later wins
    frames = np.arange(0, 41, dtype=float)
    decided, state = ov.decide("L", frames)
    assert not decided[:10].any() and decided[10:].all()  # a last "contact" holds to the end
    assert state[10:20].all() and not state[20:30].any() and state[30:].all()
    decided, state = overrides_from_markers([("R contact", 12), ("R lift", 15)]).decide("R", frames)
    assert np.flatnonzero(decided).tolist() == [12, 13, 14, 15]
    assert np.flatnonzero(state).tolist() == [12, 13, 14]
    assert not overrides_from_markers([("Foot", 3)])


@pytest.fixture(scope="module")
def walk():
    sk, rm = human_skeleton()
    clean = motions.walk(sk, rm)
    return sk, rm, clean, truth_contacts(sk, clean)


def frame(clip, index):
    """The frame number of a row of the clip (markers are on frame numbers)."""
    return float(clip.frames[index])


def test_a_lift_marker_ends_a_detected_contact(walk):
    sk, rm, clean, truth = walk
    assert truth[27:42, 0].all() and not truth[26, 0] and not truth[42, 0]  # rows of one left contact
    marks = [("L contact", frame(clean, 27)), ("L lift", frame(clean, 34))]
    fixed = fix_feet(sk, rm, clean, FlatGround(0.0), overrides_from_markers(marks))
    left = fixed.contact[:, 0].any(axis=-1)
    assert left[27:34].all() and not left[34]
    assert left[35:42].all()  # after the last marker, detection again
    plain = fix_feet(sk, rm, clean, FlatGround(0.0))
    assert plain.contact[27:42, 0].any(axis=-1).all()


def test_a_contact_marker_holds_a_foot_detection_missed(walk):
    """The landing frame before a contact (the foot 6 mm up, slowing) is held when a marker says so."""
    sk, rm, clean, truth = walk
    assert not truth[26, 0] and truth[27, 0]
    marks = [("L contact", frame(clean, 26)), ("L lift", frame(clean, 42))]
    fixed = fix_feet(sk, rm, clean, FlatGround(0.0), overrides_from_markers(marks))
    assert fixed.contact[26:42, 0].any(axis=-1).all() and not fixed.contact[42, 0].any()
    heel = foot_points(sk, pose_of(sk, fixed.clip), "L")[:, 0]
    assert np.linalg.norm(heel[26] - heel[30]) < 1e-6  # held where the foot then stands
    src_heel = foot_points(sk, pose_of(sk, clean), "L")[:, 0]
    assert np.linalg.norm(src_heel[26] - src_heel[30]) > 0.003


def test_a_contact_no_leg_can_hold_is_shortened_and_reported(walk):
    """A marker that holds the left foot through its whole swing: it cannot be reached; the
    contact is cut back to what can be held, reported, and the pelvis never drops further."""
    sk, rm, clean, truth = walk
    marks = [("L contact", frame(clean, 5)), ("L lift", frame(clean, 40))]
    fixed = fix_feet(sk, rm, clean, FlatGround(0.0), overrides_from_markers(marks))
    m = fixed.clip.metrics
    assert m["shortened_contacts"] >= 1 and any(s.startswith("L 1–40 → ") for s in m["shortened"]), m["shortened"]
    assert m["pelvis_drop_max_cm"] <= 6.0 + 1e-9
    assert np.isfinite(fixed.clip.locations).all() and np.isfinite(fixed.clip.rotations).all()
