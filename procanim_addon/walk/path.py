"""The walking path: an arc-length-parametrised polyline with rounded corners, dropped onto the ground.

The Blender side samples the evaluated curve object into an armature-space polyline ``(N, 3)``;
here it is resampled every ``ds`` metres of *horizontal* arc length s (the step lengths w_i of
Tsutsuguchi et al. 2000 are horizontal distances), its corners are rounded by a Gaussian of
``corner_radius`` metres (ends kept; the paper: "the intersection of two lines is smoothed"), and each
sample's height is the ground's (a vertical ray) — or the curve's own when there is no ground.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..curves import gaussian_smooth
from ..errors import InputError
from ..ground import UP

RISER_MIN_M = 0.02  # a height jump larger than this between 1-cm samples is a riser, not a slope


@dataclass
class WalkPath:
    """Samples of the path every ``ds`` m of horizontal arc length.

    s:        (N,) horizontal arc length (m), s[0] = 0
    points:   (N, 3) on the ground (m, armature space)
    tangent:  (N, 3) horizontal unit tangents
    normal:   (N, 3) ground normals under the samples
    raw:      (M, 3) the polyline as given (for deviation measures)
    """

    s: np.ndarray
    points: np.ndarray
    tangent: np.ndarray
    normal: np.ndarray
    raw: np.ndarray

    @property
    def length(self) -> float:
        return float(self.s[-1])

    def at(self, s) -> np.ndarray:
        """Points (..., 3) at arc lengths ``s`` (clamped to the path)."""
        s = np.asarray(s, float)
        return np.stack([np.interp(s, self.s, self.points[:, k]) for k in range(3)], axis=-1)

    def tangent_at(self, s) -> np.ndarray:
        s = np.asarray(s, float)
        t = np.zeros(s.shape + (3,))  # horizontal: z stays 0
        t[..., 0], t[..., 1] = np.interp(s, self.s, self.tangent[:, 0]), np.interp(s, self.s, self.tangent[:, 1])
        norm = np.sqrt(t[..., 0] * t[..., 0] + t[..., 1] * t[..., 1])[..., None]
        return t / np.maximum(norm, 1e-12)

    @functools.cached_property
    def heading(self) -> np.ndarray:
        """(N,) heading angle (rad) of the samples' tangents, atan2(y, x), unwrapped along the path."""
        return np.unwrap(np.arctan2(self.tangent[:, 1], self.tangent[:, 0]))

    def heading_at(self, s) -> np.ndarray:
        """Heading angle (rad) of the tangent, atan2(y, x), unwrapped along the path."""
        return np.interp(np.asarray(s, float), self.s, self.heading)

    def left_at(self, s) -> np.ndarray:
        """Horizontal unit vectors to the left of the tangent (up × tangent = (−t_y, t_x, 0))."""
        t = self.tangent_at(s)
        out = np.zeros_like(t)
        out[..., 0], out[..., 1] = -t[..., 1], t[..., 0]
        return out


def _horizontal_arclength(p: np.ndarray) -> np.ndarray:
    seg = np.linalg.norm(np.diff(p[:, :2], axis=0), axis=-1)
    return np.concatenate(([0.0], np.cumsum(seg)))


def build_path(points, ground=None, corner_radius: float = 0.15, ds: float = 0.01) -> WalkPath:
    """Resample, round the corners and drop the polyline onto ``ground`` (or keep its own z).

    Raises :class:`InputError` for a path with fewer than two points, of zero horizontal length,
    or that leaves the ground object.
    """
    p = np.asarray(points, float)
    if p.ndim != 2 or p.shape[0] < 2 or p.shape[1] != 3 or not np.all(np.isfinite(p)):
        raise InputError("The walking path needs at least two points (a curve with some length).")
    s_raw = _horizontal_arclength(p)
    length = s_raw[-1]
    if length < 1e-3:
        raise InputError("The walking path has no horizontal length: a walk needs a curve that goes somewhere.")
    # a vertical segment (two points at one horizontal position) is a riser: the height changes
    # there as a step, not as a ramp from the point before
    s_q = s_raw + 1e-7 * np.arange(len(s_raw))
    q = p
    n = max(int(np.ceil(length / ds)) + 1, 2)
    s = np.linspace(0.0, length, n)
    res = np.stack([np.interp(s, s_q, q[:, k]) for k in range(3)], axis=-1)
    # round the corners in plan only (the curve's own height keeps its steps)
    sm = res.copy()
    sm[:, :2] = gaussian_smooth(res[:, :2], corner_radius / (length / (n - 1)))
    # re-parametrise the smoothed curve by its own horizontal arc length
    s2 = _horizontal_arclength(sm)
    n2 = max(int(np.ceil(s2[-1] / ds)) + 1, 2)
    s_new = np.linspace(0.0, s2[-1], n2)
    pts = np.stack([np.interp(s_new, s2, sm[:, k]) for k in range(3)], axis=-1)
    if ground is not None:
        z, normal, hit = ground.height(pts[:, :2])
        if not np.all(hit):
            first = int(np.argmin(hit))
            raise InputError(
                f"The walking path leaves the ground object {s_new[first]:.2f} m along the path "
                f"(at x={pts[first, 0]:.2f}, y={pts[first, 1]:.2f}); make the ground cover the whole path."
            )
        pts[:, 2] = z
    else:
        normal = np.broadcast_to(UP, pts.shape).copy()
    d = np.gradient(pts[:, :2], s_new, axis=0)
    tan = np.zeros_like(pts)
    tan[:, :2] = d / np.maximum(np.linalg.norm(d, axis=-1, keepdims=True), 1e-12)
    return WalkPath(s_new, pts, tan, np.asarray(normal, float), p)


def slope_normals(path: WalkPath, riser_min: float = RISER_MIN_M) -> np.ndarray:
    """(N, 3) upward unit normals of the path's own heights, a sample's slope along its tangent the
    mean of its two segments' (dz/ds) — a segment rising more than ``riser_min`` m is a riser (a
    vertical face, as :func:`~.steps.find_edges` reads it) and lends no slope, so the treads beside
    it stay level."""
    dz, ds = np.diff(path.points[:, 2]), np.maximum(np.diff(path.s), 1e-12)
    ramp = np.abs(dz) <= riser_min
    seg = np.where(ramp, dz / ds, 0.0)
    pad = lambda a: (np.concatenate(([0], a)), np.concatenate((a, [0])))  # noqa: E731 (the segments before, after)
    (sb, sa), (cb, ca) = pad(seg), pad(ramp.astype(float))
    slope = (sb + sa) / np.maximum(cb + ca, 1.0)
    n = np.zeros_like(path.points)
    n[:, :2] = -slope[:, None] * path.tangent[:, :2]
    n[:, 2] = 1.0
    return n / np.linalg.norm(n, axis=-1, keepdims=True)


class PathHeightGround:
    """A ground made of the path's own heights (used when no ground object is given): the height
    at a horizontal position is that of the nearest path sample, the normal that of the path's
    slope there (:func:`slope_normals`).

    The nearest sample is found through a grid of ``cell`` m squares (built once): any sample
    within ``cell`` of a query lies in the 3 × 3 cells around it, so the search there is exact for
    those queries; the others (farther than ``cell`` from the path) are searched among all samples.
    Ties go to the lower sample index, as a search over all samples gives them."""

    def __init__(self, path: WalkPath, reach: float = 1.0, cell: float = 0.25):
        self.path = path
        self.reach = reach
        self.cell = cell
        xy = path.points[:, :2]
        c = np.floor(xy / cell).astype(np.int64)
        self._lo = c.min(axis=0) - 1
        self._dims = c.max(axis=0) - self._lo + 2  # a free ring of cells around the samples
        keys = np.ravel_multi_index((c - self._lo).T, self._dims)
        self._order = np.argsort(keys, kind="stable")  # by cell, then by sample index
        self._keys = keys[self._order]
        self.normals = slope_normals(path)

    def height(self, xy):
        xy = np.asarray(xy, float).reshape(-1, 2)
        near = self._nearest(xy)
        return self.path.points[near, 2], self.normals[near], np.ones(len(xy), dtype=bool)

    def _nearest(self, xy: np.ndarray) -> np.ndarray:
        pts = self.path.points[:, :2]
        best_d = np.full(len(xy), np.inf)
        best_i = np.zeros(len(xy), dtype=np.int64)
        qc = np.floor(xy / self.cell).astype(np.int64) - self._lo
        inside = np.all((qc >= 1) & (qc <= self._dims - 2), axis=1)
        for ox in (-1, 0, 1):
            for oy in (-1, 0, 1):
                cell = np.where(inside[:, None], qc + (ox, oy), 0)
                k = np.ravel_multi_index(cell.T, self._dims)
                start = np.searchsorted(self._keys, k, "left")
                count = np.where(inside, np.searchsorted(self._keys, k, "right") - start, 0)
                m = int(count.max(initial=0))
                if m == 0:
                    continue
                slot = np.arange(m)
                cand = self._order[np.minimum(start[:, None] + slot, len(self._order) - 1)]
                d = np.sum((xy[:, None, :] - pts[cand]) ** 2, axis=-1)
                d[slot[None, :] >= count[:, None]] = np.inf
                j = np.argmin(d, axis=1)
                dj, ij = d[np.arange(len(xy)), j], cand[np.arange(len(xy)), j]
                better = (dj < best_d) | ((dj == best_d) & (ij < best_i))
                best_d, best_i = np.where(better, dj, best_d), np.where(better, ij, best_i)
        far = np.flatnonzero(~(best_d <= self.cell ** 2))
        for a in range(0, len(far), 512):  # farther than a cell from every sample: all samples
            q = far[a:a + 512]
            best_i[q] = np.argmin(np.sum((xy[q, None, :] - pts[None, :, :]) ** 2, axis=-1), axis=1)
        return best_i


def deviation_from_polyline(points_xy: np.ndarray, polyline: np.ndarray, s_hint=None,
                            window: float = 2.0) -> np.ndarray:
    """Horizontal distance (m) of each point ``(F, 2+)`` to a polyline ``(M, 2+)`` (its segments).

    ``s_hint`` (F,): the points' approximate horizontal arc length along the polyline (m); when
    given, only segments within ``window`` m of it are searched (fast on long paths).
    """
    p = np.asarray(points_xy, float)[:, :2]
    poly = np.asarray(polyline, float)[:, :2]
    a, b = poly[:-1], poly[1:]
    ab = b - a
    l2 = np.maximum(np.sum(ab * ab, axis=-1), 1e-18)
    out = np.full(len(p), np.inf)
    if s_hint is not None:
        s_seg = np.concatenate(([0.0], np.cumsum(np.sqrt(l2))))
        lo = np.searchsorted(s_seg, np.asarray(s_hint) - window) - 1
        hi = np.searchsorted(s_seg, np.asarray(s_hint) + window) + 1
        span = int(np.max(hi - lo)) if len(p) else 0
        if span < len(a):
            idx = np.clip(np.maximum(lo, 0)[:, None] + np.arange(span + 1)[None, :], 0, len(a) - 1)  # (F, S)
            # x and y apart (no reductions over a last axis of 2), the nearest by squared distance
            dx, dy = p[:, :1] - np.take(a[:, 0], idx), p[:, 1:] - np.take(a[:, 1], idx)
            bx, by = np.take(ab[:, 0], idx), np.take(ab[:, 1], idx)
            t = np.clip((dx * bx + dy * by) / np.take(l2, idx), 0.0, 1.0)
            ex, ey = dx - t * bx, dy - t * by
            return np.sqrt(np.min(ex * ex + ey * ey, axis=1))
    for i in range(0, len(p), 256):
        pp = p[i:i + 256, None, :]
        t = np.clip(np.sum((pp - a) * ab, axis=-1) / l2, 0.0, 1.0)
        d = np.linalg.norm(pp - (a + t[..., None] * ab), axis=-1)
        out[i:i + 256] = d.min(axis=1)
    return out
