"""Role detection from bone names alone (no rest pose): the naming conventions ProcAnim knows."""

import pytest

from procanim_addon import rigs
from procanim_addon.rig_roles import LEG_ROLES, detect

MIXAMO = ["Hips", "Spine", "Spine1", "Spine2", "Neck", "Head"] + [
    f"{s}{b}"
    for s in ("Left", "Right")
    for b in ("Shoulder", "Arm", "ForeArm", "Hand", "UpLeg", "Leg", "Foot", "ToeBase")
]


@pytest.mark.parametrize("prefix", ["mixamorig:", "mixamorig1:"])
def test_mixamo_prefixes_keep_the_real_names(prefix):
    rm = detect([prefix + n for n in MIXAMO])
    assert rm.family == "Mixamo"
    assert rm.bone("thigh.L") == prefix + "LeftUpLeg" and rm.bone("toe.R") == prefix + "RightToeBase"


def test_bvh_cmu_names():
    rm = detect(MIXAMO + ["LowerBack", "LHipJoint"])
    assert rm.bone("shin.R") == "RightLeg" and not rm.missing(LEG_ROLES)
    assert rm.family == "CMU BVH"


def test_unreal_mannequin():
    names = ["root", "pelvis", "spine_01", "spine_03", "neck_01", "head"] + [
        f"{b}_{s}" for s in "lr" for b in ("clavicle", "upperarm", "lowerarm", "hand", "thigh", "calf", "foot", "ball")
    ]
    rm = detect(names)
    assert rm.family == "Unreal" and rm.bone("shin.L") == "calf_l" and rm.bone("toe.R") == "ball_r"


def test_rigify_metarig_and_generated_rig():
    names = ["spine", "spine.001", "spine.002", "spine.003", "spine.004", "spine.006"] + [
        f"{b}.{s}" for s in "LR" for b in ("shoulder", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")
    ]
    assert detect(names).bone("clavicle.L") == "shoulder.L"
    assert detect(names).family == "Rigify metarig"
    generated = detect(["ORG-" + n for n in names] + ["DEF-" + n for n in names] + ["foot_ik.L", "MCH-foot_ik.L"])
    assert generated.bone("thigh.L") == "ORG-thigh.L" and generated.family == "Rigify (generated)"
    assert generated.get("foot_ik.L") == "foot_ik.L" and generated.get("foot_ik.R") is None


def test_procanim_rigs_have_every_role_they_need():
    _, human = rigs.human_skeleton()
    assert not human.missing(LEG_ROLES + ["hips", "chest", "head", "clavicle.L", "hand.R"])
    assert human.spine == ["spine", "chest"]
    _, duck = rigs.duck_skeleton()
    assert not duck.missing(LEG_ROLES + ["tail", "neck"])


def test_unknown_rig_finds_nothing_and_says_what_is_missing():
    rm = detect(["Bone", "Bone.001"])
    assert rm.missing(["thigh.L"]) == ["thigh.L"]
    assert rm.family == "plain skeleton" and rm.confidence == 0.0


@pytest.mark.parametrize(
    "names, family, role, bone",
    [
        (["hip", "lfemur", "ltibia", "lfoot", "rfemur", "rtibia", "rfoot", "lowerback", "thorax", "lhumerus"],
         "CMU BVH (ASF names)", "shin.L", "ltibia"),
        (["Hips", "LeftHip", "LeftKnee", "LeftAnkle", "RightHip", "RightKnee", "RightAnkle", "LeftCollar",
          "LeftShoulder", "LeftElbow", "LeftWrist", "Chest", "Neck", "Head"],
         "BVH (joint names)", "upper_arm.L", "LeftShoulder"),
    ],
)
def test_more_bvh_namings(names, family, role, bone):
    rm = detect(names)
    assert rm.family == family and rm.bone(role) == bone and not rm.missing(LEG_ROLES)


def test_names_alone_are_trusted_less_than_a_checked_structure():
    rm = detect(MIXAMO)
    assert 0.0 < rm.confidence <= 0.5
    assert "names only" in " ".join(rm.notes)
