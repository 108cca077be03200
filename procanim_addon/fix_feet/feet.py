"""The legs and feet of a rig as Fix Feet sees them: bones, contact points, sole heights.

Each foot has two contact points fixed on its foot bone (Ikemoto et al. label a foot's heel and toe
contacts apart; the ball is where the toes bend, the foot bone's tail):

* the **heel**: under the ankle (the foot bone's head) at the height of the rest pose's sole;
* the **ball**: the foot bone's tail (the toe bone's head).

The toe tip (the toe bone's tail, or the ball when the rig has no toe) is only checked against the
ground. A point's *sole height* σ is how far above the floor it is when the foot stands flat: its
rest height above the rest pose's floor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from ..errors import InputError
from ..frames import character_frame
from ..rig_roles import RigMap
from ..skeleton import Skeleton

SIDES = ("L", "R")
POINTS = ("heel", "ball")
HEEL, BALL = 0, 1
# RECON: a rest pose whose lowest foot point is within this fraction of the leg length above
# z = 0 is taken to stand on z = 0 (ProcAnim, Rigify and Mixamo rigs do; BVH rest poses often
# float or sink: their joints are put on the floor instead).
REST_ON_FLOOR_RATIO = 0.15


@dataclass
class Leg:
    """One leg: skeleton indices of thigh, shin, foot and toe (−1: none); the heel and ball
    points in the foot bone's rest frame (``(3,)``, armature units); ``upper``, ``lower``: the
    rest distances hip → knee and knee → ankle (the two-bone chain's lengths)."""

    side: str
    thigh: int
    shin: int
    foot: int
    toe: int
    heel_local: np.ndarray
    ball_local: np.ndarray
    upper: float
    lower: float

    @property
    def length(self) -> float:
        return self.upper + self.lower


@dataclass
class Feet:
    """Both legs, the hips bone, the sole heights σ ``(2 sides, 2 points)`` and the tip's σ
    ``(2,)`` (armature units), the leg length (hip height, armature units) and the direction the
    character faces in its rest pose (``(3,)``, the way knees bend)."""

    legs: tuple[Leg, Leg]
    hips: int
    sole: np.ndarray
    tip_sole: np.ndarray
    leg_length: float
    forward: np.ndarray

    def points(self, skeleton: Skeleton, pose: np.ndarray) -> np.ndarray:
        """Heel and ball of both feet, ``(F, 2 sides, 2 points, 3)``, from pose matrices ``(F, B, 4, 4)``."""
        out = np.empty(pose.shape[:1] + (2, 2, 3))
        for s, leg in enumerate(self.legs):
            m = pose[:, leg.foot]
            out[:, s, HEEL] = tf.transform_points(m, leg.heel_local)
            out[:, s, BALL] = tf.transform_points(m, leg.ball_local)
        return out

    def tips(self, skeleton: Skeleton, pose: np.ndarray) -> np.ndarray:
        """Toe tips of both feet ``(F, 2, 3)``."""
        out = np.empty(pose.shape[:1] + (2, 3))
        for s, leg in enumerate(self.legs):
            if leg.toe >= 0:
                m = pose[:, leg.toe]
                out[:, s] = m[:, :3, 3] + m[:, :3, 1] * skeleton.lengths[leg.toe]
            else:
                out[:, s] = tf.transform_points(pose[:, leg.foot], leg.ball_local)
        return out


REQUIRED = ["hips", "thigh.L", "thigh.R", "shin.L", "shin.R", "foot.L", "foot.R"]


def read_feet(skeleton: Skeleton, rigmap: RigMap, sole_from_rest: bool = True, sole: float = 0.0) -> Feet:
    """The legs of ``skeleton`` by their roles, and the sole heights (armature units): from the
    rest pose (``sole_from_rest``) or ``sole`` for every point."""
    rigmap.require(REQUIRED)
    cf = character_frame(skeleton, rigmap)
    heads, tails = skeleton.heads, skeleton.tails
    legs = []
    for side in SIDES:
        th, sh, ft = (rigmap.index(skeleton, f"{r}.{side}") for r in ("thigh", "shin", "foot"))
        if not (skeleton.is_ancestor(th, sh) and skeleton.is_ancestor(sh, ft)):
            raise InputError(f"The {side} leg's bones are not one chain: thigh → shin → foot.")
        toe_name = rigmap.get(f"toe.{side}")
        toe = skeleton.index(toe_name) if toe_name and skeleton.has(toe_name) else -1
        low = [tails[ft, 2]] + ([heads[toe, 2], tails[toe, 2]] if toe >= 0 else [])
        heel_world = np.array([heads[ft, 0], heads[ft, 1], min(low)])
        inverse = tf.affine_inverse(skeleton.matrix_local[ft])
        legs.append(Leg(
            side, th, sh, ft, toe,
            heel_local=tf.transform_points(inverse, heel_world),
            ball_local=np.array([0.0, skeleton.lengths[ft], 0.0]),
            upper=float(np.linalg.norm(heads[sh] - heads[th])),
            lower=float(np.linalg.norm(heads[ft] - heads[sh])),
        ))
    rest_points = np.array([[[heads[leg.foot, 0], heads[leg.foot, 1], _heel_z(skeleton, leg)], tails[leg.foot]]
                            for leg in legs])  # (2, 2, 3)
    rest_tips = np.array([tails[leg.toe] if leg.toe >= 0 else tails[leg.foot] for leg in legs])
    floor = _rest_floor(cf.ground_z, cf.leg_length) if sole_from_rest else None
    if floor is None:
        sole_heights = np.full((2, 2), float(sole))
        tip_sole = np.full(2, float(sole))
    else:
        sole_heights = rest_points[..., 2] - floor
        tip_sole = rest_tips[:, 2] - floor
    return Feet((legs[0], legs[1]), rigmap.index(skeleton, "hips"), sole_heights, tip_sole, cf.leg_length,
                cf.forward)


def _heel_z(skeleton: Skeleton, leg: Leg) -> float:
    return float(tf.transform_points(skeleton.matrix_local[leg.foot], leg.heel_local)[2])


def _rest_floor(lowest_z: float, leg_length: float) -> float:
    """The floor the rest pose stands on: z = 0 when its lowest foot point is a little above it,
    else the lowest foot point itself (a rest pose off the floor: the joints go onto the floor)."""
    if 0.0 <= lowest_z <= REST_ON_FLOOR_RATIO * leg_length:
        return 0.0
    return lowest_z
