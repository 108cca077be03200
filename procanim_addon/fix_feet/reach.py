"""What a held foot asks of the leg: how far the pelvis must come down, and contacts too far away.

A leg reaches its held ankle when the hip–ankle distance is at most ``reach × (upper + lower)``,
where ``reach`` is :attr:`FixFeetParams.max_reach`, or the source's own extension on that frame
when it is straighter (the source keeps its own straight legs; the fix adds none). Kovar et al.
move the root so that every constraint is reachable and then lengthen bones a little where needed;
ProcAnim keeps bone lengths exact, so the pelvis comes down instead — smoothly, by at most
``max_pelvis_drop_m`` — and a contact that would need more is shortened from its nearer end until it
can be held (and reported).
"""

from __future__ import annotations

import numpy as np

from ..curves import envelope
from .contacts import Plant

HARD_REACH = 0.9999  # never straighter than this: a fully straight knee has no bend direction


def reach_limits(extension: np.ndarray, max_reach: float) -> np.ndarray:
    """Per frame, the largest hip–ankle distance allowed as a fraction of the leg ``(F,)``:
    ``max_reach`` (at most :data:`HARD_REACH`), or the source's own ``extension (F,)`` where that
    is larger (the source's straight legs stay as they are)."""
    return np.maximum(extension, min(max_reach, HARD_REACH))


def needed_drop(hip: np.ndarray, ankle: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """How far the hip ``(F, 3)`` must come straight down (Z) for the ankle ``(F, 3)`` to be within
    ``radius (F,)`` of it: 0 when it is, inf when no drop is enough (the ankle is too far away
    horizontally or above the hip). With v = ankle − hip: |v + δ·ẑ| = radius gives
    δ = −v_z − sqrt(radius² − |v_xy|²)."""
    v = ankle - hip
    horizontal = v[:, 0] ** 2 + v[:, 1] ** 2
    inside = np.sum(v * v, axis=1) <= radius**2
    room = radius**2 - horizontal
    delta = -v[:, 2] - np.sqrt(np.maximum(room, 0.0))
    return np.where(inside, 0.0, np.where((room > 0) & (delta > 0), delta, np.inf))


def reachable_shift(offsets: np.ndarray, radii: np.ndarray, limit: float, rounds: int = 60) -> np.ndarray:
    """A horizontal move ``s (2,)`` of a held foot after which every frame's ankle is within reach:
    ``|offsets_f + s| ≤ radii_f`` for the horizontal ankle − hip ``offsets (n, 2)`` and the
    horizontal reach ``radii (n,)`` left at the ankle's height (NaN: no move helps on that frame).
    Kovar et al. move the root toward reachable constraints; here the constraint gives way first,
    within the area its source covered: projections onto the most violated reach disc, from no
    move, capped at ``limit``."""
    ok = np.isfinite(radii)
    s = np.zeros(2)
    if not np.any(ok) or limit <= 0:
        return s
    offsets, radii = offsets[ok], radii[ok]
    for _ in range(rounds):
        v = offsets + s
        dist = np.linalg.norm(v, axis=1)
        over = dist - radii
        k = int(np.argmax(over))
        if over[k] <= 1e-9:
            break
        s = s - v[k] / max(dist[k], 1e-12) * over[k]
    size = float(np.linalg.norm(s))
    return s * (limit / size) if size > limit else s


def pelvis_drop(needed: np.ndarray, max_drop: float, blend: int) -> np.ndarray:
    """A smooth drop curve ``(F,)`` at least ``needed (F,)`` wherever that is at most ``max_drop``
    (a running maximum over ``blend`` frames on each side, softened; never above ``max_drop``)."""
    need = np.where(np.isfinite(needed), np.minimum(needed, max_drop), 0.0)
    if not np.any(need > 0):
        return np.zeros_like(need)
    return np.minimum(envelope(need, max(int(blend), 1)), max_drop)


def shorten(plant: Plant, bad: np.ndarray) -> Plant | None:
    """``plant`` without its frames ``bad (n,)`` (bool, over the plant): the longest stretch of good
    frames it keeps (the earlier one on a tie); None when no frame is left."""
    good = ~np.asarray(bad, bool)
    if not good.any():
        return None
    m = np.concatenate(([False], good, [False])).astype(np.int8)
    d = np.diff(m)
    starts, stops = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    k = int(np.argmax(stops - starts))
    a, b = int(starts[k]), int(stops[k])
    return Plant(plant.side, plant.first + a, plant.first + b - 1, plant.points[a:b].copy(), plant.detected)


def nearest_plant(plants: list[Plant], frame: int) -> int:
    """Index in ``plants`` (one foot's, non-empty) of the plant nearest to ``frame``."""
    distance = [0 if p.first <= frame <= p.last else min(abs(frame - p.first), abs(frame - p.last)) for p in plants]
    return int(np.argmin(distance))
