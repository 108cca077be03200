"""Procedural source motions (walk, jump, forward roll) on ProcAnim's human, on flat ground."""

import numpy as np
import pytest

from procanim_addon import motions
from procanim_addon.errors import InputError
from procanim_addon.rigs import human_skeleton
from procanim_addon.terrain.collisions import colliding, limb_boxes
from procanim_addon.terrain.mesh import TerrainMesh

SOLE_Z = 0.03  # the human's rest sole height (toe and ball at z = 0.03)


@pytest.fixture(scope="module")
def human():
    return human_skeleton()


def posed(sk, clip):
    pose = sk.fk(clip.locations, clip.rotations)
    return pose, sk.tails_of(pose)


def sole(sk, pose, tails, side):
    """Ball and toe-tip points of one foot, (F, 2, 3)."""
    f, t = sk.index(f"foot.{side}"), sk.index(f"toe.{side}")
    return np.stack((tails[:, f], tails[:, t]), axis=1)


def heels(sk, pose):
    """Under each ankle at the rest sole height, carried by the foot bone, (F, 2, 3)."""
    out = []
    for side in "LR":
        i = sk.index(f"foot.{side}")
        local = np.linalg.inv(sk.matrix_local[i]) @ np.array([*sk.heads[i, :2], SOLE_Z, 1.0])
        out.append(np.einsum("fij,j->fi", pose[:, i], local)[:, :3])
    return np.stack(out, axis=1)


def body_points(sk, pose, tails):
    idx = [i for i, n in enumerate(sk.names) if n != "root"]
    return np.concatenate((pose[:, idx][..., :3, 3], tails[:, idx], heels(sk, pose)), axis=1)


def test_walk_plants_each_foot_flat_and_still_while_it_supports(human):
    sk, rm = human
    p = motions.WalkParams(steps=4)
    clip = motions.walk(sk, rm, p)
    pose, tails = posed(sk, clip)
    for side in "LR":
        pts = sole(sk, pose, tails, side)
        down = np.all(np.abs(pts[..., 2] - SOLE_Z) < 1e-6, axis=1)
        assert 0.4 < down.mean() < 0.8  # stance is most of the gait, not all of it
        both = down[1:] & down[:-1]
        slide = np.linalg.norm(np.diff(pts[:, 0, :2], axis=0), axis=1)[both]
        assert slide.max() < 1e-9
        assert pts[..., 2].max() > SOLE_Z + 0.05  # the swing lifts the foot
    assert body_points(sk, pose, tails)[..., 2].min() >= SOLE_Z - 1e-9


def test_walk_advances_one_step_length_per_step(human):
    sk, rm = human
    clip = motions.walk(sk, rm, motions.WalkParams(steps=4, step_length_m=0.5, cadence_spm=120))
    pose, _ = posed(sk, clip)
    hips = pose[:, sk.index("hips"), :3, 3]
    assert hips[-1, 1] - hips[0, 1] == pytest.approx(-4 * 0.5, abs=1e-9)  # forward is −Y
    assert clip.frame_count == 4 * 12 + 1  # 0.5 s per step at 24 fps


def test_jump_is_ballistic_and_lands_ahead(human):
    sk, rm = human
    p = motions.JumpParams(distance_m=0.6, height_m=0.3)
    clip = motions.jump(sk, rm, p)
    pose, tails = posed(sk, clip)
    soles = np.concatenate((sole(sk, pose, tails, "L"), sole(sk, pose, tails, "R")), axis=1)
    airborne = soles[..., 2].min(axis=1) > SOLE_Z + 1e-6
    flight_s = airborne.sum() / p.fps
    assert flight_s == pytest.approx(2 * np.sqrt(2 * 0.3 / 9.81), abs=1.5 / p.fps)
    hips = pose[:, sk.index("hips"), :3, 3]
    assert hips[:, 2].max() - hips[0, 2] == pytest.approx(0.3, abs=0.02)
    assert soles[-1, :, 1] - soles[0, :, 1] == pytest.approx(-0.6, abs=1e-6)
    assert soles[..., 2].min() >= SOLE_Z - 1e-9


def test_tumble_turns_once_over_and_always_touches_the_ground(human):
    sk, rm = human
    clip = motions.tumble(sk, rm)
    pose, tails = posed(sk, clip)
    limbs = limb_boxes(sk, rm)
    surface = np.concatenate((body_points(sk, pose, tails), limbs.sample_points(sk, pose).reshape(len(pose), -1, 3)), 1)
    low = surface[..., 2].min(axis=1)
    assert np.allclose(low, SOLE_Z, atol=1e-6)  # rolling: never below, never airborne
    assert not colliding(sk, limbs, pose, TerrainMesh.flat(SOLE_Z)).any()  # limbs roll over, not through
    # the hips' up axis turns a full circle about the left axis (+X)
    up = pose[:, sk.index("hips"), :3, 1]
    ang = np.unwrap(np.arctan2(-up[:, 1], up[:, 2]))
    assert ang[-1] - ang[0] == pytest.approx(2 * np.pi, abs=0.05)
    assert np.ptp(ang) >= 2 * np.pi - 0.05
    hips = pose[:, sk.index("hips"), :3, 3]
    assert hips[-1, 1] < hips[0, 1] - 1.0  # ends well ahead, standing
    assert hips[-1, 2] == pytest.approx(hips[0, 2], abs=1e-6)


def test_bad_parameters_are_refused():
    sk, rm = human_skeleton()
    with pytest.raises(InputError, match="(?i)step"):
        motions.walk(sk, rm, motions.WalkParams(steps=0))
    with pytest.raises(InputError, match="Squat depth must be between 0.2 and 0.6"):
        motions.tumble(sk, rm, motions.TumbleParams(squat_depth=0.9))


def test_a_step_longer_than_the_legs_reach_is_refused_not_nan():
    """Found by tests/engine/test_fuzz_engine.py: a 2 m step on a 1.75 m human made the hips' height
    the square root of a negative number."""
    sk, rm = human_skeleton()
    with pytest.raises(InputError, match="too long for this character"):
        motions.walk(sk, rm, motions.WalkParams(steps=1, step_length_m=2.0))
    assert motions.walk(sk, rm, motions.WalkParams(steps=1, step_length_m=1.0)).is_finite()
