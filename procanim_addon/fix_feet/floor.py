"""The floor a motion's feet are measured against: a given ground, or the motion's own floor.

A *ground* is anything with ``height(xy (N, 2)) -> (z, normal, hit)`` (:mod:`..ground`'s analytic
grounds, :class:`..terrain.mesh.TerrainMesh`, the Blender side's BVH query). Without one, the
floor is the horizontal plane z = 0 and the motion's own level above it is estimated from the
contacts (:func:`own_level`). Where a ground has nothing under a point, the point is measured
against the plane at the median height of the ground under the motion's slow points.

Heights are in armature units; a point's *gap* is its height above the floor minus its sole
height σ (0 when it stands on the floor, negative when it is below).
"""

from __future__ import annotations

import numpy as np


class Floor:
    """Floor heights under horizontal positions: the ground's where it has one, else ``fallback_z``."""

    def __init__(self, ground=None, fallback_z: float = 0.0):
        self.ground = ground
        self.fallback_z = float(fallback_z)

    @property
    def given(self) -> bool:
        return self.ground is not None

    def height(self, xy: np.ndarray) -> np.ndarray:
        """Floor z under positions ``(..., 2 or 3)`` (only x, y are used), shaped ``(...)``."""
        xy = np.asarray(xy, float)
        lead = xy.shape[:-1]
        if self.ground is None:
            return np.full(lead, self.fallback_z)
        z, _normal, hit = self.ground.height(xy.reshape(-1, xy.shape[-1])[:, :2])
        z = np.asarray(z, float).reshape(lead)
        hit = np.asarray(hit, bool).reshape(lead) & np.isfinite(z)
        return np.where(hit, z, self.fallback_z)

    def gaps(self, points: np.ndarray, sole: np.ndarray) -> np.ndarray:
        """Gap of each point ``(..., 3)`` above the floor minus its sole height ``sole``
        (broadcast against ``points[..., 0]``)."""
        points = np.asarray(points, float)
        return points[..., 2] - self.height(points) - sole


def fallback_height(ground, points: np.ndarray) -> float:
    """The median ground height under ``points (N, 3)`` where the ground has a surface (0 when it
    has none there): what a point off the ground is measured against."""
    if ground is None or len(points) == 0:
        return 0.0
    z, _normal, hit = ground.height(np.asarray(points, float)[:, :2])
    z = np.asarray(z, float)
    ok = np.asarray(hit, bool) & np.isfinite(z)
    return float(np.median(z[ok])) if np.any(ok) else 0.0


def own_level(gaps: np.ndarray, weights: np.ndarray) -> float:
    """The motion's own floor level above the floor (armature units): the median of the gaps
    ``(N,)`` of the samples where ``weights`` (N,) bool holds (the contacts); 0 without any."""
    g = np.asarray(gaps, float)[np.asarray(weights, bool)]
    g = g[np.isfinite(g)]
    return float(np.median(g)) if g.size else 0.0
