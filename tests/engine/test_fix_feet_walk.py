"""Fix Feet on ProcAnim's own source walk with skate added — issue 25's acceptance at engine level.

The walk (motions.walk) plants its feet exactly: the truth of its contacts is where a foot bone
stands still. :func:`add_footskate` makes the faults on top (planted feet drifting 5–15 cm/s, 1 cm
of jitter on each axis, the whole clip floating 3 cm). Every claim is measured here by forward
kinematics of the Clips, with the test's own definitions of the contact points, not with the
figures Fix Feet reports (those are checked against these).
"""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon import motions
from procanim_addon import transforms as tf
from procanim_addon.fix_feet import FixFeetParams, fix_feet
from procanim_addon.fix_feet.footskate import Footskate, add_footskate
from procanim_addon.ground import FlatGround
from procanim_addon.rigs import human_skeleton

SOLE = 0.03  # the demo human's heel, ball and toe tip stand 3 cm above the floor (rest pose)
SEEDS = (0, 1, 2)


# ----------------------------------------------------------------------------- the test's own measures


def pose_of(skeleton, clip):
    loc = np.zeros((clip.frame_count, len(skeleton), 3))
    rot = np.zeros((clip.frame_count, len(skeleton), 4))
    rot[..., 0] = 1.0
    for k, name in enumerate(clip.bone_names):
        loc[:, skeleton.index(name)] = clip.locations[:, k]
        rot[:, skeleton.index(name)] = clip.rotations[:, k]
    return skeleton.fk(loc, rot)


def foot_points(skeleton, pose, side):
    """Heel (under the ankle at the rest sole height, carried by the foot), ball (foot tail) and
    toe tip (toe tail) of one foot, ``(F, 3, 3)``."""
    foot, toe = skeleton.index(f"foot.{side}"), skeleton.index(f"toe.{side}")
    rest = skeleton.matrix_local[foot]
    heel_rest = np.array([rest[0, 3], rest[1, 3], skeleton.tails[toe, 2], 1.0])
    heel_local = np.linalg.inv(rest) @ heel_rest
    heel = np.einsum("fij,j->fi", pose[:, foot], heel_local)[:, :3]
    ball = pose[:, foot, :3, 3] + pose[:, foot, :3, 1] * skeleton.lengths[foot]
    tip = pose[:, toe, :3, 3] + pose[:, toe, :3, 1] * skeleton.lengths[toe]
    return np.stack((heel, ball, tip), axis=1)


def truth_contacts(skeleton, clean):
    """``(F, 2)``: frames where a foot of the clean walk stands still next to a neighbouring frame."""
    pose = pose_of(skeleton, clean)
    out = []
    for side in "LR":
        ankle = pose[:, skeleton.index(f"foot.{side}"), :3, 3]
        still = np.linalg.norm(np.diff(ankle, axis=0), axis=1) < 1e-6
        mask = np.zeros(len(ankle), bool)
        mask[1:] |= still
        mask[:-1] |= still
        out.append(mask)
    return np.stack(out, axis=1)


def skate_cm_s(skeleton, clip, contact):
    """Horizontal speed (cm/s) of heel and ball between consecutive frames a foot is in contact on."""
    pose = pose_of(skeleton, clip)
    speeds = []
    for s, side in enumerate("LR"):
        pts = foot_points(skeleton, pose, side)[:, :2, :2]  # heel, ball; xy
        both = contact[1:, s] & contact[:-1, s]
        v = np.linalg.norm(np.diff(pts, axis=0), axis=-1) * clip.fps * 100  # (F-1, 2)
        speeds.append(v[both].ravel())
    v = np.concatenate(speeds)
    return float(np.mean(v)), float(np.percentile(v, 95))


def float_cm(skeleton, clip, contact, ground_z=0.0):
    """Mean height (cm) of a planted foot's lower contact point (heel or ball) above the floor."""
    pose = pose_of(skeleton, clip)
    gaps = []
    for s, side in enumerate("LR"):
        pts = foot_points(skeleton, pose, side)
        low = pts[:, :2, 2].min(axis=1) - SOLE - ground_z
        gaps.append(np.maximum(low[contact[:, s]], 0.0))
    return float(np.mean(np.concatenate(gaps)) * 100)


def joint_lengths(skeleton, pose):
    """Distance from each bone's head to its parent's head ``(F, B-1)`` (the hips excluded: its
    location is what Fix Feet moves)."""
    idx = [i for i in range(len(skeleton)) if skeleton.parents[i] >= 0 and skeleton.names[i] != "hips"]
    par = skeleton.parents[idx]
    return np.linalg.norm(pose[:, idx, :3, 3] - pose[:, par, :3, 3], axis=-1)


def angular_speeds(skeleton, clip):
    """Per bone, the largest rotation speed of its local channel (rad/s) ``(B,)``."""
    q = tf.quat_normalize(clip.rotations)
    dot = np.abs(np.sum(q[1:] * q[:-1], axis=-1))
    return (2 * np.arccos(np.clip(dot, -1, 1)) * clip.fps).max(axis=0)


def f1(truth, found):
    tp = np.sum(truth & found)
    return 2 * tp / (2 * tp + np.sum(~truth & found) + np.sum(truth & ~found))


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def human():
    return human_skeleton()


@pytest.fixture(scope="module")
def clean(human):
    return motions.walk(*human)


@pytest.fixture(scope="module")
def truth(human, clean):
    return truth_contacts(human[0], clean)


@pytest.fixture(scope="module", params=SEEDS)
def skated(request, human, clean):
    """(skated clip, its fix) for one seed of drifts and jitter."""
    sk, rm = human
    bad = add_footskate(sk, rm, clean, Footskate(seed=request.param))
    return bad, fix_feet(sk, rm, bad, FlatGround(0.0))


# ----------------------------------------------------------------------------- the acceptance


def test_the_skate_added_is_what_the_issue_describes(human, clean, truth, skated):
    bad, _ = skated
    mean, _ = skate_cm_s(human[0], bad, truth)
    assert mean > 5.0  # drift 5–15 cm/s plus jitter
    assert float_cm(human[0], bad, truth) > 2.0
    assert skate_cm_s(human[0], clean, truth)[0] < 1e-6


def test_planted_feet_no_longer_skate(human, truth, skated):
    _, fixed = skated
    mean, p95 = skate_cm_s(human[0], fixed.clip, truth)
    assert mean < 0.5 and p95 < 2.0, (mean, p95)


def test_planted_feet_stand_on_the_ground(human, truth, skated):
    _, fixed = skated
    assert float_cm(human[0], fixed.clip, truth) < 0.5


def test_contacts_match_the_truth(truth, skated):
    _, fixed = skated
    assert f1(truth, fixed.contact.any(axis=-1)) >= 0.9


def test_bone_lengths_are_kept(human, skated):
    bad, fixed = skated
    sk = human[0]
    before, after = joint_lengths(sk, pose_of(sk, bad)), joint_lengths(sk, pose_of(sk, fixed.clip))
    assert np.max(np.abs(after - before) / before) < 1e-4


def test_upper_body_moves_only_with_the_pelvis(human, skated):
    """Hands and head stay within 1 cm of the source where the pelvis did not move; everywhere
    they move exactly as the pelvis does."""
    bad, fixed = skated
    sk = human[0]
    p0, p1 = pose_of(sk, bad), pose_of(sk, fixed.clip)
    parts = [sk.index(n) for n in ("hand.L", "hand.R", "head")]
    move = p1[:, parts][..., :3, 3] - p0[:, parts][..., :3, 3]
    pelvis = p1[:, sk.index("hips"), :3, 3] - p0[:, sk.index("hips"), :3, 3]
    still = np.linalg.norm(pelvis, axis=1) < 1e-9
    assert np.all(np.linalg.norm(move[still], axis=-1) < 0.01)
    assert np.allclose(move, pelvis[:, None, :], atol=1e-9)
    assert np.allclose(pelvis[:, :2], 0.0, atol=1e-12)  # straight down (or up): never sideways


def test_no_joint_turns_faster_than_the_source_ever_does(human, skated):
    bad, fixed = skated
    sk = human[0]
    assert np.max(angular_speeds(sk, fixed.clip)) <= 1.5 * np.max(angular_speeds(sk, bad))


def test_the_figures_agree_with_the_tests_own(human, skated):
    bad, fixed = skated
    m = fixed.clip.metrics
    contact = fixed.contact.any(axis=-1)
    assert m["skate_mean_cm_s"] == pytest.approx(skate_cm_s(human[0], fixed.clip, contact)[0], abs=0.05)
    assert m["skate_before_mean_cm_s"] == pytest.approx(skate_cm_s(human[0], bad, contact)[0], rel=0.1)
    assert m["float_before_cm"] == pytest.approx(float_cm(human[0], bad, contact), abs=0.3)
    assert m["float_cm"] < 0.5 and m["skate_p95_cm_s"] < 2.0 and m["bone_length_error_pct"] < 1e-4
    assert m["contacts"] >= 7 and m["shortened_contacts"] == 0


def test_a_clean_walk_stays_clean(human, clean):
    sk, rm = human
    for ground in (FlatGround(0.0), None):
        fixed = fix_feet(sk, rm, clean, ground)
        moved = np.linalg.norm(pose_of(sk, fixed.clip)[..., :3, 3] - pose_of(sk, clean)[..., :3, 3], axis=-1)
        tails = np.linalg.norm(sk.tails_of(pose_of(sk, fixed.clip)) - sk.tails_of(pose_of(sk, clean)), axis=-1)
        assert max(moved.max(), tails.max()) <= 0.002
        assert fixed.clip.metrics["max_joint_change_cm"] <= 0.2


@pytest.mark.parametrize("fps", [30, 60])
def test_other_frame_rates(human, fps):
    sk, rm = human
    clean = motions.walk(sk, rm, motions.WalkParams(fps=fps))
    truth = truth_contacts(sk, clean)
    fixed = fix_feet(sk, rm, add_footskate(sk, rm, clean, Footskate(seed=3)), FlatGround(0.0))
    mean, p95 = skate_cm_s(sk, fixed.clip, truth)
    assert mean < 0.5 and p95 < 2.0
    assert f1(truth, fixed.contact.any(axis=-1)) >= 0.9
    assert float_cm(sk, fixed.clip, truth) < 0.5


def test_without_a_ground_the_feet_hold_on_the_motions_own_floor(human, clean, truth):
    """No ground: a floating clip keeps its own floor level; the contacts are held still at it."""
    sk, rm = human
    bad = add_footskate(sk, rm, clean, Footskate(seed=4))
    fixed = fix_feet(sk, rm, bad, None)
    mean, p95 = skate_cm_s(sk, fixed.clip, truth)
    assert mean < 0.5 and p95 < 2.0
    assert float_cm(sk, fixed.clip, truth, ground_z=0.03) < 0.5  # held at the clip's own 3 cm
    assert fixed.clip.metrics["ground_offset_cm"] == 0.0


def test_pelvis_drop_stays_within_its_limit(human, clean):
    sk, rm = human
    bad = add_footskate(sk, rm, clean, Footskate(seed=0, float_m=0.0))
    for limit in (0.0, 0.02):
        fixed = fix_feet(sk, rm, bad, FlatGround(0.0), params=FixFeetParams(max_pelvis_drop_m=limit))
        shift = fixed.clip.metrics["ground_offset_cm"] / 100
        assert np.min(fixed.pelvis_offset - shift) >= -limit - 1e-12
        assert fixed.clip.metrics["shortened_contacts"] > 0  # the walk's legs are nearly straight
        assert fixed.clip.metrics["shortened"]
