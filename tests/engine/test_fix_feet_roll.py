"""The held foot rolls as the source's does: heel strike → flat → toe-off, not frozen.

ProcAnim's source walk keeps its feet flat; here each stance gets a roll: the foot lands toes up
(15°) and turns down about its heel over three frames, then lifts its heel (to 30°) about the ball
over the last four, and turns smoothly between in the swing. Measured by the test's own forward
kinematics (``test_fix_feet_walk``'s points).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import motions
from procanim_addon import transforms as tf
from procanim_addon.clip import Clip
from procanim_addon.curves import smoothstep
from procanim_addon.fix_feet import fix_feet
from procanim_addon.fix_feet.feet import read_feet
from procanim_addon.fix_feet.footskate import Footskate, add_footskate
from procanim_addon.fix_feet.legs import solve_leg
from procanim_addon.ground import FlatGround
from procanim_addon.rigs import human_skeleton

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_fix_feet_walk import foot_points, pose_of, skate_cm_s, truth_contacts  # noqa: E402

STRIKE_DEG, OFF_DEG = 15.0, 30.0
STRIKE_FRAMES, OFF_FRAMES = 3, 4
# Jitter of the skating rolling walk: a 15° heel strike lifts the ball 3.4 cm, within 1 cm of
# jitter of the 3 cm contact height, so a strike frame may then be taken for flat (docs/fix_feet.md).
JITTER_M = 0.004


def _runs(mask):
    m = np.concatenate(([0], mask.astype(int), [0]))
    d = np.diff(m)
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1) - 1))


def rolled_walk(skeleton, rigmap, clean):
    """The clean walk with a heel-strike and a toe-off roll on every stance; returns the Clip and
    per side the phase of every frame ``(F, 2)``: 1 heel strike, 2 flat, 3 toe-off, 0 swing."""
    pose = pose_of(skeleton, clean)
    truth = truth_contacts(skeleton, clean)
    loc = clean.locations.copy()
    rot = clean.rotations.copy()
    feet = read_feet(skeleton, rigmap)
    left = np.array([1.0, 0.0, 0.0])  # the human's left: a turn about it by +a lowers the toes
    phases = np.zeros(truth.shape, int)
    targets = []
    for s, side in enumerate("LR"):
        foot = skeleton.index(f"foot.{side}")
        ankle0 = pose[:, foot, :3, 3]
        points = foot_points(skeleton, pose, side)
        pitch = np.full(len(ankle0), np.nan)  # toes up, rad
        shift = np.full((len(ankle0), 3), np.nan)
        for a, b in _runs(truth[:, s]):
            pitch[a:b + 1], shift[a:b + 1] = 0.0, 0.0
            phases[a:b + 1, s] = 2
            if a > 0:  # a stance cut by the clip's start has no strike
                for k in range(STRIKE_FRAMES):
                    pitch[a + k] = np.radians(STRIKE_DEG) * (1 - smoothstep(k / STRIKE_FRAMES))
                    phases[a + k, s] = 1
            if b < len(ankle0) - 1:
                for k in range(OFF_FRAMES):
                    f = b - OFF_FRAMES + 1 + k
                    pitch[f] = -np.radians(OFF_DEG) * smoothstep((k + 1) / OFF_FRAMES)
                    phases[f, s] = 3
            for f in range(a, b + 1):
                turn = tf.quat_to_mat3(tf.quat_from_axis_angle(left, -pitch[f]))
                pivot = points[f, 1] if pitch[f] < 0 else points[f, 0]  # heel up: about the ball
                shift[f] = pivot + turn @ (ankle0[f] - pivot) - ankle0[f]
        known = np.flatnonzero(np.isfinite(pitch))
        pitch = np.interp(np.arange(len(pitch)), known, pitch[known])
        # the swing eases from one stance's last pitch and shift to the next one's first
        for j in range(3):
            shift[:, j] = np.interp(np.arange(len(pitch)), known, shift[known, j])
        turn = tf.quat_to_mat3(tf.quat_from_axis_angle(np.broadcast_to(left, (len(pitch), 3)), -pitch))
        targets.append((tf.mat3_to_quat(turn @ pose[:, foot, :3, :3]), ankle0 + shift))
    for leg, target in zip(feet.legs, targets):
        solve_leg(skeleton, leg, (loc, rot), pose, target, np.full(len(pose), 0.9999), feet.forward)
    clip = Clip(list(skeleton.names), clean.frames.copy(), clean.fps, loc, rot, key_location=clean.key_location)
    return clip.with_continuity(), phases


def foot_pitch(skeleton, clip, side):
    """The foot's pitch (deg, toes up) from its heel → ball direction ``(F,)``."""
    pts = foot_points(skeleton, pose_of(skeleton, clip), side)
    d = pts[:, 1] - pts[:, 0]
    return np.degrees(np.arctan2(d[:, 2], np.linalg.norm(d[:, :2], axis=1)))


@pytest.fixture(scope="module")
def human():
    return human_skeleton()


@pytest.fixture(scope="module")
def rolled(human):
    sk, rm = human
    return rolled_walk(sk, rm, motions.walk(sk, rm))


def test_the_rolled_walk_rolls(human, rolled):
    clip, phases = rolled
    pitch = foot_pitch(human[0], clip, "L")
    assert pitch[phases[:, 0] == 1].max() > 10 and pitch[phases[:, 0] == 3].min() < -25
    assert np.allclose(pitch[phases[:, 0] == 2], 0.0, atol=1e-6)


def test_a_clean_rolling_walk_stays_clean(human, rolled):
    """Heel-strike and toe-off frames are contacts of one point; holding it changes nothing."""
    sk, rm = human
    clip, phases = rolled
    fixed = fix_feet(sk, rm, clip, FlatGround(0.0))
    moved = np.linalg.norm(pose_of(sk, fixed.clip)[..., :3, 3] - pose_of(sk, clip)[..., :3, 3], axis=-1)
    assert moved.max() <= 0.002
    heel_only = fixed.contact[..., 0] & ~fixed.contact[..., 1]
    ball_only = fixed.contact[..., 1] & ~fixed.contact[..., 0]
    assert np.all(phases[heel_only] == 1) and np.all(phases[ball_only] == 3)
    assert heel_only.sum() >= 6 and ball_only.sum() >= 6


@pytest.mark.parametrize("seed", [0, 1])
def test_a_skating_rolling_walk_is_held_and_still_rolls(human, rolled, seed):
    sk, rm = human
    clip, phases = rolled
    bad = add_footskate(sk, rm, clip, Footskate(seed=seed, jitter_m=JITTER_M))
    fixed = fix_feet(sk, rm, bad, FlatGround(0.0))
    pose = pose_of(sk, fixed.clip)
    for s, side in enumerate("LR"):
        pitch_src, pitch_fix = foot_pitch(sk, bad, side), foot_pitch(sk, fixed.clip, side)
        rolling = np.isin(phases[:, s], (1, 3))
        assert np.max(np.abs(pitch_fix[rolling] - pitch_src[rolling])) < 5.0  # the roll is the source's
        assert np.ptp(pitch_fix[rolling]) > 25.0  # not frozen
        pts = foot_points(sk, pose, side)
        for phase, point in ((1, 0), (3, 1)):  # heel held while it strikes, ball while the heel lifts
            held = fixed.contact[:, s, point] & (phases[:, s] == phase)
            steps = held[1:] & held[:-1]
            speed = np.linalg.norm(np.diff(pts[:, point], axis=0), axis=1)[steps] * bad.fps
            assert steps.sum() >= 2 and speed.max() < 0.02
    truth = phases > 0
    mean, p95 = skate_cm_s(sk, fixed.clip, truth & (phases == 2))
    assert mean < 0.5 and p95 < 2.0
