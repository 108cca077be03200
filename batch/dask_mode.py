"""Shots on a Dask ``distributed`` cluster (``--scheduler tls://HOST:8786``).

The cluster is plain Dask: ``dask scheduler`` and ``dask worker ADDRESS --nthreads 1`` in an
environment with the ``bpy`` wheel and dask (see docs/batch.md). Dask schedules the shots, retries a
task that raised, and re-runs elsewhere the tasks of a worker that died; nothing here schedules
anything.

Blender must run on the main thread of its process (``wm.open_mainfile`` crashes on another
thread) and Dask runs tasks on worker threads, so each Dask worker keeps its Blender in one child
process (:class:`.worker.Worker`, started by the worker plugin of :mod:`.dask_plugin`, which the
client registers) and the task :func:`bake_shot` hands the shot to it. A child that dies makes the
task raise; Dask retries it. When the Dask worker itself dies, its child exits with it and the
scheduler gives the shot to another worker. Outputs are written atomically, so a shot baked twice
is harmless.

This module is imported by the Dask workers without Blender: stdlib only. The worker plugin loads
it from the repository's source (as ``procanim.batch.dask_mode``); the task that the client submits
is made by :func:`.dask_plugin.task`, pickled by value, which calls :func:`bake_shot` here.

A Dask cluster runs whatever code its clients send. Over ``tls://`` the client shows the
certificate and key given with ``--tls-cert``/``--tls-key``, and the scheduler, started with the
same CA (``--tls-ca-file``), refuses a client without a certificate that CA signed.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .hashing import extension_version
from .worker import Worker, WorkerDied

ROOT = Path(__file__).resolve().parents[1]  # the repository, when this is the pipeline runner
_lock = threading.Lock()
_launch: tuple[list[str], dict, Path | None] | None = None
_launch_key: str = ""  # what the running Blender was started for (repository and extension version)
_child: Worker | None = None


class DaskUnavailable(RuntimeError):
    """Dask mode cannot run from here (no ``distributed``, or not the pipeline runner)."""


# ------------------------------------------------------------------------------ on the Dask workers


def has_child(key: str) -> bool:
    """True when this worker's Blender runs and was started for ``key`` (see the worker plugin)."""
    return _child is not None and _child.proc.poll() is None and key == _launch_key


def start_child(command: list[str], env: dict, log: Path | None, key: str = "") -> None:
    """Start this Dask worker's Blender process (called by the worker plugin), replacing one that
    runs for another key (a new extension version)."""
    global _launch, _child, _launch_key
    stop_child()
    with _lock:
        _launch, _launch_key = (command, env, log), key
        _child = Worker(command, env, log)


def wait_child_ready() -> None:
    """Block until the Blender process is up (raises WorkerDied if it could not start)."""
    with _lock:
        if _child is not None:
            _child.wait_ready()


def stop_child() -> None:
    global _child
    with _lock:
        if _child is not None:
            _child.close(timeout=10.0)
            _child = None


atexit.register(stop_child)


def bake_shot(spec: dict) -> dict:
    """The Dask task: bake ``spec`` in this worker's Blender; raises when that Blender died (Dask
    retries the task, and the next call starts a new Blender)."""
    global _child
    with _lock:
        if _launch is None:
            raise RuntimeError("the ProcAnim worker plugin has not run on this Dask worker")
        if _child is None or _child.proc.poll() is not None:
            _child = Worker(*_launch)
        try:
            result = _child.run(spec)
        except WorkerDied:
            _child.close(timeout=1.0)
            _child = None
            raise
    try:
        from distributed import get_worker

        result["dask_worker"] = get_worker().address
    except (ImportError, ValueError):
        pass
    return result


# ------------------------------------------------------------------------------ on the client


def security(address: str, tls: dict):
    """The client's ``distributed.security.Security`` for ``address``: None (Dask's own
    configuration) unless the address is ``tls://``; then ``tls`` (``tls_ca_file``,
    ``tls_client_cert``, ``tls_client_key``: paths) over Dask's configuration, which must end with a
    CA and a certificate."""
    from distributed.security import Security  # (the client's side only: Dask is there, see run())

    if not address.startswith("tls://"):
        if tls:
            raise DaskUnavailable(f"--tls-ca-file, --tls-cert and --tls-key need a tls:// address, not {address}")
        return None
    for path in tls.values():
        if not Path(path).is_file():
            raise DaskUnavailable(f"TLS: no such file: {path}")
    chosen = Security(require_encryption=True, **tls)
    mine = chosen.get_tls_config_for_role("client")
    if not (mine["ca_file"] and mine["cert"]):
        raise DaskUnavailable(
            f"{address} is a TLS scheduler: give --tls-ca-file and --tls-cert "
            "(and --tls-key when the key is not in the certificate's file)"
        )
    return chosen


def run(
    address: str, specs: list[dict], on_result: Callable[[dict, dict], None], retries: int = 2, tls: dict | None = None
) -> dict:
    """Bake ``specs`` on the cluster at ``address``; ``on_result`` as each finishes. Returns cluster
    figures. ``tls``: see :func:`security`. Raises :class:`DaskUnavailable` before submitting
    anything when the cluster cannot run shots (unreachable, no workers, a worker that cannot start
    Blender)."""
    if not (ROOT / "tools" / "batch.py").is_file():
        raise DaskUnavailable(
            "--scheduler runs from the pipeline runner in a Python with dask and bpy: "
            "python tools/batch.py bake JOBS --scheduler ADDRESS (see docs/batch.md)"
        )
    try:
        import cloudpickle  # type: ignore[import-untyped, unused-ignore]
        from distributed import Client, as_completed

        from . import dask_plugin
    except ImportError:
        raise DaskUnavailable("--scheduler needs dask distributed in this Python (tools/setup_env.sh)") from None
    t0 = time.perf_counter()
    try:
        client = Client(address, timeout="20s", security=security(address, tls or {}))
    except (OSError, ValueError, TypeError) as err:  # refused, unreachable, TLS that does not match
        raise DaskUnavailable(f"cannot connect to the Dask scheduler at {address}: {err}") from None
    with client:
        try:
            client.wait_for_workers(1, timeout=60)
        except TimeoutError:
            raise DaskUnavailable(f"no Dask worker joined the scheduler at {address} within 60 s") from None
        cloudpickle.register_pickle_by_value(dask_plugin)
        try:
            client.register_plugin(dask_plugin.BlenderOnWorker(str(ROOT), extension_version()))
        except Exception as err:  # the workers' error, raised again here
            raise DaskUnavailable(f"a Dask worker could not start Blender: {type(err).__name__}: {err}") from None
        ready_s = time.perf_counter() - t0  # every worker has its Blender up
        bake = dask_plugin.task()
        futures = {
            client.submit(bake, spec, key=f"procanim-{spec['name']}-{spec['input_hash'][:16]}", retries=retries): spec
            for spec in specs
        }
        for future in as_completed(futures):
            spec = futures[future]
            try:
                result = future.result()
            except Exception as err:  # KilledWorker, a task that kept failing …: that shot fails alone
                result = {"shot": spec["name"], "status": "failed", "message": f"dask: {type(err).__name__}: {err}"}
            on_result(spec, result)
        done_s = time.perf_counter() - t0  # the last result (closing the client comes after it)
        return {"dask_workers": sorted(client.scheduler_info()["workers"]), "ready_s": ready_s, "done_s": done_s}
