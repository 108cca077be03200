"""The Dask workers' side of ``--scheduler``: each worker's Blender child and the task that hands it
a shot.

Blender must run on the main thread of its process (``wm.open_mainfile`` crashes on another
thread) and Dask runs tasks on worker threads, so each Dask worker keeps its Blender in one child
process (:class:`.worker.Worker`, started by the worker plugin of :mod:`.dask_plugin`) and the task
:func:`bake_shot` hands the shot to it. A child that dies makes the task raise; Dask retries it.
When the Dask worker itself dies, its child exits with it and the scheduler gives the shot to
another worker. Outputs are written atomically, so a shot baked twice is harmless.

Loaded on the Dask workers only (by the worker plugin, from the repository's source, as
``procanim.batch.dask_worker``), where ``distributed`` is, and without Blender. The client's side is
:mod:`.dask_client`.
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path

from distributed import get_worker

from .worker import Worker, WorkerDied

_lock = threading.Lock()
_launch: tuple[list[str], dict, Path | None] | None = None
_launch_key: str = ""  # what the running Blender was started for (repository and extension version)
_child: Worker | None = None


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
        result["dask_worker"] = get_worker().address
    except ValueError:  # not on a Dask worker's thread
        pass
    return result
