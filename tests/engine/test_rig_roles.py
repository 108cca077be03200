"""Role detection for the rig families of DESIGN.md."""

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
    assert rm.family == "mixamo"
    assert rm.bone("thigh.L") == prefix + "LeftUpLeg" and rm.bone("toe.R") == prefix + "RightToeBase"


def test_bvh_cmu_names():
    rm = detect(MIXAMO + ["LowerBack", "LHipJoint"])
    assert rm.bone("shin.R") == "RightLeg" and not rm.missing(LEG_ROLES)


def test_unreal_mannequin():
    names = ["root", "pelvis", "spine_01", "spine_03", "neck_01", "head"] + [
        f"{b}_{s}" for s in "lr" for b in ("clavicle", "upperarm", "lowerarm", "hand", "thigh", "calf", "foot", "ball")
    ]
    rm = detect(names)
    assert rm.family == "unreal" and rm.bone("shin.L") == "calf_l" and rm.bone("toe.R") == "ball_r"


def test_rigify_metarig_and_generated_rig():
    names = ["spine", "spine.001", "spine.002", "spine.003", "spine.004", "spine.006"] + [
        f"{b}.{s}" for s in "LR" for b in ("shoulder", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")
    ]
    assert detect(names).bone("clavicle.L") == "shoulder.L"
    generated = detect(["ORG-" + n for n in names] + ["DEF-" + n for n in names])
    assert generated.bone("thigh.L") == "ORG-thigh.L"


def test_procanim_rigs_have_every_role_they_need():
    _, human = rigs.human_skeleton()
    assert not human.missing(LEG_ROLES + ["hips", "chest", "head", "clavicle.L", "hand.R"])
    assert human.spine == ["spine", "chest"]
    _, duck = rigs.duck_skeleton()
    assert not duck.missing(LEG_ROLES + ["tail", "neck"])


def test_unknown_rig_finds_nothing_and_says_what_is_missing():
    rm = detect(["Bone", "Bone.001"])
    assert rm.missing(["thigh.L"]) == ["thigh.L"]
