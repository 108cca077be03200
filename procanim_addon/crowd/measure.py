"""The crowd measured on its clips (forward kinematics, as Blender will pose them): where each
pelvis is on every frame and how close any two come."""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..walk.pose import fk_of
from .grid import near_pairs


def pelvis_world(skeleton, rigmap, clip: Clip, world: np.ndarray) -> np.ndarray:
    """(F, 3) the hips bone's head in world space on each of the clip's frames."""
    hips = rigmap.index(skeleton, "hips")
    pose = fk_of(skeleton, clip.locations, clip.rotations, [hips])[hips]
    if clip.object_locations is not None:
        pose = tf.compose(clip.object_locations, clip.object_rotations) @ pose
    return (np.asarray(world, float) @ pose)[:, :3, 3]


def on_frames(tracks: list[np.ndarray], clips: list[Clip]) -> tuple[np.ndarray, np.ndarray]:
    """(frames (F,), positions (F, A, k)): each clip's per-frame values ``tracks`` on the frames of
    the whole crowd, held before a clip's first and after its last frame (as Blender holds keys)."""
    lo = min(c.frames[0] for c in clips)
    hi = max(c.frames[-1] for c in clips)
    frames = np.arange(lo, hi + 1)
    out = []
    for track, clip in zip(tracks, clips):
        idx = np.clip(np.round(frames - clip.frames[0]).astype(int), 0, len(track) - 1)
        out.append(track[idx])
    return frames, np.stack(out, axis=1)


def close_pairs(xy: np.ndarray, radius: float, skip: set | None = None) -> tuple:
    """(frame index, i, j, distance) of every pair of walkers closer than ``radius`` (m) on a frame,
    i < j, from positions ``xy`` (F, A, 2); pairs in ``skip`` ({(i, j)}, i < j) are left out."""
    F, A = xy.shape[:2]
    i, j = near_pairs(xy.reshape(-1, 2), radius, np.repeat(np.arange(F), A))
    frame, a, b = i // A, i % A, j % A
    keep = a < b
    if skip:
        keep &= ~np.array([(x, y) in skip for x, y in zip(a.tolist(), b.tolist())], bool)
    frame, a, b = frame[keep], a[keep], b[keep]
    d = np.linalg.norm(xy[frame, a] - xy[frame, b], axis=-1)
    return frame, a, b, d
