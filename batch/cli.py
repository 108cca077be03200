"""The ``procanim`` command: ``bake`` and ``validate`` a job file (see docs/batch.md).

    blender -b -c procanim bake jobs.toml [--workers N | --scheduler tls://HOST:8786 | --shot NAME]
    python tools/batch.py bake jobs.toml ...          (the same, with the bpy wheel)

Order of work: the job file is read and checked whole — shape, then every shot's settings against
its operator's RNA and its object names against its .blend — and nothing runs unless it is clean
(exit status 2, every problem listed with its shot and key). Then each shot's content hash decides
whether it is already done (skipped); the others are baked in this process (``--workers 0``, or
``--shot``), on a pool of worker processes (default: one per core), or on a Dask cluster
(``--scheduler``). A table and a JSON report close the run; the exit status is 1 when a shot failed.
Every mode opens the shots with their scripts off unless ``--trust-scripts`` (see :mod:`.scripts`).

This module never needs Blender: :class:`Host` says how this process reaches it — a Blender binary
that registered the command (``command.py``) or the ``bpy`` wheel (``tools/batch.py``) — and its
``prepare`` hands back, once Blender is up, what runs in it (:class:`Blender`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..procanim_addon import registry
from . import hashing, jobfile, local, report, scripts
from .worker import Worker


@dataclass(frozen=True)
class Blender:
    """What the command runs inside Blender (made by ``command.blender_side`` where Blender runs)."""

    version: str  # bpy.app.version_string
    check_job: Callable[[list[jobfile.Shot], str], list[str]]  # checks.check_job
    bake: Callable[[dict], dict]  # shot.bake: one shot in this process


@dataclass
class Host:
    """How the command reaches Blender (see the module docstring)."""

    prog: str
    prepare: Callable[[], Blender]  # bpy and the extension usable in this process; what runs in it
    worker_command: list[str] = field(default_factory=list)
    worker_env: dict = field(default_factory=dict)
    blender_binary: bool = False  # the worker command is a Blender binary's (it takes Blender's switches)

    def start_worker(self, log: Path | None, trust_scripts: bool = False) -> Worker:
        command = list(self.worker_command)
        if self.blender_binary and not trust_scripts:
            command.insert(1, "--disable-autoexec")  # no file's scripts run in that Blender
        return Worker(command, self.worker_env, log)


class RunStopped(Exception):
    """The run cannot go on (no shot could bake): ``status`` is the command's exit status."""

    def __init__(self, status: int, why: str):
        super().__init__(why)
        self.status = status


def _generator_ids() -> tuple[str, ...]:
    return tuple(g.id for g in registry.GENERATORS)


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Bake many ProcAnim shots from a TOML job file.")
    sub = parser.add_subparsers(dest="command", required=True)
    bake = sub.add_parser("bake", help="bake the shots of a job file (skipping those already done)")
    check = sub.add_parser("validate", help="check a job file without baking anything")
    for p in (bake, check):
        p.add_argument("jobs", type=Path, help="the TOML job file")
        p.add_argument("--shot", action="append", default=[], metavar="NAME", help="only this shot (repeatable)")
        p.add_argument("--output-dir", type=Path, help="write outputs here instead of defaults.output_dir")
    check.add_argument("--names", action="store_true", help="print only the shot names (for farm submit scripts)")
    how = bake.add_mutually_exclusive_group()
    how.add_argument(
        "--workers", type=int, help="worker processes on this machine (default: one per core; 0: in this process)"
    )
    how.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler, e.g. tls://HOST:8786")
    bake.add_argument("--report", type=Path, help="the JSON report (default: <output_dir>/report.json)")
    bake.add_argument("--force", action="store_true", help="bake even the shots whose outputs are up to date")
    bake.add_argument("--dry-run", action="store_true", help="list what would be baked or skipped, bake nothing")
    bake.add_argument("--timeout", type=float, help="seconds one shot may take on a local worker")
    bake.add_argument("--retries", type=int, default=2, help="Dask retries of a shot whose task raised")
    bake.add_argument("--quiet", action="store_true", help="no progress output")
    bake.add_argument(
        scripts.TRUST_FLAG,
        action="store_true",
        help="run the Python inside the shots' .blend files (registered text blocks, Python drivers) "
        "with this run's rights: only for files you trust (see docs/batch.md, Security)",
    )
    tls = bake.add_argument_group("Dask over TLS (--scheduler tls://HOST:PORT; the flags of dask scheduler/worker)")
    tls.add_argument("--tls-ca-file", type=Path, metavar="PEM", help="the CA certificate that signed the cluster's")
    tls.add_argument("--tls-cert", type=Path, metavar="PEM", help="this client's certificate")
    tls.add_argument("--tls-key", type=Path, metavar="PEM", help="its private key (if not in --tls-cert's file)")
    return parser


def main(argv: list[str], host: Host) -> int:
    """Run the command; returns the exit status (0 ok, 1 a shot failed, 2 the job file is bad)."""
    parser = _parser(host.prog)
    args = parser.parse_args(argv)
    if args.command == "bake" and _tls(args) and not args.scheduler:
        parser.error("--tls-ca-file, --tls-cert and --tls-key go with --scheduler tls://HOST:PORT")
    try:
        out = args.output_dir.resolve() if args.output_dir is not None else None
        job = jobfile.load(args.jobs, _generator_ids(), out)
        shots = _select(job, args.shot)
        if not shots:  # every shot has a problem of shape (listed)
            raise jobfile.JobFileError(job.problems)
        blender = host.prepare()
        problems = job.problems + blender.check_job(shots, job.path.name)
        if problems:
            raise jobfile.JobFileError(problems)
    except jobfile.JobFileError as err:
        print(f"{host.prog}: the job file cannot run; nothing was baked:", file=sys.stderr)
        for message in err.messages:
            print(f"  {message}", file=sys.stderr)
        return 2
    if args.command == "validate":
        if args.names:
            print(" ".join(shot.name for shot in shots))
        else:
            print(f"{job.path}: {len(shots)} shot(s), no problem found: {', '.join(s.name for s in shots)}")
        return 0
    return _bake(args, host, blender, job, shots)


def _select(job: jobfile.JobFile, names: list[str]) -> list[jobfile.Shot]:
    if not names:
        return job.shots
    known = {s.name: s for s in job.shots}
    unknown = [n for n in names if n not in known]
    if unknown:  # (a shot with a problem of shape is not among the known: its problem is listed too)
        raise jobfile.JobFileError(
            job.problems + [f"{job.path.name}: --shot {n}: no such shot (shots: {', '.join(known)})" for n in unknown]
        )
    return [known[n] for n in dict.fromkeys(names)]


def _tls(args) -> dict:
    """The TLS files given on the command line, under ``distributed.security.Security``'s names."""
    given = {"tls_ca_file": args.tls_ca_file, "tls_client_cert": args.tls_cert, "tls_client_key": args.tls_key}
    return {k: str(v.resolve()) for k, v in given.items() if v is not None}


def _plan(args, shots: list[jobfile.Shot], blender: str) -> tuple[dict[str, dict], list[dict]]:
    """(a report row per shot, the specs of the shots to bake): up-to-date shots are skipped."""
    digests: dict = {}
    rows: dict[str, dict] = {}
    specs = []
    for shot in shots:
        h = hashing.shot_hash(shot, blender, digests, args.trust_scripts)
        rows[shot.name] = _row(shot, h)
        if not args.force and hashing.is_done(shot, h):
            rows[shot.name].update(status="skipped", message="outputs up to date (same content hash)")
        else:
            specs.append({**shot.spec(h), "trust_scripts": args.trust_scripts})
    return rows, specs


def _run(args, host: Host, blender: Blender, specs: list[dict], mode: str, n: int, on_result, logs: Path) -> dict:
    """Bake ``specs`` the chosen way; returns the mode's figures. Raises :class:`RunStopped`."""
    if not specs:
        return {}
    if mode == "dask":
        return _run_on_dask(args, host.prog, specs, on_result)
    if mode == "inline":
        local.run_inline(specs, blender.bake, on_result)
        return {}
    logs.mkdir(parents=True, exist_ok=True)

    def start(i: int) -> Worker:
        return host.start_worker(logs / f"worker-{i}.log", args.trust_scripts)

    try:
        return local.run_pool(specs, n, start, on_result, args.timeout)
    except local.WorkerSetupError as err:
        raise RunStopped(3, str(err)) from None


def _run_on_dask(args, prog: str, specs: list[dict], on_result) -> dict:
    try:
        # distributed is slow to import and only in the pipeline runner's Python: imported for --scheduler
        from . import dask_client
    except ImportError:
        raise RunStopped(
            2,
            "--scheduler runs from the pipeline runner in a Python with dask distributed and bpy: "
            "python tools/batch.py bake JOBS --scheduler ADDRESS (tools/setup_env.sh, docs/batch.md); "
            "nothing was sent to the cluster",
        ) from None
    if not args.scheduler.startswith("tls://"):
        print(
            f"{prog}: warning: {args.scheduler} is not TLS: anyone who reaches the scheduler can run code "
            "on its workers (docs/batch.md, Security)",
            file=sys.stderr,
        )
    try:
        return dask_client.run(args.scheduler, specs, on_result, retries=args.retries, tls=_tls(args))
    except dask_client.DaskUnavailable as err:
        raise RunStopped(2, f"{err}; nothing was sent to the cluster") from None


def _bake(args, host: Host, blender: Blender, job: jobfile.JobFile, shots: list[jobfile.Shot]) -> int:
    t0 = time.perf_counter()
    started = report.now()
    rows, specs = _plan(args, shots, blender.version)
    mode, n = _mode(args, len(specs))
    if args.dry_run:
        for shot in shots:
            print(f"{shot.name}: {'skipped' if rows[shot.name].get('status') == 'skipped' else 'to bake'}")
        return 0
    progress = report.Progress(len(specs), quiet=args.quiet)

    def on_result(spec: dict, result: dict) -> None:
        row = rows[spec["name"]]
        worker = {k: result.pop(k) for k in ("host", "pid", "dask_worker") if k in result}
        row.update({k: v for k, v in result.items() if k != "shot"}, worker=worker)
        progress.update(spec["name"], result)

    t_batch = time.perf_counter()
    stopped = None  # (exit status, why) when the run could not go on
    figures: dict = {}
    try:
        figures = _run(args, host, blender, specs, mode, n, on_result, job.output_dir / "logs")
    except RunStopped as err:
        stopped = (err.status, str(err))
    except KeyboardInterrupt:
        stopped = (130, "interrupted")
    finally:
        progress.close()
    if stopped is not None:
        print(f"{host.prog}: {stopped[1]}", file=sys.stderr)
    ordered = [rows[s.name] for s in shots]
    for row in ordered:
        if "status" not in row:
            why = stopped[1] if stopped else "lost"
            row.update(status="failed", message=f"no result: {why} (run again: done shots are skipped)")
    print(report.table(ordered))
    header = {
        "job_file": str(job.path),
        "started": started,
        "mode": mode,
        "workers": n,
        "scheduler": args.scheduler,
        "trust_scripts": args.trust_scripts,  # whether the shots' own scripts ran (see scripts.py)
        "blender": blender.version,
        "extension": hashing.extension_version(),
        "wall_s": time.perf_counter() - t0,
        "batch_s": time.perf_counter() - t_batch,  # baking, worker start-up included (see ready_s)
        **figures,
    }
    report_path = args.report or (None if args.shot else job.output_dir / "report.json")
    if report_path is not None:
        report.write_report(report_path, header, ordered)
        print(f"report: {report_path}")
    if stopped is not None:
        return stopped[0]
    return 1 if any(r["status"] == "failed" for r in ordered) else 0


def _row(shot: jobfile.Shot, input_hash: str) -> dict:
    return {
        "shot": shot.name,
        "generator": shot.generator,
        "input_hash": input_hash,
        "outputs": {
            "blend": str(shot.output),
            "metrics": str(shot.metrics),
            "fbx": str(shot.fbx) if shot.fbx else None,
            "gltf": str(shot.gltf) if shot.gltf else None,
        },
    }


def _mode(args, n_specs: int) -> tuple[str, int]:
    """("inline" | "pool" | "dask", worker count) for this run."""
    if args.scheduler:
        return "dask", 0
    if args.workers is None and args.shot:
        return "inline", 0
    n = args.workers if args.workers is not None else (os.cpu_count() or 1)
    if n <= 0:
        return "inline", 0
    return "pool", max(1, min(n, n_specs))
