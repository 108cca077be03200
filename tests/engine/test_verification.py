"""What the verification of every bake concludes (no bpy): a rig that shows the motion, one that shows
it approximately, and one whose keyed bones are overridden (nothing moves) — whose figures are then
withheld, never shown as a walk."""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.clip import Clip
from procanim_addon.controls.intended import IntendedPose, intended_channels
from procanim_addon.controls.residual import verification_samples, verify_skeleton
from procanim_addon.registry import figure_keys
from procanim_addon.rigs import human_skeleton
from procanim_addon.verification import EFFECT_RATIO, TOLERANCE_CM, conclude, finish, motion_cm, travel_m


def _walk_like(sk, frames=48):
    """The root travels 3 m along −Y while every bone sways a little."""
    n = len(sk)
    loc, rot = np.zeros((frames, n, 3)), tf.quat_identity((frames, n))
    t = np.linspace(0.0, 1.0, frames)
    loc[:, 0, 1] = -3.0 * t
    for k in range(1, n):
        rot[:, k] = tf.quat_from_axis_angle(np.broadcast_to([1.0, 0.0, 0.0], (frames, 3)), 0.2 * np.sin(6 * t + k))
    clip = Clip(list(sk.names), np.arange(1, frames + 1), 24.0, loc, rot,
                key_location=[True] + [False] * (n - 1), key_rotation=[True] * n, generator="path_walk")
    clip.metrics.update({"skate_mean_cm_s": 0.1, "step_count": 9})
    return clip


def _verify(sk, clip, evaluated_of):
    samples = verification_samples(clip.frame_count)
    intended = IntendedPose(sk, *intended_channels(sk, clip))
    want = sk.fk(*intended_channels(sk, clip))[samples]
    bones = list(range(len(sk)))
    world = np.broadcast_to(np.eye(4), (len(samples), 4, 4))
    return verify_skeleton(sk, intended, bones, samples, evaluated_of(want), world)


def test_a_rig_that_shows_the_motion_verifies_and_keeps_its_figures():
    sk, _ = human_skeleton()
    clip = _walk_like(sk)
    m = _verify(sk, clip, lambda want: want + 0.0)
    assert m["control_residual_cm_max"] < 1e-9 and m["control_verify_frames"] == 10
    assert m["bake_takes_effect"] and not m["control_bake_approximate"]
    assert m["measured_travel_m"] == pytest.approx(3.0, abs=0.05) == m["intended_travel_m"]
    kept = finish({**clip.metrics, **m}, figure_keys("path_walk"))
    assert kept["skate_mean_cm_s"] == 0.1 and "intended_skate_mean_cm_s" not in kept


def test_a_rig_a_few_centimetres_off_is_approximate_but_takes_effect():
    sk, _ = human_skeleton()
    clip = _walk_like(sk)

    def off(want):
        got = want.copy()
        got[:, 5, :3, 3] += (0.0, 0.0, 0.02)  # one bone 2 cm off
        return got

    m = _verify(sk, clip, off)
    assert m["control_residual_cm_max"] == pytest.approx(2.0, abs=1e-6) and m["control_residual_bone"] == sk.names[5]
    assert m["control_bake_approximate"] and m["bake_takes_effect"]


def test_one_leg_held_by_a_constraint_is_approximate_the_whole_body_held_does_not_take_effect():
    sk, _ = human_skeleton()
    clip = _walk_like(sk)
    leg = [sk.index(n) for n in ("shin.L", "foot.L", "toe.L")]

    def leg_held(want):
        got = want.copy()
        got[:, leg] = got[:1, leg]  # the left shin copies a bone that does not move
        return got

    m = _verify(sk, clip, leg_held)
    assert m["control_bake_approximate"] and m["bake_takes_effect"]


def test_a_rig_whose_keyed_bones_are_overridden_does_not_take_effect_and_its_figures_are_withheld():
    """The constrained-bones case: Blender's deform bones stay at rest whatever the keys say."""
    sk, _ = human_skeleton()
    clip = _walk_like(sk)
    rest = np.broadcast_to(sk.matrix_local, (10, len(sk), 4, 4))
    m = _verify(sk, clip, lambda want: np.array(rest))
    assert not m["bake_takes_effect"] and m["control_bake_approximate"]
    assert m["measured_travel_m"] < 1e-9 and m["intended_travel_m"] == pytest.approx(3.0, abs=0.05)
    stored = finish({**clip.metrics, **m}, figure_keys("path_walk"))
    assert "skate_mean_cm_s" not in stored and "step_count" not in stored  # never a walk that did not happen
    assert stored["intended_skate_mean_cm_s"] == 0.1 and stored["measured_travel_m"] < 1e-9


def _moves(points, offsets):
    """``(S, N, 3)``: three points 30 cm apart moved over 4 frames by ``offsets`` ``(S, N, 3)`` m."""
    base = np.array([[0.0, 0.0, 0.0], [0.3, 0.0, 0.0], [0.0, 0.3, 0.0]])[:points]
    return base[None] + offsets


@pytest.mark.parametrize(
    ("case", "approximate", "effect"),
    [
        ("follows", False, True),
        ("two_cm_off", True, True),  # Rigify's IK stretch left uncorrected
        ("one_stays", True, True),  # one limb does not follow: approximate
        ("two_stay", True, False),  # two points of three do not follow
        ("carried_along", True, False),  # the root travels, the limbs stay still relative to it
        ("none_meant_to_move", True, True),  # nothing was meant to move: approximate, not "no effect"
    ],
)
def test_the_bounds(case, approximate, effect):
    t = np.linspace(0.0, 1.0, 4)[:, None, None]
    travel = t * np.array([0.0, -2.0, 0.0])
    swing = np.zeros((4, 3, 3))
    swing[:, :, 2] = 0.2 * np.sin(np.pi * t[:, :, 0] + np.arange(3))  # each point bobs differently
    intended = _moves(3, travel + swing)
    evaluated = {
        "follows": intended + 0.001,
        "two_cm_off": intended + np.array([0.0, 0.0, 0.02]) * (np.arange(3) == 0)[None, :, None],
        "one_stays": np.where((np.arange(3) == 0)[None, :, None], intended[:1], intended),
        "two_stay": np.where((np.arange(3) < 2)[None, :, None], intended[:1], intended),
        "carried_along": _moves(3, travel),
        "none_meant_to_move": intended,
    }[case]
    if case == "none_meant_to_move":
        intended = _moves(3, np.zeros((4, 3, 3)))
        evaluated = intended + 0.03
    residual = np.max(np.linalg.norm(evaluated - intended, axis=-1), axis=0) * 100.0
    assert TOLERANCE_CM == 0.5 and EFFECT_RATIO == 0.25
    got = conclude(evaluated, intended, residual)
    assert got == {"control_bake_approximate": approximate, "bake_takes_effect": effect}


def test_motion_and_travel():
    pts = np.zeros((3, 2, 3))
    pts[:, :, 1] = np.array([0.0, -1.0, -2.0])[:, None]
    pts[1, 0, 2] = 0.5
    np.testing.assert_allclose(motion_cm(pts), [200.0, 200.0])
    assert travel_m(pts) == pytest.approx(2.0)
    np.testing.assert_allclose(motion_cm(pts[:1]), [0.0, 0.0])
    assert travel_m(pts[:1]) == 0.0
