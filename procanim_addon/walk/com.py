"""Centre of mass from the feet's reaction forces: M·C̈ = F_L + F_R − M·g (Tsutsuguchi et al. 2000, eq. 5).

The COM is written in path coordinates: progression s (arc length along the path, m), height y
(absolute z, m) and lateral offset z (m, + to the path's left). Each footstep k carries one scale
factor per component over its whole stance (so in double support the new stance foot's force adds
to the one already "precalculated" for the other foot). Integrating from the standing start,

    q(t) = q₀ + v₀·(t − t₀) + B(t) + Σ_k c_k·Φ_k(t),     Φ_k = ∬ g·F̂_k dt²,

so the COM at every heel strike is linear in the scales c. The scales are found by shooting — here
one least-squares solve over the whole walk (:mod:`.shooting`, taken block by block in time) — so
that C passes through the boundary positions of every step (hip midway between the feet at heel
strike), with a small pull of each scale toward its nominal value. Position and velocity are
continuous across step boundaries by construction (one integral). The progression force's first
harmonic a_x1 (RECON) is solved the same way per footstep, so the body can start from standing,
stop and change speed; its nominal value is 0.

After the last heel strike the COM settles into the standing pose with a cubic that keeps
position and velocity continuous (the method does not model stopping).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..curves import hermite
from ..progress import ProgressFn, no_progress
from . import forces as fr
from .shooting import ShootingSystem

G = 9.81
# Shooting weights (ProcAnim's; the paper iterates each step's scales until C meets its boundary
# values): rows are met to about 1 mm, the pulls keep scales near nominal where rows leave freedom.
W_POSITION = 1000.0  # weight of a boundary position row (per m)
W_VELOCITY = 300.0   # weight of the final velocity row (per m/s)
W_SWAY = 100.0       # weight of a lateral boundary row (C on the path at heel strike)
PULL_Y, PULL_X, PULL_X1, PULL_Z = 30.0, 3.0, 1.0, 10.0  # pulls of s_y, s_x, a_x1 and s_z toward nominal
END_GAP = 0.2        # × last step: the COM's way left at the last heel strike, covered by settling
T_100 = 0.6          # s: the step time at the paper's 100 steps/min, where a_z is the paper's
SWAY_SCALE = (0.25, 1.5)  # bounds of the nominal s_z
SWAY_LEAD_S = 0.5    # the weight shift before the first step starts this long before it (s)


@dataclass
class AxisSolution:
    t: np.ndarray        # (N,) grid (s)
    q: np.ndarray        # (N,) position (m)
    v: np.ndarray        # (N,) velocity (m/s)
    acc: np.ndarray      # (N,) acceleration (m/s²)
    coeffs: np.ndarray   # (m,) solved scales


def cumtrapz0(y: np.ndarray, dt: float) -> np.ndarray:
    """Cumulative trapezoid integral along axis 0, starting at 0."""
    out = np.zeros_like(y)
    out[1:] = np.cumsum(0.5 * (y[1:] + y[:-1]) * dt, axis=0)
    return out


@dataclass
class Bases:
    """m accelerations per unit coefficient (m/s²) on a uniform grid of N samples, each nonzero on
    one window only (a footstep's stance): column j holds ``values[j, :length[j]]`` at grid
    indices ``start[j] …``. Integrals are taken window by window — the work grows with the
    windows' lengths, not with N·m."""

    start: np.ndarray
    length: np.ndarray
    values: np.ndarray
    N: int
    # :func:`solve_axis`'s factorised least squares per set of rows (their values aside)
    systems: dict = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.start)

    def combine(self, c: np.ndarray) -> np.ndarray:
        """(N,) Σ_j c_j·basis_j (summed in the order of ``np.add.at`` over the windows, by bincount)."""
        if "combine" not in self.systems:
            cols = np.arange(self.values.shape[1])
            m = cols[None, :] < self.length[:, None]
            self.systems["combine"] = (m, (self.start[:, None] + cols[None, :])[m])
        m, idx = self.systems["combine"]
        return np.bincount(idx, weights=(self.values * np.asarray(c, float)[:, None])[m], minlength=self.N)[:self.N]

    def scaled(self, factor: float) -> Bases:
        """The same bases times ``factor``."""
        return Bases(self.start, self.length, factor * self.values, self.N)

    def windows(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo (m,), hi (m,)): each basis' integrals are 0 up to grid index lo and a straight line
        from hi (its window with the zero sample before and after it, where the grid has them)."""
        return np.maximum(self.start - 1, 0), np.minimum(self.start + self.length, self.N - 1)

    def integrals(self, j, i, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """(velocity, position) of bases ``j`` integrated from 0 (cumulative trapezoid, as
        :func:`cumtrapz0`) at grid indices ``i`` (integer arrays, broadcast together)."""
        if ("tables", dt) not in self.systems:
            m = len(self)
            a, b = self.windows()
            ext = np.zeros((m, self.values.shape[1] + 2))
            cols = np.arange(self.values.shape[1])
            inside = cols[None, :] < self.length[:, None]
            rows = np.broadcast_to(np.arange(m)[:, None], inside.shape)
            ext[rows[inside], ((self.start - a)[:, None] + cols[None, :])[inside]] = self.values[inside]
            vel = cumtrapz0(ext.T, dt).T
            pos = cumtrapz0(vel.T, dt).T
            last = b - a  # local index of the window's end
            self.systems[("tables", dt)] = (a, last, vel, pos, vel[np.arange(m), last], pos[np.arange(m), last])
        a, last, vel, pos, v_end, p_end = self.systems[("tables", dt)]
        j, i = np.broadcast_arrays(np.asarray(j, int), np.asarray(i, int))
        rel = i - a[j]
        end = last[j]
        inner = np.clip(rel, 0, end)
        after = np.maximum(rel - end, 0)
        v = np.where(rel < 0, 0.0, vel[j, inner])
        p = np.where(rel < 0, 0.0, pos[j, inner] + v_end[j] * after * dt)
        v = np.where(rel > end, v_end[j], v)
        p = np.where(rel > end, p_end[j] + v_end[j] * after * dt, p)
        return v, p


def solve_axis(t, q0, v0, bases: Bases, bias, rows, nominal, reg_weight) -> AxisSolution:
    """Least-squares shooting for one COM coordinate on the uniform grid ``t``.

    bases:   :class:`Bases`, accelerations per unit coefficient (m/s²)
    bias:    (N,) acceleration not scaled (gravity), m/s²
    rows:    list of (time, 'pos' | 'vel', value, weight)
    nominal: (m,) values the coefficients are pulled toward with ``reg_weight`` (per coefficient)
    """
    dt = float(t[1] - t[0])
    vel_0 = v0 + cumtrapz0(bias, dt)
    pos_0 = q0 + cumtrapz0(vel_0, dt)
    m = len(bases)
    reg = np.broadcast_to(np.asarray(reg_weight, float), (m,))
    times = np.array([time for time, *_ in rows], float)
    is_pos = np.array([kind == "pos" for _, kind, _, _ in rows])
    weight = np.array([w for *_, w in rows], float)
    # the system depends on the rows' times, kinds and weights only: factorised once per set of rows
    key = (times.tobytes(), is_pos.tobytes(), weight.tobytes(), reg.tobytes(), dt, len(t))
    if key not in bases.systems:
        idx = np.clip(np.searchsorted(t, times), 0, len(t) - 1)
        bases.systems[key] = (idx, ShootingSystem(lambda j, i: bases.integrals(j, i, dt), bases.windows(), idx,
                                                  is_pos, weight, reg, dt))
    idx, system = bases.systems[key]
    value = np.array([v for _, _, v, _ in rows], float)
    c = system.solve(value - np.where(is_pos, pos_0[idx], vel_0[idx]), nominal)
    acc_b = bases.combine(c)
    vel_c = cumtrapz0(acc_b, dt)
    return AxisSolution(t, pos_0 + cumtrapz0(vel_c, dt), vel_0 + vel_c, bias + acc_b, c)


@dataclass
class ComPath:
    """The COM over the whole clip, sampled on a fine grid.

    t (N,), s/y/z (N,) progression, height, lateral (m); vertical_force (N,) total F_y per body
    weight during the walk; shapes_y the footsteps' vertical force shapes F̂ (per body weight, on
    the walk's grid, which starts at sample ``offset`` of t); scale_y (n,) the solved s_y;
    walk_span (t0, t1) the first and last heel strikes (s); windows: the stance windows of the
    walk's grid (kept for re-solving the height); :attr:`force_feet` (N, n) each footstep's F_y.
    """

    t: np.ndarray
    s: np.ndarray
    y: np.ndarray
    z: np.ndarray
    vertical_force: np.ndarray
    shapes_y: Bases
    offset: int
    scale_y: np.ndarray
    walk_span: tuple
    windows: tuple
    height_axis: tuple | None = None  # (scaled shapes, nominal s_y): kept for re-solving the height

    @property
    def force_feet(self) -> np.ndarray:
        """(N, n) each footstep's vertical force per body weight (0 outside its stance)."""
        sh = self.shapes_y
        out = np.zeros((len(self.t), len(sh)))
        for j in range(len(sh)):
            a = self.offset + sh.start[j]
            out[a:a + sh.length[j], j] = sh.values[j, :sh.length[j]] * self.scale_y[j]
        return out

    def at(self, t):
        t = np.asarray(t, float)
        return np.interp(t, self.t, self.s), np.interp(t, self.t, self.y), np.interp(t, self.t, self.z)

    def passes(self, s_target: float) -> float:
        """First time the progression reaches ``s_target`` (s)."""
        return float(self.passes_many(np.array([s_target], float))[0])

    def passes_many(self, s_targets) -> np.ndarray:
        """First times (s) the progression reaches each of ``s_targets`` (m)."""
        mono = np.maximum.accumulate(self.s)
        t = self.t
        s_targets = np.asarray(s_targets, float)
        i = np.searchsorted(mono, s_targets)
        j = np.clip(i, 1, len(t) - 1)
        lo, hi = mono[j - 1], mono[j]
        with np.errstate(invalid="ignore", divide="ignore"):
            f = np.where(hi <= lo, 0.0, (s_targets - lo) / (hi - lo))
        out = t[j - 1] + f * (t[j] - t[j - 1])
        return np.where(i <= 0, t[0], np.where(i >= len(t), t[-1], out))


@dataclass
class ComTargets:
    """Where C stands and passes (m): its standing height at the start (``y_stand``) and at the end
    (``y_final``), the height wanted at the heel strike of footstep k (``y_targets`` (K,), k ≥ 2),
    and the progression where the walker stands still at the end (``s_final``)."""

    y_stand: float
    y_targets: np.ndarray
    y_final: float
    s_final: float


def solve_com(timeline, steps, params, targets: ComTargets, dt: float = 1 / 120, reuse: ComPath | None = None,
              progress: ProgressFn = no_progress, at=None) -> ComPath:
    """Solve progression, height and lateral sway of the COM for the whole walk.

    timeline:  :class:`~.timing.Timeline`; steps: :class:`~.steps.Footsteps`
    targets:   :class:`ComTargets`; dt: the COM's grid step (s)
    reuse:     an earlier solution of the same walk: its progression and sway are kept and only the
               height is solved again (they do not depend on the height targets)
    progress:  gets the fraction done (0–1)
    at:        (K − 1,) where C is in each step at its heel strike (fraction from P_i to P_{i+1});
               None: midway (the paper)
    """
    y_stand, y_targets, y_final = targets.y_stand, targets.y_targets, targets.y_final
    hs = timeline.heel_strike
    n = len(steps) - 1
    t0, t1 = hs[1], hs[n]
    N = max(int(np.ceil((t1 - t0) / dt)) + 1, 3)
    t = np.linspace(t0, t1, N)
    win = reuse.windows if reuse is not None else _stance_windows(t, timeline, n)
    start, length, sines = win  # sin kπτ of every footstep's stance window: (n, L, 3)
    # ---- vertical (eq. 6b): one s_y per footstep
    if reuse is not None and reuse.height_axis is not None:  # the same walk: the same shapes
        shapes_y, height_axis = reuse.shapes_y, reuse.height_axis
    else:
        modes = [steps.mode_v[max(k, 1)] for k in range(n)]
        per_mode = {m: fr.vertical_coeffs(params, m) for m in set(modes)}  # a few vertical modes
        coeff_y = np.stack([per_mode[m] for m in modes])  # (n, 3)
        shapes_y = Bases(start, length, np.einsum("jlk,jk->jl", sines, coeff_y), N)
        nom_mode = {m: fr.nominal_vertical_scale(c, params.double_support) for m, c in per_mode.items()}
        nom_y = np.array([nom_mode[m] for m in modes])
        height_axis = (shapes_y.scaled(G), nom_y)
    rows_y = [(hs[i], "pos", y_targets[i], W_POSITION) for i in range(2, n + 1)]
    progress(0.1)
    ys = solve_axis(t, y_stand, 0.0, height_axis[0], np.full(N, -G), rows_y, height_axis[1], PULL_Y)
    progress(0.4)
    if reuse is not None:  # same grid: standing before t0, the walk, settling and standing after
        pre_n = int(np.searchsorted(reuse.t, t0 - 1e-12))
        u = np.minimum((reuse.t[pre_n + N:] - t1) / timeline.settle, 1.0)
        y_after = hermite(ys.q[-1], timeline.settle * ys.v[-1], y_final, 0.0, u)
        y = np.concatenate([np.full(pre_n, y_stand), ys.q, y_after])
        vf = np.concatenate([np.ones(pre_n), ys.acc / G + 1.0, np.full(len(reuse.t) - pre_n - N, np.nan)])
        progress(1.0)
        return ComPath(reuse.t, reuse.s, y, reuse.z, vf, shapes_y, pre_n, ys.coeffs, (t0, t1), win, height_axis)
    xs = _progression(t, win, steps, timeline, params, targets.s_final, at)
    progress(0.7)
    zs, z_v0 = _sway(t, win, steps, timeline, params)
    progress(1.0)
    tt, s, y, z, vf, pre_n = _stand_and_settle(timeline, t, dt, (xs, ys, zs), z_v0, targets)
    return ComPath(tt, s, y, z, vf, shapes_y, pre_n, ys.coeffs, (t0, t1), win, height_axis)


def _stance_windows(t, timeline, n: int):
    """(start (n,), length (n,), sines (n, L, 3)): where each footstep k < n bears weight on the
    grid ``t`` (τ = (t − land)/(lift − land) within [0, 1]) and sin kπτ, k = 1, 2, 3, there."""
    land, lift = timeline.land_virtual, timeline.lift_virtual
    N = len(t)
    lo = np.clip(np.searchsorted(t, land[:n], "left") - 1, 0, N)
    hi = np.clip(np.searchsorted(t, lift[:n], "right") + 1, 0, N)
    # every footstep's samples lo … hi − 1 in a row of a padded grid; τ rises along a row, so the
    # samples inside the stance are a run
    idx = lo[:, None] + np.arange(int(np.max(hi - lo, initial=0)))[None, :]
    valid = idx < hi[:, None]
    tau = (t[np.minimum(idx, N - 1)] - land[:n, None]) / (lift[:n] - land[:n])[:, None]
    inside = valid & (tau >= 0.0) & (tau <= 1.0)
    length = np.count_nonzero(inside, axis=1)
    first = np.where(length > 0, np.argmax(inside, axis=1), 0) if inside.shape[1] else np.zeros(n, int)
    start = lo + first
    tau_all = np.zeros((n, int(length.max(initial=1))))
    col = np.arange(tau_all.shape[1])[None, :]
    keep = col < length[:, None]
    tau_all[keep] = tau[np.nonzero(keep)[0], (first[:, None] + col)[keep]]
    sines = np.sin(np.pi * tau_all[..., None] * fr.K)
    sines[np.arange(tau_all.shape[1])[None, :] >= length[:, None]] = 0.0
    return start, length, sines


def _progression(t, win, steps, timeline, params, s_final: float, at=None) -> AxisSolution:
    """Progression (eq. 6a): s_x (shape a_x) and the first harmonic (RECON) per footstep, so C passes
    midway in every step at its heel strike (Figure 8; or ``at`` of the way, (K − 1,)) and stops at
    ``s_final``."""
    hs = timeline.heel_strike
    n = len(steps) - 1
    start, length, sines = win
    ax = fr.progression_coeffs(params)
    shapes_x = Bases(np.concatenate([start, start]), np.concatenate([length, length]),
                     G * np.concatenate([sines @ ax, sines[..., 0]]), len(t))
    nom_x = np.concatenate([np.ones(n), np.full(n, ax[0])])
    mid = heel_strike_progression(steps, at)  # where C is in the step at heel strike
    # end of walk: the COM still has a little way to go, done by the settling cubic
    end_gap = min(END_GAP * steps.w[n - 2], 0.5 * (s_final - mid[n - 2])) if n >= 3 else 0.0
    rows_x = [(hs[i], "pos", mid[i - 1], W_POSITION) for i in range(2, n)]
    rows_x.append((hs[n], "pos", s_final - end_gap, W_POSITION))
    # the settling cubic from that speed covers end_gap in the settling time: v = 1.5·gap/settle
    rows_x.append((hs[n], "vel", 1.5 * end_gap / timeline.settle, W_VELOCITY))
    return solve_axis(t, 0.0, 0.0, shapes_x, np.zeros(len(t)), rows_x, nom_x,
                      np.concatenate([np.full(n, PULL_X), np.full(n, PULL_X1)]))


def heel_strike_progression(steps, at=None) -> np.ndarray:
    """(K − 1,) progression of C (m) at the heel strike that ends step P_i → P_{i+1}: the paper's
    hip midway in the step (Figure 8), or ``at`` (K − 1,) of the way from P_i."""
    f = 0.5 if at is None else np.asarray(at, float)
    return steps.s[:-1] + f * (steps.s[1:] - steps.s[:-1])


def _sway(t, win, steps, timeline, params) -> tuple[AxisSolution, float]:
    """Lateral sway (eq. 6c): s_z per footstep, the force toward the inside of the stance foot, C
    back on the path at every heel strike; and the sway's starting velocity (m/s)."""
    hs = timeline.heel_strike
    n = len(steps) - 1
    start, length, sines = win
    shapes_z = Bases(start, length, G * ((sines @ fr.lateral_coeffs(params)) * -steps.side[:n][:, None]), len(t))
    rows_z = [(hs[i], "pos", 0.0, W_SWAY) for i in range(2, n + 1)]
    # nominal s_z: the paper's force at 100 steps/min; at other step times the sway would grow
    # with T², so the nominal scale shrinks with (T_100 / T)² to keep a normal walk's sway
    nom_z = np.clip((T_100 / timeline.T[np.maximum(np.arange(n), 1)]) ** 2, *SWAY_SCALE)
    zs = solve_axis(t, 0.0, 0.0, shapes_z, np.zeros(len(t)), rows_z, nom_z, PULL_Z)
    # the walker shifts its weight before the first step: start the sway with the velocity it has
    # at the next heel strike of the same foot (a steady step), reached from standing by a cubic
    z_v0 = 0.0
    if n >= 5:
        # half of it: the first step is a short one (the COM travels half a step)
        z_v0 = 0.5 * float(np.interp(hs[3], t, zs.v))
        zs = solve_axis(t, 0.0, z_v0, shapes_z, np.zeros(len(t)), rows_z, nom_z, PULL_Z)
    return zs, z_v0


def _stand_and_settle(timeline, t, dt, axes, z_v0, targets: ComTargets):
    """The whole clip's (times, s, y, z, vertical force per body weight, samples before the walk's
    grid): standing before the first heel strike (the sway starting by a cubic over the last
    :data:`SWAY_LEAD_S`), the walk (``axes``: its solved progression, height and sway), settling
    after the last heel strike, standing."""
    xs, ys, zs = axes
    t0, t1 = t[0], t[-1]
    settle = timeline.settle
    t_end = t1 + settle
    pre = np.arange(timeline.t_begin, t0, dt)
    post = np.linspace(t1, t_end, max(int(np.ceil(settle / dt)) + 1, 3))[1:]
    tail = np.arange(t_end + dt, timeline.t_end + dt, dt)
    u = (post - t1) / settle
    s_post = hermite(xs.q[-1], settle * xs.v[-1], targets.s_final, 0.0, u)
    y_post = hermite(ys.q[-1], settle * ys.v[-1], targets.y_final, 0.0, u)
    z_post = hermite(zs.q[-1], settle * zs.v[-1], 0.0, 0.0, u)
    tt = np.concatenate([pre, t, post, tail])
    s = np.concatenate([np.zeros(len(pre)), xs.q, s_post, np.full(len(tail), targets.s_final)])
    y = np.concatenate([np.full(len(pre), targets.y_stand), ys.q, y_post, np.full(len(tail), targets.y_final)])
    lead = min(SWAY_LEAD_S, t0 - timeline.t_begin)
    u_pre = np.clip((pre - (t0 - lead)) / max(lead, 1e-9), 0.0, 1.0)
    z_pre = hermite(0.0, 0.0, 0.0, lead * z_v0, u_pre) if lead > 0 else np.zeros(len(pre))
    z = np.concatenate([z_pre, zs.q, z_post, np.zeros(len(tail))])
    vf = np.concatenate([np.ones(len(pre)), ys.acc / G + 1.0, np.full(len(post) + len(tail), np.nan)])
    return tt, s, y, z, vf, len(pre)
