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
        rows = [{"foot": SIDES[int(s)], "first": a, "last": b, "heel": self.heel[k], "ball": self.ball[k],
                 "tip": self.tip[k]} for k, (s, a, b) in enumerate(zip(self.side, self.first, self.last))]
        return plants_of(rows, world)


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


HELD = "held_contacts"  # the metric holding the held footprints (armature space)


def held_contacts(result: FixFeetResult) -> list[dict]:
    """The held footprints of a fix as plain data for ``clip.metrics[HELD]`` (stored with the bake,
    read back by the preview's ghost): per plant in frame order the foot ("L"/"R"), its first and
    last frame numbers, and its held heel, ball and toe tip (armature space)."""
    ov = overlay(result)
    return [{"foot": SIDES[int(s)], "first": float(a), "last": float(b), "heel": ov.heel[k].tolist(),
             "ball": ov.ball[k].tolist(), "tip": ov.tip[k].tolist()}
            for k, (s, a, b) in enumerate(zip(ov.side, ov.first, ov.last))]


def plants_of(rows: list[dict], world=None) -> list[GhostPlant]:
    """The ghost's plants of :func:`held_contacts` rows, in world space (``world``: the armature
    object's matrix_world, 4×4; None: armature space)."""
    m = np.eye(4) if world is None else np.asarray(world, float)

    def to_world(p):
        return np.asarray(p, float) @ m[:3, :3].T + m[:3, 3]

    return [GhostPlant(r["foot"], float(r["first"]), float(r["last"]), to_world(r["heel"]), to_world(r["ball"]),
                       to_world(r["tip"])) for r in rows]
