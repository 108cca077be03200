"""Feet: the stance roll and, through :mod:`.swing`, the swing orbit — arrays over footsteps and times.

Tsutsuguchi et al. (2000), section "Straight Forward Walking Movement", Figures 9–10: the stance
leg is interpolated as in Bruderlin and Calvert's KLAW system (1989); the swing ankle follows "a
combination of two third-order curves" from toe off to heel strike; the swing hip θ_SW1 is a single
pendulum; ankle and toe angles are interpolated.

Stance of footstep k (times from :mod:`.timing`, the COM from :mod:`.com`):

(a) heel strike → foot flat (when C passes over the ankle in the paper; at the end of loading
    response by default, ``params.norms.foot_flat_at``): the foot rotates about the fixed heel from
    −θ_hs (toe up) to 0; on stairs heel and toe land together (θ_hs = 0);
(b) → (c) other heel strike: the foot rotates about the fixed ball joint M (the toe bone stays
    flat on the ground), heel rising to θ_ho;
(c) → (d) toe off: foot and toe rotate together about the fixed toe tip, up to θ_to.

A foot without a toe bone has its ball joint and toe tip at the end of its foot bone
(:class:`~.character.FootGeometry`): from heel off to toe off it turns about that one point.

θ_ho and θ_to (and the toe off's time) may be given per footstep (``roll``, solved in
:mod:`.support` from measured gait's knee). Pitch is a rotation about the character's rest left axis
(positive = heel up, toes down), applied after the footstep's heading and ground tilt.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ..curves import hermite
from ..ground import Ground
from ..progress import ProgressFn, no_progress
from .character import WalkCharacter
from .params import PathWalkParams
from .path import WalkPath
from .pose import axis_matrices, pitch_rot, turn_then_pitch, yaw_tilt
from .steps import Footsteps
from .swing import Swings

# ProcAnim's choices where the paper gives no numbers (tuned on the demo's human and Rigify's metarig):
STAIRS_TOE_OFF_DEG = 30.0   # toe off on stairs: a shorter push so the toe clears the next riser
STAIRS_HEEL_OFF_DEG = 25.0  # heel up at the other foot's heel strike on stairs
FLAT_WINDOW = (0.15, 0.6)   # the foot is flat (Fig. 10b, C over the ankle) within this part of the step
HEEL_OFF_WINDOW = (0.8, 0.2)  # heel off starts between 80 % and 20 % of the next step before its heel strike
END_FLAT = 0.3              # the last footstep is flat this part of a step after it lands
FIRST_RISE = 0.3            # the standing P_0 lifts its heel this part of a step before the first heel strike
ROLL_MAX_DEG = 80.0         # a foot rolled over its toe tip pitches no further than this
ROLL_TOL_RAD = 1e-6         # :meth:`FootModel.roll_to_reach` finds the pitch to this


# the phases of a stance (FootModel.roll_at): the pivot of the foot's roll, and which of the sole's
# heel, ball and tip bear weight in each; SWING is no stance
SWING, HEEL, FLAT, BALL, TIP = 0, 1, 2, 3, 4
CONTACTS = np.array([[False, False, False], [True, False, False], [True, True, True], [False, True, True],
                     [False, False, True]])


@dataclass
class FootTrack:
    """One foot over the clip's frames.

    ankle:   (F, 3) wanted ankle (foot bone head) position (m)
    rot:     (F, 3, 3) armature-space rotation applied to the rest foot (world = rot @ rest)
    toe_rot: (F, 3, 3) the same for the toe bone
    contact: (F, 3) bool: heel, ball, tip sole points bearing weight
    planted: (F,) bool: any sole point bearing weight
    swing_r: (F,) how far the swing has gone (0–1), NaN in stance
    swing_to: (F,) int: the footstep a swing lands on, −1 in stance
    phase:   (F,) int: :data:`SWING` or the stance's phase (:meth:`FootModel.roll_at`)
    step:    (F,) int: the footstep a stance stands on, −1 in swing
    pitch, toe_pitch: (F,) the stance's roll (rad; :meth:`FootModel.rolled`), 0 in swing
    """

    ankle: np.ndarray
    rot: np.ndarray
    toe_rot: np.ndarray
    contact: np.ndarray
    planted: np.ndarray
    swing_r: np.ndarray | None = None
    swing_to: np.ndarray | None = None
    phase: np.ndarray | None = None
    step: np.ndarray | None = None
    pitch: np.ndarray | None = None
    toe_pitch: np.ndarray | None = None


@dataclass(frozen=True)
class Footing:
    """What both feet stand on, the same in every pass of the support solve (:mod:`.support`): the
    character, the footsteps, the walk's parameters, the ground and the path."""

    char: WalkCharacter
    steps: Footsteps
    params: PathWalkParams
    ground: Ground
    path: WalkPath


class FootModel:
    """Foot poses of one side over any times, from footsteps, timeline, COM and the foot's rest
    geometry. Per-footstep values are arrays over all footsteps (K,); ``ks`` are this side's."""

    def __init__(self, footing: Footing, side: str, timeline, com, clearance=None, roll=None,
                 like: FootModel | None = None):
        """``side``: ``"L"`` or ``"R"``; ``timeline`` and ``com`` (None before the COM is solved) are
        this pass's; ``clearance``: a swing clearance solved in an earlier pass, kept; ``roll``: see
        the module docstring; ``like``: a model of the same foot on the same footsteps (an earlier
        pass) whose flat poses and lever arms are reused (they depend on the footsteps and the rig
        only)."""
        char, steps, params = footing.char, footing.steps, footing.params
        self.char, self.side, self.steps, self.tl = char, side, steps, timeline
        self.com, self.p, self.ground, self.path = com, params, footing.ground, footing.path
        self.geo = g = char.feet[side]
        self.anchor_rest = np.array([g.ankle[0], g.ankle[1], char.rest_ground_z])
        toe = char.toe[side]
        self.joint_rest = char.skeleton.heads[toe] if toe is not None else char.skeleton.tails[char.foot[side]]
        self.left = char.left
        self._pitch_axis = axis_matrices(char.left)
        sign = 1 if side == "L" else -1
        self.ks = np.flatnonzero(steps.side == sign)
        self.th_hs = np.where(steps.on_stairs, 0.0, np.radians(params.heel_strike_deg))
        th_ho = np.full(len(steps), np.radians(params.heel_off_deg))
        toe_off = np.full(len(steps), np.radians(params.toe_off_deg))
        if roll is not None:  # (θ_ho, θ_to) (K,) per footstep, rad, NaN where not solved (support.py)
            th_ho = np.where(np.isnan(roll[0]), th_ho, roll[0])
            toe_off = np.where(np.isnan(roll[1]), toe_off, roll[1])
        # on stairs the push-off is shorter so the toe clears the next riser
        self.th_to = np.where(steps.on_stairs, np.minimum(toe_off, np.radians(STAIRS_TOE_OFF_DEG)), toe_off)
        # on stairs the trailing heel is well up by the time the other foot lands on the next tread
        th_ho = np.where(steps.on_stairs, np.maximum(th_ho, np.radians(STAIRS_HEEL_OFF_DEG)), th_ho)
        self.th_ho = np.minimum(th_ho, self.th_to)
        self._phase = None
        self._phase_rows = None  # the phases as (K, 5) rows: one selection per stance query
        self._swings: Swings | None = None
        self._handed_clearance = clearance
        if like is not None and like.steps is steps and like.char is char and like.side == side:
            self.R_flat, self.heel_w, self.joint_w = like.R_flat, like.heel_w, like.joint_w
            self.tip_w, self.ankle_flat, self._arms = like.tip_w, like.ankle_flat, like._arms
            return
        self.R_flat = yaw_tilt(steps.heading, char.rest_heading, steps.normal)  # (K, 3, 3)
        flat = lambda p: steps.pos + self.R_flat @ (np.asarray(p) - self.anchor_rest)  # noqa: E731
        self.heel_w, self.joint_w, self.tip_w = flat(g.heel), flat(self.joint_rest), flat(g.tip)
        self.ankle_flat = flat(g.ankle)
        self._arms: dict = {}  # :meth:`turned`'s lever arms per footstep

    def both(self, other: FootModel) -> FootModel:
        """This model and the other foot's (same footsteps, timeline, COM and roll) as one that
        answers :meth:`stance_at`, :meth:`rolled_ankle`, :meth:`landing_ankle` and ``ankle_flat``
        for footsteps of either side with that footstep's own foot: the same numbers per footstep,
        one call for both sides (kept on this model)."""
        got = getattr(self, "_both", None)
        if got is not None and got[0] is other:
            return got[1]
        left = self if self.side == "L" else other
        right = other if left is self else self
        on_left = self.steps.side == 1
        pick = lambda a, b: np.where(on_left.reshape((-1,) + (1,) * (a.ndim - 1)), a, b)  # noqa: E731
        out = copy.copy(left)
        out.side, out.ks, out._swings = None, None, None
        if left.com is not None and left.com is right.com and left.tl is right.tl:
            # the phases depend on the timeline and the COM only: one computation for both feet
            if left._phase is None:
                left._phase = right._phase if right._phase is not None else left._phases()
            right._phase = left._phase
        out._phase, out._phase_rows = left._phase, None
        for name in ("heel_w", "joint_w", "tip_w", "ankle_flat"):
            setattr(out, name, pick(getattr(left, name), getattr(right, name)))
        none = np.zeros(0, int)
        for v in ("heel", "ball", "toe"):
            left.turned(none, v, np.zeros(0))
            right.turned(none, v, np.zeros(0))
        out._arms = {v: pick(left._arms[v], right._arms[v]) for v in left._arms}
        self._both = (other, out)
        return out

    @property
    def phase(self):
        """(land, t_flat, t_rise, t_c, t_d) of every footstep (s), from the COM (:meth:`_phases`)."""
        if self._phase is None:
            self._phase = self._phases()
        return self._phase

    @property
    def swings(self) -> Swings:
        """All swings of this foot (planned when first needed)."""
        if self._swings is None:
            self._swings = Swings(self, self._handed_clearance)
        return self._swings

    @property
    def clearance(self):
        """The swings' solved clearances (None until solved), to hand on to the next pass."""
        return self._handed_clearance if self._swings is None else self._swings.clearance

    def pitch(self, angle) -> np.ndarray:
        """(…, 3, 3) rotations by ``angle`` (rad) about the character's rest left axis."""
        return pitch_rot(self.left, angle, self._pitch_axis)

    def hip_xy(self, t) -> np.ndarray:
        """(N, 2) horizontal position of the COM over the path at times ``t`` (s)."""
        com = self.com
        s, z = np.interp(t, com.t, com.s), np.interp(t, com.t, com.z)
        return (self.path.at(s) + self.path.left_at(s) * z[:, None])[:, :2]

    # ------------------------------------------------------------------ stance
    def turned(self, k, v: str, angle, sin_cos=None) -> np.ndarray:
        """(…, 3) R_flat[k] @ pitch(angle) @ v for footsteps ``k`` (N,), pitches ``angle`` (N,) or (N, G),
        v one of the foot's lever arms ("heel" ankle − heel, "ball" ankle − ball joint M, "toe" M − toe
        tip): by Rodrigues' formula, R v + sin·R K v + (1 − cos)·R K² v, the three vectors kept per
        footstep. ``sin_cos``: (sin, cos) of ``angle`` when already known."""
        arms = self._arms.get(v)
        if arms is None:
            rest = {"heel": self.geo.ankle - self.geo.heel, "ball": self.geo.ankle - self.joint_rest,
                    "toe": self.joint_rest - self.geo.tip}[v]
            K, K2 = self._pitch_axis
            # (K, 3 vectors, xyz): one selection per call
            arms = self._arms[v] = np.stack([self.R_flat @ w for w in (rest, K @ rest, K2 @ rest)], axis=1)
        angle = np.asarray(angle, float)
        sin, cos = (np.sin(angle), np.cos(angle)) if sin_cos is None else sin_cos
        sel = arms[k]
        a, b, c = sel[:, 0], sel[:, 1], sel[:, 2]
        if angle.ndim == 2:
            a, b, c = a[:, None], b[:, None], c[:, None]
        return a + sin[..., None] * b + (1.0 - cos)[..., None] * c

    def rolled_ankle(self, k, theta, toe_theta=None, sin_cos=None) -> np.ndarray:
        """(N, 3) ankle of footstep ``k`` (N,) with the foot pitched ``theta`` (N,) rad, heel up: about
        the ball joint M with the toe flat (``toe_theta`` None), else about the toe tip with the toe
        pitched ``toe_theta`` (Figure 10 (b)–(d)). ``theta`` (and ``toe_theta``) may be (N, G): G
        pitches per footstep, (N, G, 3) ankles; ``sin_cos``: (sin θ, cos θ) when already known."""
        many = np.ndim(theta) == 2
        arm = self.turned(k, "ball", theta, sin_cos)
        if toe_theta is None:
            return (self.joint_w[k][:, None] if many else self.joint_w[k]) + arm
        return (self.tip_w[k][:, None] if many else self.tip_w[k]) + self.turned(k, "toe", toe_theta) + arm

    def landing_ankle(self, k) -> np.ndarray:
        """(N, 3) ankle of footstep ``k`` (N,) at its heel strike (toes up by θ_hs about the heel)."""
        return self.heel_w[k] + self.turned(k, "heel", -self.th_hs[k])

    def _phases(self):
        """(land, t_flat, t_rise, t_c, t_d) (K,) each: heel strike, foot flat, heel off, the other
        heel strike, toe off of every footstep (s; ±inf where a phase does not happen)."""
        tl, st = self.tl, self.steps
        K = len(st)
        n = K - 1
        k = np.arange(K)
        T = tl.T[np.clip(k, 1, n - 1)]
        land = tl.land
        passes = self.com.passes_many(st.s)
        hs_next = np.append(tl.heel_strike[1:], np.inf)
        T_next = np.append(tl.T[1:], tl.T[-1])
        flat_at = self.p.norms.foot_flat_at
        with np.errstate(invalid="ignore"):
            # foot flat: measured gait's, at the end of loading response; or C over the ankle (the paper)
            t_flat = land + flat_at * T if flat_at > 0 else \
                np.clip(passes, land + FLAT_WINDOW[0] * T, land + FLAT_WINDOW[1] * T)
            t_flat = np.where(k <= 1, -np.inf, np.where(k == n, land + END_FLAT * T, t_flat))
            mid = np.minimum(np.maximum(np.maximum(passes, t_flat), hs_next - HEEL_OFF_WINDOW[0] * T_next),
                             hs_next - HEEL_OFF_WINDOW[1] * T_next)
        t_rise = np.where(k == 0, tl.heel_strike[1] - FIRST_RISE * tl.T[1], np.where(k <= n - 2, mid, np.inf))
        t_c = np.where(k <= n - 2, hs_next, np.inf)
        return land, t_flat, t_rise, t_c, tl.lift.copy()

    def stance(self, k: int, t):
        """Ankle (N, 3), foot rot (N, 3, 3), toe rot (N, 3, 3), contact (N, 3) of footstep ``k``
        over times ``t`` within its stance."""
        t = np.asarray(t, float)
        return self.stance_at(np.full(len(t), k), t)

    def stance_at(self, k: np.ndarray, t: np.ndarray, ankle_only: bool = False):
        """The same for footstep ``k[i]`` at time ``t[i]``; ``ankle_only``: (ankle (N, 3), None,
        None, contact) — the rotations are not built."""
        phase, pitch, toe_pitch = self.roll_at(k, t)
        ankle, R, R_toe = self.rolled(k, phase, pitch, toe_pitch, ankle_only)
        return ankle, R, R_toe, CONTACTS[phase]

    def roll_at(self, k: np.ndarray, t: np.ndarray):
        """(phase (N,) int, foot pitch (N,) rad, toe pitch (N,) rad) of footstep ``k[i]`` at time
        ``t[i]`` within its stance: the phase one of :data:`HEEL`, :data:`FLAT`, :data:`BALL`,
        :data:`TIP` (the pivot: (a) the heel, the foot flat, (b) the ball joint M, (c) the toe tip)."""
        if self._phase_rows is None:
            self._phase_rows = np.stack(self.phase, axis=1)
        land, t_flat, t_rise, t_c, t_d = self._phase_rows[k].T
        N = len(t)
        pitch = np.zeros(N)
        toe_pitch = np.zeros(N)
        phase = np.full(N, FLAT)
        a = t < t_flat
        b = (t >= t_rise) & (t < t_c)
        c = t >= t_c
        if a.any():
            ka = k[a]
            u = (t[a] - land[a]) / np.maximum(t_flat[a] - land[a], 1e-6)
            pitch[a] = toe_pitch[a] = -self.th_hs[ka] * (1 - np.clip(u, 0, 1)) ** 2
            phase[a] = HEEL
        if b.any():
            u = (t[b] - t_rise[b]) / np.maximum(t_c[b] - t_rise[b], 1e-6)
            pitch[b] = self.th_ho[k[b]] * u * u
            phase[b] = BALL
        if c.any():
            kc, tc, td = k[c], t_c[c], t_d[c]
            u = np.clip((t[c] - tc) / np.maximum(td - tc, 1e-6), 0, 1)
            ho = self.th_ho[kc]
            m0 = 2 * ho * (td - tc) / np.maximum(tc - t_rise[c], 1e-6)
            to = self.th_to[kc]
            pitch[c] = pc = hermite(ho, m0, to, to - ho, u)
            toe_pitch[c] = pc - ho
            phase[c] = TIP
        return phase, pitch, toe_pitch

    def rolled(self, k, phase, pitch, toe_pitch, ankle_only: bool = False):
        """(ankle (N, 3), foot rot (N, 3, 3), toe rot (N, 3, 3)) of footstep ``k[i]`` rolled in
        ``phase[i]`` (:meth:`roll_at`) to ``pitch[i]`` (the toe to ``toe_pitch[i]``, rad); rotations
        None with ``ankle_only``."""
        ankle = self.ankle_flat[k]  # (a fancy index: a copy)
        # (a) about the heel, (b) about the ball joint M, (c) about the toe tip
        for code, pivot, arm in ((HEEL, self.heel_w, "heel"), (BALL, self.joint_w, "ball")):
            m = phase == code
            if m.any():
                ankle[m] = pivot[k[m]] + self.turned(k[m], arm, pitch[m])
        c = phase == TIP
        if c.any():
            kc = k[c]
            ankle[c] = self.tip_w[kc] + self.turned(kc, "toe", toe_pitch[c]) + self.turned(kc, "ball", pitch[c])
        if ankle_only:
            return ankle, None, None
        R = self.R_flat[k]
        ax = self._pitch_axis
        return ankle, turn_then_pitch(R, pitch, ax), turn_then_pitch(R, toe_pitch, ax)

    def toe_pitch_of(self, k, phase, pitch) -> np.ndarray:
        """(N,) the toe's pitch (rad) when footstep ``k[i]`` is rolled in ``phase[i]`` to ``pitch[i]``:
        with the foot about the heel, flat on the ground about the ball joint, bent by the pitch
        beyond θ_ho about the toe tip (as :meth:`roll_at`)."""
        k = np.maximum(k, 0)
        return np.where(phase == HEEL, pitch, np.where(phase == TIP, pitch - self.th_ho[k], 0.0))

    def pitch_range(self, k, phase) -> tuple[np.ndarray, np.ndarray]:
        """((N,), (N,)) the pitches (rad) footstep ``k[i]`` may take in ``phase[i]``: from toes up by
        θ_hs to flat about the heel; from flat to θ_to rolling over its toes (:meth:`over_toes`)."""
        k = np.maximum(k, 0)
        heel = phase == HEEL
        return np.where(heel, -self.th_hs[k], 0.0), np.where(heel, 0.0, self.th_to[k])

    def over_toes(self, k, pitch) -> np.ndarray:
        """(N,) the phase of footstep ``k[i]`` rolled over its toes to ``pitch[i]`` (rad): about the ball
        joint up to θ_ho (:data:`BALL`), about the toe tip beyond (:data:`TIP`) — one continuous roll,
        its pivot changing where the pitch passes θ_ho."""
        return np.where(pitch > self.th_ho[np.maximum(k, 0)], TIP, BALL)

    def roll_to_reach(self, k, phase, hip, reach) -> np.ndarray:
        """(N,) the pitch (rad) within :meth:`pitch_range` at which footstep ``k[i]``, rolled about its
        heel (``phase[i]`` :data:`HEEL`) or over its toes (:data:`BALL`, :data:`TIP`: :meth:`over_toes`),
        has its ankle ``reach[i]`` m from ``hip[i]`` (N, 3) — the nearer end of the range where none
        does (the ankle's distance is monotonic in the pitch: bisection to :data:`ROLL_TOL_RAD`)."""
        lo, hi = self.pitch_range(k, phase)
        heel = phase == HEEL

        def miss(th):
            ph = np.where(heel, HEEL, self.over_toes(k, th))
            a = self.rolled(k, ph, th, self.toe_pitch_of(k, ph, th), ankle_only=True)[0] - hip
            return np.sqrt(np.sum(a * a, axis=-1)) - reach

        f_lo, f_hi = miss(lo), miss(hi)
        a, b = lo.copy(), hi.copy()
        for _ in range(int(np.ceil(np.log2(max(float(np.max(hi - lo, initial=0.0)), 1e-12) / ROLL_TOL_RAD)))):
            mid = 0.5 * (a + b)
            f_mid = miss(mid)
            left = np.sign(f_mid) == np.sign(f_lo)
            a, f_lo = np.where(left, mid, a), np.where(left, f_mid, f_lo)
            b = np.where(left, b, mid)
        both = np.sign(miss(lo)) == np.sign(f_hi)  # no root: the end nearer to reaching
        return np.where(both, np.where(np.abs(miss(lo)) < np.abs(f_hi), lo, hi), 0.5 * (a + b))

    def sole_points(self, ankle, rot, toe_rot) -> np.ndarray:
        """(N, 3 points, 3) heel, ball and toe tip of the foot with its ankle at ``ankle`` (N, 3) and
        the foot and toe turned by ``rot``, ``toe_rot`` (N, 3, 3) from the rest pose."""
        g, M = self.geo, self.joint_rest
        joint = ankle + rot @ (M - g.ankle)
        return np.stack([ankle + rot @ (g.heel - g.ankle), joint + toe_rot @ (g.ball - M),
                         joint + toe_rot @ (g.tip - M)], axis=1)

    # ------------------------------------------------------------------ whole clip
    def _segments(self, t):
        """(N,) where times ``t`` fall on this side's timeline — stance of ks[0], swing, stance of
        ks[1], swing, …: even = stance of ks[seg // 2], odd = the swing after it, −1 before."""
        tl, ks = self.tl, self.ks
        bounds = np.stack([tl.land[ks], tl.lift[ks]], axis=-1).ravel()
        return np.searchsorted(bounds, t, side="right") - 1

    def stance_ankles(self, t: np.ndarray):
        """(ankle (N, 3), planted (N,) bool) over times ``t`` (s, increasing): the ankle where the foot
        bears weight, zeros elsewhere (cheap: for checks of where the weight-bearing ankle is)."""
        t = np.asarray(t, float)
        seg = self._segments(t)
        planted = (seg >= 0) & (seg % 2 == 0)
        ankle = np.zeros((len(t), 3))
        if np.any(planted):
            ankle[planted] = self.stance_at(self.ks[seg[planted] // 2], t[planted], ankle_only=True)[0]
        return ankle, planted

    def track(self, t: np.ndarray, progress: ProgressFn = no_progress) -> FootTrack:
        """The foot over times ``t`` (s, increasing)."""
        t = np.asarray(t, float)
        N = len(t)
        ankle = np.zeros((N, 3))
        rot = np.tile(np.eye(3), (N, 1, 1))
        toe = rot.copy()
        contact = np.zeros((N, 3), dtype=bool)
        swing_r = np.full(N, np.nan)
        swing_to = np.full(N, -1)
        tl, ks = self.tl, self.ks
        seg = self._segments(t)
        stance = (seg >= 0) & (seg % 2 == 0)
        phase = np.full(N, SWING)
        step = np.full(N, -1)
        pitch, toe_pitch = np.zeros(N), np.zeros(N)
        if np.any(stance):
            step[stance] = k = ks[seg[stance] // 2]
            phase[stance], pitch[stance], toe_pitch[stance] = roll = self.roll_at(k, t[stance])
            ankle[stance], rot[stance], toe[stance] = self.rolled(k, *roll)
            contact[stance] = CONTACTS[roll[0]]
        progress(0.5)
        swing = (seg % 2 == 1) & (seg // 2 + 1 < len(ks))
        if np.any(swing):
            k = ks[seg[swing] // 2]
            swing_r[swing] = (t[swing] - tl.lift[k]) / (tl.land[k + 2] - tl.lift[k])
            swing_to[swing] = k + 2
            ankle[swing], rot[swing], toe[swing] = self.swings.at(np.searchsorted(self.swings.k, k), t[swing])
        progress(1.0)
        return FootTrack(ankle, rot, toe, contact, contact.any(axis=1), swing_r, swing_to, phase, step, pitch,
                         toe_pitch)
