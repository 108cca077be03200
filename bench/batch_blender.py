"""The batch command's scale-out, one run: the same path-walk shots baked three ways.

    <venv-bpy-5.0.1>/bin/python bench/batch_blender.py [--shots 48] [--workers 2] [--length 12]

``--shots`` path walks of ProcAnim's human along a straight curve of ``--length`` metres (the
cadence varies a little from shot to shot, so every shot is its own bake), through
``python tools/batch.py bake``:

1. **sequential** — ``--workers 0``: every shot in the command's own process, one after another;
2. **local pool** — ``--workers N``: N worker processes, each keeping one Blender loaded;
3. **Dask** — ``--scheduler``: a ``dask scheduler`` and N ``dask worker --nthreads 1`` on this
   machine (tools/batch_cluster.py), started before the run.

Columns: the command's wall time; ``ready`` — seconds until every worker had Blender up (the pool
starts its workers in the run; Dask's workers start their Blender when the run registers the
worker plugin); ``baking`` — from then to the last shot's result (the workers' exit after it counts in the
wall time only); the speed-ups over sequential, on
``baking`` (throughput) and on the wall time (the whole command); the mean operator time per shot
(``bake``); the per-shot overhead beyond it inside the worker (open the .blend, save the .blend and
the metrics JSON) and end to end (``baking`` × workers / shots − ``bake``: also the dispatch,
the pipes or Dask, and any idle worker at the end); the CPU time a worker spent per shot.

The machine's load average is printed before and after: the figures are only comparable within one
run, and a speed-up needs free cores — on a machine shared with other users' jobs (Linux fair-shares
the CPU between sessions, so a pool started from one command gets no more CPU than one process when
the cores are busy) the pool cannot beat sequential.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import bpy  # noqa: F401  (the scenes are made here with the extension's operators)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "batch"))
sys.path.insert(0, str(ROOT / "tests" / "blender"))
import build  # noqa: E402  (tools/build.py)
from batch_cluster import local_cluster  # noqa: E402
from benchlog import emit  # noqa: E402
from blender_install import install_extension  # noqa: E402


def job_file(folder: Path, street: Path, shots: int) -> Path:
    lines = [
        "[defaults]",
        'output_dir = "baked"',
        "",
        "[defaults.path_walk]",
        'armature = "Human"',
        'path = "Straight"',
    ]
    for i in range(shots):
        lines += ["", f"[shots.walk_{i:03d}]", f'blend = "{street}"', 'generator = "path_walk"']
        lines.append(f"settings = {{ cadence = {100.0 + (i % 12) * 0.5} }}")
    path = folder / "jobs.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(job: Path, out: Path, zip_path: Path, *how: str) -> dict:
    env = {**os.environ, "PROCANIM_ZIP": str(zip_path), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, str(ROOT / "tools" / "batch.py"), "bake", str(job), "--output-dir", str(out), "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.run([*cmd, *how], capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd + list(how))} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    report = json.loads((out / "report.json").read_text())
    report["command_wall_s"] = wall
    return report


def figures(report: dict, workers: int) -> dict:
    rows = [r for r in report["shots"] if r["status"] == "done"]
    assert len(rows) == report["summary"]["total"], report["summary"]
    bake = statistics.mean(r["seconds"]["bake"] for r in rows)
    inside = statistics.mean(r["seconds"]["total"] - r["seconds"]["bake"] for r in rows)
    cpu = statistics.mean(r["seconds"]["cpu"] for r in rows)
    ready = report.get("ready_s", 0.0)
    # from the workers' start-up to the last result: the pool's and Dask's workers then exit (Blender
    # shutting down), which is neither baking nor start-up; the whole command is the wall time
    baking = report.get("done_s", report["batch_s"]) - ready
    return {
        "wall": report["command_wall_s"],
        "ready": ready,
        "baking": baking,
        "bake": bake,
        "inside": inside,
        "end_to_end": baking * max(workers, 1) / len(rows) - bake,
        "cpu": cpu,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shots", type=int, default=48)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--length", type=float, default=12.0, help="metres of the straight path")
    args = parser.parse_args(argv)
    import batch_scenes

    folder = Path(tempfile.mkdtemp(prefix="procanim-batch-bench-"))
    zip_path = build.build(out_dir=folder / "dist")
    install_extension("batchbench", zip_path=zip_path)
    job = job_file(folder, batch_scenes.street(folder / "street.blend", length=args.length), args.shots)
    load_before = os.getloadavg()
    print(
        f"{args.shots} path-walk shots ({args.length:g} m), {args.workers} workers, {os.cpu_count()} cores; "
        f"load average before: {' '.join(f'{x:.2f}' for x in load_before)}",
        flush=True,
    )

    results = {"sequential": figures(run(job, folder / "seq", zip_path, "--workers", "0"), 1)}
    print("  sequential done", flush=True)
    results["local pool"] = figures(run(job, folder / "pool", zip_path, "--workers", str(args.workers)), args.workers)
    print("  local pool done", flush=True)
    with local_cluster(folder / "dask", args.workers, env={"PROCANIM_ZIP": str(zip_path)}) as cluster:
        results["Dask"] = figures(run(job, folder / "dask-out", zip_path, "--scheduler", cluster.address), args.workers)
    load_after = os.getloadavg()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in load_after)}\n")

    seq = results["sequential"]
    head = f"{'mode':<12}{'wall s':>8}{'ready s':>9}{'baking s':>10}{'x baking':>10}{'x wall':>8}"
    head += f"{'bake s':>8}{'overhead in worker s':>22}{'end to end s':>14}{'CPU s/shot':>12}"
    print(head)
    for name, f in results.items():
        print(
            f"{name:<12}{f['wall']:8.1f}{f['ready']:9.1f}{f['baking']:10.1f}{seq['baking'] / f['baking']:10.2f}"
            f"{seq['wall'] / f['wall']:8.2f}{f['bake']:8.3f}{f['inside']:22.3f}{f['end_to_end']:14.3f}{f['cpu']:12.3f}"
        )
        emit("batch", name, shots=args.shots, workers=0 if name == "sequential" else args.workers,
             cores=os.cpu_count(), speedup_baking=seq["baking"] / f["baking"], speedup_wall=seq["wall"] / f["wall"],
             load_before=list(load_before), load_after=list(load_after), **f)
    print(
        textwrap.dedent(f"""
        x baking: speed-up over sequential on the baking phase (throughput, worker start-up excluded);
        x wall: on the whole command. Per-shot overhead beyond the operator (goal < 0.3 s). Files: {folder}""")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
