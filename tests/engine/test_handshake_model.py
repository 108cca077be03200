"""The handshake model (Deglorie et al. 2015, §4): point of contact, shake vector, shake path, grip, step."""

import numpy as np
import pytest

from procanim_addon.handshake.grip import grip_rotation, hand_frame
from procanim_addon.handshake.model import contact_point, dominance_weight, shake_offsets, shake_vector, step_toward

E_I = np.array([0.2, 0.0, 1.2])  # initiator's right elbow
E_P = np.array([-0.2, -1.0, 1.1])  # partner's right elbow


def test_equal_dominance_puts_the_contact_halfway_between_the_elbows():
    c = contact_point(E_I, E_P, dominance_weight(0.5, 0.5), 1.0)
    assert np.allclose(c[:2], 0.5 * (E_I + E_P)[:2])
    assert c[2] == 1.0


@pytest.mark.parametrize("dom_i, dom_p", [(0.9, 0.2), (0.6, 0.5), (1.0, 0.0)])
def test_the_grip_moves_toward_the_less_dominant_character(dom_i, dom_p):
    mid = contact_point(E_I, E_P, dominance_weight(0.5, 0.5), 1.0)
    c = contact_point(E_I, E_P, dominance_weight(dom_i, dom_p), 1.0)  # initiator dominant
    assert np.linalg.norm(c - E_P) < np.linalg.norm(mid - E_P)
    c2 = contact_point(E_I, E_P, dominance_weight(dom_p, dom_i), 1.0)  # partner dominant
    assert np.linalg.norm(c2 - E_I) < np.linalg.norm(mid - E_I)


def test_contact_stays_in_line_with_both_elbows_from_the_top():
    c = contact_point(E_I, E_P, dominance_weight(0.8, 0.3), 1.0)
    a, b = (E_P - E_I)[:2], (c - E_I)[:2]
    assert abs(a[0] * b[1] - a[1] * b[0]) < 1e-12  # collinear in the top view


def test_shake_vector_is_35_percent_of_the_elbow_distance_and_perpendicular_to_the_elbow_line():
    s = shake_vector(E_I, E_P)
    line = E_P - E_I
    assert np.linalg.norm(s) == pytest.approx(0.35 * np.linalg.norm(line))
    assert s @ line == pytest.approx(0.0, abs=1e-12)  # SE = 90°
    assert s[2] > 0.9 * np.linalg.norm(s)  # nearly vertical: the elbows are nearly level
    # in the vertical plane through the elbow line
    assert np.cross(line, [0, 0, 1.0]) @ s == pytest.approx(0.0, abs=1e-12)


def test_level_elbows_give_a_vertical_shake():
    s = shake_vector([0, 0, 1.0], [0, -0.6, 1.0], 0.35)
    assert np.allclose(s, [0, 0, 0.21])


def test_primary_shake_spans_the_shake_vector_and_secondary_shakes_decay():
    o = shake_offsets(20, secondary=2, secondary_frames=10, decay=0.5)
    assert len(o) == 40
    primary, s1, s2 = o[:20], o[20:30], o[30:]
    assert primary.max() - primary.min() == pytest.approx(1.0, abs=0.02)  # peak to peak = |ŝ|
    assert np.ptp(s1) == pytest.approx(0.5 * np.ptp(primary), rel=0.05)
    assert np.ptp(s2) == pytest.approx(0.25 * np.ptp(primary), rel=0.05)
    assert o[-1] == pytest.approx(0.0, abs=1e-12) and primary[-1] == pytest.approx(0.0, abs=1e-12)  # back at C


def test_grip_rotation_makes_palms_face_each_other_with_thumbs_up():
    rest = np.eye(4)
    rest[:3, :3] = [[1, 0, 0], [0, 0, 1], [0, -1, 0]]  # a right hand hanging: bone +Y points down (−Z)
    frame = hand_frame(rest, 0.1, forearm_dir=[0, 0, -1], medial=[1, 0, 0])
    d = np.array([0.0, -1.0, 0.0])
    r1, r2 = grip_rotation(frame, d), grip_rotation(frame, -d)
    n1, n2 = r1 @ frame.palm_normal, r2 @ frame.palm_normal
    assert np.allclose(n1, -n2)  # palms face each other
    assert np.allclose(r1 @ frame.thumb, [0, 0, 1]) and np.allclose(r2 @ frame.thumb, [0, 0, 1])  # focal line vertical
    assert np.allclose(r1 @ frame.fingers, d) and np.allclose(r2 @ frame.fingers, -d)
    # each grip point sits half a palm from its hand's anchor, toward the other hand
    g1 = r1 @ frame.grip_local
    a1 = r1 @ frame.anchor_local
    assert np.linalg.norm(g1 - a1) == pytest.approx(0.015)
    assert (g1 - a1) @ n1 > 0


def test_step_toward_is_zero_within_reach_and_exact_beyond():
    shoulder = np.array([0.0, 0.0, 1.4])
    near = np.array([0.0, -0.4, 1.1])
    assert step_toward(shoulder, near, 0.6, np.array([0, -1.0, 0])) == 0.0
    far = np.array([0.0, -1.0, 1.1])
    s = step_toward(shoulder, far, 0.6, np.array([0, -1.0, 0]))
    assert np.linalg.norm(shoulder + s * np.array([0, -1.0, 0]) - far) == pytest.approx(0.6)
    assert step_toward(shoulder, np.array([0, -0.2, 0.1]), 0.6, np.array([0, -1.0, 0])) is None  # too low
