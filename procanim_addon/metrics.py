"""Quality measures shared by every generator (foot skate, ground penetration, bone stretch, target
error, rotation jumps); the project's definitions, in docs/. Units: cm, cm/s, %."""

from __future__ import annotations

import numpy as np


def foot_skate(points: np.ndarray, contact: np.ndarray, fps: float) -> dict:
    """Horizontal speed of a foot point while in contact.

    points ``(F, 3)`` m; contact ``(F,)`` bool (a step between frames f and f+1 counts when the foot
    is in contact at both). Returns mean and 95th percentile (cm/s) and the fraction of contact
    steps faster than 0.5 m/s.
    """
    p = np.asarray(points, float)
    c = np.asarray(contact, bool)
    both = c[1:] & c[:-1]
    if p.shape[0] < 2 or not np.any(both):
        return {"skate_mean_cm_s": 0.0, "skate_p95_cm_s": 0.0, "skate_frac_fast": 0.0, "contact_steps": 0}
    v = np.linalg.norm(np.diff(p[:, :2], axis=0), axis=-1) * fps
    v = v[both]
    return {
        "skate_mean_cm_s": float(np.mean(v) * 100),
        "skate_p95_cm_s": float(np.percentile(v, 95) * 100),
        "skate_frac_fast": float(np.mean(v > 0.5)),
        "contact_steps": int(v.size),
    }


def penetration(depth_below: np.ndarray) -> dict:
    """Depth of points below the ground (m, positive = below) → mean/max cm, fraction > 1 cm."""
    d = np.maximum(np.asarray(depth_below, float), 0.0)
    if d.size == 0:
        return {"penetration_mean_cm": 0.0, "penetration_max_cm": 0.0, "penetration_frac_1cm": 0.0}
    return {
        "penetration_mean_cm": float(np.mean(d) * 100),
        "penetration_max_cm": float(np.max(d) * 100),
        "penetration_frac_1cm": float(np.mean(d > 0.01)),
    }


def bone_length_error(skeleton, pose: np.ndarray, bones=None) -> float:
    """Max |posed head-to-child-head distance − rest distance| / rest distance over frames (%).

    Measured on connected joints (each bone's head to its parent's head), which is what a
    position-based solver can stretch.
    """
    idx = [i for i in (range(len(skeleton)) if bones is None else bones) if skeleton.parents[i] >= 0]
    if not idx:
        return 0.0
    par = skeleton.parents[idx]
    rest = np.linalg.norm(skeleton.heads[idx] - skeleton.heads[par], axis=-1)
    ok = rest > 1e-6
    heads = pose[..., :3, 3]  # (F, B, 3); index bones after slicing so the frame axis stays first
    posed = np.linalg.norm(heads[:, idx] - heads[:, par], axis=-1)
    err = np.abs(posed[:, ok] - rest[ok]) / rest[ok]
    return float(np.max(err) * 100) if err.size else 0.0


def target_error(a: np.ndarray, b: np.ndarray) -> dict:
    """Distance between two point tracks ``(F, 3)`` (m) → mean/std/max in cm."""
    d = np.linalg.norm(np.asarray(a, float) - np.asarray(b, float), axis=-1) * 100
    if d.size == 0:
        return {"mean_cm": 0.0, "std_cm": 0.0, "max_cm": 0.0}
    return {"mean_cm": float(np.mean(d)), "std_cm": float(np.std(d)), "max_cm": float(np.max(d))}


def max_angular_jump(rotations: np.ndarray) -> float:
    """Largest frame-to-frame rotation of any bone (degrees); rotations ``(F, B, 4)``."""
    q = np.asarray(rotations, float)
    if q.shape[0] < 2:
        return 0.0
    d = np.abs(np.sum(q[1:] * q[:-1], axis=-1)) / (np.linalg.norm(q[1:], axis=-1) * np.linalg.norm(q[:-1], axis=-1))
    return float(np.degrees(np.max(2 * np.arccos(np.clip(d, -1, 1)))))
