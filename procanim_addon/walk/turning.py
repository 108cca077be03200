"""Rotation on curves (Tsutsuguchi et al. 2000, section "Rotational Movement", eqs. 10–11, Figures
12–13): body yaw Ψ = ψ1 + ψ2, ψ1:ψ2 = 2:3.

The body (an elliptical pillar, I_r·Ψ̈ = r_r·F_r(t)) turns by α_i during step i. The turning force
is a step function that starts with single support (T_ds) and acts until the progression force
crosses zero (T_0 = ½·T_stance = ½(T + T_ds)); RECON: an equal and opposite step of the same length
follows, so the body stops turning by the end of the step and Ψ̇ = 0 at every step boundary (the
paper leaves the braking unstated). With Ψ(T) − Ψ(0) = α_i the force size has a closed form,
f_r·r_r/I_r = α_i / (T_0 − T_ds)², the value the paper's iteration converges to.

ψ1 (about the standing ankle, 2/5 of Ψ) is the stance leg's twist — it sets the knee direction;
ψ2 (about the standing hip, 3/5) is the pelvis turning over the hip.
"""

from __future__ import annotations

import numpy as np

PSI_ANKLE_SHARE = 2.0 / 5.0  # ψ1 : ψ2 = 2 : 3


def body_yaw(t: np.ndarray, heel_strike: np.ndarray, T: np.ndarray, T_ds: np.ndarray,
             yaw_start: float, alpha: np.ndarray) -> np.ndarray:
    """Ψ(t) (rad) for times ``t``: ``yaw_start`` until the first step, turning by ``alpha[i]`` in
    step i (1 ≤ i ≤ n−1) with the bang-bang force profile above."""
    t = np.asarray(t, float)
    n = len(heel_strike) - 1
    i = np.arange(1, n)
    a = np.asarray(alpha, float)[i]
    t_on = T_ds[i]
    t_zero = 0.5 * (T[i] + T_ds[i])
    d = t_zero - t_on
    acc = np.where(a == 0.0, 0.0, a / np.where(d > 0, d * d, 1.0))  # r_r·f_r / I_r
    # the two pulses end with the step (t_zero + d = T): a finished step has turned by acc·d²
    done = acc * (0.5 * d**2 + d * d - 0.5 * d**2)
    turned = np.cumsum(np.concatenate(([float(yaw_start)], done)))  # Ψ at the start of step 1, 2, …
    step = np.clip(np.searchsorted(heel_strike[1:n], t, side="right") - 1, -1, n - 2)  # index into i
    psi = np.where(step < 0, float(yaw_start), turned[np.maximum(step, 0)])
    # the step under way: integrate its pulses analytically, +acc on [t_on, t_zero], −acc after
    j = np.maximum(step, 0)
    u = t - heel_strike[1:n][j]
    p1 = np.clip(u - t_on[j], 0.0, d[j])
    p2 = np.clip(u - t_zero[j], 0.0, d[j])
    return np.where(step < 0, psi, psi + acc[j] * (0.5 * p1**2 + d[j] * p2 - 0.5 * p2**2))


def turning_force(t, heel_strike, T, T_ds, alpha) -> np.ndarray:
    """r_r·F_r/I_r (rad/s²) over times t — the step functions themselves (for plots and tests)."""
    t = np.asarray(t, float)
    out = np.zeros(t.shape)
    for i in range(1, len(heel_strike) - 1):
        u = t - heel_strike[i]
        t_on, t_zero = T_ds[i], 0.5 * (T[i] + T_ds[i])
        d = t_zero - t_on
        acc = alpha[i] / (d * d)
        out += np.where((u >= t_on) & (u < t_zero), acc, 0.0) - np.where((u >= t_zero) & (u < t_zero + d), acc, 0.0)
    return out
