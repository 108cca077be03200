"""The paper's Table 3 for one bake, measured on the engine FK of the produced clips.

During the shake phase (frames where both characters are in S): the distance between the two grip
points (which the model makes coincide), and each grip point to the shared target — mean, std and
max in cm (world space) — plus each character's solver time per solved frame (ms).
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..metrics import target_error


def grip_path(ch, clip) -> np.ndarray:
    """World grip points ``(F, 3)`` from a clip, through the skeleton's FK (what Blender will show)."""
    pose = ch.skeleton.fk(clip.locations, clip.rotations)
    return ch.grip_world(pose)


def shake_report(ci, cp, clip_i, clip_p, phase_i, phase_p, target, time_i, time_p) -> dict:
    """Table-3 figures (flat keys ``both_/initiator_/partner_`` + ``mean_cm/std_cm/max_cm``, and
    ``time_ms_initiator/partner``) for the shake phase, plus per-frame arrays under 'curves' (world
    grip points of every frame, and the Figure-9 error curves over the shake frames)."""
    gi, gp = grip_path(ci, clip_i), grip_path(cp, clip_p)
    shake = (phase_i == "S") & (phase_p == "S")
    out = {"solver_initiator": ci.solver, "solver_partner": cp.solver, "shake_frames": int(shake.sum())}
    solved_i, solved_p = phase_i != "N", phase_p != "N"
    out["time_ms_initiator"] = float(np.mean(time_i[solved_i]) * 1000) if solved_i.any() else 0.0
    out["time_ms_partner"] = float(np.mean(time_p[solved_p]) * 1000) if solved_p.any() else 0.0
    if shake.any():
        for key, a, b in (("both", gi, gp), ("initiator", gi, target), ("partner", gp, target)):
            stats = target_error(a[shake], b[shake])
            for k, v in stats.items():
                out[f"{key}_{k}"] = float(v)
    out["curves"] = {
        "frames_in_shake": np.nonzero(shake)[0].tolist(),
        "grip_initiator": gi.tolist(), "grip_partner": gp.tolist(),
        # the paper's Figure 9: per shake frame, cm
        "error_both_cm": (np.linalg.norm(gi - gp, axis=-1)[shake] * 100).tolist(),
        "error_initiator_cm": (np.linalg.norm(gi - target, axis=-1)[shake] * 100).tolist(),
        "error_partner_cm": (np.linalg.norm(gp - target, axis=-1)[shake] * 100).tolist(),
    }
    return out


def alignment_report(ch, clip, wanted_quats, who: str) -> dict:
    """How far the hand's world rotation strays from the one the phase asked for (degrees), over
    every frame with a rotation goal (dummy, approach, shake, and retreat until the joints ease to
    rest): the paper's CCD lost the hands' alignment at the end of approach and start of retreat."""
    have = ~np.any(np.isnan(wanted_quats), axis=-1)
    if not have.any():
        return {f"align_max_deg_{who}": 0.0, f"align_mean_deg_{who}": 0.0}
    pose = ch.skeleton.fk(clip.locations, clip.rotations)
    got = tf.mat3_to_quat(np.einsum("ij,fjk->fik", ch.world_rot, pose[:, ch.hand, :3, :3]))
    err = np.degrees(_angle_between(got[have], wanted_quats[have]))
    return {f"align_max_deg_{who}": float(err.max()), f"align_mean_deg_{who}": float(err.mean())}


def _angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle (rad) of the rotation taking quaternions ``a`` to ``b``, ``2 atan2(|v|, |w|)`` of
    ``a⁻¹ b``: exact down to 0 (an arccos of the dot product loses half the digits near 0)."""
    rel = tf.quat_mul(tf.quat_conj(a), b)
    return 2.0 * np.arctan2(np.linalg.norm(rel[..., 1:], axis=-1), np.abs(rel[..., 0]))
