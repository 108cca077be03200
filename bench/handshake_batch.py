"""Would solving a phase's frames as one numpy batch beat the per-frame solve? Measured on the bench
handshake's shake phase (issue 12: "the batch route was dismissed at 10–40 frames per phase but
measure it").

    python bench/handshake_batch.py [--phase S|D]

The per-frame solves of the initiator's phase are recorded from a real bake (bench scene of
bench/handshake_engine.py); the wrist's position problem of every frame (the hand's orientation is
exact and cheap, the arm's three joints carry the wrist, the part that iterates) is then solved:

* per frame by CCD, warm-started from the frame before, as the generator does (ik/ccd.py on plain
  floats, with its extrapolation);
* as one batch: every frame of the phase at once in numpy, all from the pose the phase starts from
  (the previous frame's solution is not known before it is solved), iterations in lockstep, a frame
  leaving the batch when it is within the tolerance.

Printed: iterations (per frame / of the batch), CPU time per frame of each, and how far the batch's
poses are from the per-frame ones (the batch starts every frame elsewhere, so it lands elsewhere on
the arm's redundant solution set).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import procanim_addon.handshake.generate as gen  # noqa: E402
from procanim_addon.handshake import HandshakeParams, generate_handshake  # noqa: E402
from procanim_addon.ik.ccd import ccd  # noqa: E402
from procanim_addon.rigs import human_skeleton  # noqa: E402


def record(method: str, phase: str):
    """The initiator's wrist problems of one phase: (kernel, g0, h0, wrist target, warm start) per frame."""
    sk, rm = human_skeleton(1.75)
    b = np.eye(4)
    b[:3, :3] = np.diag([-1.0, -1.0, 1.0])
    b[1, 3] = -1.0
    calls = []
    solve = gen.solve_frame

    def spy(method_, chain, base, position, orientation, angles, settings, frame_time):
        if not calls or calls[0][0] is chain:
            kern = chain.kernel()
            g0, h0 = kern.start(base)
            wrist = np.asarray(position) - np.asarray(orientation) @ chain.effector_local
            calls.append((chain, g0, h0, tuple(wrist.tolist()), np.ravel(angles).tolist(), settings))
        return solve(method_, chain, base, position, orientation, angles, settings, frame_time)

    gen.solve_frame = spy
    try:
        _, _, rep = generate_handshake((sk, rm, np.eye(4)), (sk, rm, b),
                                       HandshakeParams(solver_initiator=method, solver_partner="DLS"))
    finally:
        gen.solve_frame = solve
    phases = [p for p in rep["phase_initiator"] if p != "N"]
    return [c for c, p in zip(calls, phases) if p == phase]


def batch_fk(k, g0, h0, th):
    """Heads ``(3, F, 3)``, world axes ``(9, F, 3)`` and wrist ``(F, 3)`` of the first three joints."""
    f = th.shape[0]
    g = np.broadcast_to(np.reshape(g0, (3, 3)), (f, 3, 3))
    h = np.broadcast_to(np.asarray(h0), (f, 3)).copy()
    heads, axes = [], []
    for j in range(3):
        a, b_, c = th[:, 3 * j], th[:, 3 * j + 1], th[:, 3 * j + 2]
        ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b_), np.sin(b_), np.cos(c), np.sin(c)
        m = np.stack((cb * cc, -cb * sc, sb, sa * sb * cc + ca * sc, ca * cc - sa * sb * sc, -sa * cb,
                      sa * sc - ca * sb * cc, sa * cc + ca * sb * sc, ca * cb), -1).reshape(f, 3, 3)
        gm = g @ m
        heads.append(h.copy())
        axes += [g[:, :, 0], g[:, :, 1] * ca[:, None] + g[:, :, 2] * sa[:, None], gm[:, :, 2]]
        h += gm @ np.asarray(k.d[j])
        if j + 1 < k.n:
            g = gm @ np.reshape(k.c[j + 1], (3, 3))
    return heads, axes, h


def batch_ccd(k, g0, h0, targets, th, tol, max_iter=2000):
    """CCD on every frame at once (numpy), frames leaving when within ``tol``; returns angles and sweeps."""
    th = np.array(th, float)
    t = np.asarray(targets)
    lo, hi = np.asarray(k.lower[:9]), np.asarray(k.upper[:9])
    live = np.arange(len(t))
    for sweep in range(max_iter):
        heads, axes, p = batch_fk(k, g0, h0, th[live])
        done = np.sum((t[live] - p) ** 2, axis=1) < tol * tol
        live, p = live[~done], p[~done]
        if live.size == 0:
            return th, sweep
        heads = [x[~done] for x in heads]
        axes = [x[~done] for x in axes]
        for j in range(2, -1, -1):
            v = t[live] - heads[j]
            for i in (3 * j + 2, 3 * j + 1, 3 * j):
                if k.locked[i]:
                    continue
                w = axes[i]
                u = p - heads[j]
                wu = np.sum(w * u, 1)[:, None]
                up, vp = u - w * wu, v - w * np.sum(w * v, 1)[:, None]
                ang = np.arctan2(np.sum(w * np.cross(up, vp), 1), np.sum(up * vp, 1))
                new = np.clip(th[live, i] + ang, lo[i], hi[i])
                d = (new - th[live, i])[:, None]
                p = heads[j] + u * np.cos(d) + np.cross(w, u) * np.sin(d) + w * wu * (1 - np.cos(d))
                th[live, i] = new
    return th, max_iter


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phase", default="S", choices=["S", "D"], help="phases whose body stands still")
    args = ap.parse_args(argv)
    calls = record("CCD", args.phase)
    chain, g0, h0, _, start, s = calls[0]
    assert all(c[1] == g0 and c[2] == h0 for c in calls), "the body moves in this phase"
    k = chain.kernel()
    tol = s.tolerance_m
    seq, iters = [], 0
    t0 = time.process_time()
    for _ in range(3):
        th, seq, iters = list(start), [], 0
        for *_, wrist, _, _ in calls:
            th, n = ccd(k, g0, h0, wrist, th, 3, tol, 2000)
            seq.append(list(th))
            iters += n
    t_seq = (time.process_time() - t0) / 3 / len(calls)
    targets = [c[3] for c in calls]
    t0 = time.process_time()
    for _ in range(3):
        th_b, sweeps = batch_ccd(k, g0, h0, targets, np.tile(start, (len(calls), 1)), tol)
    t_batch = (time.process_time() - t0) / 3 / len(calls)

    def joints(th):
        heads, _, p = batch_fk(k, g0, h0, np.atleast_2d(th))
        return np.concatenate([np.stack(heads, 1), p[:, None]], axis=1)

    gap = np.linalg.norm(joints(np.array(seq)[:, :9]) - joints(th_b[:, :9]), axis=-1).max()
    print(f"CCD, initiator's phase {args.phase}: {len(calls)} frames, wrist problems (3 joints), tolerance "
          f"{tol * 1000:.3f} mm")
    print(f"  per frame, warm-started:   {iters / len(calls):6.1f} iterations per frame, "
          f"{t_seq * 1000:.3f} ms CPU per frame")
    print(f"  one numpy batch, lockstep: {sweeps:6d} sweeps for the batch,     {t_batch * 1000:.3f} ms CPU per frame; "
          f"its poses up to {gap * 1000:.1f} mm from the per-frame ones")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
