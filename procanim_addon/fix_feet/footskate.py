"""Foot skate added to a clean motion: the faults Fix Feet removes, made on purpose and known.

For tests, benches and demos: a motion whose planted feet stand still (ProcAnim's own source walk)
gets what captures and retargets suffer from — each planted foot drifting at a steady speed in a
random horizontal direction (through its true position at the middle of the contact), the drift
carried smoothly through the swing between two contacts, per-frame jitter of the feet, and the
whole motion floating above its floor. The legs are re-solved to the moved ankles (the knee in its
own plane), so bone lengths stay exact; the feet keep their orientation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..clip import Clip
from ..curves import smoothstep
from ..rig_roles import RigMap
from ..skeleton import Skeleton
from ..transforms import mat3_to_quat
from .contacts import runs
from .feet import read_feet
from .legs import move_pelvis, solve_leg
from .reach import HARD_REACH

STILL_M = 1e-6  # a foot that moves less than this (armature units) to a neighbouring frame is planted


@dataclass(frozen=True)
class Footskate:
    """drift_m_s: (slowest, fastest) drift of a planted foot (units/s); jitter_m: each foot's
    ankle moves by up to this much along each axis, independently on every frame; float_m: the
    whole motion is raised by this much; seed: of the random drifts and jitter."""

    drift_m_s: tuple[float, float] = (0.05, 0.15)
    jitter_m: float = 0.01
    float_m: float = 0.03
    seed: int = 0


def planted(ankle: np.ndarray) -> np.ndarray:
    """Frames ``(F,)`` where an ankle track ``(F, 3)`` stands still next to a neighbouring frame."""
    step = np.linalg.norm(np.diff(ankle, axis=0), axis=1) < STILL_M
    out = np.zeros(len(ankle), dtype=bool)
    out[1:] |= step
    out[:-1] |= step
    return out


def _drift(times: np.ndarray, still: np.ndarray, speeds, rng) -> np.ndarray:
    """Horizontal offsets ``(F, 3)`` of one foot: a steady drift through each contact, zero at its
    middle, eased from one contact's last offset to the next one's first between them."""
    n = len(times)
    offset = np.zeros((n, 3))
    spans = runs(still)
    if len(spans) == 0:
        return offset
    ends = []
    for a, b in spans:
        angle = rng.uniform(0.0, 2.0 * np.pi)
        v = rng.uniform(*speeds) * np.array([np.cos(angle), np.sin(angle), 0.0])
        mid = 0.5 * (times[a] + times[b - 1])
        offset[a:b] = np.outer(times[a:b] - mid, v)
        ends.append((a, b - 1))
    offset[:ends[0][0]] = offset[ends[0][0]]
    offset[ends[-1][1] + 1:] = offset[ends[-1][1]]
    for (_a, e), (s, _b) in zip(ends[:-1], ends[1:]):
        if s - e > 1:
            u = smoothstep((np.arange(e + 1, s) - e) / (s - e))[:, None]
            offset[e + 1:s] = (1 - u) * offset[e] + u * offset[s]
    return offset


def add_footskate(skeleton: Skeleton, rigmap: RigMap, clip: Clip, skate: Footskate | None = None) -> Clip:
    """``clip`` with its planted feet drifting, jittering and the whole motion floating (see the
    module's docstring); a Clip of every bone of ``skeleton``."""
    k = skate or Footskate()
    rng = np.random.default_rng(k.seed)
    feet = read_feet(skeleton, rigmap)
    names = list(skeleton.names)
    f = clip.frame_count
    locations = np.zeros((f, len(names), 3))
    rotations = np.zeros((f, len(names), 4))
    rotations[..., 0] = 1.0
    for j, name in enumerate(clip.bone_names):
        if skeleton.has(name):
            locations[:, skeleton.index(name)] = clip.locations[:, j]
            rotations[:, skeleton.index(name)] = clip.rotations[:, j]
    pose = skeleton.fk(locations, rotations)
    times = (clip.frames - clip.frames[0]) / clip.fps
    targets = []
    for leg in feet.legs:
        ankle = pose[:, leg.foot, :3, 3]
        moved = ankle + _drift(times, planted(ankle), k.drift_m_s, rng)
        moved += rng.uniform(-k.jitter_m, k.jitter_m, (f, 3))
        foot = pose[:, leg.foot, :3, :3]
        targets.append((foot.copy(), moved + np.array([0.0, 0.0, k.float_m])))
    move_pelvis(skeleton, locations, pose, feet.hips, np.tile([0.0, 0.0, k.float_m], (f, 1)))
    for leg, (foot, ankle) in zip(feet.legs, targets):
        solve_leg(skeleton, leg, (locations, rotations), pose, (mat3_to_quat(foot), ankle), np.full(f, HARD_REACH),
                  feet.forward)
    key_loc = np.zeros(len(names), bool)
    key_loc[feet.hips] = True
    out = Clip(names, clip.frames.copy(), clip.fps, locations, rotations, key_location=key_loc,
               generator=clip.generator)
    return out.with_continuity()
