"""The fuzzy-logic joint controller of M2 (Deglorie et al. 2015, after Samyn et al. 2012).

One controller per joint angle. Input: the signed angular error α (degrees) — the turn about the
angle's world axis ``w`` from the target direction to the effector direction, seen from the
joint's head (``α > 0``: the effector is to the Left, counter-clockwise about ``w``). Output: an
angular speed (degrees/s, ``> 0`` turns Left). Five memberships each::

    input  FarL  CloseL  Zero  CloseR  FarR         output  FastR  SlowR  Zero  SlowL  FastL
    rules  IF α IS FarL THEN speed IS FastR;  CloseL → SlowR;  Zero → Zero;  CloseR → SlowL;  FarR → FastL

Input memberships are triangles/shoulders on the breakpoints ±z (dead zone) and ±F (outer limit):
Zero peaks at 0 and vanishes at ±z; Close rises from 0 to 1 at z and falls to 0 at F; Far rises from
z to 1 at F and stays 1 beyond. Outputs are singletons at 0, ±slow, ±fast, so the centroid is the
weighted average ``Σ μ_i s_i / Σ μ_i`` (μ_i = rule strength; one antecedent per rule, so the min
of the AND is that membership). The speed × time step is added to the angle every tick, so the
effector lags a moving target and needs no path.

M2's numbers (the authors' controller library): dead zone ±0.1°–3°, outer limit ±60° for arm joints,
slow ≈ 80°/s, fast 160–300°/s; clavicle slow 2.5°/s, fast 50°/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._effector import effector_of

INPUT_SETS = ("FarL", "CloseL", "Zero", "CloseR", "FarR")
OUTPUT_SETS = ("FastR", "SlowR", "Zero", "SlowL", "FastL")
RULES = dict(zip(INPUT_SETS, OUTPUT_SETS))  # FarL→FastR, CloseL→SlowR, Zero→Zero, CloseR→SlowL, FarR→FastL


@dataclass(frozen=True)
class FuzzyJoint:
    """Numbers of one controller: dead zone z and outer limit F (degrees), slow and fast speeds (°/s)."""

    dead_zone_deg: float = 0.1
    outer_deg: float = 60.0
    slow_deg_s: float = 80.0
    fast_deg_s: float = 300.0

    def validate(self) -> None:
        if not (0 < self.dead_zone_deg < self.outer_deg):
            raise ValueError("fuzzy controller needs 0 < dead zone < outer limit")
        if not (0 <= self.slow_deg_s <= self.fast_deg_s):
            raise ValueError("fuzzy controller needs 0 <= slow <= fast speed")


ARM_JOINT = FuzzyJoint(0.1, 60.0, 80.0, 300.0)
CLAVICLE_JOINT = FuzzyJoint(3.0, 60.0, 2.5, 50.0)
# The elbow alone closes the radial error (shoulder→hand distance; no shoulder rotation changes it),
# so it gets the fast end of M2's arm range as its "slow" speed — the paper's own remedy for the lag
# ("tweaking the controller response speed"). RECON: a tuned value, not the authors'.
ELBOW_JOINT = FuzzyJoint(0.2, 60.0, 160.0, 300.0)


def memberships(error_deg, joint: FuzzyJoint = ARM_JOINT) -> np.ndarray:
    """Degrees of membership ``(..., 5)`` in FarL, CloseL, Zero, CloseR, FarR."""
    e = np.asarray(error_deg, float)
    z, f = joint.dead_zone_deg, joint.outer_deg
    a = np.abs(e)
    zero = np.clip(1.0 - a / z, 0.0, 1.0)
    close = np.where(a <= z, a / z, np.clip((f - a) / (f - z), 0.0, 1.0))
    far = np.clip((a - z) / (f - z), 0.0, 1.0)
    left = e > 0
    return np.stack(
        (np.where(left, far, 0.0), np.where(left, close, 0.0), zero,
         np.where(left, 0.0, close), np.where(left, 0.0, far)),
        axis=-1,
    )


def output_singletons(joint: FuzzyJoint = ARM_JOINT) -> np.ndarray:
    """Speeds (°/s) of FastR, SlowR, Zero, SlowL, FastL."""
    return np.array([-joint.fast_deg_s, -joint.slow_deg_s, 0.0, joint.slow_deg_s, joint.fast_deg_s])


def angular_speed(error_deg, joint: FuzzyJoint = ARM_JOINT) -> np.ndarray:
    """Defuzzified angular speed (°/s) for angular errors (°): the five rules, weighted average."""
    strength = memberships(error_deg, joint)  # rule i fires with the strength of input set i
    out = output_singletons(joint)  # rule i's consequent, in the same order (FarL→FastR …)
    total = np.sum(strength, axis=-1)
    return np.sum(strength * out, axis=-1) / np.where(total > 0, total, 1.0)


def ticks_per_frame(joints, frame_time: float) -> int:
    """Control ticks per frame so a slow step never exceeds the dead zone (no chatter):
    ``slow · Δt ≤ z`` for every controller."""
    need = max((j.slow_deg_s * frame_time / j.dead_zone_deg) for j in joints)
    return max(1, int(math.ceil(need)))


def fuzzy_frame(chain, base, target, angles, count, eff_local, joints, frame_time, ticks=None, tol=0.0):
    """Advance the controllers of the first ``count`` joints by one frame (``frame_time`` s).

    Joints are updated tip to root, each from a fresh FK (so they do not all correct the same
    error at once). Returns ``(angles (n, 3), ticks run)``.
    """
    th = np.array(angles, float)
    ticks = ticks_per_frame(joints[:count], frame_time) if ticks is None else int(ticks)
    dt = frame_time / ticks
    locked = (chain.upper - chain.lower) < 1e-9
    for tick in range(ticks):
        for j in range(count - 1, -1, -1):
            mats, heads, waxes = chain.fk_detail(base, th, count)
            p = effector_of(mats, eff_local)
            if tol > 0 and np.sum((target - p) ** 2) < tol * tol:
                return th, tick
            u = p - heads[j]
            v = target - heads[j]
            w = waxes[j]  # (3, 3) the joint's three world axes
            up = u[None, :] - w * (w @ u)[:, None]
            vp = v[None, :] - w * (w @ v)[:, None]
            # α: from the target direction to the effector direction about w (> 0: effector Left)
            alpha = np.degrees(np.arctan2(np.einsum("ij,ij->i", w, np.cross(vp, up)), np.einsum("ij,ij->i", vp, up)))
            weak = (np.einsum("ij,ij->i", up, up) < 1e-14) | (np.einsum("ij,ij->i", vp, vp) < 1e-14) | locked[j]
            alpha = np.where(weak, 0.0, alpha)
            speed = angular_speed(alpha, joints[j])
            th[j] = chain.clamp_joint(j, th[j] + np.radians(speed) * dt)
    return th, ticks
