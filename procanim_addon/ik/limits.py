"""Human joint limits for an arm chain, built from the rest pose (no assumption about bone roll).

Each joint gets three axes in its bone's rest frame (see :mod:`.chain`):

    a0  flexion:   positive swings the bone toward the character's front (``Y × forward``)
    a1  abduction: positive swings the bone toward ``away`` (outward for the arm, up for the clavicle)
    a2  twist:     the bone's own +Y

so "the elbow bends the right way" is ``θ0(forearm) >= 0`` and "no hyperextension" is the elbow's
lower bound 0 — whatever roll the rig's bones have. Ranges are degrees (anatomical, RECON:
textbook ranges of motion trimmed to what reads as natural; parameters of :func:`arm_limits`).
"""

from __future__ import annotations

import numpy as np

from .chain import JointLimit

# degrees: (flexion lo, hi), (abduction lo, hi), (twist lo, hi) — RECON, see module docstring
CLAVICLE_DEG = ((-15.0, 25.0), (-10.0, 30.0), (-10.0, 10.0))
SHOULDER_DEG = ((-50.0, 170.0), (-60.0, 160.0), (-80.0, 80.0))
ELBOW_DEG = ((0.0, 150.0), (0.0, 0.0), (-85.0, 85.0))
WRIST_DEG = ((-75.0, 75.0), (-35.0, 35.0), (-15.0, 15.0))
OTHER_DEG = ((-30.0, 30.0), (-30.0, 30.0), (-30.0, 30.0))


def anatomical_limit(rest_rotation: np.ndarray, forward, away, ranges_deg) -> JointLimit:
    """Limit for a bone with armature-space rest rotation ``rest_rotation (3, 3)``.

    ``forward`` and ``away`` are armature-space directions; ranges as in the module docstring.
    """
    r = np.asarray(rest_rotation, float)
    to_local = r.T
    y = np.array([0.0, 1.0, 0.0])
    f = to_local @ np.asarray(forward, float)
    f = f - y * (f @ y)
    if np.linalg.norm(f) < 1e-6:  # bone points along forward: use 'away' to pick the flexion plane
        f = to_local @ np.cross(np.asarray(away, float), np.asarray(forward, float))
        f = f - y * (f @ y)
    a0 = np.cross(y, f)
    a0 /= np.linalg.norm(a0)
    a1 = np.cross(y, a0)  # a0, a1, a2 = y is right-handed
    # a small turn about a1 moves +Y along a1 × y; make positive mean "toward away"
    w = to_local @ np.asarray(away, float)
    (f_lo, f_hi), (b_lo, b_hi), (t_lo, t_hi) = ranges_deg
    if np.cross(a1, y) @ w < 0:
        b_lo, b_hi = -b_hi, -b_lo
    lower = np.radians([f_lo, b_lo, t_lo])
    upper = np.radians([f_hi, b_hi, t_hi])
    return JointLimit(np.stack([a0, a1, y]), lower, upper)


def arm_limits(skeleton, bones, forward, left, side: str, ranges_deg=None) -> list[JointLimit]:
    """Human limits for an arm chain ``bones`` = [clavicle?, upper arm, forearm, hand?] of ``side``
    ('L' or 'R').

    The chain is read from its tip: the last bone is the hand, the one before the forearm, the one
    before that the upper arm, any bone above is a clavicle. ``ranges_deg`` may override the
    defaults by key 'clavicle', 'shoulder', 'elbow', 'wrist'.
    """
    ranges = {"clavicle": CLAVICLE_DEG, "shoulder": SHOULDER_DEG, "elbow": ELBOW_DEG, "wrist": WRIST_DEG}
    if ranges_deg:
        ranges.update(ranges_deg)
    forward = np.asarray(forward, float)
    outward = np.asarray(left, float) * (1.0 if side.upper().startswith("L") else -1.0)
    up = np.array([0.0, 0.0, 1.0])
    n = len(bones)
    roles = ["wrist", "elbow", "shoulder"] + ["clavicle"] * max(0, n - 3)
    roles = roles[:n][::-1]
    out = []
    for b, role in zip(bones, roles):
        rest = skeleton.matrix_local[b][:3, :3]
        away = up if role == "clavicle" else outward
        out.append(anatomical_limit(rest, forward, away, ranges[role]))
    return out
