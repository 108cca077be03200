"""The engine's hand-written numerics against plain numpy, with the BLAS thread limit in place.

    <venv>/bin/python bench/path_walk_numerics.py

The engine (the path walk, the terrain adaptation, the bridge's reads) once wrote some numerics by
hand so that OpenBLAS would not start (and then spin) its worker threads. With one BLAS thread per
process (``procanim_addon/threads.py``, set when the extension registers) that reason is gone; a
hand-written version stays only where it is at least :data:`KEEP` times faster than plain numpy on
the shapes the engine uses. Each pair is timed in this one process, best of several repeats (CPU
time), and checked to give the same numbers.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from procanim_addon import transforms as tf  # noqa: E402
from procanim_addon.threads import limit_blas_threads  # noqa: E402
from procanim_addon.walk.pose import mat_const, vec_const  # noqa: E402

KEEP = 1.3  # a hand-written version stays if it is at least this many times faster


def best_time(fn, repeat: int = 7) -> float:
    """Best CPU seconds of one call (each repeat runs enough calls to last a few ms)."""
    calls = 1
    while True:
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        if time.process_time() - t0 > 0.005 or calls >= 1 << 16:
            break
        calls *= 4
    best = np.inf
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t0) / calls)
    return best


def cramer(J, r):
    """The path walk's 2 × 2 Newton step J⁻¹ r by Cramer's rule (walk/arms.py)."""
    det = J[:, 0, 0] * J[:, 1, 1] - J[:, 0, 1] * J[:, 1, 0]
    return np.stack([J[:, 1, 1] * r[:, 0] - J[:, 0, 1] * r[:, 1], J[:, 0, 0] * r[:, 1] - J[:, 1, 0] * r[:, 0]],
                    axis=-1) / det[:, None]


def const_mat(B, A):
    """B @ A for one B (3, 3) and a stack A (F, 3, 3) as one 2-D product (the removed ``pose.const_mat``)."""
    F = len(A)
    return (B @ A.transpose(1, 0, 2).reshape(3, F * 3)).reshape(3, F, 3).transpose(1, 0, 2)


def split_product(A2, B, mnk=200_000, gemv=9000):
    """A2 @ B cut into pieces under OpenBLAS's threading thresholds (the removed ``pose._rows_times``)."""
    step = max((gemv if B.shape[1] == 1 else mnk) // (A2.shape[1] * B.shape[1]), 1)
    return np.concatenate([A2[i:i + step] @ B for i in range(0, len(A2), step)])


def cases(rng):
    """(what, where it is used, size, hand-written, plain numpy) — both return the same numbers."""
    out = []
    for F in (236, 1205, 8000, 20_000):
        A, B, v = rng.normal(size=(F, 3, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)
        out += [
            ("A @ B, one B: one 2-D product", "pose.mat_const", f"F = {F}", lambda A=A, B=B: mat_const(A, B),
             lambda A=A, B=B: A @ B),
            ("A @ v, one v: one 2-D product", "pose.vec_const", f"F = {F}", lambda A=A, v=v: vec_const(A, v),
             lambda A=A, v=v: A @ v),
            ("B @ A, one B: a transpose and one 2-D product", "was pose.const_mat", f"F = {F}",
             lambda A=A, B=B: const_mat(B, A), lambda A=A, B=B: B @ A),
            ("(F·3, 3) @ (3, 3) cut under the thread thresholds", "was pose._rows_times", f"F = {F}",
             lambda A=A, B=B: split_product(A.reshape(-1, 3), B), lambda A=A, B=B: A.reshape(-1, 3) @ B),
        ]
        M = rng.normal(size=(F, 4, 4))
        M[:, 3] = [0.0, 0.0, 0.0, 1.0]
        out.append(("inverse of affine matrices: adjugate", "transforms.affine_inverse", f"F = {F}",
                    lambda M=M: tf.affine_inverse(M), lambda M=M: np.linalg.inv(M)))
    for n, where in ((1, "was contact.heel_local, bridge"), (2, "was walk/metrics.py's rest")):
        M = rng.normal(size=(n, 4, 4))
        M[:, 3] = [0.0, 0.0, 0.0, 1.0]
        out.append(("inverse of affine matrices: adjugate", where, f"{n} matri{'x' if n == 1 else 'ces'}",
                    lambda M=M: tf.affine_inverse(M), lambda M=M: np.linalg.inv(M)))
    L = rng.normal(size=(3, 3))
    out.append(("determinant of one 3 × 3: c0 · (c1 × c2)", "was upright.py, bridge", "1 matrix",
                lambda L=L: np.dot(L[:, 0], np.cross(L[:, 1], L[:, 2])), lambda L=L: np.linalg.det(L)))
    for m in (26, 140, 2800):  # 2 arms × the steps of a 236-, 1,205- and 20,000-frame walk
        J, r = rng.normal(size=(m, 2, 2)) + 3 * np.eye(2), rng.normal(size=(m, 2))
        out.append(("2 × 2 Newton steps J⁻¹ r: Cramer's rule", "walk/arms.py", f"{m} problems",
                    lambda J=J, r=r: cramer(J, r), lambda J=J, r=r: np.linalg.solve(J, r[..., None])[..., 0]))
    return out


def main() -> int:
    took = limit_blas_threads()
    print(f"hand-written numerics vs plain numpy, CPU time per call, best of 7; numpy {np.__version__}; "
          f"BLAS thread limit set on {took} librar{'y' if took == 1 else 'ies'}")
    head = f"{'what':52s} {'where':32s} {'size':>12s} {'hand µs':>9s} {'numpy µs':>9s} {'ratio':>6s}  verdict"
    print(head)
    print("-" * len(head))
    for what, where, size, hand, plain in cases(np.random.default_rng(1)):
        np.testing.assert_allclose(hand(), plain(), rtol=1e-9, atol=1e-9)
        th, tp = best_time(hand), best_time(plain)
        verdict = f"keep (≥ {KEEP:g}×)" if tp / th >= KEEP else "plain numpy"
        print(f"{what:52s} {where:32s} {size:>12s} {1e6 * th:9.1f} {1e6 * tp:9.1f} {tp / th:6.2f}  {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
