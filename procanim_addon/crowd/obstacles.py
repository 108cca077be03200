"""Static obstacles as footprints on the floor: convex polygons (a mesh's convex hull seen from
above), segments (a thin wall) or points (a post), world metres.

A walker keeps its radius r from a footprint through one half-plane of velocities per obstacle:
with c the footprint's point nearest the walker (distance d, n the unit vector from c to the
walker), ``v·n ≥ −(d − r)/τ_o`` — the line through c across n separates a convex footprint from
the walker, so a walker that keeps to it does not come within r of the footprint in the next τ_o
seconds (it may slide along the footprint). A walker already within r moves out within a time
step. Static obstacles do not avoid: the walker takes all of the avoidance (van den Berg et al.
2011, §6), so these half-planes are kept hard in the linear program (:mod:`.orca`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError


@dataclass(frozen=True)
class Footprint:
    """A convex polygon (M, 2), counter-clockwise, world m (M = 1: a point, 2: a segment)."""

    name: str
    polygon: np.ndarray

    @property
    def centre(self) -> np.ndarray:
        return self.polygon.mean(axis=0)

    @property
    def bound(self) -> float:
        """Radius of a circle about :attr:`centre` holding the footprint (m)."""
        return float(np.max(np.linalg.norm(self.polygon - self.centre, axis=1)))


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull (M, 2) of points (N, 2+) seen from above (Andrew's monotone
    chain); collinear and repeated points are dropped."""
    pts = np.unique(np.round(np.asarray(points, float)[:, :2], 9), axis=0)  # sorted by x, then y
    if len(pts) <= 2:
        return pts

    def half(seq):
        out: list = []
        for p in seq:
            while len(out) >= 2 and np.cross(out[-1] - out[-2], p - out[-2]) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def footprint(name: str, vertices) -> Footprint:
    """The footprint of a mesh from its world-space vertices (V, 3): their convex hull from above.
    Raises :class:`InputError` for no vertices or vertices that are not finite."""
    v = np.asarray(vertices, float)
    if v.ndim != 2 or v.shape[0] == 0 or v.shape[1] < 2 or not np.all(np.isfinite(v)):
        raise InputError(f"The obstacle '{name}' has no usable vertices.")
    return Footprint(name, convex_hull(v))


def nearest(fp: Footprint, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(signed distance (N,), unit normal (N, 2)) of points ``xy`` (N, 2) from the footprint: the
    distance to its nearest point, negative inside the polygon; the normal points from the
    footprint toward the point (outward across the nearest edge when inside)."""
    xy = np.asarray(xy, float)
    poly = fp.polygon
    a = poly
    b = np.roll(poly, -1, axis=0)
    ab = b - a
    l2 = np.maximum(np.sum(ab * ab, axis=1), 1e-18)
    rel = xy[:, None, :] - a[None, :, :]
    t = np.clip(np.einsum("nmk,mk->nm", rel, ab) / l2, 0.0, 1.0)
    diff = rel - t[..., None] * ab
    d2 = np.sum(diff * diff, axis=-1)
    k = np.argmin(d2, axis=1)
    rows = np.arange(len(xy))
    dist = np.sqrt(d2[rows, k])
    normal = diff[rows, k] / np.maximum(dist, 1e-12)[:, None]
    if len(poly) >= 3:
        cross = ab[None, :, 0] * rel[..., 1] - ab[None, :, 1] * rel[..., 0]
        inside = np.all(cross > 0, axis=1)
        if np.any(inside):
            out = np.stack([ab[:, 1], -ab[:, 0]], axis=-1) / np.sqrt(l2)[:, None]  # outward edge normals
            depth = np.abs(np.einsum("nmk,mk->nm", rel[inside], out))
            edge = np.argmin(depth, axis=1)
            dist[inside] = -depth[np.arange(len(edge)), edge]
            normal[inside] = out[edge]
    return dist, normal


def obstacle_lines(footprints: list[Footprint], xy: np.ndarray, radius: np.ndarray, reach: float,
                   tau: float, dt: float) -> list[list[tuple]]:
    """Per point ``xy`` (N, 2) with ``radius`` (N,) m: the half-planes of velocities [(q_x, q_y,
    n_x, n_y)] that keep it clear of each footprint within ``reach`` m (module docstring; τ_o =
    ``tau`` s, ``dt`` s to move out)."""
    lines: list[list[tuple]] = [[] for _ in range(len(xy))]
    for fp in footprints:
        close = np.flatnonzero(np.linalg.norm(xy - fp.centre, axis=1) < fp.bound + reach)
        if not len(close):
            continue
        dist, normal = nearest(fp, xy[close])
        gap = dist - radius[close]
        for i, g, n in zip(close.tolist(), gap.tolist(), normal.tolist()):
            if g > reach:
                continue
            speed = g / tau if g > 0 else g / dt  # at most g/τ toward it; out within dt when inside
            lines[i].append((-n[0] * speed, -n[1] * speed, n[0], n[1]))
    return lines
