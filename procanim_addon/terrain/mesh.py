"""TerrainMesh: a triangle mesh in armature space with the queries terrain adaptation needs.

The Blender side passes mesh data already converted to the armature's space: ``vertices (V, 3)``
in metres and ``triangles (T, 3)`` vertex indices. Every query is numpy over a uniform grid of
bins in the XY plane (each triangle is listed in every bin its XY bounding box touches), so a
query only looks at the triangles near it:

* :meth:`TerrainMesh.height` — vertical ray cast: the highest surface above each XY point, its
  upward normal and whether anything was hit (the Ground protocol of ``ground.py``);
* :meth:`TerrainMesh.ray_down` — the highest surface at or below each 3D point;
* :meth:`TerrainMesh.closest_point` — closest surface point, its normal and distance;
* :meth:`TerrainMesh.boxes_intersect` — oriented boxes against the triangles (separating axes).

Vertical faces (walls of raised blocks) have no area seen from above: ray casts skip them, box
tests do not.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .rotations import cross

_EPS = 1e-9
# Point queries use a padded table of each bin's triangles when its densest bin holds at most
# DENSE_MAX_PER_CELL and the table is at most DENSE_WASTE times the size of the lists (speed only).
DENSE_MAX_PER_CELL = 64
DENSE_WASTE = 4


class TerrainMesh:
    """Triangles ``(T, 3)`` over vertices ``(V, 3)`` (m), binned in XY for fast queries.

    ``cell_size`` (m) is the bin size; by default about two mean triangle sizes, at least 5 cm.
    """

    def __init__(self, vertices, triangles, cell_size: float | None = None, name: str = "terrain"):
        v = np.asarray(vertices, dtype=float).reshape(-1, 3)
        t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
        if len(t) == 0:
            raise InputError(f"The terrain '{name}' has no faces.")
        if not np.all(np.isfinite(v)):
            raise InputError(f"The terrain '{name}' has vertices that are not finite numbers.")
        if t.min() < 0 or t.max() >= len(v):
            raise InputError(f"The terrain '{name}' has faces that refer to missing vertices.")
        self.name = name
        self.vertices = v
        self.triangles = t
        self.corners = v[t]  # (T, 3 corners, 3)
        n = np.cross(self.corners[:, 1] - self.corners[:, 0], self.corners[:, 2] - self.corners[:, 0])
        area2 = np.linalg.norm(n, axis=-1)
        keep = area2 > 1e-14
        if not np.any(keep):
            raise InputError(f"The terrain '{name}' has only degenerate (zero-area) faces.")
        self.corners = self.corners[keep]
        self.triangles = t[keep]
        n = n[keep] / area2[keep, None]
        # normals point up (a terrain is seen from above); vertical faces keep their direction
        self.normals = np.where((n[:, 2] < -1e-12)[:, None], -n, n)
        self.z_max = float(self.corners[..., 2].max())  # nothing of the terrain is higher (m)
        self._tri_lo, self._tri_hi = self.corners.min(axis=1), self.corners.max(axis=1)  # bounding boxes
        self._build_grid(cell_size)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_boxes(cls, ground_z: float, ground_min, ground_max, boxes, name: str = "terrain",
                   cell_size: float | None = None) -> TerrainMesh:
        """A flat ground rectangle ``ground_min..ground_max`` (XY, m) at ``ground_z`` with raised
        blocks standing on it. Each block is ``(quad, top_z)``: ``quad`` its four XY corners in
        counter-clockwise order seen from above, ``top_z`` its top (m); it gets a top face and four
        walls. ``cell_size``: the bins' size (m), as in the constructor."""
        x0, y0 = map(float, ground_min)
        x1, y1 = map(float, ground_max)
        verts = [(x0, y0, ground_z), (x1, y0, ground_z), (x1, y1, ground_z), (x0, y1, ground_z)]
        tris = [(0, 1, 2), (0, 2, 3)]
        for quad, top in boxes:
            base = len(verts)
            for z in (ground_z, top):
                verts += [(float(x), float(y), z) for x, y in quad]
            tris += [(base + 4, base + 5, base + 6), (base + 4, base + 6, base + 7)]  # top
            for a in range(4):  # walls
                b = (a + 1) % 4
                tris += [(base + a, base + b, base + 4 + b), (base + a, base + 4 + b, base + 4 + a)]
        return cls(np.array(verts), np.array(tris), cell_size=cell_size, name=name)

    @classmethod
    def flat(cls, z: float = 0.0, center=(0.0, 0.0), size: float = 40.0, name: str = "flat") -> TerrainMesh:
        """A square flat ground of side ``size`` (m) at height ``z`` (m), in 16 × 16 bins (two
        triangles need no finer grid, and a finer one costs more to build than it saves)."""
        c = np.asarray(center, float)
        return cls.from_boxes(z, c - size / 2, c + size / 2, [], name=name, cell_size=(size + 4e-6) / 16)

    # ------------------------------------------------------------------ grid
    def _build_grid(self, cell_size):
        lo = self.corners[..., :2].min(axis=1)
        hi = self.corners[..., :2].max(axis=1)
        self.xy_min = lo.min(axis=0) - 1e-6
        self.xy_max = hi.max(axis=0) + 1e-6
        if cell_size is None:
            # about two typical triangles, but no coarser than 1/64 of the mesh (a few huge ground
            # triangles must not put everything into one bin) and no finer than 5 cm
            extent = float(np.max(self.xy_max - self.xy_min))
            cell_size = max(min(2.0 * float(np.median(np.max(hi - lo, axis=1))), extent / 64.0), 0.05)
        self.cell_size = float(cell_size)
        self.shape = np.maximum(np.ceil((self.xy_max - self.xy_min) / self.cell_size).astype(int), 1)
        self._bins = self._make_bins(lo, hi, np.arange(len(self.corners)))
        # ray casts only need faces with an area seen from above (walls are skipped)
        v0 = self.corners[:, 1, :2] - self.corners[:, 0, :2]
        v1 = self.corners[:, 2, :2] - self.corners[:, 0, :2]
        seen = np.nonzero(np.abs(v0[:, 0] * v1[:, 1] - v1[:, 0] * v0[:, 1]) > 1e-12)[0]
        self._ray_bins = self._make_bins(lo[seen], hi[seen], seen)
        self._ray_table = self._dense_table(self._ray_bins)
        # per face seen from above: barycentric (u, w) = B·(x, y, 1) and plane z = P·(x, y, 1)
        a = self.corners[:, 0]
        e1 = self.corners[:, 1] - a
        e2 = self.corners[:, 2] - a
        den = e1[:, 0] * e2[:, 1] - e2[:, 0] * e1[:, 1]
        den = np.where(np.abs(den) > 1e-12, den, 1.0)
        bu = np.stack((e2[:, 1], -e2[:, 0]), axis=1) / den[:, None]  # u = bu·(p − a)
        bw = np.stack((-e1[:, 1], e1[:, 0]), axis=1) / den[:, None]  # w = bw·(p − a)
        self._bary = np.stack((np.column_stack((bu, -np.sum(bu * a[:, :2], axis=1))),
                               np.column_stack((bw, -np.sum(bw * a[:, :2], axis=1)))), axis=1)  # (T, 2, 3)
        dz = np.stack((e1[:, 2], e2[:, 2]), axis=1)  # z = a_z + u·e1_z + w·e2_z
        self._plane = np.einsum("tk,tkj->tj", dz, self._bary)
        self._plane[:, 2] += a[:, 2]
        self._coef = np.ascontiguousarray(np.concatenate((self._bary.reshape(-1, 6), self._plane), axis=1).T)
        self._cell_coef = None if self._ray_table is None else self._cell_coefficients(self._ray_table)
        self._single = None if self._ray_table is None else self._single_surface_cells(self._ray_tris)

    def _make_bins(self, lo, hi, ids):
        """CSR lists (start, count, triangle ids) of triangles ``ids`` per bin."""
        k, cells = self._rect_cells(lo, hi)
        order = np.argsort(cells, kind="stable")
        counts = np.bincount(cells, minlength=int(self.shape[0] * self.shape[1]))
        return np.concatenate(([0], np.cumsum(counts)[:-1])), counts, ids[k[order]]

    def _dense_table(self, bins):
        """The bins as a padded table ``(cells, K)`` of triangle ids (−1 pads) for point queries,
        or None when the densest bin holds many more triangles than the average (a table would
        waste more than it saves)."""
        start, count, tris = bins
        k = int(count.max()) if count.size else 0
        if k == 0 or k > DENSE_MAX_PER_CELL or count.size * k > DENSE_WASTE * max(len(tris), 1) + 4096:
            return None
        table = np.full((count.size, k), -1, dtype=np.int64)
        cell = np.repeat(np.arange(count.size), count)
        slot = np.arange(len(tris)) - np.repeat(start, count)
        table[cell, slot] = tris
        return table

    def _cell_coefficients(self, table):
        """Per bin (and one empty bin past the last, for points off the grid) the coefficients of
        its triangles, ``(9, cells + 1, K)``: row k of slot s holds coefficient k of triangle
        ``table[cell, s]`` (u, w and plane z as a·x + b·y + c). A padding slot gets u ≡ −1, so it
        never counts as a hit — a point query is then one row gather per coefficient."""
        pad = np.vstack((table, np.full((1, table.shape[1]), -1, dtype=table.dtype)))
        live = pad >= 0
        out = self._coef[:, np.where(live, pad, 0)]
        out[:, ~live] = 0.0
        out[2][~live] = -1.0
        self._ray_tris = pad
        return out

    def _single_surface_cells(self, tris):
        """Per bin (and the empty one past the last): the triangle that covers the whole bin and is
        on top of every other triangle of the bin there, or −1 — a point query in such a bin is one
        plane (the highest surface is that triangle's everywhere in it). Triangles are planar, so
        comparing them at the bin's four corners is comparing them over the whole bin."""
        sx, sy = int(self.shape[0]), int(self.shape[1])
        ix, iy = np.meshgrid(np.arange(sx), np.arange(sy))  # cell id = iy · sx + ix
        x = self.xy_min[0] + self.cell_size * (ix.ravel()[:, None] + np.array([0, 1, 1, 0]))  # (C, 4)
        y = self.xy_min[1] + self.cell_size * (iy.ravel()[:, None] + np.array([0, 0, 1, 1]))
        live = tris[:-1] >= 0  # (C, K)
        c = self._coef[:, np.maximum(tris[:-1], 0)][..., None]  # (9, C, K, 1)
        x, y = x[:, None, :], y[:, None, :]
        u = c[0] * x + c[1] * y + c[2]  # (C, K, 4)
        w = c[3] * x + c[4] * y + c[5]
        z = np.where(live[..., None], c[6] * x + c[7] * y + c[8], -np.inf)
        eps = 1e-12
        covers = live & np.all((u >= -eps) & (w >= -eps) & (u + w <= 1 + eps), axis=2)
        on_top = covers.copy()
        for k in range(tris.shape[1]):
            on_top &= np.all(z >= z[:, k:k + 1, :] - eps, axis=2)
        k = on_top.shape[1] - 1 - np.argmax(on_top[:, ::-1], axis=1)  # the later one, as ties go
        single = np.where(on_top.any(axis=1), tris[:-1][np.arange(len(k)), k], -1)
        return np.append(single, -1)

    def _rect_cells(self, lo, hi):
        """(query index, cell id) pairs for XY rectangles ``lo..hi`` ``(N, 2)``; rectangles that
        miss the grid give no pairs."""
        lo = np.asarray(lo, float)
        hi = np.asarray(hi, float)
        inside = np.all(hi >= self.xy_min, axis=1) & np.all(lo <= self.xy_max, axis=1)
        q = np.nonzero(inside)[0]
        i0 = np.clip(np.floor((lo[q] - self.xy_min) / self.cell_size).astype(int), 0, self.shape - 1)
        i1 = np.clip(np.floor((hi[q] - self.xy_min) / self.cell_size).astype(int), 0, self.shape - 1)
        nx = i1[:, 0] - i0[:, 0] + 1
        ny = i1[:, 1] - i0[:, 1] + 1
        counts = nx * ny
        pair_q = np.repeat(q, counts)
        k = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        nxr = np.repeat(nx, counts)
        cx = np.repeat(i0[:, 0], counts) + k % nxr
        cy = np.repeat(i0[:, 1], counts) + k // nxr
        return pair_q, cy * self.shape[0] + cx

    def _candidates(self, lo, hi, bins=None):
        """(query index, triangle index) pairs whose bins overlap each XY rectangle (duplicates possible)."""
        start, count, tris = self._bins if bins is None else bins
        q, cells = self._rect_cells(lo, hi)
        counts = count[cells]
        pair_q = np.repeat(q, counts)
        k = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        pair_t = tris[np.repeat(start[cells], counts) + k]
        return pair_q, pair_t

    # ------------------------------------------------------------------ vertical ray cast
    def ray_down(self, points, eps: float = 1e-6, normals: bool = True):
        """Highest surface at or below each point ``(N, 3)``.

        Returns ``z (N,)``, upward ``normal (N, 3)`` (None when ``normals`` is False: most callers
        need heights only), ``hit (N,)``; misses give ``z = -inf`` and normal +Z.
        """
        p = np.asarray(points, float).reshape(-1, 3)
        if self._ray_table is not None:
            return self._ray_down_dense(p[:, 0], p[:, 1], p[:, 2] + eps, normals)
        return self._ray_down_lists(p, eps, normals)

    def _ray_down_lists(self, p, eps, normals: bool = True):
        """:meth:`ray_down` through the bins' lists of (point, triangle) pairs."""
        n = len(p)
        q, t = self._candidates(p[:, :2], p[:, :2], self._ray_bins)
        xy1 = np.column_stack((p[:, :2], np.ones(n)))[q]
        uw = np.einsum("pij,pj->pi", self._bary[t], xy1)
        tol = 1e-9
        ok = (uw[:, 0] >= -tol) & (uw[:, 1] >= -tol) & (uw[:, 0] + uw[:, 1] <= 1 + tol)
        z = np.einsum("pj,pj->p", self._plane[t], xy1)
        ok &= z <= p[q, 2] + eps
        q, t, z = q[ok], t[ok], z[ok]
        out_z = np.full(n, -np.inf)
        out_n = np.tile([0.0, 0.0, 1.0], (n, 1)) if normals else None
        if len(q):
            np.maximum.at(out_z, q, z)  # highest hit per query
            if normals:
                top = z >= out_z[q]
                out_n[q[top]] = self.normals[t[top]]
        return out_z, out_n, np.isfinite(out_z)

    def _ray_down_dense(self, x, y, z_max, normals: bool = True):
        """:meth:`ray_down` through the padded table: a point in a bin with one surface on top
        (:meth:`_single_surface_cells`) is that triangle's plane, the others are tested against every
        triangle of their bin at once (ties between triangles at the same height keep the later one,
        as the lists do). ``x, y (N,)``; ``z_max (N,)`` the highest surface height that counts (None:
        any)."""
        cx = np.floor((x - self.xy_min[0]) / self.cell_size).astype(np.int64)
        cy = np.floor((y - self.xy_min[1]) / self.cell_size).astype(np.int64)
        sx, sy = int(self.shape[0]), int(self.shape[1])
        inside = (cx >= 0) & (cx < sx) & (cy >= 0) & (cy < sy) & (x <= self.xy_max[0]) & (y <= self.xy_max[1])
        cell = np.where(inside, cy * sx + cx, sx * sy)  # off the grid: the empty bin
        tri = self._single[cell]
        c = self._coef
        z = c[6].take(np.maximum(tri, 0)) * x + c[7].take(np.maximum(tri, 0)) * y + c[8].take(np.maximum(tri, 0))
        done = tri >= 0
        if z_max is not None:
            done &= z <= z_max  # under the top surface: a lower one may be hit
        rest = np.nonzero(~done)[0]
        hit = done.copy()
        out_z = np.where(done, z, -np.inf)
        if rest.size:
            out_z[rest], hit[rest], hit_tri = self._in_bins(x[rest], y[rest], cell[rest],
                                                            None if z_max is None else z_max[rest], normals)
            if normals:
                tri[rest] = hit_tri
        if not normals:
            return out_z, None, hit
        out_n = np.where(hit[:, None], self.normals[np.maximum(tri, 0)], np.array([0.0, 0.0, 1.0]))
        return out_z, out_n, hit

    def _in_bins(self, x, y, cell, z_max, which: bool = True):
        """Every point against every triangle of its bin: ``z``, ``hit`` and the triangle hit (−1;
        None unless ``which``: only normals need it)."""
        c = self._cell_coef  # (9, cells + 1, K)
        x, y = x[:, None], y[:, None]
        u = c[0].take(cell, axis=0) * x + c[1].take(cell, axis=0) * y + c[2].take(cell, axis=0)
        w = c[3].take(cell, axis=0) * x + c[4].take(cell, axis=0) * y + c[5].take(cell, axis=0)
        tol = 1e-9
        ok = (u >= -tol) & (w >= -tol) & (u + w <= 1 + tol)
        z = c[6].take(cell, axis=0) * x + c[7].take(cell, axis=0) * y + c[8].take(cell, axis=0)
        if z_max is not None:
            ok &= z <= z_max[:, None]
        zk = np.where(ok, z, -np.inf)
        out_z = zk.max(axis=1)
        if not which:
            return out_z, out_z > -np.inf, None
        top = ok & (zk >= out_z[:, None])
        last = top.shape[1] - 1 - np.argmax(top[:, ::-1], axis=1)
        return out_z, out_z > -np.inf, self._ray_tris[cell, last]

    def height(self, xy, normals: bool = True):
        """Ground protocol: highest surface above each XY point ``(N, 2)`` → ``z (N,)``, upward
        ``normal (N, 3)`` (None when ``normals`` is False), ``hit (N,)`` (misses: z = -inf)."""
        xy = np.asarray(xy, float).reshape(-1, 2)
        if self._ray_table is not None:
            return self._ray_down_dense(xy[:, 0], xy[:, 1], None, normals)
        return self._ray_down_lists(np.column_stack((xy, np.full(len(xy), np.inf))), 0.0, normals)

    # ------------------------------------------------------------------ closest point
    def closest_point(self, points, max_distance: float):
        """Closest surface point within ``max_distance`` (m) of each point ``(N, 3)``.

        Returns ``closest (N, 3)``, triangle ``normal (N, 3)``, ``distance (N,)``, ``hit (N,)``
        (no triangle within reach: distance inf, closest = the point itself).
        """
        p = np.asarray(points, float).reshape(-1, 3)
        n = len(p)
        r = float(max_distance)
        q, t = self._candidates(p[:, :2] - r, p[:, :2] + r)
        cp = _closest_on_triangles(p[q], self.corners[t])
        d = np.linalg.norm(cp - p[q], axis=-1)
        ok = d <= r
        q, t, cp, d = q[ok], t[ok], cp[ok], d[ok]
        out_p = p.copy()
        out_n = np.tile([0.0, 0.0, 1.0], (n, 1))
        out_d = np.full(n, np.inf)
        if len(q):
            order = np.lexsort((d, q))
            q, t, cp, d = q[order], t[order], cp[order], d[order]
            first = np.r_[True, q[1:] != q[:-1]]
            out_p[q[first]] = cp[first]
            out_n[q[first]] = self.normals[t[first]]
            out_d[q[first]] = d[first]
        return out_p, out_n, out_d, np.isfinite(out_d)

    # ------------------------------------------------------------------ oriented boxes
    def boxes_intersect(self, centers, axes, half_extents, tolerance: float = 0.0):
        """Which oriented boxes intersect the terrain by more than ``tolerance``.

        centers ``(N, 3)`` m; axes ``(N, 3, 3)`` with the box's unit axes as **columns**;
        half_extents ``(N, 3)`` m (zero is allowed: a flat box). A box and a triangle intersect
        when their projections overlap by more than ``tolerance`` (m) on every separating axis —
        the penetration depth exceeds it — so a box resting on the surface does not count.
        Returns ``(N,)`` bool.
        """
        c = np.asarray(centers, float).reshape(-1, 3)
        ax = np.asarray(axes, float).reshape(-1, 3, 3)
        e = np.maximum(np.asarray(half_extents, float).reshape(-1, 3), 0.0)
        n = len(c)
        reach = np.einsum("nij,nj->ni", np.abs(ax), e)  # half size of the box's world AABB
        low = np.nonzero(c[:, 2] - reach[:, 2] + tolerance < self.z_max)[0]  # others are above everything
        ql, t = self._candidates(c[low, :2] - reach[low, :2], c[low, :2] + reach[low, :2])
        if len(ql) == 0:
            return np.zeros(n, bool)
        # quick reject: world bounding boxes that overlap by no more than the tolerance
        box_lo, box_hi = c[low] - reach[low] + tolerance, c[low] + reach[low] - tolerance
        near = np.all((self._tri_hi[t] > box_lo[ql]) & (self._tri_lo[t] < box_hi[ql]), axis=1)
        q, t = low[ql[near]], t[near]
        if len(q) == 0:
            return np.zeros(n, bool)
        # triangle corners in each box's frame: v' = Aᵀ (v − c)
        v = np.einsum("pji,pkj->pki", ax[q], self.corners[t] - c[q][:, None, :])
        hit = _aabb_triangle_overlap(e[q], v, tolerance)
        return np.bincount(q[hit], minlength=n) > 0


def _closest_on_triangles(p, tri):
    """Closest points on triangles ``tri (M, 3, 3)`` to points ``p (M, 3)``."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    nrm = np.cross(b - a, c - a)
    nn = np.maximum(np.sum(nrm * nrm, axis=-1), 1e-300)
    proj = p - (np.sum((p - a) * nrm, axis=-1) / nn)[:, None] * nrm
    # barycentric inside test of the projection
    inside = np.ones(len(p), bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.sum(np.cross(v - u, proj - u) * nrm, axis=-1) >= 0.0
    best = proj.copy()
    best_d = np.where(inside, np.sum((proj - p) ** 2, axis=-1), np.inf)
    for u, v in ((a, b), (b, c), (c, a)):
        e = v - u
        s = np.clip(np.sum((p - u) * e, axis=-1) / np.maximum(np.sum(e * e, axis=-1), 1e-300), 0.0, 1.0)
        x = u + s[:, None] * e
        d = np.sum((x - p) ** 2, axis=-1)
        better = d < best_d
        best = np.where(better[:, None], x, best)
        best_d = np.where(better, d, best_d)
    return best


def _aabb_triangle_overlap(e, v, tolerance: float = 0.0):
    """Separating-axis test of centred boxes (half extents ``e (M, 3)``) against triangles
    ``v (M, 3, 3)`` in the box frame (Akenine-Möller's 13 axes, normalised). They intersect when the
    projections overlap by more than ``tolerance`` on every axis — the push needed to part them
    along that axis (degenerate axes are skipped). The three box axes first (a projection on one is
    a coordinate), then the triangle's normal and the nine box axis × edge products at once."""
    # box face normals: the push along axis i is min(e_i − min v_i, max v_i + e_i)
    sep = np.any(np.minimum(e - v.min(axis=1), v.max(axis=1) + e) <= tolerance, axis=1)
    keep = np.nonzero(~sep)[0]
    if keep.size == 0:
        return ~sep
    e, v = e[keep], v[keep]
    edges = np.stack((v[:, 1] - v[:, 0], v[:, 2] - v[:, 1], v[:, 0] - v[:, 2]), axis=1)  # (M, 3, 3)
    ex, ey, ez = edges[..., 0], edges[..., 1], edges[..., 2]
    zero = np.zeros_like(ex)
    axes = np.empty((len(keep), 10, 3))
    axes[:, 0] = cross(edges[:, 0], edges[:, 1])  # the triangle's normal
    axes[:, 1:4] = np.stack((zero, -ez, ey), axis=-1)  # x × edge j
    axes[:, 4:7] = np.stack((ez, zero, -ex), axis=-1)  # y × edge j
    axes[:, 7:10] = np.stack((-ey, ex, zero), axis=-1)  # z × edge j
    norm = np.sqrt(np.sum(axes * axes, axis=-1))
    ok = norm > 1e-9
    axes = axes / np.where(ok, norm, 1.0)[..., None]
    proj = np.einsum("mak,mck->mac", axes, v)
    r = np.sum(e[:, None, :] * np.abs(axes), axis=-1)
    depth = np.minimum(r - proj.min(axis=2), proj.max(axis=2) + r)  # push needed to separate
    sep[keep] = np.any(ok & (depth <= tolerance), axis=1)
    return ~sep
