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

from ..progress import ProgressFn, no_progress, part
from .character import SIDES
from .com import solve_com
from .feet import FootModel
from .pose import rz
from .reach import LIFT_KNEE_M, SWING_END_SHORTEN, PelvisHeight

# ProcAnim's choices (the paper leaves the boundary heights of C open):
STAND_BELOW_M = 0.005  # the standing pelvis sits this far under the legs' reach
HEEL_STRIKE_GUESS = 0.94  # × standing height: the first pass's heel-strike heights (then from the reach)
HEEL_STRIKE_MARGIN_M = 0.004  # heel-strike heights kept this far under the reach of both legs
LOWER_SHARE = 0.75  # share of a step's mid-stance overreach taken off its boundary heights per pass
REACH_TOL_M = 0.002  # passes stop once no weight-bearing leg is overreached by more than this
MAX_PASSES = 4
CHECK_HZ = 60.0  # the mid-stance check samples the walk at least this often (per second)


def standing_height(char, knee_reach: float) -> float:
    """Pelvis height above the sole when standing (m): the rest height, or lower if the legs at
    ``knee_reach`` cannot reach the ground from it."""
    hip_drop = float(char.pelvis_rest[2] - np.mean([char.hip_joint_rest[s][2] for s in SIDES]))
    return min(char.pelvis_rest[2] - char.rest_ground_z,
               min(char.feet[s].ankle_height + knee_reach * char.ankle_reach(s) for s in SIDES) + hip_drop)


def solve_support(char, path, ground, steps, tl, p, psi, progress: ProgressFn = no_progress):
    """(com, {side: FootModel}) of the walk, passes as in the module docstring.

    psi: Ψ(t) (rad), the body yaw; ``progress`` gets the fraction of the passes done.
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
    com = feet = None
    for it in range(MAX_PASSES):
        # the first pass costs most (progression, sway, clearances): halves of what is left
        step = part(progress, 1.0 - 0.5 ** it, 1.0 - 0.5 ** (it + 1))
        com = solve_com(tl, steps, p, y_stand, y_targets - extra, y_final, path.length, reuse=com,
                        progress=part(step, 0.0, 0.3))
        cache = {s: None if feet is None else feet[s].clearance for s in SIDES}
        feet = {s: FootModel(char, s, steps, tl, com, p, ground, path, cache[s]) for s in SIDES}
        y_targets = _heel_strike_heights(char, path, steps, tl, feet, limit, psi)
        step(0.6)
        worst = _lower_for_midstance(char, path, steps, tl, p, com, feet, limit, psi, extra)
        step(1.0)
        if worst < REACH_TOL_M:
            break
    progress(1.0)
    return com, feet


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
