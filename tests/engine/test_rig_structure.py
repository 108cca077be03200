"""Roles by structure: legs, arms and spine found from the bone tree and the rest pose, whatever the
names (every bone renamed ``Bone.###``), whichever way the character faces."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import rig_samples as rs  # noqa: E402

from procanim_addon import rigs  # noqa: E402
from procanim_addon.errors import InputError  # noqa: E402
from procanim_addon.rig_roles import ARM_ROLES, LEG_ROLES, detect  # noqa: E402
from procanim_addon.skeleton import Skeleton  # noqa: E402
from procanim_addon.walk import generate_path_walk  # noqa: E402

COMPLETE = LEG_ROLES + ARM_ROLES + ["hips", "spine", "chest", "neck", "head"]


def _detect(bones, with_rest_pose=True):
    sk = Skeleton.from_bones(rs.bone_dicts(bones))
    parents = {b["name"]: b["parent"] for b in bones}
    return detect([b["name"] for b in bones], parents, rig_name="test", skeleton=sk if with_rest_pose else None)


def _template_bones(template):
    return [{"name": b.name, "parent": b.parent, "head": b.head, "tail": b.tail} for b in template.bones]


def _procanim_human():
    truth = {r: r for r in ("root", "hips", "spine", "chest", "neck", "head")}
    truth.update({f"{r}.{s}": f"{r}.{s}" for r in ("clavicle", "upper_arm", "forearm", "hand", "thigh", "shin",
                                                    "foot", "toe") for s in "LR"})
    return _template_bones(rigs.human_template()), truth


ALL_HUMANS = {**{k: v for k, v in rs.SAMPLES.items() if k != "rigify_bird"}, "procanim": _procanim_human}


@pytest.mark.parametrize("yaw", [0.0, 90.0, 217.0])
@pytest.mark.parametrize("sample", sorted(ALL_HUMANS))
def test_renamed_humans_get_every_leg_arm_and_spine_role_right(sample, yaw):
    bones, truth = ALL_HUMANS[sample]()
    bones = rs.turned(bones, yaw, offset=(0.4, -2.0, 0.0))
    renamed, new = rs.renamed(bones, seed=int(yaw) + 7)
    rm = _detect(renamed)
    assert not rm.missing(COMPLETE), rm.notes
    expected = {role: new[bone] for role, bone in truth.items()}
    assert {r: rm.roles.get(r) for r in expected} == expected
    assert rm.family == "plain skeleton"


@pytest.mark.parametrize("sample", sorted(ALL_HUMANS))
def test_named_rigs_are_recognised_and_the_structure_agrees_with_their_names(sample):
    bones, truth = ALL_HUMANS[sample]()
    rm = _detect(bones)
    assert {r: rm.roles.get(r) for r in truth} == truth
    family = {"mixamo": "Mixamo", "cmu": "CMU BVH", "cmu_asf": "CMU BVH (ASF names)", "bvh_joints": "BVH (joint names)",
              "unreal": "Unreal", "rigify_metarig": "Rigify metarig", "procanim": "ProcAnim"}[sample]
    assert rm.family == family
    renamed = _detect(rs.renamed(bones, seed=3)[0])
    assert rm.confidence > renamed.confidence >= 0.75, "names that agree with the structure add confidence"


def test_cmu_names_that_today_get_no_leg_roles_get_them_from_structure():
    """The issue's CMU BVH: ASF-style names gave 'missing leg roles'; the structure finds them."""
    bones, truth = rs.cmu_asf()
    for b in bones:  # a converter's variant: the same tree, names the tables do not know
        b["name"] = b["name"].replace("femur", "upleg_").replace("tibia", "lowleg_")
        b["parent"] = b["parent"] and b["parent"].replace("femur", "upleg_").replace("tibia", "lowleg_")
    assert {"thigh.L", "shin.L", "thigh.R", "shin.R"} <= set(_detect(bones, with_rest_pose=False).missing(LEG_ROLES))
    rm = _detect(bones)
    assert not rm.missing(LEG_ROLES)
    assert rm.roles["thigh.L"] == "lupleg_" and rm.roles["shin.R"] == "rlowleg_"


def test_the_bird_gets_the_roles_the_duck_walk_needs_and_its_body_bone_is_the_hips():
    bones, truth = rs.rigify_bird()
    for rm, mapping in ((_detect(bones), {b: b for b in truth.values()}),
                        (_detect(rs.renamed(bones, seed=5)[0]), rs.renamed(bones, seed=5)[1])):
        assert {r: rm.roles.get(r) for r in truth} == {r: mapping[b] for r, b in truth.items()}
    assert _detect(bones).spine_bones == ["spine.004", "spine.005"]


def test_the_duck_renamed_keeps_hips_tail_neck_and_legs():
    bones = _template_bones(rigs.duck_template())
    renamed, new = rs.renamed(bones, seed=11)
    rm = _detect(renamed)
    for role in ["root", "hips", "tail", "neck", "head"] + [f"{r}.{s}" for r in ("thigh", "shin", "foot", "toe")
                                                            for s in "LR"]:
        assert rm.roles.get(role) == new[role], role
    assert rm.missing(ARM_ROLES) == ARM_ROLES and "no arms found" in " ".join(rm.notes)


def test_left_is_the_characters_own_left_not_an_axis():
    """The same body facing +Y instead of −Y: its left is −X, and the structure follows the feet."""
    bones, truth = rs.cmu()
    turned = rs.turned(bones, 180.0)
    rm = _detect(rs.renamed(turned, seed=1)[0])
    sk = Skeleton.from_bones(rs.bone_dicts(rs.renamed(turned, seed=1)[0]))
    assert sk.heads[sk.index(rm.roles["thigh.L"]), 0] < 0.0  # on −X: the left of a character facing +Y
    assert sk.tails[sk.index(rm.roles["toe.L"]), 1] > sk.heads[sk.index(rm.roles["foot.L"]), 1]


def test_a_rig_lying_along_y_is_read_too_and_said_to_lie():
    """A Y-up import whose object was not rotated to stand lies in the scene (the bridge's upright
    frame cannot stand it up): its roles are found, and the map says it lies along +Y."""
    bones, truth = rs.mixamo()
    y_up = [dict(b, head=(b["head"][0], b["head"][2], -b["head"][1]), tail=(b["tail"][0], b["tail"][2], -b["tail"][1]))
            for b in bones]
    renamed, new = rs.renamed(y_up, seed=8)
    rm = _detect(renamed)
    assert {r: rm.roles.get(r) for r in truth} == {r: new[b] for r, b in truth.items()}
    assert rm.lies_along == "+Y" and any("+Y" in n for n in rm.notes)
    upright = _detect(bones)
    assert upright.lies_along == "" and not any("+Y" in n for n in upright.notes)


def test_a_lying_rig_is_refused_saying_its_axes_are_turned_and_what_to_do():
    bones, _ = rs.mixamo()
    y_up = [dict(b, head=(b["head"][0], b["head"][2], -b["head"][1]), tail=(b["tail"][0], b["tail"][2], -b["tail"][1]))
            for b in bones]
    rm = _detect(y_up)
    sk = Skeleton.from_bones(rs.bone_dicts(y_up))
    with pytest.raises(InputError, match=r"armature's axes are turned.*rotate the armature object"):
        generate_path_walk(sk, rm, np.array([[0.0, 0.0, 0.0], [0.0, -2.0, 0.0]]))


def test_names_that_contradict_the_geometry_lose_and_cost_confidence():
    """A file whose 'Left' bones are on the character's right: sides come from the rest pose."""
    bones, _ = rs.cmu()
    swapped = [dict(b, head=(-b["head"][0], *b["head"][1:]), tail=(-b["tail"][0], *b["tail"][1:])) for b in bones]
    right, wrong = _detect(bones), _detect(swapped)
    assert wrong.roles["thigh.L"] == "RightUpLeg" and wrong.roles["hand.R"] == "LeftHand"
    assert any("thigh.L" in note for note in wrong.notes)
    assert wrong.confidence < right.confidence


def test_the_head_is_not_an_exporters_end_bone():
    bones, truth = rs.mixamo()
    renamed, new = rs.renamed(bones, seed=2)
    rm = _detect(renamed)
    assert rm.roles["head"] == new["mixamorig:Head"] != new["mixamorig:HeadTop_End"]
    # a long neck hides the end bone's shape; its name (…_End) still tells it apart
    long_neck, _ = rs.mixamo(neck_top=1.62)
    assert _detect(long_neck).roles["head"] == "mixamorig:Head"


def test_a_generated_rigify_rig_maps_to_its_org_bones_never_to_controls_or_mch():
    bones, truth = rs.rigify_generated()
    rm = _detect(bones)
    assert rm.family == "Rigify (generated)"
    assert rm.roles == truth
    body = [b for r, b in rm.roles.items() if not r.startswith("foot_ik")]
    assert all(b.startswith("ORG-") for b in body)
    assert rm.confidence > 0.95


def test_a_generated_rig_with_left_and_right_swapped_is_flagged():
    bones, _ = rs.rigify_generated()
    flipped = [dict(b, head=(-b["head"][0], *b["head"][1:]), tail=(-b["tail"][0], *b["tail"][1:])) for b in bones]
    rm, good = _detect(flipped), _detect(bones)
    assert rm.family == "Rigify (generated)"
    assert any("sides" in n for n in rm.notes) and rm.confidence < good.confidence - 0.1


def test_a_skeleton_with_no_legs_reports_it_and_falls_back_on_names():
    snake = [{"name": f"seg{i}", "parent": f"seg{i - 1}" if i else None,
              "head": (0.0, -0.3 * i, 0.1), "tail": (0.0, -0.3 * (i + 1), 0.1)} for i in range(6)]
    rm = _detect(snake)
    assert rm.missing(LEG_ROLES) == LEG_ROLES
    assert "no pelvis" in " ".join(rm.notes) and rm.confidence < 0.3


def test_uneven_legs_cost_confidence():
    bones, _ = rs.cmu()
    short = rs.renamed(bones, seed=4)
    even = _detect(short[0]).confidence
    for b in short[0]:  # the left shin 25 % shorter, its foot and toe lifted with it
        if b["name"] in (short[1]["LeftLeg"],):
            b["tail"] = tuple(np.add(b["tail"], (0.0, 0.0, 0.1)))
        if b["name"] in (short[1]["LeftFoot"], short[1]["LeftToeBase"]):
            b["head"] = tuple(np.add(b["head"], (0.0, 0.0, 0.1)))
            b["tail"] = tuple(np.add(b["tail"], (0.0, 0.0, 0.1)))
    rm = _detect(short[0])
    assert not rm.missing(LEG_ROLES) and rm.confidence < even - 0.01


def test_the_existing_demo_rigs_keep_their_roles_with_the_rest_pose():
    """ProcAnim's own rigs: the structure finds what their names always gave (no behaviour change)."""
    for template in (rigs.human_template(), rigs.duck_template()):
        by_names = template.rigmap()
        sk = template.skeleton()
        by_structure = detect(sk.names, {b.name: b.parent for b in template.bones}, template.name, skeleton=sk)
        assert by_structure.roles == by_names.roles
        assert by_structure.spine == by_names.spine


def _ik_feet(bones, truth):
    """The skeleton with its feet hanging from a root bone on the ground (added when it has none),
    as game exports with IK feet have them."""
    roots = [b["name"] for b in bones if b["parent"] is None]
    out = [dict(b) for b in bones]
    if truth.get("root") is None:
        out.append({"name": "ground_root", "parent": None, "head": (0.0, 0.0, 0.0), "tail": (0.0, 0.2, 0.0)})
        for b in out:
            if b["name"] in roots:
                b["parent"] = "ground_root"
    root = truth.get("root") or "ground_root"
    for b in out:
        if b["name"] in (truth["foot.L"], truth["foot.R"]):
            b["parent"] = root
    return out


@pytest.mark.parametrize("sample", ["procanim", "mixamo", "cmu", "unreal", "rigify_metarig"])
def test_feet_that_hang_from_the_root_are_found_at_the_end_of_the_shin(sample):
    """A game rig's IK feet: the foot is not the shin's child; it is the foot whose head lies at
    the shin's end (renamed: the structure alone decides)."""
    bones, truth = ALL_HUMANS[sample]()
    renamed, new = rs.renamed(_ik_feet(bones, truth), seed=11)
    rm = _detect(renamed)
    assert not rm.missing(COMPLETE), rm.notes
    expected = {role: new[bone] for role, bone in truth.items()}
    assert {r: rm.roles.get(r) for r in expected} == expected


@pytest.mark.parametrize("yaw", [0.0, 150.0])
def test_arms_spine_and_head_are_found_when_the_legs_have_no_feet(yaw):
    """No foot anywhere (legs end at the shins): the facing comes from the knees, and the arms,
    spine and head are found all the same; the legs are not guessed."""
    bones, truth = rs.mixamo()
    feet = {truth["foot.L"], truth["foot.R"]}
    gone = feet | {b["name"] for b in bones if b["parent"] in feet}
    gone |= {b["name"] for b in bones if b["parent"] in gone}
    renamed, new = rs.renamed(rs.turned([b for b in bones if b["name"] not in gone], yaw), seed=5)
    rm = _detect(renamed)
    upper = ARM_ROLES + ["hips", "spine", "chest", "neck", "head"]
    assert {r: rm.roles.get(r) for r in upper} == {r: new[truth[r]] for r in upper}
    assert rm.missing(LEG_ROLES) and any("no feet found" in n for n in rm.notes)
