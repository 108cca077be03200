"""What a bake onto a control rig computes around the conversion (no bpy): the pose a Clip intends
for the deform skeleton, a Clip read back from evaluated matrices, the sampled verification, and
the plan by which Blender's IK stretch is probed. The rig is ``test_controls.mini_rig``."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.clip import Clip
from procanim_addon.controls import ControlKeys, convert, deform_skeleton
from procanim_addon.controls.deform import deform_clip, rest_offsets, rig_pose
from procanim_addon.controls.intended import IntendedPose, intended_channels, intended_for, intended_pose
from procanim_addon.controls.residual import (
    IK_STRETCH_NOTE,
    TOLERANCE_CM,
    deform_checks,
    verification_samples,
    verify,
)
from procanim_addon.controls.stretch import ProbePlan, chain_lengths, probe_distances
from procanim_addon.controls.structure import find_limbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_controls import mini_rig, moving_pose  # noqa: E402

# ----------------------------------------------------------------------------- the intended pose


def _clip(sk, frames=5, seed=2):
    """A clip of some of ``sk``'s bones (and one it does not have), some channels not keyed."""
    rng = np.random.default_rng(seed)
    names = ["ORG-hips", "ORG-thigh.L", "ORG-tail", "not-in-the-rig"]
    loc = rng.normal(0.0, 0.05, (frames, len(names), 3))
    rot = tf.quat_normalize(rng.normal(size=(frames, len(names), 4)))
    clip = Clip(names, np.arange(frames), 24.0, loc, rot,
                key_location=[True, False, True, True], key_rotation=[True, True, False, True])
    return clip


def test_intended_channels_are_the_keyed_channels_and_rest_elsewhere():
    sk = deform_skeleton(mini_rig())
    clip = _clip(sk)
    loc, rot = intended_channels(sk, clip)
    assert loc.shape == (5, len(sk), 3) and rot.shape == (5, len(sk), 4)
    hips, thigh, tail = (sk.index(n) for n in ("ORG-hips", "ORG-thigh.L", "ORG-tail"))
    np.testing.assert_array_equal(loc[:, hips], clip.locations[:, 0])
    np.testing.assert_array_equal(rot[:, hips], clip.rotations[:, 0])
    np.testing.assert_array_equal(loc[:, thigh], 0.0)  # location not keyed
    np.testing.assert_array_equal(rot[:, thigh], clip.rotations[:, 1])
    np.testing.assert_array_equal(loc[:, tail], clip.locations[:, 2])
    np.testing.assert_array_equal(rot[:, tail], np.broadcast_to([1.0, 0.0, 0.0, 0.0], (5, 4)))  # not keyed
    others = [i for i in range(len(sk)) if i not in (hips, thigh, tail)]
    np.testing.assert_array_equal(loc[:, others], 0.0)
    np.testing.assert_array_equal(rot[:, others], np.broadcast_to([1.0, 0.0, 0.0, 0.0], (5, len(others), 4)))


def test_the_intended_pose_is_the_skeletons_fk_and_the_rig_bones_follow_it():
    rig = mini_rig()
    sk = deform_skeleton(rig)
    clip = _clip(sk)
    want = sk.fk(*intended_channels(sk, clip))
    np.testing.assert_array_equal(intended_pose(sk, clip), want)
    lazy = intended_for(rig, sk, clip)
    assert rest_offsets(rig, sk), "the mini rig has a bone turned end for end"
    rig_want = rig_pose(rig, sk, want)
    for k in range(len(sk)):
        np.testing.assert_allclose(lazy.full(k), rig_want[:, k], atol=1e-12)


# ----------------------------------------------------------------------------- a Clip read back


def test_a_deform_clip_read_from_stretched_matrices_puts_every_joint_back():
    """Blender's matrices of the rig's bones (some stretched along their length, as Stretch To and IK
    stretch do) → a Clip whose FK puts every bone's head and orientation where Blender had them."""
    rig = mini_rig()
    sk, pose = moving_pose(rig, frames=4, rigid=("ORG-chest",))
    matrices = rig_pose(rig, sk, pose)
    stretched = matrices.copy()
    for name, factor in (("ORG-tail", 1.2), ("ORG-thigh.L", 0.95)):
        stretched[:, sk.index(name), :3, 1] *= factor
    frames = np.array([10.0, 11.0, 12.0, 13.0])
    clip = deform_clip(rig, sk, stretched, frames, 30.0)
    assert clip.bone_names == list(sk.names) and clip.generator == "source" and clip.fps == 30.0
    np.testing.assert_array_equal(clip.frames, frames)
    back = rig_pose(rig, sk, intended_pose(sk, clip))
    np.testing.assert_allclose(back, matrices, atol=1e-9)
    chest = sk.index("ORG-chest")
    assert not clip.key_rotation[chest] and clip.key_rotation[sk.index("ORG-thigh.L")]
    assert clip.key_location[sk.index("root")]
    # rotations made continuous: no sign flip from one frame to the next
    assert np.all(np.sum(clip.rotations[1:] * clip.rotations[:-1], axis=-1) >= 0.0)


# ----------------------------------------------------------------------------- the verification


def test_verification_samples_spread_over_the_clip_ends_included():
    np.testing.assert_array_equal(verification_samples(3), [0, 1, 2])
    s = verification_samples(241)
    assert len(s) == 10 and s[0] == 0 and s[-1] == 240 and np.all(np.diff(s) > 0)
    assert len(verification_samples(241, count=4)) == 4


def _carried(rig, sk, goal, checks, samples):
    """Each checked bone's intended matrix: its ORG bone's, carried rigidly from rest."""
    out = []
    for d, o in checks:
        carry = np.linalg.inv(rig.matrix_local[o]) @ rig.matrix_local[d]
        out.append(goal[samples, sk.index(rig.names[o])] @ carry)
    return np.stack(out, axis=1)


@pytest.mark.parametrize("mode", ["FK", "IK"])
def test_verification_measures_the_deform_bones_against_the_intended_pose(mode):
    rig = mini_rig(mode)
    sk, intended = moving_pose(rig, frames=12, amount=0.08)
    keys = convert(rig, sk, intended, mode)
    lazy = IntendedPose(sk, matrices=intended, offsets=rest_offsets(rig, sk))
    checks = deform_checks(rig, list(keys.checked))
    samples = verification_samples(12)
    exact = _carried(rig, sk, rig_pose(rig, sk, intended), checks, samples)
    notes = list(keys.notes)
    m = verify(rig, sk, keys, lazy, checks, samples, exact)
    assert m["control_residual_cm_max"] < 1e-8 and m["control_verify_frames"] == len(samples)
    assert m["control_bake_approximate"] is False and keys.notes == notes
    # Blender leaves the left thigh's DEF bone 2 cm off on one frame
    off = exact.copy()
    j = next(c for c, (d, _) in enumerate(checks) if rig.names[d] == "DEF-thigh.L")
    off[3, j, 2, 3] += 0.02
    m = verify(rig, sk, keys, lazy, checks, samples, off)
    assert m["control_residual_cm_max"] == pytest.approx(2.0, abs=1e-6) and TOLERANCE_CM < 2.0
    assert m["control_residual_bone"] == "DEF-thigh.L" and m["control_bake_approximate"] is True
    assert (IK_STRETCH_NOTE in keys.notes) == (mode == "IK")  # a limb left off by IK keys is explained


def test_control_keys_give_their_channels_and_say_when_a_value_is_not_finite():
    loc = np.array([[0.1, 0.2, 0.3], [0.0, -0.1, 0.5]])
    rot = tf.quat_normalize(np.array([[1.0, 0.2, 0.0, 0.1], [0.9, 0.0, -0.3, 0.2]]))
    keys = ControlKeys(basis={4: tf.compose(loc, rot)})
    got_loc, got_rot = keys.channels(4)
    np.testing.assert_allclose(got_loc, loc, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(got_rot * rot, axis=-1)), 1.0, atol=1e-12)
    kept = ControlKeys(basis={4: tf.compose(loc, rot)}, location={4: loc}, rotation={4: rot})
    assert kept.channels(4)[0] is loc and kept.channels(4)[1] is rot
    assert keys.is_finite()
    keys.scale[4] = np.array([[1.0, np.nan, 1.0]] * 2)
    assert not keys.is_finite()
    assert not ControlKeys(switches={("thigh_parent.L", "IK_FK"): float("inf")}).is_finite()


# ----------------------------------------------------------------------------- probing the IK stretch


def _ik_limb():
    rig = mini_rig("IK")
    limb = next(limb for limb in find_limbs(rig) if limb.ik_control >= 0)
    return rig, limb


def test_a_probe_plan_measures_each_limb_at_every_distance_once():
    rig, limb = _ik_limb()
    plan = ProbePlan(rig, [limb])
    n = len(probe_distances(rig, limb))
    assert plan.steps == n and [plan.at(s) for s in range(n)] == [[(0, s)] for s in range(n)]


def test_mirror_limbs_share_the_distances_and_the_response():
    rig, limb = _ik_limb()
    plan = ProbePlan(rig, [limb, limb])  # the same settings: one response for both
    n = len(plan.distances[0])
    assert plan.groups == [[0, 1]] and plan.steps == -(-n // 2)
    taken = [pair for s in range(plan.steps) for pair in plan.at(s)]
    assert sorted(k for _, k in taken) == list(range(n))  # every distance once, across the two
    assert {k % 2 for j, k in taken if j == 0} == {0} and {k % 2 for j, k in taken if j == 1} == {1}
    measured: list[list] = [[], []]
    for j, k in taken:
        d = float(plan.distances[j][k])
        measured[j].append((k, (d, 1.0 - 0.01 * k, 1.0 + 0.01 * k, 1.0)))
    responses = plan.responses(measured)
    assert list(responses) == [limb.ik_owner]
    r = responses[limb.ik_owner]
    np.testing.assert_allclose(r.distance, np.sort(plan.distances[0]))
    assert r.lengths == (rig.lengths[limb.chain[0]], rig.lengths[limb.chain[1]])


def test_the_probe_placement_puts_the_target_at_the_distance_on_its_line():
    rig, limb = _ik_limb()
    plan = ProbePlan(rig, [limb])
    hip, target = np.array([0.1, 0.0, 0.9]), np.array([0.15, -0.1, 0.1])
    control = tf.compose(np.array([0.15, -0.05, 0.1]), tf.quat_normalize(np.array([1.0, 0.1, 0.2, 0.0])))
    start = [(hip, target, control)]
    for k in (0, 5, len(plan.distances[0]) - 1):
        moved = plan.placement(start, 0, k)
        np.testing.assert_array_equal(moved[:3, :3], control[:3, :3])
        new_target = target + (moved[:3, 3] - control[:3, 3])
        assert np.linalg.norm(new_target - hip) == pytest.approx(plan.distances[0][k], abs=1e-12)
        direction = (new_target - hip) / np.linalg.norm(new_target - hip)
        np.testing.assert_allclose(direction, (target - hip) / np.linalg.norm(target - hip), atol=1e-12)


def test_chain_lengths_read_the_reach_and_the_bones_scales():
    rig, limb = _ik_limb()
    first, second = limb.chain
    a, b = rig.lengths[first], rig.lengths[second]
    parent = int(rig.parents[first])
    hip, knee = np.array([0.1, 0.0, 0.9]), np.array([0.1, -0.1, 0.5])
    down = (knee - hip) / np.linalg.norm(knee - hip)

    def bone(head, y, scale):
        m = np.eye(4)
        m[:3, 1] = y * scale
        m[:3, 0] = np.cross(y, [1.0, 0.0, 0.0]) * scale
        m[:3, 2] = np.cross(m[:3, 0], m[:3, 1]) / scale
        m[:3, 3] = head
        return m

    inherited = 1.5  # the chain's parent is scaled: the chain's scales are read relative to it
    s1, s2 = 1.5 * 0.97, 1.5 * 1.02
    first_m = bone(hip, down, s1)
    knee = hip + down * a * s1
    second_m = bone(knee, np.array([0.0, 0.0, -1.0]), s2)
    end = knee + np.array([0.0, 0.0, -1.0]) * b * s2
    target_head = end + np.array([0.0, 0.0, -0.01])
    mats = {first: first_m, second: second_m, parent: bone(hip, down, inherited),
            limb.ik_target: bone(target_head, down, 1.0)}
    d, r1, r2, reached = chain_lengths(lambda i: mats[i], rig, limb)
    assert d == pytest.approx(np.linalg.norm(target_head - hip))
    assert r1 == pytest.approx(0.97) and r2 == pytest.approx(1.02)
    assert reached == pytest.approx(np.linalg.norm(end - hip) / d)
