"""The swing foot, for all swings of one foot at once (arrays over swings, then over samples).

Tsutsuguchi et al. (2000), section "Straight Forward Walking Movement" and Figure 9: "the swing
ankle follows an orbit curve, i.e. a combination of two third-order curves, that smoothly connects
from the position at the toe off to the point at the heel strike"; "the hip angle θ_SW1 is
calculated dynamically as a single pendulum"; "the ankle angle and toe angle are interpolated from
the toe off to the heel strike".

Swing j runs from the toe off of footstep k_j to the heel strike of k_j + 2. Horizontally the
ankle moves along the chord between its end positions with the hip's progress plus l·sin θ of a
free linear pendulum hung at the hip (ω² = g / (2/3·l), a uniform leg), its end slopes corrected
to the roll's speed at toe off and heel strike; vertically it follows two cubics joined at the
apex, the apex raised until every sole point clears the ground (stair nosings included) by the
clearance, then a smooth local lift where a nosing is still in the way. On level ground the apex
comes early (a quarter into the swing) and the heel comes down onto the ground as fast as a straight
leg swinging on with the hip lets it (measured gait's terminal swing, the knee at about 5°). On stairs
the foot lifts off a tread before it travels and sets down onto one after (never faster than a
walking foot). Pitch, heading and tilt are eased between the end states.
"""

from __future__ import annotations

import numpy as np

from ..curves import envelope, hermite, smoothstep
from ..ground import UP, FlatGround
from ..transforms import normalize
from .pose import mat_const, turn_then_pitch, yaw_tilt

G = 9.81
# ProcAnim's choices where the paper gives no numbers (tuned on the demo's human and Rigify's metarig):
# the two cubics of the swing height meet at this fraction of the swing: early on level ground (the
# foot highest soon after toe off, the knee at its peak flexion at about 72 % of the gait cycle, a
# quarter into the swing: Perry and Burnfield 2010, ch. 4), later on stairs (lift, then travel)
SWING_APEX_AT = 0.25
STAIRS_APEX_AT = 0.45
LANDING_DESCENT = 1.5  # × the descent that keeps a straight leg's length: the knee straightens as the heel lands
APEX_START_M = 0.01         # first apex above the higher end of the swing, then raised for clearance
APEX_MAX = 0.25             # × leg length: the highest apex above the higher end (then local lifts)
CLEARANCE_GRID = np.linspace(0.0, 1.0, 161)  # swing fractions where the sole's clearance is checked
CLEARANCE_TAPER = (0.05, 0.2)  # no clearance wanted before 5 % of the swing, the full one after 25 %
CLEARANCE_PASSES = 4        # apex raises (the last pass adds the local lift instead)
LIFT_OFF_DEG = 30.0         # sole points leave the ground at this angle or steeper (no scraping) …
LIFT_OFF_M = 0.01           # … until they are this high (then the clearance's taper takes over)
LIFT_OFF_UNTIL = 0.4        # … checked over this part of the swing, the lift eased in over …
LIFT_OFF_EASE = 0.05        # … this part of it and smoothed over ± this many samples of CLEARANCE_GRID:
LIFT_OFF_SMOOTH = 6
NOSING_PROBE_M = 0.005      # the ground is also read this far before and after each sole point
PENDULUM_MAX_PHASE = 0.7    # × π: the most of its period the swing pendulum may use
STAIRS_LIFT_FIRST = 0.2     # a foot leaving a tread rises this part of the swing before it travels …
STAIRS_SET_DOWN = 0.15      # … and one landing on a tread travels no later than this part before the end
TRAVEL_SPEED_MAX = 3.5      # m/s: a stairs swing travels no faster (its step lasts long enough); walking
# feet peak near 4–5 m/s, a flick is faster
LEVEL_BY = 0.6              # the foot's pitch reaches the heel-strike pitch by this fraction of the swing
STAIRS_LEVEL = (0.2, 0.4)   # on stairs: keep the toe-off pitch until 0.2, then level over 0.4
TOE_OFF_BUMP = (0.3, 0.2)   # the toe-off pitch rate dies out by this fraction (level ground, stairs)
ENDS_EPS_S = 1e-4           # the ends' speeds are finite differences over this time (s)
SLOPE_EPS = 1e-3            # the pendulum's end slopes are finite differences over this fraction


class Swings:
    """All swings of one foot: their ends, pendulums and clearances (arrays over swings j).

    foot: the :class:`~.feet.FootModel` (stance poses, phases, footsteps, the COM, the ground).
    clearance: ``(apex (S,), lift (S, len(CLEARANCE_GRID)))`` from an earlier pass of the same walk
    (the COM moves by millimetres between passes), else solved here when first needed.
    """

    def __init__(self, foot, clearance=None):
        self.foot = foot
        st, tl = foot.steps, foot.tl
        ks = np.asarray(foot.ks)
        lift = tl.lift[ks]
        self.k = ks[:-1][np.isfinite(lift[:-1])]  # footsteps whose toe off starts a swing
        k, k2 = self.k, self.k + 2
        S = len(k)
        self.t0, t1 = tl.lift[k], tl.land[k2]
        self.dur = t1 - self.t0
        eps = ENDS_EPS_S
        # both ends of every swing in one stance query: toe off (and just before), heel strike (and after)
        ends = foot.stance_at(np.concatenate([np.repeat(k, 2), np.repeat(k2, 2)]),
                              np.concatenate([np.stack([self.t0 - eps, self.t0], -1).ravel(),
                                              np.stack([t1, t1 + eps], -1).ravel()]), ankle_only=True)[0]
        a0, a1 = ends[:2 * S].reshape(S, 2, 3), ends[2 * S:].reshape(S, 2, 3)
        v0 = (a0[:, 1] - a0[:, 0]) / eps
        v1 = (a1[:, 1] - a1[:, 0]) / eps
        self.A0, self.A1 = a0[:, 1], a1[:, 0]
        chord = self.A1[:, :2] - self.A0[:, :2]
        self.clen = np.linalg.norm(chord, axis=-1)
        self.cdir = np.where(self.clen[:, None] > 1e-6, chord / np.maximum(self.clen, 1e-300)[:, None], 0.0)
        self.l_leg = foot.char.ankle_reach(foot.side)
        hip = foot.hip_xy(np.concatenate([self.t0, t1])).reshape(2, S, 2)
        p0 = np.sum((hip[0] - self.A0[:, :2]) * self.cdir, axis=-1)
        p1 = np.sum((hip[1] - self.A0[:, :2]) * self.cdir, axis=-1)
        self.th0 = np.arcsin(np.clip((0.0 - p0) / self.l_leg, -0.99, 0.99))
        th1 = np.arcsin(np.clip((self.clen - p1) / self.l_leg, -0.99, 0.99))
        # θ_SW1 as a single pendulum: ω² = g / (2/3·l). A free pendulum cannot join two angles in
        # more than about half its period: slower swings (slow cadences) use a slower pendulum.
        self.w = np.minimum(np.sqrt(G / (2.0 / 3.0 * self.l_leg)), PENDULUM_MAX_PHASE * np.pi / self.dur)
        sin_wd = np.sin(self.w * self.dur)
        self.B = np.where(np.abs(sin_wd) > 1e-3, (th1 - self.th0 * np.cos(self.w * self.dur)) / sin_wd, 0.0)
        self.stairs = st.on_stairs[k] | st.on_stairs[k2]
        self.travel = travel_window(st.on_stairs[k], st.on_stairs[k2])
        self.m0_h = np.sum(v0[:, :2] * self.cdir, axis=-1) * self.dur
        self.m1_h = np.sum(v1[:, :2] * self.cdir, axis=-1) * self.dur
        self.m0_z, self.m1_z = v0[:, 2] * self.dur, v1[:, 2] * self.dur
        # on level ground the leg reaches straight for the heel strike: the heel comes down as fast as
        # the hip, moving on over the straight leg, lets it (the last part of the swing on that arc)
        level = ~self.stairs
        if np.any(level):
            descent = LANDING_DESCENT * landing_descent(foot, t1, self.A1, v1, self.cdir)
            self.m1_z[level] = np.minimum(self.m1_z, descent * self.dur)[level]
        _, _, _, t_c, t_d = (ph[k] for ph in foot.phase)
        self.rate = (foot.th_to[k] - foot.th_ho[k]) / np.maximum(t_d - t_c, 1e-6)  # dθ/dt at toe off (rad/s)
        self.clearance = clearance

    def __len__(self) -> int:
        return len(self.k)

    # ------------------------------------------------------------------ per sample
    def at(self, j: np.ndarray, t: np.ndarray):
        """Ankle (N, 3), foot rot (N, 3, 3), toe rot (N, 3, 3) of swing ``j[i]`` at time ``t[i]``
        (samples of one swing in time order)."""
        if self.clearance is None:
            self.clearance = self._solve_clearance()
        apex, lift = self.clearance
        r = np.clip((t - self.t0[j]) / self.dur[j], 0.0, 1.0)
        xy = self.horizontal(j, r)
        Rf, Rt = self.rotations(j, r)
        # plus the local lift, linear between the samples of CLEARANCE_GRID
        x = r * (len(CLEARANCE_GRID) - 1)
        i0 = np.minimum(x.astype(int), len(CLEARANCE_GRID) - 2)
        f = x - i0
        z = self.two_cubics(r, j, apex[j]) + (lift[j, i0] * (1.0 - f) + lift[j, i0 + 1] * f)
        return np.concatenate([xy, z[:, None]], axis=-1), Rf, Rt

    def horizontal(self, j, r):
        """Ankle (x, y) (N, 2) of swing ``j`` at swing fractions ``r``, on the chord."""
        along = np.zeros(len(r))
        stairs = self.stairs[j]
        if np.any(stairs):
            # stairs: lift off a tread first, travel, then set down onto a tread (no sweep across a
            # riser); the step is long enough for this to stay a walking foot's speed (timing.py)
            js = j[stairs]
            start, span = self.travel[0][js], self.travel[1][js]
            along[stairs] = self.clen[js] * smoothstep((r[stairs] - start) / span)
        pend = ~stairs & (self.clen[j] > 1e-6)
        if np.any(pend):
            along[pend] = self._pendulum(j[pend], r[pend])
        return self.A0[j, :2] + along[:, None] * self.cdir[j]

    def _pendulum(self, j, r):
        """Distance along the chord (m): the pendulum's progress, its end slopes corrected (Hermite
        terms that vanish at both ends) to the ankle's speed at toe off and heel strike (no jerk),
        clipped to the chord and never going back."""
        js = np.unique(j)
        ends = np.array([0.0, SLOPE_EPS, 1 - SLOPE_EPS, 1.0])
        jj = np.concatenate([j, np.repeat(js, 4)])
        rr = np.concatenate([r, np.tile(ends, len(js))])
        dur = self.dur[jj]
        wt = self.w[jj] * rr * dur
        th = self.th0[jj] * np.cos(wt) + self.B[jj] * np.sin(wt)
        hip = self.foot.hip_xy(self.t0[jj] + rr * dur)
        a_p = np.sum((hip - self.A0[jj, :2]) * self.cdir[jj], axis=-1) + self.l_leg * np.sin(th)
        a_e = a_p[len(r):].reshape(len(js), 4)
        d0 = np.zeros(len(self))
        d1 = np.zeros(len(self))
        d0[js] = (a_e[:, 1] - a_e[:, 0]) / SLOPE_EPS
        d1[js] = (a_e[:, 3] - a_e[:, 2]) / SLOPE_EPS
        r2, r3 = r**2, r**3
        along = a_p[:len(r)] + (r3 - 2 * r2 + r) * (self.m0_h[j] - d0[j]) + (r3 - r2) * (self.m1_h[j] - d1[j])
        return _running_max_per_run(np.clip(along, 0.0, self.clen[j]), j)

    def rotations(self, j, r):
        """Foot and toe rotations: pitch from θ_to (keeping the roll's rate at toe off, a bump that
        dies out) to −θ_hs of the next heel strike, heading and tilt eased; the toe bend eases from
        θ_ho at toe off back to 0."""
        f = self.foot
        Rb, pitch, toe_bend = self._pitch(j, r)
        return turn_then_pitch(Rb, pitch, f._pitch_axis), turn_then_pitch(Rb, pitch - toe_bend, f._pitch_axis)

    def _pitch(self, j, r):
        """(heading and tilt (N, 3, 3), foot pitch (N,), toe bend (N,)) of :meth:`rotations`."""
        f = self.foot
        k = self.k[j]
        level = self.level(j, r)
        rl = np.where(self.stairs[j], TOE_OFF_BUMP[1], TOE_OFF_BUMP[0])
        bump = np.where(r < rl, self.rate[j] * self.dur[j] * r * (1 - r / rl) ** 2, 0.0)
        pitch = f.th_to[k] + level * (-f.th_hs[k + 2] - f.th_to[k]) + bump
        return self.base(j, r), pitch, f.th_ho[k] * (1 - level)

    def base(self, j, r):
        """Heading and ground tilt of the swinging foot, eased from footstep k to k + 2."""
        st, k = self.foot.steps, self.k[j]
        e = smoothstep(r)
        hd = st.heading[k] + e * (st.heading[k + 2] - st.heading[k])
        if np.all(st.normal[k] == UP) and np.all(st.normal[k + 2] == UP):  # level ends: level between
            nrm = np.broadcast_to(UP, (len(k), 3))
        else:
            nrm = normalize(st.normal[k] * (1 - e)[:, None] + st.normal[k + 2] * e[:, None])
        return yaw_tilt(hd, self.foot.char.rest_heading, nrm)

    def level(self, j, r):
        """0 → 1 over the swing: how far the foot's pitch has gone from toe off to heel strike.
        On stairs the foot keeps its toe-off pitch while it lifts, then levels."""
        return np.where(self.stairs[j], smoothstep((r - STAIRS_LEVEL[0]) / STAIRS_LEVEL[1]), smoothstep(r / LEVEL_BY))

    def two_cubics(self, r, j, apex):
        """Ankle height (m): two cubic Hermite segments joined at the apex (zero vertical speed)."""
        ra = np.where(self.stairs[j], STAIRS_APEX_AT, SWING_APEX_AT)
        z0, z1 = self.A0[j, 2], self.A1[j, 2]
        m0, m1 = self.m0_z[j], self.m1_z[j]
        out = np.empty_like(r)
        up = r < ra
        u = r[up] / ra[up]
        out[up] = hermite(z0[up], m0[up] * ra[up], apex[up], 0.0, u)
        dn = ~up
        u = (r[dn] - ra[dn]) / (1 - ra[dn])
        out[dn] = hermite(apex[dn], 0.0, z1[dn], m1[dn] * (1 - ra[dn]), u)
        return out

    # ------------------------------------------------------------------ clearance
    def _solve_clearance(self):
        """(apex (S,), lift (S, G)): each swing's apex raised until every sole point clears the
        ground by the clearance (tapering to 0 at both ends), then a local lift where needed."""
        f = self.foot
        S, chk = len(self), CLEARANCE_GRID
        Gn = len(chk)
        z0, z1 = self.A0[:, 2], self.A1[:, 2]
        apex = np.maximum(z0, z1) + APEX_START_M
        lift = np.zeros((S, Gn))
        if S == 0:
            return apex, lift
        j = np.repeat(np.arange(S), Gn)
        r = np.tile(chk, S)
        # the sole points about the ankle, pitched (Rodrigues' formula on the three vectors) and turned
        V = (np.stack([f.geo.heel, f.joint_rest, f.geo.tip]) - f.geo.ankle).T  # (xyz, point)
        K, K2 = f._pitch_axis
        Rb, pitch, _ = self._pitch(j, r)
        flat = type(f.ground) is FlatGround  # one height under every probe, wherever the sole is
        Rb = Rb[:, 2:] if flat else Rb  # on flat ground only the soles' heights matter
        RW = mat_const(Rb, V) + np.sin(pitch)[:, None, None] * mat_const(Rb, K @ V) \
            + (1.0 - np.cos(pitch))[:, None, None] * mat_const(Rb, K2 @ V)  # Rb (V + sin K V + (1 − cos) K² V)
        sole_z = RW[:, -1].reshape(S, Gn, 3)  # (S, G, point)
        if flat:
            ground_z = np.full((S, Gn, 3), float(f.ground.z))
        else:  # the highest ground within a few mm along the chord: step edges between samples count
            offs = np.swapaxes(RW, 1, 2).reshape(S, Gn, 3, 3)  # (S, G, point, xyz)
            sole_xy = self.horizontal(j, r).reshape(S, Gn, 1, 2) + offs[..., :2]
            shifts = np.array([-NOSING_PROBE_M, 0.0, NOSING_PROBE_M])
            probe = sole_xy[None] + shifts[:, None, None, None, None] * self.cdir[None, :, None, None, :]
            gz, _, hit = f.ground.height(probe.reshape(-1, 2))
            ground_z = np.max(np.where(hit, gz, -np.inf).reshape(probe.shape[:-1]), axis=0)  # (S, G, 3)
        lo, ramp = CLEARANCE_TAPER
        wanted = f.p.clearance_m * np.clip((np.minimum(chk, 1 - chk) - lo) / ramp, 0.0, 1.0)
        outer = (chk > lo) & (chk < 1 - lo)
        cap = np.maximum(z0, z1) + APEX_MAX * self.l_leg
        active = np.ones(S, dtype=bool)
        for it in range(CLEARANCE_PASSES):
            zc = self.two_cubics(r, j, np.repeat(apex, Gn)).reshape(S, Gn)
            deficit = np.max(wanted[None, :, None] + ground_z - (zc[..., None] + sole_z), axis=2)
            deficit = np.where(outer, np.maximum(deficit, 0.0), 0.0)
            need = deficit.max(axis=1)
            active &= need > 1e-4
            raise_ = active & (apex < cap) if it < CLEARANCE_PASSES - 1 else np.zeros(S, dtype=bool)
            apex = np.where(raise_, np.minimum(apex + need, cap), apex)
            local = active & ~raise_
            if np.any(local):
                # a nosing still in the way: lift locally (a smooth envelope)
                lift[local] = envelope(deficit[local], 10) * smoothstep(chk / ramp) * smoothstep((1 - chk) / ramp)
            if not np.any(active):
                break
        return apex, np.maximum(lift, self._lift_off(apex, lift))

    def _lift_off(self, apex, lift) -> np.ndarray:
        """(S, G) the lift (m) the early part of each swing needs so that every sole point leaves the
        ground at :data:`LIFT_OFF_DEG` or steeper — at least tan(that) × its horizontal travel since
        toe off above the ground, up to :data:`LIFT_OFF_M` — instead of sliding on just above it (the
        pendulum carries the foot forward faster than the cubic raises it): the deficit (at most the
        height wanted: a point already under the ground is the clearance's business) through a smooth
        envelope, eased in over :data:`LIFT_OFF_EASE` of the swing (the foot leaves the stance with its
        own velocity). Not for a foot leaving a stair tread: it lifts before it travels."""
        f = self.foot
        r = CLEARANCE_GRID[CLEARANCE_GRID <= LIFT_OFF_UNTIL]
        S, Gn = len(self), len(r)
        out = np.zeros((S, len(CLEARANCE_GRID)))
        if S == 0:
            return out
        j = np.repeat(np.arange(S), Gn)
        rr = np.tile(r, S)
        V = (np.stack([f.geo.heel, f.joint_rest, f.geo.tip]) - f.geo.ankle).T  # (xyz, point)
        K, K2 = f._pitch_axis
        Rb, pitch, _ = self._pitch(j, rr)
        RW = mat_const(Rb, V) + np.sin(pitch)[:, None, None] * mat_const(Rb, K @ V) \
            + (1.0 - np.cos(pitch))[:, None, None] * mat_const(Rb, K2 @ V)  # (N, xyz, point)
        z = self.two_cubics(rr, j, np.repeat(apex, Gn)) + lift[:, :Gn].ravel()
        pts = np.concatenate([self.horizontal(j, rr)[:, :, None], z[:, None, None]], axis=1) + RW
        pts = np.swapaxes(pts, 1, 2).reshape(S, Gn, 3, 3)  # (S, G, point, xyz)
        gz, _, hit = f.ground.height(pts[..., :2].reshape(-1, 2))
        gap = pts[..., 2] - np.where(hit, gz, -np.inf).reshape(S, Gn, 3)
        travel = np.linalg.norm(pts[..., :2] - pts[:, :1, :, :2], axis=-1)
        want = np.minimum(np.tan(np.radians(LIFT_OFF_DEG)) * travel, LIFT_OFF_M)
        deficit = np.max(np.clip(want - gap, 0.0, want), axis=2)
        deficit[self.travel[0] > 0] = 0.0  # a foot leaving a tread lifts before it travels already
        out[:, :Gn] = envelope(deficit, LIFT_OFF_SMOOTH) * smoothstep(r / LIFT_OFF_EASE)
        return out


def landing_descent(foot, t1, ankle, v_ankle, cdir) -> np.ndarray:
    """(S,) vertical speed (m/s, < 0 down) of an ankle that stays at its distance from the hip (the
    hip joint on C's path, C's height) as the hip moves on at heel strike times ``t1`` (S,): the
    straight leg swinging down onto the heel. ``ankle``, ``v_ankle`` (S, 3) at heel strike,
    ``cdir`` (S, 2) the direction of travel."""
    char = foot.char
    drop = float(char.pelvis_rest[2] - char.hip_joint_rest[foot.side][2])
    eps = ENDS_EPS_S
    xy = foot.hip_xy(np.concatenate([t1 - eps, t1])).reshape(2, len(t1), 2)
    z = np.interp(np.concatenate([t1 - eps, t1]), foot.com.t, foot.com.y).reshape(2, len(t1)) - drop
    ahead = np.sum((ankle[:, :2] - xy[1]) * cdir, axis=-1)
    below = np.maximum(z[1] - ankle[:, 2], 1e-3)
    closing = np.sum(v_ankle[:, :2] * cdir, axis=-1) - np.sum((xy[1] - xy[0]) * cdir, axis=-1) / eps
    return (z[1] - z[0]) / eps + ahead / below * closing


def travel_window(from_tread, onto_tread):
    """(start, span) of the part of a stairs swing over which the foot travels along its chord:
    after :data:`STAIRS_LIFT_FIRST` when it leaves a tread, before the last :data:`STAIRS_SET_DOWN`
    when it lands on one (arrays or bools)."""
    start = np.where(from_tread, STAIRS_LIFT_FIRST, 0.0)
    end = np.where(onto_tread, 1.0 - STAIRS_SET_DOWN, 1.0)
    return start, end - start


def min_swing_time(chord, from_tread, onto_tread):
    """Shortest swing (s) that carries the foot ``chord`` m over its travel window with a
    smoothstep no faster than :data:`TRAVEL_SPEED_MAX` (its peak is 1.5 × its mean speed)."""
    return 1.5 * np.asarray(chord, float) / (TRAVEL_SPEED_MAX * travel_window(from_tread, onto_tread)[1])


def _running_max_per_run(values: np.ndarray, run: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` within each run of equal ``run`` ids (runs contiguous)."""
    if len(values) == 0:
        return values
    starts = np.flatnonzero(np.concatenate(([True], run[1:] != run[:-1])))
    lengths = np.diff(np.concatenate((starts, [len(values)])))
    grid = np.full((len(starts), int(lengths.max())), -np.inf)
    col = np.arange(len(values)) - np.repeat(starts, lengths)
    row = np.repeat(np.arange(len(starts)), lengths)
    grid[row, col] = values
    return np.maximum.accumulate(grid, axis=1)[row, col]
