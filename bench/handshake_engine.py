"""Handshake bench (engine only): the paper's Table 3 for six solver pairs on one scene, one run.

Scene: two default ProcAnim humans (1.75 m) 1 m apart, facing each other, default timings. For each
configuration the shake phase's errors (cm, world space, measured on the engine FK of the produced
clips: grip point to grip point, and each grip point to the shared target) and each character's
solver time per solved frame (ms, this machine, pure Python + numpy) and the whole engine call in
frames per second (both characters, Table-3 report included).

    python bench/handshake_engine.py [--json out.json]     (the JSON also holds the per-frame
                                                           error curves, the paper's Figure 9)
    python bench/handshake_engine.py --against REV         (this tree against git revision REV)

``--against`` bakes every configuration with this tree's engine and with ``REV``'s (``git archive``
into a temporary folder), alternating, in separate processes, best of 3 rounds: the solver's CPU
time per solved frame (the solve alone, timed around the engine's ``solve_frame`` the same way for
both), its iterations per frame and the whole engine call in frames per CPU second.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from procanim_addon.handshake import HandshakeParams, generate_handshake  # noqa: E402
from procanim_addon.rigs import human_skeleton  # noqa: E402

CONFIGS = [
    ("JT + JT", "JACOBIAN_TRANSPOSE", "JACOBIAN_TRANSPOSE"),
    ("CCD + CCD", "CCD", "CCD"),
    ("fuzzy + fuzzy", "FUZZY", "FUZZY"),
    ("CCD + fuzzy", "CCD", "FUZZY"),
    ("FABRIK + FABRIK", "FABRIK", "FABRIK"),
    ("DLS + DLS", "DLS", "DLS"),
]
PAPER = {  # Table 3 of Deglorie et al. 2015: both, hand 1, hand 2 (mean / std, cm)
    "JT + JT": "0.53/0.10  0.58/0.05  0.50/0.06",
    "CCD + CCD": "0.72/0.46  0.73/0.40  1.35/0.55",
    "fuzzy + fuzzy": "1.70/0.61  1.13/0.56  1.06/0.57",
    "CCD + fuzzy": "1.14/0.40  0.78/0.37  1.09/0.57",
}


def scene():
    sk, rm = human_skeleton(1.75)
    a = np.eye(4)
    b = np.eye(4)
    b[:3, :3] = np.diag([-1.0, -1.0, 1.0])  # turned 180° about Z: faces +Y, toward the initiator
    b[1, 3] = -1.0
    return (sk, rm, a), (sk, rm, b)


AB_CODE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import numpy as np
import procanim_addon.handshake.generate as gen
from procanim_addon.handshake import HandshakeParams, generate_handshake
from handshake_engine import CONFIGS, scene
solve, spent = gen.solve_frame, []

def timed(*args):
    t0 = time.thread_time()
    sol = solve(*args)
    spent.append((time.thread_time() - t0, sol.iterations))
    return sol

gen.solve_frame = timed
out = {}
for label, s1, s2 in CONFIGS:
    spent.clear()
    t0 = time.process_time()
    _, _, rep = generate_handshake(*scene(), HandshakeParams(solver_initiator=s1, solver_partner=s2))
    cpu = time.process_time() - t0
    t = np.array(spent)
    out[label] = [1000 * t[:, 0].mean(), t[:, 1].mean(), len(rep["phase_initiator"]) / cpu]
print(json.dumps(out))
"""


def against(rev: str) -> int:
    """This tree's engine against ``rev``'s, alternating in one run."""
    import subprocess
    import tempfile

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    old = tempfile.mkdtemp(prefix="handshake-ab-")
    archive = subprocess.run(["git", "-C", root, "archive", rev, "procanim_addon"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", old], input=archive, check=True)
    best: dict = {}
    for _ in range(3):
        for label, tree in ((rev, old), ("this tree", root)):
            run = subprocess.run([sys.executable, "-c", AB_CODE, tree, os.path.join(root, "bench")], check=True,
                                 capture_output=True, text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
            for config, (ms, iters, fps) in json.loads(run.stdout).items():
                old_ms, _, old_fps = best.get((config, label), (np.inf, 0, 0.0))
                best[(config, label)] = (min(old_ms, ms), iters, max(old_fps, fps))
    print(f"Handshake engine, {rev} against this tree: solver CPU ms per solved frame (mean of both characters' "
          "solves, best of 3), iterations per solve, engine frames per CPU second")
    for config, *_ in CONFIGS:
        (a, ia, fa), (b, ib, fb) = best[(config, rev)], best[(config, "this tree")]
        print(f"  {config:16s} {a:6.3f} -> {b:6.3f} ms ({a / b:4.1f}x)   iterations {ia:5.1f} -> {ib:5.1f}   "
              f"{fa:4.0f} -> {fb:4.0f} frames/s")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--against", metavar="REV", help="time this tree's engine against git revision REV")
    args = ap.parse_args(argv)
    if args.against:
        return against(args.against)
    init, part = scene()
    rows = []
    for label, s1, s2 in CONFIGS:
        t0 = time.process_time()  # CPU time: the machine is shared, wall time varies 2×
        _, _, rep = generate_handshake(init, part, HandshakeParams(solver_initiator=s1, solver_partner=s2))
        wall = time.process_time() - t0
        curves = rep.pop("curves")
        rep.update(label=label, wall_s=wall,
                   figure9={k: curves[k] for k in ("error_both_cm", "error_initiator_cm", "error_partner_cm")})
        rows.append(rep)
    print(f"Handshake bench — two 1.75 m humans 1 m apart; shake phase {rows[0]['shake_frames']} frames; "
          f"{platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}")
    print("errors in cm (mean / std / max); time = solver ms per solved frame (initiator, partner)")
    head = (f"{'configuration':<16} {'both hands':>20} {'hand 1 → target':>20} {'hand 2 → target':>20} "
            f"{'ms/frame':>14} {'frames/s':>9}")
    print(head)
    print("-" * len(head))
    for r in rows:
        def cell(k, r=r):
            return f"{r[k + '_mean_cm']:.4f}/{r[k + '_std_cm']:.4f}/{r[k + '_max_cm']:.3f}"

        print(f"{r['label']:<16} {cell('both'):>20} {cell('initiator'):>20} {cell('partner'):>20} "
              f"{r['time_ms_initiator']:6.3f},{r['time_ms_partner']:6.3f} "
              f"{len(r['phase_initiator']) / r['wall_s']:9.0f}")
    print()
    print("paper (Table 3, mean/std cm: both, hand 1, hand 2):")
    for k, v in PAPER.items():
        print(f"  {k:<14} {v}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
