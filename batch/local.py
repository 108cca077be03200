"""Running shots on this machine: in this process, or on a pool of worker processes.

* :func:`run_inline` bakes the shots one after another in the running Blender (``--workers 0``,
  and ``--shot NAME`` for render-farm tasks), with the bake it is handed (``shot.bake``: this
  module itself never needs Blender).
* :func:`run_pool` starts ``n`` workers (:class:`.worker.Worker`, each keeps one Blender loaded)
  and hands shots to whichever is free through a ``concurrent.futures`` thread pool — one thread per
  worker, waiting on its pipe. A worker that dies while baking (a crash) is replaced and the shot
  is tried once more on the new worker; a second death fails that shot alone.

``on_result(spec, result)`` is called in the calling thread as each shot finishes.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from ..procanim_addon.threads import limit_blas_threads
from .worker import Worker, WorkerDied


class WorkerSetupError(RuntimeError):
    """A worker process could not bring Blender up (the whole batch stops: no shot would run)."""


OnResult = Callable[[dict, dict], None]
StartWorker = Callable[[int], Worker]
Bake = Callable[[dict], dict]  # a shot spec → its result (shot.bake, in this process's Blender)


def failed(spec: dict, message: str, **extra) -> dict:
    """A result for a shot that did not get a worker's own result."""
    return {"shot": spec["name"], "status": "failed", "message": message, **extra}


def run_inline(specs: list[dict], bake: Bake, on_result: OnResult) -> None:
    """Bake ``specs`` one after another with ``bake`` in this process."""
    limit_blas_threads()  # as in a worker: OpenBLAS's idle threads would spin on the other core

    for spec in specs:
        t0 = time.perf_counter()
        result = bake(spec)
        result["wall_s"] = time.perf_counter() - t0
        on_result(spec, result)


def run_pool(specs: list[dict], n: int, start_worker: StartWorker, on_result: OnResult, timeout: float | None) -> dict:
    """Bake ``specs`` on ``n`` workers; returns pool figures: each worker's start-up seconds,
    ``ready_s``, when the last of the first ``n`` was up, and ``done_s``, when the last shot's result
    came (seconds after the call; the workers' exit comes after it)."""
    t0 = time.perf_counter()
    done_s = 0.0
    started = [start_worker(i) for i in range(n)]  # every worker ever started (closed at the end)
    idle: queue.Queue[Worker] = queue.Queue()
    for w in started:
        idle.put(w)
    startups: list[float] = []

    def bake_on_a_worker(spec: dict) -> dict:
        worker = idle.get()
        try:
            for attempt in (1, 2):
                try:
                    if worker.hello is None:
                        startups.append(worker.wait_ready()["startup_s"])
                    t0 = time.perf_counter()
                    result = worker.run(spec, timeout)
                    result["wall_s"] = time.perf_counter() - t0
                    result["attempts"] = attempt
                    return result
                except WorkerDied as err:
                    if worker.hello is None:  # never came up: a set-up problem, not this shot's
                        raise WorkerSetupError(f"a batch worker did not start: {err}") from None
                    worker.close(timeout=1.0)
                    worker = start_worker(len(started))
                    started.append(worker)
                    if attempt == 2 or "no answer within" in str(err):
                        return failed(spec, f"worker: {err}", attempts=attempt)
            raise AssertionError("unreachable")
        finally:
            idle.put(worker)

    try:
        with ThreadPoolExecutor(max_workers=n, thread_name_prefix="procanim-batch") as pool:
            pending = {pool.submit(bake_on_a_worker, spec): spec for spec in specs}
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        on_result(pending.pop(future), future.result())
                    done_s = time.perf_counter() - t0
                # closed while the pool's threads live: a worker started by one of them is killed
                # when that thread ends (Linux's parent-death signal, see worker.py)
                for w in list(started):
                    w.close()
            except BaseException:  # Ctrl+C: stop the workers, then let the pool wind down
                for future in pending:
                    future.cancel()
                for w in list(started):
                    w.kill()
                raise
    finally:
        for w in list(started):
            w.close()
    return {"workers": n, "worker_startup_s": startups, "ready_s": max(startups, default=0.0), "done_s": done_s}
