"""Bakes onto the controls of a CloudRig human (CloudRig 2.1.20, the Blender Studio's rig generator),
measured on Blender's EVALUATED deform bones (issue 30).

The rig is CloudRig's stock ``META-Cloud_Human`` generated once per session (``cloudrig_library``)
and appended into each test's scene, as a user's file holds it; CloudRig itself is not installed
while ProcAnim bakes. What a CloudRig control is, is read here from the rig's own bone collections
(a bone with a custom shape outside the "Original", "Deform", "Mechanism" and "Stretch" collections),
not from ProcAnim's control map. Every motion figure is measured on the ``DEF-`` bones after
``frame_set``; the residual the bake stores is checked against a measure of our own on every frame.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
from pathlib import Path

import bpy
import harness
import numpy as np
import pytest
from cloudrig_rigs import add_cloudrig
from harness import bake_recording_clips, baked_frames, baked_metrics, keyed_bones
from mathutils import Vector
from mathutils.bvhtree import BVHTree
from test_handshake import GRIP_FRACTION, HALF_PALM, N_SHAKE, SHAKE
from test_path_walk import FPS, add_curve, stairs_with_a_bend

CONTACT_M = 0.003  # a sole point this close to the ground bears weight
NOT_CONTROLS = ("Original Bones", "Deform Bones", "Mechanism Bones", "Stretch Controls", "Hair Stretch",
                "Fingers Stretch")
SWITCHES = ("ik_left_thigh", "ik_right_thigh", "ik_left_upperarm", "ik_right_upperarm")
FEET = {"L": ("DEF-Foot.L", "DEF-Toes.L"), "R": ("DEF-Foot.R", "DEF-Toes.R")}
PELVIS = "DEF-Spine1"


# ----------------------------------------------------------------------------- helpers


def blender_test(name: str):
    """Another Blender test module, loaded from this folder: in one Blender process running every
    test (tests/run_in_blender.py) ``import test_loops`` can find tests/engine's module of that name."""
    spec = importlib.util.spec_from_file_location(f"blender_{name}", Path(__file__).with_name(f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def is_cloudrig_control(obj, name: str) -> bool:
    """A bone an animator of a CloudRig rig keys: it has a widget and sits in no collection of
    original, deform, mechanism or stretch bones (the ``Properties`` bone holds the switches)."""
    pb = obj.pose.bones[name]
    return pb.custom_shape is not None and not any(c.name in NOT_CONTROLS for c in pb.bone.collections)


def world_poses(obj, frames, names) -> dict[str, np.ndarray]:
    """{bone: (F, 4, 4) world matrices} of the evaluated pose (one matrix read per frame)."""
    index = {pb.name: i for i, pb in enumerate(obj.pose.bones)}
    flat = np.empty(len(index) * 16, dtype=np.float32)
    out = {n: np.empty((len(frames), 4, 4)) for n in names}
    for k, f in enumerate(frames):
        bpy.context.scene.frame_set(int(f))
        ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        ev.pose.bones.foreach_get("matrix", flat)
        mats = flat.reshape(-1, 4, 4).transpose(0, 2, 1).astype(float)
        world = np.array(ev.matrix_world)
        for n in names:
            out[n][k] = world @ mats[index[n]]
    return out


class Soles:
    """Heel, ball and toe-tip points of each foot carried by the ``DEF-`` foot and toe bones (world,
    ``(F, 3, 3)`` per side). From the rest pose only: the sole height is the lowest point of the
    foot's deform bones; the heel lies under the ankle, the ball under the toe's head, the tip under
    its tail. The rest pose stands on z = 0, so a planted point is as high above the ground as the
    sole is above z = 0 at rest (``sole_z``: the sole height when the rig's feet stand above their
    bones, as ProcAnim's human's shoes do: 0)."""

    def __init__(self, obj, frames, feet=FEET, sole_z=None):
        bones = obj.data.bones
        names = [n for pair in feet.values() for n in pair]
        lowest = min(min(bones[n].head_local.z, bones[n].tail_local.z) for n in names)
        self.sole_z = lowest if sole_z is None else sole_z
        pose = world_poses(obj, frames, names)
        self.points = {}
        for side, (foot_name, toe_name) in feet.items():
            foot, toe = bones[foot_name], bones[toe_name]
            pts = [(foot, (*foot.head_local[:2], self.sole_z)), (toe, (*toe.head_local[:2], self.sole_z)),
                   (toe, (*toe.tail_local[:2], self.sole_z))]
            self.points[side] = np.stack([self._carry(b, p, pose[b.name]) for b, p in pts], axis=1)

    @staticmethod
    def _carry(bone, p, pose):
        local = np.linalg.inv(np.array(bone.matrix_local)) @ np.array([*p, 1.0])
        return np.einsum("fij,j->fi", pose, local)[:, :3]

    def contact_speeds(self, ground):
        """Horizontal speeds (m/s) of sole points on consecutive frames both in contact, and how far
        (m) points go below the ground."""
        speeds, depth = [], []
        for pts in self.points.values():
            height = pts[..., 2] - ground(pts[..., :2]) - self.sole_z
            depth.append(-height.ravel())
            on = height < CONTACT_M
            both = on[1:] & on[:-1]
            speeds.append(np.linalg.norm(np.diff(pts[..., :2], axis=0), axis=-1)[both] * FPS)
        return np.concatenate(speeds), np.concatenate(depth)

    def lift(self, ground) -> dict[str, float]:
        """Per foot, the largest height (m) its lowest sole point reaches above the ground under it."""
        return {s: float((pts[..., 2] - ground(pts[..., :2]) - self.sole_z).min(axis=1).max())
                for s, pts in self.points.items()}


def rides_on(obj, deform: str, skeleton_names) -> str | None:
    """The bone of the deform skeleton a ``DEF-`` bone rides on, found from the rest pose alone: its
    head lies on that bone's segment and it points the same way."""
    b = obj.data.bones[deform]
    d = (b.tail_local - b.head_local).normalized()
    for name in skeleton_names:
        s = obj.data.bones[name]
        axis = s.tail_local - s.head_local
        t = (b.head_local - s.head_local).dot(axis) / axis.length_squared
        off = (s.head_local + axis * t - b.head_local).length
        if -1e-4 <= t < 1.0 - 1e-4 and off < 1e-4 and d.dot(axis.normalized()) > 0.999:
            return name
    return None


def every_frame_residual_cm(procanim_extension, obj, clip, frames) -> float:
    """Largest distance (cm) on every frame of a ``DEF-`` bone's head from where the clip puts the
    deform-skeleton bone it rides on (carried rigidly from rest)."""
    control_rig, deform, intended = (harness.addon_module(procanim_extension, n) for n in (
        "operators.control_rig", "procanim_addon.controls.deform", "procanim_addon.controls.intended"))
    rig = control_rig.read_control_rig(obj)
    sk = deform.deform_skeleton(rig)
    pose = deform.rig_pose(rig, sk, intended.intended_pose(sk, clip))
    bones = obj.data.bones
    pairs = {}
    for b in bones:
        if b.name.startswith("DEF-") and "Finger" not in b.name:
            base = rides_on(obj, b.name, [n for n in sk.names if n != "root"])
            if base is not None:
                pairs[b.name] = base
    assert len(pairs) > 30, sorted(pairs)
    got = world_poses(obj, frames, list(pairs))
    world_inv = np.linalg.inv(np.array(obj.matrix_world))
    worst = 0.0
    for name, base in pairs.items():
        carry = np.linalg.inv(np.array(bones[base].matrix_local)) @ np.array(bones[name].matrix_local)
        want = (pose[:, sk.index(base)] @ carry)[:, :3, 3]
        local = np.einsum("ij,fj->fi", world_inv[:3, :3], got[name][:, :3, 3]) + world_inv[:3, 3]
        worst = max(worst, float(np.linalg.norm(local - want, axis=-1).max()))
    return worst * 100.0


# ----------------------------------------------------------------------------- recognised and mapped


def test_a_cloudrig_human_is_recognised_and_its_roles_are_its_original_bones(procanim_extension, cloudrig_library):
    hero = add_cloudrig(cloudrig_library, "Hero")
    assert bpy.ops.procanim.detect_rig(armature="Hero") == {"FINISHED"}
    roles = {item.role: item.bone for item in hero.data.procanim_roles if item.bone}
    detection = harness.addon_module(procanim_extension, "operators.detect_rig").read_detection(hero)
    assert detection["family"] == "CloudRig (generated)" and detection["confidence"] >= 0.9, detection
    for side in "LR":
        assert [roles[f"{r}.{side}"] for r in ("thigh", "shin", "foot", "toe")] == [
            f"Thigh.{side}", f"Knee.{side}", f"Foot.{side}", f"Toes.{side}"]
        assert [roles[f"{r}.{side}"] for r in ("upper_arm", "forearm", "hand")] == [
            f"UpperArm.{side}", f"Forearm.{side}", f"Wrist.{side}"]
    assert (roles["hips"], roles["chest"], roles["head"]) == ("Spine1", "Spine3", "Head")
    for bone in roles.values():  # the deform skeleton is the Original Bones (and root)
        assert bone == "root" or "Original Bones" in [c.name for c in hero.data.bones[bone].collections]
    control_rig = harness.addon_module(procanim_extension, "operators.control_rig")
    assert control_rig.control_mode(hero, "AUTO") == "IK"
    from test_detect_structure import _panel_labels

    bpy.context.scene.procanim.armature = hero
    labels = _panel_labels()  # the Character panel says which map the rig follows
    assert "CloudRig (generated)" in labels and "Found by its bones" in labels, labels


@pytest.mark.parametrize("mode", ["FK", "IK"])
def test_the_engine_evaluates_the_cloudrig_human_as_blender_does(procanim_extension, cloudrig_library, mode):
    """Random poses of every body control (and the foot roll): the engine's model of the rig gives
    Blender's evaluated matrices for the Original and FK/IK bones, foot roll (Transformation
    constraints) and FK toes (an Armature constraint) included. IK chains are posed by Blender here
    and pinned in the model. CloudRig's IK spine (off unless ``ik_spine1`` is on) is left out."""
    rig_obj = add_cloudrig(cloudrig_library, "Rig")
    control_rig, evaluate, structure, tf = (harness.addon_module(procanim_extension, n) for n in (
        "operators.control_rig", "procanim_addon.controls.evaluate", "procanim_addon.controls.structure",
        "procanim_addon.transforms"))
    for prop in SWITCHES:
        rig_obj.pose.bones["Properties"][prop] = 1.0 if mode == "IK" else 0.0
    rig_obj.update_tag()
    bpy.context.view_layer.update()
    rig = control_rig.read_control_rig(rig_obj)
    limbs = structure.find_limbs(rig)
    assert sorted(limb.role for limb in limbs) == ["arm.L", "arm.R", "leg.L", "leg.R"]
    rng = np.random.default_rng(7)
    moved = 0
    for i, name in enumerate(rig.names):
        pb = rig_obj.pose.bones[name]
        if not rig.is_control(i) or name == "root" or "Finger" in name or "Spine" in name and "IK-" in name:
            continue
        pb.location = rng.normal(0.0, 0.02, 3) * ~np.array(pb.lock_location)
        pb.rotation_mode = "QUATERNION"
        pb.rotation_quaternion = tf.quat_normalize(np.r_[1.0, rng.normal(0.0, 0.15, 3)])
        moved += 1
    assert moved > 40
    bpy.context.view_layer.update()
    rig = control_rig.read_control_rig(rig_obj)
    pose = evaluate.RigPose(rig, 1)
    for i, name in enumerate(rig.names):
        if rig.is_control(i):
            pose.set_basis(i, np.array(rig_obj.pose.bones[name].matrix_basis)[None])
    if mode == "IK":
        for limb in limbs:
            for member in limb.chain:
                pose.pin(member, np.array(rig_obj.pose.bones[rig.names[member]].matrix)[None])
    compared, worst, where = 0, 0.0, ""
    for i, name in enumerate(rig.names):
        wanted = rig.in_skeleton(i) or name.startswith(("FK-", "RIK-", "IK-M-Foot", "IK-M-Wrist", "IK-M-Toes"))
        if not wanted or "Finger" in name or "Ponytail" in name or (mode == "FK" and "IK-M-" in name):
            continue
        m = pose.pose(i)[0]
        b = np.array(rig_obj.pose.bones[name].matrix)
        tail = np.array([0.0, rig.lengths[i], 0.0, 1.0])
        err = max(np.linalg.norm(m[:3, 3] - b[:3, 3]), np.linalg.norm((m @ tail - b @ tail)[:3]))
        compared += 1
        if err > worst:
            worst, where = err, name
    assert compared > 50
    assert worst < 1e-5, f"{where}: {worst * 100:.4f} cm from Blender"


# ----------------------------------------------------------------------------- path walk over stairs


@pytest.fixture(scope="module", params=["IK_CONTROLS", "FK_CONTROLS"])
def stairs_walk(request, procanim_extension, cloudrig_library):
    """A CloudRig human walks a curve (a bend, then straight) up a staircase and down."""
    harness.reset_scene()
    hero = add_cloudrig(cloudrig_library, "Hero")
    stairs, ground, pts = stairs_with_a_bend()
    seen = bake_recording_clips(procanim_extension, bpy.ops.procanim.path_walk, armature="Hero", path="Path",
                                ground=ground.name, key_target=request.param)
    frames = baked_frames(hero)
    soles = Soles(hero, frames)
    curves = harness.fcurve_map(hero.animation_data.action, hero)
    switch = {p: curves.get((f'pose.bones["Properties"]["{p}"]', 0)) for p in SWITCHES}
    out = {
        "controls": {n: is_cloudrig_control(hero, n) for n in keyed_bones(hero)},
        "mode": request.param,
        "stairs": stairs,
        "contact": soles.contact_speeds(stairs.height),
        "lift": soles.lift(stairs.height),
        "pelvis": world_poses(hero, frames, [PELVIS])[PELVIS][:, :3, 3],
        "end": np.array(pts[-1]),
        "metrics": baked_metrics(hero),
        "keyed": keyed_bones(hero),
        "switches": {p: set(harness.keyframes(fc)[:, 1]) for p, fc in switch.items() if fc is not None},
        "every_frame_cm": every_frame_residual_cm(procanim_extension, hero, seen[-1][1], frames),
    }
    v = out["contact"][0]
    print(
        f"[CloudRig {request.param}] residual stored {out['metrics']['control_residual_cm_max']:.3f} cm "
        f"({out['metrics']['control_residual_bone']}), every frame {out['every_frame_cm']:.3f} cm, skate "
        f"{v.mean() * 100:.3f} cm/s, lift L {out['lift']['L'] * 100:.1f} R {out['lift']['R'] * 100:.1f} cm, "
        f"{len(out['keyed'])} bones keyed"
    )
    return out


def test_walk_the_deform_pelvis_reaches_the_end_of_the_path(stairs_walk):
    pelvis, end = stairs_walk["pelvis"], stairs_walk["end"]
    assert np.linalg.norm(pelvis[-1, :2] - pelvis[0, :2]) > 5.0
    assert np.linalg.norm(pelvis[-1, :2] - end[:2]) < 0.05, pelvis[-1]
    assert pelvis[:, 2].max() - pelvis[0, 2] > stairs_walk["stairs"].levels.max() - 0.1  # up the flight
    assert abs(pelvis[-1, 2] - pelvis[0, 2]) < 0.02  # and down again


def test_walk_the_deform_feet_lift_and_do_not_skate(stairs_walk):
    for side, lift in stairs_walk["lift"].items():
        assert lift >= 0.05, f"foot {side} lifts {lift * 100:.1f} cm"
    v, depth = stairs_walk["contact"]
    assert v.size > 200, "too few contact samples: the feet never touch the ground?"
    assert v.mean() * 100 < 1.0, f"skate {v.mean() * 100:.2f} cm/s"
    assert depth.max() * 100 < 0.5, f"a sole point {depth.max() * 100:.2f} cm under a step"


def test_walk_keys_only_cloudrig_controls_and_the_ik_switches(stairs_walk):
    mode, keyed = stairs_walk["mode"], stairs_walk["keyed"]
    offenders = sorted(n for n in keyed - {"Properties"} if not stairs_walk["controls"][n])
    assert not offenders, f"bones that are not CloudRig controls were keyed: {offenders}"
    value = 1.0 if mode == "IK_CONTROLS" else 0.0  # CloudRig: 1 = IK
    for prop in ("ik_left_thigh", "ik_right_thigh"):
        assert stairs_walk["switches"].get(prop) == {value}, (prop, stairs_walk["switches"])
    legs = {"IK-Foot.L", "IK-Foot.R", "POLE-Thigh.L"} if mode == "IK_CONTROLS" else {
        "FK-Thigh.L", "FK-Knee.R", "FK-W-Foot.L"}
    assert {"TORSO-Spine1"} | legs <= keyed, sorted(({"TORSO-Spine1"} | legs) - keyed)
    other = {"FK-Thigh.L", "FK-Knee.L"} if mode == "IK_CONTROLS" else {"IK-Foot.L", "IK-Foot.R"}
    assert not other & keyed, f"{mode} keyed the other mode's controls: {sorted(other & keyed)}"


def test_walk_residual_within_half_a_centimetre_stored_and_on_every_frame(stairs_walk):
    m = stairs_walk["metrics"]
    assert m["key_target"] == stairs_walk["mode"] and m["control_verify_frames"] >= 10
    assert m["control_residual_cm_max"] <= 0.5, (m["control_residual_cm_max"], m["control_residual_bone"])
    assert stairs_walk["every_frame_cm"] <= 0.5, stairs_walk["every_frame_cm"]
    assert m["bake_takes_effect"] is True and m["control_bake_approximate"] is False
    assert m["measured_travel_m"] == pytest.approx(m["intended_travel_m"], abs=0.01)


# ----------------------------------------------------------------------------- a handshake with a Rigify human


def grip_world(obj, frames, hand, other_hand, forearm) -> np.ndarray:
    """The documented grip point (docs/handshake.md) of a right deform hand, world space ``(F, 3)``."""
    bones = obj.data.bones
    b = bones[hand]
    rest = np.array(b.matrix_local)[:3, :3]
    medial = np.array(bones[other_hand].head_local - b.head_local)
    medial[2] = 0.0
    fa = bones[forearm]
    hanging = abs((fa.tail_local - fa.head_local).normalized().z) > 0.5
    normal = medial / np.linalg.norm(medial) if hanging else np.array([0.0, 0.0, -1.0])
    n = rest.T @ normal
    n[1] = 0.0
    n /= np.linalg.norm(n)
    local = np.append(np.array([0.0, GRIP_FRACTION * b.length, 0.0]) + HALF_PALM * b.length * n, 1.0)
    return np.einsum("fij,j->fi", world_poses(obj, frames, [hand])[hand], local)[:, :3]


def test_a_cloudrig_human_shakes_hands_with_a_generated_rigify_human(procanim_extension, cloudrig_library,
                                                                      rigify_library):
    from rigify_rigs import add_rigify

    cloud = add_cloudrig(cloudrig_library, "Cloud")
    rigify = add_rigify(rigify_library, "human", "Rigi")
    rigify.location = (0.0, -0.9, 0.0)
    rigify.rotation_euler[2] = math.radians(180.0)
    bpy.context.view_layer.update()
    assert bpy.ops.procanim.handshake(initiator="Cloud", partner="Rigi", frame_start=1, **SHAKE) == {"FINISHED"}
    for obj in (cloud, rigify):
        m = baked_metrics(obj)
        assert m["key_target"] == "IK_CONTROLS" and m["bake_takes_effect"] is True
        assert m["control_residual_cm_max"] <= 0.5, (obj.name, m["control_residual_cm_max"], m["control_residual_bone"])
    assert not [n for n in keyed_bones(cloud) - {"Properties"} if not is_cloudrig_control(cloud, n)]
    assert {"IK-Wrist.R", "POLE-UpperArm.R"} <= keyed_bones(cloud)
    m = baked_metrics(cloud)
    phases = np.array(list(m["phase_initiator"]))
    shake = np.arange(m["frame_start"], m["frame_end"] + 1)[phases == "S"]
    assert len(shake) == N_SHAKE
    a = grip_world(cloud, shake, "DEF-Wrist.R", "DEF-Wrist.L", "DEF-Forearm_2.R")
    b = grip_world(rigify, shake, "DEF-hand.R", "DEF-hand.L", "DEF-forearm.R")
    gap_cm = 100 * np.linalg.norm(a - b, axis=1)
    print(f"[cloudrig+rigify] deform palms {gap_cm.mean():.3f} cm apart (max {gap_cm.max():.3f})")
    assert gap_cm.max() <= 3.0, gap_cm
    start = grip_world(cloud, [1], "DEF-Wrist.R", "DEF-Wrist.L", "DEF-Forearm_2.R")[0]
    assert np.linalg.norm(a[0] - start) > 0.1  # the CloudRig hand really moved to the contact


# ----------------------------------------------------------------------------- terrain adaptation


class Surface:
    """The terrain mesh (world space): height of the highest surface above a point."""

    def __init__(self, obj):
        mw = obj.matrix_world
        self.tree = BVHTree.FromPolygons([mw @ v.co for v in obj.data.vertices],
                                         [tuple(p.vertices) for p in obj.data.polygons])

    def height(self, p) -> float:
        hit = self.tree.ray_cast(Vector((p[0], p[1], 100.0)), Vector((0.0, 0.0, -1.0)))
        return hit[0].z if hit[0] is not None else -math.inf


def foot_depths(obj, frames, surface) -> np.ndarray:
    """Per frame, how deep (m) the deepest foot point is inside the terrain: the sole points and
    points along the ``DEF-`` foot and toe bones (≤ 0: none is inside). The blocks stand on the
    rest sole's height, where the rig's floor is."""
    soles = Soles(obj, frames)
    names = [n for pair in FEET.values() for n in pair]
    poses = world_poses(obj, frames, names)
    lengths = {n: obj.data.bones[n].length for n in names}
    out = []
    for k in range(len(frames)):
        pts = [p for side in soles.points.values() for p in side[k]]
        for n in names:
            m = poses[n][k]
            pts += [m[:3, 3] + m[:3, 1] * lengths[n] * t for t in np.linspace(0.0, 1.0, 6)]
        out.append(max(surface.height(p) - p[2] for p in pts))
    return np.array(out)


@pytest.mark.parametrize("target", ["IK_CONTROLS", "FK_CONTROLS"])
def test_terrain_adaptation_of_a_cloudrig_walk_over_ankle_high_blocks(procanim_extension, cloudrig_library, target):
    from test_adapt_terrain import add_zigzag

    hero = add_cloudrig(cloudrig_library, "Hero")
    assert bpy.ops.procanim.source_motion(armature="Hero", kind="WALK", key_target=target) == {"FINISHED"}
    source = hero.animation_data.action
    bones = hero.data.bones
    sole = min(min(bones[n].head_local.z, bones[n].tail_local.z) for pair in FEET.values() for n in pair)
    ankle = 0.5 * (bones["DEF-Foot.L"].head_local.z + bones["DEF-Foot.R"].head_local.z) - sole
    terrain = add_zigzag("Blocks", ankle, ground_z=sole)
    surface = Surface(terrain)
    frames = baked_frames(hero)
    before = foot_depths(hero, frames, surface)
    assert before.max() > 0.5 * ankle, "the walk made on flat ground should pass through the blocks"
    assert bpy.ops.procanim.adapt_terrain(armature="Hero", terrain=terrain.name, key_target=target) == {"FINISHED"}
    assert hero.animation_data.action != source
    m = baked_metrics(hero)
    assert m["key_target"] == target and m["bake_takes_effect"] is True
    after = foot_depths(hero, frames, surface)
    inside = {int(f): round(float(d) * 100, 2) for f, d in zip(frames, after) if d > 0.002}
    print(f"[CloudRig terrain {target}] deepest foot point {after.max() * 100:.2f} cm, residual "
          f"{m['control_residual_cm_max']:.3f} cm")
    assert not inside, f"foot points inside a block (frame: cm): {inside}"
    assert not [n for n in keyed_bones(hero) - {"Properties"} if not is_cloudrig_control(hero, n)]


# ----------------------------------------------------------------------------- a bake that does not take effect


def test_a_deform_bake_on_a_cloudrig_human_ends_with_an_error_and_stores_measured_figures(
    procanim_extension, cloudrig_library
):
    """Key target DEFORM keys CloudRig's Original Bones and its root (the issue's case): the root
    carries the body along the path, but the Original Bones copy CloudRig's FK/IK bones, so the
    deform legs never step — the feet slide. The operator ends with an error saying the bake does
    not take effect and what to do; the figures stored are the measured ones, the walk's own (skate,
    steps …) are withheld."""
    hero = add_cloudrig(cloudrig_library, "Hero")
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
    with pytest.raises(RuntimeError, match=r"does not take effect.*Key Target 'IK Controls' or 'FK Controls'"):
        bpy.ops.procanim.path_walk(armature="Hero", path="Line", key_target="DEFORM")
    m = baked_metrics(hero)
    assert m["key_target"] == "DEFORM" and m["bake_takes_effect"] is False
    soles = Soles(hero, baked_frames(hero))
    lift = soles.lift(lambda xy: np.zeros(xy.shape[:-1]))
    assert max(lift.values()) < 0.01, lift  # the case is what it claims: no deform foot steps
    assert m["measured_travel_m"] == pytest.approx(m["intended_travel_m"], abs=0.05)  # carried by the root
    spec = harness.addon_module(procanim_extension, "procanim_addon.registry").get("path_walk")
    assert not [r.key for r in spec.metrics if r.key in m], "figures of a walk Blender does not show"
    assert m["intended_skate_mean_cm_s"] is not None


def test_a_plain_rig_whose_keyed_bones_constraints_override_ends_with_an_error(procanim_extension):
    """A ProcAnim human each of whose bones a Limit Location and a Limit Rotation hold at rest (what
    an unmapped control rig does to keys on its deform bones): the walk bakes, Blender shows no walk,
    and the operator says the bake does not take effect and to map the rig's controls."""
    assert bpy.ops.procanim.add_human(name="Held") == {"FINISHED"}
    held = bpy.data.objects["Held"]
    for pb in held.pose.bones:
        loc = pb.constraints.new("LIMIT_LOCATION")
        rot = pb.constraints.new("LIMIT_ROTATION")
        for a in "xyz":
            setattr(loc, f"use_min_{a}", True)
            setattr(loc, f"use_max_{a}", True)
            setattr(rot, f"use_limit_{a}", True)
        loc.owner_space = rot.owner_space = "LOCAL"
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
    with pytest.raises(RuntimeError, match=r"does not take effect.*Character ▸ Control Map"):
        bpy.ops.procanim.path_walk(armature="Held", path="Line")
    m = baked_metrics(held)
    assert m["bake_takes_effect"] is False and m["measured_travel_m"] < 0.5 * m["intended_travel_m"]
    assert "skate_mean_cm_s" not in m and "intended_skate_mean_cm_s" in m


def test_a_crowd_of_cloudrig_humans_walks_on_their_controls(procanim_extension, cloudrig_library):
    """The crowd bakes a path walk per character: each CloudRig human's keys go on its controls and
    each bake is verified on its own deform bones."""
    heroes = [add_cloudrig(cloudrig_library, f"Hero{k}", location=(1.5 * k, 0.0, 0.0)) for k in range(2)]
    for k in range(2):
        add_curve(f"Path{k}", [(1.5 * k, 0.0, 0.0), (1.5 * k, -3.0, 0.0)])
    names = ",".join(h.name for h in heroes)
    assert bpy.ops.procanim.crowd_walk(armatures=names, paths="Path0,Path1") == {"FINISHED"}
    for hero in heroes:
        m = baked_metrics(hero)
        assert m["key_target"] == "IK_CONTROLS" and m["bake_takes_effect"] is True
        assert m["control_residual_cm_max"] <= 0.5, (hero.name, m["control_residual_cm_max"])
        assert m["measured_travel_m"] > 2.0
        assert not [n for n in keyed_bones(hero) - {"Properties"} if not is_cloudrig_control(hero, n)]


# ----------------------------------------------------------------------------- Fix Feet, loops, NLA strips

CLOUD = {"feet": {"L": ("DEF-Foot.L", "DEF-Toes.L"), "R": ("DEF-Foot.R", "DEF-Toes.R")}, "hips": PELVIS,
         "ends": ("DEF-Wrist.L", "DEF-Wrist.R", "DEF-Head"), "still": 2e-4}


def test_fix_feet_on_a_cloudrig_human_keys_its_fix_back_onto_the_ik_controls(procanim_extension, cloudrig_library):
    """ProcAnim's walk on a CloudRig human's IK controls, skate added and keyed onto those controls;
    Fix Feet reads what the controls make of the DEF- bones and keys its fix back onto them
    (measured on the evaluated DEF- bones with test_fix_feet's own measures)."""
    import test_fix_feet as ff

    hero = add_cloudrig(cloudrig_library, "Hero")
    bpy.context.scene.render.fps = ff.FPS
    # every frame keyed (key_tolerance=0), as in test_fix_feet: the walk is the truth, the fix Fix Feet's own
    assert bpy.ops.procanim.source_motion(armature=hero.name, kind="WALK", steps=6, key_tolerance=0.0) == {
        "FINISHED"}
    frames, names = ff.frames_of(hero), ff.deform_names(hero)
    clean = ff.poses(hero, frames, names)
    walk = {"truth": ff.truth_contacts(hero, CLOUD, names, clean), "points": ff.foot_points(hero, CLOUD, names, clean)}
    assert walk["truth"].mean() > 0.4  # the feet stand still on the IK controls' walk
    ff.skate(procanim_extension, hero, seed=1, key_target="IK_CONTROLS")
    before = ff.poses(hero, frames, names)
    ff.add_plane("Floor", 0.0)
    assert bpy.ops.procanim.fix_feet(armature=hero.name, ground="Floor", key_tolerance=0.0) == {"FINISHED"}
    m = ff.measure_fix(hero, CLOUD, walk, before, names, frames)
    stored = baked_metrics(hero)
    lengths = [ff.joint_lengths(hero, names, p, CLOUD["hips"]) for p in (clean, before)]
    rig_own = float(np.max(np.abs(lengths[1] - lengths[0]) / lengths[0]))
    print(f"\n[CloudRig Fix Feet] {m}; residual {stored['control_residual_cm_max']:.3f} cm; the skated "
          f"bake's own length change {rig_own:.5f}")
    assert stored["key_target"] == "IK_CONTROLS" and stored["bake_takes_effect"] is True
    assert stored["control_residual_cm_max"] <= 0.5
    assert not [n for n in keyed_bones(hero) - {"Properties"} if not is_cloudrig_control(hero, n)]
    ff.assert_fixed(m, length_limit=max(rig_own, 1e-4))


@pytest.mark.parametrize("mode", ["IN_PLACE", "ROOT_MOTION"])
def test_a_path_walk_loop_on_a_cloudrig_human_plays_seamlessly_on_its_controls(cloudrig_library, mode):
    """A walk cycle on CloudRig's IK controls closes under the Cycles modifiers (test_loops' checks
    on the evaluated DEF- bones); with root motion the travel is on CloudRig's root control."""
    tl = blender_test("test_loops")
    hero = add_cloudrig(cloudrig_library, "Hero")
    tl.walk_loop(hero, "NEUTRAL", mode, key_target="IK_CONTROLS")
    m = baked_metrics(hero)
    assert m["key_target"] == "IK_CONTROLS" and m["bake_takes_effect"] is True
    if mode == "ROOT_MOTION":
        assert is_cloudrig_control(hero, m["loop_travel_bone"]), m["loop_travel_bone"]
    tl.check_modifiers(hero)
    tl.check_loop(tl.Rig(hero, PELVIS, (*FEET["L"], *FEET["R"])))


def test_a_walk_baked_to_an_nla_strip_moves_a_cloudrig_human_and_keeps_its_action(cloudrig_library):
    """``bake_to='NLA_STRIP'`` on CloudRig's controls: one new track whose strip holds the control
    keys; the animator's active action stays; the evaluated DEF- pelvis walks the line."""
    hero = add_cloudrig(cloudrig_library, "Hero")
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
    hero.animation_data_create()
    mine = bpy.data.actions.new("Mine")
    hero.animation_data.action = mine
    tracks = len(hero.animation_data.nla_tracks)
    assert bpy.ops.procanim.path_walk(armature=hero.name, path="Line", bake_to="NLA_STRIP") == {"FINISHED"}
    ad = hero.animation_data
    assert ad.action == mine and len(ad.nla_tracks) == tracks + 1
    strip = ad.nla_tracks[-1].strips[0]
    m = json.loads(strip.action.procanim.metrics_json)
    assert m["key_target"] == "IK_CONTROLS" and m["bake_takes_effect"] is True, m
    if bpy.app.version < (4, 4, 0):
        curves = list(strip.action.fcurves)
    else:  # the channelbag of the strip's slot
        curves = list(strip.action.layers[0].strips[0].channelbag(strip.action_slot).fcurves)
    keyed = {p[len('pose.bones["'):].split('"]', 1)[0] for p in
             (fc.data_path for fc in curves) if p.startswith('pose.bones["')}
    assert keyed and not [n for n in keyed - {"Properties"} if not is_cloudrig_control(hero, n)]
    ends = world_poses(hero, [int(strip.frame_start), int(strip.frame_end)], [PELVIS])[PELVIS][:, :3, 3]
    assert np.linalg.norm(ends[1, :2] - ends[0, :2]) > 2.0, ends
