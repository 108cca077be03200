"""Where an adaptation changed the motion most: the frames its bake marks (pose markers
``"changed <cm> cm"``, :func:`procanim_addon.key_marks.change_marks`), so that an animator finds them."""

from __future__ import annotations

import numpy as np

from ..clip import Clip
from ..skeleton import Skeleton

MARKERS = 8  # at most this many frames
SHARE = 0.5  # ... each a peak of at least this share of the largest change
GAP_S = 0.5  # ... at least this far apart (s)


def pose_change(skeleton: Skeleton, source: Clip, adapted: Clip) -> np.ndarray:
    """The largest distance (m) any joint of ``skeleton`` (heads and tails) moved from ``source`` to
    ``adapted`` on each frame ``(F,)``; the clips hold the same frames and the skeleton's bones."""
    points = []
    for clip in (source, adapted):
        idx = [clip.index(name) for name in skeleton.names]
        pose = skeleton.fk(clip.locations[:, idx], clip.rotations[:, idx])
        points.append(np.concatenate([pose[..., :3, 3], skeleton.tails_of(pose)], axis=1))
    return np.linalg.norm(points[1] - points[0], axis=-1).max(axis=1)


def changed_most(frames: np.ndarray, change_m: np.ndarray, fps: float) -> list[tuple[float, float]]:
    """``(frame, cm)`` of the peaks of ``change_m`` ``(F,)`` (m per frame, :func:`pose_change`) of at
    least :data:`SHARE` of the largest, :data:`GAP_S` apart, at most :data:`MARKERS`, in frame order."""
    change = np.asarray(change_m, float)
    if len(change) == 0 or not np.isfinite(change).all() or change.max() <= 1e-6:
        return []
    padded = np.concatenate([[-np.inf], change, [-np.inf]])
    peaks = np.nonzero((change >= padded[:-2]) & (change > padded[2:]))[0]
    peaks = peaks[change[peaks] >= SHARE * change.max()]
    gap = GAP_S * fps
    chosen: list[int] = []
    for i in sorted(peaks, key=lambda k: -change[k]):
        if len(chosen) < MARKERS and all(abs(i - j) >= gap for j in chosen):
            chosen.append(int(i))
    return [(float(frames[i]), float(change[i] * 100.0)) for i in sorted(chosen)]
