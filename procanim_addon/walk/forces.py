"""Ground reaction force of one foot over its stance (Tsutsuguchi et al. 2000, eqs. 6–9, Figures 2–5),
per unit body weight.

τ ∈ [0, 1] runs from the foot's heel strike to its toe off (T_stance = T + T_ds). Each component
is a sum of three sine harmonics, zero outside the stance::

    F_y / (s_y·M·g) = a_y1 sin πτ + a_y2 sin 2πτ + a_y3 sin 3πτ,   a_y = (1.3, f_v, 0.4) + δ_y   (RECON form)
    F_z / (s_z·M·g) = Σ a_zk sin kπτ,  a_z = (0.07, −0.03, −0.03) + δ_z, toward the foot's inside
    F_x / (s_x·M·g) = Σ a_xk sin kπτ,  a_x = (0, −A, 0) + δ_x, A ≈ 0.18                (RECON)

f_v (the second vertical harmonic) is 0.1 on a plane, 0 upstairs, 0.25 downstairs (paper).
The scale factors s are found by the COM solve (com.py).
"""

from __future__ import annotations

import numpy as np

from .params import PathWalkParams

K = np.array([1.0, 2.0, 3.0])


def harmonics(tau, coeffs) -> np.ndarray:
    """Σ_k coeffs[k]·sin(kπτ) for τ in [0, 1], 0 outside; ``tau`` any shape."""
    tau = np.asarray(tau, float)
    inside = (tau >= 0.0) & (tau <= 1.0)
    val = np.sin(np.pi * tau[..., None] * K) @ np.asarray(coeffs, float)
    return np.where(inside, val, 0.0)


def vertical_coeffs(params: PathWalkParams, mode: str) -> np.ndarray:
    """a_y for a vertical mode ('plane' | 'up' | 'down'), personality offsets δ_y added."""
    a = np.array(params.forces.a_y, float)
    a[1] = params.forces.f_v[mode]
    return a + np.asarray(params.delta_y, float)


def lateral_coeffs(params: PathWalkParams) -> np.ndarray:
    return np.asarray(params.forces.a_z, float) + np.asarray(params.delta_z, float)


def progression_coeffs(params: PathWalkParams) -> np.ndarray:
    return np.asarray(params.forces.a_x, float) + np.asarray(params.delta_x, float)


def harmonic_integral(coeffs) -> float:
    """∫₀¹ Σ a_k sin kπτ dτ = Σ a_k (1 − cos kπ)/(kπ)."""
    return float(np.sum(np.asarray(coeffs, float) * (1 - np.cos(np.pi * K)) / (np.pi * K)))


def nominal_vertical_scale(coeffs, double_support: float) -> float:
    """s_y that carries one body weight on average when each foot's stance lasts (1 + T_ds/T)·T and
    one stance starts per step: s_y·(1 + T_ds/T)·∫F̂ dτ = 1."""
    return 1.0 / ((1.0 + double_support) * harmonic_integral(coeffs))
