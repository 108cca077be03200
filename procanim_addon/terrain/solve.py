"""The iterative update of Jo & Choi's Table 1 and the multi-resolution solve over a clip.

Per frame, starting from the source joints (p_previous = p_current = source)::

    p_update = d·(p_current − p_previous) + ½·(p_estimate − p_current)/k        (Eq. 3)
    p_new    = p_current + p_update
    p_new    ← bone lengths restored (Eq. 4, parents first)

repeated until the largest update is under ``tolerance_m`` (:class:`UpdateRule`). d is the damping
coefficient (it carries part of the previous update: momentum) and k = 9 at first. **RECON**: the paper calls k
"the constant of the number of repetitions" and gives only its first value; here k shrinks by
``k_decay`` per iteration down to ``k_min`` so the solve settles in tens of iterations.

**RECON** (rigid short bones): a descriptor estimate is only as good as the terrain under the
joint's own descriptor points, and two joints a few centimetres apart (a neck, a foot, a toe) can
see different sides of a block's edge, or be lifted by different amounts as their spirals grow with
height. After Eq. 4 puts a child back at its bone length from its solved parent, such a bone points
from the parent toward a target that may lie behind it, and can turn round from one frame to the
next (docs/terrain.md has the figures). Joints flagged in
``carry`` therefore aim at their parent's current position plus their source offset
(p_k + s_j − s_k): the bone keeps its source direction and the descriptors move it only through
its parent.

Multi-resolution (Lee & Shin 1999): frames at ``key_interval`` are solved, the joint
displacements (solved − source) are splined between them, and each interval is halved where the
spline misses the solved midpoint by more than ``tolerance_m`` — refined until under tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..curves import catmull_rom
from .params import AdaptParams


@dataclass
class SolveStats:
    iterations: int = 0
    frames_solved: int = 0
    levels: int = 0


_DEFAULTS = AdaptParams()  # the rule's defaults are the adaptation's


@dataclass(frozen=True)
class UpdateRule:
    """The constants of Eq. 3 and when to stop: damping d, k0 the first k (the paper: 9), k shrunk by
    ``k_decay`` per iteration down to ``k_min`` (RECON); the solve stops when no joint moved more than
    ``tolerance_m`` (m) in an iteration, or after ``max_iterations``."""

    damping: float = _DEFAULTS.damping
    k0: float = _DEFAULTS.k0
    k_decay: float = _DEFAULTS.k_decay
    k_min: float = _DEFAULTS.k_min
    tolerance_m: float = _DEFAULTS.iteration_tolerance_m
    max_iterations: int = _DEFAULTS.max_iterations

    @classmethod
    def of(cls, p: AdaptParams) -> UpdateRule:
        """The rule an adaptation's parameters ``p`` set."""
        return cls(p.damping, p.k0, p.k_decay, p.k_min, p.iteration_tolerance_m, p.max_iterations)


def damped_solve(source: np.ndarray, target: np.ndarray, restore, rule: UpdateRule | None = None,
                 stats: SolveStats | None = None, tick=None,
                 carry: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Joint positions ``(N, J, 3)`` moved from ``source`` toward the Eq. 2 ``target`` (same shape)
    with Eq. 3 (constants ``rule``), lengths restored by ``restore(p)`` after every step; ``tick()``
    (if given) is called once per iteration (progress, and where a cancel is seen). ``carry`` =
    (parent joint ``(J,)``, flags ``(J,)`` bool): flagged joints (with a parent) aim at their
    parent's current position plus their source offset instead of their target (the module
    docstring: rigid short bones)."""
    target = np.asarray(target, dtype=float)
    rigid = parent = None
    if carry is not None:
        parent, flags = np.asarray(carry[0]), np.asarray(carry[1], bool)
        rigid = np.nonzero(flags & (parent >= 0))[0]
        if rigid.size:
            offset = np.asarray(source, float)[:, rigid] - np.asarray(source, float)[:, parent[rigid]]
            target = target.copy()
        else:
            rigid = None
    r = rule or UpdateRule()
    p_cur = np.array(source, dtype=float)
    p_prev = p_cur.copy()
    k = r.k0
    iterations = 0
    while iterations < r.max_iterations:
        iterations += 1
        if tick is not None:
            tick()
        if rigid is not None:
            target[:, rigid] = p_cur[:, parent[rigid]] + offset
        update = r.damping * (p_cur - p_prev) + 0.5 * (target - p_cur) / k  # Eq. 3
        p_prev = p_cur
        p_cur = restore(p_cur + update)  # Eq. 4
        k = max(r.k_min, k * r.k_decay)
        if np.max(np.abs(p_cur - p_prev)) < r.tolerance_m:
            break
    if stats is not None:
        stats.iterations = max(stats.iterations, iterations)
    return p_cur


def multires_solve(frames: int, solve_frames, key_interval: int = 8, tolerance_m: float = 0.005,
                   stats: SolveStats | None = None) -> np.ndarray:
    """Displacements ``(F, J, 3)`` for a whole clip from ``solve_frames(idx) -> (len(idx), J, 3)``
    (the solved displacement at those frame indices), solving only the frames the refinement needs."""
    step = max(1, int(key_interval))
    keys = sorted(set(range(0, frames, step)) | {frames - 1})
    solved = dict(zip(keys, solve_frames(np.array(keys))))
    open_intervals = [(a, b) for a, b in zip(keys[:-1], keys[1:]) if b - a > 1]
    levels = 1
    while open_intervals:
        mids = np.array([(a + b) // 2 for a, b in open_intervals])
        kt = np.array(sorted(solved))
        spline = catmull_rom(kt, np.stack([solved[k] for k in kt]), mids.astype(float))
        fresh = solve_frames(mids)
        err = np.max(np.linalg.norm(spline - fresh, axis=-1), axis=-1)
        nxt = []
        for (a, b), m, v, e in zip(open_intervals, mids, fresh, err):
            solved[int(m)] = v
            if e > tolerance_m:
                nxt += [(x, y) for x, y in ((a, int(m)), (int(m), b)) if y - x > 1]
        open_intervals = nxt
        levels += 1
    kt = np.array(sorted(solved))
    out = catmull_rom(kt, np.stack([solved[k] for k in kt]), np.arange(frames, dtype=float))
    out[kt] = np.stack([solved[k] for k in kt])
    if stats is not None:
        stats.frames_solved = len(kt)
        stats.levels = levels
    return out
