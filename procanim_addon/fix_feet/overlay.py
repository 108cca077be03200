"""What the live preview draws for Fix Feet, as plain arrays: the contacts found and where they are held.

The preview shows the contacts before anything is baked: per frame which heel and ball bear
weight, and per held stretch (plant) the footprint — held heel, ball and toe tip — in the shape of
:class:`..ghost.Plant`, so the ghost draws them as it draws the other generators' plants.
Positions are in the armature's space; :meth:`FeetOverlay.plants` puts them in the world.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ghost import Plant as GhostPlant
from .feet import SIDES
from .generate import FixFeetResult


@dataclass
class FeetOverlay:
    """frames ``(F,)`` (frame numbers); contact ``(F, 2 sides, 2 points)`` (L/R; heel/ball);
    per plant ``k``: side ``(K,)`` (0 = L, 1 = R), first and last frame numbers ``(K,)``, held
    heel, ball and toe tip ``(K, 3)`` (armature space); pelvis_offset ``(F,)`` (the pelvis' move
    down (−) or up, armature units)."""

    frames: np.ndarray
    contact: np.ndarray
    side: np.ndarray
    first: np.ndarray
    last: np.ndarray
    heel: np.ndarray
    ball: np.ndarray
    tip: np.ndarray
    pelvis_offset: np.ndarray

    def plants(self, world=None) -> list[GhostPlant]:
        """The held footprints as the ghost's plants, in world space (``world``: the armature
        object's matrix_world, 4×4; None: armature space)."""
        m = np.eye(4) if world is None else np.asarray(world, float)

        def to_world(p):
            return p @ m[:3, :3].T + m[:3, 3]

        heel, ball, tip = to_world(self.heel), to_world(self.ball), to_world(self.tip)
        return [GhostPlant(SIDES[int(s)], float(a), float(b), heel[k], ball[k], tip[k])
                for k, (s, a, b) in enumerate(zip(self.side, self.first, self.last))]


def overlay(result: FixFeetResult) -> FeetOverlay:
    """The overlay of a fix (plants in frame order)."""
    frames = np.asarray(result.clip.frames, float)
    order = sorted(range(len(result.plants)), key=lambda k: (result.plants[k].first, result.plants[k].side))
    plants = [result.plants[k] for k in order]
    placements = [result.placements[k] for k in order]

    def stack(name):
        return np.array([getattr(p, name) for p in placements], float).reshape(-1, 3)

    return FeetOverlay(
        frames=frames,
        contact=np.asarray(result.contact, bool).copy(),
        side=np.array([p.side for p in plants], dtype=int),
        first=np.array([frames[p.first] for p in plants], float),
        last=np.array([frames[p.last] for p in plants], float),
        heel=stack("heel"),
        ball=stack("ball"),
        tip=stack("tip"),
        pelvis_offset=np.asarray(result.pelvis_offset, float).copy(),
    )
