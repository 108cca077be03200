"""Grounds: where the floor is under a horizontal position, for generators that plant feet.

A ground answers one question, as a vertical ray cast downward from high up would:
``height(xy (N, 2)) -> (z (N,), normal (N, 3), hit (N,) bool)``. Units are metres in the
armature's space (Z up). Where ``hit`` is False the ground is absent (``z`` is then 0 and the
normal +Z, but callers should not use them).

The Blender side implements the same protocol with a ``BVHTree`` built once per bake; the engine
implementations here are analytic and serve tests, benches and the path walk's "no ground object"
case:

* :class:`FlatGround` — a horizontal plane.
* :class:`HeightFieldGround` — a regular grid of heights, bilinear (ramps, bumps, terrain).
* :class:`StairsGround` — a straight staircase with horizontal treads and vertical risers, going
  up, across a landing, and optionally down again; it knows its own treads, so tests can check
  that every footstep lands fully on one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

UP = np.array([0.0, 0.0, 1.0])


@runtime_checkable
class Ground(Protocol):
    """Anything with ``height(xy) -> (z, normal, hit)`` (see the module docstring)."""

    def height(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover
        ...


def _as_xy(xy) -> np.ndarray:
    xy = np.asarray(xy, dtype=float)
    return xy.reshape(-1, xy.shape[-1])[:, :2]


@dataclass
class FlatGround:
    """The plane ``z = z`` (m) everywhere."""

    z: float = 0.0

    def height(self, xy):
        xy = _as_xy(xy)
        n = len(xy)
        return np.full(n, float(self.z)), np.broadcast_to(UP, (n, 3)).copy(), np.ones(n, dtype=bool)


@dataclass
class HeightFieldGround:
    """Heights on a regular grid, bilinear between samples.

    origin:  (x, y) of sample ``heights[0, 0]`` (m)
    cell:    grid spacing (m), the same along x and y
    heights: ``(ny, nx)`` array of z (m); row index grows with y, column index with x

    Outside the grid ``hit`` is False. The normal is the gradient of the bilinear surface.
    """

    origin: tuple
    cell: float
    heights: np.ndarray

    def __post_init__(self):
        self.heights = np.asarray(self.heights, dtype=float)
        self.origin = np.asarray(self.origin, dtype=float)[:2]

    @classmethod
    def from_function(cls, fn, x_range, y_range, cell: float = 0.02) -> HeightFieldGround:
        """Sample ``fn(x, y) -> z`` (vectorised) on a grid covering the ranges (m)."""
        xs = np.arange(x_range[0], x_range[1] + cell * 0.5, cell)
        ys = np.arange(y_range[0], y_range[1] + cell * 0.5, cell)
        gx, gy = np.meshgrid(xs, ys)
        return cls((xs[0], ys[0]), cell, fn(gx, gy))

    def mesh(self):
        """The grid as a mesh: ``(vertices (ny·nx, 3), quads)`` (for scenes and Blender tests)."""
        ny, nx = self.heights.shape
        gx, gy = np.meshgrid(np.arange(nx) * self.cell + self.origin[0], np.arange(ny) * self.cell + self.origin[1])
        verts = np.stack([gx.ravel(), gy.ravel(), self.heights.ravel()], axis=-1)
        quads = [(j * nx + i, j * nx + i + 1, (j + 1) * nx + i + 1, (j + 1) * nx + i)
                 for j in range(ny - 1) for i in range(nx - 1)]
        return verts, quads

    def height(self, xy):
        xy = _as_xy(xy)
        ny, nx = self.heights.shape
        g = (xy - self.origin) / self.cell
        hit = (g[:, 0] >= 0) & (g[:, 0] <= nx - 1) & (g[:, 1] >= 0) & (g[:, 1] <= ny - 1)
        gx = np.clip(g[:, 0], 0, nx - 1 - 1e-9)
        gy = np.clip(g[:, 1], 0, ny - 1 - 1e-9)
        i0 = np.minimum(np.floor(gx).astype(int), nx - 2)
        j0 = np.minimum(np.floor(gy).astype(int), ny - 2)
        fx, fy = gx - i0, gy - j0
        h = self.heights
        z00, z10, z01, z11 = h[j0, i0], h[j0, i0 + 1], h[j0 + 1, i0], h[j0 + 1, i0 + 1]
        z = z00 * (1 - fx) * (1 - fy) + z10 * fx * (1 - fy) + z01 * (1 - fx) * fy + z11 * fx * fy
        dzdx = ((z10 - z00) * (1 - fy) + (z11 - z01) * fy) / self.cell
        dzdy = ((z01 - z00) * (1 - fx) + (z11 - z10) * fx) / self.cell
        normal = np.stack((-dzdx, -dzdy, np.ones_like(z)), axis=-1)
        normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
        return np.where(hit, z, 0.0), np.where(hit[:, None], normal, UP), hit


@dataclass
class StairsGround:
    """A straight staircase across the whole plane, along a horizontal direction.

    Along ``direction`` (unit, xy) measured from ``origin`` (xy) the floor is ``base_z`` up to
    ``start`` (m); then ``steps_up`` treads of depth ``tread`` (m) each ``riser`` (m) higher;
    the last of them is a landing ``landing`` (m) deep; then ``steps_down`` treads going down by
    the same riser, and the floor continues at the final height. Risers are vertical, so a
    downward ray never hits them: the normal is +Z everywhere.
    """

    origin: tuple = (0.0, 0.0)
    direction: tuple = (0.0, -1.0)
    start: float = 1.0
    tread: float = 0.30
    riser: float = 0.16
    steps_up: int = 4
    landing: float = 1.0
    steps_down: int = 4
    base_z: float = 0.0
    edges: np.ndarray = field(init=False)  # distances of the risers along direction (m)
    levels: np.ndarray = field(init=False)  # floor height after each riser (m)

    def __post_init__(self):
        self.origin = np.asarray(self.origin, float)[:2]
        d = np.asarray(self.direction, float)[:2]
        self.direction = d / np.linalg.norm(d)
        edges, levels = [], []
        s, z = float(self.start), float(self.base_z)
        for k in range(self.steps_up):
            z += self.riser
            edges.append(s)
            levels.append(z)
            s += self.landing if k == self.steps_up - 1 else self.tread
        for _ in range(self.steps_down):
            z -= self.riser
            edges.append(s)
            levels.append(z)
            s += self.tread
        self.edges = np.asarray(edges)
        self.levels = np.asarray(levels)

    def distance(self, xy) -> np.ndarray:
        """Distance along the staircase's direction (m) of horizontal positions."""
        return (_as_xy(xy) - self.origin) @ self.direction

    def profile(self, s) -> np.ndarray:
        """Floor height (m) at distances ``s`` along the direction."""
        s = np.asarray(s, float)
        k = np.searchsorted(self.edges, s, side="right")
        return np.concatenate(([self.base_z], self.levels))[k]

    def treads(self) -> list[tuple[float, float, float]]:
        """``(s_from, s_to, z)`` of every tread and landing (between two risers), m."""
        e, z = self.edges, self.levels
        return [(float(e[k]), float(e[k + 1]), float(z[k])) for k in range(len(e) - 1)]

    def height(self, xy):
        xy = _as_xy(xy)
        n = len(xy)
        return self.profile(self.distance(xy)), np.broadcast_to(UP, (n, 3)).copy(), np.ones(n, dtype=bool)

    def mesh(self, width: float = 2.0, before: float | None = None, after: float = 2.0):
        """A mesh of the staircase for scenes (demo, Blender tests): ``(vertices (V, 3), quads)``.

        Treads are horizontal quads ``width`` m wide centred on the line through ``origin``,
        risers vertical quads; the floor reaches ``before`` m before the first riser (default: back
        to the origin) and ``after`` m past the last one.
        """
        d = self.direction
        side = np.array([-d[1], d[0]])
        first = 0.0 if before is None else self.start - before
        bounds = np.concatenate(([min(first, self.start)], self.edges, [self.edges[-1] + after]))
        levels = np.concatenate(([self.base_z], self.levels))
        verts, quads = [], []

        def v(s_along, lat, z):
            xy = self.origin + d * s_along + side * lat
            verts.append((float(xy[0]), float(xy[1]), float(z)))
            return len(verts) - 1

        h = 0.5 * width
        for k in range(len(levels)):
            a, b, z = bounds[k], bounds[k + 1], levels[k]
            quads.append((v(a, -h, z), v(b, -h, z), v(b, h, z), v(a, h, z)))
            if k + 1 < len(levels):
                z2 = levels[k + 1]
                quads.append((v(b, -h, z), v(b, -h, z2), v(b, h, z2), v(b, h, z)))
        return np.asarray(verts), quads


def ground_points(ground: Ground, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``height`` for an ``(..., 2)`` array of positions, keeping the leading shape."""
    xy = np.asarray(xy, float)
    lead = xy.shape[:-1]
    z, n, hit = ground.height(xy.reshape(-1, xy.shape[-1])[:, :2])
    return np.asarray(z).reshape(lead), np.asarray(n).reshape(lead + (3,)), np.asarray(hit).reshape(lead)
