"""A character's own frame: which way it faces, how big it is — read from the rest pose; and the one
check that an object's transform carries a uniform, positive scale."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import InputError
from .rig_roles import RigMap
from .skeleton import Skeleton

STANDING = 0.5  # a standing rig's hips are at least half its hip-to-ankle distance above its soles
#: what to do when a rig does not stand up the scene's Z axis (its armature's axes are turned)
AXES_HINT = ("If the character lies or stands on its head in the viewport, its armature's axes are turned "
             "(a Y-up import whose object was not rotated to stand): rotate the armature object until the "
             "character stands upright (90° about X for a Y-up rig), then try again.")


@dataclass
class CharacterFrame:
    """Armature-space directions (unit vectors) and sizes (m) of a character in its rest pose.

    forward:    horizontal direction the character faces, from the feet → toes (−Y on most rigs)
    up:         +Z (ProcAnim works Z-up)
    left:       up × forward … the character's own left
    leg_length: rest hip height above the soles (m), the scale of every generator
    hip_width:  distance between the two hip joints (thigh heads), m
    ground_z:   height of the soles in the rest pose (lowest foot/toe point), m
    """

    forward: np.ndarray
    up: np.ndarray
    left: np.ndarray
    leg_length: float
    hip_width: float
    ground_z: float


def character_frame(skeleton: Skeleton, rigmap: RigMap) -> CharacterFrame:
    """Forward from feet→toes (averaged over both sides), scale from the legs.

    Raises :class:`InputError` when the rest pose gives no usable direction (feet pointing up).
    """
    rigmap.require(["thigh.L", "thigh.R", "foot.L", "foot.R"])
    heads, tails = skeleton.heads, skeleton.tails
    fwd = np.zeros(3)
    low = []
    for side in "LR":
        foot = rigmap.index(skeleton, f"foot.{side}")
        tip = tails[foot]
        toe = rigmap.get(f"toe.{side}")
        if toe and skeleton.has(toe):
            tip = tails[skeleton.index(toe)]
            low.append(tip[2])
        fwd += tip - heads[foot]
        low += [heads[foot][2], tails[foot][2]]
    fwd[2] = 0.0
    n = np.linalg.norm(fwd)
    if n < 1e-6:
        raise InputError(
            f"Cannot tell which way '{rigmap.rig_name or 'the rig'}' faces: its feet do not point forward along "
            f"the floor in the rest pose. {AXES_HINT}"
        )
    fwd /= n
    up = np.array([0.0, 0.0, 1.0])
    left = np.cross(up, fwd)
    ground_z = float(min(low))
    thigh_l, thigh_r = rigmap.index(skeleton, "thigh.L"), rigmap.index(skeleton, "thigh.R")
    hip = 0.5 * (heads[thigh_l] + heads[thigh_r])
    leg = float(hip[2] - ground_z)
    reach = min(float(np.linalg.norm(heads[rigmap.index(skeleton, f"foot.{s}")] - heads[t])) for s, t in
                (("L", thigh_l), ("R", thigh_r)))
    if leg <= STANDING * reach:
        raise InputError(f"'{rigmap.rig_name or 'The rig'}' does not stand up the scene's Z axis: its hips are not "
                         f"above its feet in the rest pose. {AXES_HINT}")
    return CharacterFrame(fwd, up, left, leg, float(np.linalg.norm(heads[thigh_l] - heads[thigh_r])), ground_z)


def uniform_scale(matrix, what: str) -> tuple[float, np.ndarray]:
    """The uniform scale and the rotation ``(3, 3)`` of an object's matrix (4×4 or 3×3).

    The one check every generator and operator uses: raises :class:`InputError` naming ``what``
    (e.g. ``"'Ann'"`` or ``"The partner"``) when the matrix is not finite, or its scale is zero,
    negative (mirrored) or differs between axes by more than 1e-4 relative.
    """
    m = np.asarray(matrix, float)[:3, :3]
    scales = np.linalg.norm(m, axis=0) if np.all(np.isfinite(m)) else np.full(3, np.nan)
    bad = not np.all(np.isfinite(scales)) or np.any(scales < 1e-9)
    if bad or np.ptp(scales) > 1e-4 * scales.max() or np.linalg.det(m) < 0:
        got = ", ".join(f"{s:.3g}" for s in scales) + (", mirrored" if not bad and np.linalg.det(m) < 0 else "")
        raise InputError(f"{what} must have a uniform, positive scale (it has {got}); "
                         "apply its scale first (Ctrl+A ▸ Scale).")
    return float(scales.mean()), m / scales
