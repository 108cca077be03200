"""The motion's contacts found in passes: against its own floor, then also against the ground.

A point is *low* when it is near the motion's own floor — the horizontal plane at the median
height of its points in contact (σ taken off) — or, with a ground, near the ground at the motion's
own offset above it. The union matters: a motion made on flat ground and fixed over a ground with
steps is low against its own floor, a motion captured on those steps is low against the ground.

The motion's offset above the ground is taken per plant (the median gap of its lowest point in
contact) and over plants at :data:`GROUND_PERCENTILE` (RECON): the level most plants stand on or
below, so plants the ground raises (steps the motion walked through) do not lift the motion, and
one plant floating high does not sink it.

Passes: classify against the own floor with the given thresholds; measure the floor on the
contacts; fit the thresholds to the motion's noise (:func:`.contacts.adapted_thresholds`); then
twice: measure the ground offset, classify against both, measure the floor again. The user's
markers decide last.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..terrain.ticker import Ticker
from .contacts import adapted_thresholds, apply_overrides, classify, enforce_durations, runs
from .feet import SIDES
from .floor import Floor, own_level
from .markers import ContactOverrides
from .params import FixFeetParams

GROUND_PERCENTILE = 75.0


@dataclass
class Detection:
    """contact ``(F, 2 sides, 2 points)``; floor_z: the motion's own floor height (σ taken off,
    armature units); ground_offset: the motion's height above the given ground (0 without one)."""

    contact: np.ndarray
    floor_z: float
    ground_offset: float


def detect_contacts(points, speeds, sole, floor: Floor, frames, fps: float, params: FixFeetParams,
                    overrides: ContactOverrides | None, tick: Ticker) -> Detection:
    """Contacts of heel and ball ``points (F, 2, 2, 3)`` with ``speeds (F, 2, 2)`` (units/s),
    sole heights ``sole (2, 2)``; ``frames``: the clip's frame numbers (for the markers)."""
    unit = params.unit_m
    height, speed = params.height_m / unit, params.speed_m_s / unit
    plane = points[..., 2] - sole  # above z = 0
    ground = floor.gaps(points, sole) if floor.given else None
    floor_z = own_level(plane.ravel(), (speeds < speed).ravel())
    contact = _classify(plane - floor_z, speeds, (height, speed), fps, params, tick)
    floor_z = _contact_level(plane, contact, floor_z)
    if params.noise_factor > 0:
        height, speed = adapted_thresholds(plane - floor_z, speeds, contact, (height, speed), params.noise_factor)
    offset = 0.0
    for _ in range(2):
        low = plane - floor_z
        if ground is not None:
            offset = ground_offset(ground, contact)
            low = np.minimum(low, ground - offset)
        contact = _classify(low, speeds, (height, speed), fps, params, tick)
        floor_z = _contact_level(plane, contact, floor_z)
    if ground is not None:
        offset = ground_offset(ground, contact)
    tick.done()
    if overrides:
        low = plane - floor_z if ground is None else np.minimum(plane - floor_z, ground - offset)
        for s, side in enumerate(SIDES):
            decided, state = overrides.decide(side, frames)
            contact[:, s] = apply_overrides(contact[:, s], low[:, s], decided, state)
    return Detection(contact, floor_z, offset)


def ground_offset(gaps: np.ndarray, contact: np.ndarray) -> float:
    """The motion's offset above the ground (see the module's docstring) from the points' ground
    gaps ``(F, 2, 2)`` and contacts; 0 without contacts."""
    lowest = np.where(contact, gaps, np.inf).min(axis=-1)  # (F, 2)
    per_plant = [float(np.median(lowest[a:b, s])) for s in range(2) for a, b in runs(contact[:, s].any(axis=-1))]
    per_plant = [g for g in per_plant if np.isfinite(g)]
    return float(np.percentile(per_plant, GROUND_PERCENTILE)) if per_plant else 0.0


def _contact_level(heights, contact, level: float) -> float:
    """The median height of the lowest point in contact over the frames a foot is down (``level``
    when none is)."""
    down = contact.any(axis=-1)
    if not np.any(down):
        return level
    return own_level(np.where(contact, heights, np.inf).min(axis=-1).ravel(), down.ravel())


def _classify(low, speeds, thresholds, fps: float, p: FixFeetParams, tick: Ticker) -> np.ndarray:
    height, speed = thresholds
    out = np.zeros(low.shape, dtype=bool)
    for s in range(2):
        for q in range(2):
            tick()
            raw = classify(low[:, s, q], speeds[:, s, q], height, speed, p.hysteresis)
            out[:, s, q] = enforce_durations(raw, p.frames(p.min_contact_s, fps), p.frames(p.min_lift_s, fps))
    return out
