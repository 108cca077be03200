"""Gait statistics of a posed walk, to set beside published norms (``bench/path_walk_gait_stats.py``,
the Blender tests): step length per leg length, knee flexion in early stance, arm swing.

Everything is measured from armature-space pose matrices — the engine's FK or Blender's evaluated
``pose_bone.matrix`` — given as ``(F, B, 4, 4)`` or a {bone: (F, 4, 4)} dict, never from the gait's
plan:

* heel strikes: the frames where a foot's heel sole point comes within ``CONTACT_M`` of the ground
  after being above it; step length: the distance between successive heel strikes of the two feet
  along the direction the hips travel (gait analysis' step length, not the feet's diagonal);
* knee flexion: 180° minus the angle at the knee between hip → knee and knee → ankle (0 = straight);
  early stance: its peak within the first :data:`EARLY_STANCE` of a gait cycle after a heel strike
  (loading response, Perry & Burnfield 2010, ch. 4);
* arm swing: the upper arm's angle from the trunk's downward axis in its sagittal plane (+ forward),
  and its range (max − min) per gait cycle; the same for the whole arm (shoulder → wrist).

Only the steady part of the walk is used: the first two and the last two steps are left out.
"""

from __future__ import annotations

import numpy as np

from .metrics import bone_pose, sole_points

CONTACT_M = 0.003
EARLY_STANCE = 0.2  # fraction of a gait cycle after heel strike that is "early stance"


def heel_strikes(skeleton, pose, char, ground) -> dict:
    """{side: frame indices} where the foot's heel touches down."""
    out = {}
    for side in ("L", "R"):
        heel = sole_points(skeleton, pose, char, side)[:, 0]
        gz, _, _ = ground.height(heel[:, :2])
        down = heel[:, 2] - np.asarray(gz) < CONTACT_M
        out[side] = np.flatnonzero(down[1:] & ~down[:-1]) + 1
    return out


def _steady(frames: np.ndarray, skip: int = 2) -> np.ndarray:
    return frames[skip:len(frames) - skip] if len(frames) > 2 * skip + 1 else frames


def gait_statistics(skeleton, rigmap, pose, char, ground, fps: float) -> dict:
    """The figures of the module docstring (plain floats; NaN where a figure could not be measured).

    step_length_per_leg, cadence_spm (from the heel strikes), knee_early_stance_deg (mean peak),
    arm_swing_deg (upper arm range), arm_swing_whole_deg (shoulder → wrist range).
    """
    strikes = heel_strikes(skeleton, pose, char, ground)
    events = sorted((int(f), side) for side, fr in strikes.items() for f in _steady(fr))
    heel = {s: sole_points(skeleton, pose, char, s)[:, 0] for s in ("L", "R")}
    hips = bone_pose(pose, char.hips)[:, :3, 3]
    steps, times = [], []
    for (f0, s0), (f1, s1) in zip(events[:-1], events[1:]):
        if s0 != s1:  # along the direction the hips travel over the step (not across: the feet's width)
            way = hips[f1, :2] - hips[f0, :2]
            way /= max(float(np.linalg.norm(way)), 1e-9)
            steps.append(float(np.dot(heel[s1][f1, :2] - heel[s0][f0, :2], way)))
            times.append((f1 - f0) / fps)
    cycle = 2 * float(np.median(times)) if times else np.nan
    out = {
        "step_length_per_leg": float(np.mean(steps) / char.leg_length) if steps else np.nan,
        "cadence_spm": float(60.0 / np.mean(times)) if times else np.nan,
        "knee_early_stance_deg": _knee_early_stance(pose, char, strikes, cycle, fps),
    }
    out.update(_arm_swing(skeleton, rigmap, pose, char, strikes))
    return out


def knee_flexion_deg(pose, char, side: str) -> np.ndarray:
    """(F,) knee flexion (degrees, 0 = straight leg)."""
    hip = bone_pose(pose, char.thigh[side])[:, :3, 3]
    knee = bone_pose(pose, char.shin[side])[:, :3, 3]
    ankle = bone_pose(pose, char.foot[side])[:, :3, 3]
    a, b = knee - hip, ankle - knee
    cos = np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def _knee_early_stance(pose, char, strikes, cycle: float, fps: float) -> float:
    if not np.isfinite(cycle):
        return np.nan
    window = max(int(round(EARLY_STANCE * cycle * fps)), 1)
    peaks = []
    for side in ("L", "R"):
        flex = knee_flexion_deg(pose, char, side)
        for f in _steady(strikes[side]):
            if f + window < len(flex):
                peaks.append(flex[f:f + window + 1].max())
    return float(np.mean(peaks)) if peaks else np.nan


def _arm_swing(skeleton, rigmap, pose, char, strikes) -> dict:
    """Upper-arm and whole-arm sagittal ranges (degrees), mean over the steady cycles of both arms."""
    out = {"arm_swing_deg": np.nan, "arm_swing_whole_deg": np.nan}
    first = min((_steady(f)[0] for f in strikes.values() if len(f)), default=None)
    last = max((_steady(f)[-1] for f in strikes.values() if len(f)), default=None)
    if first is None or last <= first:
        return out
    hips = bone_pose(pose, char.hips)
    rest_inv = np.linalg.inv(skeleton.matrix_local[char.hips][:3, :3])
    rot = hips[:, :3, :3] @ rest_inv
    fwd = np.einsum("fij,j->fi", rot, char.forward)
    fwd[:, 2] = 0.0
    fwd /= np.linalg.norm(fwd, axis=-1, keepdims=True)
    ranges = {"arm_swing_deg": [], "arm_swing_whole_deg": []}
    for side in ("L", "R"):
        names = [rigmap.get(f"{r}.{side}") for r in ("upper_arm", "forearm", "hand")]
        if not all(n and skeleton.has(n) for n in names):
            continue
        ua, fa, hand = (skeleton.index(n) for n in names)
        shoulder = bone_pose(pose, ua)[:, :3, 3]
        for key, tip in (("arm_swing_deg", bone_pose(pose, fa)[:, :3, 3]),
                         ("arm_swing_whole_deg", bone_pose(pose, hand)[:, :3, 3])):
            v = tip - shoulder
            angle = np.degrees(np.arctan2(np.sum(v * fwd, axis=-1), -v[:, 2]))[first:last]
            ranges[key].append(np.ptp(angle))
    return {k: float(np.mean(v)) if v else np.nan for k, v in ranges.items()}
