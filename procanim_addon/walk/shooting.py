"""The COM's shooting least squares (:mod:`.com`), solved in time order: linear in the walk's length.

Find the coefficients c (m,) that minimise

    Σ_r w_r² (h_r · S(i_r) − y_r)²  +  Σ_j λ_j² (c_j − c̄_j)²,        S(i) = Σ_j c_j · (P_j(i), V_j(i)),

where S(i) is the position and velocity the coefficients give at grid index i (basis j: a footstep's
force over its stance window integrated twice), h_r picks the position or the velocity of row r and
c̄ are the nominal values. A row depends on every footstep before it, through S; but S at index i
follows from S at an earlier index e and the few bases whose windows lie between:

    S(i) = F(i − e) · S(e) + Σ_{j active} c_j · g_j(e, i),      F(k) = [[1, k·dt], [0, 1]],

with g_j(e, i) = (P_j(i) − P_j(e) − V_j(e)·(i − e)·dt, V_j(i) − V_j(e)), zero for a basis whose
window lies wholly before or after [e, i]. So the rows are cut into blocks of time; going back from
the last block, each block's new coefficients are eliminated by a small QR against the state at the
block's start and the coefficients it shares with the block before (a square-root information
smoother). The solution is the same least-squares solution as one QR of the whole system (to
rounding), in time and memory linear in the rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

BLOCK_ROWS = 16  # rows per block of time

Integrals = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass
class _Block:
    """One block of time [e, e_next]: its rows, its bases, and its part of the factorisation."""

    rows: np.ndarray     # (k,) the rows in the block
    new: np.ndarray      # bases first active here: eliminated here
    shared: np.ndarray   # bases active in the block before too: part of the block's state z
    active: np.ndarray   # new then shared
    step: float          # (e_next − e)·dt (s)
    G: np.ndarray        # (2, len(active)) g_j(e, e_next)
    Q: np.ndarray        # the block's orthogonal factor (taken to each right-hand side)
    R_new_inv: np.ndarray  # (len(new), len(new)): the inverse of R's upper triangle over the new coefficients
    R_state: np.ndarray  # (len(new), 2 + len(shared)): the new coefficients against z = (S(e), c_shared)


class ShootingSystem:
    """The shooting's least squares factorised once for a set of rows; :meth:`solve` for their values.

    integrals: (j, i) → (V_j(i), P_j(i)) for arrays of basis and grid indices (broadcast)
    windows:   (lo (m,), hi (m,)): V_j and P_j are 0 up to index lo_j and a straight line from hi_j
    idx:       (R,) grid index of each row; is_pos (R,): a position row (else velocity); weight (R,) w_r
    reg:       (m,) λ_j; dt: the grid's step (s)
    """

    def __init__(self, integrals: Integrals, windows, idx, is_pos, weight, reg, dt: float,
                 block_rows: int = BLOCK_ROWS):
        lo, hi = (np.asarray(w, int) for w in windows)
        idx = np.asarray(idx, int)
        self.m, self.weight, self.reg = len(lo), np.asarray(weight, float), np.asarray(reg, float)
        order = np.argsort(idx, kind="stable")
        times = np.unique(idx)
        ends = np.unique(np.concatenate([[0], times[block_rows - 1::block_rows], times[-1:]]))
        if len(ends) == 1:  # every row at index 0: one block of no length
            ends = np.array([0, 0])
        blocks_of = np.clip(np.searchsorted(ends, idx[order], "left") - 1, 0, len(ends) - 2)
        # bases active in block b: hi_j > e_b and lo_j < e_{b+1}
        first = np.searchsorted(ends[1:], lo, "right")
        last = np.searchsorted(ends[:-1], hi, "left") - 1
        self.blocks: list[_Block] = []
        carried = np.zeros((0, 2))  # R of the block after, over its state (S, its shared coefficients)
        carried_shared = np.zeros(0, int)
        for b in range(len(ends) - 2, -1, -1):
            e, e_next = int(ends[b]), int(ends[b + 1])
            rows = order[blocks_of == b]
            on = (first <= b) & (last >= b)
            new, shared = np.flatnonzero(on & (first == b)), np.flatnonzero(on & (first < b))
            active = np.concatenate([new, shared])
            points = np.concatenate([[e], idx[rows], [e_next]])
            v, p = integrals(active[:, None], points[None, :])
            gaps = (points - e) * dt
            g_pos = p - p[:, :1] - v[:, :1] * gaps[None, :]
            g_vel = v - v[:, :1]
            pos_rows = is_pos[rows]
            w = self.weight[rows]
            # the block's rows over the columns (new, S(e), shared)
            n_new, n_act = len(new), len(active)
            M_rows = np.zeros((len(rows), n_act + 2))
            M_rows[:, n_new] = np.where(pos_rows, w, 0.0)
            M_rows[:, n_new + 1] = w * np.where(pos_rows, gaps[1:-1], 1.0)
            g_rows = np.where(pos_rows[None, :], g_pos[:, 1:-1], g_vel[:, 1:-1])  # (n_act, k)
            M_rows[:, :n_new] = (w * g_rows[:n_new]).T
            M_rows[:, n_new + 2:] = (w * g_rows[n_new:]).T
            # the block after's factor, its state S(e_next) = F S(e) + G c_active
            G = np.stack([g_pos[:, -1], g_vel[:, -1]])
            step = float(gaps[-1])
            M_carry = np.zeros((len(carried), n_act + 2))
            F = np.array([[1.0, step], [0.0, 1.0]])
            M_carry[:, n_new:n_new + 2] = carried[:, :2] @ F
            onto = carried[:, :2] @ G  # (rows, n_act) in the order of `active`
            M_carry[:, :n_new] = onto[:, :n_new]
            M_carry[:, n_new + 2:] = onto[:, n_new:]
            if len(carried_shared):
                col = {j: c for c, j in enumerate(active)}
                cols = np.array([col[j] for j in carried_shared])
                cols = np.where(cols < n_new, cols, cols + 2)
                M_carry[:, cols] += carried[:, 2:]
            M_prior = np.zeros((n_new, n_act + 2))
            M_prior[np.arange(n_new), np.arange(n_new)] = self.reg[new]
            Q, R = np.linalg.qr(np.vstack([M_carry, M_rows, M_prior]))
            self.blocks.append(_Block(rows, new, shared, active, step, G, Q, np.linalg.inv(R[:n_new, :n_new]),
                                      R[:n_new, n_new:]))
            carried, carried_shared = R[n_new:, n_new:], shared
        self.blocks.reverse()

    def solve(self, y, nominal) -> np.ndarray:
        """(m,) c for the rows' values ``y`` (R,) and the nominal coefficients ``nominal`` (m,);
        coefficients no row depends on stay nominal."""
        y = np.asarray(y, float)
        c = np.array(nominal, float)
        wy, reg_nominal = self.weight * y, self.reg * c
        d_new = []
        carried = np.zeros(0)
        for blk in reversed(self.blocks):
            t = blk.Q.T @ np.concatenate([carried, wy[blk.rows], reg_nominal[blk.new]])
            n = len(blk.new)
            d_new.append(t[:n])
            carried = t[n:]
        S = np.zeros(2)
        for blk, d in zip(self.blocks, reversed(d_new)):
            z = np.concatenate([S, c[blk.shared]])
            if len(blk.new):
                c[blk.new] = blk.R_new_inv @ (d - blk.R_state @ z)
            S = np.array([S[0] + blk.step * S[1], S[1]]) + blk.G @ c[blk.active]
        return c

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays the factorisation keeps (grows with the rows, not their square)."""
        return sum(a.nbytes for blk in self.blocks for a in (blk.rows, blk.new, blk.shared, blk.active, blk.G,
                                                               blk.Q, blk.R_new_inv, blk.R_state))
