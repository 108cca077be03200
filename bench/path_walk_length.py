"""Path walk engine: time and peak memory against the walk's length (frames), one run.

    <venv>/bin/python bench/path_walk_length.py [--lengths 45,360,900] [--repeat 3]
    <venv>/bin/python bench/path_walk_length.py --against REV [--timeout 300]   (REV's engine beside this tree's)

Straight walks of ProcAnim's human (1.75 m) at 100 steps/min, 24 fps, on flat ground: 45 m, 360 m
and 900 m give about 1,000, 8,000 and 20,000 frames. Each length runs in its own process (so that
its peak resident memory is its own), with one BLAS thread (as the extension sets when it
registers); the time is the best of ``--repeat`` calls of ``generate_path_walk``, CPU (all threads)
and wall. Printed: frames, seconds, the ratio to the shortest walk, peak resident memory of the
process and how much of it the walk added over the imports, and the growth exponent k of
time ∝ frames^k (least squares in log–log over the lengths; 1 is linear).

``--against REV`` runs the same walks on the engine at ``REV`` (``git archive`` into a temporary
folder) first; a length that does not finish in ``--timeout`` seconds is reported as such.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from benchlog import emit  # noqa: E402

LIMITS = {8: 10.0, 20: 25.0}  # issue 28: 8× the frames in ≤ 10× the time, 20× in ≤ 25×
EXPONENT_MAX = 1.1

ONE_WALK = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
from procanim_addon.ground import FlatGround
from procanim_addon.rigs import human_skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk
try:
    from procanim_addon.threads import limit_blas_threads
except ImportError:  # an engine from before the thread limit: OPENBLAS_NUM_THREADS=1 does it
    limit_blas_threads = None
if limit_blas_threads is not None:
    limit_blas_threads()
length, repeat = float(sys.argv[2]), int(sys.argv[3])
sk, rm = human_skeleton()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cpu = wall = float("inf")
for _ in range(repeat):
    c0, w0 = time.process_time(), time.perf_counter()
    clip = generate_path_walk(sk, rm, np.array([[0, 0, 0], [0, -length, 0.0]]), FlatGround(), PathWalkParams())
    cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"frames": clip.frame_count, "cpu_s": cpu, "wall_s": wall, "peak_mb": peak / 1024,
                  "imports_mb": before / 1024}))
"""


def walk(tree: Path, length: float, repeat: int, timeout: float) -> dict | None:
    """One length in a process of its own (None: it did not finish in ``timeout`` s)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["OPENBLAS_NUM_THREADS"] = "1"  # an older engine has no thread limit of its own
    try:
        run = subprocess.run([sys.executable, "-c", ONE_WALK, str(tree), str(length), str(repeat)], env=env,
                             capture_output=True, text=True, check=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(run.stdout.strip().splitlines()[-1])


def growth_exponent(frames, seconds) -> float:
    """k of seconds ∝ frames^k, least squares in log–log."""
    return float(np.polyfit(np.log(frames), np.log(seconds), 1)[0])


def table(label: str, lengths, results) -> None:
    done = [(length, r) for length, r in zip(lengths, results) if r is not None]
    print(f"\n{label}")
    print(f"{'path m':>7s} {'frames':>7s} {'CPU s':>7s} {'wall s':>7s} {'CPU ×':>7s} {'frames ×':>8s} "
          f"{'peak MB':>8s} {'walk MB':>8s}")
    if not done:
        return
    f0, c0 = done[0][1]["frames"], done[0][1]["cpu_s"]
    for length, r in zip(lengths, results):
        if r is None:
            print(f"{length:7.0f}  did not finish in the time allowed")
            continue
        walk_mb = r["peak_mb"] - r["imports_mb"]
        print(f"{length:7.0f} {r['frames']:7d} {r['cpu_s']:7.3f} {r['wall_s']:7.3f} {r['cpu_s'] / c0:7.1f} "
              f"{r['frames'] / f0:8.1f} {r['peak_mb']:8.0f} {walk_mb:8.0f}")
        emit("path_walk_length", f"{label}: {length:g} m", frames=r["frames"], cpu_s=r["cpu_s"], wall_s=r["wall_s"],
             peak_mb=r["peak_mb"], walk_mb=walk_mb)
    if len(done) == len(lengths) and len(done) >= 2:
        frames = [r["frames"] for _, r in done]
        k_cpu = growth_exponent(frames, [r["cpu_s"] for _, r in done])
        k_wall = growth_exponent(frames, [r["wall_s"] for _, r in done])
        ok = k_cpu <= EXPONENT_MAX
        print(f"growth exponent (time ∝ frames^k): CPU {k_cpu:.2f}, wall {k_wall:.2f} "
              f"({'met' if ok else 'not met'}: ≤ {EXPONENT_MAX})")
        for (_, r) in done[1:]:
            n = r["frames"] / f0
            nearest = min(LIMITS, key=lambda x: abs(x - n))
            if abs(nearest - n) / nearest < 0.25:
                ratio = r["cpu_s"] / c0
                limit = LIMITS[nearest] * n / nearest
                print(f"  {n:.1f}× the frames in {ratio:.1f}× the CPU time (goal ≤ {limit:.1f}×: "
                      f"{'met' if ratio <= limit else 'not met'})")
        emit("path_walk_length", f"{label}: growth", exponent_cpu=k_cpu, exponent_wall=k_wall,
             peak_mb_max=max(r["peak_mb"] for _, r in done))


def main() -> int:
    args = sys.argv[1:]

    def option(name, default):
        return args[args.index(name) + 1] if name in args else default

    lengths = [float(x) for x in option("--lengths", "45,360,900").split(",")]
    repeat = int(option("--repeat", "3"))
    timeout = float(option("--timeout", "300"))
    print(f"path walk time and memory vs length: ProcAnim human, straight, flat, 100 steps/min, 24 fps; "
          f"best of {repeat}; one BLAS thread; numpy {np.__version__}")
    if "--against" in args:
        rev = option("--against", "HEAD")
        old = Path(tempfile.mkdtemp(prefix="path-walk-length-"))
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "procanim_addon"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        table(f"engine at {rev}", lengths, [walk(old, x, repeat, timeout) for x in lengths])
    table("this tree", lengths, [walk(ROOT, x, repeat, timeout) for x in lengths])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
