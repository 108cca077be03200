"""Detect Roles in Blender: Rigify's own metarigs and imported-style skeletons, every bone renamed
``Bone.###`` in a shuffled order, get complete leg, arm and spine roles from their structure; the
bird's renamed metarig still walks; a generated Rigify rig maps to its ORG- bones; the Character
panel shows the family, the confidence and the missing roles."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from types import SimpleNamespace

import bpy
import harness
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import rig_samples as rs  # noqa: E402

LEGS = [f"{r}.{s}" for s in "LR" for r in ("thigh", "shin", "foot")]
ARMS = [f"{r}.{s}" for s in "LR" for r in ("upper_arm", "forearm", "hand")]
COMPLETE = LEGS + ARMS + ["hips", "spine", "chest", "neck", "head"]
HUMAN_TRUTH = rs.rigify_metarig()[1]
BIRD_TRUTH = rs.rigify_bird()[1]


def _enable_rigify():
    import addon_utils

    addon_utils.enable("rigify", default_set=True)


def _metarig(kind: str):
    _enable_rigify()
    getattr(bpy.ops.object, f"armature_{kind}_metarig_add")()
    return bpy.context.object


def _rename_all(obj, seed: int) -> dict[str, str]:
    """Every bone renamed ``Bone.###`` in a shuffled order; returns old name → new name."""
    names = [b.name for b in obj.data.bones]
    random.Random(seed).shuffle(names)
    for k, name in enumerate(names):  # two passes: no new name collides with an old one
        obj.data.bones[name].name = f"tmp{k}"
    new = {}
    for k, name in enumerate(names):
        obj.data.bones[f"tmp{k}"].name = new[name] = f"Bone.{k:03d}"
    return new


def _build(bones, name="Imported"):
    """An armature with ``bones`` (head/tail in armature space) in edit mode, as an importer makes."""
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    for b in bones:
        eb = arm.edit_bones.new(b["name"])
        eb.head, eb.tail = b["head"], b["tail"]
    for b in bones:
        if b["parent"]:
            arm.edit_bones[b["name"]].parent = arm.edit_bones[b["parent"]]
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def _roles(obj) -> dict[str, str]:
    return {item.role: item.bone for item in obj.data.procanim_roles if item.bone}


def _detection(obj):
    return obj.data["procanim_detection"]


@pytest.mark.parametrize("kind, truth", [("human", HUMAN_TRUTH), ("bird", BIRD_TRUTH)])
def test_renamed_rigify_metarigs_get_complete_roles(kind, truth):
    obj = _metarig(kind)
    new = _rename_all(obj, seed=4)
    assert bpy.ops.procanim.detect_rig(armature=obj.name) == {"FINISHED"}
    roles = _roles(obj)
    assert not [r for r in COMPLETE if r not in roles]
    assert {r: roles.get(r) for r in truth} == {r: new[b] for r, b in truth.items()}
    assert _detection(obj)["family"] == "plain skeleton" and _detection(obj)["confidence"] >= 0.75


def test_the_named_metarig_is_recognised_with_full_confidence():
    obj = _metarig("human")
    assert bpy.ops.procanim.detect_rig(armature=obj.name) == {"FINISHED"}
    assert {r: _roles(obj).get(r) for r in HUMAN_TRUTH} == HUMAN_TRUTH
    assert _detection(obj)["family"] == "Rigify metarig" and _detection(obj)["confidence"] > 0.95


def test_the_renamed_bird_metarig_still_walks_like_a_duck():
    bird = _metarig("bird")
    new = _rename_all(bird, seed=9)
    assert bpy.ops.procanim.detect_rig(armature=bird.name) == {"FINISHED"}
    assert bpy.ops.procanim.duck_walk(armature=bird.name, key_interval=1, frame_end=48) == {"FINISHED"}
    foot, body = new["foot.L"], new["spine.003"]
    rest_z = bird.data.bones[foot].head_local.z
    z = np.array([harness.evaluated_pose(bird, f)[foot][2, 3] for f in range(0, 48)])
    assert np.min(z) > rest_z - 1e-4 and np.max(z) > rest_z + 0.003, "the feet lift and plant"
    y = harness.evaluated_pose(bird, 47)[body][1, 3]
    assert y < bird.data.bones[body].head_local.y - 0.02, "the bird walks forward"


@pytest.mark.parametrize("sample", ["mixamo", "cmu", "cmu_asf", "bvh_joints"])
def test_imported_style_skeletons_renamed_get_complete_roles(sample):
    bones, truth = rs.SAMPLES[sample]()
    bones, new = rs.renamed(rs.turned(bones, 90.0), seed=6)
    obj = _build(bones)
    assert bpy.ops.procanim.detect_rig(armature=obj.name) == {"FINISHED"}
    roles = _roles(obj)
    assert {r: roles.get(r) for r in truth} == {r: new[b] for r, b in truth.items()}


def test_a_generated_rigify_rig_maps_to_org_bones():
    obj = _metarig("human")
    bpy.ops.pose.rigify_generate()
    rig = next(o for o in bpy.data.objects if o.type == "ARMATURE" and o is not obj)
    assert bpy.ops.procanim.detect_rig(armature=rig.name) == {"FINISHED"}
    roles = _roles(rig)
    assert {r: roles.get(r) for r in HUMAN_TRUTH} == {r: f"ORG-{b}" for r, b in HUMAN_TRUTH.items()}
    assert roles.get("foot_ik.L") == "foot_ik.L"
    assert _detection(rig)["family"] == "Rigify (generated)" and _detection(rig)["confidence"] > 0.95


def test_a_rig_left_lying_is_found_and_the_user_told_to_stand_it_up(capfd):
    """A Y-up import whose object was not rotated to stand lies in the scene: Detect Roles finds its
    roles and warns that it lies and what to do; Generate refuses saying the armature's axes are
    turned; rotated 90° about X, the same rig walks."""
    bones, _ = rs.mixamo()
    lying = [dict(b, head=(b["head"][0], b["head"][2], -b["head"][1]), tail=(b["tail"][0], b["tail"][2], -b["tail"][1]))
             for b in bones]
    obj = _build(lying, name="Lying")
    capfd.readouterr()
    assert bpy.ops.procanim.detect_rig(armature=obj.name) == {"FINISHED"}
    out = capfd.readouterr().out  # Blender prints operator reports in background mode
    assert "lies in the scene" in out and "rotate the armature object" in out, out
    assert not [r for r in COMPLETE if r not in _roles(obj)]
    curve = bpy.data.curves.new("Line", "CURVE")
    spline = curve.splines.new("POLY")
    spline.points.add(1)
    spline.points[1].co = (0.0, -2.0, 0.0, 1.0)
    bpy.context.scene.collection.objects.link(bpy.data.objects.new("Line", curve))
    with pytest.raises(RuntimeError, match=r"armature's axes are turned.*rotate the armature object"):
        bpy.ops.procanim.path_walk(armature=obj.name, path="Line")
    assert obj.animation_data is None or obj.animation_data.action is None
    obj.rotation_euler = (np.radians(90.0), 0.0, 0.0)
    bpy.context.view_layer.update()
    assert bpy.ops.procanim.path_walk(armature=obj.name, path="Line") == {"FINISHED"}


def test_an_armature_with_no_bones_is_refused():
    obj = _build([], name="Empty")
    with pytest.raises(RuntimeError, match="'Empty' has no bones"):  # an ERROR report, CANCELLED
        bpy.ops.procanim.detect_rig(armature=obj.name)
    assert "procanim_detection" not in obj.data


class _Layout:
    """Stands in for the panel's UILayout and records the labels it draws."""

    def __init__(self, log):
        self.log = log

    def __getattr__(self, name):
        return lambda *a, **k: _Layout(self.log)

    def label(self, text="", **_kw):
        self.log.append(text)

    def operator(self, idname, **_kw):
        return SimpleNamespace()


def _panel_labels():
    log = []
    bpy.types.PROCANIM_PT_character.draw(SimpleNamespace(layout=_Layout(log)), bpy.context)
    return log


def test_the_character_panel_shows_family_confidence_missing_roles_and_edits():
    bones, _ = rs.cmu()
    right_arm = {"RightShoulder", "RightArm", "RightForeArm", "RightHand", "RightFingerBase", "RightHandIndex1",
                 "RThumb"}
    obj = _build([b for b in bones if b["name"] not in right_arm])
    bpy.context.scene.procanim.armature = obj
    assert "Roles not detected yet" in _panel_labels()
    assert bpy.ops.procanim.detect_rig(armature=obj.name) == {"FINISHED"}
    labels = _panel_labels()
    assert any(t.startswith("CMU BVH — confidence ") and t.endswith("%") for t in labels), labels
    assert "Missing: upper_arm.R, forearm.R, hand.R" in labels, labels
    assert not any("leg roles" in t for t in labels)
    assert "Map edited by hand since detection" not in labels
    next(i for i in obj.data.procanim_roles if i.role == "head").bone = "Neck1"
    assert "Map edited by hand since detection" in _panel_labels()
