"""Leg reach: how high the pelvis may be, and where a swinging ankle may go.

The legs are posed by two-bone IK from the pelvis to the ankles the feet plan
(Tsutsuguchi et al. 2000: "hip, knee and ankle angles follow from C and the ankle position"). The
dynamics of the COM do not know the legs' length, so ProcAnim keeps the hip–ankle distance of
every weight-bearing leg under ``knee_reach`` × the leg (the pelvis is lowered where needed) and
draws a swinging ankle that is out of reach smoothly toward the hip — on level ground with a ramp so
narrow that the landing leg reaches straight for its heel strike. These are ProcAnim's choices (the
paper assumes the legs reach); the widths below were tuned on the demo's rigs.
"""

from __future__ import annotations

import numpy as np

from .character import SIDES
from .pose import vec_const

EARLY_SWING = 0.0  # the pelvis also lets the swing leg reach its ankle before this fraction of the swing
LATE_SWING = 0.75  # … and after this one (so the foot lands without a jump)
LIFT_KNEE_M = 0.01  # width of the smooth ramp that lifts a swinging ankle into reach
# … onto a footstep of steady level walking: the leg reaches straight for the heel strike (measured
# gait's terminal swing, the knee at 0–5°, Perry and Burnfield 2010) and the foot comes down on the
# leg's arc as the hip moves on
LIFT_KNEE_STRAIGHT_M = 0.0002
SWING_END_SHORTEN = 1.5  # × LIFT_KNEE_M: reach kept in hand by a leg about to land
SOFT_REACH_KNEE_M = 0.04  # width of the tanh saturation that draws a far ankle toward the hip
EXTENSION_SOFT = 0.002  # width (in 1 − cos of the knee's flexion) of the soft limit on a leg's extension


class PelvisHeight:
    """Highest pelvis (hips head) z that lets every weight-bearing leg reach its ankle."""

    def __init__(self, char, knee_reach: float):
        self.char, self.kr = char, knee_reach

    def leg(self, side: str, pelvis_xy, rot, ankle, shorten: float = 0.0):
        """(P,) highest pelvis z (m) from which leg ``side`` reaches ``ankle`` (P, 3), the pelvis at
        ``pelvis_xy`` (P, 2) turned by ``rot`` (P, 3, 3); ``shorten`` (m) comes off the reach."""
        off = vec_const(rot, self.char.hip_joint_rest[side] - self.char.pelvis_rest)
        R = self.kr * self.char.ankle_reach(side) - shorten
        d = pelvis_xy + off[..., :2] - ankle[..., :2]
        horiz = np.sqrt(d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1])
        return ankle[..., 2] - off[..., 2] + np.sqrt(np.maximum(R * R - horiz * horiz, 0.0))

    def soft_drop(self, side: str, pelvis, rot, ankle, shorten: float = 0.0):
        """(P,) how far (m, ≥ 0) the pelvis at ``pelvis`` (P, 3), turned by ``rot`` (P, 3, 3), comes
        down so that leg ``side`` reaches ``ankle`` (P, 3) with its extension softly limited: the
        leg's e = 1 − cos(knee flexion) (negative beyond its length) through :func:`soft_floor` at
        the flexion of ``knee_reach`` (less ``shorten`` m) — unchanged well within reach, never
        straighter than that, and smooth in between (no hard cap: the knee does not snap)."""
        char = self.char
        a, b = char.len_thigh[side], char.len_shin[side]
        off = vec_const(rot, char.hip_joint_rest[side] - char.pelvis_rest)
        v = pelvis + off - ankle
        d2 = np.sum(v * v, axis=-1)
        full = (a + b) * (a + b)
        e_floor = (full - (self.kr * (a + b) - shorten) ** 2) / (2 * a * b)
        e = soft_floor((full - d2) / (2 * a * b), e_floor)
        horiz2 = v[..., 0] * v[..., 0] + v[..., 1] * v[..., 1]
        z = ankle[..., 2] - off[..., 2] + np.sqrt(np.maximum(full - 2 * a * b * e - horiz2, 0.0))
        return np.maximum(pelvis[..., 2] - z, 0.0)

    def limit(self, pelvis_xy, rot, ankles, masks, shorten: float = 0.0):
        """Per-frame limit (m); ``shorten`` (m) takes that much off the allowed hip–ankle distance.

        pelvis_xy (F, 2), rot (F, 3, 3) pelvis rotation, ankles {side: (F, 3)}, masks {side: (F,)
        bool}: the frames where that leg must reach. Frames where no leg must reach get +inf.
        """
        lim = np.full(len(pelvis_xy), np.inf)
        for side in SIDES:
            m = masks[side]
            if np.any(m):
                lim = np.where(m, np.minimum(lim, self.leg(side, pelvis_xy, rot, ankles[side], shorten)), lim)
        return lim


def swing_ends(track, straight=None) -> np.ndarray:
    """Frames early or late in this foot's swing, where the pelvis must let the swing leg reach its
    ankle too (late: the foot is about to land, and must land where it is aimed without a jump) —
    not those of a swing onto a footstep of ``straight`` (K,) bool (:func:`lift_knee`)."""
    r = track.swing_r
    if r is None:
        return np.zeros_like(track.planted)
    ends = (np.nan_to_num(r, nan=1.0) < EARLY_SWING) | (np.nan_to_num(r, nan=0.0) > LATE_SWING)
    if straight is not None and track.swing_to is not None:
        ends &= ~np.asarray(straight)[np.maximum(track.swing_to, 0)]
    return ends


def lift_knee(track, straight) -> np.ndarray:
    """(F,) width of the lift ramp (m) of each frame's swing: :data:`LIFT_KNEE_STRAIGHT_M` onto a
    footstep of ``straight`` (K,) bool, else :data:`LIFT_KNEE_M`."""
    to = np.maximum(track.swing_to, 0) if track.swing_to is not None else np.zeros(len(track.planted), int)
    return np.where(np.asarray(straight)[to] & (to > 0), LIFT_KNEE_STRAIGHT_M, LIFT_KNEE_M)


def lift_into_reach(hip, ankle, reach: float, knee: float = LIFT_KNEE_M):
    """Swinging ankles raised (straight up, so a toe near a riser does not run into it) until the
    hip can reach them; the raise is a smooth ramp (C¹) ``knee`` m wide (one or per ankle). Ankles too far out
    horizontally are drawn in toward the hip instead (:func:`soft_reach`)."""
    v = ankle - hip
    horiz = np.linalg.norm(v[:, :2], axis=-1)
    knee = np.broadcast_to(np.asarray(knee, float), horiz.shape)
    inner = reach - knee
    z_need = hip[:, 2] - np.sqrt(np.maximum(inner * inner - horiz * horiz, 0.0))
    deficit = z_need - ankle[:, 2]
    lift = np.where(deficit >= knee, deficit, np.where(deficit <= -knee, 0.0, (deficit + knee) ** 2 / (4 * knee)))
    out = ankle.copy()
    out[:, 2] += lift
    far = horiz > inner
    if np.any(far):
        out[far] = soft_reach(hip[far], ankle[far], reach)
    return out


def soft_reach(hip, ankle, reach: float, knee: float = SOFT_REACH_KNEE_M):
    """Ankle targets pulled toward the hip so their distance saturates smoothly at ``reach`` (m):
    unchanged below ``reach − knee``, then d' = d₀ + knee·tanh((d − d₀)/knee)."""
    v = ankle - hip
    d = np.linalg.norm(v, axis=-1, keepdims=True)
    d0 = reach - knee
    soft = np.where(d > d0, d0 + knee * np.tanh((d - d0) / knee), d)
    return hip + v * (soft / np.maximum(d, 1e-9))


def soft_floor(e, e_floor, soft: float = EXTENSION_SOFT):
    """``e`` kept above ``e_floor`` smoothly (C∞): e_floor + soft·ln(1 + exp((e − e_floor)/soft)) — equal
    to ``e`` well above the floor (within soft·e^−5 from 5·soft up), ``e_floor + soft·ln 2`` at it,
    tending to the floor far below. On a leg's e = 1 − cos(knee flexion): a soft limit on its extension."""
    return e_floor + soft * np.logaddexp(0.0, (np.asarray(e, float) - e_floor) / soft)

