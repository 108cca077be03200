"""The COM and the feet solved together: the pelvis where measured gait puts the stance knee.

Tsutsuguchi et al. (2000), Figure 8: at each heel strike the hip lies midway in the step; the
boundary heights of C are not given, and "the dynamic calculation precedes the kinematic
calculation which corrects or exaggerates the motion". ProcAnim places C in the step at heel strike
(:func:`heel_strike_fractions`), takes the heel-strike heights at which the landing leg has measured
gait's knee at initial contact (the trailing leg, heel rising, reaching too), corrects C
kinematically toward the stance knee of measured gait (:func:`_knee_keys`, :func:`knee_fit`,
``PathWalkParams.norms``) — where it does, C's own boundary heights follow the pelvis' mean height,
so the correction averages zero over each step —, rolls each foot as far as the trailing leg's knee
in pre-swing needs (:func:`_roll_angles`), then checks every weight-bearing leg over the whole walk:
where the pelvis is out of reach between two heel strikes of a step the keys do not set (the start,
the stop, stairs), that step's boundaries are lowered and the COM is solved again (a few passes; the
progression and the sway are solved once, they do not depend on the heights).

The knee keys are for footsteps of steady level walking (:meth:`~.steps.Footsteps.steady_level`);
on stairs and between levels the pelvis keeps a margin under the legs' reach at heel strike and the
stance knee is nearly straight when C passes over the ankle (ProcAnim's rules, tuned for
flicker-free stairs).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from ..curves import gaussian_smooth
from ..progress import ProgressFn, no_progress, part
from .body import pelvis_rotation
from .character import SIDES
from .com import ComTargets, solve_com
from .feet import Footing, FootModel
from .reach import LIFT_KNEE_M, SWING_END_SHORTEN, PelvisHeight

# ProcAnim's choices (the paper leaves the boundary heights of C open):
STAND_BELOW_M = 0.005  # the standing pelvis sits this far under the legs' reach
HEEL_STRIKE_GUESS = 0.94  # × standing height: the first pass's heel-strike heights (then from the knee)
LOWER_SHARE = 0.75  # share of a step's mid-stance overreach taken off its boundary heights per pass
REACH_TOL_M = 0.002  # passes stop once no weight-bearing leg is overreached by more than this …
ROLL_TOL = np.radians(0.5)  # … and the feet's roll (rad; toe-off times in s) has settled to this
MAX_PASSES = 5
STEADY_SKIP = (2, 1)  # the knee keys leave out this many footsteps at the start and at the stop
CHECK_HZ = 60.0  # the mid-stance check samples the walk at least this often (per second)
# Steady level walking: the stance knee of measured gait (p.norms) as keys of C's correction
PROFILE_EVERY = 0.025  # keys this part of the gait cycle apart, heel strike to the other heel strike
MIDSTANCE_AT, TERMINAL_AT = 0.3, 0.4  # parts of the gait cycle where the knee has its mid-/terminal-stance value
KNOT_S = 0.04  # the correction is a cubic B-spline with knots this far apart (s) …
BEND_MPS2 = 1.5  # … whose bending (m/s²) is traded against the keys' misses (SIGMA_M): no jolt at heel strike
TRANSITION = 0.06  # keys this close (part of the gait cycle) to a heel strike are met loosely
SIGMA_M = {"contact": 0.008, "transition": 0.012, "stance": 0.003, "stairs": 0.001}  # how closely keys are met (m)
TRAVEL_SPEEDS = (0.7, 1.6)  # m/s: the speeds Orendurff et al. (2004) measured (the travel is not extrapolated)
HS_AT_RANGE = (0.4, 0.75)  # the derived position of C at heel strike stays within this part of the step (RECON)
ROLL_RANGE_DEG = (2.0, 70.0)  # foot pitches searched for the roll the legs need (at most 70°) …
ROLL_BISECT_DEG = 0.1  # … to this
ROLL_ROUNDS = 3  # the bisection's steps taken in this many rounds, the pitches of a round tried at once
TOE_OFF_EARLIEST = 0.4  # part of the double support: the earliest a foot leaves the ground (RECON)
ROLL_RATE_MAX_DPS = 500.0  # a foot rolls over its toes no faster than this (°/s): its heel rises further first
# Stairs and steps between levels (ProcAnim's rules):
HEEL_STRIKE_MARGIN_M = 0.001  # heel-strike heights kept this far under the reach of both legs
CONTACT_MARGIN_M = 0.02  # reach a landing leg keeps in hand: clear of reach.lift_into_reach's ramp
STAIRS_KNEE_DEG = (5.0, 6.0)  # the stance knee at heel strike and when C passes over the ankle
LOADING_DIP_M = 0.01  # C dips this far below its heel-strike height in loading response (the force model)


@dataclass
class _Walk:
    """What every height rule needs: the character, path, footsteps, timeline, settings, Ψ(t), the
    legs' reach (:class:`~.reach.PelvisHeight`), the footsteps of steady level walking (K,) and
    those on level ground (the start and the stop too, K,)."""

    char: object
    path: object
    steps: object
    tl: object
    p: object
    psi: object
    limit: PelvisHeight
    level: np.ndarray
    level_ground: np.ndarray
    # the passes ask again and again at the same times: what does not change between them is kept
    _rot: dict = dataclasses.field(default_factory=dict)
    _xy: dict = dataclasses.field(default_factory=dict)
    _xy_of: tuple = ()
    fits: dict = dataclasses.field(default_factory=dict)  # :func:`knee_fit`'s factors and bases

    def rotation(self, t):
        """(N, 3, 3) the pelvis' rotation at times ``t`` (s): yaw Ψ, pelvic rotation, list (kept
        per times: it does not depend on C; read only)."""
        t = np.asarray(t, float)
        key = t.tobytes()
        rot = self._rot.get(key)
        if rot is None:
            rot = self._rot[key] = pelvis_rotation(self.char, self.steps, self.tl, self.p, self.psi(t), t)[0]
        return rot

    def pelvis(self, com, t):
        """(pelvis xy (N, 2), pelvis rotation (N, 3, 3)) at times ``t`` (s) over C (kept per times
        while C's progression and sway are the same arrays: the passes re-solve its height only)."""
        t = np.asarray(t, float)
        if len(self._xy_of) != 2 or self._xy_of[0] is not com.s or self._xy_of[1] is not com.z:
            self._xy, self._xy_of = {}, (com.s, com.z)
        key = t.tobytes()
        xy = self._xy.get(key)
        if xy is None:
            s_c, z_c = np.interp(t, com.t, com.s), np.interp(t, com.t, com.z)
            xy = self._xy[key] = (self.path.at(s_c) + self.path.left_at(s_c) * z_c[:, None])[:, :2]
        return xy, self.rotation(t)

    def travel(self, k) -> np.ndarray:
        """(len(k),) measured gait's vertical travel of the COM (m) at the speed of step k, the speed
        kept within the measured range :data:`TRAVEL_SPEEDS` (no extrapolation)."""
        a, b, v0 = self.p.norms.com_travel
        return a + b * (np.clip(self.steps.w[k] / self.tl.T[k], *TRAVEL_SPEEDS) - v0)


def standing_height(char, knee_reach: float) -> float:
    """Pelvis height above the sole when standing (m): the rest height, or lower if the legs at
    ``knee_reach`` cannot reach the ground from it."""
    hip_drop = float(char.pelvis_rest[2] - np.mean([char.hip_joint_rest[s][2] for s in SIDES]))
    return min(char.pelvis_rest[2] - char.rest_ground_z,
               min(char.feet[s].ankle_height + knee_reach * char.ankle_reach(s) for s in SIDES) + hip_drop)


def solve_support(char, path, ground, steps, tl, p, psi, progress: ProgressFn = no_progress, style=None):
    """(com, {side: FootModel}) of the walk, passes as in the module docstring.

    psi: Ψ(t) (rad), the body yaw; ``progress`` gets the fraction of the passes done; ``style``
    (:class:`~.style.StyleEffects`): its bounce and sitting height are put on C's height last.
    """
    n = len(steps) - 1
    walk = _Walk(char, path, steps, tl, p, psi, PelvisHeight(char, p.knee_reach), steps.steady_level(STEADY_SKIP),
                 steps.steady_level((0, 0)))
    stand_h = standing_height(char, p.knee_reach)
    y_stand = float(np.mean(steps.pos[:2, 2])) + stand_h - STAND_BELOW_M
    y_final = float(np.mean(steps.pos[-2:, 2])) + stand_h - STAND_BELOW_M
    y_targets = np.zeros(n + 1)
    for i in range(2, n + 1):
        y_targets[i] = 0.5 * (steps.pos[i - 1, 2] + steps.pos[i, 2]) + HEEL_STRIKE_GUESS * stand_h
    footing = Footing(char, steps, p, ground, path)
    feet = {s: FootModel(footing, s, tl, None) for s in SIDES}
    at = heel_strike_fractions(walk, feet)
    extra = np.zeros(n + 1)
    com = keys = roll = None
    settled = False
    for it in range(MAX_PASSES):
        # the first pass costs most (progression, sway, clearances): halves of what is left
        step = part(progress, 1.0 - 0.5 ** it, 1.0 - 0.5 ** (it + 1))
        com = solve_com(tl, steps, p, ComTargets(y_stand, y_targets - extra, y_final, path.length), reuse=com,
                        progress=part(step, 0.0, 0.3), at=at)
        off = np.zeros(len(com.t)) if keys is None else knee_offset(com, tl, keys, com.t, walk.fits)
        com.y += off
        # a swing's clearance is solved once, unless the roll it starts from has changed
        cache = {s: feet[s].clearance if settled else None for s in SIDES}
        tl_feet = tl if roll is None else dataclasses.replace(tl, lift=np.where(np.isnan(roll[2]), tl.lift, roll[2]))
        feet = {s: FootModel(footing, s, tl_feet, com, cache[s], roll, like=feet[s]) for s in SIDES}
        if it == MAX_PASSES - 1:  # what follows would only feed another pass
            break
        landing, trailing = _heel_strike_heights(walk, com, feet)
        contact = np.minimum(landing, trailing)
        # C's boundary heights: the legs' where no keys correct C; where keys do, C rides at the
        # pelvis' mean height (the correction averages 0 over the step around each heel strike)
        y_targets = contact if keys is None else np.where(walk.level, y_targets + _mean_near(com.t, off, tl), contact)
        keys = _knee_keys(walk, com, feet, contact)
        new_roll = _roll_angles(walk, com, feet, landing, keys)
        settled = roll is not None and all(
            float(np.nanmax(np.abs(a - b), initial=0.0)) < ROLL_TOL for a, b in zip(new_roll, roll))
        roll = new_roll
        step(0.6)
        # the first pass only guessed the heights (and the feet's roll): its overreach says little
        if it >= 1 and _lower_for_midstance(walk, com, feet, extra) < REACH_TOL_M and settled:
            break
        step(1.0)
    if style is not None:
        _bounce(com, tl, style.bounce, style.sit_legs * char.leg_length)
    progress(1.0)
    return com, feet


def _mean_near(t, values, tl) -> np.ndarray:
    """(K,) the mean of ``values`` (on times ``t``, increasing) within half a step of each heel strike."""
    hs, half = tl.heel_strike, 0.5 * tl.T
    out = np.zeros(len(hs))
    i = np.arange(2, len(hs))
    if not len(i) or not len(t):
        return out
    # each heel strike's samples |t − hs| < T/2 are a run [a, b) of t; searchsorted finds it up to the
    # rounding of hs ± T/2, a sample either side is checked with the comparison itself
    near = lambda j: (j >= 0) & (j < len(t)) & (np.abs(t[np.clip(j, 0, len(t) - 1)] - hs[i]) < half[i])  # noqa: E731
    a = np.searchsorted(t, hs[i] - half[i], "right")
    a = np.where(near(a - 1), a - 1, np.where(near(a), a, a + 1))
    b = np.searchsorted(t, hs[i] + half[i], "left")
    b = np.where(near(b), b + 1, np.where(near(b - 1), b, b - 1))
    some = b > a
    a, b = np.clip(a, 0, len(t)), np.clip(b, 0, len(t))
    sums = np.add.reduceat(np.append(values, 0.0), np.stack([a, b], axis=-1).ravel())[::2]
    out[i[some]] = sums[some] / (b - a)[some]
    return out


def _bounce(com, tl, bounce: float, sit: float) -> None:
    """Scale C's vertical travel about its running mean (a Gaussian over a step) by ``bounce`` and
    lower it by ``sit`` m, both faded in over the first step and out over the last (in place);
    the legs' reach is kept by the final clamp (body.py)."""
    if bounce == 1.0 and sit == 0.0:
        return
    n = len(tl.heel_strike) - 1
    t0, t1 = tl.heel_strike[1], tl.heel_strike[n]
    dt = float(com.t[1] - com.t[0])
    mean = gaussian_smooth(com.y[:, None], 0.5 * float(np.median(tl.T)) / dt)[:, 0]
    fade = np.clip((com.t - t0) / tl.T[1], 0, 1) * np.clip((t1 + tl.settle - com.t) / tl.settle, 0, 1)
    fade = fade * fade * (3 - 2 * fade)
    com.y += fade * ((bounce - 1.0) * (com.y - mean) - sit)


def _heel_strike_heights(walk: _Walk, com, feet):
    """((K,), (K,)) pelvis heights at the heel strike of footstep i (i ≥ 2), m: where the landing leg
    has its knee at ``norms.knee_contact_deg`` (on level ground) or keeps a margin under its reach
    (stairs), and the highest the trailing leg (heel rising) reaches."""
    n = len(walk.steps) - 1
    i = np.arange(2, n + 1)
    t = walk.tl.heel_strike[i]
    level = walk.level_ground[i]
    landing, trailing = np.zeros(n + 1), np.zeros(n + 1)
    landing[i[level]] = _leg_heights(walk, com, feet, i[level], t[level], walk.p.norms.knee_contact_deg)
    other = i[~level]
    landing[other] = _leg_heights(walk, com, feet, other, t[~level], None,
                                  SWING_END_SHORTEN * LIFT_KNEE_M) - HEEL_STRIKE_MARGIN_M
    trailing[2:] = _leg_heights(walk, com, feet, i - 1, t, None)
    trailing[other] -= HEEL_STRIKE_MARGIN_M
    return landing, trailing


def heel_strike_fractions(walk: _Walk, feet) -> np.ndarray:
    """(K − 1,) where C is in each step at its heel strike (fraction from P_i to P_{i+1}).

    ``norms.com_at_heel_strike`` when set (the paper: 0.5, Figure 8). Else (RECON, onto footsteps of
    steady level walking) the landing leg has its knee at ``knee_contact_deg`` with the pelvis
    ``com_travel`` (measured gait's vertical travel at the step's speed) under the height it has at
    mid-stance, the leg at ``knee_midstance_deg`` over its flat foot; within :data:`HS_AT_RANGE`.
    Elsewhere midway."""
    steps, tl, nm = walk.steps, walk.tl, walk.p.norms
    n = len(steps) - 1
    at = np.full(n, 0.5)
    i = np.arange(2, n + 1)  # landing footsteps; heel strike i ends the step P_{i−1} → P_i
    i = i[walk.level_ground[i]]
    if nm.com_at_heel_strike > 0 or len(i) == 0:
        at[i - 1] = nm.com_at_heel_strike if nm.com_at_heel_strike > 0 else 0.5
        return at
    hs, T = tl.heel_strike, tl.T
    t_mid = hs[i] + 0.5 * T[i]
    h_mid = _heights_at(walk, i, walk.path.at(steps.s[i])[:, :2], walk.rotation(t_mid),
                        _ankles(feet, steps, i, "flat"), nm.knee_midstance_deg)
    h_hs = h_mid - walk.travel(i - 1)
    grid = np.linspace(0.3, 0.9, 61)
    G = len(grid)
    rot = np.tile(walk.rotation(hs[i]), (G, 1, 1))
    landing = np.tile(_ankles(feet, steps, i, "landing"), (G, 1))
    s_try = (steps.s[i - 1][None, :] + grid[:, None] * (steps.s[i] - steps.s[i - 1])[None, :]).ravel()
    z = _heights_at(walk, np.tile(i, G), walk.path.at(s_try)[:, :2], rot, landing,
                    nm.knee_contact_deg).reshape(G, len(i)).T  # rises along the grid
    z = np.maximum.accumulate(z, axis=-1)
    at[i - 1] = np.clip([np.interp(h, zz, grid) for h, zz in zip(h_hs, z)], *HS_AT_RANGE)
    return at


def _ankles(feet, steps, k, pose: str) -> np.ndarray:
    """(len(k), 3) ankles of footsteps ``k`` flat on the ground (``flat``) or at heel strike (``landing``)."""
    both = feet["L"].both(feet["R"])
    return both.ankle_flat[k] if pose == "flat" else both.landing_ankle(k)


def knee_offset(com, tl, keys: tuple, t, cache: dict | None = None) -> np.ndarray:
    """C's height correction (m) at times ``t`` through ``keys`` (:func:`knee_fit`)."""
    return knee_fit(com, tl, keys, cache)(t)


def knee_fit(com, tl, keys: tuple, cache: dict | None = None):
    """C's height correction as a function of time (s → m): the smoothest offset (a uniform cubic
    B-spline, knots :data:`KNOT_S` apart, its bending Σ (o″/:data:`BEND_MPS2`)² traded against the
    keys' misses Σ ((o(tᵢ) − oᵢ)/σᵢ)²) through ``keys`` (times (n,) s, wanted heights (n,) m or NaN
    for C's own, σ (n,) m) — oᵢ the wanted height less C's — from and back to 0 over a step before the first key and
    after the last. Tsutsuguchi et al. (2000): "the dynamic calculation precedes the kinematic
    calculation which corrects or exaggerates the motion" — the reaction-force model keeps its
    shape, the correction brings the stance knee to measured gait's without jolting the pelvis.

    ``cache``: a dict kept between calls (the support solve's passes): the normal matrix depends
    on the keys' times and σ only, so it is factorised once for them, and the basis at query times
    asked for before is reused."""
    if not len(keys[0]):
        return lambda t: np.zeros(len(np.asarray(t, float)))
    order = np.argsort(keys[0], kind="stable")
    kt, wanted, sigma = (np.asarray(x, float)[order] for x in keys)
    off = np.where(np.isnan(wanted), 0.0, wanted - np.interp(kt, com.t, com.y))  # NaN: C's own height
    step = float(np.median(tl.T))
    cache = {} if cache is None else cache
    key = ("fit", kt.tobytes(), sigma.tobytes(), step)
    if key not in cache:
        cache[key] = _knee_system(kt, sigma, step)
    t0, t1, origin, idx, WB, rows_w, solver = cache[key]
    rows_v = np.concatenate([off, np.zeros(len(rows_w) - len(off))])
    rhs = np.bincount(idx.ravel(), weights=(WB * (rows_w * rows_v)[:, None]).ravel(), minlength=solver.M)
    c = solver.solve(rhs[:solver.M])

    def offset(t):
        t = np.asarray(t, float)
        at = ("basis", t.tobytes(), t0, t1, origin)
        if at not in cache:
            inside = (t > t0) & (t < t1)
            cache[at] = (inside, *_bspline_basis(t[inside], origin))
        inside, j, b = cache[at]
        out = np.zeros(len(t))
        out[inside] = np.sum(c[j] * b, axis=1)
        return out

    return offset


def _knee_system(kt, sigma, step: float):
    """(t0, t1, origin, basis columns, weighted basis rows, row weights, banded Cholesky factor) of
    :func:`knee_fit`'s normal equations for keys at times ``kt`` met to ``sigma`` (m), a step of
    ``step`` s: the offset is 0 from ``t0`` and after ``t1``."""
    t0, t1 = kt[0] - step, kt[-1] + step
    origin = t0 - 1.5 * KNOT_S  # knots start early: every time in [t0, t1] has its 4 basis functions
    M = int(np.ceil((t1 - t0) / KNOT_S)) + 5
    # zero offset (and slope) at both ends: rows at the ends' knots
    ends = np.concatenate([t0 + KNOT_S * np.arange(3), t1 - KNOT_S * np.arange(3)])
    rows_t = np.concatenate([kt, ends])
    rows_w = np.concatenate([1.0 / sigma, np.full(len(ends), 1.0 / min(sigma.min(), 1e-3))])
    idx, B = _bspline_basis(rows_t, origin)
    WB = B * rows_w[:, None]
    band = np.zeros((M, 4))  # band[i, d]: the normal matrix at (i, i + d)
    for a in range(4):
        for d in range(4 - a):
            band[:, d] += np.bincount(idx[:, a], weights=WB[:, a] * WB[:, a + d], minlength=M)[:M]
    s2 = (np.sqrt(KNOT_S) / (KNOT_S * KNOT_S * BEND_MPS2)) ** 2  # Σ (second differences / h²)² · h
    for shift, d, v in ((0, 0, 1.0), (1, 0, 4.0), (2, 0, 1.0), (0, 1, -2.0), (1, 1, -2.0), (0, 2, 1.0)):
        band[shift:M - 2 + shift, d] += v * s2
    return t0, t1, origin, idx, WB, rows_w, BandedSolver(band)


def _bspline_basis(t, origin: float):
    """(columns (N, 4), weights (N, 4)) of the uniform cubic B-spline (knots :data:`KNOT_S` apart
    from ``origin``) at times ``t`` (N,)."""
    u = (np.asarray(t, float) - origin) / KNOT_S
    j = np.floor(u).astype(int)
    f = u - j
    cols = j[:, None] - 1 + np.arange(4)[None, :]
    w = np.stack([(1 - f) ** 3, 3 * f ** 3 - 6 * f ** 2 + 4, -3 * f ** 3 + 3 * f ** 2 + 3 * f + 1, f ** 3], axis=-1)
    return cols, w / 6.0


def solve_banded_spd(band: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """x of N x = rhs for a symmetric positive-definite band matrix N given as ``band`` (M, 4),
    band[i, d] = N[i, i + d] (a banded Cholesky factorisation, O(M); :class:`BandedSolver`)."""
    return BandedSolver(band).solve(rhs)


def banded_cholesky(band: np.ndarray) -> tuple:
    """The Cholesky factor L (N = L Lᵀ) of the band matrix ``band`` (M, 4) (as :func:`solve_banded_spd`)
    as four lists (L(i, i), L(i, i − 1), L(i, i − 2), L(i, i − 3)), i = 0 … M − 1 (scalar loop over rows)."""
    M = len(band)
    A0, A1, A2, A3 = (band[:, d].tolist() for d in range(4))
    l0, l1, l2, l3 = [0.0] * M, [0.0] * M, [0.0] * M, [0.0] * M
    for i in range(M):
        a3 = a2 = a1 = 0.0
        if i >= 3:
            a3 = l3[i] = A3[i - 3] / l0[i - 3]
        if i >= 2:
            a2 = l2[i] = (A2[i - 2] - (a3 * l1[i - 2] if i >= 3 else 0.0)) / l0[i - 2]
        if i >= 1:
            s = A1[i - 1]
            if i >= 2:
                s -= a2 * l1[i - 1]
            if i >= 3:
                s -= a3 * l2[i - 1]
            a1 = l1[i] = s / l0[i - 1]
        l0[i] = (A0[i] - a1 * a1 - a2 * a2 - a3 * a3) ** 0.5
    return l0, l1, l2, l3


class BandedSolver:
    """Solves N x = rhs for one symmetric positive-definite band matrix N (``band`` (M, 4),
    band[i, d] = N[i, i + d]) and many right-hand sides: N = L Lᵀ (:func:`banded_cholesky`), then
    L cut into diagonal blocks of :data:`BLOCK` rows, each inverted once, so that a solve is two
    batched products over the blocks and a carry of three values from block to block (forward,
    then back)."""

    BLOCK = 64

    def __init__(self, band: np.ndarray):
        self.M = M = len(band)
        b = self.BLOCK
        nb = max(-(-M // b), 1)
        diag = np.zeros((4, nb * b))
        diag[0] = 1.0  # padding rows: the identity, coupled to nothing
        diag[:, :M] = banded_cholesky(band)
        lower = diag.reshape(4, nb, b)  # lower[d, J, r]: L at row r of block J, d columns left of it
        # the blocks' inverses P, row by row (all blocks at once): P_r = (e_r − Σ_d L(r, r−d) P_{r−d}) / L(r, r)
        # (rows kept in a list and L's coefficients split per row beforehand: fewer numpy calls)
        coef = [list(c) for c in np.moveaxis(lower[..., None], 2, 1)]  # coef[d][r]: (nb, 1)
        rows = []
        for r in range(b):
            row = np.zeros((nb, b))
            row[:, r] = 1.0
            for d in range(1, min(r, 3) + 1):
                row -= coef[d][r] * rows[r - d]
            row /= coef[0][r]
            rows.append(row)
        P = np.stack(rows, axis=1)
        C = np.zeros((nb, 3, 3))  # C[J]: L's rows 0–2 of block J, columns b−3 … b−1 of block J − 1
        for r in range(3):
            for d in range(r + 1, 4):
                C[1:, r, r - d + 3] = lower[d, 1:, r]
        self.P = P
        self.E = P[:, :, :3] @ C  # forward: y_J = P_J r_J − E_J y_{J−1}[−3:]
        F = np.zeros((nb, b, 3))  # back: x_J = P_Jᵀ y_J − F_J x_{J+1}[:3]
        F[:-1] = np.swapaxes(P[:-1, b - 3:, :], 1, 2) @ np.swapaxes(C[1:], 1, 2)
        self.F = F

    def solve(self, rhs) -> np.ndarray:
        """x (M,) of N x = ``rhs`` (M,)."""
        nb, b = self.P.shape[:2]
        r = np.zeros(nb * b)
        r[:self.M] = rhs
        z = np.einsum("jab,jb->ja", self.P, r.reshape(nb, b))
        carry = np.zeros(3)
        for J in range(nb):
            z[J] -= self.E[J] @ carry
            carry = z[J, -3:]
        x = np.einsum("jba,jb->ja", self.P, z)
        carry = np.zeros(3)
        for J in range(nb - 1, -1, -1):
            x[J] -= self.F[J] @ carry
            carry = x[J, :3]
        return x.ravel()[:self.M]


def _knee_keys(walk: _Walk, com, feet, contact: np.ndarray):
    """(times (n,), pelvis heights (n,), NaN for C's own, σ (n,) m) at which the stance knee has
    measured gait's angles, for :func:`knee_offset`.

    Footsteps of steady level walking (``p.norms``; Perry and Burnfield 2010, ch. 4): the heel
    strike's height ``contact`` (K,), then every :data:`PROFILE_EVERY` of the gait cycle the height
    at which the stance knee follows :func:`knee_profile` (no higher than ``com_travel`` above the
    heel strike), loosely near the heel strikes (:data:`TRANSITION`). Other steady footsteps
    (stairs): the landing leg :data:`CONTACT_MARGIN_M` under its reach at heel strike, the stance
    knee at :data:`STAIRS_KNEE_DEG` when C passes over the ankle. The heel strikes just before and
    after: C's own height."""
    parts = _level_keys(walk, com, feet, contact) + _stairs_keys(walk, com, feet)
    kt = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)
    if len(kt):
        # the heel strikes just before and after the corrected steps keep C's own height (no correction)
        hs = walk.tl.heel_strike
        ends = np.concatenate([hs[hs < kt.min() - 1e-6][-1:], hs[hs > kt.max() + 1e-6][:1]])
        parts.append((ends, np.full(len(ends), np.nan), np.full(len(ends), SIGMA_M["stairs"])))
    return tuple(np.concatenate([p[j] for p in parts]) if parts else np.zeros(0) for j in range(3))


def _level_keys(walk: _Walk, com, feet, contact: np.ndarray) -> list:
    tl, nm = walk.tl, walk.p.norms
    hs = tl.heel_strike
    k = np.flatnonzero(walk.level)
    if len(k) == 0:
        return []
    phase, knee = knee_profile(nm)
    cap = contact[k] + walk.travel(k)
    phase, knee = phase[1:-1], knee[1:-1]  # the other heel strike is the next footstep's contact key
    P = len(phase)
    t = (hs[k][:, None] + phase[None, :] / 0.5 * (hs[k + 1] - hs[k])[:, None]).ravel()
    z = np.minimum(_leg_heights(walk, com, feet, np.repeat(k, P), t, np.tile(knee, len(k))), np.repeat(cap, P))
    sg = np.tile(np.where(np.minimum(phase, 0.5 - phase) < TRANSITION, SIGMA_M["transition"], SIGMA_M["stance"]),
                 len(k))
    return [(hs[k], contact[k], np.full(len(k), SIGMA_M["contact"])), (t, z, sg)]


def knee_profile(nm, every: float = PROFILE_EVERY):
    """(phase (P,), knee flexion (P,) degrees): measured gait's stance knee from heel strike (0) to
    the other heel strike (0.5 of the gait cycle), piecewise linear through ``nm``'s values
    (Perry and Burnfield 2010, ch. 4), sampled every ``every`` of the cycle."""
    pts = np.array([(0.0, nm.knee_contact_deg), (nm.loading_at, nm.knee_loading_deg),
                    (MIDSTANCE_AT, nm.knee_midstance_deg), (TERMINAL_AT, nm.knee_terminal_deg),
                    (0.5, nm.knee_preswing_deg)])
    phase = np.linspace(0.0, 0.5, int(round(0.5 / every)) + 1)
    return phase, np.interp(phase, pts[:, 0], pts[:, 1])


def _stairs_keys(walk: _Walk, com, feet) -> list:
    steps, tl = walk.steps, walk.tl
    n = len(steps) - 1
    hs = tl.heel_strike
    k = np.arange(3, n - 2)
    k = k[~walk.level[k]]
    if len(k) == 0:
        return []
    contact = np.minimum(_leg_heights(walk, com, feet, k, hs[k], STAIRS_KNEE_DEG[0], CONTACT_MARGIN_M),
                         _leg_heights(walk, com, feet, k - 1, hs[k], None))
    t_mid = com.passes_many(steps.s[k])
    mid = np.minimum(_leg_heights(walk, com, feet, k, t_mid, STAIRS_KNEE_DEG[1]),
                     contact + walk.travel(k) - LOADING_DIP_M)
    return [(t, z, np.full(len(k), SIGMA_M["stairs"])) for t, z in ((hs[k], contact), (t_mid, mid))]


def _roll_angles(walk: _Walk, com, feet, landing: np.ndarray, keys: tuple):
    """(θ_ho (K,), θ_to (K,), toe-off time (K,)), rad and s, NaN where the parameters' angles and the
    timeline's toe off stay (RECON): how far each foot of level walking rolls so the trailing leg
    has measured gait's knee in pre-swing — its heel up by θ_ho at the other heel strike (the pelvis
    at the landing leg's height ``landing``) with the knee at ``norms.knee_preswing_deg``, and the
    foot over its toe tip by θ_to at toe off (the pelvis corrected through ``keys``) with the knee
    at ``norms.knee_toe_off_deg``; the least angle (:func:`_least_roll`) that does it (Figure 10
    (c), (d)). A foot that cannot roll that far by the end of double support (long brisk steps: the
    paper's T_ds = T/4 is longer than measured gait's at speed) leaves the ground when it can, at
    :data:`TOE_OFF_EARLIEST` of the double support at the earliest."""
    steps, tl, nm = walk.steps, walk.tl, walk.p.norms
    n = len(steps) - 1
    out = tuple(np.full(len(steps), np.nan) for _ in range(3))
    k = np.arange(1, n - 1)
    k = k[walk.level_ground[k + 1] & ~steps.on_stairs[k]]  # the other foot lands on level ground
    if len(k) == 0:
        return out
    th_ho, th_to, lift = out
    t_c = tl.heel_strike[k + 1]
    xy, rot = walk.pelvis(com, t_c)
    pelvis = np.concatenate([xy, landing[k + 1][:, None]], axis=-1)
    th_ho[k] = _least_roll(walk, feet, k, pelvis, rot, nm.knee_preswing_deg, None)
    # toe off: the latest candidate time at which the roll is enough
    q = np.linspace(1.0, TOE_OFF_EARLIEST, 7)
    kk = np.repeat(k, len(q))
    t_d = np.repeat(t_c, len(q)) + np.tile(q, len(k)) * np.repeat(tl.lift[k] - t_c, len(q))
    xy, rot = walk.pelvis(com, t_d)
    z_d = np.interp(t_d, com.t, com.y) + knee_offset(com, tl, keys, t_d, walk.fits)
    pelvis = np.concatenate([xy, z_d[:, None]], axis=-1)
    # the candidates in turn, each only for the footsteps whose later ones all fell short
    th = np.full((len(k), len(q)), np.inf)
    todo = np.arange(len(k))
    for j in range(len(q)):
        c = todo * len(q) + j
        th[todo, j] = _least_roll(walk, feet, kk[c], pelvis[c], rot[c], nm.knee_toe_off_deg, th_ho[kk[c]])
        todo = todo[th[todo, j] >= np.radians(ROLL_RANGE_DEG[1])]
        if not len(todo):
            break
    ok = th < np.radians(ROLL_RANGE_DEG[1])
    pick = np.where(ok.any(axis=1), np.argmax(ok, axis=1), len(q) - 1)
    th_to[k] = th[np.arange(len(k)), pick]
    lift[k] = t_d.reshape(len(k), len(q))[np.arange(len(k)), pick]
    # a roll over the toes too fast for the time left: the heel is up further at the other heel strike
    th_ho[k] = np.clip(th_to[k] - np.radians(ROLL_RATE_MAX_DPS) * (lift[k] - t_c), th_ho[k], th_to[k])
    return th_ho, th_to, lift


def _least_roll(walk: _Walk, feet, k, pelvis, rot, knee_deg: float, heel_off) -> np.ndarray:
    """(len(k),) the least foot pitch (rad, within :data:`ROLL_RANGE_DEG`, to :data:`ROLL_BISECT_DEG`) at
    which the leg of footstep k[i], pelvis at ``pelvis`` (N, 3) turned by ``rot``, reaches its ankle
    with the knee at ``knee_deg`` or more: rolled about the ball joint (``heel_off`` None) or about
    the toe tip, the toe bent by the pitch less ``heel_off`` (N,); the largest when none does. The
    hip-ankle distance falls as the foot rolls: bisection, on the grid of pitches it can visit
    (:func:`_roll_grid`), its steps taken in :data:`ROLL_ROUNDS` rounds, the pitches a round can
    visit tried together."""
    grid = _roll_grid()[0]
    bits = int(round(np.log2(len(grid) - 1)))
    if not len(k):
        return np.full(0, grid[-1])
    # both sides at once, each footstep with its own leg (hip joint, wanted length) and foot
    hip = pelvis + _hip_offsets(walk, k, rot)
    leg = (feet["L"].both(feet["R"]), k, hip, _per_side(walk, k, lambda s: _bent_length(walk.char, s, knee_deg)),
           heel_off)
    lo, hi = np.zeros(len(k), int), np.full(len(k), len(grid) - 1)  # indices into the grid
    rows = np.arange(len(k))
    done = None
    left = bits
    for b in (bits // ROLL_ROUNDS + (r < bits % ROLL_ROUNDS) for r in range(ROLL_ROUNDS)):
        gap = 1 << (left - b)  # the pitches this round's steps can visit: lo, lo + gap, …, hi
        first = lo.copy()
        ok = _bent_enough(leg, first[:, None] + gap * np.arange((1 << b) + 1)[None, :])
        if done is None:
            done = ok[:, 0]
        for _ in range(b):
            mid = (lo + hi) >> 1
            hit = ok[rows, (mid - first) // gap]
            hi, lo = np.where(hit, mid, hi), np.where(hit, lo, mid)
        left -= b
    # hi is a pitch found enough, or the largest (taken when none is)
    return np.where(done, grid[0], grid[hi])


def _per_side(walk: _Walk, k, value) -> np.ndarray:
    """(len(k),) ``value(side)`` (a number) of the side of each footstep k."""
    return np.where(walk.steps.side[k] == 1, value("L"), value("R"))


def _hip_offsets(walk: _Walk, k, rot) -> np.ndarray:
    """(len(k), 3) hip joint − pelvis of footstep k's leg, the pelvis turned by ``rot`` (N, 3, 3)."""
    char = walk.char
    rest = np.where((walk.steps.side[k] == 1)[:, None], char.hip_joint_rest["L"] - char.pelvis_rest,
                    char.hip_joint_rest["R"] - char.pelvis_rest)
    return np.einsum("nij,nj->ni", rot, rest)


@functools.cache
def _roll_grid() -> tuple:
    """(pitches, their sines, their cosines) (rad): the pitches bisection over :data:`ROLL_RANGE_DEG` to
    :data:`ROLL_BISECT_DEG` can visit — the range's ends with midpoints put between neighbours as many
    times as it halves (the same floats the halving computes)."""
    lo_deg, hi_deg = ROLL_RANGE_DEG
    g = np.radians([lo_deg, hi_deg])
    for _ in range(int(np.ceil(np.log2((hi_deg - lo_deg) / ROLL_BISECT_DEG)))):
        out = np.empty(2 * len(g) - 1)
        out[0::2], out[1::2] = g, 0.5 * (g[:-1] + g[1:])
        g = out
    grid = (g, np.sin(g), np.cos(g))
    for a in grid:
        a.flags.writeable = False
    return grid


def _bent_enough(leg, j) -> np.ndarray:
    """(N, G) whether the leg ``(foot model, footsteps (N,), hip joints (N, 3), wanted distance,
    heel-off pitch (N,) or None)`` reaches its ankle rolled to the pitches :func:`_roll_grid` ``[j]``
    (N, G) with the knee bent at least as wanted."""
    foot, k, hip, want, heel_off = leg
    grid, sin, cos = _roll_grid()
    th = grid[j]
    toe = None if heel_off is None else np.maximum(th - heel_off[:, None], 0.0)
    d = hip[:, None] - foot.rolled_ankle(k, th, toe, (sin[j], cos[j]))
    return np.sqrt(d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1] + d[..., 2] * d[..., 2]) <= want[:, None]


def _bent_length(char, side: str, knee_deg):
    """Hip-joint-to-ankle distance (m) of leg ``side`` with the knee bent ``knee_deg`` (one or many)."""
    a, b = char.len_thigh[side], char.len_shin[side]
    return np.sqrt(a * a + b * b + 2 * a * b * np.cos(np.radians(knee_deg)))


def _leg_heights(walk: _Walk, com, feet, k, t, knee_deg, margin: float = 0.0) -> np.ndarray:
    """(len(k),) pelvis heights at times ``t`` where the leg on footstep k[i] reaches its stance
    ankle with the knee bent ``knee_deg`` (None: at the knee reach), and at least ``margin`` m under
    the reach."""
    xy, rot = walk.pelvis(com, t)
    ankle = feet["L"].both(feet["R"]).stance_at(k, t, ankle_only=True)[0]
    return _heights_at(walk, k, xy, rot, ankle, knee_deg, margin)


def _heights_at(walk: _Walk, k, xy, rot, ankle, knee_deg, margin: float = 0.0) -> np.ndarray:
    """(len(k),) pelvis heights, the pelvis at ``xy`` (N, 2) turned by ``rot`` (N, 3, 3), at which the
    leg of footstep k[i] reaches ``ankle`` (N, 3) with the knee bent ``knee_deg`` (None: the reach)
    and at least ``margin`` m under the reach."""
    char, kr = walk.char, walk.limit.kr
    on_left = walk.steps.side[k] == 1
    reach = np.where(on_left, kr * char.ankle_reach("L"), kr * char.ankle_reach("R"))
    if knee_deg is None:
        bent = 0.0
    else:
        a = np.where(on_left, char.len_thigh["L"], char.len_thigh["R"])
        b = np.where(on_left, char.len_shin["L"], char.len_shin["R"])
        bent = reach - np.sqrt(a * a + b * b + 2 * a * b * np.cos(np.radians(knee_deg)))  # _bent_length
    # reach.PelvisHeight.leg with each footstep's own leg
    off = _hip_offsets(walk, k, rot)
    R = reach - np.maximum(np.maximum(bent, 0.0), margin)
    d = xy + off[:, :2] - ankle[:, :2]
    horiz = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
    return ankle[:, 2] - off[:, 2] + np.sqrt(np.maximum(R * R - horiz * horiz, 0.0))


def _lower_for_midstance(walk: _Walk, com, feet, extra: np.ndarray) -> float:
    """Add to ``extra`` (K,) where the COM lifts the pelvis out of a planted leg's reach between
    two heel strikes (both boundaries of that step, not the standing start, nor the heel strikes of
    steady level walking: the knee keys set those); the worst overreach (m)."""
    n = len(walk.steps) - 1
    hs = walk.tl.heel_strike
    tt = np.arange(hs[1], hs[n], 1.0 / max(CHECK_HZ, walk.p.fps))
    y_c = np.interp(tt, com.t, com.y)
    xy, rot = walk.pelvis(com, tt)
    # where each foot bears weight (swings are handled by the final clamp): both feet in one query
    seg = {s: feet[s]._segments(tt) for s in SIDES}
    planted = {s: (seg[s] >= 0) & (seg[s] % 2 == 0) for s in SIDES}
    ks = np.concatenate([feet[s].ks[seg[s][planted[s]] // 2] for s in SIDES])
    both = feet["L"].both(feet["R"]).stance_at(ks, np.concatenate([tt[planted[s]] for s in SIDES]), ankle_only=True)[0]
    ankles, first = {}, int(np.count_nonzero(planted["L"]))
    for s, part_s in zip(SIDES, (both[:first], both[first:])):
        ankles[s] = np.zeros((len(tt), 3))
        ankles[s][planted[s]] = part_s
    over = y_c - walk.limit.limit(xy, rot, ankles, planted)
    edge = np.searchsorted(tt, hs)  # step i's samples: tt[edge[i]:edge[i + 1]] (hs[i] ≤ tt < hs[i + 1])
    i = np.arange(1, n)
    i = i[edge[i + 1] > edge[i]]
    if not len(i):
        return 0.0
    e = np.maximum.reduceat(np.append(over, -np.inf), np.stack([edge[i], edge[i + 1]], axis=-1).ravel())[::2]
    for step, worst in zip(i, e):
        if worst > 0 and not (walk.level[step] or walk.level[step + 1]):  # keys set the steady steps' heights
            for j in (step, step + 1):
                if j >= 2:
                    extra[j] += LOWER_SHARE * float(worst)
    return max(float(np.max(e)), 0.0)
