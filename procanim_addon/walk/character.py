"""What the walk needs to know about a rig, read once from its rest pose and roles.

Sole points: each foot gets a heel, a ball and a toe-tip point on the sole plane (the rest
ground), rigidly attached to the foot (heel, ball) or the toe bone (tip). They are the pivots of the
stance roll (heel → ball → tip) and the points checked for skating and penetration. A foot without
a toe bone rolls over the end of its foot bone (where the skeleton says its toes end): its ball and
tip are that point itself, at its rest height above the sole.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..frames import character_frame
from ..skeleton import Skeleton

LEG_ROLES = ["hips", "thigh.L", "thigh.R", "shin.L", "shin.R", "foot.L", "foot.R"]
SIDES = ("L", "R")


@dataclass
class FootGeometry:
    """Rest geometry of one foot (armature space, m).

    ankle:      foot bone head
    heel, ball, tip: sole points at the rest ground height (a foot without a toe bone: ball and tip
                are the foot bone's tail, at its own height)
    heel_back, ball_fwd, tip_fwd: horizontal distances along forward from the ankle (heel behind)
    ankle_height: ankle above the sole (m)
    """

    ankle: np.ndarray
    heel: np.ndarray
    ball: np.ndarray
    tip: np.ndarray
    heel_back: float
    ball_fwd: float
    tip_fwd: float
    ankle_height: float

    @property
    def length(self) -> float:
        return self.heel_back + self.tip_fwd


@dataclass
class WalkCharacter:
    skeleton: Skeleton
    rigmap: object
    forward: np.ndarray
    left: np.ndarray
    leg_length: float           # rest hip height above the sole (m)
    hip_width: float
    rest_ground_z: float        # sole height of the rest pose (m)
    pelvis_rest: np.ndarray     # hips bone head (m)
    feet: dict                  # side -> FootGeometry
    thigh: dict                 # side -> bone index
    shin: dict
    foot: dict
    toe: dict                   # side -> bone index or None
    hip_joint_rest: dict        # side -> thigh head (m)
    len_thigh: dict
    len_shin: dict
    hips: int
    root: int | None

    @property
    def rest_heading(self) -> float:
        return float(np.arctan2(self.forward[1], self.forward[0]))

    def ankle_reach(self, side: str) -> float:
        """Hip-joint-to-ankle length of the straight leg (m)."""
        return self.len_thigh[side] + self.len_shin[side]


def read_character(skeleton: Skeleton, rigmap) -> WalkCharacter:
    """Measure the rig. Raises :class:`InputError` (naming roles) when leg roles are missing."""
    rigmap.require(LEG_ROLES)
    cf = character_frame(skeleton, rigmap)
    bad = skeleton.unsupported_bones([rigmap.index(skeleton, r) for r in LEG_ROLES])
    if bad:
        raise InputError(
            "The path walk cannot pose these bones because of their inheritance settings "
            f"(inherit rotation off, scale not Full, or local location off): {', '.join(bad)}."
        )
    heads, tails = skeleton.heads, skeleton.tails
    # the rig's rest ground: ProcAnim's rigs stand on z = 0 with bones a little above it
    rest_ground = 0.0 if -0.005 <= cf.ground_z <= 0.1 * cf.leg_length else cf.ground_z
    fwd = cf.forward
    feet, thigh, shin, foot, toe, hipj, lt, ls = {}, {}, {}, {}, {}, {}, {}, {}
    for side in SIDES:
        t, sh, f = (rigmap.index(skeleton, f"{r}.{side}") for r in ("thigh", "shin", "foot"))
        tname = rigmap.get(f"toe.{side}")
        ti = skeleton.index(tname) if tname and skeleton.has(tname) else None
        thigh[side], shin[side], foot[side], toe[side] = t, sh, f, ti
        ankle = heads[f].copy()
        ball = tails[f].copy() if ti is None else heads[ti].copy()
        tip = tails[f].copy() if ti is None else tails[ti].copy()
        ball_fwd = float(np.dot(ball - ankle, fwd))
        tip_fwd = max(float(np.dot(tip - ankle, fwd)), ball_fwd + 1e-3)
        heel_back = 0.3 * max(ball_fwd, 0.02)
        flat = lambda p: np.array([p[0], p[1], rest_ground])  # noqa: E731
        feet[side] = FootGeometry(
            ankle=ankle,
            heel=flat(ankle - fwd * heel_back),
            ball=flat(ball) if ti is not None else tip,
            tip=flat(tip) if ti is not None else tip,
            heel_back=heel_back,
            ball_fwd=ball_fwd,
            tip_fwd=tip_fwd,
            ankle_height=float(ankle[2] - rest_ground),
        )
        hipj[side] = heads[t].copy()
        lt[side] = float(np.linalg.norm(heads[sh] - heads[t]))
        ls[side] = float(np.linalg.norm(heads[f] - heads[sh]))
    hips = rigmap.index(skeleton, "hips")
    root_name = rigmap.get("root")
    root = skeleton.index(root_name) if root_name and skeleton.has(root_name) else None
    if root is not None and not skeleton.is_ancestor(root, hips):
        root = None
    return WalkCharacter(
        skeleton=skeleton, rigmap=rigmap, forward=fwd, left=cf.left, leg_length=cf.leg_length,
        hip_width=cf.hip_width, rest_ground_z=rest_ground, pelvis_rest=heads[hips].copy(), feet=feet,
        thigh=thigh, shin=shin, foot=foot, toe=toe, hip_joint_rest=hipj, len_thigh=lt, len_shin=ls,
        hips=hips, root=root,
    )

