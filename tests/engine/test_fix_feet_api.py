"""Fix Feet's engine contract: settings and their limits, bad input, progress and cancel, the Clip
it returns, the ghost overlay, another rig (CMU's 31 bones) and a pelvis that cannot move."""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import motions
from procanim_addon.clip import Clip
from procanim_addon.errors import InputError, MissingRoles
from procanim_addon.fix_feet import LIMITS, METRICS, FixFeetParams, fix_feet, generate_fix_feet
from procanim_addon.fix_feet.footskate import Footskate, add_footskate
from procanim_addon.fix_feet.overlay import overlay
from procanim_addon.ghost import Plant as GhostPlant
from procanim_addon.ground import FlatGround
from procanim_addon.progress import Cancelled
from procanim_addon.rig_roles import RigMap, detect
from procanim_addon.rigs import human_skeleton
from procanim_addon.skeleton import Skeleton

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import rig_samples  # noqa: E402
from progress_probe import ProgressProbe  # noqa: E402
from test_fix_feet_walk import foot_points, pose_of, skate_cm_s, truth_contacts  # noqa: E402


@pytest.fixture(scope="module")
def human():
    return human_skeleton()


@pytest.fixture(scope="module")
def skated(human):
    sk, rm = human
    clean = motions.walk(sk, rm)
    return clean, add_footskate(sk, rm, clean, Footskate(seed=7))


# ----------------------------------------------------------------------------- settings


def test_every_numeric_setting_has_a_limit_and_the_defaults_are_inside():
    p = FixFeetParams()
    assert p.validate() is p
    for f in dataclasses.fields(p):
        if not isinstance(getattr(p, f.name), bool):
            assert f.name in LIMITS, f.name
            lim = LIMITS[f.name]
            assert lim.lo <= getattr(p, f.name) <= lim.hi


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_a_setting_out_of_its_limit_is_refused_by_name(name):
    lim = LIMITS[name]
    for bad in (lim.hi * 2 + 1, lim.lo - 1, math.nan):
        with pytest.raises(InputError, match=lim.label):
            FixFeetParams(**{name: bad}).validate()


def test_the_metric_rows_name_the_figures_a_fix_reports(human, skated):
    sk, rm = human
    metrics = generate_fix_feet(sk, rm, skated[1], FlatGround(0.0)).metrics
    for row in METRICS:
        assert row.key in metrics, row.key
        assert row.format(metrics[row.key])


# ----------------------------------------------------------------------------- bad input


def test_bad_sources_are_refused_with_a_message(human, skated):
    sk, rm = human
    clip = skated[1]
    one = dataclasses.replace(clip, frames=clip.frames[:1], locations=clip.locations[:1], rotations=clip.rotations[:1])
    with pytest.raises(InputError, match="fewer than two frames"):
        fix_feet(sk, rm, one)
    back = dataclasses.replace(clip, frames=clip.frames[::-1].copy())
    with pytest.raises(InputError, match="increasing"):
        fix_feet(sk, rm, back)
    nan = dataclasses.replace(clip, rotations=clip.rotations.copy())
    nan.rotations[3, 5, 0] = np.nan
    with pytest.raises(InputError, match="not finite"):
        fix_feet(sk, rm, nan)
    other = Clip(["nobody"], clip.frames, clip.fps, np.zeros((clip.frame_count, 1, 3)),
                 np.tile([1.0, 0, 0, 0], (clip.frame_count, 1, 1)))
    with pytest.raises(InputError, match="none of the armature's bones"):
        fix_feet(sk, rm, other)
    with pytest.raises(MissingRoles, match="foot.L"):
        fix_feet(sk, RigMap({k: v for k, v in rm.roles.items() if k != "foot.L"}), clip)


# ----------------------------------------------------------------------------- progress


def test_progress_reports_a_whole_fix_and_cancel_stops_it(human, skated):
    sk, rm = human
    probe = ProgressProbe()
    fix_feet(sk, rm, skated[1], FlatGround(0.0), progress=probe)
    probe.assert_reported_a_whole_bake()
    for k in (1, 5, len(probe.seen) // 2, len(probe.seen) - 1):
        with pytest.raises(Cancelled):
            fix_feet(sk, rm, skated[1], FlatGround(0.0), progress=ProgressProbe(cancel_at=k))


def test_progress_does_not_change_the_result(human, skated):
    sk, rm = human
    a = fix_feet(sk, rm, skated[1], FlatGround(0.0))
    b = fix_feet(sk, rm, skated[1], FlatGround(0.0), progress=ProgressProbe())
    assert np.array_equal(a.clip.rotations, b.clip.rotations) and np.array_equal(a.clip.locations, b.clip.locations)


# ----------------------------------------------------------------------------- the Clip


def test_the_clip_keys_what_changed_and_keeps_the_frames(human, skated):
    sk, rm = human
    clip = generate_fix_feet(sk, rm, skated[1], FlatGround(0.0))
    assert clip.generator == "fix_feet" and clip.is_finite()
    assert np.array_equal(clip.frames, skated[1].frames) and clip.fps == skated[1].fps
    keyed_rot = {clip.bone_names[i] for i in np.flatnonzero(clip.key_rotation)}
    assert {"thigh.L", "shin.L", "foot.L", "thigh.R", "shin.R", "foot.R"} <= keyed_rot
    assert clip.key_location[clip.index("hips")]
    q = clip.rotations
    assert np.all(np.sum(q[1:] * q[:-1], axis=-1) >= 0)  # continuous quaternion signs


def test_the_overlay_shows_the_contacts_where_they_are_held(human, skated):
    sk, rm = human
    result = fix_feet(sk, rm, skated[1], FlatGround(0.0))
    ov = overlay(result)
    assert ov.contact.shape == (skated[1].frame_count, 2, 2) and np.array_equal(ov.frames, skated[1].frames)
    assert len(ov.side) == result.clip.metrics["contacts"] and np.all(np.diff(ov.first) >= 0)
    pose = pose_of(sk, result.clip)
    for k in range(len(ov.side)):
        side = "LR"[ov.side[k]]
        row = int(np.flatnonzero(result.clip.frames == 0.5 * (ov.first[k] + ov.last[k]) // 1)[0])  # mid-plant
        assert np.allclose(foot_points(sk, pose, side)[row, 0], ov.heel[k], atol=1e-6)  # the held heel
    world = np.eye(4)
    world[:3, 3] = (1.0, 2.0, 3.0)
    plants = ov.plants(world)
    assert all(isinstance(p, GhostPlant) for p in plants)
    assert np.allclose(plants[0].heel, ov.heel[0] + (1.0, 2.0, 3.0))


# ----------------------------------------------------------------------------- other rigs


def test_cmu_31_bones(skated):
    bones, _ = rig_samples.cmu("A")
    sk = Skeleton.from_bones(rig_samples.bone_dicts(bones))
    rm = detect(sk.names, {b["name"]: b["parent"] for b in bones}, skeleton=sk)
    assert len(sk) == 31
    clean = motions.walk(sk, rm)
    fixed = fix_feet(sk, rm, add_footskate(sk, rm, clean, Footskate(seed=1)), FlatGround(0.0))
    assert fixed.clip.metrics["skate_mean_cm_s"] < 0.5 and fixed.clip.metrics["float_cm"] < 0.5
    assert fixed.clip.metrics["bone_length_error_pct"] < 1e-4


def test_a_pelvis_that_cannot_move_shortens_instead(human, skated):
    """A hips bone connected to its parent ignores its location: nothing moves it, contacts out
    of reach are shortened (the walk's legs are nearly straight at toe-off). The same motion is
    carried by the root bone's location instead."""
    sk, rm = human
    src = add_footskate(sk, rm, skated[0], Footskate(seed=7, float_m=0.0))
    connected = Skeleton(sk.names, sk.parents, sk.matrix_local, sk.lengths,
                         connected=[n == "hips" for n in sk.names])
    root, hips = sk.index("root"), sk.index("hips")
    hips_at = pose_of(sk, src)[:, hips, :3, 3]
    rest_root = sk.matrix_local[root]
    carried = dataclasses.replace(src, locations=src.locations.copy(), key_location=np.ones(len(sk), bool))
    offset = rest_root[:3, :3] @ sk.rest_rel[hips][:3, 3] + rest_root[:3, 3]
    carried.locations[:, root] = (hips_at - offset) @ rest_root[:3, :3]
    carried.locations[:, hips] = 0.0
    assert np.allclose(pose_of(connected, carried)[:, hips:, :3, 3], pose_of(sk, src)[:, hips:, :3, 3], atol=1e-9)
    fixed = fix_feet(connected, rm, carried, FlatGround(0.0))
    assert np.all(fixed.pelvis_offset == 0.0)
    assert fixed.clip.metrics["shortened_contacts"] > 0 and fixed.clip.metrics["ground_offset_cm"] == 0.0
    held = truth_contacts(sk, skated[0]) & fixed.contact.any(axis=-1)
    assert held.sum() > 40
    assert skate_cm_s(connected, fixed.clip, held)[0] < 0.5  # what is held, is held
