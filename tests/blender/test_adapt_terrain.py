"""Terrain adaptation in Blender (Jo & Choi 2019, Table 2): the source motions baked, adapted to the paper's
zigzag terrains, and measured on the EVALUATED pose against the terrain mesh with checks of our
own — a BVH tree of the mesh, points along every limb — never with the engine's figures.

The zigzag (Jo & Choi's experiment): four 0.8 m cells across the direction of travel starting
0.3 m ahead of the character, the 1st and 3rd raised to ankle or knee height (measured here on the
Blender bones), on a ground at z = 0 while the motions are made on the rig's own sole height.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import bpy
import harness
import numpy as np
import pytest
from mathutils import Matrix, Vector
from mathutils.bvhtree import BVHTree

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cmu_skeleton  # noqa: E402

LEG_BONES = [f"{r}.{s}" for s in "LR" for r in ("thigh", "shin", "foot", "toe")]
ARM_BONES = [f"{r}.{s}" for s in "LR" for r in ("upper_arm", "forearm", "hand")]
THICK = {"thigh", "shin", "upper_arm", "forearm"}  # limbs checked as 4 cm thick tubes, others on their axis
TUBE_R = 0.02
TOLERANCE = 0.002  # a point deeper than 2 mm under the surface is a collision


# ----------------------------------------------------------------------------- scene helpers


def add_human(name="Human"):
    assert bpy.ops.procanim.add_human(name=name) == {"FINISHED"}
    return bpy.data.objects[name]


def add_mesh(name, verts, faces):
    me = bpy.data.meshes.new(name)
    me.from_pydata([tuple(map(float, v)) for v in verts], [], faces)
    me.update()
    obj = bpy.data.objects.new(name, me)
    bpy.context.collection.objects.link(obj)
    return obj


def add_flat(name, z, size=40.0):
    h = size / 2
    return add_mesh(name, [(-h, -h, z), (h, -h, z), (h, h, z), (-h, h, z)], [(0, 1, 2, 3)])


def add_zigzag(name, height, ground_z=0.0, y0=-0.3, cell=0.8, width=3.0, margin=10.0):
    """Ground at ``ground_z`` and blocks of ``height`` on cells 1 and 3 along −Y (the human's forward)."""
    y_end = y0 - 4 * cell
    verts = [(-margin, y0 + margin, ground_z), (margin, y0 + margin, ground_z)]
    verts += [(margin, y_end - margin, ground_z), (-margin, y_end - margin, ground_z)]
    faces = [(0, 3, 2, 1)]
    for k in (0, 2):
        ya, yb = y0 - k * cell, y0 - (k + 1) * cell
        base = len(verts)
        for z in (ground_z, ground_z + height):
            verts += [(-width / 2, ya, z), (-width / 2, yb, z), (width / 2, yb, z), (width / 2, ya, z)]
        faces.append((base + 4, base + 5, base + 6, base + 7))
        faces += [(base + a, base + (a + 1) % 4, base + 4 + (a + 1) % 4, base + 4 + a) for a in range(4)]
    return add_mesh(name, verts, faces)


def body_heights(obj):
    """Rest heights above the soles, from the Blender bones: ankle, knee, waist."""
    b = obj.data.bones
    sole = min(min(b[n].head_local.z, b[n].tail_local.z) for n in ("foot.L", "foot.R", "toe.L", "toe.R"))
    mean = lambda n: 0.5 * (b[f"{n}.L"].head_local.z + b[f"{n}.R"].head_local.z)  # noqa: E731
    return sole, {"ankle": mean("foot") - sole, "knee": mean("shin") - sole, "waist": b["hips"].tail_local.z - sole}


def action_of(obj):
    return obj.animation_data.action


def metrics_of(obj):
    return json.loads(action_of(obj).procanim.metrics_json)


def frames_of(obj):
    lo, hi = action_of(obj).frame_range
    return list(range(int(round(lo)), int(round(hi)) + 1))


def world_poses(obj, frames):
    """{frame: {bone: (4, 4) world matrix}} of the evaluated pose."""
    return {f: harness.evaluated_pose(obj, f, space="WORLD") for f in frames}


# ----------------------------------------------------------------------------- independent measures


class Surface:
    """The terrain mesh as a BVH tree (world space): height of the highest surface over a point."""

    def __init__(self, obj):
        mw = obj.matrix_world
        verts = [mw @ v.co for v in obj.data.vertices]
        self.tree = BVHTree.FromPolygons(verts, [tuple(p.vertices) for p in obj.data.polygons])

    def height(self, p) -> float:
        hit = self.tree.ray_cast(Vector((p[0], p[1], 100.0)), Vector((0.0, 0.0, -1.0)))
        return hit[0].z if hit[0] is not None else -math.inf


def limb_points(m, length, thick):
    """Points along a posed bone (world matrix ``m``): its axis, and for thick limbs a square tube."""
    head, x, y, z = m[:3, 3], m[:3, 0], m[:3, 1], m[:3, 2]
    offsets = [np.zeros(3)]
    if thick:
        offsets += [s * TUBE_R * a for a in (x, z) for s in (-1.0, 1.0)]
    t = np.linspace(0.0, 1.0, 11)[:, None]
    return np.concatenate([head + o + t * length * y for o in offsets])


def penetration(obj, poses, surface, bones):
    """{frame: deepest point of the limbs under the surface (m, ≤ 0 when clear)}."""
    lengths = {b.name: b.length for b in obj.data.bones}
    out = {}
    for f, pose in poses.items():
        depth = -math.inf
        for name in bones:
            for p in limb_points(pose[name], lengths[name], name.split(".")[0] in THICK):
                depth = max(depth, surface.height(p) - p[2])
        out[f] = depth
    return out


def sole_points(pose, side):
    """Ball (foot tail) and toe tip (toe tail) of one foot, world space."""
    pts = []
    for name in (f"foot.{side}", f"toe.{side}"):
        m = pose[name]
        pts.append(m[:3, 3] + m[:3, 1] * bpy.data.objects["Human"].data.bones[name].length)
    return pts


def bone_length_error(obj, poses):
    """Largest relative change (fraction) of head→tail lengths and of head→parent-head distances."""
    bones = obj.data.bones
    worst = 0.0
    for pose in poses.values():
        for b in bones:
            m = pose[b.name]
            worst = max(worst, abs(np.linalg.norm(m[:3, 1]) - 1.0))  # posed length = |Y axis| × rest length
            if b.parent is not None and b.parent.name != "root" and b.name != "hips":
                rest = (b.head_local - b.parent.head_local).length
                if rest > 1e-6:
                    posed = np.linalg.norm(m[:3, 3] - pose[b.parent.name][:3, 3])
                    worst = max(worst, abs(posed - rest) / rest)
    return worst


# ----------------------------------------------------------------------------- the paper's experiment


CASES = [
    ("WALK", "ankle"),
    ("WALK", "knee"),
    ("JUMP", "ankle"),
    ("JUMP", "knee"),
    ("TUMBLE", "ankle"),
    ("TUMBLE", "knee"),
]


@pytest.mark.parametrize(("kind", "level"), CASES)
def test_zigzag_no_collisions_lengths_kept_feet_on_the_terrain(kind, level):
    human = add_human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind=kind) == {"FINISHED"}
    source_action = action_of(human)
    frames = frames_of(human)
    sole_z, heights = body_heights(human)
    terrain = add_zigzag("Zigzag", heights[level])
    surface = Surface(terrain)
    bones = LEG_BONES + ARM_BONES
    before = world_poses(human, frames)
    # the check can fail: the motion made on flat ground passes through the blocks
    assert max(penetration(human, before, surface, bones).values()) > 0.5 * heights[level]

    assert bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=terrain.name) == {"FINISHED"}
    adapted = action_of(human)
    assert adapted != source_action and adapted.procanim.generator == "adapt_terrain"
    assert adapted.procanim.previous_action == source_action.name and source_action.use_fake_user
    after = world_poses(human, frames)

    deepest = penetration(human, after, surface, bones)
    colliding = [f for f, d in deepest.items() if d > TOLERANCE]
    assert not colliding, f"{kind} at {level} height: limbs under the terrain at frames {colliding}"
    assert bone_length_error(human, after) < 1e-4  # < 0.01 %

    # contact frames of the source (ball or toe tip within 5 mm of its own ground) touch the terrain
    contacts = 0
    for f in frames:
        for side in "LR":
            gap_src = min(p[2] for p in sole_points(before[f], side)) - sole_z
            if gap_src > 0.005:
                continue
            contacts += 1
            gap = min(p[2] - surface.height(p) for p in sole_points(after[f], side))
            assert abs(gap - gap_src) < 0.01, f"{kind} {level}: foot.{side} {gap * 100:.2f} cm off the terrain at {f}"
    assert contacts > 10
    if kind != "TUMBLE" and level == "knee":  # not just lifted clear: the feet stand on the block tops
        on_top = [
            f
            for f in frames
            for side in "LR"
            if abs(min(p[2] for p in sole_points(after[f], side)) - heights[level]) < 0.01
        ]
        assert len(on_top) > 5

    m = metrics_of(human)
    assert m["bone_length_error_pct"] < 0.01 and m["contact_error_cm_max"] < 1.0
    if kind == "TUMBLE":  # the roll presses arms and legs on the floor even on flat ground (the engine's boxes)
        assert m["collisions"] <= m["source_collisions"]
    else:
        assert m["collisions"] == 0
    for key in ("collisions_leg_L", "collisions_leg_R", "collisions_arm_L", "collisions_arm_R", "solve_time_s"):
        assert key in m


def test_moved_armature_and_scaled_terrain_objects_are_read_in_world_space():
    """The armature stands elsewhere, turned 90°; the terrain object is placed with it and its mesh is
    half height, scaled ×2 in Z by the object: the walk climbs the knee-high blocks all the same."""
    human = add_human()
    human.location = (2.0, 1.0, 0.0)
    human.rotation_euler = (0.0, 0.0, math.pi / 2)
    bpy.context.view_layer.update()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=4) == {"FINISHED"}
    frames = frames_of(human)
    sole_z, heights = body_heights(human)
    terrain = add_zigzag("Zigzag", heights["knee"] / 2)
    terrain.matrix_world = human.matrix_world @ Matrix.Diagonal((1.0, 1.0, 2.0, 1.0))
    bpy.context.view_layer.update()
    surface = Surface(terrain)
    bones = LEG_BONES + ARM_BONES
    before = world_poses(human, frames)
    assert max(penetration(human, before, surface, bones).values()) > 0.2
    assert bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=terrain.name) == {"FINISHED"}
    after = world_poses(human, frames)
    assert max(penetration(human, after, surface, bones).values()) < TOLERANCE
    on_top = sum(
        abs(min(p[2] for p in sole_points(after[f], side)) - heights["knee"]) < 0.01 for f in frames for side in "LR"
    )
    assert on_top > 5
    # the walk went along world +X (the armature's −Y turned by 90°)
    assert after[frames[-1]]["hips"][0, 3] - after[frames[0]]["hips"][0, 3] > 1.0


# ----------------------------------------------------------------------------- identity, re-runs


def test_flat_to_flat_is_the_identity_and_a_second_run_adapts_the_original():
    human = add_human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=3) == {"FINISHED"}
    walk = action_of(human)
    frames = frames_of(human)
    sole_z, heights = body_heights(human)
    before = world_poses(human, frames[::3])
    zigzag = add_zigzag("Zigzag", heights["knee"])
    flat = add_flat("Flat", sole_z)

    assert bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=zigzag.name) == {"FINISHED"}
    lifted = world_poses(human, frames[::3])
    assert max(abs(lifted[f]["hips"][2, 3] - before[f]["hips"][2, 3]) for f in before) > 0.1
    first = action_of(human)
    # second run, onto flat ground at the motion's own height: it adapts the walk, not the first result
    assert bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=flat.name) == {"FINISHED"}
    assert action_of(human) == first, "a re-run replaces its own bake"
    assert first.procanim.previous_action == walk.name and walk.use_fake_user
    assert sum(a.procanim.generator == "adapt_terrain" for a in bpy.data.actions) == 1
    after = world_poses(human, frames[::3])
    for f in before:
        for name in before[f]:
            np.testing.assert_allclose(after[f][name], before[f][name], atol=1e-4, err_msg=f"{name} at {f}")


def test_a_reference_mesh_and_a_frame_range():
    """The motion made on a ground 0.1 m below its soles, adapted to one 0.1 m above: +0.2 m, and only
    the frames asked for are keyed."""
    human = add_human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="JUMP") == {"FINISHED"}
    sole_z, _h = body_heights(human)
    frames = list(range(5, 31))
    before = world_poses(human, frames[::5])
    low, high = add_flat("Low", sole_z - 0.1), add_flat("High", sole_z + 0.1)
    result = bpy.ops.procanim.adapt_terrain(
        armature=human.name, terrain=high.name, reference=low.name, frame_start=5, frame_end=30
    )
    assert result == {"FINISHED"}
    for fc in harness.fcurves_of(action_of(human), human):
        np.testing.assert_array_equal(harness.keyframes(fc)[:, 0], frames)
    after = world_poses(human, frames[::5])
    for f in before:
        for name in ("hips", "head", "foot.L", "toe.R", "hand.L"):
            np.testing.assert_allclose(after[f][name][:3, 3], before[f][name][:3, 3] + [0, 0, 0.2], atol=1e-4)


def test_a_motion_made_on_the_zigzag_comes_down_onto_flat_ground():
    """The terrain lowered (the paper's other case): a walk over the blocks, kept as a plain action,
    adapted with the zigzag as reference to a flat floor — feet that stood on the blocks stand on the
    floor, nothing goes under it."""
    human = add_human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=5) == {"FINISHED"}
    frames = frames_of(human)
    sole_z, heights = body_heights(human)
    zigzag = add_zigzag("Zigzag", heights["knee"], ground_z=sole_z)
    flat = add_flat("Flat", sole_z)
    assert bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=zigzag.name) == {"FINISHED"}
    on_blocks = action_of(human).copy()  # as if keyed or imported: not a ProcAnim terrain bake
    on_blocks.name = "OnBlocks"
    on_blocks.procanim.generator = on_blocks.procanim.owner = ""
    human.animation_data.action = on_blocks
    if hasattr(human.animation_data, "action_slot"):  # Blender 4.4+: the copy's slot drives the object
        human.animation_data.action_slot = on_blocks.slots[0]
    source = world_poses(human, frames)
    high, low = Surface(zigzag), Surface(flat)
    assert max(min(p[2] for p in sole_points(source[f], "L")) for f in frames) > sole_z + 0.8 * heights["knee"]

    result = bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=flat.name, reference=zigzag.name)
    assert result == {"FINISHED"}
    assert action_of(human).procanim.previous_action == "OnBlocks"
    after = world_poses(human, frames)
    assert max(penetration(human, after, low, LEG_BONES + ARM_BONES).values()) < TOLERANCE
    contacts = 0
    for f in frames:
        for side in "LR":
            if min(p[2] - high.height(p) for p in sole_points(source[f], side)) < 0.005:
                contacts += 1
                assert abs(min(p[2] for p in sole_points(after[f], side)) - sole_z) < 0.01, (f, side)
    assert contacts > 10
    assert bone_length_error(human, after) < 1e-4


def test_a_hand_keyed_action_with_euler_bones_is_lifted_onto_a_raised_floor():
    """Keys set by hand on a few bones (Euler and quaternion), the rest unkeyed: on a floor 0.12 m higher
    every bone is 0.12 m higher and turned exactly as before."""
    human = add_human()
    pb = human.pose.bones
    pb["upper_arm.L"].rotation_mode = "XYZ"
    pb["spine"].rotation_mode = "ZXY"
    for frame, wave, sway in ((1, 0.0, 0.0), (8, 1.0, 0.03), (16, 0.2, -0.03), (24, 0.0, 0.0)):
        pb["upper_arm.L"].rotation_euler = (wave, 0.0, 0.4 * wave)
        pb["upper_arm.L"].keyframe_insert("rotation_euler", frame=frame)
        pb["spine"].rotation_euler = (0.0, 0.0, 0.3 * wave)
        pb["spine"].keyframe_insert("rotation_euler", frame=frame)
        pb["hips"].location = (sway, 0.0, 0.0)
        pb["hips"].keyframe_insert("location", frame=frame)
        pb["head"].rotation_quaternion = (math.cos(0.2 * wave), 0.0, 0.0, math.sin(0.2 * wave))
        pb["head"].keyframe_insert("rotation_quaternion", frame=frame)
    keyed = action_of(human)
    frames = list(range(1, 25))
    sole_z, _h = body_heights(human)
    before = world_poses(human, frames)
    terrain = add_flat("Raised", sole_z + 0.12)
    assert bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=terrain.name) == {"FINISHED"}
    assert action_of(human) != keyed and keyed.use_fake_user
    after = world_poses(human, frames)
    for f in frames:
        for name in before[f]:
            if name == "root":  # the static control under the hips stays where it is
                continue
            np.testing.assert_allclose(after[f][name][:3, 3], before[f][name][:3, 3] + [0, 0, 0.12], atol=1e-4)
            np.testing.assert_allclose(after[f][name][:3, :3], before[f][name][:3, :3], atol=1e-4)


# ----------------------------------------------------------------------------- an imported BVH

BVH = """HIERARCHY
ROOT Hips
{
  OFFSET 0.0 0.0 0.0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT LeftUpLeg
  {
    OFFSET 0.1 -0.05 0.0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT LeftLeg
    {
      OFFSET 0.0 -0.42 0.0
      CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT LeftFoot
      {
        OFFSET 0.0 -0.42 0.0
        CHANNELS 3 Zrotation Xrotation Yrotation
        JOINT LeftToeBase
        {
          OFFSET 0.0 -0.06 0.13
          CHANNELS 3 Zrotation Xrotation Yrotation
          End Site
          {
            OFFSET 0.0 0.0 0.07
          }
        }
      }
    }
  }
  JOINT RightUpLeg
  {
    OFFSET -0.1 -0.05 0.0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT RightLeg
    {
      OFFSET 0.0 -0.42 0.0
      CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT RightFoot
      {
        OFFSET 0.0 -0.42 0.0
        CHANNELS 3 Zrotation Xrotation Yrotation
        JOINT RightToeBase
        {
          OFFSET 0.0 -0.06 0.13
          CHANNELS 3 Zrotation Xrotation Yrotation
          End Site
          {
            OFFSET 0.0 0.0 0.07
          }
        }
      }
    }
  }
  JOINT Spine
  {
    OFFSET 0.0 0.12 0.0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Neck
    {
      OFFSET 0.0 0.4 0.0
      CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT Head
      {
        OFFSET 0.0 0.1 0.0
        CHANNELS 3 Zrotation Xrotation Yrotation
        End Site
        {
          OFFSET 0.0 0.18 0.0
        }
      }
    }
  }
}
MOTION
Frames: 12
Frame Time: 0.0416667
"""


def bvh_text(unit: float) -> str:
    """The BVH above, its lengths in ``unit`` per metre (1: metres, 100: centimetres)."""
    lines = []
    for line in (BVH + bvh_frames()).splitlines():
        words = line.split()
        if words and words[0] == "OFFSET":
            line = line[: line.index("OFFSET")] + "OFFSET " + " ".join(f"{float(w) * unit:.6f}" for w in words[1:])
        elif len(words) > 30:  # a frame of motion: the hips position channels come first
            values = [float(w) for w in words]
            values[:3] = [v * unit for v in values[:3]]
            line = " ".join(f"{v:.6f}" for v in values)
        lines.append(line)
    return "\n".join(lines) + "\n"


def bvh_frames():
    """Hips drift forward (+Z, BVH's forward) and sway; the knees bend a little and straighten, the
    feet stay flat (the ankle undoes the knee), so every frame stands on the ground."""
    lines = []
    for f in range(12):
        bend = 10.0 * math.sin(math.pi * f / 11)  # knee bend (deg)
        drop = 0.42 * (1 - math.cos(math.radians(bend / 2))) * 2  # hip drop for a symmetric bend
        hips = [0.01 * math.sin(f / 2), 1.0 - drop, 0.01 * f, 0.0, 0.0, 3.0 * math.sin(f / 3)]
        leg = [0.0, -bend / 2, 0.0, 0.0, bend, 0.0, 0.0, -bend / 2, 0.0, 0.0, 0.0, 0.0]
        upper = [0.0, 2.0 * math.sin(f / 4), 0.0] * 3
        lines.append(" ".join(f"{v:.6f}" for v in hips + leg + leg + upper))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("unit", [1.0, 100.0], ids=["metres", "centimetres-object-scaled"])
def test_an_imported_bvh_armature_is_adapted(tmp_path, unit):
    """A BVH in metres, and one in centimetres whose armature object is scaled by 0.01 (as mocap often
    is): both stand on a floor raised 0.15 m (world) after the adaptation."""
    path = tmp_path / "stand.bvh"
    path.write_text(bvh_text(unit))
    assert bpy.ops.import_anim.bvh(filepath=str(path), rotate_mode="NATIVE") == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    arm.scale = (1.0 / unit,) * 3
    bpy.context.view_layer.update()
    assert arm.pose.bones["LeftLeg"].rotation_mode != "QUATERNION"  # Euler channels, as imported
    assert bpy.ops.procanim.detect_rig(armature=arm.name) == {"FINISHED"}
    source = action_of(arm)
    frames = frames_of(arm)
    before = world_poses(arm, frames)
    toe_tip = lambda pose, n: pose[n][:3, 3] + pose[n][:3, 1] * arm.data.bones[n].length  # noqa: E731 (world)
    sole_z = min(toe_tip(p, n)[2] for p in before.values() for n in ("LeftToeBase", "RightToeBase"))
    terrain = add_flat("Raised", sole_z + 0.15)
    assert bpy.ops.procanim.adapt_terrain(armature=arm.name, terrain=terrain.name) == {"FINISHED"}
    assert action_of(arm) != source and source.use_fake_user
    after = world_poses(arm, frames)
    for f in frames:
        for name in before[f]:
            np.testing.assert_allclose(
                after[f][name][:3, 3], before[f][name][:3, 3] + [0, 0, 0.15], atol=1e-4, err_msg=f"{name} at {f}"
            )
        for n in ("LeftToeBase", "RightToeBase"):
            assert abs(toe_tip(after[f], n)[2] - toe_tip(before[f], n)[2] - 0.15) < 0.01


# ----------------------------------------------------------------------------- a captured skeleton on its own floor

def add_box(name, top, size=40.0, depth=0.5):
    """A closed box mesh whose top face is at ``top`` (m)."""
    h = size / 2
    verts = [(x, y, z) for z in (top - depth, top) for x, y in ((-h, -h), (h, -h), (h, h), (-h, h))]
    faces = [(4, 5, 6, 7), (0, 3, 2, 1)] + [(a, (a + 1) % 4, 4 + (a + 1) % 4, 4 + a) for a in range(4)]
    return add_mesh(name, verts, faces)


def captured_skeleton_walk(tmp_path):
    """The CMU skeleton imported from its BVH (``rotate_mode="NATIVE"``, 24 fps), ProcAnim's source walk
    baked on it; returns the armature, its frames, the evaluated world poses, and the lowest height
    its toe tips reach."""
    bpy.context.scene.render.fps = 24
    path = tmp_path / "cmu_skeleton.bvh"
    path.write_text(cmu_skeleton.bvh_text())
    assert bpy.ops.import_anim.bvh(filepath=str(path), global_scale=cmu_skeleton.UNIT_M, rotate_mode="NATIVE") == {
        "FINISHED"
    }
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert bpy.ops.procanim.detect_rig(armature=arm.name) == {"FINISHED"}
    assert bpy.ops.procanim.source_motion(armature=arm.name, kind="WALK", steps=6) == {"FINISHED"}
    frames = frames_of(arm)
    poses = world_poses(arm, frames)
    length = {b.name: b.length for b in arm.data.bones}
    toe_tip = lambda m, n: m[:3, 3] + m[:3, 1] * length[n]  # noqa: E731
    lowest = min(toe_tip(p[n], n)[2] for p in poses.values() for n in ("LeftToeBase", "RightToeBase"))
    return arm, frames, poses, lowest


def joint_moves(arm, before, after):
    """Per frame, the largest distance (m) any bone's head or tail moved."""
    length = {b.name: b.length for b in arm.data.bones}
    out = {}
    for f in before:
        out[f] = max(
            max(np.linalg.norm(after[f][n][:3, 3] - before[f][n][:3, 3]),
                np.linalg.norm(after[f][n][:3, 3] + after[f][n][:3, 1] * length[n]
                               - before[f][n][:3, 3] - before[f][n][:3, 1] * length[n]))
            for n in before[f])
    return out


def test_a_captured_skeleton_on_flat_ground_at_its_own_floor_does_not_move(tmp_path):
    """Issue 26 item 2: a walk on a CMU-named BVH skeleton adapted onto a flat box whose top is the
    lowest point its toe tips reach changes no joint by more than 2 mm (before: the shins' boxes,
    thicker than the low ankle stands above the sole, counted as collisions with their own floor and
    the hips were raised); the source has no collision with its own floor."""
    arm, frames, before, floor = captured_skeleton_walk(tmp_path)
    box = add_box("Floor", floor)
    assert bpy.ops.procanim.adapt_terrain(armature=arm.name, terrain=box.name) == {"FINISHED"}
    after = world_poses(arm, frames)
    moved = joint_moves(arm, before, after)
    worst = max(moved, key=moved.get)
    assert moved[worst] <= 0.002, f"a joint moved {moved[worst] * 100:.2f} cm at frame {worst}"
    m = metrics_of(arm)
    assert m["source_collisions"] == 0 and m["collisions"] == 0


def test_a_captured_skeleton_below_the_floor_is_still_lifted(tmp_path):
    """The same walk onto a box 3 cm above its floor: it is genuinely below that floor, and every
    joint is lifted by the 3 cm (within 2 mm); no toe tip stays under the box's top."""
    arm, frames, before, floor = captured_skeleton_walk(tmp_path)
    box = add_box("Floor", floor + 0.03)
    assert bpy.ops.procanim.adapt_terrain(armature=arm.name, terrain=box.name) == {"FINISHED"}
    after = world_poses(arm, frames)
    lifted = {f: {n: a.copy() for n, a in pose.items()} for f, pose in before.items()}
    for pose in lifted.values():
        for m in pose.values():
            m[2, 3] += 0.03
    moved = joint_moves(arm, lifted, after)
    worst = max(moved, key=moved.get)
    assert moved[worst] <= 0.002, f"a joint is {moved[worst] * 100:.2f} cm off the 3 cm lift at frame {worst}"
    length = {b.name: b.length for b in arm.data.bones}
    toes = [p[n][2, 3] + p[n][2, 1] * length[n] for p in after.values() for n in ("LeftToeBase", "RightToeBase")]
    assert min(toes) >= floor + 0.03 - 0.002


def heel_and_ball(arm, pose, foot, toe):
    """The heel (under the ankle, at the rest pose's sole height) and the ball (the foot's tail) of a
    foot in world space, from the evaluated ``pose``; the sole height is the lowest of the foot's tail
    and the toe's head and tail in the rest pose."""
    bones = arm.data.bones
    sole = min(bones[foot].tail_local.z, bones[toe].head_local.z, bones[toe].tail_local.z)
    head = bones[foot].head_local
    heel_rest = np.array([head.x, head.y, sole, 1.0])
    heel_local = np.linalg.inv(np.array(bones[foot].matrix_local)) @ heel_rest
    m = pose[foot]  # world @ pose_bone.matrix: the foot's rest frame → world
    return (m @ heel_local)[:3], m[:3, 3] + m[:3, 1] * bones[foot].length


def sole_depths(arm, poses, surface, feet):
    """{frame: how deep (m) the deepest heel or ball of ``feet`` ((foot, toe) bone names) is inside
    the surface (≤ 0: none is)}."""
    return {f: max(surface.height(p) - p[2] for foot, toe in feet for p in heel_and_ball(arm, pose, foot, toe))
            for f, pose in poses.items()}


def test_no_heel_or_ball_sinks_into_a_block_unreported():
    """Issue 28 item 4: the walk over 10 cm blocks; before, the heel rolling off a block's far edge
    was 3.4 cm inside it (the heel was in no collision box) with 0 collisions reported. Measured on
    the evaluated pose: no heel or ball more than 1 cm inside on any frame, and every frame where one
    is more than 2 mm inside is among the reported ``unfixed_frames``."""
    human = add_human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=7) == {"FINISHED"}
    sole_z, _h = body_heights(human)
    terrain = add_zigzag("Blocks", 0.10, ground_z=sole_z, y0=-0.4, cell=0.6)
    surface = Surface(terrain)
    feet = [(f"foot.{s}", f"toe.{s}") for s in "LR"]
    before = sole_depths(human, world_poses(human, frames_of(human)), surface, feet)
    assert max(before.values()) > 0.05  # the blocks are in the walk's way
    assert bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=terrain.name) == {"FINISHED"}
    after = sole_depths(human, world_poses(human, frames_of(human)), surface, feet)
    deep = {f: round(v * 100, 2) for f, v in after.items() if v > 0.01}
    assert deep == {}, f"heels or balls more than 1 cm inside a block (cm): {deep}"
    inside = {f for f, v in after.items() if v > TOLERANCE}
    assert inside <= set(metrics_of(human)["unfixed_frames"])


# ----------------------------------------------------------------------------- real motion capture

MOCAP_PACKAGE = "bvhtoolbox==0.1.3"  # its source package ships a captured Mixamo walk (MIT)
MOCAP_MEMBER = "bvhtoolbox-0.1.3/tests/example_files/test_freebvh.bvh"


def captured_walk() -> str:
    """The captured walk (four steps forward, four back, 69 frames at 30 fps, swing feet 2–5 cm above
    the floor), fetched once with pip into ~/.cache/procanim/mocap; the test is skipped, saying why,
    where the package index cannot be reached."""
    import subprocess
    import sys
    import tarfile
    from pathlib import Path

    cache = Path.home() / ".cache" / "procanim" / "mocap"
    out = cache / "test_freebvh.bvh"
    if not out.exists():
        cache.mkdir(parents=True, exist_ok=True)
        got = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q",
                              "-d", str(cache), MOCAP_PACKAGE], capture_output=True, text=True)
        if got.returncode != 0:
            pytest.skip(f"the captured walk ({MOCAP_PACKAGE} on PyPI) could not be fetched: {got.stderr[-200:]}")
        with tarfile.open(next(cache.glob("bvhtoolbox-0.1.3.tar.gz"))) as tar:
            out.write_bytes(tar.extractfile(MOCAP_MEMBER).read())
    return str(out)


def mocap_over_zigzag(level: str, start: float, cell: float):
    """The captured walk imported (cm → m), its roles detected, a zigzag of two raised ``cell`` m cells
    across its path ``start`` m ahead at its ankle or knee height; returns (armature, terrain,
    evaluated poses before, leg bone names)."""
    assert bpy.ops.import_anim.bvh(filepath=captured_walk(), global_scale=0.01, rotate_mode="NATIVE") == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert bpy.ops.procanim.detect_rig(armature=arm.name) == {"FINISHED"}
    frames = frames_of(arm)
    before = world_poses(arm, frames)
    legs = [b.name for b in arm.data.bones if b.name.split(":")[-1][4:] in ("UpLeg", "Leg", "Foot", "ToeBase")
            or b.name.split(":")[-1][5:] in ("UpLeg", "Leg", "Foot", "ToeBase")]
    assert len(legs) == 8, legs
    length = {b.name: b.length for b in arm.data.bones}
    tip = lambda m, n: m[:3, 3] + m[:3, 1] * length[n]  # noqa: E731 (world: the import scale is in the bones)
    sole = min(min(p[n][2, 3], tip(p[n], n)[2]) for p in before.values() for n in legs)
    first = before[frames[0]]
    joint = "Foot" if level == "ankle" else "Leg"
    height = np.mean([first[n][2, 3] for n in legs if n.endswith(("Left" + joint, "Right" + joint))]) - sole
    hips = np.array([p[arm.data.bones[0].name][:3, 3] for p in before.values()])
    d = hips[len(hips) // 2, :2] - hips[0, :2]
    d /= np.linalg.norm(d)
    side = np.array([-d[1], d[0]])
    origin = hips[0, :2] + start * d
    verts = [np.r_[origin + a * 20 * d + b * 20 * side, sole] for a, b in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
    faces = [(0, 1, 2, 3)]
    for k in (0, 2):
        a, b = origin + k * cell * d, origin + (k + 1) * cell * d
        base = len(verts)
        for z in (sole, sole + height):
            verts += [np.r_[p, z] for p in (a - 1.5 * side, b - 1.5 * side, b + 1.5 * side, a + 1.5 * side)]
        faces.append((base + 4, base + 5, base + 6, base + 7))
        faces += [(base + i, base + (i + 1) % 4, base + 4 + (i + 1) % 4, base + 4 + i) for i in range(4)]
    return arm, add_mesh("Zigzag", verts, faces), before, legs


def leg_depths(arm, poses, surface, legs):
    """{frame: deepest point of the legs under the surface (m)}: points along every leg bone's axis."""
    length = {b.name: b.length for b in arm.data.bones}
    out = {}
    for f, pose in poses.items():
        out[f] = max(surface.height(p) - p[2] for n in legs for p in limb_points(pose[n], length[n], False))
    return out


@pytest.mark.parametrize("start", [0.2, 0.4])
def test_captured_walk_over_ankle_high_blocks_never_cuts_them(start):
    """Issue 15: the captured walk's feet skim the floor and roll over the blocks' edges; before the
    planted-foot lift 1–3 frames cut ankle-high blocks by up to 3.4 cm (bench/terrain_mocap.py).
    Measured here on the evaluated pose: none, bone lengths kept, nothing reported unfixed."""
    arm, terrain, before, legs = mocap_over_zigzag("ankle", start, cell=0.45)
    surface = Surface(terrain)
    assert sum(v > TOLERANCE for v in leg_depths(arm, before, surface, legs).values()) > 20  # the blocks are in its way
    assert bpy.ops.procanim.adapt_terrain(armature=arm.name, terrain=terrain.name) == {"FINISHED"}
    after = world_poses(arm, frames_of(arm))
    deep = {f: round(v * 100, 1) for f, v in leg_depths(arm, after, surface, legs).items() if v > TOLERANCE}
    assert deep == {}, f"frames cutting the blocks (cm): {deep}"
    feet = [(f"{prefix}{side}Foot", f"{prefix}{side}ToeBase") for side in ("Left", "Right")
            for prefix in {n[: n.index(side + "Foot")] for n in legs if n.endswith(side + "Foot")}]
    soles = {f: round(v * 100, 1) for f, v in sole_depths(arm, after, surface, feet).items() if v > 0.01}
    assert soles == {}, f"heels or balls more than 1 cm inside a block (cm): {soles}"
    assert metrics_of(arm)["unfixed_frames"] == []
    assert bone_length_error(arm, after) < 1e-4


def test_captured_walk_into_knee_high_blocks_reports_what_it_cannot_clear():
    """Walking back into knee-high blocks does not fit them: the frames that still cut a block on the
    evaluated pose are among those the adaptation reports (``unfixed_frames``), none is hidden."""
    arm, terrain, before, legs = mocap_over_zigzag("knee", 0.5, cell=0.55)
    surface = Surface(terrain)
    assert bpy.ops.procanim.adapt_terrain(armature=arm.name, terrain=terrain.name, refuse_infeasible=False) == {
        "FINISHED"
    }
    reported = set(metrics_of(arm)["unfixed_frames"])
    cutting = {f for f, v in leg_depths(arm, world_poses(arm, frames_of(arm)), surface, legs).items() if v > TOLERANCE}
    assert cutting, "this walk cannot clear knee-high blocks everywhere"
    assert cutting <= reported, f"cut but not reported: {sorted(cutting - reported)}"


# ----------------------------------------------------------------------------- bad input


def _snapshot(obj):
    ad = obj.animation_data
    return (ad.action if ad else None, len(bpy.data.actions), len(bpy.data.objects))


def test_bad_input_is_cancelled_with_a_message_and_nothing_changes():
    human = add_human()
    terrain = add_zigzag("Zigzag", 0.1)
    with pytest.raises(RuntimeError, match="'Human' has no action to adapt"):
        bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=terrain.name)
    assert human.animation_data is None or human.animation_data.action is None

    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=2) == {"FINISHED"}
    walk = action_of(human)
    before = _snapshot(human)
    cases = [
        (dict(terrain=add_mesh("Dots", [(0, 0, 0), (1, 0, 0), (0, 1, 0)], []).name), "terrain 'Dots' has no faces"),
        (dict(terrain=terrain.name, reference=terrain.name), "same object 'Zigzag'"),
        (dict(terrain=terrain.name, reference=add_zigzag("Copy", 0.1).name), "same surface"),
        (dict(terrain=terrain.name, frame_start=200, frame_end=260), "outside the action"),
        (dict(terrain=terrain.name, frame_start=20, frame_end=10), r"end frame \(10\) must come after"),
        (dict(terrain=human.name), "'Human' is an armature; the terrain must be a mesh"),
        (dict(terrain="Nowhere"), "no object named 'Nowhere'"),
        (dict(terrain=""), "Pick a terrain"),
    ]
    for kwargs, message in cases:
        with pytest.raises(RuntimeError, match=message):
            bpy.ops.procanim.adapt_terrain(armature=human.name, **kwargs)
        assert _snapshot(human)[0] == walk and _snapshot(human)[1] == before[1], kwargs
    human.scale = (1.0, 1.0, 2.0)
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match="'Human' must have a uniform, positive scale"):
        bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=terrain.name)
    assert action_of(human) == walk and not any(a.procanim.generator == "adapt_terrain" for a in bpy.data.actions)


def test_an_action_that_moves_the_armature_object_is_refused():
    human = add_human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=2) == {"FINISHED"}
    walk = action_of(human)
    human.location = (0.0, 0.0, 0.0)
    human.keyframe_insert("location", frame=1)  # a test may key by hand; the add-on never does
    human.location = (0.0, -1.0, 0.0)
    human.keyframe_insert("location", frame=20)
    n_actions = len(bpy.data.actions)
    terrain = add_zigzag("Zigzag", 0.1)
    with pytest.raises(RuntimeError, match=r"animates the object 'Human' itself \(location\)"):
        bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=terrain.name)
    assert action_of(human) == walk and len(bpy.data.actions) == n_actions


def test_a_terrain_the_walk_cannot_climb_is_refused_by_default():
    human = add_human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=3) == {"FINISHED"}
    walk = action_of(human)
    _sole, heights = body_heights(human)
    terrain = add_zigzag("Wall", heights["waist"])
    with pytest.raises(RuntimeError, match="rises .* m .*can step"):
        bpy.ops.procanim.adapt_terrain(armature=human.name, terrain=terrain.name)
    assert action_of(human) == walk


def test_source_motions_are_baked_on_the_ground():
    """Walk, jump and tumble start standing on the rig's own soles and touch the ground throughout."""
    human = add_human()
    sole_z, _h = body_heights(human)
    for kind in ("WALK", "JUMP", "TUMBLE"):
        assert bpy.ops.procanim.source_motion(armature=human.name, kind=kind) == {"FINISHED"}
        action = action_of(human)
        assert action.procanim.generator == "source_motion"  # a re-run replaces its own bake
        assert json.loads(action.procanim.metrics_json)["motion"] == kind.lower()
        pose = harness.evaluated_pose(human, frames_of(human)[0], space="WORLD")
        for side in "LR":
            assert abs(min(p[2] for p in sole_points(pose, side)) - sole_z) < 1e-3


@pytest.mark.parametrize("turned", [False, True])
def test_add_zigzag_builds_the_papers_terrain_in_front_of_the_character(turned):
    human = add_human()
    if turned:
        human.rotation_euler = (0.0, 0.0, math.pi / 2)  # faces world +X instead of −Y
        bpy.context.view_layer.update()
    sole_z, heights = body_heights(human)
    assert bpy.ops.procanim.add_zigzag(armature=human.name, level="KNEE", name="ZZ") == {"FINISHED"}
    terrain = bpy.data.objects["ZZ"]
    assert bpy.context.scene.procanim.terrain.terrain == terrain
    mw = terrain.matrix_world
    verts = np.array([tuple(mw @ v.co) for v in terrain.data.vertices])
    assert verts[:, 2].max() == pytest.approx(sole_z + heights["knee"], abs=1e-5)
    assert verts[:, 2].min() == pytest.approx(sole_z, abs=1e-5)
    top = verts[np.abs(verts[:, 2] - verts[:, 2].max()) < 1e-6]
    along = top[:, 0] if turned else -top[:, 1]  # distance ahead of the character
    # two raised cells of 0.8 m: 0.3–1.1 m and 1.9–2.7 m ahead
    assert sorted({round(float(a), 4) for a in along}) == pytest.approx([0.3, 1.1, 1.9, 2.7], abs=1e-4)
    surface = Surface(terrain)
    ahead = (lambda d: (d, 0.0)) if turned else (lambda d: (0.0, -d))  # noqa: E731
    assert surface.height((*ahead(0.7), 0.0)) == pytest.approx(sole_z + heights["knee"], abs=1e-5)
    assert surface.height((*ahead(1.5), 0.0)) == pytest.approx(sole_z, abs=1e-5)
    assert surface.height((*ahead(0.1), 0.0)) == pytest.approx(sole_z, abs=1e-5)
