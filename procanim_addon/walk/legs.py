"""Leg poses: two-bone IK from the hip joint to the ankle the foot plans, knee toward the foot's
heading turned by the ψ1 share of the body yaw; before that, each knee's flexion made smooth.

Tsutsuguchi et al. (2000): the stance leg's hip, knee and ankle angles θ_ST1–3 follow from C and the
ankle position (Figure 9); ψ1 (2/5 of Ψ, eq. 10) is the torsion of the standing leg.

Near full extension the knee moves many times the change of the hip–ankle distance (its flexion φ
goes as the square root of the distance's shortfall from the leg's length), so millimetres of the
pelvis' and the feet's frame-to-frame motion — the heel strike, the heel rising, the other foot
landing — made the knee snap straight and bend back. :func:`knee_tracks` (ProcAnim's, beyond the
paper) therefore plans each knee's flexion over the whole clip first, as the smoothest track near
the one the planned pelvis and feet give: φ_raw(t) smoothed by penalised least squares (Whittaker),
minimising Σ w_t (φ_t − φ_raw,t)² + λ Σ (Δ³φ)_t² — its third differences, what a local cubic cannot
follow — each frame weighted by how little the knee magnifies there (sin² φ), pinned where the leg
has no freedom (the foot flat; within a frame of a contact's start or end, growing as the contact's
instant nears), then kept from full extension by the soft limit the pelvis keeps a planted leg within
(``knee_reach``; C∞, on 1 − cos φ: :func:`~.reach.soft_floor`). The track is met by what the leg is
free to change: a swinging foot moves along the line from the hip (at most :data:`SWING_SHIFT_MAX_M`,
keeping half its gap to the ground), a rolling foot rolls further or less about its pivot — the heel
after heel strike, the ball joint and then the toe tip from heel off to toe off — within its range,
the toes lowered no faster than :data:`HEEL_ROCKER_MAX_DPS` nor ahead of the planned heel rocker, and
never rolling back; the planted pivot stays where it is (no skate). Where the feet cannot follow,
the track is planned again through what they give there, and the knee keeps that.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..ik.two_bone import solve_two_bone
from ..transforms import normalize
from .body import BodyFrames
from .character import SIDES
from .feet import BALL, CONTACTS, FLAT, HEEL, SWING, TIP, FootTrack
from .pose import map_rot, mat_const, vec_const, wrap
from .reach import LIFT_KNEE_M, lift_into_reach, lift_knee, soft_floor
from .support import BandedSolver
from .turning import PSI_ANKLE_SHARE

# ProcAnim's choices (tuned on the demo's human, stairs and the style presets; docs/path_walk.md):
KNEE_SMOOTH = 100.0   # λ: the knee track's third differences (rad per frame³) against its misses (rad)
KNEE_PIN = 1e6        # the weight of a frame the leg cannot change (the foot flat, a contact's ends) …
KNEE_KEEP = 30.0      # … of the others 1 + this × sin² of the knee's flexion (:func:`_weights`)
KNEE_HELD_RAD = np.radians(0.5)  # a frame whose foot leaves its knee this far off the track is held …
KNEE_PASSES = 2       # … and the track planned again (at most this many plans in all)
HEEL_ROCKER_MAX_DPS = 200.0  # the foot lowers its toes after heel strike no faster than this (°/s)
GROUND_KEEP = 0.5     # a swinging sole point moved for its knee keeps this share of its gap to the ground,
GROUND_KEEP_M = 0.002  # at least this much (m) …
SWING_SHIFT_MAX_M = 0.04  # … and the foot moves by no more than this (m): a swing keeps its path


def leg_poses(char, sk, body: BodyFrames, tracks, want: dict) -> float:
    """Thigh, shin, foot and toe of both legs into ``want``, reaching for the ankles of ``tracks``
    (:func:`knee_tracks`); hips too. Returns the largest distance (m) between a planted foot's
    planned and reached ankle (an IK miss)."""
    ml = sk.matrix_local
    want[char.hips] = (mat_const(body.R_pelvis, ml[char.hips][:3, :3]), body.pelvis)
    miss = 0.0
    for s in SIDES:
        miss = max(miss, _one_leg(char, sk, s, hip_joints(char, body, s), body, tracks[s], want))
    return miss


def _one_leg(char, sk, s, hip_joint, body: BodyFrames, tr, want: dict) -> float:
    ml = sk.matrix_local
    fwd_foot = vec_const(tr.rot, char.forward)
    h_foot = np.arctan2(fwd_foot[:, 1], fwd_foot[:, 0])
    h_knee = h_foot + PSI_ANKLE_SHARE * wrap(body.Psi + body.rot_pr - h_foot)  # ψ1 share: the leg's twist
    pole = np.stack([np.cos(h_knee), np.sin(h_knee), np.zeros_like(h_knee)], axis=-1)
    lt, ls = char.len_thigh[s], char.len_shin[s]
    knee, end = solve_two_bone(hip_joint, tr.ankle, pole, lt, ls)
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


def hip_joints(char, body: BodyFrames, side: str) -> np.ndarray:
    """(F, 3) the hip joint of leg ``side`` on the pelvis."""
    return body.pelvis + vec_const(body.R_pelvis, char.hip_joint_rest[side] - char.pelvis_rest)


def knee_tracks(char, body: BodyFrames, tracks, feet, p, straight=None) -> dict:
    """{side: FootTrack}: the feet moved so each knee follows its smooth track (module docstring).
    ``feet``: the sides' :class:`~.feet.FootModel` (the rolls' pivots and ranges); a swinging foot out
    of reach is first lifted into it (:func:`~.reach.lift_into_reach`; ``straight`` (K,) bool: the
    footsteps a swing lands on with the leg reaching straight, :func:`~.reach.lift_knee`). The rolls'
    phases follow their pitch (:meth:`~.feet.FootModel.over_toes`), and the contacts the phases. Where
    the feet cannot follow the track (a foot about to land, a roll at the end of its range), the
    track is planned again through the flexion they give there (pinned), so that its neighbours do
    not bend toward a track the knee never takes."""
    out = {}
    for s in SIDES:
        tr, foot = tracks[s], feet[s]
        a, b = char.len_thigh[s], char.len_shin[s]
        hip = hip_joints(char, body, s)
        target = tr.ankle.copy()
        swing = tr.phase == SWING
        if np.any(swing):
            knee_w = LIFT_KNEE_M if straight is None else lift_knee(tr, straight)[swing]
            target[swing] = lift_into_reach(hip[swing], tr.ankle[swing], p.knee_reach * (a + b), knee_w)
        flex = flexion(a, b, np.linalg.norm(target - hip, axis=-1))
        w = _weights(tr, flex, foot, body.t)
        for _ in range(KNEE_PASSES):
            track = knee_floor(smooth_flexion(flex, w), a, b, p.knee_reach)
            met = _meet(foot, tr, hip, target, bent_length(a, b, track), body.t)
            got = flexion(a, b, np.linalg.norm(met.ankle - hip, axis=-1))
            held = np.abs(got - track) > KNEE_HELD_RAD
            if not np.any(held):
                break
            flex, w = np.where(held, got, flex), np.where(held, KNEE_PIN, w)
        out[s] = met
    return out


def flexion(a: float, b: float, d) -> np.ndarray:
    """Knee flexion (rad, 0 straight) of a leg of thigh ``a`` and shin ``b`` (m) spanning ``d`` (m)
    from hip to ankle (0 beyond its reach)."""
    return np.arccos(np.clip((d * d - a * a - b * b) / (2 * a * b), -1.0, 1.0))


def _meet(foot, tr: FootTrack, hip, target, reach, t: np.ndarray) -> FootTrack:
    """``tr`` with its ankles ``reach`` (F,) m from the hip where the foot can, at frame times ``t``
    (F,) s: a swinging one moved from ``target`` (:func:`_swing_to_reach`), a rolling one rolled
    (:func:`_rolls_to_reach`)."""
    d = np.linalg.norm(target - hip, axis=-1)
    swing = tr.phase == SWING
    ankle, rot, toe_rot = target.copy(), tr.rot.copy(), tr.toe_rot.copy()
    if np.any(swing):
        ankle[swing] = _swing_to_reach(foot, hip[swing], target[swing], tr.rot[swing], tr.toe_rot[swing],
                                       d[swing], reach[swing])
    pitch = _rolls_to_reach(foot, tr, hip, d, reach, t)
    phase = np.where((tr.phase == BALL) | (tr.phase == TIP), foot.over_toes(tr.step, pitch), tr.phase)
    toe_pitch = foot.toe_pitch_of(tr.step, phase, pitch)
    roll = (tr.step >= 0) & (phase != FLAT)
    if np.any(roll):
        ankle[roll], rot[roll], toe_rot[roll] = foot.rolled(tr.step[roll], phase[roll], pitch[roll], toe_pitch[roll])
    contact = np.where(tr.step[:, None] >= 0, CONTACTS[phase], False)
    return dataclasses.replace(tr, ankle=ankle, rot=rot, toe_rot=toe_rot, pitch=pitch, toe_pitch=toe_pitch,
                               phase=phase, contact=contact, planted=contact.any(axis=1))


def _weights(tr: FootTrack, flex: np.ndarray, foot, t: np.ndarray) -> np.ndarray:
    """(F,) how closely the knee track keeps to the plan's flexion ``flex`` (rad) at times ``t`` (s):
    1 + :data:`KNEE_KEEP`·sin²φ — the knee moves 1/sin φ times the hip–ankle distance's change, so a
    bent knee follows its plan (a swing's shape) and a nearly straight one is free to be smoothed —
    rising to :data:`KNEE_PIN` where the leg cannot change it: the foot flat, and within a frame of a
    contact's start or end (the foot lands as its swing planned and leaves where the next swing
    starts; geometrically in the time to it, so the track does not jump as a contact's time crosses
    a frame)."""
    tl = foot.tl
    k = np.maximum(tr.step, 0)
    to = np.maximum(tr.swing_to, 0) if tr.swing_to is not None else k
    stance = tr.step >= 0
    since = np.where(stance, t - tl.land[k], t - tl.lift[np.maximum(to - 2, 0)])
    until = np.where(stance, tl.lift[k] - t, tl.land[to] - t)
    near = np.clip(1.0 - np.minimum(since, until) * (len(t) - 1) / max(t[-1] - t[0], 1e-9), 0.0, 1.0)
    free = 1.0 + KNEE_KEEP * np.sin(flex) ** 2
    w = free * (KNEE_PIN / free) ** np.nan_to_num(near)
    return np.where(tr.phase == FLAT, KNEE_PIN, w)


def smooth_flexion(flex: np.ndarray, w: np.ndarray, lam: float = KNEE_SMOOTH) -> np.ndarray:
    """(F,) the track φ minimising Σ w (φ − ``flex``)² + ``lam`` Σ (Δ³φ)², weights ``w`` (F,) (rad; a
    banded system, O(F))."""
    F = len(flex)
    if F < 4:
        return flex.copy()
    band = np.zeros((F, 4))  # band[i, d]: the normal matrix at (i, i + d)
    band[:, 0] = w
    c = np.array([1.0, -3.0, 3.0, -1.0])  # a third difference
    for j in range(4):
        for dd in range(4 - j):
            band[j:F - 3 + j, dd] += lam * c[j] * c[j + dd]
    return BandedSolver(band).solve(w * flex)


def knee_floor(flex, a: float, b: float, knee_reach: float) -> np.ndarray:
    """Knee flexion (rad) of a leg of thigh ``a`` and shin ``b`` (m) kept from full extension as the
    pelvis keeps a planted leg (:meth:`~.reach.PelvisHeight.soft_drop`): its e = 1 − cos φ through
    :func:`~.reach.soft_floor` at the flexion where the leg spans ``knee_reach`` of its length."""
    full = (a + b) * (a + b)
    e = soft_floor(1.0 - np.cos(flex), (full - (knee_reach * (a + b)) ** 2) / (2 * a * b))
    return np.arccos(1.0 - e)


def bent_length(a: float, b: float, flex) -> np.ndarray:
    """Hip–ankle distance (m) of a leg of thigh ``a`` and shin ``b`` (m) with the knee bent ``flex`` (rad)."""
    return np.sqrt(a * a + b * b + 2 * a * b * np.cos(flex))


def _swing_to_reach(foot, hip, ankle, rot, toe_rot, d, reach) -> np.ndarray:
    """(N, 3) swinging ankles moved along the line from the hip to ``reach`` (m) from it — by at most
    :data:`SWING_SHIFT_MAX_M` (a swing keeps its path), less where a sole point would lose more than
    half of its gap to the ground (:data:`GROUND_KEEP`, and never coming closer than
    :data:`GROUND_KEEP_M`) or the foot would rise by more than half of its lowest point's gap (a foot
    about to land stays on its path): bounded where the ground is level under the points, halved until
    clear where it is not (a riser's edge)."""
    u = (ankle - hip) / np.maximum(d, 1e-9)[:, None]
    shift = reach - d
    sole = foot.sole_points(ankle, rot, toe_rot)
    gap = _gaps(foot.ground, sole)
    keep = np.where(np.isfinite(gap), np.minimum(gap, np.maximum(GROUND_KEEP * gap, GROUND_KEEP_M)), 0.0)
    # the points rise or sink by shift·u_z: by at most the gap they may lose (down), by half the lowest
    # one's gap (up: a foot about to land is not lifted off its path)
    dz = np.maximum(np.abs(u[:, 2]), 1e-9)[:, None]
    room = np.min(np.where(np.isfinite(gap), np.where(shift[:, None] * u[:, None, 2] < 0, gap - keep,
                                                      (1.0 - GROUND_KEEP) * np.min(gap, axis=1, keepdims=True)),
                           np.inf) / dz, axis=1)
    room = np.clip(room, 0.0, SWING_SHIFT_MAX_M)
    shift = np.clip(shift, -room, room)
    todo = np.ones(len(d), dtype=bool)
    for _ in range(6):
        moved = sole[todo] + (shift[todo, None] * u[todo])[:, None, :]
        bad = np.any(_gaps(foot.ground, moved) < keep[todo] - 1e-9, axis=1)
        idx = np.flatnonzero(todo)
        shift[idx[bad]] *= 0.5
        todo[idx[~bad]] = False
        if not np.any(todo):
            break
    shift[todo] = 0.0
    return ankle + shift[:, None] * u


def _gaps(ground, points) -> np.ndarray:
    """(N, P) height (m) of ``points`` (N, P, 3) above the ground under them (+inf off the ground)."""
    gz, _, hit = ground.height(points[..., :2].reshape(-1, 2))
    return points[..., 2] - np.where(hit, gz, -np.inf).reshape(points.shape[:2])


def _rolls_to_reach(foot, tr: FootTrack, hip, d, reach, t: np.ndarray) -> np.ndarray:
    """(F,) the stance's pitches (rad) at frame times ``t`` (F,) s at which each rolling foot (about its
    heel, or over its toes) has its ankle ``reach`` from the hip, within its range
    (:meth:`~.feet.FootModel.pitch_range`), the toes lowered after heel strike no faster than
    :data:`HEEL_ROCKER_MAX_DPS` — counted from the instant of heel strike (toes up by θ_hs), not from
    the first frame after it, so a landing just after a frame cannot drop them in one — nor ahead of
    the planned heel rocker (``tr.pitch``: it eases the foot's turn in from the swing's), and never
    rolling back within a stance; the planned pitch where the foot is flat and where the distance is
    already met."""
    pitch = tr.pitch.copy()
    roll = (tr.step >= 0) & (tr.phase != FLAT) & (np.abs(reach - d) > 1e-9)
    if np.any(roll):
        pitch[roll] = foot.roll_to_reach(tr.step[roll], tr.phase[roll], hip[roll], reach[roll])
    stance = tr.step >= 0
    if np.any(stance):
        run = np.cumsum(np.concatenate(([True], tr.step[1:] != tr.step[:-1])))
        off = run * 10.0 * np.pi  # runs apart by more than any pitch: one running extreme for all
        heel = tr.phase == HEEL  # p_i = min(p_i, p_{i−1} + r): r·i + the running minimum of p − r·i
        rate = np.radians(HEEL_ROCKER_MAX_DPS)
        ramp = rate * (t - t[0])
        limited = np.minimum.accumulate(np.where(heel, pitch - ramp - off, np.inf)) + ramp + off
        k = np.maximum(tr.step, 0)
        since_strike = rate * np.maximum(t - foot.tl.land[k], 0.0)
        # the toes may stay up longer than the planned rocker, never come down ahead of it
        lowest = np.minimum(np.minimum(limited, -foot.th_hs[k] + since_strike), tr.pitch)
        pitch = np.where(heel, np.minimum(pitch, lowest), pitch)
        # a running maximum within each stance (the pitch grows from −θ_hs to θ_to)
        pitch[stance] = np.maximum.accumulate(np.where(stance, pitch + off, -np.inf))[stance] - off[stance]
    return pitch
