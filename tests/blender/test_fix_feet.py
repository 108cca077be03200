"""Fix Feet in Blender (issue 25), measured on Blender's EVALUATED deform bones with the test's own
measures — never with the figures Fix Feet reports, except where those figures are what is tested.

The walks: ProcAnim's source walk baked onto CMU's skeleton imported from a BVH file
(``tests/cmu_skeleton.py``), then given a capture's faults — each planted foot drifting 5–15 cm/s,
1 cm of jitter, the whole clip 3 cm up (``fix_feet/footskate.py``, applied to the Clip the add-on
reads back and baked with its own baker) — and the same skated walk written by this test as a BVH
file and imported (Euler keys, as mocap arrives). The truth of the contacts is where the clean
walk's feet stand still on Blender's evaluated pose.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import bpy
import harness
import numpy as np
import pytest
from bpy_extras.io_utils import axis_conversion
from harness import addon_module
from mathutils import Matrix

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cmu_skeleton  # noqa: E402
from test_adapt_terrain import Surface, add_mesh  # noqa: E402

FPS = 24
STILL_M = 1e-5  # an ankle moving less than this to a neighbouring frame stands still (the truth)
CMU = {"feet": {"L": ("LeftFoot", "LeftToeBase"), "R": ("RightFoot", "RightToeBase")}, "hips": "Hips",
       "ends": ("LeftHand", "RightHand", "Head")}
HUMAN = {"feet": {"L": ("foot.L", "toe.L"), "R": ("foot.R", "toe.R")}, "hips": "hips",
         "ends": ("hand.L", "hand.R", "head")}
# Blender's IK leaves a Rigify foot on its still IK control within a few hundredths of a mm per frame
RIGIFY = {"feet": {"L": ("DEF-foot.L", "DEF-toe.L"), "R": ("DEF-foot.R", "DEF-toe.R")}, "hips": "DEF-spine",
          "ends": ("DEF-hand.L", "DEF-hand.R", "DEF-spine.006"), "still": 2e-4}


# ----------------------------------------------------------------------------- the test's own measures


def frames_of(obj):
    lo, hi = obj.animation_data.action.frame_range
    return list(range(int(round(lo)), int(round(hi)) + 1))


def poses(obj, frames, names=None) -> np.ndarray:
    """World matrices ``(F, B, 4, 4)`` of the evaluated pose bones ``names`` (default: every
    deform bone) on ``frames``."""
    names = names or deform_names(obj)
    out = []
    for f in frames:
        pose = harness.evaluated_pose(obj, f, space="WORLD")
        out.append([pose[n] for n in names])
    return np.array(out)


def deform_names(obj) -> list[str]:
    return [b.name for b in obj.data.bones if b.use_deform]


def foot_points(obj, rig, names, pose) -> np.ndarray:
    """Heel (under the ankle at the rest pose's sole height), ball (the foot's tail) and toe tip of
    both feet, world space ``(F, 2 sides, 3 points, 3)``."""
    bones = obj.data.bones
    world = np.array(obj.matrix_world)
    out = []
    for side in "LR":
        foot, toe = rig["feet"][side]
        sole = min(bones[foot].tail_local.z, bones[toe].head_local.z, bones[toe].tail_local.z)
        head = bones[foot].head_local
        heel_local = np.linalg.inv(np.array(bones[foot].matrix_local)) @ np.array([head.x, head.y, sole, 1.0])
        m, t = pose[:, names.index(foot)], pose[:, names.index(toe)]
        heel = np.einsum("fij,j->fi", m, heel_local)[:, :3]
        scale = np.linalg.norm(world[:3, 0])
        ball = m[:, :3, 3] + m[:, :3, 1] / np.linalg.norm(m[:, :3, 1], axis=1)[:, None] * bones[foot].length * scale
        tip = t[:, :3, 3] + t[:, :3, 1] / np.linalg.norm(t[:, :3, 1], axis=1)[:, None] * bones[toe].length * scale
        out.append(np.stack((heel, ball, tip), axis=1))
    return np.stack(out, axis=1)


def truth_contacts(obj, rig, names, pose) -> np.ndarray:
    """``(F, 2)``: frames where a foot's ankle stands still next to a neighbouring frame."""
    out = []
    for side in "LR":
        ankle = pose[:, names.index(rig["feet"][side][0]), :3, 3]
        still = np.linalg.norm(np.diff(ankle, axis=0), axis=1) < rig.get("still", STILL_M)
        mask = np.zeros(len(ankle), bool)
        mask[1:] |= still
        mask[:-1] |= still
        out.append(mask)
    return np.stack(out, axis=1)


def skate_cm_s(points, contact, fps=FPS) -> tuple[float, float]:
    """Mean and p95 horizontal speed (cm/s) of heel and ball between consecutive frames in contact."""
    both = contact[1:] & contact[:-1]  # (F-1, 2)
    v = np.linalg.norm(np.diff(points[:, :, :2, :2], axis=0), axis=-1) * fps * 100  # (F-1, 2, 2)
    v = v[np.repeat(both[..., None], 2, axis=-1)]
    return float(np.mean(v)), float(np.percentile(v, 95))


def pivot_skate_cm_s(points, contact, fps=FPS) -> tuple[float, float]:
    """Mean and p95 horizontal speed (cm/s), between consecutive frames in contact, of the slower of
    each foot's heel and ball (the point a rolling foot turns about)."""
    both = contact[1:] & contact[:-1]
    v = np.linalg.norm(np.diff(points[:, :, :2, :2], axis=0), axis=-1).min(axis=-1) * fps * 100  # (F-1, 2)
    return float(np.mean(v[both])), float(np.percentile(v[both], 95))


def float_cm(points, clean_points, contact) -> float:
    """Mean height (cm) of a planted foot's lower point (heel or ball) above where the clean walk's
    was on the same frame (on the floor)."""
    low, low_clean = points[:, :, :2, 2].min(axis=-1), clean_points[:, :, :2, 2].min(axis=-1)
    return float(np.mean(np.maximum(low - low_clean, 0.0)[contact]) * 100)


def held(obj, frames) -> np.ndarray:
    """``(F, 2)``: the frames of each foot in a contact Fix Feet held (its stored footprints)."""
    out = np.zeros((len(frames), 2), bool)
    f = np.array(frames, float)
    for row in metrics(obj)["held_contacts"]:
        out[(f >= row["first"]) & (f <= row["last"]), "LR".index(row["foot"])] = True
    return out


def f1(truth, found) -> float:
    tp = np.sum(truth & found)
    return float(2 * tp / (2 * tp + np.sum(~truth & found) + np.sum(truth & ~found)))


def joint_lengths(obj, names, pose, hips) -> np.ndarray:
    """Distance from each bone's head to its parent's head ``(F, K)`` (parents in ``names``; the
    ``hips``' location is what Fix Feet moves, so the hips' own distance to its parent is left out)."""
    bones = obj.data.bones
    pairs = [(names.index(b.name), names.index(b.parent.name)) for b in bones
             if b.name in names and b.name != hips and b.parent is not None and b.parent.name in names
             and (b.head_local - b.parent.head_local).length > 1e-4]
    i, p = np.array(pairs).T
    return np.linalg.norm(pose[:, i][..., :3, 3] - pose[:, p][..., :3, 3], axis=-1)


def angular_speeds(obj, names, pose, fps=FPS) -> np.ndarray:
    """Per frame step and bone, how fast the bone turns relative to its parent (rad/s)."""
    bones = obj.data.bones
    r = pose[..., :3, :3] / np.linalg.norm(pose[..., :3, :3], axis=-2, keepdims=True)
    local = []
    for k, n in enumerate(names):
        parent = bones[n].parent
        pr = r[:, names.index(parent.name)] if parent is not None and parent.name in names else np.eye(3)
        local.append(np.swapaxes(pr, -1, -2) @ r[:, k])
    local = np.stack(local, axis=1)  # (F, B, 3, 3)
    rel = np.swapaxes(local[:-1], -1, -2) @ local[1:]
    cos = np.clip((np.trace(rel, axis1=-2, axis2=-1) - 1) / 2, -1, 1)
    return np.arccos(cos) * fps


def metrics(obj) -> dict:
    import json

    return json.loads(obj.animation_data.action.procanim.metrics_json)


def add_plane(name, z, size=40.0):
    h = size / 2
    return add_mesh(name, [(-h, -h, z), (h, -h, z), (h, h, z), (-h, h, z)], [(0, 1, 2, 3)])


def snapshot() -> dict:
    """Actions (users, keys), the active action and pose channels of every armature, counts."""
    state = {"counts": (len(bpy.data.objects), len(bpy.data.actions))}
    for action in bpy.data.actions:
        keys = [harness.keyframes(fc).round(6).tobytes() for fc in harness.fcurves_of(action)]
        state[action.name] = (action.users, action.use_fake_user, tuple(keys), action.procanim.metrics_json)
    for obj in bpy.data.objects:
        if obj.type == "ARMATURE":
            ad = obj.animation_data
            channels = [(*pb.location, *pb.rotation_quaternion, *pb.rotation_euler) for pb in obj.pose.bones]
            state[obj.name] = (ad.action.name if ad and ad.action else None, np.array(channels).round(6).tobytes())
    return state


# ----------------------------------------------------------------------------- scenes


def skate(ext, obj, seed: int, key_target: str = "DEFORM") -> None:
    """The armature's motion replaced by the same motion with skate added (a new action): the Clip
    the add-on reads back from Blender's evaluated deform pose, through ``footskate``, baked with
    the add-on's baker (``ext``: the installed extension)."""
    control_rig = addon_module(ext, "operators.control_rig")
    bridge = addon_module(ext, "operators.bridge")
    bake = addon_module(ext, "operators.bake")
    footskate = addon_module(ext, "procanim_addon.fix_feet.footskate")
    upright = addon_module(ext, "procanim_addon.upright")
    skeleton, rigmap = bridge.read_rig(obj)  # in the engine's frame (upright, metres)
    clean = control_rig.read_deform_clip(obj, bridge.read_skeleton(obj, upright=False), np.array(frames_of(obj), float))
    skated = footskate.add_footskate(skeleton, rigmap, upright.clip_to_frame(clean, skeleton),
                                     footskate.Footskate(seed=seed))
    skated.generator = "skated"
    bake.bake_clip(obj, upright.clip_to_armature(skated, skeleton), key_target)


def import_cmu(path: Path, name="CMU"):
    path.write_text(cmu_skeleton.bvh_text())
    bpy.context.scene.render.fps = FPS
    assert bpy.ops.import_anim.bvh(filepath=str(path), global_scale=cmu_skeleton.UNIT_M, rotate_mode="NATIVE") == {
        "FINISHED"}
    arm = bpy.context.active_object
    arm.name = name
    assert bpy.ops.procanim.detect_rig(armature=arm.name) == {"FINISHED"}
    return arm


@pytest.fixture(scope="module")
def cmu_walk(procanim_extension, tmp_path_factory):
    """CMU's skeleton from its BVH with ProcAnim's walk baked on it (clean), measured; then skate
    added, and the scene saved. Returns the .blend, the clean walk's measures and the floor."""
    harness.reset_scene()
    folder = tmp_path_factory.mktemp("cmu")
    arm = import_cmu(folder / "cmu_skeleton.bvh")
    assert bpy.ops.procanim.source_motion(armature=arm.name, kind="WALK", steps=6) == {"FINISHED"}
    frames = frames_of(arm)
    names = deform_names(arm)
    clean = poses(arm, frames, names)
    points = foot_points(arm, CMU, names, clean)
    floor = float(points[..., 2].min())
    skate(procanim_extension, arm, seed=0)
    add_plane("Floor", floor)
    path = folder / "skated.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return {"blend": str(path), "frames": frames, "names": names, "clean": clean, "points": points,
            "truth": truth_contacts(arm, CMU, names, clean), "floor": floor}


def bvh_of(obj, frames, names) -> str:
    """The motion of ``obj`` (CMU's joints) written as a BVH file: the skeleton of
    ``cmu_skeleton.bvh_text`` and, per frame, the hips' position and every joint's ZYX Euler angles
    as Blender's BVH importer reads them (BVH: Y up, −Z forward)."""
    axes = np.array(axis_conversion(from_forward="-Z", from_up="Y"))  # BVH → Blender
    bones = obj.data.bones
    order = [n for n, _p, _o in cmu_skeleton.JOINTS if n]
    pose = poses(obj, frames, order)
    rest = np.array([np.array(bones[n].matrix_local)[:3, :3] for n in order])
    lines = []
    for f in range(len(frames)):
        r = pose[f, :, :3, :3] / np.linalg.norm(pose[f, :, :3, :3], axis=-2, keepdims=True)
        world = axes.T @ (r @ np.swapaxes(rest, -1, -2)) @ axes  # each joint's turn from rest, BVH axes
        values = list(axes.T @ pose[f, 0, :3, 3] / cmu_skeleton.UNIT_M)
        for k, n in enumerate(order):
            parent = bones[n].parent
            local = world[k] if parent is None else world[order.index(parent.name)].T @ world[k]
            e = Matrix(local.tolist()).to_euler("XYZ")  # R = Rz Ry Rx: the channels Z, Y, X
            values += [math.degrees(e.z), math.degrees(e.y), math.degrees(e.x)]
        lines.append(" ".join(f"{v:.6f}" for v in values))
    head = cmu_skeleton.bvh_text().split("MOTION")[0]
    return head + f"MOTION\nFrames: {len(frames)}\nFrame Time: {1 / FPS:.7f}\n" + "\n".join(lines) + "\n"


def measure_fix(arm, rig, walk, before, names, frames):
    """The claims of a fix on ``arm`` (its evaluated pose after) against ``before`` (the skated
    source) and the clean walk's truth."""
    after = poses(arm, frames, names)
    pts_after, pts_before = foot_points(arm, rig, names, after), foot_points(arm, rig, names, before)
    truth = walk["truth"]
    hips = names.index(rig["hips"])
    ends = [names.index(n) for n in rig["ends"]]
    pelvis = after[:, hips, :3, 3] - before[:, hips, :3, 3]
    ends_move = after[:, ends][..., :3, 3] - before[:, ends][..., :3, 3]
    # the whole motion moves onto the ground (down by its float): the pelvis "did not move" where it
    # moved by that shift alone
    shift = np.median(pelvis, axis=0)
    still = np.linalg.norm(pelvis - shift, axis=1) < 1e-4
    l0, l1 = joint_lengths(arm, names, before, rig["hips"]), joint_lengths(arm, names, after, rig["hips"])
    return {
        "skate_before": skate_cm_s(pts_before, truth),
        "skate_after": skate_cm_s(pts_after, truth),
        "float_before": float_cm(pts_before, walk["points"], truth),
        "float_after": float_cm(pts_after, walk["points"], truth),
        "f1": f1(truth, held(arm, frames)),
        "length_error": float(np.max(np.abs(l1 - l0) / l0)),
        "pelvis_still_frames": int(still.sum()),
        "ends_where_pelvis_still_cm": float(np.linalg.norm(ends_move[still] - shift, axis=-1).max() * 100)
        if still.any() else 0.0,
        "ends_beyond_pelvis_cm": float(np.linalg.norm(ends_move - pelvis[:, None], axis=-1).max() * 100),
        "angular_ratio": float(angular_speeds(arm, names, after).max() / angular_speeds(arm, names, before).max()),
    }


def assert_fixed(m, length_limit=1e-4):
    assert m["skate_before"][0] > 5.0 and m["float_before"] > 2.0, m  # the faults are there
    assert m["skate_after"][0] < 0.5 and m["skate_after"][1] < 2.0, m
    assert m["float_after"] < 0.5, m
    assert m["f1"] >= 0.9, m
    assert m["length_error"] < length_limit, m
    # hands and head: within 1 cm of the source where the pelvis did not move (beyond the whole
    # motion's move onto the ground), and everywhere moved exactly as the pelvis was
    assert m["ends_where_pelvis_still_cm"] < 1.0 and m["ends_beyond_pelvis_cm"] < 0.1, m
    assert m["angular_ratio"] <= 1.5, m


# ----------------------------------------------------------------------------- the acceptance


def test_a_skated_walk_on_an_imported_bvh_skeleton_is_fixed(cmu_walk):
    bpy.ops.wm.open_mainfile(filepath=cmu_walk["blend"])
    arm = bpy.data.objects["CMU"]
    frames, names = cmu_walk["frames"], cmu_walk["names"]
    before = poses(arm, frames, names)
    assert bpy.ops.procanim.fix_feet(armature=arm.name, ground="Floor") == {"FINISHED"}
    m = measure_fix(arm, CMU, cmu_walk, before, names, frames)
    print(f"\n[CMU skeleton, baked walk] {m}")
    assert_fixed(m)


def test_a_skated_walk_written_as_a_bvh_file_is_fixed(cmu_walk, tmp_path):
    bpy.ops.wm.open_mainfile(filepath=cmu_walk["blend"])
    frames, names = cmu_walk["frames"], cmu_walk["names"]
    source = bpy.data.objects["CMU"]
    path = tmp_path / "skated_walk.bvh"
    path.write_text(bvh_of(source, frames, names))
    before = poses(source, frames, names)
    bpy.data.objects.remove(source)
    assert bpy.ops.import_anim.bvh(filepath=str(path), global_scale=cmu_skeleton.UNIT_M, rotate_mode="NATIVE",
                                   frame_start=frames[0]) == {"FINISHED"}
    arm = bpy.context.active_object
    assert arm.pose.bones["LeftFoot"].rotation_mode != "QUATERNION"  # Euler keys, as mocap arrives
    imported = poses(arm, frames, names)
    assert np.abs(imported[..., :3, 3] - before[..., :3, 3]).max() < 1e-3  # the file holds the skated walk
    assert bpy.ops.procanim.fix_feet(armature=arm.name, ground="Floor") == {"FINISHED"}
    m = measure_fix(arm, CMU, cmu_walk, imported, names, frames)
    print(f"\n[BVH file] {m}")
    assert_fixed(m)


def test_a_clean_walk_stays_clean(cmu_walk, tmp_path):
    """The clean walk on the imported skeleton, fixed over its floor: no joint (head or tail) moves
    more than 2 mm."""
    harness.reset_scene()
    arm = import_cmu(tmp_path / "cmu.bvh")
    assert bpy.ops.procanim.source_motion(armature=arm.name, kind="WALK", steps=6) == {"FINISHED"}
    frames, names = frames_of(arm), deform_names(arm)
    add_plane("Floor", cmu_walk["floor"])
    before = poses(arm, frames, names)
    assert bpy.ops.procanim.fix_feet(armature=arm.name, ground="Floor") == {"FINISHED"}
    after = poses(arm, frames, names)
    length = np.array([arm.data.bones[n].length for n in names])[None, :, None]
    tails = lambda p: p[..., :3, 3] + p[..., :3, 1] * length  # noqa: E731
    moved = max(np.abs(after[..., :3, 3] - before[..., :3, 3]).max(), np.abs(tails(after) - tails(before)).max())
    print(f"\n[clean walk] largest joint move {moved * 1000:.3f} mm, {metrics(arm)['contacts']} contacts")
    assert moved <= 0.002


def test_a_generated_rigify_human_keyed_onto_its_ik_controls(procanim_extension, rigify_library):
    """ProcAnim's walk on a generated Rigify human's IK controls, skate added and keyed onto those
    controls; Fix Feet reads what the controls make of the deform bones and keys its fix back onto
    them. Measured on the evaluated DEF- bones; the bake's verification residual ≤ 0.5 cm."""
    import rigify_rigs

    rig = rigify_rigs.add_rigify(rigify_library, "human", "Hero")
    bpy.context.scene.render.fps = FPS
    assert bpy.ops.procanim.source_motion(armature=rig.name, kind="WALK", steps=6) == {"FINISHED"}
    frames, names = frames_of(rig), deform_names(rig)
    clean = poses(rig, frames, names)
    points = foot_points(rig, RIGIFY, names, clean)
    walk = {"truth": truth_contacts(rig, RIGIFY, names, clean), "points": points}
    assert walk["truth"].mean() > 0.4  # the feet stand still on the IK controls' walk
    skate(procanim_extension, rig, seed=1, key_target="IK_CONTROLS")
    before = poses(rig, frames, names)
    add_plane("Floor", 0.0)  # the generated rig stands on z = 0, as its metarig does
    assert bpy.ops.procanim.fix_feet(armature=rig.name, ground="Floor") == {"FINISHED"}
    m = measure_fix(rig, RIGIFY, walk, before, names, frames)
    stored = metrics(rig)
    # a bake onto Rigify's IK controls changes joint distances a little by itself (the chain's IK
    # stretch): the skated walk's own bake, clean → skated, is the yardstick on this rig
    l0, l1 = joint_lengths(rig, names, clean, RIGIFY["hips"]), joint_lengths(rig, names, before, RIGIFY["hips"])
    rig_own = float(np.max(np.abs(l1 - l0) / l0))
    print(f"\n[Rigify IK controls] {m}; residual {stored['control_residual_cm_max']:.3f} cm "
          f"({stored['control_residual_bone']}); the skated bake's own length change {rig_own:.5f}")
    assert stored["key_target"] == "IK_CONTROLS" and stored["control_residual_cm_max"] <= 0.5
    assert_fixed(m, length_limit=max(rig_own, 1e-4))


def steps_mesh(name, step, y0=-1.0, y1=-1.9, half=1.0, size=20.0):
    """A floor at z = 0 with a block ``step`` high across the walk (ProcAnim's human walks along −Y)."""
    verts = [(-size, size, 0.0), (size, size, 0.0), (size, -size, 0.0), (-size, -size, 0.0)]
    verts += [(x, y, z) for z in (0.0, step) for x, y in ((-half, y1), (half, y1), (half, y0), (-half, y0))]
    faces = [(0, 3, 2, 1), (8, 9, 10, 11), (4, 5, 9, 8), (5, 6, 10, 9), (6, 7, 11, 10), (7, 4, 8, 11)]
    return add_mesh(name, verts, faces)


def test_the_fixed_feet_stand_on_ankle_high_steps():
    """ProcAnim's human walks over an ankle-high block it was not made for: held on the block's
    mesh, no planted heel, ball or toe tip is more than 0.5 cm inside it, and those on the block
    stand on its top."""
    human = _human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=6) == {"FINISHED"}
    bones = human.data.bones
    step = bones["foot.L"].head_local.z  # ankle-high (the rest pose stands on z = 0)
    ground = steps_mesh("Steps", step)
    surface = Surface(ground)
    assert bpy.ops.procanim.fix_feet(armature=human.name, ground=ground.name) == {"FINISHED"}
    frames, names = frames_of(human), deform_names(human)
    pts = foot_points(human, HUMAN, names, poses(human, frames, names))
    # each point's height above the floor when the foot stands flat: its height in the rest pose
    sole = min(bones["foot.L"].tail_local.z, bones["toe.L"].head_local.z, bones["toe.L"].tail_local.z)
    rest = np.array([sole, bones["foot.L"].tail_local.z, bones["toe.L"].tail_local.z])
    contact = held(human, frames)
    gaps = np.array([[[p[2] - rest[k] - surface.height(p) for k, p in enumerate(pts[f, s])] for s in range(2)]
                     for f in range(len(frames))])  # (F, 2 feet, 3 points)
    depth = -gaps[contact].min()
    on_block = [(f, s) for f, s in zip(*np.nonzero(contact)) if surface.height(pts[f, s, 0]) > step - 1e-3]
    lowest = gaps[contact].min(axis=-1)
    print(f"\n[ankle-high steps] deepest planted point {depth * 100:.3f} cm inside; {len(on_block)} planted "
          f"frames on the block; largest gap of a planted foot's lowest point {lowest.max() * 100:.3f} cm")
    assert depth <= 0.005
    assert on_block
    assert max(gaps[f, s].min() for f, s in on_block) <= 0.005  # those on the block stand on its top


def _human(name="Human"):
    assert bpy.ops.procanim.add_human(name=name) == {"FINISHED"}
    return bpy.data.objects[name]


# ----------------------------------------------------------------------------- the operator's behaviour


def test_bad_input_is_cancelled_with_a_message_and_nothing_changes():
    human = _human()
    with pytest.raises(RuntimeError, match="'Human' has no motion to fix"):
        bpy.ops.procanim.fix_feet(armature=human.name)
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=2) == {"FINISHED"}
    arm = bpy.data.objects.new("Stick", bpy.data.armatures.new("Stick"))
    bpy.context.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    for k in range(2):
        eb = arm.data.edit_bones.new(f"Bone.{k}")
        eb.head, eb.tail = (0.0, 0.0, k * 0.5), (0.0, 0.0, k * 0.5 + 0.5)
    bpy.ops.object.mode_set(mode="OBJECT")
    arm.animation_data_create().action = human.animation_data.action.copy()
    curve = bpy.data.objects.new("Line", bpy.data.curves.new("Line", "CURVE"))
    bpy.context.collection.objects.link(curve)
    bpy.context.view_layer.update()
    before = snapshot()
    cases = [
        (dict(armature="Nobody"), "There is no object named 'Nobody'"),
        (dict(armature="Line"), "'Line' is a curve, not an armature"),
        (dict(armature="Stick"), "roles"),
        (dict(ground="Line"), "'Line' is a curve; the ground must be a mesh"),
        (dict(ground="Nowhere"), "no object named 'Nowhere'"),
        (dict(height_m=50.0), r"Contact height must be between 0.0001 and 1 m \(got 50\)"),
        (dict(max_reach=0.5), "Largest leg extension must be between 0.8 and 0.9999"),
        (dict(blend_s=math.nan), "Blend must be between"),
        (dict(frame_start=500, frame_end=600), "outside the action"),
        (dict(frame_start=20, frame_end=10), r"end frame \(10\) must come after"),
    ]
    for kwargs, message in cases:
        with pytest.raises(RuntimeError, match=message):
            bpy.ops.procanim.fix_feet(**{"armature": "Human", **kwargs})
        assert snapshot() == before, kwargs
    human.animation_data.action.frame_range = (1, 1_000_000)  # a source longer than a bake may be
    with pytest.raises(RuntimeError, match="at most 100,000 frames"):
        bpy.ops.procanim.fix_feet(armature="Human")


def test_an_action_that_moves_the_armature_object_is_refused():
    human = _human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=2) == {"FINISHED"}
    human.keyframe_insert("location", frame=1)  # a test may key by hand; the add-on never does
    before = snapshot()
    with pytest.raises(RuntimeError, match=r"moves the object itself .*location"):
        bpy.ops.procanim.fix_feet(armature=human.name)
    assert snapshot() == before


def _skated_human(ext, seed=0):
    human = _human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=4) == {"FINISHED"}
    skate(ext, human, seed)
    return human


def test_a_rerun_replaces_its_own_bake_and_reads_the_original(procanim_extension):
    human = _skated_human(procanim_extension)
    source = human.animation_data.action
    assert bpy.ops.procanim.fix_feet(armature=human.name) == {"FINISHED"}
    fixed = human.animation_data.action
    first = metrics(human)
    keys = {(fc.data_path, fc.array_index): harness.keyframes(fc) for fc in harness.fcurves_of(fixed, human)}
    n_actions = len(bpy.data.actions)
    assert fixed is not source and fixed.procanim.previous_action == source.name and source.use_fake_user
    assert bpy.ops.procanim.fix_feet(armature=human.name) == {"FINISHED"}
    assert human.animation_data.action is fixed and len(bpy.data.actions) == n_actions  # rewritten in place
    again = metrics(human)
    assert again["source_action"] == source.name
    assert again["skate_before_mean_cm_s"] == pytest.approx(first["skate_before_mean_cm_s"])  # not its own fix
    for (path, index), want in keys.items():
        fc = next(fc for fc in harness.fcurves_of(fixed, human) if (fc.data_path, fc.array_index) == (path, index))
        assert np.allclose(harness.keyframes(fc), want, atol=1e-6), path


def test_the_motion_of_nla_strips_is_fixed_and_a_rerun_reads_it_again(procanim_extension):
    human = _skated_human(procanim_extension, seed=2)
    ad = human.animation_data
    skated = ad.action
    strip = ad.nla_tracks.new().strips.new(skated.name, int(skated.frame_range[0]), skated)
    if hasattr(strip, "action_slot") and strip.action_slot is None:  # Blender 4.4+: the walk's slot
        strip.action_slot = skated.slots[0]
    ad.action = None
    frames, names = list(range(int(skated.frame_range[0]), int(skated.frame_range[1]) + 1)), deform_names(human)
    before = foot_points(human, HUMAN, names, poses(human, frames, names))
    assert bpy.ops.procanim.fix_feet(armature=human.name) == {"FINISHED"}
    m = metrics(human)
    assert m["source_action"] == "NLA" and ad.action.procanim.previous_action == ""
    after = foot_points(human, HUMAN, names, poses(human, frames, names))
    contact = held(human, frames)
    assert skate_cm_s(before, contact)[0] > 5.0 and skate_cm_s(after, contact)[0] < 0.5
    assert bpy.ops.procanim.fix_feet(armature=human.name) == {"FINISHED"}
    assert metrics(human)["skate_before_mean_cm_s"] == pytest.approx(m["skate_before_mean_cm_s"])


def test_pose_markers_on_the_source_override_detection(procanim_extension):
    """A skated walk. "L lift" in the middle of a left contact, "L contact" where the next one starts
    and "L lift" one frame after it ends: the first contact is held only up to the marker — past it
    the left foot keeps the source's drift — and the next one exactly over the markers' frames."""
    human = _human()
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=6) == {"FINISHED"}
    frames, names = frames_of(human), deform_names(human)
    truth = truth_contacts(human, HUMAN, names, poses(human, frames, names))[:, 0]
    starts = np.flatnonzero(~truth[:-1] & truth[1:]) + 1  # left contacts that start and end inside the walk
    spans = [(a, int(np.flatnonzero(truth[a:-1] & ~truth[a + 1:])[0]) + a) for a in starts
             if (truth[a:-1] & ~truth[a + 1:]).any()]
    (a0, b0), (a1, b1) = spans[0], spans[1]
    mid = (a0 + b0) // 2
    skate(procanim_extension, human, seed=3)
    action = human.animation_data.action
    for name, row in (("L lift", mid), ("L contact", a1), ("L lift", b1 + 1)):
        action.pose_markers.new(name).frame = frames[row]
    before = foot_points(human, HUMAN, names, poses(human, frames, names))
    assert bpy.ops.procanim.fix_feet(armature=human.name) == {"FINISHED"}
    contact = held(human, frames)[:, 0]
    assert contact[a0 + 2:mid].all() and not contact[mid:a1].any()
    assert contact[a1:b1 + 1].all() and not contact[b1 + 1]
    after = foot_points(human, HUMAN, names, poses(human, frames, names))
    kept = np.zeros((len(frames), 2), bool)
    kept[mid:b0 + 1, 0] = True  # truly down, but up by the markers: the source's drift is left (and a blend)
    assert skate_cm_s(before, kept)[0] > 5.0 and skate_cm_s(after, kept)[0] > 5.0
    marked = np.zeros((len(frames), 2), bool)
    marked[a1:b1 + 1, 0] = True
    assert skate_cm_s(after, marked)[0] < 0.5
    assert metrics(human)["markers"] == 3


# ----------------------------------------------------------------------------- other rigs


def test_a_captured_mixamo_walk(procanim_extension):
    """A real capture (a Mixamo-named walk, four steps forward and four back, 30 fps, in cm): its
    contacts are held — the feet in contact slide less than 0.5 cm/s — and no joint changes length."""
    from test_adapt_terrain import captured_walk

    assert bpy.ops.import_anim.bvh(filepath=captured_walk(), global_scale=0.01, rotate_mode="NATIVE") == {"FINISHED"}
    arm = bpy.context.active_object
    assert bpy.ops.procanim.detect_rig(armature=arm.name) == {"FINISHED"}
    bone = {b.name.split(":")[-1]: b.name for b in arm.data.bones}
    rig = {"feet": {s: (bone[f"{side}Foot"], bone[f"{side}ToeBase"]) for s, side in (("L", "Left"), ("R", "Right"))},
           "hips": bone["Hips"]}
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    frames, names = frames_of(arm), deform_names(arm)
    before = poses(arm, frames, names)
    assert bpy.ops.procanim.fix_feet(armature=arm.name) == {"FINISHED"}
    after = poses(arm, frames, names)
    contact = held(arm, frames)
    # a captured foot rolls (heel strike, toe-off): the point it rolls about is the one held
    skate_before, skate_after = (pivot_skate_cm_s(foot_points(arm, rig, names, p), contact, fps)
                                 for p in (before, after))
    lengths = [joint_lengths(arm, names, p, rig["hips"]) for p in (before, after)]
    error = float(np.max(np.abs(lengths[1] - lengths[0]) / lengths[0]))
    m = metrics(arm)
    print(f"\n[captured Mixamo walk] {m['contacts']} contacts over {contact.any(axis=1).mean():.0%} of the frames; "
          f"the slower of heel and ball in them {skate_before[0]:.2f} / {skate_before[1]:.2f} -> "
          f"{skate_after[0]:.4f} / {skate_after[1]:.4f} cm/s (mean / p95); lengths {error:.1e}; "
          f"largest change {m['max_joint_change_cm']:.2f} cm ({m['max_joint_change_bone']})")
    assert m["contacts"] >= 4 and contact.mean() > 0.3
    assert skate_after[0] < 0.5 and skate_after[1] < 2.0 and skate_after[0] < skate_before[0]
    assert error < 1e-4


def test_a_renamed_skeleton_found_by_its_structure(cmu_walk):
    """CMU's skeleton with every bone renamed (``j00`` …): its roles come from the structure alone, and
    its skated walk is fixed as before."""
    bpy.ops.wm.open_mainfile(filepath=cmu_walk["blend"])
    arm = bpy.data.objects["CMU"]
    arm.data.procanim_roles.clear() if hasattr(arm.data, "procanim_roles") else None
    renamed = {b.name: f"j{k:02d}" for k, b in enumerate(arm.data.bones)}
    for b in list(arm.data.bones):
        b.name = renamed[b.name]  # the action's F-curve paths follow the rename
    assert bpy.ops.procanim.detect_rig(armature=arm.name) == {"FINISHED"}
    rig = {"feet": {s: tuple(renamed[n] for n in CMU["feet"][s]) for s in "LR"}, "hips": renamed["Hips"],
           "ends": tuple(renamed[n] for n in CMU["ends"])}
    names = [renamed[n] for n in cmu_walk["names"]]
    before = poses(arm, cmu_walk["frames"], names)
    assert bpy.ops.procanim.fix_feet(armature=arm.name, ground="Floor") == {"FINISHED"}
    m = measure_fix(arm, rig, cmu_walk, before, names, cmu_walk["frames"])
    print(f"\n[renamed CMU skeleton] {m}")
    assert_fixed(m)


@pytest.mark.parametrize("under_empty", [False, True], ids=["tilted_object", "tilted_empty"])
def test_a_rig_standing_in_its_own_axes_and_units(procanim_extension, under_empty):
    """ProcAnim's human whose armature stands up +Y in centimetres under a turned object (or empty)
    scaled by 0.01, as glTF and FBX imports leave it: its skated walk is fixed in the world as the
    plain human's is, and the preview's footprints lie under the evaluated feet."""
    from test_any_rig import tilted_human

    human = tilted_human("Human", under_empty)
    assert bpy.ops.procanim.detect_rig(armature=human.name) == {"FINISHED"}
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=4) == {"FINISHED"}
    frames, names = frames_of(human), deform_names(human)
    clean = poses(human, frames, names)
    walk = {"truth": truth_contacts(human, HUMAN, names, clean), "points": foot_points(human, HUMAN, names, clean)}
    skate(procanim_extension, human, seed=4)
    before = poses(human, frames, names)
    add_plane("Floor", 0.0)
    assert bpy.ops.procanim.fix_feet(armature=human.name, ground="Floor") == {"FINISHED"}
    m = measure_fix(human, HUMAN, walk, before, names, frames)
    print(f"\n[{'tilted empty' if under_empty else 'tilted object'}] {m}")
    assert_fixed(m)
    session = addon_module(procanim_extension, "preview.session")
    spec = addon_module(procanim_extension, "procanim_addon.registry").get("fix_feet")
    body = session.read_body(human)
    clip = type("C", (), {"metrics": metrics(human)})()
    plants = spec.overlays.plants(clip, body)
    after = foot_points(human, HUMAN, names, poses(human, frames, names))
    assert len(plants) == metrics(human)["contacts"] > 0
    for p in plants:  # the ball (the foot bone's tail) where the footprint says, mid-contact
        row = frames.index(int(round(0.5 * (p.first + p.last))))
        ball = after[row, "LR".index(p.side), 1]
        assert np.linalg.norm(ball - p.ball) < 0.01, (p.side, p.first, ball, p.ball)
