"""Fix Feet over a given ground: feet stand on ankle-high steps, a floating capture comes down,
points off the ground, and a rig in other units. Measured with the test's own forward kinematics."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import motions
from procanim_addon.fix_feet import FixFeetParams, fix_feet
from procanim_addon.fix_feet.footskate import Footskate, add_footskate
from procanim_addon.ground import FlatGround, StairsGround
from procanim_addon.rigs import human_skeleton
from procanim_addon.skeleton import Skeleton
from procanim_addon.terrain.mesh import TerrainMesh

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_fix_feet_walk import SOLE, foot_points, pose_of, skate_cm_s, truth_contacts  # noqa: E402

STEP = 0.09  # ankle-high: the demo human's ankle is 9 cm above the floor


@pytest.fixture(scope="module")
def human():
    return human_skeleton()


@pytest.fixture(scope="module")
def clean(human):
    return motions.walk(*human)


def blocks():
    """A floor with an ankle-high block across the walk's path (it walks along −Y from y = 0)."""
    block = [(-1.0, -1.9), (1.0, -1.9), (1.0, -1.0), (-1.0, -1.0)]
    return TerrainMesh.from_boxes(0.0, (-2.0, -5.0), (2.0, 2.0), [(block, STEP)])


def gaps_on(ground, skeleton, clip):
    """Per side, heel/ball/tip height above the ground under them minus the sole, ``(F, 3)``."""
    pose = pose_of(skeleton, clip)
    out = []
    for side in "LR":
        pts = foot_points(skeleton, pose, side)
        z, _, hit = ground.height(pts[..., :2].reshape(-1, 2))
        assert np.all(hit)
        out.append(pts[..., 2] - SOLE - np.asarray(z).reshape(pts.shape[:2]))
    return np.stack(out, axis=1)  # (F, 2, 3)


@pytest.mark.parametrize("ground", [blocks(), StairsGround(start=0.8, tread=0.45, riser=STEP, steps_up=2,
                                                              landing=0.9, steps_down=2)],
                         ids=["mesh blocks", "analytic stairs"])
@pytest.mark.parametrize("skate", [False, True])
def test_feet_stand_on_ankle_high_steps(human, clean, ground, skate):
    sk, rm = human
    truth = truth_contacts(sk, clean)
    src = add_footskate(sk, rm, clean, Footskate(seed=5)) if skate else clean
    fixed = fix_feet(sk, rm, src, ground)
    before, after = gaps_on(ground, sk, src), gaps_on(ground, sk, fixed.clip)
    down = truth[..., None] & np.ones(3, bool)
    assert before[down].min() < -0.05  # the source walks through the steps
    assert after[down].min() > -0.005  # no penetration > 0.5 cm
    lowest = after[..., :2].min(axis=-1)  # heel or ball
    assert np.all(lowest[truth] < 0.005)  # standing, not floating, on the steps and off them
    balls = np.stack([foot_points(sk, pose_of(sk, fixed.clip), side)[:, 1] for side in "LR"], axis=1)
    raised = np.asarray(ground.height(balls[..., :2].reshape(-1, 2))[0]).reshape(truth.shape) > STEP / 2
    assert np.sum(truth & raised) >= 10  # contacts landed on the steps
    mean, p95 = skate_cm_s(sk, fixed.clip, truth)
    assert mean < 0.5 and p95 < 2.0
    assert fixed.clip.metrics["penetration_cm"] < 0.5 < fixed.clip.metrics["penetration_before_cm"]


def test_a_floating_capture_comes_down_onto_the_ground(human, clean):
    sk, rm = human
    bad = add_footskate(sk, rm, clean, Footskate(seed=1, drift_m_s=(0.0, 0.0), jitter_m=0.0, float_m=0.05))
    fixed = fix_feet(sk, rm, bad, FlatGround(0.0))
    assert fixed.clip.metrics["ground_offset_cm"] == pytest.approx(-5.0, abs=0.05)
    hips = sk.index("hips")
    drop = pose_of(sk, fixed.clip)[:, hips, 2, 3] - pose_of(sk, bad)[:, hips, 2, 3]
    assert np.allclose(drop, -0.05, atol=1e-3)  # the whole motion, not the legs alone
    off = fix_feet(sk, rm, bad, FlatGround(0.0), params=FixFeetParams(place_on_ground=False))
    assert off.clip.metrics["ground_offset_cm"] == 0.0
    assert off.clip.metrics["float_cm"] < 0.5  # the legs reach down instead (and the pelvis drops)
    assert off.clip.metrics["pelvis_drop_max_cm"] > 1.0


def test_a_ground_with_holes_measures_the_missing_parts_at_its_own_level(human, clean):
    """Where the ground has no surface under a foot, the floor is the ground's level under the
    motion (the median of its heights there), not −∞."""
    sk, rm = human
    patch = TerrainMesh.from_boxes(0.0, (-1.0, -1.5), (1.0, 1.0), [])  # ends mid-walk
    fixed = fix_feet(sk, rm, clean, patch)
    assert np.isfinite(fixed.clip.locations).all()
    assert fixed.clip.metrics["max_joint_change_cm"] < 0.5


def test_a_rig_in_centimetres(human, clean):
    """The same motion on the same rig scaled by 100 with ``unit_m = 0.01``: the same contacts."""
    sk, rm = human
    rest = sk.matrix_local.copy()
    rest[:, :3, 3] *= 100
    big = Skeleton(sk.names, sk.parents, rest, sk.lengths * 100)
    src = add_footskate(sk, rm, clean, Footskate(seed=2))
    big_src = type(src)(src.bone_names, src.frames, src.fps, src.locations * 100, src.rotations,
                        key_location=src.key_location)
    fixed = fix_feet(sk, rm, src, FlatGround(0.0))
    big_fixed = fix_feet(big, rm, big_src, FlatGround(0.0), params=FixFeetParams(unit_m=0.01))
    assert np.array_equal(fixed.contact, big_fixed.contact)
    assert np.allclose(big_fixed.clip.locations / 100, fixed.clip.locations, atol=1e-9)
    for key in ("skate_before_mean_cm_s", "float_before_cm", "max_joint_change_cm", "pelvis_drop_max_cm"):
        assert big_fixed.clip.metrics[key] == pytest.approx(fixed.clip.metrics[key], rel=1e-6, abs=1e-9)
