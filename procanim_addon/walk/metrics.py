"""Quality figures of a path walk, measured by FK of the finished clip (not of the plan).

Sole points (heel, ball, toe tip) are carried by the posed foot and toe bones; a point counts as
in contact on the frames it lies within ``CONTACT_TOL_M`` of the ground (plus its rest height above
the sole: the toe tip of a foot without a toe bone is the foot bone's tail, which counts once) —
judged from the pose alone, not from the gait's plan, so the same measure applies to a pose
evaluated in Blender (:func:`contact_quality`). Reported (plain floats):

    skate_mean_cm_s, skate_p95_cm_s   horizontal speed of contact points (cm/s)
    penetration_max_cm                deepest sole point below the ground (cm)
    pelvis_deviation_mean_cm / _max_cm   hips head to the given path, horizontal (cm)
    com_vertical_travel_cm            mean per-step range of the pelvis height on level steps (cm)
    step_count, cadence_spm           heel strikes after the start; steps per minute while walking
    max_joint_jump_deg                largest frame-to-frame bone rotation (pops)
    heading_error_mean_deg / _max_deg pelvis heading against the path tangent while walking
"""

from __future__ import annotations

import numpy as np

from .. import metrics as common
from ..progress import ProgressFn, no_progress
from .character import read_character
from .path import deviation_from_polyline
from .pose import fk_of, mat_const, vec_const


def bone_pose(pose, i: int) -> np.ndarray:
    """(F, 4, 4) of bone ``i`` from armature-space pose matrices ``(F, B, 4, 4)`` or a
    {bone: (F, 4, 4)} dict (:func:`~.pose.fk_of`)."""
    return pose[i] if isinstance(pose, dict) else pose[:, i]


def sole_points(skeleton, pose, char, side):
    """(F, 3, 3) heel, ball, tip positions from armature-space pose matrices (see :func:`bone_pose`)."""
    g = char.feet[side]
    fi = char.foot[side]
    ti = char.toe[side] if char.toe[side] is not None else fi
    inv_f, inv_t = np.linalg.inv(skeleton.matrix_local[[fi, ti]])
    loc = lambda inv, p: inv[:3, :3] @ p + inv[:3, 3]  # noqa: E731
    pf, pt = bone_pose(pose, fi), bone_pose(pose, ti)
    heel = vec_const(pf[:, :3, :3], loc(inv_f, g.heel)) + pf[:, :3, 3]
    ball = vec_const(pt[:, :3, :3], loc(inv_t, g.ball)) + pt[:, :3, 3]
    tip = vec_const(pt[:, :3, :3], loc(inv_t, g.tip)) + pt[:, :3, 3]
    return np.stack([heel, ball, tip], axis=1)


CONTACT_TOL_M = 0.003


def contact_quality(skeleton, rigmap, pose: np.ndarray, ground, fps: float, tol: float = CONTACT_TOL_M,
                    char=None) -> dict:
    """Skate and penetration of the soles of any posed walk, from armature-space pose matrices
    ``(F, B, 4, 4)`` or a {bone: (F, 4, 4)} dict (the engine's FK or Blender's evaluated
    ``pose_bone.matrix``).

    Returns skate_mean_cm_s, skate_p95_cm_s, skate_frac_fast (> 0.5 m/s), contact_steps,
    penetration_max_cm / _mean_cm / _frac_1cm.
    """
    if char is None:
        char = read_character(skeleton, rigmap)
    speeds, depths = [], []
    for side in ("L", "R"):
        g = char.feet[side]
        pts = sole_points(skeleton, pose, char, side)  # (F, 3, 3)
        rest = np.array([g.heel[2], g.ball[2], g.tip[2]]) - char.rest_ground_z  # heights above the sole
        if char.toe[side] is None:  # the ball is the tip
            pts, rest = pts[:, ::2], rest[::2]
        gz, _, hit = ground.height(pts.reshape(-1, 3)[:, :2])
        gz = np.where(hit, gz, -np.inf).reshape(pts.shape[:2])
        gap = pts[..., 2] - gz - rest
        on = np.abs(gap) < tol
        both = on[1:] & on[:-1]
        v = np.linalg.norm(np.diff(pts[..., :2], axis=0), axis=-1) * fps
        speeds.append(v[both])
        depths.append(np.where(np.isfinite(gap), -gap, 0.0).ravel())
    v = np.concatenate(speeds)
    out = {
        "skate_mean_cm_s": float(np.mean(v) * 100) if v.size else 0.0,
        "skate_p95_cm_s": float(np.percentile(v, 95) * 100) if v.size else 0.0,
        "skate_frac_fast": float(np.mean(v > 0.5)) if v.size else 0.0,
        "contact_steps": int(v.size),
    }
    out.update(common.penetration(np.concatenate(depths)))
    return out


def walk_metrics(skeleton, clip, plan, t, s_frames, object_delta=None, progress: ProgressFn = no_progress) -> dict:
    """The figures above for the ``clip`` of the walk ``plan`` (:class:`~.gait.WalkPlan`) at clip
    times ``t`` (F,) (s); ``s_frames`` (F,) is the COM's progression along the path per frame (m),
    used to look up the nearby part of the path; ``object_delta`` (F, 4, 4) the object's motion
    when the walk moves the object; ``progress`` gets the fraction done."""
    char, ground, path, steps, tl = plan.char, plan.ground, plan.path, plan.steps, plan.tl
    needed = [char.hips] + [b for side in ("L", "R") for b in (char.foot[side], char.toe[side]) if b is not None]
    pose = fk_of(skeleton, clip.locations, clip.rotations, needed)
    if object_delta is not None:
        pose = {b: object_delta @ m for b, m in pose.items()}
    fps = clip.fps
    progress(0.2)
    quality = contact_quality(skeleton, None, pose, ground, fps, char=char)
    progress(0.5)
    hips = pose[char.hips][:, :3, 3]
    dev = deviation_from_polyline(hips, path.raw, s_frames)
    progress(0.9)
    n = len(steps) - 1
    hs = tl.heel_strike
    # each level step's frames are a run of t: hs[i] ≤ t < hs[i + 1]
    i = np.array([i for i in range(2, n - 1) if steps.mode_v[i] == "plane" and steps.mode_v[i - 1] == "plane"], int)
    a, b = np.searchsorted(t, hs[i]), np.searchsorted(t, hs[i + 1])
    i_ok = np.flatnonzero(b - a > 2)
    travel = []
    if len(i_ok):
        z = np.append(hips[:, 2], 0.0)
        ab = np.stack([a[i_ok], b[i_ok]], axis=-1).ravel()
        travel = list(np.maximum.reduceat(z, ab)[::2] - np.minimum.reduceat(z, ab)[::2])
    walking = (t >= hs[2]) & (t <= hs[n - 1])
    rest_inv = np.linalg.inv(skeleton.matrix_local[char.hips][:3, :3])
    fwd = vec_const(mat_const(pose[char.hips][:, :3, :3], rest_inv), char.forward)
    tan = path.tangent_at(s_frames[walking])
    f = fwd[walking]
    cross = tan[:, 0] * f[:, 1] - tan[:, 1] * f[:, 0]
    err = np.degrees(np.abs(np.arctan2(cross, np.sum(tan[:, :2] * f[:, :2], axis=-1)))) if len(f) else np.zeros(1)
    return {
        "skate_mean_cm_s": quality["skate_mean_cm_s"],
        "skate_p95_cm_s": quality["skate_p95_cm_s"],
        "skate_frac_fast": quality["skate_frac_fast"],
        "penetration_max_cm": quality["penetration_max_cm"],
        "pelvis_deviation_mean_cm": float(np.mean(dev) * 100),
        "pelvis_deviation_max_cm": float(np.max(dev) * 100),
        "com_vertical_travel_cm": float(np.mean(travel) * 100) if travel else float("nan"),
        "step_count": int(n - 1),
        "cadence_spm": float(60.0 * (n - 1) / max(hs[n] - hs[1], 1e-9)),
        "max_joint_jump_deg": common.max_angular_jump(clip.rotations[:, clip.key_rotation]),
        "heading_error_mean_deg": float(np.mean(err)),
        "heading_error_max_deg": float(np.max(err)),
    }
