"""A Dask cluster on this machine, as real processes: ``dask scheduler`` and ``dask worker`` — for
trying ``--scheduler`` on one machine, for the batch tests and for the bench.

    python tools/batch_cluster.py [--workers 2]      # prints the address; Ctrl+C stops it

In Python::

    from batch_cluster import local_cluster
    with local_cluster(folder, workers=2, env={"PROCANIM_ZIP": zip}) as cluster:
        ...  # cluster.address, cluster.workers (Popen), cluster.blender_logs

Each worker runs ``--nthreads 1 --no-nanny`` (a killed worker stays dead, which the tests want;
production clusters usually keep the nanny, which restarts it) with its Blender's log at
``<folder>/blender-<i>.log`` (``PROCANIM_BATCH_LOG``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

DASK = str(Path(sys.executable).parent / "dask")


@dataclass
class LocalCluster:
    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen]
    blender_logs: list[Path]


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"{what} within {timeout:g} s")


@contextlib.contextmanager
def local_cluster(folder: Path, workers: int = 2, env: dict | None = None, timeout: float = 120.0):
    """Start a scheduler and ``workers`` workers (logs in ``folder``); stop them all on exit."""
    folder.mkdir(parents=True, exist_ok=True)
    scheduler_file = folder / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    procs: list[subprocess.Popen] = []
    logs = []

    def start(args: list[str], log: Path, extra_env: dict) -> subprocess.Popen:
        logs.append(open(log, "wb"))  # noqa: SIM115 (closed on exit)
        procs.append(subprocess.Popen(args, stdout=logs[-1], stderr=subprocess.STDOUT, env={**os.environ, **extra_env}))
        return procs[-1]

    try:
        scheduler = start(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
            + ["--scheduler-file", str(scheduler_file)],
            folder / "scheduler.log",
            env or {},
        )
        address = wait_for(
            lambda: scheduler_file.is_file() and json.loads(scheduler_file.read_text() or "{}").get("address"),
            timeout,
            "the Dask scheduler did not start",
        )
        worker_procs, blender_logs = [], []
        for i in range(workers):
            blender_logs.append(folder / f"blender-{i}.log")
            worker_procs.append(
                start(
                    [DASK, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard"]
                    + ["--name", f"w{i}", "--local-directory", str(folder / f"w{i}")],
                    folder / f"worker-{i}.log",
                    {**(env or {}), "PROCANIM_BATCH_LOG": str(blender_logs[-1])},
                )
            )
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(workers, timeout=timeout)
        yield LocalCluster(address, scheduler, worker_procs, blender_logs)
    finally:
        # the workers first (a worker closing while the scheduler goes away can hang), then the scheduler
        for group in (procs[1:], procs[:1]):
            for proc in group:
                if proc.poll() is None:
                    proc.terminate()
            for proc in group:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for log in logs:
            log.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="A local Dask cluster for ProcAnim's batch command.")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="procanim-dask-"))
    with local_cluster(folder, args.workers) as cluster:
        print(f"scheduler {cluster.address} with {args.workers} workers (logs: {folder}); Ctrl+C stops it")
        print(f"  python tools/batch.py bake JOBS.toml --scheduler {cluster.address}", flush=True)
        try:
            while all(p.poll() is None for p in (cluster.scheduler, *cluster.workers)):
                time.sleep(1.0)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
