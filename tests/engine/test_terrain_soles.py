"""The soles in the terrain adaptation's collision model: a clip on flat ground at its own floor is
left as it is (issue 26 item 2), a clip below the floor is lifted, and a heel or ball never sinks
into a block unreported (issue 28 item 4). Depths are measured here on the heel (under the ankle at
its rest clearance) and the ball, against the terrain's own height query."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import motions
from procanim_addon.rig_roles import detect
from procanim_addon.rigs import BoneSpec, human_skeleton
from procanim_addon.skeleton import Skeleton
from procanim_addon.terrain.adapt import AdaptParams, adapt_to_terrain
from procanim_addon.terrain.collisions import colliding, limb_boxes
from procanim_addon.terrain.contact import effectors
from procanim_addon.terrain.mesh import TerrainMesh
from procanim_addon.terrain.shapes import zigzag

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cmu_skeleton  # noqa: E402
from test_terrain_adapt import bvh_like_rig  # noqa: E402


def cmu_rig():
    """The CMU skeleton (``tests/cmu_skeleton.py``) in metres, Z up, facing −Y, soles at z = 0: each
    joint a bone to the mean of its children (or its end site), as Blender's BVH importer builds it."""
    pos = {n: cmu_skeleton.UNIT_M * np.array([x, -z, y]) for n, (x, y, z) in cmu_skeleton.positions().items()}
    low = min(p[2] for p in pos.values())
    children: dict = {}
    for name, parent, _o in cmu_skeleton.JOINTS:
        children.setdefault(parent, []).append(name if name else f"{parent}_end")
    bones = []
    for name, parent, _o in cmu_skeleton.JOINTS:
        if name is None:
            continue
        head = pos[name] - [0, 0, low]
        tail = np.mean([pos[c] for c in children[name]], axis=0) - [0, 0, low]
        if np.linalg.norm(tail - head) < 1e-4:  # joints at one place (LHipJoint, LowerBack, Neck…)
            tail = head + [0.0, 0.0, 0.05]
        spec = BoneSpec(name, parent, tuple(head), tuple(tail), (0.0, -1.0, 0.0))
        bones.append({"name": name, "parent": parent, "matrix_local": spec.matrix(), "length": spec.length})
    sk = Skeleton.from_bones(bones)
    return sk, detect(sk.names, {b["name"]: b["parent"] for b in bones}, skeleton=sk)


@pytest.fixture(scope="module")
def cmu_walk():
    sk, rm = cmu_rig()
    assert rm.get("shin.L") == "LeftLeg" and rm.get("toe.R") == "RightToeBase"
    return sk, rm, motions.walk(sk, rm, motions.WalkParams(steps=6))


def toe_tips_lowest(sk, rm, clip) -> float:
    tails = sk.tails_of(sk.fk(clip.locations, clip.rotations))
    return float(tails[:, [sk.index(rm.get(f"toe.{s}")) for s in "LR"], 2].min())


def joints_moved(sk, a, b) -> np.ndarray:
    """Per frame, the largest distance (m) a bone's head or tail moved from clip ``a`` to ``b``."""
    pa, pb = sk.fk(a.locations, a.rotations), sk.fk(b.locations, b.rotations)
    heads = np.linalg.norm(pa[..., :3, 3] - pb[..., :3, 3], axis=-1)
    tails = np.linalg.norm(sk.tails_of(pa) - sk.tails_of(pb), axis=-1)
    return np.maximum(heads, tails).max(axis=1)


def sole_depths(sk, rm, clip, terrain) -> np.ndarray:
    """Per frame, how deep (m) the deepest heel or ball is inside the terrain (≤ 0: none is)."""
    pose = sk.fk(clip.locations, clip.rotations)
    deepest = np.full(len(pose), -np.inf)
    for e in effectors(sk, rm, hands=False):
        pts = e.points(sk, pose)[:, :2]  # heel (under the ankle, rest clearance), ball
        z, _, hit = terrain.height(pts[..., :2].reshape(-1, 2), normals=False)
        depth = np.where(hit, z - pts[..., 2].ravel(), -np.inf).reshape(pts.shape[:2])
        deepest = np.maximum(deepest, depth.max(axis=1))
    return deepest


# ----------------------------------------------------------------------------- the clip's own floor


def test_a_captured_skeleton_on_flat_ground_at_its_own_floor_does_not_move(cmu_walk):
    """Issue 26 item 2: the shins' boxes of a skeleton whose ankle sits low reach below the soles
    standing on their floor; before, they counted as collisions with the clip's own floor (29 of 81
    frames) and the fix moved the legs by up to 5.7 cm."""
    sk, rm, walk = cmu_walk
    floor = toe_tips_lowest(sk, rm, walk)
    out = adapt_to_terrain(sk, rm, walk, None, TerrainMesh.flat(floor, size=60))
    assert joints_moved(sk, walk, out).max() <= 0.002
    assert out.metrics["source_collisions"] == 0 and out.metrics["collisions"] == 0


def test_the_model_still_sees_a_shin_whose_foot_is_off_the_ground(cmu_walk):
    """The shin's box ends at the sole only where the sole touches the ground: lifted 3 cm clear of
    a floor, the same frames' shins are tested whole (and a floor 3 cm above the soles is hit)."""
    sk, rm, walk = cmu_walk
    pose = sk.fk(walk.locations, walk.rotations)
    lb = limb_boxes(sk, rm, soles=True)
    assert not colliding(sk, lb, pose, TerrainMesh.flat(0.0, size=60)).any()
    thin = limb_boxes(sk, rm)  # the model without soles: the shin boxes reach into the floor
    assert colliding(sk, thin, pose, TerrainMesh.flat(0.0, size=60)).any()
    shins = np.isin(lb.bones, [sk.index(rm.get(f"shin.{s}")) for s in "LR"])
    raised = colliding(sk, lb, pose, TerrainMesh.flat(0.03, size=60))[:, shins]
    assert raised.any()


def test_a_clip_below_the_floor_is_lifted_onto_it(cmu_walk):
    """The same walk onto flat ground 3 cm above its floor: every joint 3 cm higher (within 2 mm)."""
    sk, rm, walk = cmu_walk
    floor = toe_tips_lowest(sk, rm, walk)
    out = adapt_to_terrain(sk, rm, walk, None, TerrainMesh.flat(floor + 0.03, size=60))
    lifted = replace(walk, locations=walk.locations.copy())
    hips = sk.index(rm.get("hips"))
    k = walk.bone_names.index(sk.names[hips])
    lifted.locations[:, k] += sk.matrix_local[hips][:3, :3].T @ np.array([0.0, 0.0, 0.03])
    assert joints_moved(sk, lifted, out).max() <= 0.002
    assert toe_tips_lowest(sk, rm, out) >= floor + 0.03 - 0.002


@pytest.mark.parametrize("depth, kept", [(0.005, True), (0.03, False)])
def test_a_sole_slightly_inside_its_floor_is_contact_one_deep_inside_is_lifted(cmu_walk, depth, kept):
    """Three frames of the walk sink into the floor (capture noise, a heel pressed in): 5 mm is the
    sole's contact with its floor and stays as it is; 3 cm is a walk below its floor and comes up to
    within 1 cm of it."""
    sk, rm, walk = cmu_walk
    floor = toe_tips_lowest(sk, rm, walk)
    hips = sk.index(rm.get("hips"))
    k = walk.bone_names.index(sk.names[hips])
    sunk = replace(walk, locations=walk.locations.copy())
    sunk.locations[30:33, k] += sk.matrix_local[hips][:3, :3].T @ np.array([0.0, 0.0, -depth])
    ground = TerrainMesh.flat(floor, size=60)
    out = adapt_to_terrain(sk, rm, sunk, None, ground)
    if kept:
        assert joints_moved(sk, sunk, out).max() <= 0.002
        assert out.metrics["collisions"] == 0
    else:
        assert out.metrics["source_collisions"] > 0
        assert sole_depths(sk, rm, out, ground).max() <= 0.01 + 1e-6
        assert sole_depths(sk, rm, sunk, ground).max() > 0.025


# ----------------------------------------------------------------------------- a block's edge


@pytest.mark.parametrize("rig", ["human", "bvh_named"])
@pytest.mark.parametrize("lift_m, cell, start, step", [(0.04, 0.45, 0.1, 0.65), (0.04, 0.45, 0.4, 0.65),
                                                       (0.04, 0.6, 0.25, 0.65), (None, 0.6, 0.4, None)])
def test_no_heel_or_ball_sinks_into_a_block_unreported(rig, lift_m, cell, start, step):
    """Issue 28 item 4: walks over 10 cm blocks (a skimming one, and the default walk) — before, a
    heel rolling off a block's far edge was up to 3.4 cm inside it with 0 collisions reported (the
    heel was in no collision box). Now no heel or ball is more than 1 cm inside on any frame, and
    every frame where one is more than the collision tolerance inside is reported."""
    sk, rm = human_skeleton() if rig == "human" else bvh_like_rig()
    params = motions.WalkParams(steps=7) if lift_m is None else motions.WalkParams(
        steps=7, lift_m=lift_m, step_length_m=step, cadence_spm=100)
    clip = motions.walk(sk, rm, params)
    sole = float(min(sk.heads[:, 2].min(), sk.tails[:, 2].min()))
    blocks = zigzag(0.10, start_xy=(0.0, -start), direction_xy=(0.0, -1.0), cell_length=cell, ground_z=sole)
    assert sole_depths(sk, rm, clip, blocks).max() > 0.05  # the blocks are in the walk's way
    out = adapt_to_terrain(sk, rm, clip, None, blocks, AdaptParams(refuse_infeasible=False))
    depth = sole_depths(sk, rm, out, blocks)
    assert depth.max() <= 0.01, f"a sole {depth.max() * 100:.2f} cm inside a block at frame {int(depth.argmax())}"
    tolerance = AdaptParams().collision_tolerance_m
    inside = {int(round(f)) for f in clip.frames[depth > tolerance + 1e-6]}
    assert inside <= set(out.metrics["unfixed_frames"])
    assert len(out.metrics["unfixed_frames"]) == out.metrics["collisions"]
