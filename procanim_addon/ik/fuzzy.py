"""The fuzzy-logic joint controller of Deglorie et al. 2015 (§6.2, after Samyn et al. 2012).

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

The authors' numbers (their controller library): dead zone ±0.1°–3°, outer limit ±60° for arm joints,
slow ≈ 80°/s, fast 160–300°/s; clavicle slow 2.5°/s, fast 50°/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._effector import distance2, sweep_tip_to_root

_RAD_TO_DEG = 180.0 / math.pi  # math.degrees and math.radians multiply by these
_DEG_TO_RAD = math.pi / 180.0

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
# so it runs near the fast end of the authors' arm range even for small errors — the paper's own
# remedy for the lag ("tweaking the controller response speed"). RECON: tuned on the handshake bench
# (docs/performance.md, "Figures from the engine's comments"), not the authors' value.
ELBOW_JOINT = FuzzyJoint(0.35, 60.0, 270.0, 300.0)


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


def angular_speed_scalar(error_deg: float, joint: FuzzyJoint) -> float:
    """:func:`angular_speed` for one float, in plain Python (the per-tick inner loop)."""
    z, f = joint.dead_zone_deg, joint.outer_deg
    return _speed(error_deg, z, f, f - z, joint.slow_deg_s, joint.fast_deg_s)


def _speed(error_deg: float, z: float, f: float, fz: float, slow: float, fast: float) -> float:
    """The five rules for one error (°) with the controller's numbers ``fz = f − z`` given (°/s)."""
    a = abs(error_deg)
    zero = max(0.0, 1.0 - a / z)
    close = a / z if a <= z else min(1.0, max(0.0, (f - a) / fz))
    far = min(1.0, max(0.0, (a - z) / fz))
    # rules: Close → Slow and Far → Fast, toward the other side; Zero → 0
    magnitude = (close * slow + far * fast) / (zero + close + far)
    return -magnitude if error_deg > 0 else magnitude


def ticks_per_frame(joints, frame_time: float) -> int:
    """Control ticks per frame so a slow step never exceeds the dead zone (no chatter):
    ``slow · Δt ≤ z`` for every controller."""
    need = max((j.slow_deg_s * frame_time / j.dead_zone_deg) for j in joints)
    return max(1, int(math.ceil(need)))


def fuzzy_frame(kern, g0, h0, target, th, count, joints, frame_time, ticks=None, tol=0.0):
    """Advance the controllers of the first ``count`` joints by one frame (``frame_time`` s), from
    the flat angles ``th`` (updated in place). Returns ``(th, ticks run)``.

    Angles are updated one after the other, tip to root, each seeing the error the previous ones
    left (so they do not all correct the same error at once): the sweep of CCD
    (:func:`._effector.sweep_tip_to_root`), with the controller's speed × tick time as the turn.
    """
    ticks = ticks_per_frame(joints[:count], frame_time) if ticks is None else int(ticks)
    dt = frame_time / ticks
    lower, upper, locked = kern.lower, kern.upper, kern.locked
    # per angle: dead zone z, outer limit F, F − z, slow, fast (the controller's numbers, as floats)
    numbers = [(j.dead_zone_deg, j.outer_deg, j.outer_deg - j.dead_zone_deg, j.slow_deg_s, j.fast_deg_s)
               for j in (joints[i // 3] for i in range(3 * count))]

    def turn_to(i, ang, old):
        # α, from the target direction to the effector direction about w (> 0: effector Left), is
        # minus the sweep's angle from the effector to the target (math.degrees and math.radians
        # are these products)
        speed = _speed(-ang * _RAD_TO_DEG, *numbers[i])
        return min(max(old + speed * _DEG_TO_RAD * dt, lower[i]), upper[i])

    for tick in range(ticks):
        p, heads, axes = kern.detail(g0, h0, th, count)
        if tol > 0 and distance2(target, p) < tol * tol:
            return th, tick
        sweep_tip_to_root(p, target, heads, axes, th, locked, count, turn_to)
    return th, ticks
