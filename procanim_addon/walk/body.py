"""The body over the clip's frames: pelvis (position, yaw Ψ, pelvic rotation and list), trunk
lean, the root's motion, and the spine, neck and head poses.

Tsutsuguchi et al. (2000): the pelvis follows C (eq. 5, :mod:`.com`) and turns by Ψ = ψ1 + ψ2
(eqs. 10–11, :mod:`.turning`); "the other angles, which include the upper body, pelvic rotation
and head angles, are calculated using linear or sine interpolation between the initial and final
angles" of each step, and the shoulder rotation σ follows the pelvic rotation (eq. 17a). The
amplitudes below are ProcAnim's (ordinary walking; the paper gives none).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..curves import envelope, gaussian_smooth
from .character import SIDES
from .pose import mat_const, raxis, rz, vec_const
from .reach import LIFT_KNEE_M, SWING_END_SHORTEN, PelvisHeight, swing_ends

LEAN_DEG = {"plane": 2.0, "up": 7.0, "down": 1.0}  # trunk lean forward per vertical mode (ProcAnim's)
PELVIS_DROP_SMOOTH_S = 0.08  # half-width of the smooth envelope that lowers the pelvis into reach (s)
ROOT_Z_SMOOTH = 0.5  # × stride: the root's height follows the ground smoothed over this (Gaussian σ)
HEAD_YAW_SMOOTH_S = 0.25  # the head looks ahead: Ψ smoothed over this (Gaussian σ, s)
NECK_SHARE = 0.5  # the neck turns halfway from the chest's yaw to the head's


@dataclass
class BodyFrames:
    """Per frame (F,): times t (s), COM progression s_c (m), path centre (F, 3), pelvis (hips
    head, F × 3, m), body yaw Ψ, pelvic rotation and list, trunk lean (rad), pelvis rotation
    R_pelvis (F, 3, 3) and the root's motion D (F, 4, 4, armature space)."""

    t: np.ndarray
    s_c: np.ndarray
    centre: np.ndarray
    pelvis: np.ndarray
    Psi: np.ndarray
    rot_pr: np.ndarray
    list_pl: np.ndarray
    lean: np.ndarray
    R_pelvis: np.ndarray
    D: np.ndarray


def body_frames(char, path, steps, tl, p, com, psi, t, tracks, stride) -> BodyFrames:
    """The body over clip times ``t`` (s), the pelvis lowered where a leg could not reach."""
    s_c, y_c, z_c = com.at(t)
    centre = path.at(s_c)
    pelvis = centre + path.left_at(s_c) * z_c[:, None]
    pelvis[:, 2] = y_c
    Psi = psi(t)
    R_pelvis, rot_pr, list_pl = pelvis_rotation(char, steps, tl, p, Psi, t)
    lean = _lean(t, steps, tl)
    pelvis[:, 2] -= _pelvis_drop(char, p, pelvis, R_pelvis, tracks, steps.steady_level((0, 0)))
    D = _root_delta(char, path, centre, s_c, Psi, stride)
    return BodyFrames(t, s_c, centre, pelvis, Psi, rot_pr, list_pl, lean, R_pelvis, D)


def pelvis_rotation(char, steps, tl, p, Psi, t):
    """(R_pelvis (F, 3, 3), pelvic rotation (F,), list (F,)) at times ``t`` (s), Ψ(t) = ``Psi``
    (rad): the body yaw, then the pelvic rotation about the vertical and the list about forward."""
    rot_pr, list_pl = _pelvis_swing(t, steps, tl, p)
    return rz(Psi - char.rest_heading + rot_pr) @ raxis(char.forward, list_pl), rot_pr, list_pl


def _pelvis_swing(t, steps, tl, p):
    """Pelvic rotation and list (rad): sine interpolation between step boundary values, faded in
    over the first step and out over the last."""
    n = len(steps) - 1
    hs = tl.heel_strike
    idx = np.clip(np.searchsorted(hs, t, side="right") - 1, 1, n - 1)
    u = np.clip((t - hs[idx]) / tl.T[idx], 0.0, 1.0)
    env = np.clip((t - hs[1]) / tl.T[1], 0, 1) * np.clip((hs[n] - t) / tl.T[n - 1], 0, 1)
    env = env * env * (3 - 2 * env)
    side_i = steps.side[idx]
    rot_pr = -side_i * np.radians(p.pelvis_rotation_deg) * np.cos(np.pi * u) * env
    list_pl = side_i * np.radians(p.pelvis_list_deg) * np.sin(np.pi * u) * env
    return rot_pr, list_pl


def _lean(t, steps, tl):
    """Trunk lean forward (rad): linear between the steps' values (:data:`LEAN_DEG`), from 0 at
    the first heel strike to 0 when the body has settled."""
    n = len(steps) - 1
    hs = tl.heel_strike
    lean_at = np.array([LEAN_DEG[steps.mode_v[min(max(k, 1), n - 1)]] for k in range(n + 1)])
    return np.radians(np.interp(t, hs[1:], lean_at[1:])) * np.clip((t - hs[1]) / tl.T[1], 0, 1) \
        * np.clip((hs[n] + tl.settle - t) / tl.settle, 0, 1)


def _pelvis_drop(char, p, pelvis, R_pelvis, tracks, straight=None):
    """How far (m, ≥ 0, smooth) the pelvis must come down so that every planted leg, and a swing
    leg near its ends, reaches its ankle with its extension softly limited
    (:meth:`~.reach.PelvisHeight.soft_drop`): the largest of the legs' drops, through a smooth
    envelope over :data:`PELVIS_DROP_SMOOTH_S` (where a leg's contact begins and ends, where the legs
    take over from each other)."""
    limit = PelvisHeight(char, p.knee_reach)
    drop = np.zeros(len(pelvis))
    for s in SIDES:
        tr = tracks[s]
        # a swinging leg near its ends keeps clear of the soft lift of reach.lift_into_reach (except a
        # swing onto a footstep of steady level walking: it lands with the leg straight)
        ends = swing_ends(tr, straight)
        for mask, shorten in ((tr.planted, 0.0), (ends, SWING_END_SHORTEN * LIFT_KNEE_M)):
            if np.any(mask):
                leg = np.zeros(len(pelvis))
                leg[mask] = limit.soft_drop(s, pelvis[mask], R_pelvis[mask], tr.ankle[mask], shorten)
                drop = np.maximum(drop, leg)
    return envelope(drop, max(int(round(PELVIS_DROP_SMOOTH_S * p.fps)), 1))


def _root_delta(char, path, centre, s_c, Psi, stride):
    """(F, 4, 4) the root's motion: the rest pose's ground point carried along the path centre
    (height smoothed over half a stride) and turned by Ψ."""
    zs = gaussian_smooth(path.points[:, 2:3], ROOT_Z_SMOOTH * stride / max(path.s[1] - path.s[0], 1e-9))[:, 0]
    root_pos = centre.copy()
    root_pos[:, 2] = np.interp(s_c, path.s, zs)
    rest_origin = np.array([char.pelvis_rest[0], char.pelvis_rest[1], char.rest_ground_z])
    D = np.tile(np.eye(4), (len(s_c), 1, 1))
    D[:, :3, :3] = rz(Psi - char.rest_heading)
    D[:, :3, 3] = root_pos - vec_const(D[:, :3, :3], rest_origin)
    return D


def trunk_poses(char, sk, rigmap, body: BodyFrames, p, want: dict, style=None) -> np.ndarray:
    """Spine and chest (the pelvic rotation handed over to the shoulder rotation σ = −pelvic
    rotation, the list fading out, the lean growing), then neck and head (turning ahead with the
    smoothed Ψ, upright, or pitched by the style). Adds to ``want``; returns the chest's yaw (F,)."""
    ml = sk.matrix_local
    rh = char.rest_heading
    Psi, rot_pr, lean = body.Psi, body.rot_pr, body.lean
    if style is not None:  # the style's posture: the chest bent forward (+) and the head down (+)
        lean = lean + np.radians(style.chest_pitch_deg)
    head_pitch = 0.0 if style is None else np.radians(style.head_pitch_deg)
    sigma = -rot_pr  # shoulder rotation σ: counter to the pelvis
    chain = [sk.index(b) for b in rigmap.spine if sk.has(b)]
    chest = rigmap.get("chest")
    if chest and sk.has(chest) and sk.index(chest) not in chain:
        chain.append(sk.index(chest))
    m = len(chain)
    chest_yaw = Psi + sigma
    for j, b in enumerate(chain):
        f = (j + 1) / m
        R = rz(Psi - rh + rot_pr * (1 - f) + sigma * f) @ raxis(char.left, lean * f) \
            @ raxis(char.forward, body.list_pl * (1 - f))
        want[b] = (mat_const(R, ml[b][:3, :3]), None)
    head_yaw = gaussian_smooth(Psi[:, None], HEAD_YAW_SMOOTH_S * p.fps)[:, 0]
    for role, share in (("neck", NECK_SHARE), ("head", 1.0)):
        b = rigmap.get(role)
        if b and sk.has(b):
            yaw = chest_yaw + share * (head_yaw - chest_yaw)
            pitch = lean * (1 - share) + head_pitch * share
            want[sk.index(b)] = (mat_const(rz(yaw - rh) @ raxis(char.left, pitch), ml[sk.index(b)][:3, :3]), None)
    return chest_yaw
