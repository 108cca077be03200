"""A rig of a family ProcAnim knows nothing about, baked onto its controls by a control map file alone
(issue 30 item 2), measured on Blender's EVALUATED deform bones.

The rig is built here with bpy: a human's ``jnt_`` bones (the mesh would follow them) copy
``ctl_`` controls; the legs have IK (``mch_`` chains solved toward ``ctl_foot_ik``, aimed by a
``ctl_knee`` pole) and FK, blended by a switch ``leg_ik_L`` on ``ctl_settings`` (1 = IK) through
drivers; the arms are FK only; the toes hang from the feet. No ``rig_id``, no ``ORG-`` bones, no
name ProcAnim's code knows: its map (written by the test, then by the Character panel's Save
Control Map) says which bones are controls, which form the deform skeleton, and the switch.
"""

from __future__ import annotations

import math
from pathlib import Path

import bpy
import harness
import numpy as np
import pytest
from harness import bake_recording_clips, baked_frames, baked_metrics, keyed_bones, keyed_paths
from mathutils import Matrix
from test_cloudrig import Soles, world_poses
from test_path_walk import add_curve, stairs_with_a_bend

FEET = {"L": ("jnt_foot.L", "jnt_toe.L"), "R": ("jnt_foot.R", "jnt_toe.R")}
BODY = ("hips", "spine", "chest", "neck", "head")
SIDED = ("clavicle", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")
# control → the template bone whose rest it takes, its parent
CONTROLS = {
    "ctl_settings": (None, "master"),
    "ctl_body": (None, "master"),
    "ctl_hips": ("hips", "ctl_body"),
    "ctl_spine": ("spine", "ctl_body"),
    "ctl_chest": ("chest", "ctl_spine"),
    "ctl_neck": ("neck", "ctl_chest"),
    "ctl_head": ("head", "ctl_neck"),
    **{
        name.format(s=s): (bone and bone.format(s=s), parent.format(s=s))
        for s in "LR"
        for name, bone, parent in (
            ("ctl_shoulder.{s}", "clavicle.{s}", "ctl_chest"),
            ("ctl_arm_fk.{s}", "upper_arm.{s}", "ctl_shoulder.{s}"),
            ("ctl_forearm_fk.{s}", "forearm.{s}", "ctl_arm_fk.{s}"),
            ("ctl_hand_fk.{s}", "hand.{s}", "ctl_forearm_fk.{s}"),
            ("ctl_thigh_fk.{s}", "thigh.{s}", "ctl_hips"),
            ("ctl_shin_fk.{s}", "shin.{s}", "ctl_thigh_fk.{s}"),
            ("ctl_foot_fk.{s}", "foot.{s}", "ctl_shin_fk.{s}"),
            ("ctl_foot_ik.{s}", "foot.{s}", "master"),
            ("ctl_knee.{s}", None, "master"),
            ("ctl_toe.{s}", "toe.{s}", "jnt_foot.{s}"),
        )
    },
}


def _jnt(name: str) -> str:
    return "master" if name == "root" else f"jnt_{name}"


def build_rig(procanim_extension, name: str = "Hand"):
    """The hand-made control rig described in the module docstring."""
    template = harness.addon_module(procanim_extension, "procanim_addon.rigs").human_template()
    specs = {b.name: b for b in template.bones}
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")

    def bone(bname, spec=None, head=None, tail=None, parent=None, deform=False):
        eb = arm.edit_bones.new(bname)
        if spec is not None:
            eb.head, eb.tail = spec.head, spec.tail
            eb.matrix = Matrix([list(r) for r in spec.matrix()])
        else:
            eb.head, eb.tail = head, tail
        eb.use_deform = deform
        if parent:
            eb.parent = arm.edit_bones[parent]
        return eb

    for spec in template.bones:  # the deform skeleton, in the template's hierarchy
        bone(_jnt(spec.name), spec, parent=_jnt(spec.parent) if spec.parent else None, deform=spec.name != "root")
    for s in "LR":
        thigh = specs[f"thigh.{s}"]
        bone(f"mch_thigh_ik.{s}", thigh)
        bone(f"mch_shin_ik.{s}", specs[f"shin.{s}"], parent=f"mch_thigh_ik.{s}")
    for cname, (src, _parent) in CONTROLS.items():
        if src is not None:
            bone(cname, specs[src])
        elif cname == "ctl_settings":
            bone(cname, head=(0.0, 0.4, 0.0), tail=(0.0, 0.4, 0.2))
        elif cname == "ctl_body":
            bone(cname, head=(0.0, 0.0, 0.95), tail=(0.0, 0.3, 0.95))
        else:  # the knee poles, half a metre in front of the knees
            knee = np.array(specs[f"shin.{cname[-1]}"].head)
            bone(cname, head=tuple(knee + (0, -0.5, 0)), tail=tuple(knee + (0, -0.6, 0)))
    for cname, (_src, parent) in CONTROLS.items():
        arm.edit_bones[cname].parent = arm.edit_bones[parent]
    for s in "LR":
        arm.edit_bones[f"mch_thigh_ik.{s}"].parent = arm.edit_bones["ctl_hips"]
    bpy.ops.object.mode_set(mode="OBJECT")

    pbs = obj.pose.bones
    pbs["ctl_settings"]["leg_ik_L"] = 1.0
    pbs["ctl_settings"]["leg_ik_R"] = 1.0

    def copy(owner, target, name="Copy", switch=None):
        con = pbs[owner].constraints.new("COPY_TRANSFORMS")
        con.name, con.target, con.subtarget = name, obj, target
        if switch is not None:
            fc = con.driver_add("influence")
            fc.driver.type = "AVERAGE"
            var = fc.driver.variables.new()
            var.type = "SINGLE_PROP"
            var.targets[0].id = obj
            var.targets[0].data_path = f'pose.bones["ctl_settings"]["{switch}"]'
        return con

    for b in BODY:
        copy(_jnt(b), f"ctl_{b}")
    for s in "LR":
        copy(f"jnt_clavicle.{s}", f"ctl_shoulder.{s}")
        for part, ctl in (("upper_arm", "arm_fk"), ("forearm", "forearm_fk"), ("hand", "hand_fk")):
            copy(f"jnt_{part}.{s}", f"ctl_{ctl}.{s}")
        for part, ik in (("thigh", f"mch_thigh_ik.{s}"), ("shin", f"mch_shin_ik.{s}"), ("foot", f"ctl_foot_ik.{s}")):
            copy(f"jnt_{part}.{s}", f"ctl_{part}_fk.{s}", "FK")
            copy(f"jnt_{part}.{s}", ik, "IK", switch=f"leg_ik_{s}")
        copy(f"jnt_toe.{s}", f"ctl_toe.{s}")
        ik = pbs[f"mch_shin_ik.{s}"].constraints.new("IK")
        ik.target, ik.subtarget, ik.chain_count = obj, f"ctl_foot_ik.{s}", 2
        ik.pole_target, ik.pole_subtarget = obj, f"ctl_knee.{s}"
        ik.pole_angle = _pole_angle(obj, s)
    bpy.context.view_layer.update()
    return obj


def _pole_angle(obj, side: str) -> float:
    """The pole angle at which the IK chain keeps its rest pose (the knee bends toward the pole)."""
    pb, con = obj.pose.bones[f"mch_shin_ik.{side}"], obj.pose.bones[f"mch_shin_ik.{side}"].constraints[-1]
    rest = np.array(pb.bone.matrix_local)
    best, angle = math.inf, 0.0
    for candidate in np.radians(np.arange(-180.0, 180.0, 1.0)):
        con.pole_angle = float(candidate)
        bpy.context.view_layer.update()
        err = float(np.abs(np.array(pb.matrix) - rest).max())
        if err < best:
            best, angle = err, float(candidate)
    assert best < 2e-2, f"no pole angle keeps the {side} leg at rest ({best})"
    return angle


def control_names() -> set[str]:
    return set(CONTROLS) | {"master"}


def map_text() -> str:
    roles = {r: _jnt(r) for r in ("root", *BODY)} | {f"{r}.{s}": f"jnt_{r}.{s}" for r in SIDED for s in "LR"}
    lines = [
        "# a hand-made rig's control map (docs/rigs.md)",
        'format = "procanim-control-map"',
        "version = 1",
        "[family]",
        'id = "hand_made"',
        'label = "Hand-made rig"',
        "[detect]",
        'bones = ["master", "ctl_settings", "ctl_foot_ik.L"]',
        "[skeleton]",
        'root = "master"',
        "use_deform = true",
        'deform_prefix = ""',
        "[controls]",
        f"names = {sorted(control_names() - {'ctl_settings'})!r}".replace("'", '"'),
    ]
    for s in "LR":
        lines += [
            "[[limbs]]",
            f'role = "leg.{s}"',
            f'bones = ["jnt_thigh.{s}", "jnt_shin.{s}", "jnt_foot.{s}"]',
            f'ik_control = "ctl_foot_ik.{s}"',
            f'pole = "ctl_knee.{s}"',
            f'fk = ["ctl_thigh_fk.{s}", "ctl_shin_fk.{s}", "ctl_foot_fk.{s}"]',
            f'switch = {{ bone = "ctl_settings", property = "leg_ik_{s}", ik = 1.0, fk = 0.0 }}',
        ]
    lines.append("[roles]")
    lines += [f'"{r}" = "{b}"' for r, b in sorted(roles.items())]
    return "\n".join(lines) + "\n"


def test_without_a_map_the_rig_is_not_a_control_rig_procanim_knows(procanim_extension):
    rig = build_rig(procanim_extension)
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -2.0, 0.0)])
    with pytest.raises(RuntimeError, match="not a control rig ProcAnim knows.*Control Map"):
        bpy.ops.procanim.path_walk(armature=rig.name, path="Line", key_target="IK_CONTROLS")


@pytest.fixture(scope="module", params=["IK_CONTROLS", "FK_CONTROLS"])
def mapped_walk(request, procanim_extension, tmp_path_factory):
    """The hand-made rig, its map loaded from a file, walks a curve up a staircase and down."""
    import harness

    harness.reset_scene()
    rig = build_rig(procanim_extension)
    path = tmp_path_factory.mktemp("maps") / "hand_made.toml"
    path.write_text(map_text(), encoding="utf-8")
    assert bpy.ops.procanim.load_control_map(armature=rig.name, filepath=str(path)) == {"FINISHED"}
    stairs, ground, pts = stairs_with_a_bend()
    seen = bake_recording_clips(procanim_extension, bpy.ops.procanim.path_walk, armature=rig.name, path="Path",
                                ground=ground.name, key_target=request.param)
    frames = baked_frames(rig)
    soles = Soles(rig, frames, FEET, sole_z=0.0)  # the human's shoes: the rig stands on z = 0
    pelvis = world_poses(rig, frames, ["jnt_hips"])["jnt_hips"][:, :3, 3]
    out = {
        "switch_values": {s: rig.pose.bones["ctl_settings"][f"leg_ik_{s}"] for s in "LR"},
        "mode": request.param,
        "stairs": stairs,
        "end": np.array(pts[-1]),
        "pelvis": pelvis,
        "contact": soles.contact_speeds(stairs.height),
        "lift": soles.lift(stairs.height),
        "metrics": baked_metrics(rig),
        "keyed": keyed_bones(rig),
        "paths": keyed_paths(rig),
        "every_frame_cm": _every_frame_cm(procanim_extension, rig, seen[-1][1], frames),
    }
    m = out["metrics"]
    print(f"[map {request.param}] residual {m['control_residual_cm_max']:.3f} cm ({m['control_residual_bone']}), "
          f"every frame {out['every_frame_cm']:.3f} cm, skate {out['contact'][0].mean() * 100:.3f} cm/s, "
          f"lift {out['lift']}, keyed {sorted(out['keyed'])}")
    return out


def _every_frame_cm(procanim_extension, rig, clip, frames) -> float:
    """Largest distance (cm), on every frame, of a ``jnt_`` bone's head or tail from the clip's pose."""
    sk = harness.addon_module(procanim_extension, "operators.bridge").read_skeleton(rig)
    intended = harness.addon_module(procanim_extension, "procanim_addon.controls.intended").intended_pose(sk, clip)
    names = [n for n in sk.names if n != "master"]
    got = world_poses(rig, frames, names)
    inv = np.linalg.inv(np.array(rig.matrix_world))
    worst = 0.0
    for n in names:
        length = rig.data.bones[n].length
        m = np.einsum("ij,fjk->fik", inv, got[n])
        want = intended[:, sk.index(n)]
        for pt in (np.array([0.0, 0.0, 0.0, 1.0]), np.array([0.0, length, 0.0, 1.0])):
            worst = max(worst, float(np.linalg.norm((m @ pt - want @ pt)[:, :3], axis=-1).max()))
    return worst * 100.0


def test_mapped_rig_the_deform_pelvis_reaches_the_end_of_the_path(mapped_walk):
    pelvis, end = mapped_walk["pelvis"], mapped_walk["end"]
    assert np.linalg.norm(pelvis[-1, :2] - pelvis[0, :2]) > 5.0
    assert np.linalg.norm(pelvis[-1, :2] - end[:2]) < 0.05, pelvis[-1]
    assert pelvis[:, 2].max() - pelvis[0, 2] > mapped_walk["stairs"].levels.max() - 0.1


def test_mapped_rig_the_feet_lift_and_do_not_skate(mapped_walk):
    for side, lift in mapped_walk["lift"].items():
        assert lift >= 0.05, f"foot {side} lifts {lift * 100:.1f} cm"
    v, depth = mapped_walk["contact"]
    assert v.size > 200 and v.mean() * 100 < 1.0, f"skate {v.mean() * 100:.2f} cm/s"
    assert depth.max() * 100 < 0.5


def test_mapped_rig_keys_only_its_controls_and_its_switches(mapped_walk):
    keyed, mode = mapped_walk["keyed"], mapped_walk["mode"]
    assert keyed and keyed <= control_names(), sorted(keyed - control_names())
    legs = {"ctl_foot_ik.L", "ctl_foot_ik.R"} if mode == "IK_CONTROLS" else {"ctl_thigh_fk.L", "ctl_shin_fk.R"}
    assert legs | {"ctl_body"} <= keyed, sorted((legs | {"ctl_body"}) - keyed)
    for s in "LR":
        assert f'pose.bones["ctl_settings"]["leg_ik_{s}"]' in mapped_walk["paths"]
        assert mapped_walk["switch_values"][s] == (1.0 if mode == "IK_CONTROLS" else 0.0)


def test_mapped_rig_residual_within_half_a_centimetre(mapped_walk):
    m = mapped_walk["metrics"]
    assert m["key_target"] == mapped_walk["mode"] and m["bake_takes_effect"] is True
    assert m["control_residual_cm_max"] <= 0.5, (m["control_residual_cm_max"], m["control_residual_bone"])
    assert mapped_walk["every_frame_cm"] <= 0.5


def test_the_map_saved_from_the_character_panel_bakes_a_second_rig_of_the_family(procanim_extension, tmp_path):
    """Save Control Map with the dialog's fields (what the animator picks: each leg's IK control,
    pole, FK controls and switch with its IK value; the body's controls) writes a map file; a second
    rig built the same way, given only that file, bakes onto its controls."""
    maps = harness.addon_module(procanim_extension, "procanim_addon.controls.maps")
    first = build_rig(procanim_extension, "First")
    roles = {r: _jnt(r) for r in ("root", *BODY)} | {f"{r}.{s}": f"jnt_{r}.{s}" for r in SIDED for s in "LR"}
    rig_roles = harness.addon_module(procanim_extension, "procanim_addon.rig_roles")
    bridge = harness.addon_module(procanim_extension, "operators.bridge")
    bridge.store_rigmap(first, rig_roles.RigMap(roles))  # as set by hand
    d = bpy.context.window_manager.procanim_map_dialog
    harness.addon_module(procanim_extension, "operators.control_map_ops").fill_dialog(d, first)
    assert d.root == "master" and d.skeleton == "USE_DEFORM" and d.hips == "ctl_hips"  # guessed from the copies
    assert d.leg_L.fk_1 == "ctl_thigh_fk.L"  # the FK side: what the leg bone copies first (its FK copy)
    d.label = "Hand-made rig"
    d.shaped_controls = False
    for s in "LR":
        leg = getattr(d, f"leg_{s}")
        leg.ik_control, leg.pole = f"ctl_foot_ik.{s}", f"ctl_knee.{s}"
        leg.fk_1, leg.fk_2, leg.fk_3 = f"ctl_thigh_fk.{s}", f"ctl_shin_fk.{s}", f"ctl_foot_fk.{s}"
        leg.switch_bone, leg.switch_property, leg.ik_value, leg.fk_value = "ctl_settings", f"leg_ik_{s}", 1.0, 0.0
        arm = getattr(d, f"arm_{s}")
        arm.fk_1, arm.fk_2, arm.fk_3 = f"ctl_arm_fk.{s}", f"ctl_forearm_fk.{s}", f"ctl_hand_fk.{s}"
        setattr(d, f"clavicle_{s}", f"ctl_shoulder.{s}")
    d.chest, d.spine = "ctl_chest", "ctl_spine"
    path = tmp_path / "saved.toml"
    assert bpy.ops.procanim.save_control_map(armature="First", filepath=str(path)) == {"FINISHED"}
    saved = maps.read_map(path)
    assert saved.label == "Hand-made rig" and saved.root == "master" and saved.skeleton_use_deform
    leg = saved.limb("leg.L")
    assert (leg.ik_control, leg.pole, leg.switch) == ("ctl_foot_ik.L", "ctl_knee.L",
                                                      maps.Switch("leg_ik_L", "ctl_settings", 1.0, 0.0))
    assert saved.limb("arm.R").fk == ("ctl_arm_fk.R", "ctl_forearm_fk.R", "ctl_hand_fk.R")
    assert dict(saved.roles)["thigh.L"] == "jnt_thigh.L"

    second = build_rig(procanim_extension, "Second")
    second.location = (3.0, 0.0, 0.0)
    assert bpy.ops.procanim.load_control_map(armature="Second", filepath=str(path)) == {"FINISHED"}
    from test_detect_structure import _panel_labels

    bpy.context.scene.procanim.armature = second
    labels = _panel_labels()  # the Character panel names the map the rig follows
    assert "Hand-made rig" in labels and "Stored on the rig" in labels, labels
    add_curve("Line", [(3.0, 0.0, 0.0), (3.0, -3.0, 0.0)])
    assert bpy.ops.procanim.path_walk(armature="Second", path="Line", key_target="FK_CONTROLS") == {"FINISHED"}
    m = baked_metrics(second)
    assert m["bake_takes_effect"] is True and m["control_residual_cm_max"] <= 0.5, m["control_residual_cm_max"]
    assert keyed_bones(second) <= control_names() and {"ctl_thigh_fk.L", "ctl_arm_fk.L"} <= keyed_bones(second)
    assert m["measured_travel_m"] > 2.0


def test_a_broken_map_file_is_refused_with_its_message_and_changes_nothing(procanim_extension, tmp_path):
    rig = build_rig(procanim_extension)
    path = Path(tmp_path) / "broken.toml"
    path.write_text('format = "procanim-control-map"\nversion = 99\n[family]\nid = "x"\n', encoding="utf-8")
    with pytest.raises(RuntimeError, match="version 99"):
        bpy.ops.procanim.load_control_map(armature=rig.name, filepath=str(path))
    assert "procanim_control_map" not in rig.data
