"""Pairs of nearby points through a uniform grid: the work grows with the points and their
neighbours, not with every pair (a crowd of N walkers asks N·k pairs, not N²)."""

from __future__ import annotations

import numpy as np

_OFFSETS = np.array([(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)], dtype=np.int64)


def near_pairs(xy: np.ndarray, radius: float, groups: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(i, j): every ordered pair of points ``xy`` (N, 2) closer than ``radius`` (m), i ≠ j, sorted
    by i then by distance. ``groups`` (N,) ints: only points of the same group pair up (e.g. the
    frame a pelvis position belongs to).

    Points go into square cells of side ``radius``; a point's neighbours lie in the 3 × 3 cells
    around it, found by a sorted search over the cells' keys."""
    xy = np.asarray(xy, float)
    n = len(xy)
    if n < 2 or not radius > 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    cell = np.floor((xy - xy.min(axis=0)) / radius).astype(np.int64) + 1  # a free ring of cells at 0
    span = int(cell.max()) + 2
    group = np.zeros(n, np.int64) if groups is None else np.asarray(groups, np.int64)
    key = (group * span + cell[:, 0]) * span + cell[:, 1]
    order = np.argsort(key, kind="stable")
    sorted_keys = key[order]
    firsts, seconds = [], []
    for dx, dy in _OFFSETS:
        k = (group * span + cell[:, 0] + dx) * span + cell[:, 1] + dy
        lo = np.searchsorted(sorted_keys, k, "left")
        count = np.searchsorted(sorted_keys, k, "right") - lo
        if not count.any():
            continue
        i = np.repeat(np.arange(n), count)
        j = order[np.repeat(lo, count) + (np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count))]
        firsts.append(i)
        seconds.append(j)
    i, j = np.concatenate(firsts), np.concatenate(seconds)
    d2 = np.sum((xy[i] - xy[j]) ** 2, axis=1)
    keep = (i != j) & (d2 < radius * radius)
    i, j, d2 = i[keep], j[keep], d2[keep]
    by = np.lexsort((j, d2, i))
    return i[by], j[by]
