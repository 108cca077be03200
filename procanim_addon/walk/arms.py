"""Arm swing (Tsutsuguchi et al. 2000, section "Arm Swing", eqs. 14–20, Figures 14–16): each arm a
physical pendulum hung at the shoulder, driven by a torque.

The whole arm (upper arm, forearm with the elbow held at β_c, hand) swings about the shoulder S:

    I_a·θ̈ + M_a·R·(Ẍ·cos θ + g·sin θ) = F_a(t)

with I_a its moment of inertia about S, R the distance S→G (its centre of gravity) and X the
shoulder's fore–aft position (it moves with the shoulder rotation σ). F_a is a step function:
f_a1 until the progression force crosses zero (T_0), f_a2 after; both are found by Newton shooting
so that θ goes from θ_I at rest (θ̇ = 0) to θ_F at rest in the step's time T (eqs. 19–20). The upper
arm angle is φ1 = θ − γ, γ the angle between SG and the upper arm. Segment masses and centres
follow Dempster's proportions (upper arm 2.8 %, forearm 1.6 %, hand 0.6 % of body mass).

The elbow: "the angular velocity of the elbow is a sine curve around the angle β_c" (the paper gives
no amplitude); ProcAnim bends it by ±30 % of β_c with the swing (:data:`ELBOW_SWING`). The shoulder's
fore–aft acceleration Ẍ (eq. 17) is taken as 0; the shoulder rotation σ is applied kinematically.

Angles are radians, positive forward (flexion).
"""

from __future__ import annotations

import numpy as np

from ..ground import UP
from ..transforms import normalize
from .character import SIDES
from .pose import map_rot, rz

G = 9.81
ELBOW_SWING = 0.6  # β = β_c·(1 + 0.6·(φ1 − mid)/span): ±30 % of β_c over the swing's span (ProcAnim's)
MIN_SPAN_DEG = 5.0  # the span in that formula is at least this (arms that barely swing)
HAND_LENGTH = 0.3  # × forearm: the hand's length when the rig has no hand bone


def arm_pendulum_constants(l_upper: float, l_fore: float, l_hand: float, elbow: float):
    """(k = M_a·R/I_a (1/m), γ (rad)) of an arm with the elbow bent by ``elbow`` (rad) forward."""
    m1, m2, m3 = 0.028, 0.016, 0.006
    u = np.array([0.0, -1.0])                      # upper arm hanging (x forward, y up)
    f = np.array([np.sin(elbow), -np.cos(elbow)])  # forearm bent forward
    e = l_upper * u
    c1, c2, c3 = 0.436 * l_upper * u, e + 0.43 * l_fore * f, e + (l_fore + 0.5 * l_hand) * f
    Ma = m1 + m2 + m3
    g_pt = (m1 * c1 + m2 * c2 + m3 * c3) / Ma
    inertia = m1 * (c1 @ c1 + l_upper**2 / 12) + m2 * (c2 @ c2 + l_fore**2 / 12) + m3 * (c3 @ c3 + l_hand**2 / 12)
    R = float(np.linalg.norm(g_pt))
    gamma = float(np.arctan2(g_pt[0], -g_pt[1]))  # G ahead of the upper arm line
    return Ma * R / inertia, gamma


def _simulate(theta0, T, t0_frac, u1, u2, k, xdd, n_sub: int = 64):
    """RK4 over P problems at once. theta0, T, u1, u2 (P,); xdd (P, n_sub+1) shoulder accel.
    Returns θ (P, n_sub+1) and θ̇ (P, n_sub+1)."""
    P = len(theta0)
    h = T / n_sub
    hh, h6 = 0.5 * h, h / 6
    th = np.array(theta0, float)
    om = np.zeros(P)
    ths, oms = [th], [om]
    # the torque at every half step (a step function of the step's fraction), all at once
    fracs = np.array([(j + 0.5 * h2) / n_sub if h2 else j / n_sub for j in range(n_sub + 1) for h2 in (0, 1)])[:-1]
    tqs = np.where(fracs[:, None] < np.asarray(t0_frac)[None, :], u1, u2)
    still = not np.any(xdd)  # the shoulder does not accelerate: x·cos θ is 0 (the same sums without it)
    x0 = x1 = xm = None

    def acc(tq, th_, x_):
        if still:
            return tq - k * (G * np.sin(th_))
        return tq - k * (x_ * np.cos(th_) + G * np.sin(th_))

    if still:  # the same sums as below with acc written out (no call per stage)
        for j in range(n_sub):
            tq0, tqm, tq1 = tqs[2 * j], tqs[2 * j + 1], tqs[2 * j + 2]
            k1o = tq0 - k * (G * np.sin(th))
            k2t = om + hh * k1o
            k2o = tqm - k * (G * np.sin(th + hh * om))
            k3t = om + hh * k2o
            k3o = tqm - k * (G * np.sin(th + hh * k2t))
            k4t = om + h * k3o
            k4o = tq1 - k * (G * np.sin(th + h * k3t))
            th = th + h6 * (om + 2 * k2t + 2 * k3t + k4t)
            om = om + h6 * (k1o + 2 * k2o + 2 * k3o + k4o)
            ths.append(th)
            oms.append(om)
        return np.stack(ths, axis=1), np.stack(oms, axis=1)
    for j in range(n_sub):
        tq0, tqm, tq1 = tqs[2 * j], tqs[2 * j + 1], tqs[2 * j + 2]
        if not still:
            x0, x1 = xdd[:, j], xdd[:, j + 1]
            xm = 0.5 * (x0 + x1)
        k1t, k1o = om, acc(tq0, th, x0)
        k2t = om + hh * k1o
        k2o = acc(tqm, th + hh * k1t, xm)
        k3t = om + hh * k2o
        k3o = acc(tqm, th + hh * k2t, xm)
        k4t = om + h * k3o
        k4o = acc(tq1, th + h * k3t, x1)
        th = th + h6 * (k1t + 2 * k2t + 2 * k3t + k4t)
        om = om + h6 * (k1o + 2 * k2o + 2 * k3o + k4o)
        ths.append(th)
        oms.append(om)
    return np.stack(ths, axis=1), np.stack(oms, axis=1)


def solve_swings(theta_i, theta_f, T, t0_frac, k, xdd=None, n_sub: int = 40, iters: int = 8, groups=None):
    """Torques (u1, u2) = F_a/I_a per problem and the swing θ on ``n_sub + 1`` samples per step.

    theta_i, theta_f, T, t0_frac, k: (P,) boundary angles (rad), step times (s), T_0/T, M_a·R/I_a
    (1/m; a scalar for all). groups (P,) ints: problems of one group (one arm) stop iterating
    together, once all of them meet their boundary values (Newton shooting on eqs. 19–20).
    Returns (theta (P, n_sub+1), omega (P, n_sub+1), u (P, 2)).
    """
    theta_i, theta_f, T = (np.asarray(x, float) for x in (theta_i, theta_f, T))
    t0_frac = np.broadcast_to(np.asarray(t0_frac, float), theta_i.shape)
    k = np.broadcast_to(np.asarray(k, float), theta_i.shape)
    P = len(theta_i)
    groups = np.zeros(P, int) if groups is None else np.asarray(groups)
    if xdd is None:
        xdd = np.zeros((P, n_sub + 1))
    # linearised initial guess: θ̈ = u − k g θ ≈ u over a short step
    d = theta_f - theta_i
    u = np.stack([4.0 * d / T**2 + k * G * theta_i, -4.0 * d / T**2 + k * G * theta_f], axis=-1)
    th_out, om_out = np.empty((P, n_sub + 1)), np.empty((P, n_sub + 1))
    active = np.ones(P, dtype=bool)
    three = (lambda x: np.concatenate([x, x, x]))  # noqa: E731
    for _ in range(iters):
        a = np.flatnonzero(active)
        m = len(a)
        # the problems and their two perturbations in one batch
        du = 1e-3 * np.maximum(1.0, np.abs(u[a]))
        u3 = np.concatenate([u[a], u[a] + du * [1.0, 0.0], u[a] + du * [0.0, 1.0]])
        th3, om3 = _simulate(three(theta_i[a]), three(T[a]), three(t0_frac[a]), u3[:, 0], u3[:, 1], three(k[a]),
                             three(xdd[a]), n_sub)
        r = np.stack([th3[:m, -1] - theta_f[a], om3[:m, -1] * T[a]], axis=-1)
        done = np.zeros(m, dtype=bool)
        for g in np.unique(groups[a]):
            in_g = groups[a] == g
            done[in_g] = np.max(np.abs(r[in_g])) < 1e-5
        th_out[a[done]], om_out[a[done]] = th3[:m][done], om3[:m][done]
        active[a[done]] = False
        if not np.any(active):
            return th_out, om_out, u
        J = np.empty((m, 2, 2))
        for j in range(2):
            sl = slice((j + 1) * m, (j + 2) * m)
            J[:, :, j] = (np.stack([th3[sl, -1] - theta_f[a], om3[sl, -1] * T[a]], axis=-1) - r) / du[:, j:j + 1]
        # Newton: J⁻¹ r by Cramer's rule (2 × 2; faster than a batched LAPACK solve on long walks)
        det = J[:, 0, 0] * J[:, 1, 1] - J[:, 0, 1] * J[:, 1, 0]
        step = np.stack([J[:, 1, 1] * r[:, 0] - J[:, 0, 1] * r[:, 1],
                         J[:, 0, 0] * r[:, 1] - J[:, 1, 0] * r[:, 0]], axis=-1) / det[:, None]
        u[a[~done]] = u[a[~done]] - step[~done]
    a = np.flatnonzero(active)
    th_out[a], om_out[a] = _simulate(theta_i[a], T[a], t0_frac[a], u[a, 0], u[a, 1], k[a], xdd[a], n_sub)
    return th_out, om_out, u


def swing_angles(char, rigmap, sk, steps, tl, p, t, stride):
    """{side: (upper arm index, forearm index, φ1 (F,), elbow β (F,))} for the arms the rig has.

    Boundary angles per step: the arm on the stance side is back (−arm_swing_back_deg) at its heel
    strike, the other forward; steps shorter than a stride swing less, the first and last not at all.
    """
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
    arms, problems = {}, []
    steps_i = np.arange(1, n)
    for g, s in enumerate(SIDES):
        names = [rigmap.get(f"{r}.{s}") for r in ("upper_arm", "forearm", "hand")]
        if not (names[0] and names[1]) or not (sk.has(names[0]) and sk.has(names[1])):
            continue
        ua, fa = sk.index(names[0]), sk.index(names[1])
        l_hand = sk.lengths[sk.index(names[2])] if names[2] and sk.has(names[2]) else HAND_LENGTH * sk.lengths[fa]
        k, gamma = arm_pendulum_constants(sk.lengths[ua], sk.lengths[fa], l_hand, beta_c)
        sgn = 1 if s == "L" else -1
        bound = np.array([(-back if steps.side[j] == sgn else fwd) * amp[j] for j in range(n + 1)])
        arms[s] = (ua, fa, gamma)
        problems.append((bound[steps_i] + gamma, bound[steps_i + 1] + gamma, np.full(n - 1, k), np.full(n - 1, g)))
    if not arms:
        return out
    th_i, th_f, ks, groups = (np.concatenate(x) for x in zip(*problems))
    T = np.tile(tl.T[steps_i], len(arms))
    th_all, _om, _u = solve_swings(th_i, th_f, T, 0.5 * (1 + p.double_support), ks, groups=groups)
    n_sub = th_all.shape[1] - 1
    ts = (hs[steps_i][:, None] + tl.T[steps_i][:, None] * np.linspace(0, 1, n_sub + 1)[None, :]).ravel()
    order = np.argsort(ts, kind="stable")
    span = max(fwd + back, np.radians(MIN_SPAN_DEG))
    for m, (s, (ua, fa, gamma)) in enumerate(arms.items()):
        phi_s = (th_all[m * (n - 1):(m + 1) * (n - 1)] - gamma).ravel()
        phi1 = np.interp(t, ts[order], phi_s[order], left=0.0, right=0.0)
        beta = beta_c * (1.0 + ELBOW_SWING * (phi1 - 0.5 * (fwd - back)) / span)
        out[s] = (ua, fa, phi1, beta)
    return out


def rest_hinge(y_upper, y_fore, forward, left) -> np.ndarray:
    """The elbow's hinge axis in the rest pose: the rest bend's (upper arm × forearm); for a straight
    rest arm (a T-pose, an arm along one line) the axis a forward bend turns about, upper arm ×
    forward (−left for an arm pointing forward)."""
    for n in (np.cross(y_upper, y_fore), np.cross(y_upper, forward)):
        if np.linalg.norm(n) >= 1e-4:
            return n
    return -np.asarray(left, float)


def arm_poses(char, sk, arm_info: dict, chest_yaw, p, want: dict) -> None:
    """Upper arms and forearms into ``want``: the whole arm swung by φ1 in the chest's frame
    (turned by the chest's yaw), lifted at the armpit by ρ, the elbow bent by β."""
    ml = sk.matrix_local
    rho = np.radians(p.armpit_deg)
    Rc = rz(chest_yaw - char.rest_heading)
    for s, (ua, fa, phi1, beta) in arm_info.items():
        y0u, y0f = ml[ua][:3, 1], ml[fa][:3, 1]
        n0 = rest_hinge(y0u, y0f, char.forward, char.left)
        sgn = 1.0 if s == "L" else -1.0
        hang = -UP * np.cos(rho) + sgn * char.left * np.sin(rho)
        d_local = np.sin(phi1)[:, None] * char.forward + np.cos(phi1)[:, None] * hang
        fperp = char.forward - np.sum(char.forward * d_local, axis=-1, keepdims=True) * d_local
        fperp = normalize(fperp)
        e_local = np.cos(beta)[:, None] * d_local + np.sin(beta)[:, None] * fperp
        d = np.einsum("fij,fj->fi", Rc, d_local)
        e = np.einsum("fij,fj->fi", Rc, e_local)
        hinge = np.cross(d, e)
        want[ua] = (map_rot(ml[ua][:3, :3], y0u, n0, d, hinge), None)
        want[fa] = (map_rot(ml[fa][:3, :3], y0f, n0, e, hinge), None)
