"""Terrain adaptation end to end on ProcAnim's human: identity, uniform lift, bone lengths,
contacts and collisions on the paper's zigzag terrains."""

import numpy as np
import pytest

from procanim_addon import motions
from procanim_addon.errors import InputError
from procanim_addon.limits import MAX_FRAME_BONES, MAX_FRAMES
from procanim_addon.rigs import human_skeleton
from procanim_addon.terrain.adapt import AdaptParams, adapt_to_terrain
from procanim_addon.terrain.collisions import colliding, limb_boxes
from procanim_addon.terrain.mesh import TerrainMesh
from procanim_addon.terrain.shapes import body_heights, zigzag

SOLE_Z = 0.03  # rest sole height of the human: the motions' own ground


@pytest.fixture(scope="module")
def human():
    return human_skeleton()


@pytest.fixture(scope="module")
def walk(human):
    return motions.walk(*human, motions.WalkParams(steps=6))


def poses(sk, a, b):
    return sk.fk(a.locations, a.rotations), sk.fk(b.locations, b.rotations)


def course(sk, rm, level):
    """The paper's zigzag: four 0.8 m cells across the walking direction (−Y), 1st and 3rd raised."""
    return zigzag(body_heights(sk, rm)[level], start_xy=(0.0, -0.3), direction_xy=(0.0, -1.0),
                  cell_length=0.8, ground_z=SOLE_Z, name=f"zigzag {level}")


def test_flat_to_flat_is_the_identity(human, walk):
    sk, rm = human
    out = adapt_to_terrain(sk, rm, walk, None, TerrainMesh.flat(SOLE_Z, size=60))
    a, b = poses(sk, walk, out)
    assert np.abs(a - b).max() < 1e-9
    assert out.metrics["collisions"] == 0 and out.metrics["contact_error_cm_max"] < 1e-6


def test_uniformly_raised_terrain_lifts_every_joint_by_exactly_that_height(human, walk):
    sk, rm = human
    out = adapt_to_terrain(sk, rm, walk, None, TerrainMesh.flat(SOLE_Z + 0.25, size=60))
    a, b = poses(sk, walk, out)
    moved = b[:, 1:, :3, 3] - a[:, 1:, :3, 3]  # every bone but the static root control
    assert np.allclose(moved[..., 2], 0.25, atol=1e-9)
    assert np.allclose(moved[..., :2], 0.0, atol=1e-9)
    assert np.allclose(b[..., :3, :3], a[..., :3, :3], atol=1e-9)  # nothing turns


def test_a_reference_mesh_is_used_instead_of_the_flat_ground(human, walk):
    sk, rm = human
    # a motion made on a ground 0.1 m *below* its soles' lowest point, adapted to one 0.1 m above it
    ref = TerrainMesh.flat(SOLE_Z - 0.1, size=60, name="low")
    out = adapt_to_terrain(sk, rm, walk, ref, TerrainMesh.flat(SOLE_Z + 0.1, size=60))
    a, b = poses(sk, walk, out)
    assert np.allclose(b[:, 1:, 2, 3] - a[:, 1:, 2, 3], 0.2, atol=1e-9)


@pytest.mark.parametrize("level", ["ankle", "knee"])
def test_walk_on_zigzag_keeps_bone_lengths_contacts_and_clears_the_blocks(human, walk, level):
    sk, rm = human
    terrain = course(sk, rm, level)
    out = adapt_to_terrain(sk, rm, walk, None, terrain)
    pose = sk.fk(out.locations, out.rotations)
    # bone lengths, measured here independently: posed head→tail and head→parent-head distances
    tails = sk.tails_of(pose)
    heads = pose[..., :3, 3]
    assert np.allclose(np.linalg.norm(tails - heads, axis=-1), sk.lengths, rtol=1e-4, atol=0)
    legs = [sk.index(f"{r}.{s}") for s in "LR" for r in ("shin", "foot", "toe")]
    par = sk.parents[legs]
    rest = np.linalg.norm(sk.heads[legs] - sk.heads[par], axis=-1)
    posed = np.linalg.norm(heads[:, legs] - heads[:, par], axis=-1)
    assert np.max(np.abs(posed - rest) / rest) < 1e-4  # < 0.01 %
    assert out.metrics["bone_length_error_pct"] < 0.01
    # the feet stand on the blocks: some contact frame is at block height
    lb = limb_boxes(sk, rm)
    assert not colliding(sk, lb, pose, terrain).any()
    assert out.metrics["collisions"] == 0
    assert out.metrics["contact_error_cm_max"] < 1.0
    top = SOLE_Z + body_heights(sk, rm)[level]
    soles = np.minimum(tails[:, sk.index("toe.L"), 2], tails[:, sk.index("foot.L"), 2])
    assert np.any(np.abs(soles - top) < 0.01)


def test_waist_high_blocks_are_refused_for_a_walk_with_a_clear_message(human, walk):
    sk, rm = human
    with pytest.raises(InputError, match="rises .* m .* can step"):
        adapt_to_terrain(sk, rm, walk, None, course(sk, rm, "waist"))


def test_reference_equal_to_terrain_is_refused(human, walk):
    sk, rm = human
    t = course(sk, rm, "knee")
    with pytest.raises(InputError, match="same surface"):
        adapt_to_terrain(sk, rm, walk, t, course(sk, rm, "knee"))


def test_terrain_that_does_not_reach_under_the_feet_is_refused(human, walk):
    sk, rm = human
    with pytest.raises(InputError, match="does not reach under"):
        adapt_to_terrain(sk, rm, walk, None, TerrainMesh.flat(SOLE_Z, center=(0, 5), size=4, name="patch"))


def test_bad_parameters_are_refused(human, walk):
    sk, rm = human
    with pytest.raises(InputError, match="Descriptors per joint must be between 10"):
        adapt_to_terrain(sk, rm, walk, None, TerrainMesh.flat(0.1), AdaptParams(descriptors_per_joint=6))


@pytest.fixture(scope="module")
def jump(human):
    return motions.jump(*human)


@pytest.mark.parametrize("level", ["ankle", "knee"])
def test_jump_onto_zigzag_lands_on_the_blocks_without_collisions(human, jump, level):
    sk, rm = human
    terrain = course(sk, rm, level)
    out = adapt_to_terrain(sk, rm, jump, None, terrain)
    assert out.metrics["source_collisions"] == 0  # the jump itself is clean on flat ground
    assert out.metrics["collisions"] == 0
    assert out.metrics["contact_error_cm_max"] < 1.0
    assert out.metrics["bone_length_error_pct"] < 0.01
    # the jump lands 0.7 leg lengths ahead, on the first (raised) cell: the feet end on its top
    pose = sk.fk(out.locations, out.rotations)
    toe_tip = sk.tails_of(pose)[-1, sk.index("toe.L")]
    assert -1.1 < toe_tip[1] < -0.3
    assert toe_tip[2] == pytest.approx(SOLE_Z + body_heights(sk, rm)[level], abs=0.01)


def test_jump_onto_waist_high_blocks_is_refused(human, jump):
    sk, rm = human
    with pytest.raises(InputError, match="can step"):
        adapt_to_terrain(sk, rm, jump, None, course(sk, rm, "waist"))


@pytest.mark.parametrize("level", ["ankle", "knee"])
def test_tumble_over_zigzag_rolls_over_the_blocks_without_collisions(human, level):
    sk, rm = human
    roll = motions.tumble(sk, rm)
    out = adapt_to_terrain(sk, rm, roll, None, course(sk, rm, level))
    m = out.metrics
    assert m["source_collisions"] == 0  # the roll itself touches its floor without going through
    assert m["collisions"] == 0  # legs and arms (the paper counts both for tumbling)
    assert m["contact_error_cm_max"] < 1.0  # feet and hands that touched the floor touch the blocks
    assert m["bone_length_error_pct"] < 0.01


def test_a_rig_in_centimetres_adapts_like_the_same_rig_in_metres(human, walk):
    sk, rm = human
    terrain = course(sk, rm, "ankle")
    metres = adapt_to_terrain(sk, rm, walk, None, terrain)
    # the same rig, clip and terrain with every distance × 100, and unit_m = 0.01
    ml = sk.matrix_local.copy()
    ml[:, :3, 3] *= 100
    sk_cm = type(sk)(sk.names, sk.parents, ml, sk.lengths * 100)
    walk_cm = type(walk)(walk.bone_names, walk.frames, walk.fps, walk.locations * 100, walk.rotations,
                         key_location=walk.key_location)
    terrain_cm = TerrainMesh(terrain.vertices * 100, terrain.triangles)
    cm = adapt_to_terrain(sk_cm, rm, walk_cm, None, terrain_cm, AdaptParams(unit_m=0.01))
    assert np.allclose(cm.locations / 100, metres.locations, atol=1e-9)
    assert np.allclose(cm.rotations, metres.rotations, atol=1e-9)
    assert cm.metrics["collisions"] == metres.metrics["collisions"] == 0


BVH_NAMES = {  # ProcAnim bone -> BVH/CMU joint name (Blender's BVH importer names bones after joints)
    "hips": "Hips", "spine": "Spine", "chest": "Spine1", "neck": "Neck", "head": "Head",
    "clavicle.L": "LeftShoulder", "upper_arm.L": "LeftArm", "forearm.L": "LeftForeArm", "hand.L": "LeftHand",
    "thigh.L": "LeftUpLeg", "shin.L": "LeftLeg", "foot.L": "LeftFoot", "toe.L": "LeftToeBase",
}


def bvh_like_rig():
    """The human's joints under BVH names, the hips as the root bone (no separate root), and every
    bone rolled differently from ProcAnim's (local Z toward +X instead of forward)."""
    from procanim_addon.rig_roles import detect
    from procanim_addon.rigs import BoneSpec, human_template
    from procanim_addon.skeleton import Skeleton

    names = dict(BVH_NAMES)
    names.update({k.replace(".L", ".R"): v.replace("Left", "Right") for k, v in BVH_NAMES.items() if ".L" in k})
    bones = []
    for b in human_template().bones:
        if b.name == "root":
            continue
        spec = BoneSpec(names[b.name], names.get(b.parent) if b.parent != "root" else None, b.head, b.tail,
                        (1.0, 0.0, 0.0))
        bones.append({"name": spec.name, "parent": spec.parent, "matrix_local": spec.matrix(), "length": spec.length})
    sk = Skeleton.from_bones(bones)
    parents = {b["name"]: b["parent"] for b in bones}
    return sk, detect(sk.names, parents)


@pytest.mark.parametrize("level", ["ankle", "knee"])
def test_a_bvh_named_rig_with_other_bone_rolls_adapts_as_well(level):
    sk, rm = bvh_like_rig()
    assert rm.get("thigh.L") == "LeftUpLeg" and rm.get("toe.R") == "RightToeBase"
    walk = motions.walk(sk, rm, motions.WalkParams(steps=6))
    flat = adapt_to_terrain(sk, rm, walk, None, TerrainMesh.flat(SOLE_Z, size=60))
    a, b = poses(sk, walk, flat)
    assert np.abs(a - b).max() < 1e-9
    out = adapt_to_terrain(sk, rm, walk, None, course(sk, rm, level))
    assert out.metrics["collisions"] == 0
    assert out.metrics["contact_error_cm_max"] < 1.0
    assert out.metrics["bone_length_error_pct"] < 0.01


# ----------------------------------------------------------------------------- feet that skim the floor

def skimming_walk(sk, rm, lift_m):
    """A walk whose swing foot barely leaves the floor (2–4 cm, as in real motion capture) at a slower
    cadence and a shorter step than the Table-2 walk."""
    return motions.walk(sk, rm, motions.WalkParams(steps=7, lift_m=lift_m, step_length_m=0.55, cadence_spm=100))


@pytest.mark.parametrize("lift_m", [0.02, 0.04])
@pytest.mark.parametrize("cell, start", [(0.55, 0.15), (0.55, 0.35), (0.65, 0.15), (0.65, 0.35), (0.65, 0.55)])
def test_feet_that_skim_the_floor_do_not_cut_ankle_high_blocks(human, lift_m, cell, start):
    """Measured before the planted-foot lift (issue 15): 1 collision frame at 0.65 m cells (a planted
    foot rolling over a block's edge); now none, and no planted foot leaves its ground by more
    than the lift allows (6 cm)."""
    sk, rm = human
    terrain = zigzag(body_heights(sk, rm)["ankle"], start_xy=(0.0, -start), direction_xy=(0.0, -1.0),
                     cell_length=cell, ground_z=SOLE_Z)
    out = adapt_to_terrain(sk, rm, skimming_walk(sk, rm, lift_m), None, terrain, AdaptParams(refuse_infeasible=False))
    m = out.metrics
    assert m["collisions"] == 0 and m["unfixed_frames"] == []
    assert m["contact_error_cm_max"] <= 6.0 + 1e-6
    hits = colliding(sk, limb_boxes(sk, rm), sk.fk(out.locations, out.rotations), terrain)  # measured again here
    assert not hits.any()


def test_frames_that_cannot_be_cleared_are_reported_by_number(human):
    """A shuffle (2 cm foot lift) into knee-high blocks does not fit the terrain: the frames still
    cut are listed, and they are exactly the frames where a limb box meets the terrain."""
    sk, rm = human
    terrain = zigzag(body_heights(sk, rm)["knee"], start_xy=(0.0, -0.55), direction_xy=(0.0, -1.0),
                     cell_length=0.9, ground_z=SOLE_Z)
    clip = skimming_walk(sk, rm, 0.02)
    out = adapt_to_terrain(sk, rm, clip, None, terrain, AdaptParams(refuse_infeasible=False))
    hits = colliding(sk, limb_boxes(sk, rm), sk.fk(out.locations, out.rotations), terrain).any(axis=1)
    assert out.metrics["unfixed_frames"], "the shuffle cannot clear knee-high blocks"
    assert out.metrics["unfixed_frames"] == [int(f) for f in clip.frames[hits]]
    assert len(out.metrics["unfixed_frames"]) == out.metrics["collisions"]


class _HugeClip:
    """A clip that only tells its size: reading its channels (an allocation would) fails the test."""

    def __init__(self, frames):
        self.frame_count = frames

    def __getattr__(self, name):
        raise AssertionError(f"the adaptation read '{name}' of a clip it should have refused")


class _BigSkeleton:
    """A skeleton that only tells its bone count (a generated Rigify human has 706 bones)."""

    def __len__(self):
        return 706

    def __getattr__(self, name):
        raise AssertionError(f"the adaptation read '{name}' of a skeleton it should have refused")


@pytest.mark.parametrize("big_rig, frames, match", [(False, MAX_FRAMES + 1, "at most 100,000 frames"),
                                                    (True, 20_000, "frame × bone samples")])
def test_a_bake_over_the_size_limits_is_refused_before_anything_is_read(human, big_rig, frames, match):
    sk, rm = human
    if big_rig:
        sk = _BigSkeleton()
        assert 706 * frames > MAX_FRAME_BONES and frames <= MAX_FRAMES
    flat = TerrainMesh.flat(SOLE_Z, size=60)
    with pytest.raises(InputError, match=match):
        adapt_to_terrain(sk, rm, _HugeClip(frames), None, flat)
    with pytest.raises(InputError, match=match):  # in other units too (the clip is scaled later)
        adapt_to_terrain(sk, rm, _HugeClip(frames), None, flat, AdaptParams(unit_m=0.01))


def _largest_turn_deg(sk, clip) -> dict:
    """Per bone, the largest frame-to-frame rotation (degrees) of its pose relative to its parent."""
    pose = sk.fk(clip.locations, clip.rotations)
    out = {}
    for i, name in enumerate(sk.names):
        p = sk.parents[i]
        m = pose[:, i, :3, :3] if p < 0 else np.swapaxes(pose[:, p, :3, :3], -1, -2) @ pose[:, i, :3, :3]
        r = np.swapaxes(m[:-1], -1, -2) @ m[1:]
        out[name] = float(np.degrees(np.arccos(np.clip((np.trace(r, axis1=-2, axis2=-1) - 1) / 2, -1, 1))).max())
    return out


@pytest.mark.parametrize("kind", ["walk", "jump", "tumble"])
def test_the_neck_and_head_turn_no_faster_than_in_the_source(human, walk, jump, kind):
    """Measured before the rigid short bones (issue 10): over knee-high blocks the descriptors put
    the neck's tail behind its solved head and the neck turned 178° in one frame (the demo walk).
    Short bones (neck, head, spine segments, hands, feet, toes) now keep their source direction in
    the solve: the neck and head turn between frames at most as fast as in the source, plus the
    chest's own turn (10°)."""
    sk, rm = human
    clip = {"walk": walk, "jump": jump, "tumble": motions.tumble(sk, rm)}[kind]
    out = adapt_to_terrain(sk, rm, clip, None, course(sk, rm, "knee"))
    got, src = _largest_turn_deg(sk, out), _largest_turn_deg(sk, clip)
    for role in ("neck", "head"):
        bone = rm.get(role)
        assert got[bone] <= src[bone] + 10.0, (role, got[bone], src[bone])


@pytest.mark.parametrize("kind", ["walk", "tumble"])
def test_knees_bend_to_the_side_they_bend_to_in_the_source(human, walk, kind):
    """Measured before (issue 10): the fix's two-bone IK kept whatever bend plane the solve left, and
    on a generated Rigify human a knee ended bent backward (24 cm behind its hip→ankle line). The IK
    now mirrors a bend plane more than 135° from the source's bend side back onto it."""
    sk, rm = human
    clip = walk if kind == "walk" else motions.tumble(sk, rm)
    out = adapt_to_terrain(sk, rm, clip, None, course(sk, rm, "knee"))
    for s in "LR":
        bones = [sk.index(rm.get(f"{r}.{s}")) for r in ("thigh", "shin", "foot")]

        def bend(pose, bones=bones):
            root, mid, end = (pose[:, b, :3, 3] for b in bones)
            axis = (end - root) / np.linalg.norm(end - root, axis=-1, keepdims=True)
            off = mid - root - np.sum((mid - root) * axis, axis=-1, keepdims=True) * axis
            return off

        a, b = bend(sk.fk(clip.locations, clip.rotations)), bend(sk.fk(out.locations, out.rotations))
        bent = np.linalg.norm(a, axis=-1) > 0.02  # the source knee is clearly bent
        cos = np.sum(a * b, axis=-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1), 1e-9)
        assert np.all(cos[bent] > -0.7071), (s, np.degrees(np.arccos(cos[bent].min())))
