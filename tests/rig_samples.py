"""Skeletons under the namings of real files, for the role-detection tests (engine and Blender).

Each sample is a list of bones ``{"name", "parent", "head", "tail"}`` (metres, armature space,
Z up) built from one humanoid body (1.75 m, T- or A-pose) and a naming convention, together with
the truth: role → bone name. The conventions copy the bone trees of the files they stand for:

- ``mixamo``: ``mixamorig:`` names, three spine bones, fingers, and the end bones an FBX import
  keeps (``HeadTop_End``, ``LeftToe_End``, ``LeftHandIndex4`` …);
- ``cmu``: CMU mocap as BVH (``Hips → LHipJoint → LeftUpLeg``, ``LowerBack``, ``Neck1``,
  ``LeftFingerBase``, ``LThumb``);
- ``cmu_asf``: CMU's own names (``hip``, ``lhipjoint``, ``lfemur``, ``ltibia``, ``lfoot``,
  ``ltoes``, ``thorax``, ``lclavicle``, ``lhumerus``, ``lradius``, ``lwrist`` → ``lhand``/``lthumb``);
- ``bvh_joints``: bones named for the joint they start at (``LeftHip`` = thigh, ``LeftCollar`` =
  clavicle, ``LeftShoulder`` = upper arm, ``LeftElbow`` = forearm);
- ``unreal``: ``root`` on the ground, ``pelvis``, ``spine_01..03``, twist bones beside the limbs
  and the IK bones under the root.

``renamed`` gives the same skeleton with every bone called ``Bone.###`` in a shuffled order.
Only the stdlib and numpy: the Blender tests import this file too.
"""

from __future__ import annotations

import random

import numpy as np

SIDES = {"L": 1.0, "R": -1.0}


def _body(arms: str) -> dict[str, tuple]:
    """Joint positions of the left half and the mid-line (character facing −Y, left = +X)."""
    arm = {
        "T": [(0.18, 0.02, 1.43), (0.45, 0.02, 1.43), (0.70, 0.02, 1.43), (0.79, 0.02, 1.43)],
        "A": [(0.18, 0.02, 1.43), (0.38, 0.04, 1.22), (0.54, -0.01, 1.02), (0.59, -0.03, 0.94)],
    }[arms]
    return {
        "pelvis": (0.0, 0.0, 0.95),
        "hip": (0.09, 0.0, 0.91),
        "knee": (0.09, -0.015, 0.50),
        "ankle": (0.09, 0.01, 0.08),
        "ball": (0.09, -0.11, 0.015),
        "toe_tip": (0.09, -0.18, 0.015),
        "chest_top": (0.0, 0.01, 1.43),
        "neck_top": (0.0, -0.005, 1.57),
        "head_top": (0.0, -0.005, 1.75),
        "clavicle": (0.025, -0.01, 1.41),
        "shoulder": arm[0],
        "elbow": arm[1],
        "wrist": arm[2],
        "knuckle": arm[3],
    }


def _lerp(a, b, s):
    return tuple(np.add(a, np.multiply(s, np.subtract(b, a))))


def _mirror(p, side):
    return (p[0] * SIDES[side], p[1], p[2])


def _chain(out, names, parent, points):
    """Bones ``names[i]`` from ``points[i]`` to ``points[i+1]``, each the parent of the next."""
    for name, a, b in zip(names, points[:-1], points[1:], strict=True):
        out.append({"name": name, "parent": parent, "head": a, "tail": b})
        parent = name
    return parent


def _spine(out, j, names, parent):
    """Spine bones from the pelvis to the chest top; returns the last (the chest)."""
    n = len(names)
    points = [_lerp((0.0, 0.0, 1.05), j["chest_top"], i / n) for i in range(n + 1)]
    if parent is None:  # the pelvis bone is the spine's first bone's parent
        raise ValueError("spine needs a parent")
    return _chain(out, names, parent, points)


def _neck_head(out, j, necks, head, parent, head_end=None):
    n = len(necks)
    points = [_lerp(j["chest_top"], j["neck_top"], i / n) for i in range(n + 1)]
    last = _chain(out, necks, parent, points)
    _chain(out, [head], last, [j["neck_top"], j["head_top"]])
    if head_end:  # an FBX leaf: as long as the head, above it
        _chain(out, [head_end], head, [j["head_top"], _lerp(j["neck_top"], j["head_top"], 2.0)])


def _fingers(out, hand, wrist, knuckle, side, names, ends):
    """Five three-bone fingers from the knuckle line (plus end bones when ``ends``)."""
    along = np.subtract(knuckle, wrist)
    for k, finger in enumerate(names):
        spread = np.array([0.0, (k - 2) * 0.018, 0.0])
        start = tuple(np.add(knuckle, spread) if finger != names[0] else np.add(wrist, [0, -0.025, -0.01]))
        joints = [_lerp(start, tuple(np.add(start, along * 1.1)), i / 3) for i in range(4)]
        bones = [f"{finger}{i}" for i in range(1, 4)] + ([f"{finger}4"] if ends else [])
        if ends:
            joints.append(tuple(np.add(joints[-1], along * 0.35)))
        _chain(out, bones, hand, [_mirror(p, side) for p in joints])


def _hand_tips(out, j, side, parent, chain, thumb):
    """CMU's hand: a two-bone chain on from the hand's end and a one-bone thumb beside it."""
    w, k = _mirror(j["wrist"], side), _mirror(j["knuckle"], side)
    _chain(out, chain, parent, [k, _lerp(w, k, 1.4), _lerp(w, k, 1.8)])
    _chain(out, [thumb], parent, [k, tuple(np.add(k, (0.0, -0.05, -0.01)))])


def _leg(out, j, names, parent, side, hip_joint=None, toe_end=None):
    m = [_mirror(j[k], side) for k in ("hip", "knee", "ankle", "ball", "toe_tip")]
    if hip_joint:
        parent = _chain(out, [hip_joint], parent, [j["pelvis"], m[0]])
    last = _chain(out, names, parent, m)
    if toe_end:
        _chain(out, [toe_end], last, [m[4], _lerp(m[3], m[4], 2.0)])


def _arm(out, j, names, parent, side):
    pts = [_mirror(j[k], side) for k in ("clavicle", "shoulder", "elbow", "wrist", "knuckle")]
    if len(names) == 3:  # no clavicle
        pts = pts[1:]
    return _chain(out, names, parent, pts)


def _truth(spine, neck, head, chest, legs, arms, hips, extra=None):
    """role → bone for the sides (``legs``/``arms``: role → pattern with ``{s}`` side placeholders)."""
    t = {"hips": hips, "spine": spine, "chest": chest, "neck": neck, "head": head}
    for side_name, side in (("Left", "L"), ("Right", "R")):
        for role, pat in {**legs, **arms}.items():
            t[f"{role}.{side}"] = pat.format(side=side_name, s=side.lower(), S=side)
    t.update(extra or {})
    return t


def mixamo(prefix: str = "mixamorig:", arms: str = "T", neck_top: float = 1.55) -> tuple[list[dict], dict[str, str]]:
    """Mixamo's proportions: a short neck (0.10 m) under a head bone that spans the skull (0.20 m)."""
    j, out, p = _body(arms), [], prefix
    j["neck_top"] = (0.0, -0.005, neck_top)
    out.append({"name": p + "Hips", "parent": None, "head": j["pelvis"], "tail": (0.0, 0.0, 1.05)})
    chest = _spine(out, j, [p + "Spine", p + "Spine1", p + "Spine2"], p + "Hips")
    _neck_head(out, j, [p + "Neck"], p + "Head", chest, head_end=p + "HeadTop_End")
    for side, s in (("Left", "L"), ("Right", "R")):
        names = [p + f"{side}{b}" for b in ("UpLeg", "Leg", "Foot", "ToeBase")]
        _leg(out, j, names, p + "Hips", s, toe_end=p + f"{side}Toe_End")
        hand = _arm(out, j, [p + f"{side}{b}" for b in ("Shoulder", "Arm", "ForeArm", "Hand")], chest, s)
        fingers = [p + f"{side}Hand{f}" for f in ("Thumb", "Index", "Middle", "Ring", "Pinky")]
        _fingers(out, hand, j["wrist"], j["knuckle"], s, fingers, ends=True)
    legs = {"thigh": p + "{side}UpLeg", "shin": p + "{side}Leg", "foot": p + "{side}Foot", "toe": p + "{side}ToeBase"}
    arms_ = {"clavicle": p + "{side}Shoulder", "upper_arm": p + "{side}Arm", "forearm": p + "{side}ForeArm",
             "hand": p + "{side}Hand"}
    return out, _truth(p + "Spine", p + "Neck", p + "Head", p + "Spine2", legs, arms_, p + "Hips")


def cmu(arms: str = "T") -> tuple[list[dict], dict[str, str]]:
    """CMU as BVH: Hips → LHipJoint → LeftUpLeg …, LowerBack → Spine → Spine1, Neck → Neck1 → Head."""
    j, out = _body(arms), []
    out.append({"name": "Hips", "parent": None, "head": j["pelvis"], "tail": (0.0, 0.0, 1.05)})
    chest = _spine(out, j, ["LowerBack", "Spine", "Spine1"], "Hips")
    _neck_head(out, j, ["Neck", "Neck1"], "Head", chest)
    for side, s in (("Left", "L"), ("Right", "R")):
        _leg(out, j, [f"{side}{b}" for b in ("UpLeg", "Leg", "Foot", "ToeBase")], "Hips", s, hip_joint=f"{s}HipJoint")
        hand = _arm(out, j, [f"{side}{b}" for b in ("Shoulder", "Arm", "ForeArm", "Hand")], chest, s)
        _hand_tips(out, j, s, hand, [f"{side}FingerBase", f"{side}HandIndex1"], f"{s}Thumb")
    legs = {"thigh": "{side}UpLeg", "shin": "{side}Leg", "foot": "{side}Foot", "toe": "{side}ToeBase"}
    arms_ = {"clavicle": "{side}Shoulder", "upper_arm": "{side}Arm", "forearm": "{side}ForeArm", "hand": "{side}Hand"}
    return out, _truth("LowerBack", "Neck", "Head", "Spine1", legs, arms_, "Hips")


def cmu_asf(arms: str = "A") -> tuple[list[dict], dict[str, str]]:
    """CMU's ASF names: hip, lhipjoint → lfemur → ltibia → lfoot → ltoes, lowerback → upperback →
    thorax, lowerneck → upperneck → head, lclavicle → lhumerus → lradius → lwrist → lhand/lthumb."""
    j, out = _body(arms), []
    out.append({"name": "hip", "parent": None, "head": j["pelvis"], "tail": (0.0, 0.0, 1.05)})
    chest = _spine(out, j, ["lowerback", "upperback", "thorax"], "hip")
    _neck_head(out, j, ["lowerneck", "upperneck"], "head", chest)
    for s in "LR":
        sl = s.lower()
        _leg(out, j, [f"{sl}femur", f"{sl}tibia", f"{sl}foot", f"{sl}toes"], "hip", s, hip_joint=f"{sl}hipjoint")
        wrist = _arm(out, j, [f"{sl}clavicle", f"{sl}humerus", f"{sl}radius", f"{sl}wrist"], chest, s)
        _hand_tips(out, j, s, wrist, [f"{sl}hand", f"{sl}fingers"], f"{sl}thumb")
    legs = {"thigh": "{s}femur", "shin": "{s}tibia", "foot": "{s}foot", "toe": "{s}toes"}
    arms_ = {"clavicle": "{s}clavicle", "upper_arm": "{s}humerus", "forearm": "{s}radius", "hand": "{s}wrist"}
    return out, _truth("lowerback", "lowerneck", "head", "thorax", legs, arms_, "hip")


def bvh_joints(arms: str = "T") -> tuple[list[dict], dict[str, str]]:
    """Bones named for their joints: Hips, LeftHip (thigh), LeftKnee, LeftAnkle, LeftToe, Chest,
    Chest2, Neck, Head, LeftCollar, LeftShoulder (upper arm), LeftElbow, LeftWrist."""
    j, out = _body(arms), []
    out.append({"name": "Hips", "parent": None, "head": j["pelvis"], "tail": (0.0, 0.0, 1.05)})
    chest = _spine(out, j, ["Chest", "Chest2"], "Hips")
    _neck_head(out, j, ["Neck"], "Head", chest)
    for side, s in (("Left", "L"), ("Right", "R")):
        _leg(out, j, [f"{side}{b}" for b in ("Hip", "Knee", "Ankle", "Toe")], "Hips", s)
        _arm(out, j, [f"{side}{b}" for b in ("Collar", "Shoulder", "Elbow", "Wrist")], chest, s)
    legs = {"thigh": "{side}Hip", "shin": "{side}Knee", "foot": "{side}Ankle", "toe": "{side}Toe"}
    arms_ = {"clavicle": "{side}Collar", "upper_arm": "{side}Shoulder", "forearm": "{side}Elbow",
             "hand": "{side}Wrist"}
    return out, _truth("Chest", "Neck", "Head", "Chest2", legs, arms_, "Hips")


def unreal(arms: str = "A") -> tuple[list[dict], dict[str, str]]:
    """Unreal mannequin: root on the ground, pelvis, spine_01..03, twist bones beside the limbs,
    ik_foot_root / ik_hand_root under the root."""
    j, out = _body(arms), []
    out.append({"name": "root", "parent": None, "head": (0.0, 0.0, 0.0), "tail": (0.0, 0.25, 0.0)})
    out.append({"name": "pelvis", "parent": "root", "head": j["pelvis"], "tail": (0.0, 0.0, 1.05)})
    chest = _spine(out, j, ["spine_01", "spine_02", "spine_03"], "pelvis")
    _neck_head(out, j, ["neck_01"], "head", chest)
    out.append({"name": "ik_foot_root", "parent": "root", "head": (0.0, 0.0, 0.0), "tail": (0.0, 0.0, 0.1)})
    out.append({"name": "ik_hand_root", "parent": "root", "head": (0.0, 0.0, 0.0), "tail": (0.0, 0.0, 0.1)})
    for s in "LR":
        sl = s.lower()
        _leg(out, j, [f"thigh_{sl}", f"calf_{sl}", f"foot_{sl}", f"ball_{sl}"], "pelvis", s)
        _arm(out, j, [f"clavicle_{sl}", f"upperarm_{sl}", f"lowerarm_{sl}", f"hand_{sl}"], chest, s)
        for bone, a, b in ((f"thigh_twist_01_{sl}", "hip", "knee"), (f"calf_twist_01_{sl}", "knee", "ankle"),
                           (f"upperarm_twist_01_{sl}", "shoulder", "elbow"),
                           (f"lowerarm_twist_01_{sl}", "elbow", "wrist")):
            parent = {"hip": f"thigh_{sl}", "knee": f"calf_{sl}", "shoulder": f"upperarm_{sl}",
                      "elbow": f"lowerarm_{sl}"}[a]
            pa, pb = _mirror(j[a], s), _mirror(j[b], s)
            out.append({"name": bone, "parent": parent, "head": _lerp(pa, pb, 0.5), "tail": _lerp(pa, pb, 0.75)})
        ankle = _mirror(j["ankle"], s)
        out.append({"name": f"ik_foot_{sl}", "parent": "ik_foot_root", "head": ankle,
                    "tail": _lerp(ankle, _mirror(j["ball"], s), 1.0)})
        wrist = _mirror(j["wrist"], s)
        out.append({"name": f"ik_hand_{sl}", "parent": "ik_hand_root", "head": wrist,
                    "tail": _mirror(j["knuckle"], s)})
    legs = {"thigh": "thigh_{s}", "shin": "calf_{s}", "foot": "foot_{s}", "toe": "ball_{s}"}
    arms_ = {"clavicle": "clavicle_{s}", "upperarm": "upperarm_{s}", "forearm": "lowerarm_{s}", "hand": "hand_{s}"}
    arms_["upper_arm"] = arms_.pop("upperarm")
    return out, _truth("spine_01", "neck_01", "head", "spine_03", legs, arms_, "pelvis", {"root": "root"})


# ----------------------------------------------------------------------------- Rigify metarigs

# The bones of Blender 5.0's Rigify metarigs (``armature_human_metarig_add`` /
# ``armature_bird_metarig_add``), rest heads and tails rounded to the millimetre: every bone of
# the body, a sample of the face, hands and feathers (the Blender tests use the real metarigs).
RIGIFY_HUMAN_METARIG = [
    ("spine", None, (0.0, 0.055, 1.01), (0.0, 0.017, 1.157)),
    ("spine.001", "spine", (0.0, 0.017, 1.157), (0.0, 0.0, 1.293)),
    ("spine.002", "spine.001", (0.0, 0.0, 1.293), (0.0, 0.006, 1.466)),
    ("spine.003", "spine.002", (0.0, 0.006, 1.466), (0.0, 0.011, 1.658)),
    ("spine.004", "spine.003", (0.0, 0.011, 1.658), (0.0, -0.013, 1.72)),
    ("spine.005", "spine.004", (0.0, -0.013, 1.72), (0.0, -0.025, 1.781)),
    ("spine.006", "spine.005", (0.0, -0.025, 1.781), (0.0, -0.025, 1.98)),
    ("face", "spine.006", (0.0, -0.025, 1.781), (0.0, -0.025, 1.872)),
    ("nose", "face", (0.0, -0.154, 1.898), (0.0, -0.183, 1.859)),
    ("jaw", "face", (0.0, -0.094, 1.744), (0.0, -0.152, 1.739)),
    ("chin", "jaw", (0.0, -0.152, 1.739), (0.0, -0.163, 1.769)),
    ("ear.L", "face", (0.092, -0.031, 1.862), (0.099, -0.034, 1.902)),
    ("ear.L.001", "ear.L", (0.099, -0.034, 1.902), (0.12, -0.009, 1.907)),
    ("ear.R", "face", (-0.092, -0.031, 1.862), (-0.099, -0.034, 1.902)),
    ("ear.R.001", "ear.R", (-0.099, -0.034, 1.902), (-0.12, -0.009, 1.907)),
    ("forehead.L", "face", (0.017, -0.132, 1.97), (0.022, -0.155, 1.914)),
    ("forehead.R", "face", (-0.017, -0.132, 1.97), (-0.022, -0.155, 1.914)),
    ("eye.L", "face", (0.052, -0.121, 1.894), (0.052, -0.145, 1.894)),
    ("eye.R", "face", (-0.052, -0.121, 1.894), (-0.052, -0.145, 1.894)),
    ("shoulder.L", "spine.003", (0.018, -0.068, 1.605), (0.169, 0.021, 1.605)),
    ("upper_arm.L", "shoulder.L", (0.195, 0.027, 1.585), (0.442, 0.089, 1.449)),
    ("forearm.L", "upper_arm.L", (0.442, 0.089, 1.449), (0.659, 0.049, 1.306)),
    ("hand.L", "forearm.L", (0.659, 0.049, 1.306), (0.723, 0.041, 1.258)),
    ("palm.01.L", "hand.L", (0.692, 0.022, 1.288), (0.746, 0.005, 1.248)),
    ("f_index.01.L", "palm.01.L", (0.746, 0.005, 1.248), (0.772, 0.001, 1.211)),
    ("thumb.01.L", "palm.01.L", (0.67, 0.021, 1.274), (0.686, 0.002, 1.24)),
    ("palm.02.L", "hand.L", (0.697, 0.039, 1.288), (0.752, 0.028, 1.249)),
    ("f_middle.01.L", "palm.02.L", (0.752, 0.028, 1.249), (0.776, 0.023, 1.206)),
    ("palm.03.L", "hand.L", (0.696, 0.054, 1.287), (0.754, 0.052, 1.248)),
    ("f_ring.01.L", "palm.03.L", (0.754, 0.052, 1.248), (0.771, 0.05, 1.207)),
    ("palm.04.L", "hand.L", (0.693, 0.07, 1.287), (0.753, 0.076, 1.243)),
    ("f_pinky.01.L", "palm.04.L", (0.753, 0.076, 1.243), (0.759, 0.076, 1.216)),
    ("shoulder.R", "spine.003", (-0.018, -0.068, 1.605), (-0.169, 0.021, 1.605)),
    ("upper_arm.R", "shoulder.R", (-0.195, 0.027, 1.585), (-0.442, 0.089, 1.449)),
    ("forearm.R", "upper_arm.R", (-0.442, 0.089, 1.449), (-0.659, 0.049, 1.306)),
    ("hand.R", "forearm.R", (-0.659, 0.049, 1.306), (-0.723, 0.041, 1.258)),
    ("palm.01.R", "hand.R", (-0.692, 0.022, 1.288), (-0.746, 0.005, 1.248)),
    ("f_index.01.R", "palm.01.R", (-0.746, 0.005, 1.248), (-0.772, 0.001, 1.211)),
    ("thumb.01.R", "palm.01.R", (-0.67, 0.021, 1.274), (-0.686, 0.002, 1.24)),
    ("palm.02.R", "hand.R", (-0.697, 0.039, 1.288), (-0.752, 0.028, 1.249)),
    ("f_middle.01.R", "palm.02.R", (-0.752, 0.028, 1.249), (-0.776, 0.023, 1.206)),
    ("palm.03.R", "hand.R", (-0.696, 0.054, 1.287), (-0.754, 0.052, 1.248)),
    ("f_ring.01.R", "palm.03.R", (-0.754, 0.052, 1.248), (-0.771, 0.05, 1.207)),
    ("palm.04.R", "hand.R", (-0.693, 0.07, 1.287), (-0.753, 0.076, 1.243)),
    ("f_pinky.01.R", "palm.04.R", (-0.753, 0.076, 1.243), (-0.759, 0.076, 1.216)),
    ("breast.L", "spine.003", (0.118, 0.049, 1.46), (0.118, -0.091, 1.46)),
    ("breast.R", "spine.003", (-0.118, 0.049, 1.46), (-0.118, -0.091, 1.46)),
    ("pelvis.L", "spine", (0.0, 0.055, 1.01), (0.111, -0.045, 1.153)),
    ("pelvis.R", "spine", (0.0, 0.055, 1.01), (-0.111, -0.045, 1.153)),
    ("thigh.L", "spine", (0.098, 0.012, 1.072), (0.098, -0.029, 0.537)),
    ("shin.L", "thigh.L", (0.098, -0.029, 0.537), (0.098, 0.016, 0.085)),
    ("foot.L", "shin.L", (0.098, 0.016, 0.085), (0.098, -0.093, 0.017)),
    ("toe.L", "foot.L", (0.098, -0.093, 0.017), (0.098, -0.161, 0.017)),
    ("heel.02.L", "foot.L", (0.06, 0.046, 0.0), (0.14, 0.046, 0.0)),
    ("thigh.R", "spine", (-0.098, 0.012, 1.072), (-0.098, -0.029, 0.537)),
    ("shin.R", "thigh.R", (-0.098, -0.029, 0.537), (-0.098, 0.016, 0.085)),
    ("foot.R", "shin.R", (-0.098, 0.016, 0.085), (-0.098, -0.093, 0.017)),
    ("toe.R", "foot.R", (-0.098, -0.093, 0.017), (-0.098, -0.161, 0.017)),
    ("heel.02.R", "foot.R", (-0.06, 0.046, 0.0), (-0.14, 0.046, 0.0)),
]
RIGIFY_BIRD_METARIG = [
    ("spine.003", None, (0.0, 0.045, 0.084), (0.0, 0.019, 0.089)),
    ("spine.002", "spine.003", (0.0, 0.045, 0.084), (0.0, 0.076, 0.088)),
    ("spine.001", "spine.002", (0.0, 0.076, 0.088), (0.0, 0.104, 0.091)),
    ("spine", "spine.001", (0.0, 0.104, 0.091), (0.0, 0.137, 0.089)),
    ("spine.004", "spine.003", (0.0, 0.019, 0.089), (0.0, -0.011, 0.098)),
    ("spine.005", "spine.004", (0.0, -0.011, 0.098), (0.0, -0.03, 0.116)),
    ("shoulder.L", "spine.005", (0.001, -0.022, 0.089), (0.008, -0.002, 0.118)),
    ("Wing.L", "shoulder.L", (0.009, 0.014, 0.116), (0.049, 0.011, 0.116)),
    ("Wing.001.L", "Wing.L", (0.049, 0.011, 0.116), (0.092, 0.002, 0.119)),
    ("Wing.002.L", "Wing.001.L", (0.092, 0.002, 0.119), (0.213, 0.018, 0.116)),
    ("w_feather.003.L", "Wing.001.L", (0.075, 0.021, 0.112), (0.134, 0.083, 0.09)),
    ("w_feather.004.L", "Wing.L", (0.038, 0.025, 0.108), (0.055, 0.088, 0.09)),
    ("spine.006", "spine.005", (0.0, -0.03, 0.116), (0.0, -0.042, 0.135)),
    ("neck.001", "spine.006", (0.0, -0.042, 0.135), (0.0, -0.046, 0.143)),
    ("neck.002", "neck.001", (0.0, -0.046, 0.143), (0.0, -0.048, 0.15)),
    ("head", "neck.002", (0.0, -0.048, 0.15), (0.0, -0.103, 0.182)),
    ("beak.001.T", "head", (0.0, -0.07, 0.158), (0.0, -0.093, 0.16)),
    ("beak.002.T", "beak.001.T", (0.0, -0.093, 0.16), (0.0, -0.113, 0.153)),
    ("eye.L", "head", (0.005, -0.065, 0.162), (0.02, -0.068, 0.162)),
    ("eye.R", "head", (-0.005, -0.065, 0.162), (-0.02, -0.068, 0.162)),
    ("n_feather.001.L", "head", (0.01, -0.039, 0.157), (0.013, -0.025, 0.143)),
    ("n_feather.001.R", "head", (-0.01, -0.039, 0.157), (-0.013, -0.025, 0.143)),
    ("shoulder.R", "spine.005", (-0.001, -0.022, 0.089), (-0.008, -0.002, 0.118)),
    ("Wing.R", "shoulder.R", (-0.009, 0.014, 0.116), (-0.049, 0.011, 0.116)),
    ("Wing.001.R", "Wing.R", (-0.049, 0.011, 0.116), (-0.092, 0.002, 0.119)),
    ("Wing.002.R", "Wing.001.R", (-0.092, 0.002, 0.119), (-0.213, 0.018, 0.116)),
    ("w_feather.003.R", "Wing.001.R", (-0.075, 0.021, 0.112), (-0.134, 0.083, 0.09)),
    ("w_feather.004.R", "Wing.R", (-0.038, 0.025, 0.108), (-0.055, 0.088, 0.09)),
    ("pelvis.L", "spine.004", (0.0, 0.019, 0.089), (0.025, 0.007, 0.078)),
    ("pelvis.R", "spine.004", (0.0, 0.019, 0.089), (-0.025, 0.007, 0.078)),
    ("thigh.L", "spine.004", (0.015, 0.006, 0.074), (0.015, 0.014, 0.039)),
    ("shin.L", "thigh.L", (0.015, 0.014, 0.039), (0.015, 0.002, 0.007)),
    ("foot.L", "shin.L", (0.015, 0.002, 0.007), (0.015, -0.003, 0.004)),
    ("toe.L", "foot.L", (0.015, -0.003, 0.004), (0.015, -0.04, 0.001)),
    ("toes_parent.L", "toe.L", (0.015, -0.003, 0.004), (0.015, -0.01, 0.004)),
    ("t_ring.001.L", "toes_parent.L", (0.018, -0.003, 0.003), (0.022, -0.013, 0.004)),
    ("t_index.001.L", "toes_parent.L", (0.012, -0.003, 0.003), (0.009, -0.013, 0.004)),
    ("t_middle.001.L", "toes_parent.L", (0.015, -0.005, 0.003), (0.015, -0.021, 0.004)),
    ("t_middle.002.L", "t_middle.001.L", (0.015, -0.021, 0.004), (0.015, -0.031, 0.003)),
    ("t_middle.003.L", "t_middle.002.L", (0.015, -0.031, 0.003), (0.015, -0.042, 0.0)),
    ("thigh.R", "spine.004", (-0.015, 0.006, 0.074), (-0.015, 0.014, 0.039)),
    ("shin.R", "thigh.R", (-0.015, 0.014, 0.039), (-0.015, 0.002, 0.007)),
    ("foot.R", "shin.R", (-0.015, 0.002, 0.007), (-0.015, -0.003, 0.004)),
    ("toe.R", "foot.R", (-0.015, -0.003, 0.004), (-0.015, -0.04, 0.001)),
    ("toes_parent.R", "toe.R", (-0.015, -0.003, 0.004), (-0.015, -0.01, 0.004)),
    ("t_ring.001.R", "toes_parent.R", (-0.018, -0.003, 0.003), (-0.022, -0.013, 0.004)),
    ("t_index.001.R", "toes_parent.R", (-0.012, -0.003, 0.003), (-0.009, -0.013, 0.004)),
    ("t_middle.001.R", "toes_parent.R", (-0.015, -0.005, 0.003), (-0.015, -0.021, 0.004)),
    ("t_middle.002.R", "t_middle.001.R", (-0.015, -0.021, 0.004), (-0.015, -0.031, 0.003)),
    ("t_middle.003.R", "t_middle.002.R", (-0.015, -0.031, 0.003), (-0.015, -0.042, 0.0)),
]


def _from_table(table) -> list[dict]:
    return [{"name": n, "parent": p, "head": h, "tail": t} for n, p, h, t in table]


def _sided(pairs: dict[str, str]) -> dict[str, str]:
    return {f"{role}.{s}": bone.format(s=s) for role, bone in pairs.items() for s in "LR"}


def rigify_metarig() -> tuple[list[dict], dict[str, str]]:
    truth = {"hips": "spine", "spine": "spine.001", "chest": "spine.003", "neck": "spine.004", "head": "spine.006"}
    truth.update(_sided({"clavicle": "shoulder.{s}", "upper_arm": "upper_arm.{s}", "forearm": "forearm.{s}",
                         "hand": "hand.{s}", "thigh": "thigh.{s}", "shin": "shin.{s}", "foot": "foot.{s}",
                         "toe": "toe.{s}"}))
    return _from_table(RIGIFY_HUMAN_METARIG), truth


def rigify_bird() -> tuple[list[dict], dict[str, str]]:
    """The bird: the legs hang from ``spine.004``, below the body bone ``spine.003`` that also
    carries the tail (``spine.002``), so ``spine.003`` is the hips."""
    truth = {"hips": "spine.003", "tail": "spine.002", "spine": "spine.004", "chest": "spine.005",
             "neck": "spine.006", "head": "head"}
    truth.update(_sided({"clavicle": "shoulder.{s}", "upper_arm": "Wing.{s}", "forearm": "Wing.001.{s}",
                         "hand": "Wing.002.{s}", "thigh": "thigh.{s}", "shin": "shin.{s}", "foot": "foot.{s}",
                         "toe": "toe.{s}"}))
    return _from_table(RIGIFY_BIRD_METARIG), truth


def rigify_generated() -> tuple[list[dict], dict[str, str]]:
    """A generated Rigify human in miniature: ``ORG-`` copies of the metarig's bones whose spine
    hangs from tweak and ``MCH-`` bones under ``torso`` (as Rigify generates it), split ``DEF-``
    bones, and the controls ``root``, ``torso``, ``hips``, ``chest``, ``thigh_fk.L``, ``foot_ik.L`` …"""
    out = [{"name": "root", "parent": None, "head": (0.0, 0.0, 0.0), "tail": (0.0, 0.6, 0.0)},
           {"name": "MCH-torso.parent", "parent": None, "head": (0.0, 0.0, 0.0), "tail": (0.0, 0.6, 0.0)},
           {"name": "torso", "parent": "MCH-torso.parent", "head": (0.0, 0.017, 1.157), "tail": (0.0, 0.4, 1.157)}]
    for n, p, h, t in RIGIFY_HUMAN_METARIG:
        if n.startswith("spine"):  # the ORG spine hangs from tweaks that hang from MCH bones
            out.append({"name": f"MCH-{n}", "parent": "torso", "head": h, "tail": t})
            out.append({"name": f"tweak_{n}", "parent": f"MCH-{n}", "head": h, "tail": t})
            out.append({"name": f"ORG-{n}", "parent": f"tweak_{n}", "head": h, "tail": t})
        else:
            out.append({"name": f"ORG-{n}", "parent": f"ORG-{p}", "head": h, "tail": t})
        out.append({"name": f"DEF-{n}", "parent": f"DEF-{p}" if p else "root", "head": h, "tail": t})
    out += [{"name": "hips", "parent": "torso", "head": (0.0, 0.017, 1.157), "tail": (0.0, 0.055, 1.01)},
            {"name": "chest", "parent": "torso", "head": (0.0, 0.017, 1.157), "tail": (0.0, 0.0, 1.4)}]
    for s, x in (("L", 0.098), ("R", -0.098)):
        out += [{"name": f"thigh_fk.{s}", "parent": "hips", "head": (x, 0.012, 1.072), "tail": (x, -0.029, 0.537)},
                {"name": f"foot_ik.{s}", "parent": "root", "head": (x, 0.016, 0.085), "tail": (x, -0.093, 0.017)},
                {"name": f"MCH-foot_ik.parent.{s}", "parent": None, "head": (x, 0.016, 0.085),
                 "tail": (x, -0.093, 0.017)}]
    _, meta_truth = rigify_metarig()
    truth = {role: f"ORG-{bone}" for role, bone in meta_truth.items()}
    truth.update({"foot_ik.L": "foot_ik.L", "foot_ik.R": "foot_ik.R"})
    return out, truth


def rigify_deform() -> tuple[list[dict], dict[str, str]]:
    """The deform skeleton ProcAnim animates on a generated Rigify human
    (``procanim_addon.controls.deform_skeleton``): ``root`` and ``ORG-`` copies of the metarig's bones,
    the pelvis (``ORG-spine``) hanging from ``root``."""
    bones, meta_truth = rigify_metarig()
    out = [{"name": "root", "parent": None, "head": (0.0, 0.0, 0.0), "tail": (0.0, 0.6, 0.0)}]
    out += [dict(b, name=f"ORG-{b['name']}", parent=f"ORG-{b['parent']}" if b["parent"] else "root") for b in bones]
    return out, {role: f"ORG-{bone}" for role, bone in meta_truth.items()}


SAMPLES = {"mixamo": mixamo, "cmu": cmu, "cmu_asf": cmu_asf, "bvh_joints": bvh_joints, "unreal": unreal,
           "rigify_metarig": rigify_metarig, "rigify_bird": rigify_bird}


# ----------------------------------------------------------------------------- transforms


def turned(bones: list[dict], degrees: float, offset=(0.0, 0.0, 0.0)) -> list[dict]:
    """The skeleton turned about Z by ``degrees`` and moved by ``offset`` (the character's own
    left and forward turn with it)."""
    a = np.radians(degrees)
    rot = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])

    def move(p):
        return tuple(rot @ np.asarray(p, float) + np.asarray(offset, float))

    return [dict(b, head=move(b["head"]), tail=move(b["tail"])) for b in bones]


def renamed(bones: list[dict], seed: int = 0) -> tuple[list[dict], dict[str, str]]:
    """Every bone called ``Bone.###`` (numbers in a shuffled order), bones listed in a shuffled
    order; returns the bones and old name → new name."""
    rng = random.Random(seed)
    order = [b["name"] for b in bones]
    rng.shuffle(order)
    new = {name: f"Bone.{i:03d}" if i else "Bone" for i, name in enumerate(order)}
    out = [dict(b, name=new[b["name"]], parent=new.get(b["parent"]) if b["parent"] else None) for b in bones]
    rng.shuffle(out)
    return out, new


def matrix(head, tail, roll_hint=(0.0, 0.0, 1.0)) -> np.ndarray:
    """A rest matrix with +Y from head to tail (the roll does not matter to role detection)."""
    h, t = np.asarray(head, float), np.asarray(tail, float)
    y = (t - h) / np.linalg.norm(t - h)
    hint = np.asarray(roll_hint, float)
    if abs(y @ hint) > 0.95:
        hint = np.array([0.0, -1.0, 0.0])
    x = np.cross(y, hint)
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, np.cross(x, y), h
    return m


def bone_dicts(bones: list[dict]) -> list[dict]:
    """The bones as :meth:`Skeleton.from_bones` takes them."""
    return [
        {"name": b["name"], "parent": b["parent"], "matrix_local": matrix(b["head"], b["tail"]),
         "length": float(np.linalg.norm(np.subtract(b["tail"], b["head"])))}
        for b in bones
    ]
