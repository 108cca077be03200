"""Step timing (Tsutsuguchi et al. 2000, eqs. 1–4, Figure 3): T = 1/ν or T = w/v, T_ds = 0.25·T,
T_stance = T + T_ds, T_swing = T − T_ds.

Step i (1 ≤ i ≤ n−1) runs from the heel strike of footstep P_i to that of P_{i+1}. Footstep k is in
stance from its heel strike to the toe off that ends the double support of step k+1:
``lift[k] = heel_strike[k+1] + T_ds(k+1)``. P_0, P_1 stand from the start, P_{n−1}, P_n to the end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Timeline:
    """All times in seconds from the clip's first frame.

    T:            (K,) duration of step i (index i = footstep of its stance; T[0] = T[1], T[n] = T[n−1])
    T_ds:         (K,) double support of step i
    heel_strike:  (K,) heel strike of footstep k (P_0 and P_1: the start of walking)
    land:         (K,) when footstep k starts bearing weight (−inf for the standing P_0, P_1)
    lift:         (K,) toe off of footstep k (+inf for P_{n−1}, P_n)
    land_virtual, lift_virtual: (K,) the stance window the force model uses (finite everywhere)
    settle:       time after the last heel strike for the COM to come to rest (s)
    t_begin, t_end: clip start and end (s)
    """

    T: np.ndarray
    T_ds: np.ndarray
    heel_strike: np.ndarray
    land: np.ndarray
    lift: np.ndarray
    land_virtual: np.ndarray
    lift_virtual: np.ndarray
    settle: float
    t_begin: float
    t_end: float

    @property
    def n(self) -> int:
        return len(self.T) - 1


def make_timeline(w: np.ndarray, cadence_spm: float, speed_mps: float, double_support: float,
                  stand_s: float, stride: float, min_swing: np.ndarray | None = None) -> Timeline:
    """Timeline for K footsteps with step lengths ``w`` (m, per footstep i: P_i → P_{i+1}).

    min_swing (K,): the shortest swing (s) that ends at footstep i (a long stairs swing); step i − 1,
    during which it swings, lasts at least min_swing[i] / (1 − T_ds/T).
    """
    K = len(w)
    n = K - 1
    T = np.empty(K)
    if speed_mps > 0:
        # T = w / v with w the longer of the step lengths on either side of the stance foot, so the
        # first and the closing step (the COM goes half a step) take a whole step's time, as they
        # do at a given cadence
        w_prev = np.concatenate(([0.0], w[:-1]))
        T[1:n] = np.maximum(np.maximum(w_prev[1:n], w[1:n]), 0.5 * stride) / speed_mps
    else:
        T[1:n] = 60.0 / cadence_spm
    if min_swing is not None:
        T[1:n] = np.maximum(T[1:n], np.asarray(min_swing, float)[2:n + 1] / (1.0 - double_support))
    return timeline_of(T, double_support, stand_s)


def timeline_of(T: np.ndarray, double_support: float, stand_s: float, stand_end_s: float | None = None) -> Timeline:
    """Timeline of K footsteps whose steps take ``T`` (K,) s (T[1 … n−1] are used; T[0] and T[n]
    become their neighbours'): standing ``stand_s`` before the first step and ``stand_end_s``
    (default ``stand_s``) after the COM has settled."""
    K = len(T)
    n = K - 1
    T = np.array(T, float)
    T[0], T[n] = T[1], T[n - 1]
    T_ds = double_support * T
    hs = np.empty(K)
    hs[0] = hs[1] = stand_s
    for i in range(1, n):
        hs[i + 1] = hs[i] + T[i]
    land = hs.copy()
    land[:2] = -np.inf
    lift = np.full(K, np.inf)
    lift[: n - 1] = hs[1:n] + T_ds[1:n]
    lift_v = lift.copy()
    lift_v[n - 1:] = hs[n - 1:] + T[n - 1:] * (1 + double_support)
    land_v = land.copy()
    land_v[0] = lift[0] - T[1] * (1 + double_support)
    land_v[1] = hs[1]
    settle = float(T[n - 1])
    end = stand_s if stand_end_s is None else stand_end_s
    return Timeline(T, T_ds, hs, land, lift, land_v, lift_v, settle, 0.0, float(hs[n] + settle + end))
