"""Gait assembly: path → steps → timing → COM → feet → legs, pelvis, spine, arms, head → Clip.

:func:`generate_path_walk` is the path walk's one public entry (a pure function). Every pose is
built as an armature-space matrix per bone and turned into pose-bone channels parents first
(``Skeleton.basis_for`` + ``transforms.decompose``).
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..errors import InputError
from ..ground import UP
from ..ik.two_bone import solve_two_bone
from . import arms as arm_model
from .character import SIDES, read_character
from .com import solve_com
from .feet import FootModel
from .metrics import walk_metrics
from .params import PathWalkParams
from .path import PathHeightGround, _gaussian_smooth, build_path
from .steps import divide_path
from .timing import make_timeline
from .turning import PSI_ANKLE_SHARE, body_yaw

LEAN_DEG = {"plane": 2.0, "up": 7.0, "down": 1.0}
EARLY_SWING = 0.0  # the pelvis also lets the swing leg reach its ankle before this fraction of the swing
LATE_SWING = 0.75  # … and after this one (so the foot lands without a jump)
LIFT_KNEE_M = 0.01  # width of the smooth ramp that lifts a swinging ankle into reach
SWING_END_SHORTEN = 1.5  # × LIFT_KNEE_M: reach kept in hand by a leg about to land


def _rz(angle):
    angle = np.asarray(angle, float)
    return tf.quat_to_mat3(tf.quat_from_axis_angle(np.broadcast_to(UP, angle.shape + (3,)), angle))


def _raxis(axis, angle):
    angle = np.asarray(angle, float)
    return tf.quat_to_mat3(tf.quat_from_axis_angle(np.broadcast_to(axis, angle.shape + (3,)), angle))


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def _frame(y, n):
    """Orthonormal frames (…, 3, 3) with columns (n⊥, y, n⊥ × y)."""
    y = tf.normalize(y)
    n = n - np.sum(n * y, axis=-1, keepdims=True) * y
    n = tf.normalize(n)
    return np.stack([n, y, np.cross(n, y)], axis=-1)


def _map_rot(rest_rot, y0, n0, y1, n1):
    """Rotation (F, 3, 3) of a bone whose rest axis y0/hinge n0 go to y1/n1: F1·F0ᵀ·R_rest."""
    F0 = _frame(np.asarray(y0, float), np.asarray(n0, float))
    F1 = _frame(y1, n1)
    return F1 @ F0.T @ rest_rot


class _PelvisHeight:
    """Highest pelvis (hips head) z that lets every weight-bearing leg reach its ankle."""

    def __init__(self, char, knee_reach):
        self.char, self.kr = char, knee_reach

    def limit(self, pelvis_xy, rot, ankles, masks, shorten: float = 0.0):
        """Per-frame limit (m); ``shorten`` (m) takes that much off the allowed hip–ankle distance."""
        lim = np.full(len(pelvis_xy), np.inf)
        for side in SIDES:
            m = masks[side]
            if not np.any(m):
                continue
            off = np.einsum("...ij,j->...i", rot, self.char.hip_joint_rest[side] - self.char.pelvis_rest)
            R = self.kr * self.char.ankle_reach(side) - shorten
            horiz = np.linalg.norm(pelvis_xy + off[..., :2] - ankles[side][..., :2], axis=-1)
            z = ankles[side][..., 2] - off[..., 2] + np.sqrt(np.maximum(R * R - horiz * horiz, 0.0))
            lim = np.where(m, np.minimum(lim, z), lim)
        return lim


def _other(side: str) -> str:
    return "R" if side == "L" else "L"


def _swing_ends(track) -> np.ndarray:
    """Frames early or late in this foot's swing, where the pelvis must let the swing leg reach its
    ankle too (late: the foot is about to land, and must land where it is aimed without a jump)."""
    r = track.swing_r
    if r is None:
        return np.zeros_like(track.planted)
    return (np.nan_to_num(r, nan=1.0) < EARLY_SWING) | (np.nan_to_num(r, nan=0.0) > LATE_SWING)


def _lift_into_reach(hip, ankle, reach: float, knee: float = LIFT_KNEE_M):
    """Swinging ankles raised (straight up, so a toe near a riser does not run into it) until the
    hip can reach them; the raise is a smooth ramp (C¹) ``knee`` m wide. Ankles too far out
    horizontally are drawn in toward the hip instead (:func:`_soft_reach`)."""
    v = ankle - hip
    horiz = np.linalg.norm(v[:, :2], axis=-1)
    inner = reach - knee
    z_need = hip[:, 2] - np.sqrt(np.maximum(inner * inner - horiz * horiz, 0.0))
    deficit = z_need - ankle[:, 2]
    lift = np.where(deficit >= knee, deficit, np.where(deficit <= -knee, 0.0, (deficit + knee) ** 2 / (4 * knee)))
    out = ankle.copy()
    out[:, 2] += lift
    far = horiz > inner
    if np.any(far):
        out[far] = _soft_reach(hip[far], ankle[far], reach)
    return out


def _soft_reach(hip, ankle, reach: float, knee: float = 0.04):
    """Ankle targets pulled toward the hip so their distance saturates smoothly at ``reach`` (m):
    unchanged below ``reach − knee``, then d' = d₀ + knee·tanh((d − d₀)/knee)."""
    v = ankle - hip
    d = np.linalg.norm(v, axis=-1, keepdims=True)
    d0 = reach - knee
    soft = np.where(d > d0, d0 + knee * np.tanh((d - d0) / knee), d)
    return hip + v * (soft / np.maximum(d, 1e-9))


def _envelope(excess: np.ndarray, width: int) -> np.ndarray:
    """A smooth curve ≥ ``excess`` (a running max, then a raised-cosine blur, then max again)."""
    if width < 1 or not np.any(excess > 0):
        return np.maximum(excess, 0.0)
    e = np.maximum(excess, 0.0)
    pad = np.pad(e, width, mode="edge")
    win = np.lib.stride_tricks.sliding_window_view(pad, 2 * width + 1).max(axis=-1)
    k = np.hanning(2 * width + 3)[1:-1]
    k /= k.sum()
    sm = np.convolve(np.pad(win, width, mode="edge"), k, mode="valid")
    return np.maximum(sm, e)


def generate_path_walk(skeleton, rigmap, path_points, ground=None, params: PathWalkParams | None = None,
                       progress=None) -> Clip:
    """Bake a walk along ``path_points`` (N, 3), armature space, onto ``skeleton``.

    ground: a :class:`~procanim_addon.ground.Ground` (None: the path's own heights).
    Returns a :class:`Clip` with one key per frame from ``params.frame_start``; ``clip.metrics``
    holds the quality measures of :func:`~.metrics.walk_metrics`. Raises :class:`InputError` for
    paths of zero length, paths steeper than a ladder, risers too high, treads too short, rigs
    missing leg roles.
    """
    p = (params or PathWalkParams()).validate()
    char = read_character(skeleton, rigmap)
    L = char.leg_length
    stride = p.stride_m if p.stride_m > 0 else p.stride_per_leg * L
    if stride > 1.05 * L:
        raise InputError(
            f"A stride of {stride:.2f} m is too long for this character (hip height {L:.2f} m): "
            f"walking steps reach at most about {1.05 * L:.2f} m."
        )
    max_h = p.max_step_height_m if p.max_step_height_m > 0 else 0.26 * L
    path = build_path(path_points, ground, p.corner_radius_m)
    gnd = ground if ground is not None else PathHeightGround(path)
    heel_back = max(f.heel_back for f in char.feet.values())
    tip_fwd = max(f.tip_fwd for f in char.feet.values())
    steps = divide_path(path, stride, char.hip_width, heel_back, tip_fwd, max_h, p.tread_margin_m,
                        p.max_incline_deg, ground=gnd)
    n = len(steps) - 1
    if n < 3:
        raise InputError("The walking path is too short for a step; make it at least half a stride long.")
    tl = make_timeline(steps.w, p.cadence_spm, p.speed_mps, p.double_support, p.stand_s, stride)
    hs = tl.heel_strike
    rh = char.rest_heading
    yaw0 = float(path.heading_at(0.0))

    def psi(t):
        return body_yaw(t, hs, tl.T, tl.T_ds, yaw0, steps.alpha)

    pelvis_lim = _PelvisHeight(char, p.knee_reach)
    # ---- standing heights at both ends
    hip_drop = float(char.pelvis_rest[2] - np.mean([char.hip_joint_rest[s][2] for s in SIDES]))
    stand_h = min(char.pelvis_rest[2] - char.rest_ground_z,
                  min(char.feet[s].ankle_height + p.knee_reach * char.ankle_reach(s) for s in SIDES) + hip_drop)
    y_stand = float(np.mean(steps.pos[:2, 2])) + stand_h - 0.005
    y_final = float(np.mean(steps.pos[-2:, 2])) + stand_h - 0.005
    mid = 0.5 * (steps.s[:-1] + steps.s[1:])
    y_targets = np.zeros(n + 1)
    for i in range(2, n + 1):
        y_targets[i] = 0.5 * (steps.pos[i - 1, 2] + steps.pos[i, 2]) + 0.94 * stand_h
    extra = np.zeros(n + 1)
    n_frames = int(np.floor(tl.t_end * p.fps + 1e-9)) + 1
    t = np.arange(n_frames) / p.fps  # clip times (s); the reach check runs on them too
    com = feet = None
    for _ in range(4):
        com = solve_com(tl, steps, p, y_stand, y_targets - extra, y_final, path.length, reuse=com)
        cache = {s: None if feet is None else feet[s]._clearance for s in SIDES}
        feet = {s: FootModel(char, s, steps, tl, com, p, gnd, cache[s]) for s in SIDES}
        # heel-strike targets: both legs reach (leading foot at heel strike, trailing at heel off)
        psi_hs = psi(hs)
        for i in range(2, n + 1):
            ti = np.array([hs[i]])
            xy = path.at(np.array([mid[i - 1]]))[:, :2]
            rot = _rz(psi_hs[i:i + 1] - rh)
            lims = []
            for k in (i - 1, i):
                s = "L" if steps.side[k] > 0 else "R"
                ank = {s: feet[s].stance(k, ti)[0]}
                # the landing leg keeps the margin it had at the end of its swing (no dip, no jump)
                short = SWING_END_SHORTEN * LIFT_KNEE_M if k == i else 0.0
                lims.append(pelvis_lim.limit(xy, rot, ank, {s: np.array([True]), _other(s): np.array([False])},
                                             shorten=short)[0])
            y_targets[i] = min(lims) - 0.004
        # mid-stance: lower a step's boundaries where the dynamics lift the pelvis out of reach
        tt = np.arange(hs[1], hs[n], 1.0 / max(60.0, p.fps))
        s_c, y_c, z_c = com.at(tt)
        xy = (path.at(s_c) + path.left_at(s_c) * z_c[:, None])[:, :2]
        check = {s: feet[s].track(tt, path, with_swing=False) for s in SIDES}
        ank = {s: check[s].ankle for s in SIDES}
        msk = {s: check[s].planted for s in SIDES}  # swings are handled by the final clamp
        lim = pelvis_lim.limit(xy, _rz(psi(tt) - rh), ank, msk)
        over = y_c - lim
        worst = 0.0
        for i in range(1, n):
            m = (tt >= hs[i]) & (tt < hs[i + 1])
            if np.any(m):
                e = float(np.max(over[m]))
                worst = max(worst, e)
                if e > 0:  # lower both boundaries of the step (not the standing start)
                    if i >= 2:
                        extra[i] += 0.75 * e
                    extra[i + 1] += 0.75 * e
        if worst < 0.002:
            break
    # ---- frames
    frames = p.frame_start + np.arange(n_frames, dtype=float)
    s_c, y_c, z_c = com.at(t)
    centre = path.at(s_c)
    left = path.left_at(s_c)
    pelvis = centre + left * z_c[:, None]
    pelvis[:, 2] = y_c
    Psi = psi(t)
    # pelvic rotation and list: sine interpolation between step boundary values
    idx = np.clip(np.searchsorted(hs, t, side="right") - 1, 1, n - 1)
    u = np.clip((t - hs[idx]) / tl.T[idx], 0.0, 1.0)
    env = np.clip((t - hs[1]) / tl.T[1], 0, 1) * np.clip((hs[n] - t) / tl.T[n - 1], 0, 1)
    env = env * env * (3 - 2 * env)
    side_i = steps.side[idx]
    rot_pr = -side_i * np.radians(p.pelvis_rotation_deg) * np.cos(np.pi * u) * env
    list_pl = side_i * np.radians(p.pelvis_list_deg) * np.sin(np.pi * u) * env
    lean_at = np.array([LEAN_DEG[steps.mode_v[min(max(k, 1), n - 1)]] for k in range(n + 1)])
    lean = np.radians(np.interp(t, hs[1:], lean_at[1:])) * np.clip((t - hs[1]) / tl.T[1], 0, 1) \
        * np.clip((hs[n] + tl.settle - t) / tl.settle, 0, 1)
    R_pelvis = _rz(Psi - rh + rot_pr) @ _raxis(char.forward, list_pl)
    tracks = {s: feet[s].track(t, path) for s in SIDES}
    ank = {s: tracks[s].ankle for s in SIDES}
    planted = {s: tracks[s].planted for s in SIDES}
    lim = pelvis_lim.limit(pelvis[:, :2], R_pelvis, ank, planted)
    # a swinging leg near its ends keeps clear of the soft lift of _lift_into_reach
    ends = {s: _swing_ends(tracks[s]) for s in SIDES}
    lim = np.minimum(lim, pelvis_lim.limit(pelvis[:, :2], R_pelvis, ank, ends, shorten=SWING_END_SHORTEN * LIFT_KNEE_M))
    drop = _envelope(pelvis[:, 2] - lim, max(int(round(0.08 * p.fps)), 1))
    pelvis[:, 2] -= drop
    # ---- root / object motion
    zs = _gaussian_smooth(path.points[:, 2:3], 0.5 * stride / max(path.s[1] - path.s[0], 1e-9))[:, 0]
    root_pos = centre.copy()
    root_pos[:, 2] = np.interp(s_c, path.s, zs)
    rest_origin = np.array([char.pelvis_rest[0], char.pelvis_rest[1], char.rest_ground_z])
    D = np.tile(np.eye(4), (n_frames, 1, 1))
    D[:, :3, :3] = _rz(Psi - rh)
    D[:, :3, 3] = root_pos - np.einsum("fij,j->fi", D[:, :3, :3], rest_origin)
    # ---- wanted armature-space matrices: rot (F,3,3) and optional position
    sk = skeleton
    want: dict[int, tuple] = {}
    ml = sk.matrix_local
    want[char.hips] = (R_pelvis @ ml[char.hips][:3, :3], pelvis)
    hip_joint = {s: pelvis + np.einsum("fij,j->fi", R_pelvis, char.hip_joint_rest[s] - char.pelvis_rest) for s in SIDES}
    leg_report = {}
    for s in SIDES:
        tr = tracks[s]
        fwd_foot = np.einsum("fij,j->fi", tr.rot, char.forward)
        h_foot = np.arctan2(fwd_foot[:, 1], fwd_foot[:, 0])
        h_knee = h_foot + PSI_ANKLE_SHARE * _wrap(Psi + rot_pr - h_foot)  # ψ1 share: the leg's twist
        pole = np.stack([np.cos(h_knee), np.sin(h_knee), np.zeros_like(h_knee)], axis=-1)
        lt, ls = char.len_thigh[s], char.len_shin[s]
        # a swinging foot out of reach is drawn in toward the hip (softly, so the knee never snaps
        # straight); a planted one is within reach already (the pelvis was lowered for it)
        target = tr.ankle.copy()
        swing = ~tr.planted
        if np.any(swing):
            target[swing] = _lift_into_reach(hip_joint[s][swing], tr.ankle[swing], p.knee_reach * (lt + ls))
        knee, end = solve_two_bone(hip_joint[s], target, pole, lt, ls)
        leg_report[s] = float(np.max(np.linalg.norm(end - tr.ankle, axis=-1)[tr.planted], initial=0.0))
        th, sh, ft = char.thigh[s], char.shin[s], char.foot[s]
        y0t = ml[th][:3, 1]
        y0s = ml[sh][:3, 1]
        n0 = np.cross(y0t, y0s)
        if np.linalg.norm(n0) < 1e-4:
            n0 = char.left
        y1t = tf.normalize(knee - hip_joint[s])
        y1s = tf.normalize(end - knee)
        n1 = np.cross(y1t, y1s)
        weak = np.linalg.norm(n1, axis=-1) < 1e-4
        n1 = np.where(weak[:, None], np.cross(pole, y1t), n1)
        want[th] = (_map_rot(ml[th][:3, :3], y0t, n0, y1t, n1), hip_joint[s])
        want[sh] = (_map_rot(ml[sh][:3, :3], y0s, n0, y1s, n1), knee)
        want[ft] = (tr.rot @ ml[ft][:3, :3], end)
        if char.toe[s] is not None:
            want[char.toe[s]] = (tr.toe_rot @ ml[char.toe[s]][:3, :3], None)
    # ---- spine, neck, head
    sigma = -rot_pr  # shoulder rotation σ: counter to the pelvis
    chain = [sk.index(b) for b in rigmap.spine if sk.has(b)]
    chest = rigmap.get("chest")
    if chest and sk.has(chest) and sk.index(chest) not in chain:
        chain.append(sk.index(chest))
    m = len(chain)
    chest_yaw = Psi + sigma
    for j, b in enumerate(chain):
        f = (j + 1) / m
        R = _rz(Psi - rh + rot_pr * (1 - f) + sigma * f) @ _raxis(char.left, lean * f) \
            @ _raxis(char.forward, list_pl * (1 - f))
        want[b] = (R @ ml[b][:3, :3], None)
    head_yaw = _gaussian_smooth(Psi[:, None], 0.25 * p.fps)[:, 0]
    for role, share in (("neck", 0.5), ("head", 1.0)):
        b = rigmap.get(role)
        if b and sk.has(b):
            yaw = chest_yaw + share * (head_yaw - chest_yaw)
            want[sk.index(b)] = (_rz(yaw - rh) @ _raxis(char.left, lean * (1 - share)) @ ml[sk.index(b)][:3, :3], None)
    # ---- arms: driven pendulum per step
    arm_info = _arm_swings(char, rigmap, sk, steps, tl, p, t, stride)
    for s, (ua, fa, phi1, beta) in arm_info.items():
        y0u, y0f = ml[ua][:3, 1], ml[fa][:3, 1]
        n0 = np.cross(y0u, y0f)
        if np.linalg.norm(n0) < 1e-4:
            n0 = -char.left
        sgn = 1.0 if s == "L" else -1.0
        rho = np.radians(p.armpit_deg)
        Rc = _rz(chest_yaw - rh)
        hang = -UP * np.cos(rho) + sgn * char.left * np.sin(rho)
        d_local = np.sin(phi1)[:, None] * char.forward + np.cos(phi1)[:, None] * hang
        fperp = char.forward - np.sum(char.forward * d_local, axis=-1, keepdims=True) * d_local
        fperp = tf.normalize(fperp)
        e_local = np.cos(beta)[:, None] * d_local + np.sin(beta)[:, None] * fperp
        d = np.einsum("fij,fj->fi", Rc, d_local)
        e = np.einsum("fij,fj->fi", Rc, e_local)
        hinge = np.cross(d, e)
        want[ua] = (_map_rot(ml[ua][:3, :3], y0u, n0, d, hinge), None)
        want[fa] = (_map_rot(ml[fa][:3, :3], y0f, n0, e, hinge), None)
    # ---- root motion
    locs_obj = rots_obj = None
    if p.root_motion == "OBJECT":
        Dinv = np.linalg.inv(D)
        for b, (R, pos) in list(want.items()):
            R2 = Dinv[:, :3, :3] @ R
            pos2 = None if pos is None else np.einsum("fij,fj->fi", Dinv[:, :3, :3], pos) + Dinv[:, :3, 3]
            want[b] = (R2, pos2)
        locs_obj, rots_obj, _ = tf.decompose(D)
    elif char.root is not None:
        W = D @ ml[char.root]
        want[char.root] = (W[:, :3, :3], W[:, :3, 3])
    clip = _channels(sk, want, frames, p.fps)
    clip.object_locations, clip.object_rotations = locs_obj, rots_obj
    clip.generator = "path_walk"
    clip.with_continuity()
    clip.metrics = walk_metrics(
        sk, clip, char, tracks, gnd, path, steps, tl, t, s_c, D if p.root_motion == "OBJECT" else None
    )
    clip.metrics["ik_reach_miss_cm"] = round(100 * max(leg_report.values()), 3)
    return clip


def _arm_swings(char, rigmap, sk, steps, tl, p, t, stride):
    """{side: (upper arm index, forearm index, φ1 (F,), elbow β (F,))} for the arms the rig has."""
    out = {}
    n = len(steps) - 1
    hs = tl.heel_strike
    amp = np.ones(n + 1)
    amp[1] = 0.0
    amp[n] = 0.0
    for j in range(2, n):
        amp[j] = min(1.0, (steps.s[j] - steps.s[j - 1]) / stride)
    fwd, back = np.radians(p.arm_swing_fwd_deg) * p.arm_swing, np.radians(p.arm_swing_back_deg) * p.arm_swing
    beta_c = np.radians(p.elbow_deg)
    for s in SIDES:
        names = [rigmap.get(f"{r}.{s}") for r in ("upper_arm", "forearm", "hand")]
        if not (names[0] and names[1]) or not (sk.has(names[0]) and sk.has(names[1])):
            continue
        ua, fa = sk.index(names[0]), sk.index(names[1])
        l_hand = sk.lengths[sk.index(names[2])] if names[2] and sk.has(names[2]) else 0.3 * sk.lengths[fa]
        k, gamma = arm_model.arm_pendulum_constants(sk.lengths[ua], sk.lengths[fa], l_hand, beta_c)
        sgn = 1 if s == "L" else -1
        bound = np.array([(-back if steps.side[j] == sgn else fwd) * amp[j] for j in range(n + 1)])
        steps_i = np.arange(1, n)
        th_i = bound[steps_i] + gamma
        th_f = bound[steps_i + 1] + gamma
        th, _om, _u = arm_model.solve_swings(th_i, th_f, tl.T[steps_i], 0.5 * (1 + p.double_support), k)
        n_sub = th.shape[1] - 1
        ts = (hs[steps_i][:, None] + tl.T[steps_i][:, None] * np.linspace(0, 1, n_sub + 1)[None, :]).ravel()
        phi_s = (th - gamma).ravel()
        order = np.argsort(ts, kind="stable")
        phi1 = np.interp(t, ts[order], phi_s[order], left=0.0, right=0.0)
        span = max(fwd + back, np.radians(5.0))
        beta = beta_c * (1.0 + 0.6 * (phi1 - 0.5 * (fwd - back)) / span)
        out[s] = (ua, fa, phi1, beta)
    return out


def _channels(sk, want: dict, frames, fps) -> Clip:
    """Pose-bone channels, parents first, for wanted armature-space rotations/positions."""
    F, B = len(frames), len(sk)
    pose = np.empty((F, B, 4, 4))
    locs = np.zeros((F, B, 3))
    rots = tf.quat_identity((F, B))
    key_loc = np.zeros(B, dtype=bool)
    key_rot = np.zeros(B, dtype=bool)
    for i in range(B):
        par = sk.parents[i]
        U = np.broadcast_to(sk.rest_rel[i], (F, 4, 4)) if par < 0 else pose[:, par] @ sk.rest_rel[i]
        if i not in want:
            pose[:, i] = U
            continue
        R, pos = want[i]
        W = np.zeros((F, 4, 4))
        W[:, :3, :3] = R
        W[:, :3, 3] = U[:, :3, 3] if pos is None else pos
        W[:, 3, 3] = 1.0
        basis = tf.rigid_inverse(U) @ W  # = Skeleton.basis_for, for rigid parents (cheaper)
        loc, q, _ = tf.decompose(basis)
        locs[:, i] = loc
        rots[:, i] = q
        key_rot[i] = True
        key_loc[i] = pos is not None and bool(np.max(np.abs(loc)) > 1e-6)
        pose[:, i] = U @ tf.compose(loc, q)
    return Clip(list(sk.names), frames, fps, locs, rots, key_location=key_loc, key_rotation=key_rot)
