"""Where the keys go: bottom-up merging of segments within a per-frame error bound.

Start with a key on every frame a key may take, then repeatedly remove the keys whose removal costs
least, as long as the merged segment (fitted by :mod:`.fit`: through the target at its two end keys,
end slopes by least squares) keeps every frame within its bound. A key's *cost* is the largest
bounded error of the segment its removal would make: ``|M_s (y_s − target_s)| / τ_s`` over the frames
of the merged segment, where ``M_s`` maps the channels' error on frame ``s`` to the displacement of
the points they move (:mod:`.forward`) and ``τ_s`` is that frame's bound. Each round removes every
key whose cost is at most 1 and lower than both neighbouring keys' costs (so that no two
neighbouring keys go in one round); only the keys next to a removed one need their cost again.

Because a segment's fit depends on its own frames only, a removal decision is exact, and merging the
cheapest keys first places keys where the motion needs them: close together where it turns sharply
(a heel strike, a knee that pops), far apart where it flows. On the generator clips this needs about
half the keys of refining top-down (splitting the worst segment), and a few rounds of whole-array
operations for all curves of a level at once (bench/key_reduction.py).

The curves of several key groups are merged together by laying their samples end to end (each
group's first and last sample fixed as keys), so one round handles every curve of a level.
"""

from __future__ import annotations

import numpy as np

from .fit import fit_rows


def segment_costs(x, target, maps, bound, starts, ends) -> np.ndarray:
    """Largest bounded error ``max |M_s r_s| / τ_s`` of each fitted segment ``starts[i]``–``ends[i]``
    (``target`` ``(C, S)``, ``maps`` ``(3, C, S)``, ``bound`` ``(S,)``: channels first, see :func:`.fit.fit_rows`)."""
    rows, seg, residual, _, _ = fit_rows(x, target, starts, ends)
    moved = np.zeros((maps.shape[0], len(rows)))
    for c in range(residual.shape[0]):
        moved += np.take(maps[:, c], rows, axis=1) * residual[c]
    err = np.sqrt(np.sum(moved * moved, axis=0)) / np.take(bound, rows)
    first = np.concatenate([[0], np.cumsum(ends - starts + 1)[:-1]])
    return np.maximum.reduceat(err, first)


def merge(x: np.ndarray, target: np.ndarray, maps: np.ndarray, bound: np.ndarray, candidates: np.ndarray,
          fixed: np.ndarray, max_rounds: int = 200) -> np.ndarray:
    """Keys (sorted sample indices) of the fitted curve of ``target`` ``(C, S)`` (channels first) at
    frames ``x`` whose bounded error (see the module docstring) stays at most 1 on every sample, from a
    key on every ``candidates`` sample (booleans ``(S,)``) — ``fixed`` ones (booleans) are never removed.

    ``maps`` ``(3, C, S)``: per sample, channel error → point displacement (m); ``bound`` ``(S,)``
    (m). Samples of several groups laid end to end are merged at once when each group's first and
    last sample are ``fixed``."""
    keys = np.nonzero(candidates | fixed)[0]
    removable = ~fixed[keys]
    cost = np.full(len(keys), np.inf)
    dirty = removable.copy()
    for _ in range(max_rounds):
        inner = np.nonzero(dirty[1:-1])[0] + 1
        if len(inner):
            cost[inner] = segment_costs(x, target, maps, bound, keys[inner - 1], keys[inner + 1])
        dirty[:] = False
        ok = removable & (cost <= 1.0)
        if not ok.any():
            break
        left = np.concatenate([[np.inf], cost[:-1]])
        right = np.concatenate([cost[1:], [np.inf]])
        # lower than the left neighbour (ties go to the left one) and not above the right one
        go = ok & (cost < left) & (cost <= right)
        go[1:] &= ~go[:-1]  # equal costs in a row: every other one
        gone = np.nonzero(go)[0]
        if not len(gone):
            break
        near = np.zeros(len(keys), dtype=bool)
        near[np.maximum(gone - 1, 0)] = True
        near[np.minimum(gone + 1, len(keys) - 1)] = True
        keep = ~go
        keys, removable, cost, dirty = keys[keep], removable[keep], cost[keep], (near & removable)[keep]
    return keys
