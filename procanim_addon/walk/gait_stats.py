"""Gait statistics of a posed walk, to set beside published norms (``bench/path_walk_gait_stats.py``,
the Blender tests): step length per leg length, knee flexion in early stance, arm swing.

Everything is measured from armature-space pose matrices — the engine's FK or Blender's evaluated
``pose_bone.matrix`` — given as ``(F, B, 4, 4)`` or a {bone: (F, 4, 4)} dict, never from the gait's
plan:

* heel strikes: the frames where a foot's heel sole point comes within ``CONTACT_M`` of the ground
  after being above it; step length: the distance between successive heel strikes of the two feet
  along the direction the hips travel (gait analysis' step length, not the feet's diagonal);
* knee flexion: 180° minus the angle at the knee between hip → knee and knee → ankle (0 = straight),
  per gait cycle of each leg (Perry and Burnfield 2010, Gait Analysis, ch. 4, the phases): at
  initial contact (the heel strike's frame); its peak in loading response (within the first
  :data:`EARLY_STANCE` of the cycle); its least in mid and late stance (:data:`LATE_STANCE` of the
  cycle) and its mean in terminal stance (:data:`TERMINAL_STANCE`); at toe off (the last frame the
  toe tip touches); its peak in swing (toe off to the next heel strike);
* arm swing: the upper arm's angle from the trunk's downward axis in its sagittal plane (+ forward),
  and its range (max − min) per gait cycle; the same for the whole arm (shoulder → wrist).

Only the steady part of the walk is used: the first two and the last two steps are left out.
"""

from __future__ import annotations

import numpy as np

from .metrics import bone_pose, sole_points

CONTACT_M = 0.003
EARLY_STANCE = 0.2  # fraction of a gait cycle after heel strike that is "early stance"
LATE_STANCE = (0.2, 0.5)  # mid and late stance: from the end of loading response to the other heel strike
TERMINAL_STANCE = (0.3, 0.45)  # terminal stance, before pre-swing flexion begins (Perry and Burnfield: 31–50 %)


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

    step_length_per_leg, cadence_spm (from the heel strikes); the knee (means over the steady gait
    cycles of both legs, degrees): knee_contact_deg, knee_early_stance_deg (loading-response peak),
    knee_stance_min_deg (mid/late stance), knee_terminal_stance_deg (mean), knee_toe_off_deg,
    knee_swing_peak_deg; arm_swing_deg
    (upper arm range), arm_swing_whole_deg (shoulder → wrist range).
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
    }
    out.update(knee_statistics(skeleton, pose, char, ground, strikes, cycle, fps))
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


def toe_offs(skeleton, pose, char, ground) -> dict:
    """{side: frame indices}: the last frame of each stance the foot's toe tip touches the ground."""
    out = {}
    for side in ("L", "R"):
        tip = sole_points(skeleton, pose, char, side)[:, 2]
        gz, _, _ = ground.height(tip[:, :2])
        down = tip[:, 2] - np.asarray(gz) < CONTACT_M
        out[side] = np.flatnonzero(down[:-1] & ~down[1:])
    return out


def knee_statistics(skeleton, pose, char, ground, strikes, cycle: float, fps: float) -> dict:
    """The knee figures of :func:`gait_statistics` (degrees; NaN when no steady cycle was found)."""
    keys = ("knee_contact_deg", "knee_early_stance_deg", "knee_stance_min_deg", "knee_terminal_stance_deg",
            "knee_toe_off_deg", "knee_swing_peak_deg")
    if not np.isfinite(cycle):
        return dict.fromkeys(keys, np.nan)
    n = cycle * fps
    early = max(int(round(EARLY_STANCE * n)), 1)
    late = (int(round(LATE_STANCE[0] * n)), int(round(LATE_STANCE[1] * n)))
    term = (int(round(TERMINAL_STANCE[0] * n)), int(round(TERMINAL_STANCE[1] * n)))
    offs = toe_offs(skeleton, pose, char, ground)
    got = {k: [] for k in keys}
    for side in ("L", "R"):
        flex = knee_flexion_deg(pose, char, side)
        hs = strikes[side]
        for f in _steady(hs):
            nxt = hs[hs > f]
            off = offs[side][offs[side] > f]
            if not len(nxt) or not len(off) or off[0] >= nxt[0] or nxt[0] >= len(flex):
                continue
            got["knee_contact_deg"].append(flex[f])
            got["knee_early_stance_deg"].append(flex[f:f + early + 1].max())
            got["knee_stance_min_deg"].append(flex[f + late[0]:f + late[1] + 1].min())
            got["knee_terminal_stance_deg"].append(flex[f + term[0]:f + term[1] + 1].mean())
            got["knee_toe_off_deg"].append(flex[off[0]])
            got["knee_swing_peak_deg"].append(flex[off[0]:nxt[0] + 1].max())
    return {k: float(np.mean(v)) if v else np.nan for k, v in got.items()}


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
