"""Fix Feet's figures: skate and float before and after, contacts, what changed — and their rows.

All measured on poses by forward kinematics (the source's and the fixed Clip's), over the contacts
Fix Feet held:

* skate: the horizontal speed of a heel or ball between two frames it is in contact on both
  (:func:`..metrics.foot_skate`'s definition), pooled over the four points — mean and 95th
  percentile, cm/s;
* float: per frame a foot is down, how far its lowest point in contact is above the floor (its gap
  beyond the floor level the contacts are held at), mean, cm;
* penetration: the deepest a heel, ball or toe tip of a foot in contact goes below that level, cm;
* the largest change of any joint (bone heads and tails) from the source, which bone, and the
  frames where some joint moved more than :data:`CHANGED_M`.
"""

from __future__ import annotations

import numpy as np

from ..metric_table import Metric, row
from ..skeleton import Skeleton
from .feet import Feet
from .floor import Floor

CHANGED_M = 1e-4  # a frame counts as changed when some joint moved more than this (m)


def skate(points: np.ndarray, contact: np.ndarray, times: np.ndarray) -> tuple[float, float]:
    """Mean and 95th percentile (armature units/s) of the horizontal speed of points ``(F, ..., 3)``
    between consecutive frames both in ``contact (F, ...)``; zeros without such steps."""
    both = contact[1:] & contact[:-1]
    if not np.any(both):
        return 0.0, 0.0
    dt = np.diff(times).reshape((-1,) + (1,) * (contact.ndim - 1))
    speed = np.sqrt(np.sum(np.diff(points[..., :2], axis=0) ** 2, axis=-1)) / dt
    v = speed[both]
    return float(np.mean(v)), float(np.percentile(v, 95))


def float_and_depth(points: np.ndarray, tips: np.ndarray, contact: np.ndarray, feet: Feet, floor: Floor,
                    level: float) -> tuple[float, float]:
    """Mean float and deepest penetration (armature units) of the feet in contact: ``points (F, 2,
    2, 3)`` heel and ball, ``tips (F, 2, 3)``, ``contact (F, 2, 2)``; gaps beyond ``level``."""
    gaps = floor.gaps(points, feet.sole) - level  # (F, 2, 2)
    down = contact.any(axis=-1)  # (F, 2)
    if not np.any(down):
        return 0.0, 0.0
    lowest = np.where(contact, gaps, np.inf).min(axis=-1)  # (F, 2)
    tip_gaps = floor.gaps(tips, feet.tip_sole) - level
    all_gaps = np.concatenate((gaps, tip_gaps[..., None]), axis=-1)  # (F, 2, 3)
    depth = np.max(np.maximum(-all_gaps[down], 0.0))
    return float(np.mean(np.maximum(lowest[down], 0.0))), float(depth)


def joint_changes(skeleton: Skeleton, before: np.ndarray, after: np.ndarray) -> tuple[np.ndarray, int]:
    """Per frame the largest move of any bone head or tail ``(F,)`` (armature units), and the bone
    that moved most over the clip."""
    heads = np.linalg.norm(after[..., :3, 3] - before[..., :3, 3], axis=-1)
    tails = np.linalg.norm(skeleton.tails_of(after) - skeleton.tails_of(before), axis=-1)
    moved = np.maximum(heads, tails)  # (F, B)
    if moved.size == 0:
        return np.zeros(len(before)), 0
    return moved.max(axis=1), int(np.unravel_index(np.argmax(moved), moved.shape)[1])


def describe_shortened(changes: list[tuple[str, float, float, float | None, float | None]]) -> list[str]:
    """Words for the shortened contacts: ``(side, first, last, new first, new last)`` frame numbers
    (new ones None: dropped)."""
    out = []
    for side, a, b, c, d in changes:
        out.append(f"{side} {a:g}–{b:g} dropped" if c is None else f"{side} {a:g}–{b:g} → {c:g}–{d:g}")
    return out


def bone_lengths_pct(skeleton: Skeleton, before: np.ndarray, after: np.ndarray, moved: int) -> float:
    """Largest change, %, of the distance from a bone's head to its parent's head between two poses
    ``(F, B, 4, 4)``, over every bone but ``moved`` (the hips, whose location Fix Feet changes): the
    lengths a viewer sees, kept exact."""
    idx = np.array([i for i in range(len(skeleton)) if skeleton.parents[i] >= 0 and i != moved], dtype=int)
    if idx.size == 0:
        return 0.0
    par = skeleton.parents[idx]
    d0 = np.linalg.norm(before[:, idx, :3, 3] - before[:, par, :3, 3], axis=-1)
    d1 = np.linalg.norm(after[:, idx, :3, 3] - after[:, par, :3, 3], axis=-1)
    ok = d0 > 1e-9
    return float(np.max(np.abs(d1 - d0)[ok] / d0[ok]) * 100) if np.any(ok) else 0.0


#: The rows the sidebar, the batch report and scripts show for a Fix Feet bake, in order.
METRICS: tuple[Metric, ...] = (
    row("contacts", "Contacts found", "", 0, "Stretches of frames over which a foot bears weight (held still)"),
    row("skate_before_mean_cm_s", "Skate before", "cm/s", 3,
        "Mean horizontal speed of heels and balls while in contact, in the source motion"),
    row("skate_mean_cm_s", "Skate after", "cm/s", 3,
        "Mean horizontal speed of heels and balls while in contact, after the fix: 0 means held still"),
    row("skate_before_p95_cm_s", "Skate before, p95", "cm/s", 3, "95 % of the source's contact samples slide slower"),
    row("skate_p95_cm_s", "Skate after, p95", "cm/s", 3, "95 % of the fixed contact samples slide slower than this"),
    row("float_before_cm", "Float before", "cm", 2, "Mean height of the source's planted feet above the floor"),
    row("float_cm", "Float after", "cm", 2, "Mean height of the planted feet above the floor after the fix"),
    row("penetration_cm", "Below ground", "cm", 2, "Deepest a planted heel, ball or toe tip goes below the floor"),
    row("frames_changed", "Frames changed", "", 0, "Frames where some joint moved more than 0.1 mm"),
    row("max_joint_change_cm", "Largest change", "cm", 2, "Largest move of any joint from the source"),
    row("max_joint_change_bone", "… of bone", "", 0, "The bone whose joint moved most"),
    row("pelvis_drop_max_cm", "Pelvis lowered", "cm", 2,
        "Most the pelvis came down for a foot to be reached (besides the ground offset)"),
    row("ground_offset_cm", "Motion moved", "cm", 2,
        "Up (+) or down (−) the whole motion moved to stand on the ground"),
    row("shortened_contacts", "Contacts shortened", "", 0,
        "Contacts cut where a foot could not be reached even with the pelvis lowered"),
    row("shortened", "… which", "", 0, "The shortened contacts: foot, frames before → after"),
    row("bone_length_error_pct", "Bone length change", "%", 5,
        "Largest change of a joint-to-joint length from the source (kept exact)"),
)
