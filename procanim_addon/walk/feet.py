"""Feet: the stance roll and the swing orbit.

Tsutsuguchi et al. (2000), section "Straight Forward Walking Movement", Figures 9–10: the stance
leg is interpolated as in Bruderlin and Calvert's KLAW system (1989); the swing ankle follows "a
combination of two third-order curves" from toe off to heel strike; the swing hip θ_SW1 is a single
pendulum; ankle and toe angles are interpolated.

Stance of footstep k (times from :mod:`.timing`, the COM from :mod:`.com`):

(a) heel strike → foot flat (when C passes over the ankle): the foot rotates about the fixed heel
    from −θ_hs (toe up) to 0; on stairs heel and toe land together (θ_hs = 0);
(b) → (c) other heel strike: the foot rotates about the fixed ball joint M (the toe bone stays
    flat on the ground), heel rising to θ_ho;
(c) → (d) toe off: foot and toe rotate together about the fixed toe tip, up to θ_to.

Swing (toe off of P_k → heel strike at P_{k+2}): the ankle moves along the chord between its two
end positions with the progress of a free linear pendulum hung at the hip (ω² = g / (2/3·l)),
while its height follows two cubics joined at the apex, raised until every sole point clears the
ground (stair nosings included) by the clearance; the foot's pitch and heading are eased between
the end states, and the toe bend eases back to 0.

Pitch is a rotation about the character's rest left axis (positive = heel up, toes down), applied
after the footstep's heading and ground tilt.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from ..curves import envelope, hermite, smoothstep
from ..ground import UP
from ..progress import ProgressFn, loop, no_progress

G = 9.81
# ProcAnim's choices where the paper gives no numbers (tuned on the demo's human and Rigify's metarig):
STAIRS_TOE_OFF_DEG = 30.0   # toe off on stairs: a shorter push so the toe clears the next riser
STAIRS_HEEL_OFF_DEG = 25.0  # heel up at the other foot's heel strike on stairs
FLAT_WINDOW = (0.15, 0.6)   # the foot is flat (Fig. 10b, C over the ankle) within this part of the step
HEEL_OFF_WINDOW = (0.8, 0.2)  # heel off starts between 80 % and 20 % of the next step before its heel strike
END_FLAT = 0.3              # the last footstep is flat this part of a step after it lands
FIRST_RISE = 0.3            # the standing P_0 lifts its heel this part of a step before the first heel strike
SWING_APEX_AT = 0.45        # the two cubics of the swing height meet at this fraction of the swing
APEX_START_M = 0.01         # first apex above the higher end of the swing, then raised for clearance
APEX_MAX = 0.25             # × leg length: the highest apex above the higher end (then local lifts)
CLEARANCE_GRID = np.linspace(0.0, 1.0, 161)  # swing fractions where the sole's clearance is checked
PENDULUM_MAX_PHASE = 0.7    # × π: the most of its period the swing pendulum may use
STAIRS_TRAVEL_START, STAIRS_TRAVEL_SPAN = 0.2, 0.65  # on stairs the foot travels over this part of the swing
LEVEL_BY = 0.6              # the foot's pitch reaches the heel-strike pitch by this fraction of the swing
STAIRS_LEVEL = (0.2, 0.4)   # on stairs: keep the toe-off pitch until 0.2, then level over 0.4
CLEARANCE_TAPER = (0.05, 0.2)  # no clearance wanted before 5 % of the swing, the full one after 25 %


@dataclass
class FootTrack:
    """One foot over the clip's frames.

    ankle:   (F, 3) wanted ankle (foot bone head) position (m)
    rot:     (F, 3, 3) armature-space rotation applied to the rest foot (world = rot @ rest)
    toe_rot: (F, 3, 3) the same for the toe bone
    contact: (F, 3) bool: heel, ball, tip sole points bearing weight
    planted: (F,) bool: any sole point bearing weight
    swing_r: (F,) how far the swing has gone (0–1), NaN in stance
    """

    ankle: np.ndarray
    rot: np.ndarray
    toe_rot: np.ndarray
    contact: np.ndarray
    planted: np.ndarray
    swing_r: np.ndarray | None = None  # (F,) fraction of the swing done, NaN in stance


@dataclass
class _SwingPlan:
    """One swing (toe off of footstep k → heel strike of k + 2): its ends and its pendulum.

    t0, dur: toe-off time and swing duration (s); A0, A1: ankle at toe off and at heel strike (m);
    clen, cdir: length (m) and horizontal unit direction of the chord A0 → A1; l_leg: hip–ankle
    length (m); th0, B, w: the pendulum θ(t) = th0·cos ωt + B·sin ωt (rad, rad, 1/s); stairs: the
    swing starts or ends on stairs; m0_h, m1_h, m0_z, m1_z: the ankle's speed along the chord and
    vertically at the two ends, times the duration (m).
    """

    k: int
    t0: float
    dur: float
    A0: np.ndarray
    A1: np.ndarray
    clen: float
    cdir: np.ndarray
    l_leg: float
    th0: float
    B: float
    w: float
    stairs: bool
    m0_h: float
    m1_h: float
    m0_z: float
    m1_z: float


def yaw_tilt(heading: np.ndarray, rest_heading: float, normal: np.ndarray) -> np.ndarray:
    """(…, 3, 3) rotation: turn the rest foot to ``heading`` then tilt its up onto ``normal``."""
    heading = np.asarray(heading, float)
    qz = tf.quat_from_axis_angle(np.broadcast_to(UP, heading.shape + (3,)), heading - rest_heading)
    qt = tf.rotation_between(np.broadcast_to(UP, np.shape(normal)), normal)
    return tf.quat_to_mat3(tf.quat_mul(qt, qz))


def pitch_rot(left_axis: np.ndarray, pitch: np.ndarray) -> np.ndarray:
    """(…, 3, 3) rotations by ``pitch`` (rad) about one fixed unit axis (Rodrigues' formula)."""
    pitch = np.asarray(pitch, float)
    a = np.asarray(left_axis, float)
    a = a / np.linalg.norm(a)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    s, c = np.sin(pitch)[..., None, None], np.cos(pitch)[..., None, None]
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


class FootModel:
    """Foot poses of one side over any times, from footsteps, timeline, COM and the foot's rest geometry."""

    def __init__(self, char, side: str, steps, timeline, com, params, ground, clearance: dict | None = None):
        self.char, self.side, self.steps, self.tl = char, side, steps, timeline
        self.com, self.p, self.ground = com, params, ground
        self.geo = char.feet[side]
        g = self.geo
        self.anchor_rest = np.array([g.ankle[0], g.ankle[1], char.rest_ground_z])
        toe = char.toe[side]
        self.joint_rest = char.skeleton.heads[toe] if toe is not None else char.skeleton.tails[char.foot[side]]
        self.left = char.left
        sign = 1 if side == "L" else -1
        self.ks = [k for k in range(len(steps)) if steps.side[k] == sign]
        self.th_hs = np.where(steps.on_stairs, 0.0, np.radians(params.heel_strike_deg))
        self.th_ho = np.full(len(steps), np.radians(params.heel_off_deg))
        # on stairs the push-off is shorter (toe off at most 20°) so the toe clears the next riser
        toe_off = np.radians(params.toe_off_deg)
        self.th_to = np.where(steps.on_stairs, min(toe_off, np.radians(STAIRS_TOE_OFF_DEG)), toe_off)
        # on stairs the trailing heel is well up by the time the other foot lands on the next tread
        self.th_ho = np.where(steps.on_stairs, np.maximum(self.th_ho, np.radians(STAIRS_HEEL_OFF_DEG)), self.th_ho)
        self.th_ho = np.minimum(self.th_ho, self.th_to)
        self.R_flat = yaw_tilt(steps.heading, char.rest_heading, steps.normal)  # (K, 3, 3)
        self.phase = {k: self._phases(k) for k in self.ks}
        self.apex = {}
        # k -> (apex z, lift on CLEARANCE_GRID); may be handed on from a previous pass
        self._clearance = {} if clearance is None else clearance

    # ------------------------------------------------------------------ stance
    def _phases(self, k):
        tl, st, com = self.tl, self.steps, self.com
        n = len(st) - 1
        T = tl.T[min(max(k, 1), n - 1)]
        land = tl.land[k]
        if k <= 1:
            t_flat = -np.inf
        elif k == n:
            t_flat = land + END_FLAT * T
        else:
            t_flat = float(np.clip(com.passes(st.s[k]), land + FLAT_WINDOW[0] * T, land + FLAT_WINDOW[1] * T))
        if k == 0:
            t_rise = tl.heel_strike[1] - FIRST_RISE * tl.T[1]
        elif k <= n - 2:
            t_rise = max(com.passes(st.s[k]), t_flat, tl.heel_strike[k + 1] - HEEL_OFF_WINDOW[0] * tl.T[k + 1])
            t_rise = min(t_rise, tl.heel_strike[k + 1] - HEEL_OFF_WINDOW[1] * tl.T[k + 1])
        else:
            t_rise = np.inf
        t_c = tl.heel_strike[k + 1] if k <= n - 2 else np.inf
        t_d = tl.lift[k]
        return land, t_flat, t_rise, t_c, t_d

    def _points_world(self, k):
        """Flat-pose world positions of the footstep's ankle-anchor, heel, joint M, ball, tip."""
        g, R = self.geo, self.R_flat[k]
        base = self.steps.pos[k]
        f = lambda p: base + R @ (np.asarray(p) - self.anchor_rest)  # noqa: E731
        return {"heel": f(g.heel), "joint": f(self.joint_rest), "ball": f(g.ball), "tip": f(g.tip)}

    def stance(self, k, t):
        """Ankle (N,3), foot rot (N,3,3), toe rot (N,3,3), contact (N,3) over times t in the stance."""
        land, t_flat, t_rise, t_c, t_d = self.phase[k]
        g = self.geo
        W = self._points_world(k)
        R = self.R_flat[k]
        N = len(t)
        pitch = np.zeros(N)
        toe_pitch = np.zeros(N)
        ankle = np.empty((N, 3))
        contact = np.zeros((N, 3), dtype=bool)
        th_hs = self.th_hs[k]
        a = t < t_flat
        if np.any(a):
            u = (t[a] - land) / max(t_flat - land, 1e-6)
            pitch[a] = -th_hs * (1 - np.clip(u, 0, 1)) ** 2
            toe_pitch[a] = pitch[a]
        b = (t >= t_rise) & (t < t_c)
        if np.any(b):
            u = (t[b] - t_rise) / max(t_c - t_rise, 1e-6)
            pitch[b] = self.th_ho[k] * u * u
        c = t >= t_c
        if np.any(c):
            u = np.clip((t[c] - t_c) / max(t_d - t_c, 1e-6), 0, 1)
            m0 = 2 * self.th_ho[k] * (t_d - t_c) / max(t_c - t_rise, 1e-6)
            pitch[c] = hermite(self.th_ho[k], m0, self.th_to[k], self.th_to[k] - self.th_ho[k], u)
            toe_pitch[c] = pitch[c] - self.th_ho[k]
        Rf = R @ pitch_rot(self.left, pitch)
        Rt = R @ pitch_rot(self.left, toe_pitch)
        flat = ~(a | b | c)
        # (a) about the heel
        if np.any(a):
            ankle[a] = W["heel"] + Rf[a] @ (g.ankle - g.heel)
            contact[a, 0] = True
        if np.any(flat):
            ankle[flat] = self.steps.pos[k] + R @ (g.ankle - self.anchor_rest)
            contact[flat] = True
        if np.any(b):
            ankle[b] = W["joint"] + Rf[b] @ (g.ankle - self.joint_rest)
            contact[b, 1:] = True
        if np.any(c):
            joint = W["tip"] + Rt[c] @ (self.joint_rest - g.tip)
            ankle[c] = joint + Rf[c] @ (g.ankle - self.joint_rest)
            contact[c, 2] = True
        return ankle, Rf, Rt, contact

    # ------------------------------------------------------------------ swing
    def swing(self, k, t):
        """Swing from toe off of footstep k to heel strike of k + 2, over times t."""
        sw = self._swing_plan(k)
        r = np.clip((t - sw.t0) / sw.dur, 0.0, 1.0)
        xy = self._swing_horizontal(sw, r)
        Rf, Rt = self._swing_rotations(k, r, sw.dur)
        if k not in self._clearance:
            # solved once (later passes move the COM by millimetres only)
            self._clearance[k] = self._solve_clearance(k, sw)
        apex, lift = self._clearance[k]
        self.apex[k] = apex
        z = self._two_cubics(r, sw.A0[2], sw.m0_z, apex, sw.A1[2], sw.m1_z, SWING_APEX_AT) \
            + np.interp(r, CLEARANCE_GRID, lift)
        ankle = np.concatenate([xy, z[:, None]], axis=-1)
        return ankle, Rf, Rt

    def _swing_plan(self, k) -> _SwingPlan:
        """End states of the swing k → k + 2 and the pendulum that carries the ankle between them."""
        k2 = k + 2
        t0, t1 = self.tl.lift[k], self.tl.land[k2]
        eps = 1e-4
        a0, _, _, _ = self.stance(k, np.array([t0 - eps, t0]))
        a1, _, _, _ = self.stance(k2, np.array([t1, t1 + eps]))
        v0 = (a0[1] - a0[0]) / eps
        v1 = (a1[1] - a1[0]) / eps
        A0, A1 = a0[1], a1[0]
        dur = t1 - t0
        # horizontal: the hip's progress plus a free pendulum's l·sin θ (θ from the boundary offsets)
        chord = A1[:2] - A0[:2]
        clen = float(np.linalg.norm(chord))
        cdir = chord / clen if clen > 1e-6 else np.zeros(2)
        l_leg = self.char.ankle_reach(self.side)
        p0 = float(np.dot(self._hip_xy(np.array([t0]))[0] - A0[:2], cdir))
        p1 = float(np.dot(self._hip_xy(np.array([t1]))[0] - A0[:2], cdir))
        th0 = float(np.arcsin(np.clip((0.0 - p0) / l_leg, -0.99, 0.99)))
        th1 = float(np.arcsin(np.clip((clen - p1) / l_leg, -0.99, 0.99)))
        # θ_SW1 as a single pendulum (the paper's swing hip): ω² = g / (2/3·l) for a uniform leg.
        # A free pendulum cannot join two angles in more than about half its period: slower swings
        # (slow cadences) use a proportionally slower pendulum.
        w = min(np.sqrt(G / (2.0 / 3.0 * l_leg)), PENDULUM_MAX_PHASE * np.pi / dur)
        sin_wd = np.sin(w * dur)
        B = (th1 - th0 * np.cos(w * dur)) / sin_wd if abs(sin_wd) > 1e-3 else 0.0
        stairs = bool(self.steps.on_stairs[k] or self.steps.on_stairs[k2])
        return _SwingPlan(k, t0, dur, A0, A1, clen, cdir, l_leg, th0, B, w, stairs,
                          float(np.dot(v0[:2], cdir)) * dur, float(np.dot(v1[:2], cdir)) * dur,
                          v0[2] * dur, v1[2] * dur)

    def _swing_horizontal(self, sw: _SwingPlan, rq):
        """Ankle (x, y) at swing fractions ``rq``, on the chord between the end positions."""
        if sw.clen <= 1e-6:
            return np.tile(sw.A0[:2], (len(rq), 1))
        if sw.stairs:
            # stairs: lift first, travel, then set the foot down (no sweeping across a riser)
            along = sw.clen * smoothstep((rq - STAIRS_TRAVEL_START) / STAIRS_TRAVEL_SPAN)
        else:
            # the pendulum's progress, its end slopes corrected (Hermite terms that vanish at
            # both ends) to the ankle's speed at toe off and at heel strike: no jerk
            rr = np.concatenate([rq, [0.0, 1e-3, 1 - 1e-3, 1.0]])
            th = sw.th0 * np.cos(sw.w * rr * sw.dur) + sw.B * np.sin(sw.w * rr * sw.dur)
            a_p = np.dot(self._hip_xy(sw.t0 + rr * sw.dur) - sw.A0[:2], sw.cdir) + sw.l_leg * np.sin(th)
            d0 = (a_p[-3] - a_p[-4]) / 1e-3
            d1 = (a_p[-1] - a_p[-2]) / 1e-3
            along = a_p[:-4] + (rq**3 - 2 * rq**2 + rq) * (sw.m0_h - d0) + (rq**3 - rq**2) * (sw.m1_h - d1)
            along = np.maximum.accumulate(np.clip(along, 0.0, sw.clen))
        return sw.A0[:2] + np.outer(along, sw.cdir)

    def _swing_rotations(self, k, r, dur):
        """Foot and toe rotations over the swing: pitch, heading and tilt eased between the end
        states; the toe bend eases from θ_ho at toe off back to 0."""
        Rb = self._swing_base(k, r)
        pitch = self._swing_pitch(k, r, dur)
        toe_bend = self.th_ho[k] * (1 - self._level(k, r))
        return Rb @ pitch_rot(self.left, pitch), Rb @ pitch_rot(self.left, pitch - toe_bend)

    def _swing_base(self, k, r):
        """Heading and ground tilt of the swinging foot, eased from footstep k to k + 2."""
        st, k2 = self.steps, k + 2
        e = smoothstep(r)
        hd = st.heading[k] + e * (st.heading[k2] - st.heading[k])
        nrm = tf.normalize(st.normal[k] * (1 - e)[:, None] + st.normal[k2] * e[:, None])
        return yaw_tilt(hd, self.char.rest_heading, nrm)

    def _solve_clearance(self, k, sw: _SwingPlan):
        """(apex z, extra lift on :data:`CLEARANCE_GRID`): the two cubics' apex is raised until every
        sole point clears the ground by the clearance (tapering to 0 at both ends); where a nosing
        is still in the way, a smooth local lift is added."""
        chk = CLEARANCE_GRID
        z0, z1 = sw.A0[2], sw.A1[2]
        apex = max(z0, z1) + APEX_START_M
        pts_rest = np.stack([self.geo.heel, self.joint_rest, self.geo.tip])
        Rf_c = self._swing_base(k, chk) @ pitch_rot(self.left, self._swing_pitch(k, chk, sw.dur))
        offs = np.einsum("nij,pj->npi", Rf_c, pts_rest - self.geo.ankle)
        sole_xy = self._swing_horizontal(sw, chk)[:, None, :] + offs[..., :2]
        # the highest ground within 5 mm along the chord: step edges between samples count
        ground_z = np.full(sole_xy.shape[:2], -np.inf)
        for shift in (-0.005, 0.0, 0.005):
            gz, _, hit = self.ground.height((sole_xy + shift * sw.cdir).reshape(-1, 2))
            ground_z = np.maximum(ground_z, np.where(hit, gz, -np.inf).reshape(sole_xy.shape[:2]))
        # full clearance mid-swing, tapering to touching at toe off and heel strike
        lo, ramp = CLEARANCE_TAPER
        wanted = self.p.clearance_m * np.clip((np.minimum(chk, 1 - chk) - lo) / ramp, 0.0, 1.0)
        outer = (chk > lo) & (chk < 1 - lo)
        cap = max(z0, z1) + APEX_MAX * sw.l_leg
        lift = np.zeros_like(chk)
        for it in range(4):
            zc = self._two_cubics(chk, z0, sw.m0_z, apex, z1, sw.m1_z, SWING_APEX_AT)
            deficit = np.max(wanted[:, None] + ground_z - (zc[:, None] + offs[..., 2]), axis=1)
            deficit = np.where(outer, np.maximum(deficit, 0.0), 0.0)
            need = float(deficit.max())
            if need <= 1e-4:
                break
            if it < 3 and apex < cap:
                apex = min(apex + need, cap)  # first raise the apex of the two cubics …
                continue
            # … then lift locally where a nosing is still in the way (a smooth envelope)
            lift = envelope(deficit, 10) * smoothstep(chk / ramp) * smoothstep((1 - chk) / ramp)
        return apex, lift

    def _swing_pitch(self, k, r, dur):
        """Foot pitch over the swing: from θ_to (keeping the roll's rate at toe off, a bump that
        dies out by the time the foot levels) to −θ_hs of the next heel strike."""
        _, _, _, t_c, t_d = self.phase[k]
        rate = (self.th_to[k] - self.th_ho[k]) / max(t_d - t_c, 1e-6)  # dθ/dt at toe off (rad/s)
        stairs = self.steps.on_stairs[k] or self.steps.on_stairs[k + 2]
        rl = 0.2 if stairs else 0.3
        bump = np.where(r < rl, rate * dur * r * (1 - r / rl) ** 2, 0.0)
        return self.th_to[k] + self._level(k, r) * (-self.th_hs[k + 2] - self.th_to[k]) + bump

    def _level(self, k, r):
        """0 → 1 over the swing: how far the foot's pitch has gone from toe off to heel strike.
        On stairs the foot keeps its toe-off pitch while it lifts (to r = 0.2), then levels by 0.6;
        elsewhere it levels by 60 % of the swing."""
        if self.steps.on_stairs[k] or self.steps.on_stairs[k + 2]:
            return smoothstep((r - STAIRS_LEVEL[0]) / STAIRS_LEVEL[1])
        return smoothstep(r / LEVEL_BY)

    @staticmethod
    def _two_cubics(r, z0, m0, apex, z1, m1, ra):
        out = np.empty_like(r)
        up = r < ra
        u = r[up] / ra
        out[up] = hermite(z0, m0 * ra, apex, 0.0, u)
        u = (r[~up] - ra) / (1 - ra)
        out[~up] = hermite(apex, 0.0, z1, m1 * (1 - ra), u)
        return out

    def _hip_xy(self, t):
        s, _y, z = self.com.at(t)
        path = self.path
        return (path.at(s) + path.left_at(s) * z[:, None])[:, :2]

    # ------------------------------------------------------------------ whole clip
    def track(self, t: np.ndarray, path, with_swing: bool = True, progress: ProgressFn = no_progress) -> FootTrack:
        """The foot over times ``t`` (s). ``with_swing=False`` leaves swing frames at the origin
        (cheaper, for checks that only concern the weight-bearing foot); ``progress`` gets the
        fraction of the footsteps done."""
        self.path = path
        N = len(t)
        ankle = np.zeros((N, 3))
        rot = np.tile(np.eye(3), (N, 1, 1))
        toe = rot.copy()
        contact = np.zeros((N, 3), dtype=bool)
        swing_r = np.full(N, np.nan)
        tl = self.tl
        tick = loop(progress, len(self.ks))
        for idx, k in enumerate(self.ks):
            tick(idx)
            land, lift = tl.land[k], tl.lift[k]
            m = (t >= land) & (t < lift) if np.isfinite(land) else (t < lift)
            if np.any(m):
                ankle[m], rot[m], toe[m], contact[m] = self.stance(k, t[m])
            if np.isfinite(lift) and idx + 1 < len(self.ks):
                k2 = self.ks[idx + 1]
                m = (t >= lift) & (t < tl.land[k2])
                if np.any(m):
                    if with_swing:
                        ankle[m], rot[m], toe[m] = self.swing(k, t[m])
                    swing_r[m] = (t[m] - lift) / (tl.land[k2] - lift)
        return FootTrack(ankle, rot, toe, contact, contact.any(axis=1), swing_r)
