"""Linear least squares min ‖A c − b‖ for the COM's shooting (:mod:`.com`): A factorised once,
many right-hand sides — without starting OpenBLAS's threads.

numpy's ``linalg.qr``/``solve`` call LAPACK, which hands its larger matrix-vector and matrix
products to OpenBLAS's worker threads; after each such call the second thread spins for up to
~0.1 s, CPU time taken from whatever else runs (a batch worker, Blender's own thread). OpenBLAS
stays on one thread for a matrix-vector product of fewer than 9,216 elements and a matrix product
of at most 262,144 multiply-adds (its thresholds on this build), so:

* small systems (rows × columns < :data:`SMALL`): ``linalg.qr`` as it is, R⁻¹ by back
  substitution (:func:`upper_inverse`), products by einsum;
* larger ones: blocked Householder QR — LAPACK's QR of panels narrow enough to stay on one thread
  (``mode="raw"``: the reflectors), each panel applied to the columns right of it in the compact
  WY form I − V T Vᵀ (Schreiber and Van Loan 1989) with products cut under the threshold.
"""

from __future__ import annotations

import numpy as np

SMALL = 8192  # rows × columns below which numpy's QR stays on one thread (its reflectors' products)
PANEL_MAX = 32  # columns per panel at most
MNK_MAX = 200_000  # multiply-adds per matrix product (OpenBLAS threads above 262,144)
LEAF = 64  # upper_inverse: back substitution up to this size, halves above
GEMV_MAX = 9000  # elements per matrix-vector product (OpenBLAS threads from 9,216)


class LeastSquares:
    """A (r, m), r ≥ m, full column rank, factorised: :meth:`solve` gives argmin ‖A c − b‖."""

    def __init__(self, A: np.ndarray):
        A = np.asarray(A, float)
        self.m = A.shape[1]
        if A.size < SMALL:
            Q, R = np.linalg.qr(A)
            self.Q, self.panels = Q, None
        else:
            R, self.panels = _blocked_qr(A)
            self.Q = None
        self.R_inv = upper_inverse(R)

    def solve(self, b) -> np.ndarray:
        """(m,) c = R⁻¹ Qᵀ b."""
        b = np.asarray(b, float)
        if self.panels is None:
            y = np.einsum("ji,j->i", self.Q, b)
        else:
            y = b.copy()
            for j0, V, T in self.panels:  # Qᵀ b = H_m … H_1 b, a panel at a time
                seg = y[j0:]
                seg -= V @ (T.T @ (V.T @ seg))
            y = y[:self.m]
        return np.einsum("ij,j->i", self.R_inv, y)


def _blocked_qr(A: np.ndarray):
    """(R (m, m), panels [(first column, V (r − j0, p), T (p, p))]) of A (r, m): Qᵀ = Π (I − V T Vᵀ)ᵀ."""
    C = A.copy()
    r, m = C.shape
    panels = []
    j0 = 0
    while j0 < m:
        rows = r - j0
        p = int(min(PANEL_MAX, m - j0, max(4, (SMALL - 1) // rows)))
        h, tau = np.linalg.qr(C[j0:, j0:j0 + p], mode="raw")
        h = h.T  # (rows, p): R on and above the diagonal, the reflectors' tails below (their 1s implied)
        V = np.tril(h, -1)
        V[np.arange(p), np.arange(p)] = 1.0
        C[j0:, j0:j0 + p] = np.triu(h)
        # T of H_1 … H_p = I − V T Vᵀ, upper triangular (LAPACK's dlarft, forward and columnwise)
        S = V.T @ V
        T = np.zeros((p, p))
        for i in range(p):
            T[i, i] = tau[i]
            if i:
                T[:i, i] = -tau[i] * (T[:i, :i] @ S[:i, i])
        if j0 + p < m:
            rest = C[j0:, j0 + p:]
            rest -= _product(V, T.T @ _product(V.T, rest))
        panels.append((j0, V, T))
        j0 += p
    return np.triu(C[:m]), panels


def _product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A @ B, cut into column blocks of at most :data:`MNK_MAX` multiply-adds each."""
    n = B.shape[1]
    step = max(MNK_MAX // max(A.shape[0] * A.shape[1], 1), 1)
    if step >= n:
        return A @ B
    return np.concatenate([A @ B[:, j:j + step] for j in range(0, n, step)], axis=1)


def upper_inverse(R: np.ndarray) -> np.ndarray:
    """The inverse of the upper triangular ``R`` (m, m), without LAPACK: up to :data:`LEAF` rows by
    back substitution row by row from the last (X[i] = (e_i − R[i, i+1:] X[i+1:]) / R[i, i]); larger
    ones by halves, [[A, B], [0, D]]⁻¹ = [[A⁻¹, −A⁻¹ B D⁻¹], [0, D⁻¹]]."""
    m = len(R)
    if m > LEAF:
        h = m // 2
        A_inv, D_inv = upper_inverse(R[:h, :h]), upper_inverse(R[h:, h:])
        X = np.zeros((m, m))
        X[:h, :h], X[h:, h:] = A_inv, D_inv
        X[:h, h:] = -_product(_product(A_inv, R[:h, h:]), D_inv)
        return X
    X = np.zeros((m, m))
    for i in range(m - 1, -1, -1):
        X[i, i] = 1.0
        if i < m - 1:
            X[i, i + 1:] -= np.einsum("j,jk->k", R[i, i + 1:], X[i + 1:, i + 1:])
        X[i, i:] /= R[i, i]
    return X
