"""Walkers that differ: seeded changes of each walker's settings, scaled by ``variation`` (0–1).

Walker i draws from its own stream (``SeedSequence([seed, i])``), so a walker's changes do not
depend on how many others there are or in which order they are drawn. At ``variation`` v each
setting moves by v × (a uniform draw over the range below); at 0 nothing changes, exactly.

================  ==============================  ===============================================
setting           range at variation 1            why
================  ==============================  ===============================================
cadence (speed)   × 1 ± 0.10                      adults' free cadence spreads about ±10 %
stride            × 1 ± 0.08                      (stride_m, or stride_per_leg when derived)
style amplitude   ± 1.5 (of 0–10)                 livelier or flatter walks (:mod:`~..walk.style`)
style weight      ± 1.5 (of 0–10)                 lighter or heavier
style direction   + 0 … 1 (of 0–10)               a little weave for some
arm swing         × 1 ± 0.2
start delay       0 … 1 s                         not everyone leaves on the same frame
================  ==============================  ===============================================

All values are clamped to their documented limits.
"""

from __future__ import annotations

import dataclasses

import numpy as np

CADENCE = 0.10
STRIDE = 0.08
STYLE = 1.5
DIRECTION = 1.0
ARM_SWING = 0.2
DELAY_S = 1.0


def vary(params, amount: float, seed: int, index: int):
    """(the walker's settings, its start delay (s)) for walker ``index`` of a crowd with
    ``variation`` ``amount`` and ``seed``; ``params`` unchanged (the same object) at 0."""
    if amount <= 0.0:
        return params, 0.0
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(index)]))
    cadence, stride, amp, weight, direction, arms = rng.uniform(-1.0, 1.0, 6)
    delay = float(rng.uniform(0.0, 1.0))
    v = float(amount)

    def clamp(x, lo, hi):
        return float(min(max(x, lo), hi))

    changes = {
        "style_amplitude": clamp(params.style_amplitude + v * STYLE * amp, 0.0, 10.0),
        "style_weight": clamp(params.style_weight + v * STYLE * weight, 0.0, 10.0),
        "style_direction": clamp(params.style_direction + v * DIRECTION * abs(direction), 0.0, 10.0),
        "arm_swing": clamp(params.arm_swing * (1 + v * ARM_SWING * arms), 0.0, 2.0),
    }
    if params.speed_mps > 0:
        changes["speed_mps"] = clamp(params.speed_mps * (1 + v * CADENCE * cadence), 0.05, 3.0)
    else:
        changes["cadence_spm"] = clamp(params.cadence_spm * (1 + v * CADENCE * cadence), 20.0, 240.0)
    if params.stride_m > 0:
        changes["stride_m"] = clamp(params.stride_m * (1 + v * STRIDE * stride), 0.1, 2.0)
    else:
        changes["stride_per_leg"] = clamp(params.stride_per_leg * (1 + v * STRIDE * stride), 0.2, 1.5)
    return dataclasses.replace(params, **changes), v * DELAY_S * delay
