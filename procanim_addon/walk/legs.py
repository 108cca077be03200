"""Leg poses: two-bone IK from the hip joint to the ankle the foot plans, knee toward the foot's
heading turned by the ψ1 share of the body yaw.

Tsutsuguchi et al. (2000): the stance leg's hip, knee and ankle angles θ_ST1–3 follow from C and the
ankle position (Figure 9); ψ1 (2/5 of Ψ, eq. 10) is the torsion of the standing leg.
"""

from __future__ import annotations

import numpy as np

from ..ik.two_bone import solve_two_bone
from ..transforms import normalize
from .body import BodyFrames
from .character import SIDES
from .pose import map_rot, mat_const, vec_const, wrap
from .reach import LIFT_KNEE_M, lift_into_reach, lift_knee
from .turning import PSI_ANKLE_SHARE


def leg_poses(char, sk, body: BodyFrames, tracks, p, want: dict, straight=None) -> float:
    """Thigh, shin, foot and toe of both legs into ``want``; hips too. Returns the largest
    distance (m) between a planted foot's planned and reached ankle (an IK miss). ``straight`` (K,)
    bool: footsteps a swing lands on with the leg reaching straight (:func:`~.reach.lift_knee`)."""
    ml = sk.matrix_local
    want[char.hips] = (mat_const(body.R_pelvis, ml[char.hips][:3, :3]), body.pelvis)
    miss = 0.0
    for s in SIDES:
        hip_joint = body.pelvis + vec_const(body.R_pelvis, char.hip_joint_rest[s] - char.pelvis_rest)
        miss = max(miss, _one_leg(char, sk, s, hip_joint, body, tracks[s], p, want, straight))
    return miss


def _one_leg(char, sk, s, hip_joint, body: BodyFrames, tr, p, want: dict, straight=None) -> float:
    ml = sk.matrix_local
    fwd_foot = vec_const(tr.rot, char.forward)
    h_foot = np.arctan2(fwd_foot[:, 1], fwd_foot[:, 0])
    h_knee = h_foot + PSI_ANKLE_SHARE * wrap(body.Psi + body.rot_pr - h_foot)  # ψ1 share: the leg's twist
    pole = np.stack([np.cos(h_knee), np.sin(h_knee), np.zeros_like(h_knee)], axis=-1)
    lt, ls = char.len_thigh[s], char.len_shin[s]
    # a swinging foot out of reach is drawn in toward the hip (softly, so the knee never snaps
    # straight); a planted one is within reach already (the pelvis was lowered for it)
    target = tr.ankle.copy()
    swing = ~tr.planted
    if np.any(swing):
        knee_w = LIFT_KNEE_M if straight is None else lift_knee(tr, straight)[swing]
        target[swing] = lift_into_reach(hip_joint[swing], tr.ankle[swing], p.knee_reach * (lt + ls), knee_w)
    knee, end = solve_two_bone(hip_joint, target, pole, lt, ls)
    miss = float(np.max(np.linalg.norm(end - tr.ankle, axis=-1)[tr.planted], initial=0.0))
    th, sh, ft = char.thigh[s], char.shin[s], char.foot[s]
    y0t = ml[th][:3, 1]
    y0s = ml[sh][:3, 1]
    n0 = np.cross(y0t, y0s)
    if np.linalg.norm(n0) < 1e-4:
        n0 = char.left
    y1t = normalize(knee - hip_joint)
    y1s = normalize(end - knee)
    n1 = np.cross(y1t, y1s)
    weak = np.linalg.norm(n1, axis=-1) < 1e-4
    n1 = np.where(weak[:, None], np.cross(pole, y1t), n1)
    want[th] = (map_rot(ml[th][:3, :3], y0t, n0, y1t, n1), hip_joint)
    want[sh] = (map_rot(ml[sh][:3, :3], y0s, n0, y1s, n1), knee)
    want[ft] = (mat_const(tr.rot, ml[ft][:3, :3]), end)
    if char.toe[s] is not None:
        want[char.toe[s]] = (mat_const(tr.toe_rot, ml[char.toe[s]][:3, :3]), None)
    return miss
