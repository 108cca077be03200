"""Clip: what a generator returns and the baker writes — per-frame local pose channels.

Channels are in Blender's pose-bone convention (relative to the rest pose, in the bone's local
space), so the baker writes them as they are::

    frames       (F,)      frame numbers of the keys (floats; need not be consecutive)
    locations    (F, B, 3) pose-bone location (m, bone-local)
    rotations    (F, B, 4) pose-bone rotation quaternion (w, x, y, z)
    scales       (F, B, 3) pose-bone scale, or None (rest scale, not keyed)

Only bones whose ``key_location`` / ``key_rotation`` flag is set get F-curves. ``metrics`` holds
the generator's quality figures (plain floats/ints/strings) for the sidebar and scripts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import transforms as tf


@dataclass
class Clip:
    bone_names: list[str]
    frames: np.ndarray
    fps: float
    locations: np.ndarray
    rotations: np.ndarray
    scales: np.ndarray | None = None
    key_location: np.ndarray | None = None
    key_rotation: np.ndarray | None = None
    object_locations: np.ndarray | None = None  # (F, 3) object channels, or None
    object_rotations: np.ndarray | None = None  # (F, 4)
    generator: str = ""
    metrics: dict = field(default_factory=dict)

    def __post_init__(self):
        self.frames = np.asarray(self.frames, dtype=float)
        self.locations = np.asarray(self.locations, dtype=float)
        self.rotations = np.asarray(self.rotations, dtype=float)
        nb = len(self.bone_names)
        if self.key_location is None:
            self.key_location = np.ones(nb, dtype=bool)
        if self.key_rotation is None:
            self.key_rotation = np.ones(nb, dtype=bool)
        self.key_location = np.asarray(self.key_location, dtype=bool)
        self.key_rotation = np.asarray(self.key_rotation, dtype=bool)
        f = len(self.frames)
        if self.locations.shape != (f, nb, 3) or self.rotations.shape != (f, nb, 4):
            raise ValueError(
                f"clip shapes disagree: {f} frames, {nb} bones, locations {self.locations.shape}, "
                f"rotations {self.rotations.shape}"
            )

    @classmethod
    def rest(cls, bone_names, frames, fps, **kw) -> Clip:
        """A clip holding the rest pose on every frame (a starting point for generators)."""
        f, b = len(frames), len(bone_names)
        return cls(
            list(bone_names), np.asarray(frames, float), fps, np.zeros((f, b, 3)), tf.quat_identity((f, b)), **kw
        )

    @property
    def frame_count(self) -> int:
        return len(self.frames)

    @property
    def frame_range(self) -> tuple[float, float]:
        return float(self.frames[0]), float(self.frames[-1])

    def index(self, name: str) -> int:
        return self.bone_names.index(name)

    def is_finite(self) -> bool:
        arrays = [self.frames, self.locations, self.rotations]
        arrays += [a for a in (self.scales, self.object_locations, self.object_rotations) if a is not None]
        return all(bool(np.all(np.isfinite(a))) for a in arrays)

    def keyed_bones(self) -> list[str]:
        return [n for i, n in enumerate(self.bone_names) if self.key_location[i] or self.key_rotation[i]]

    def with_continuity(self) -> Clip:
        """The same clip with quaternion signs made continuous over frames."""
        self.rotations = tf.quat_continuity(tf.quat_normalize(self.rotations), axis=0)
        if self.object_rotations is not None:
            self.object_rotations = tf.quat_continuity(tf.quat_normalize(self.object_rotations), axis=0)
        return self
