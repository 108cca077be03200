"""Rig roles: generators speak of ``thigh.L`` or ``head``, never of a rig's own bone names.

:func:`detect` maps roles to bones for the rig families ProcAnim knows:

=============  ==========================================================================
family         how it is recognised
=============  ==========================================================================
procanim       ProcAnim's own demo rigs (``root``, ``hips``, ``thigh.L`` …)
rigify         Rigify human metarig and generated rigs (``spine.003``, ``ORG-``/``DEF-``)
rigify_bird    Rigify bird metarig (``spine.003`` body, ``Wing.L``, ``beak…``)
mixamo         Mixamo (``mixamorig:`` / ``mixamorig1:`` … prefixes, ``LeftUpLeg`` …)
bvh            BVH / CMU mocap (``Hips``, ``LeftUpLeg``, ``LeftToeBase`` …)
unreal         Unreal mannequin (``pelvis``, ``thigh_l``, ``calf_l``, ``ball_l`` …)
=============  ==========================================================================

The result is a :class:`RigMap`; the Blender side stores it on the armature where the user can edit it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import MissingRoles

SIDES = ("L", "R")
CORE_ROLES = ["root", "hips", "spine", "chest", "neck", "head", "tail"]
SIDED_ROLES = ["clavicle", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe"]
ROLES = CORE_ROLES + [f"{r}.{s}" for r in SIDED_ROLES for s in SIDES]

LEG_ROLES = [f"{r}.{s}" for s in SIDES for r in ("thigh", "shin", "foot")]
ARM_ROLES = [f"{r}.{s}" for s in SIDES for r in ("upper_arm", "forearm", "hand")]

# role -> candidate names, tried in order; "{s}" is the side letter, "{side}" Left/Right,
# "{sl}" the lower-case side letter.
_FAMILIES: dict[str, dict[str, list[str]]] = {
    "procanim": {
        "root": ["root"],
        "hips": ["hips"],
        "spine": ["spine"],
        "chest": ["chest"],
        "neck": ["neck"],
        "head": ["head"],
        "tail": ["tail"],
        "clavicle": ["clavicle.{s}"],
        "upper_arm": ["upper_arm.{s}"],
        "forearm": ["forearm.{s}"],
        "hand": ["hand.{s}"],
        "thigh": ["thigh.{s}"],
        "shin": ["shin.{s}"],
        "foot": ["foot.{s}"],
        "toe": ["toe.{s}"],
    },
    "rigify": {
        "root": ["root"],
        "hips": ["spine"],
        "spine": ["spine.001"],
        "chest": ["spine.003", "spine.002"],
        "neck": ["spine.004"],
        "head": ["spine.006", "spine.005"],
        "tail": [],
        "clavicle": ["shoulder.{s}"],
        "upper_arm": ["upper_arm.{s}"],
        "forearm": ["forearm.{s}"],
        "hand": ["hand.{s}"],
        "thigh": ["thigh.{s}"],
        "shin": ["shin.{s}"],
        "foot": ["foot.{s}"],
        "toe": ["toe.{s}"],
    },
    "rigify_bird": {
        "root": ["root"],
        "hips": ["spine.003"],
        "spine": ["spine.004"],
        "chest": ["spine.004"],
        "neck": ["spine.006", "spine.005"],
        "head": ["head"],
        "tail": ["spine.002"],
        "clavicle": ["shoulder.{s}"],
        "upper_arm": ["Wing.{s}"],
        "forearm": ["Wing.001.{s}"],
        "hand": ["Wing.002.{s}"],
        "thigh": ["thigh.{s}"],
        "shin": ["shin.{s}"],
        "foot": ["foot.{s}"],
        "toe": ["toe.{s}"],
    },
    "mixamo": {
        "root": [],
        "hips": ["Hips"],
        "spine": ["Spine"],
        "chest": ["Spine2", "Spine1"],
        "neck": ["Neck"],
        "head": ["Head"],
        "tail": [],
        "clavicle": ["{side}Shoulder"],
        "upper_arm": ["{side}Arm"],
        "forearm": ["{side}ForeArm"],
        "hand": ["{side}Hand"],
        "thigh": ["{side}UpLeg"],
        "shin": ["{side}Leg"],
        "foot": ["{side}Foot"],
        "toe": ["{side}ToeBase"],
    },
    "unreal": {
        "root": ["root"],
        "hips": ["pelvis"],
        "spine": ["spine_01"],
        "chest": ["spine_05", "spine_03"],
        "neck": ["neck_01"],
        "head": ["head"],
        "tail": [],
        "clavicle": ["clavicle_{sl}"],
        "upper_arm": ["upperarm_{sl}"],
        "forearm": ["lowerarm_{sl}"],
        "hand": ["hand_{sl}"],
        "thigh": ["thigh_{sl}"],
        "shin": ["calf_{sl}"],
        "foot": ["foot_{sl}"],
        "toe": ["ball_{sl}"],
    },
}
# BVH/CMU mocap uses Mixamo's names without a prefix (and LowerBack/Spine1 for the spine).
_FAMILIES["bvh"] = dict(_FAMILIES["mixamo"], spine=["LowerBack", "Spine"], chest=["Spine1", "Spine"])

_PREFIXES = ("", "ORG-", "DEF-")
_MIXAMO_PREFIX = re.compile(r"^mixamorig\d*:")
_BIRD_MARKERS = ("Wing.L", "beak.001.T", "t_feather.L")


def _expand(pattern: str, side: str) -> str:
    return pattern.format(s=side, sl=side.lower(), side="Left" if side == "L" else "Right")


@dataclass
class RigMap:
    """Role → bone name. ``spine_bones`` is the chain from just above the hips up to the chest."""

    roles: dict[str, str] = field(default_factory=dict)
    family: str = ""
    spine_bones: list[str] = field(default_factory=list)
    rig_name: str = ""

    def get(self, role: str) -> str | None:
        return self.roles.get(role) or None

    def bone(self, role: str) -> str:
        name = self.get(role)
        if name is None:
            raise MissingRoles([role], self.rig_name)
        return name

    def index(self, skeleton, role: str) -> int:
        name = self.bone(role)
        if not skeleton.has(name):
            raise MissingRoles([f"{role} (bone '{name}' not found)"], self.rig_name)
        return skeleton.index(name)

    def missing(self, required) -> list[str]:
        return [r for r in required if not self.get(r)]

    def require(self, required) -> None:
        """Raise :class:`MissingRoles` naming every role in ``required`` that has no bone."""
        miss = self.missing(required)
        if miss:
            raise MissingRoles(miss, self.rig_name)

    @property
    def spine(self) -> list[str]:
        return list(self.spine_bones) or [b for b in (self.get("spine"),) if b]


def _family_score(names: set[str], table: dict[str, list[str]], prefix: str, strip) -> dict[str, str]:
    found: dict[str, str] = {}
    for role, patterns in table.items():
        sides = SIDES if role in SIDED_ROLES else (None,)
        for side in sides:
            key = f"{role}.{side}" if side else role
            for pat in patterns:
                cand = prefix + (_expand(pat, side) if side else pat)
                if cand in names:
                    found[key] = strip.get(cand, cand)
                    break
    return found


def detect(names, parents: dict[str, str | None] | None = None, rig_name: str = "") -> RigMap:
    """Guess the role map from bone names (``parents``: bone → parent name, for the spine chain).

    The family with the most roles found wins; ties go to the order of ``_FAMILIES``.
    """
    names = list(names)
    # Mixamo-style prefixes: map "mixamorig1:Hips" -> "Hips" for matching, keep real names.
    stripped: dict[str, str] = {}
    for n in names:
        m = _MIXAMO_PREFIX.match(n)
        if m:
            stripped[n[m.end() :]] = n
    pool = set(names) | set(stripped)
    best: RigMap = RigMap(rig_name=rig_name)
    bird = any(m in pool for m in _BIRD_MARKERS)
    for family, table in _FAMILIES.items():
        if family == "rigify_bird" and not bird:
            continue
        if family == "rigify" and bird:
            continue
        for prefix in _PREFIXES:
            found = _family_score(pool, table, prefix, stripped)
            if len(found) > len(best.roles):
                best = RigMap(found, family if not prefix else f"{family} ({prefix.rstrip('-')})", rig_name=rig_name)
    if parents and best.get("hips") and best.get("chest"):
        best.spine_bones = chain_between(parents, best.roles["hips"], best.roles["chest"])
    return best


def chain_between(parents: dict[str, str | None], low: str, high: str) -> list[str]:
    """Bones strictly above ``low`` up to and including ``high`` (empty if not an ancestor chain)."""
    chain = [high]
    while chain[-1] != low:
        p = parents.get(chain[-1])
        if p is None:
            return []
        chain.append(p)
    return chain[:-1][::-1]
