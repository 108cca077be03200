"""Control maps (no bpy): the file format read and written, the shipped Rigify and CloudRig maps, the
rules a map gives (family, controls, deform skeleton, DEF- pairing, switches), a rig bakes onto the
controls its map names, and Blender's Transformation constraint as the model evaluates it."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.controls import constraints as cs
from procanim_addon.controls import convert, deform_skeleton
from procanim_addon.controls.evaluate import RigPose
from procanim_addon.controls.maps import (
    FORMAT,
    MAPS_DIR,
    ControlMap,
    LimbControls,
    MapError,
    Switch,
    dump_map,
    find_map,
    parse_map,
    rigify_map,
    shipped,
    shipped_maps,
)
from procanim_addon.controls.rig import Constraint, Mapping
from procanim_addon.controls.roles import mapped_rigmap
from procanim_addon.controls.structure import find_limbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_controls import RigBuilder, con  # noqa: E402

# ----------------------------------------------------------------------------- the file format


def test_the_shipped_maps_are_the_files_in_the_package_and_read_back_equal():
    files = sorted(p.stem for p in MAPS_DIR.glob("*.toml"))
    assert files == ["cloudrig", "rigify"]
    assert [m.id for m in shipped_maps()] == files
    for cmap in shipped_maps():
        assert parse_map(dump_map(cmap)) == cmap


def test_the_rigify_map_says_ik_fk_is_zero_for_ik_and_cloudrig_one():
    (ik_fk,) = rigify_map().all_switches
    assert (ik_fk.prop, ik_fk.bone, ik_fk.value("IK"), ik_fk.value("FK")) == ("IK_FK", "", 0.0, 1.0)
    cloud = shipped("cloudrig")
    props = {s.prop: (s.bone, s.ik, s.fk) for s in cloud.all_switches}
    assert props == {p: ("Properties", 1.0, 0.0) for p in
                     ("ik_left_thigh", "ik_right_thigh", "ik_left_upperarm", "ik_right_upperarm")}
    leg = cloud.limb("leg.L")
    assert (leg.ik_control, leg.pole) == ("IK-Foot.L", "POLE-Thigh.L")
    assert leg.fk == ("FK-Thigh.L", "FK-Knee.L", "FK-W-Foot.L")


def _minimal(**extra) -> str:
    lines = [f'format = "{FORMAT}"', "version = 1", "[family]", 'id = "x"', "[skeleton]", 'prefix = "ORG-"']
    return "\n".join(lines + [f"{k} = {v}" for k, v in extra.items()]) + "\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("format = 1 [", "not valid TOML"),
        ('version = 1\n[family]\nid = "x"\n', "not a ProcAnim control map"),
        (f'format = "{FORMAT}"\nversion = 7\n[family]\nid = "x"\n', "version 7 map"),
        (f'format = "{FORMAT}"\nversion = 1\n[family]\nid = "x"\n', "which bones the engine animates"),
        (_minimal() + '[[switches]]\nbone = "a"\n', "needs a 'property'"),
        (_minimal() + '[[switches]]\nproperty = "p"\nik = 1\nfk = 1\n', "both 1"),
        (_minimal() + '[[limbs]]\nrole = "tail"\n', "'role' must be one of"),
        (_minimal() + "[roles]\nhips = 3\n", "maps role names to bone names"),
    ],
)
def test_a_map_that_cannot_be_used_is_refused_with_a_message_naming_what_is_wrong(text, message):
    with pytest.raises(MapError, match=message):
        parse_map(text, "my.toml")


def test_a_map_written_from_data_reads_back_the_same():
    cmap = ControlMap(
        id="mine",
        label="My rig",
        required_bones=("master", "leg_ctrl.L"),
        root="master",
        skeleton_use_deform=True,
        deform_prefix="",
        control_names=("master", "leg_ctrl.L", 'odd "name"'),
        control_shapes=True,
        limbs=(
            LimbControls("leg.L", ("thigh.L", "shin.L", "foot.L"), "leg_ctrl.L", "knee.L",
                         switch=Switch("leg_ik", "settings", ik=2.0, fk=0.5)),
            LimbControls("arm.R", ("upper.R", "fore.R", "hand.R"), fk=("fk1.R", "fk2.R", "fk3.R")),
        ),
        roles=(("hips", "pelvis"), ("thigh.L", "thigh.L")),
    )
    again = parse_map(dump_map(cmap))
    assert again == cmap and again.limb("leg.L").switch.value("IK") == 2.0


# ----------------------------------------------------------------------------- rules


def test_a_rig_belongs_to_a_family_by_its_marks_and_bones():
    names = ["root", "ORG-spine", "DEF-spine"]
    assert find_map(shipped_maps(), ["rig_id"], names).id == "rigify"
    assert find_map(shipped_maps(), [], names) is None  # no rig_id: a metarig or a copy
    assert find_map(shipped_maps(), ["rig_id"], ["root", "spine"]) is None  # no ORG- bones
    cloud = ["root", "Properties", "Thigh.L", "DEF-Thigh_1.L"]
    assert find_map(shipped_maps(), ["is_generated_cloudrig", "ui_data"], cloud).id == "cloudrig"
    assert find_map(shipped_maps(), ["is_generated_cloudrig"], ["root"]) is None  # no Properties bone


def test_controls_and_the_deform_skeleton_follow_each_familys_rules():
    rigify, cloud = rigify_map(), shipped("cloudrig")
    assert rigify.is_control("thigh_fk.L") and rigify.is_control("root")
    assert not any(rigify.is_control(n) for n in ("ORG-thigh.L", "MCH-x", "DEF-x", "thigh_tweak.L"))
    assert rigify.in_skeleton("ORG-thigh.L") and not rigify.in_skeleton("root")
    assert cloud.is_control("IK-Foot.L", ["IK Controls"]) and cloud.is_control("FK-Spine2", ["FK Secondary"])
    assert not cloud.is_control("Thigh.L", ["Original Bones"])
    assert not cloud.is_control("LINE-Thigh.L", ["IK Controls"])  # the pole's line: a display helper
    assert not cloud.is_control("STR-Knee_1.L", ["Stretch Controls"])
    assert cloud.in_skeleton("Thigh.L", ["Original Bones"])
    assert not cloud.in_skeleton("IK-M-Thigh.L", ["Mechanism Bones"])


@pytest.mark.parametrize(
    ("family", "deform", "skeleton", "paired"),
    [
        ("rigify", "DEF-thigh.L", {"ORG-thigh.L"}, "ORG-thigh.L"),
        ("rigify", "DEF-thigh.L.001", {"ORG-thigh.L"}, "ORG-thigh.L"),
        ("rigify", "DEF-spine.001", {"ORG-spine", "ORG-spine.001"}, "ORG-spine.001"),
        ("cloudrig", "DEF-Thigh_2.L", {"Thigh.L"}, "Thigh.L"),
        ("cloudrig", "DEF-Spine1", {"Spine1"}, "Spine1"),
        ("cloudrig", "DEF-Finger_Index1.L", {"Finger_Index1.L"}, "Finger_Index1.L"),
        ("cloudrig", "STR-Thigh_2.L", {"Thigh.L"}, None),
    ],
)
def test_deform_bones_pair_with_the_skeleton_bone_they_ride_on(family, deform, skeleton, paired):
    assert shipped(family).skeleton_bone_of(deform, skeleton) == paired


# ----------------------------------------------------------------------------- a rig mapped by a file


MY_MAP = f"""
format = "{FORMAT}"
version = 1
[family]
id = "hand_made"
label = "Hand-made rig"
[detect]
bones = ["master", "ctl_foot.L"]
[skeleton]
root = "master"
bones = ["jnt_hips", "jnt_thigh.L", "jnt_shin.L", "jnt_foot.L"]
deform_prefix = ""
[controls]
names = ["master", "ctl_body", "ctl_foot.L", "ctl_knee.L", "ctl_thigh_fk.L", "ctl_shin_fk.L", "ctl_foot_fk.L"]
[[limbs]]
role = "leg.L"
bones = ["jnt_thigh.L", "jnt_shin.L", "jnt_foot.L"]
ik_control = "ctl_foot.L"
fk = ["ctl_thigh_fk.L", "ctl_shin_fk.L", "ctl_foot_fk.L"]
switch = {{ bone = "ctl_settings", property = "leg_ik", ik = 1.0, fk = 0.0 }}
[roles]
hips = "jnt_hips"
"thigh.L" = "jnt_thigh.L"
"shin.L" = "jnt_shin.L"
"foot.L" = "jnt_foot.L"
"""


def hand_made_rig(mode: str):
    """A rig of no known family: ``jnt_`` bones copy an IK chain (switch ``leg_ik`` on
    ``ctl_settings``, 1 = IK) and FK controls; only its map says so."""
    ik = 1.0 if mode == "IK" else 0.0
    r = RigBuilder()
    r.add("master", (0, 0, 0), (0, 1, 0))
    r.add("ctl_settings", (0, 0.5, 0), (0, 0.6, 0), "master")
    r.add("ctl_body", (0, 0, 1.0), (0, 0.3, 1.0), "master")
    r.add("jnt_hips", (0, 0, 1.0), (0, 0, 1.1), "ctl_body")
    r.add("ctl_thigh_fk.L", (0.1, 0, 1.0), (0.1, 0, 0.55), "ctl_body")
    r.add("ctl_shin_fk.L", (0.1, 0, 0.55), (0.1, 0.02, 0.1), "ctl_thigh_fk.L")
    r.add("ctl_foot_fk.L", (0.1, 0.02, 0.1), (0.1, -0.12, 0.02), "ctl_shin_fk.L")
    r.add("ctl_foot.L", (0.1, 0.02, 0.1), (0.1, -0.12, 0.02), "master")
    r.add("ctl_knee.L", (0.1, -0.5, 0.55), (0.1, -0.6, 0.55), "master")
    r.add("mch_thigh.L", (0.1, 0, 1.0), (0.1, 0, 0.55), "ctl_body")
    r.add("mch_shin.L", (0.1, 0, 0.55), (0.1, 0.02, 0.1), "mch_thigh.L",
          constraints=[con("IK", "ctl_foot.L", chain_count=2, pole="ctl_knee.L", pole_angle=-math.pi / 2)])
    sw = ("ctl_settings", "leg_ik")
    for joint, fk, ik_src in (("thigh", "ctl_thigh_fk.L", "mch_thigh.L"), ("shin", "ctl_shin_fk.L", "mch_shin.L"),
                              ("foot", "ctl_foot_fk.L", "ctl_foot.L")):
        head, tail = {"thigh": ((0.1, 0, 1.0), (0.1, 0, 0.55)), "shin": ((0.1, 0, 0.55), (0.1, 0.02, 0.1)),
                      "foot": ((0.1, 0.02, 0.1), (0.1, -0.12, 0.02))}[joint]
        r.add(f"jnt_{joint}.L", head, tail, "jnt_hips", constraints=[
            con("COPY_TRANSFORMS", fk), con("COPY_TRANSFORMS", ik_src, influence=ik, driver=sw)])
    rig = r.build(properties={"ctl_settings": {"leg_ik": ik}})
    cmap = parse_map(MY_MAP, "hand_made.toml")
    from dataclasses import replace

    return replace(rig, family=cmap, control_mask=None, skeleton_names=None, rig_id="")


def test_a_rig_of_no_known_family_is_read_by_its_map_alone():
    rig = hand_made_rig("IK")
    assert rig.is_control(rig.index("ctl_foot.L")) and not rig.is_control(rig.index("mch_thigh.L"))
    sk = deform_skeleton(rig)
    assert sk.names[0] == "master"
    assert set(sk.names) == {"master", "jnt_hips", "jnt_thigh.L", "jnt_shin.L", "jnt_foot.L"}
    (limb,) = find_limbs(rig)
    name = rig.names.__getitem__
    assert limb.switch == ("ctl_settings", "leg_ik") and limb.value("IK") == 1.0 and limb.role == "leg.L"
    assert name(limb.ik_control) == "ctl_foot.L" and name(limb.pole) == "ctl_knee.L"
    assert [name(c) for c in limb.fk_controls] == ["ctl_thigh_fk.L", "ctl_shin_fk.L", "ctl_foot_fk.L"]
    rm = mapped_rigmap(rig.family, sk, {n: (sk.names[p] if p >= 0 else None) for n, p in zip(sk.names, sk.parents)})
    assert rm.family == "Hand-made rig" and rm.get("thigh.L") == "jnt_thigh.L"


@pytest.mark.parametrize("mode", ["IK", "FK"])
def test_a_rig_mapped_by_a_file_converts_onto_the_controls_it_names(mode):
    rig = hand_made_rig(mode)
    sk = deform_skeleton(rig)
    frames, n = 6, len(sk)
    rng = np.random.default_rng(4)
    loc, rot = np.zeros((frames, n, 3)), tf.quat_identity((frames, n))
    for k in range(1, n):  # every joint bends a little; the body travels and turns on the root
        rot[:, k] = tf.quat_normalize(np.concatenate([np.ones((frames, 1)), rng.normal(0, 0.15, (frames, 3))], 1))
    loc[:, 0] = np.stack([np.linspace(0, 0.5, frames), np.linspace(0, -2, frames), np.zeros(frames)], -1)
    rot[:, 0] = tf.quat_from_axis_angle(np.broadcast_to([0, 0, 1.0], (frames, 3)), np.linspace(0, 0.6, frames))
    want = sk.fk(loc, rot)
    keys = convert(rig, sk, want, mode)
    keyed = {rig.names[c] for c in keys.basis}
    assert keys.switches == {("ctl_settings", "leg_ik"): 1.0 if mode == "IK" else 0.0}
    legs = {"ctl_foot.L"} if mode == "IK" else {"ctl_thigh_fk.L", "ctl_shin_fk.L", "ctl_foot_fk.L"}
    assert legs <= keyed and all(rig.is_control(c) for c in keys.basis), keyed
    pose = RigPose(rig, 6)
    for c, basis in keys.basis.items():
        pose.set_basis(c, basis)
    for name in ("jnt_hips", "jnt_foot.L") if mode == "IK" else ("jnt_hips", "jnt_thigh.L", "jnt_shin.L", "jnt_foot.L"):
        np.testing.assert_allclose(pose.pose(rig.index(name))[:, :3, 3], want[:, sk.index(name), :3, 3], atol=1e-6)


# ----------------------------------------------------------------------------- Transformation constraint


def _transform(mapping: Mapping, owner_mode="XYZ"):
    return Constraint(kind="TRANSFORM", mapping=mapping)


def test_a_rotation_mapped_onto_a_rotation_is_clamped_scaled_and_applied_before_the_owners():
    """CloudRig's foot roll: the roll control's X rotation in [0°, 135°] turns the owner by
    [0°, −118°] before its own rotation; outside the range it is clamped."""
    m = Mapping("ROTATION", "ROTATION", (0, 1, 2), (0.0, 0.0, -0.785), (2.356, 0.0, 0.785),
                (0.0, 0.0, -0.436), (-2.059, 0.0, 0.436), mix="BEFORE")
    c = _transform(m)
    turn_z = tf.quat_from_axis_angle(np.array([[0.0, 0.0, 1.0]]), np.array([0.3]))
    owner = tf.compose(np.array([[0.1, 0.2, 0.3]]), turn_z)
    for angle, expect in ((0.0, 0.0), (1.178, -1.0295), (3.0, -2.059), (-1.0, 0.0)):
        target = tf.compose(None, tf.quat_from_axis_angle(np.array([[1.0, 0.0, 0.0]]), np.array([angle])))
        out = cs.transform(c, owner, target, "XYZ")
        turn = tf.euler_to_mat3(np.array([[expect, 0.0, 0.0]]), "XYZ")
        np.testing.assert_allclose(out[0, :3, :3], turn[0] @ owner[0, :3, :3], atol=1e-6)
        np.testing.assert_allclose(out[0, :3, 3], owner[0, :3, 3])


def test_a_location_mapped_onto_a_rotation_and_onto_a_scale():
    target = np.eye(4)[None].copy()
    target[0, :3, 3] = (0.5, 0.0, 0.0)
    rot = Mapping("LOCATION", "ROTATION", (1, 0, 2), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), (0.0, 0.0, 0.0),
                  (0.0, 1.0, 0.0), mix="REPLACE")
    out = cs.transform(_transform(rot), np.eye(4)[None], target, "XYZ")
    np.testing.assert_allclose(out[0, :3, :3], tf.euler_to_mat3(np.array([[0.0, 0.5, 0.0]]), "XYZ")[0], atol=1e-12)
    scale = Mapping("LOCATION", "SCALE", (0, 1, 2), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), (1.0, 1.0, 1.0),
                    (3.0, 1.0, 1.0), mix="MULTIPLY")
    out = cs.transform(_transform(scale), np.diag([2.0, 1.0, 1.0, 1.0])[None], target, "XYZ")
    np.testing.assert_allclose(np.diag(out[0])[:3], (4.0, 1.0, 1.0))


def test_limit_scale_clamps_each_axis():
    free = (False, 0, False, 0)
    c = Constraint(kind="LIMIT_SCALE", scale_limits=(free, (True, 0.5, True, 1.0), free))
    out = cs.limit_scale(c, np.diag([3.0, 2.0, 0.2, 1.0])[None])
    np.testing.assert_allclose(np.diag(out[0])[:3], (3.0, 1.0, 0.2))
