"""The COM and the feet solved together: the pelvis as high as the legs allow.

Tsutsuguchi et al. (2000), Figure 8: at each heel strike the hip lies midway in the step; the
boundary heights of C are not given. ProcAnim takes, at every heel strike, the highest pelvis that
both legs reach (the leading foot at heel strike, the trailing one with its heel rising), solves
the COM through those heights (:func:`~.com.solve_com`), then checks every weight-bearing leg over
the whole walk: where the dynamics lift the pelvis out of reach between two heel strikes, that
step's boundaries are lowered and the COM is solved again (a few passes; the progression and the
sway are solved once, they do not depend on the heights).
"""

from __future__ import annotations

import numpy as np

from ..curves import catmull_rom, gaussian_smooth
from ..progress import ProgressFn, no_progress, part
from .character import SIDES
from .com import solve_com
from .feet import FootModel
from .pose import rz
from .reach import LIFT_KNEE_M, SWING_END_SHORTEN, PelvisHeight

# ProcAnim's choices (the paper leaves the boundary heights of C open):
STAND_BELOW_M = 0.005  # the standing pelvis sits this far under the legs' reach
HEEL_STRIKE_GUESS = 0.94  # × standing height: the first pass's heel-strike heights (then from the reach)
HEEL_STRIKE_MARGIN_M = 0.001  # heel-strike heights kept this far under the reach of both legs
LOWER_SHARE = 0.75  # share of a step's mid-stance overreach taken off its boundary heights per pass
REACH_TOL_M = 0.002  # passes stop once no weight-bearing leg is overreached by more than this
MAX_PASSES = 4
# The stance knee of measured gait (Perry and Burnfield 2010, ch. 4; Kadaba et al. 1990): nearly
# straight at initial contact and again at mid-stance (between them it flexes in loading response;
# the reaction-force model's dip after heel strike gives that flexion here). C is corrected toward
# these, within measured gait's vertical travel (COM_TRAVEL_M); the walk still crouches (issue 15).
KNEE_CONTACT_DEG = 5.0
KNEE_MIDSTANCE_DEG = 6.0
CONTACT_MARGIN = 2.0 * LIFT_KNEE_M  # reach a landing leg keeps in hand: clear of reach.lift_into_reach's ramp
# Vertical travel of the COM vs walking speed v (Orendurff et al. 2004, J. Rehabil. Res. Dev. 41:829–
# 834: 2.7 cm at 0.7 m/s to 4.8 cm at 1.6 m/s): travel = 2.7 cm + 2.33 cm·s/m × (v − 0.7 m/s)
COM_TRAVEL_M = (0.027, 0.0233, 0.7)
LOADING_DIP_M = 0.01  # C dips this far below its heel-strike height in loading response (the force model)
CHECK_HZ = 60.0  # the mid-stance check samples the walk at least this often (per second)


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
    limit = PelvisHeight(char, p.knee_reach)
    stand_h = standing_height(char, p.knee_reach)
    y_stand = float(np.mean(steps.pos[:2, 2])) + stand_h - STAND_BELOW_M
    y_final = float(np.mean(steps.pos[-2:, 2])) + stand_h - STAND_BELOW_M
    y_targets = np.zeros(n + 1)
    for i in range(2, n + 1):
        y_targets[i] = 0.5 * (steps.pos[i - 1, 2] + steps.pos[i, 2]) + HEEL_STRIKE_GUESS * stand_h
    extra = np.zeros(n + 1)
    com = feet = knee = None
    for it in range(MAX_PASSES):
        # the first pass costs most (progression, sway, clearances): halves of what is left
        step = part(progress, 1.0 - 0.5 ** it, 1.0 - 0.5 ** (it + 1))
        com = solve_com(tl, steps, p, y_stand, y_targets - extra, y_final, path.length, reuse=com,
                        progress=part(step, 0.0, 0.3))
        if knee is not None:
            _follow_knee_profile(com, tl, knee)
        cache = {s: None if feet is None else feet[s].clearance for s in SIDES}
        feet = {s: FootModel(char, s, steps, tl, com, p, ground, path, cache[s]) for s in SIDES}
        y_targets = _heel_strike_heights(char, path, steps, tl, feet, limit, psi)
        knee = _knee_keys(char, path, steps, tl, com, feet, limit, psi)
        step(0.6)
        worst = _lower_for_midstance(char, path, steps, tl, p, com, feet, limit, psi, extra)
        step(1.0)
        if it >= 1 and worst < REACH_TOL_M:  # the first pass only guessed the heights
            break
    if style is not None:
        _bounce(com, tl, style.bounce, style.sit_legs * char.leg_length)
    progress(1.0)
    return com, feet


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


def _heel_strike_heights(char, path, steps, tl, feet, limit, psi) -> np.ndarray:
    """(K,) pelvis height at the heel strike of footstep i (i ≥ 2) that both legs reach (m)."""
    n = len(steps) - 1
    hs = tl.heel_strike
    i = np.arange(2, n + 1)
    mid = 0.5 * (steps.s[:-1] + steps.s[1:])
    xy = path.at(mid[i - 1])[:, :2]
    rot = rz(psi(hs)[i] - char.rest_heading)
    lims = []
    # the trailing leg (heel rising) and the landing one, which keeps the margin it had at the end
    # of its swing (no dip, no jump)
    for k, short in ((i - 1, 0.0), (i, SWING_END_SHORTEN * LIFT_KNEE_M)):
        z = np.empty(len(i))
        for s in SIDES:
            m = steps.side[k] == (1 if s == "L" else -1)
            ankle = feet[s].stance_at(k[m], hs[i[m]], ankle_only=True)[0]
            z[m] = limit.leg(s, xy[m], rot[m], ankle, short)
        lims.append(z)
    y_targets = np.zeros(n + 1)
    y_targets[2:] = np.minimum(lims[0], lims[1]) - HEEL_STRIKE_MARGIN_M
    return y_targets


def _follow_knee_profile(com, tl, keys: list) -> None:
    """Correct C's height (in place) by a smooth (C¹) offset through ``keys`` [(time, wanted
    height)]: the offset at each key is the wanted height less C's, Catmull-Rom in between, easing
    from and back to 0 over a step before the first key and after the last. Tsutsuguchi et al.
    (2000): "the dynamic calculation precedes the kinematic calculation which corrects or
    exaggerates the motion" — the reaction-force model keeps its shape, the correction sets the
    stance knee to measured gait's (KNEE_*_DEG)."""
    if not keys:
        return
    keys = sorted(keys)
    keys_t = np.array([k[0] for k in keys])
    off = np.array([k[1] for k in keys]) - com.at(keys_t)[1]
    # from and back to no offset, a step before the first key and a step after the last
    step = float(np.median(tl.T))
    keys_t = np.concatenate(([keys_t[0] - step], keys_t, [keys_t[-1] + step]))
    off = np.concatenate(([0.0], off, [0.0]))
    inside = (com.t > keys_t[0]) & (com.t < keys_t[-1])
    com.y[inside] += catmull_rom(keys_t, off, com.t[inside])


def _knee_keys(char, path, steps, tl, com, feet, limit, psi) -> list:
    """[(time, pelvis height)] at which the stance knee has measured gait's angles (Perry and
    Burnfield 2010, ch. 4): :data:`KNEE_CONTACT_DEG` at each heel strike (the trailing leg reaching
    too) and :data:`KNEE_MIDSTANCE_DEG` when C passes over the stance ankle — no higher there than
    measured gait's vertical travel above the heel strike (:data:`COM_TRAVEL_M`)."""
    n = len(steps) - 1
    hs = tl.heel_strike
    k = np.arange(3, n - 2)  # the steady steps: not the first step from standing, nor the stop
    if len(k) == 0:
        return []
    phases = (("contact", hs[k], KNEE_CONTACT_DEG), ("mid", com.passes_many(steps.s[k]), KNEE_MIDSTANCE_DEG))
    keys = []
    contact = None
    for name, t, knee_deg in phases:
        # the landing leg keeps out of the soft lift of a swinging ankle (no dip, no late landing)
        landing = CONTACT_MARGIN if name == "contact" else 0.0
        heights = _leg_heights(char, path, steps, com, feet, limit, psi, k, t, knee_deg, landing)
        if name == "contact":  # the trailing leg, heel rising, must reach as well
            trailing = _leg_heights(char, path, steps, com, feet, limit, psi, k - 1, t, None)
            heights = contact = np.minimum(heights, trailing)
        if name == "mid":  # no higher than measured gait's vertical travel above the heel strike
            speed = steps.w[k] / tl.T[k]
            travel = COM_TRAVEL_M[0] + COM_TRAVEL_M[1] * (speed - COM_TRAVEL_M[2])
            heights = np.minimum(heights, contact + travel - LOADING_DIP_M)
        keys += list(zip(t.tolist(), heights.tolist()))
    return keys


def _leg_heights(char, path, steps, com, feet, limit, psi, k, t, knee_deg, margin: float = 0.0) -> np.ndarray:
    """(len(k),) pelvis heights at times ``t`` where the leg on footstep k[i] reaches its ankle with
    the knee bent ``knee_deg`` (None: at the knee reach), and at least ``margin`` m under the reach."""
    s_c, _y, z_c = com.at(t)
    xy = (path.at(s_c) + path.left_at(s_c) * z_c[:, None])[:, :2]
    rot = rz(psi(t) - char.rest_heading)
    z = np.empty(len(k))
    for s in SIDES:
        m = steps.side[k] == (1 if s == "L" else -1)
        ankle = feet[s].stance_at(k[m], t[m], ankle_only=True)[0]
        shorten = 0.0
        if knee_deg is not None:
            a, b = char.len_thigh[s], char.len_shin[s]
            bent = np.sqrt(a * a + b * b + 2 * a * b * np.cos(np.radians(knee_deg)))
            shorten = limit.kr * (a + b) - bent
        z[m] = limit.leg(s, xy[m], rot[m], ankle, max(shorten, margin))
    return z


def _lower_for_midstance(char, path, steps, tl, p, com, feet, limit, psi, extra: np.ndarray) -> float:
    """Add to ``extra`` (K,) where the COM lifts the pelvis out of a planted leg's reach between
    two heel strikes (both boundaries of that step, not the standing start); the worst overreach (m)."""
    n = len(steps) - 1
    hs = tl.heel_strike
    tt = np.arange(hs[1], hs[n], 1.0 / max(CHECK_HZ, p.fps))
    s_c, y_c, z_c = com.at(tt)
    xy = (path.at(s_c) + path.left_at(s_c) * z_c[:, None])[:, :2]
    check = {s: feet[s].track(tt, with_swing=False) for s in SIDES}
    ank = {s: check[s].ankle for s in SIDES}
    msk = {s: check[s].planted for s in SIDES}  # swings are handled by the final clamp
    over = y_c - limit.limit(xy, rz(psi(tt) - char.rest_heading), ank, msk)
    worst = 0.0
    for i in range(1, n):
        m = (tt >= hs[i]) & (tt < hs[i + 1])
        if np.any(m):
            e = float(np.max(over[m]))
            worst = max(worst, e)
            if e > 0:
                if i >= 2:
                    extra[i] += LOWER_SHARE * e
                extra[i + 1] += LOWER_SHARE * e
    return worst
