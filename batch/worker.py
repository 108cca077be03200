"""Batch worker processes: one Blender kept loaded, baking shot after shot.

A worker is started with a command that brings up Blender with the extension enabled and then
calls :func:`serve` — ``blender -b -c procanim worker`` with a Blender binary, ``python
tools/batch.py worker`` with the ``bpy`` wheel. It reads shot specs (one JSON object a line) on its
standard input and answers each with a result line on the file descriptor named by
``PROCANIM_BATCH_FD`` (Blender's own prints go to standard output, kept apart). The first line it
sends says it is ready.

The other side is :class:`Worker`, used by the local pool and by each Dask worker. A worker whose
parent process disappears exits within a second (a watchdog thread), so killing a Dask worker or the
command never leaves a Blender running.

Stdlib only at import time: the Dask worker processes import this module without Blender.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

FD_VARIABLE = "PROCANIM_BATCH_FD"
PARENT_VARIABLE = "PROCANIM_BATCH_PARENT"
CLEANUPS: list = []  # called by the watchdog before a worker whose parent is gone exits
# One BLAS thread per worker (the pool already runs one worker per core): after a LAPACK call (a
# small np.linalg.inv or solve) OpenBLAS's other threads busy-wait about 0.1 s, so each worker
# burned a second core for nothing — measured on a 1,000-frame path walk: 0.43 s CPU for 0.23 s of
# wall time, 0.23 s with one thread — and two workers on two cores ran no faster than one process.
# The caller's environment wins when it sets them.
ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (one of another user counts as alive; a zombie,
    killed and not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            return "State:\tZ" not in fh.read()
    except FileNotFoundError:  # it ended meanwhile (or no /proc: then os.kill above decided)
        return not os.path.isdir("/proc/self")
    except OSError:
        return True


class WorkerDied(RuntimeError):
    """The worker process ended (crash, kill) or timed out before it answered."""


class Worker:
    """A running worker process (see the module docstring) and the pipes to it."""

    def __init__(self, command: list[str], env: dict | None = None, log: Path | None = None):
        read_fd, write_fd = os.pipe()
        full_env = {**ONE_BLAS_THREAD, **os.environ, **(env or {})}
        full_env.update({FD_VARIABLE: str(write_fd), PARENT_VARIABLE: str(os.getpid())})
        self.log_path = log
        self._log = open(log, "wb") if log is not None else None  # noqa: SIM115 (closed in close())
        self.started = time.perf_counter()
        try:
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=self._log if self._log is not None else subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
                pass_fds=(write_fd,),
                env=full_env,
                # its own process group: Ctrl+C reaches the command, which stops the workers and
                # still writes its report (same session, so the same share of the CPU)
                process_group=0,
            )
        finally:
            os.close(write_fd)
        self._results = os.fdopen(read_fd, "r", encoding="utf-8")
        self.hello: dict | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self, timeout: float | None) -> dict:
        if timeout is not None:
            ready, _, _ = select.select([self._results], [], [], timeout)
            if not ready:
                self.kill()
                raise WorkerDied(f"no answer within {timeout:g} s; the worker was stopped")
        line = self._results.readline()
        if not line:
            code = self.proc.wait()
            raise WorkerDied(f"the worker process ended (exit status {code}){self._log_hint()}")
        return json.loads(line)

    def _log_hint(self) -> str:
        return f"; its log: {self.log_path}" if self.log_path is not None else ""

    def wait_ready(self, timeout: float | None = 300.0) -> dict:
        """Block until the worker has Blender up (its hello: pid, Blender version, setup seconds)."""
        if self.hello is None:
            self.hello = self._read(timeout)
            self.hello["startup_s"] = time.perf_counter() - self.started
        return self.hello

    def run(self, spec: dict, timeout: float | None = None) -> dict:
        """Bake one shot in the worker; raises :class:`WorkerDied` if it dies or times out."""
        self.wait_ready()
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(spec) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            code = self.proc.wait()
            raise WorkerDied(f"the worker process ended (exit status {code}){self._log_hint()}") from None
        return self._read(timeout)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def close(self, timeout: float = 30.0) -> None:
        """Let the worker finish (end of input), killing it after ``timeout`` seconds (again: no-op)."""
        if self._results.closed:
            return
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self._results.close()
        if self._log is not None:
            self._log.close()


# ------------------------------------------------------------------------------ the worker side


def _exit_with_parent(parent: int) -> None:
    """End this process when ``parent`` is gone: at once on Linux (the kernel sends SIGKILL when the
    parent dies: a shot in progress is not finished after its task was given to another worker),
    else within 0.5 s (a watchdog thread, which also runs :data:`CLEANUPS`)."""
    if sys.platform.startswith("linux") and parent:
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:  # the parent died before the request
            os._exit(3)

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        for cleanup in CLEANUPS:
            cleanup()
        os._exit(3)

    if parent:
        threading.Thread(target=watch, name="procanim-batch-watchdog", daemon=True).start()


def serve(setup_seconds: float = 0.0) -> int:
    """The worker loop (in a process with Blender and the extension): bake each shot spec read
    on standard input; answer on the ``PROCANIM_BATCH_FD`` descriptor. Returns at end of input."""
    import bpy

    from .shot import bake

    try:
        out = os.fdopen(int(os.environ[FD_VARIABLE]), "w", encoding="utf-8")
    except (KeyError, ValueError, OSError):
        print("procanim batch worker: start it through the batch command, not by hand", file=sys.stderr)
        return 2
    _exit_with_parent(int(os.environ.get(PARENT_VARIABLE, "0")))

    def send(message: dict) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    print(f"procanim-batch: worker {os.getpid()} ready (Blender {bpy.app.version_string})", flush=True)
    send({"ready": True, "pid": os.getpid(), "blender": bpy.app.version_string, "setup_s": setup_seconds})
    for line in sys.stdin:
        if not line.strip():
            continue
        spec = json.loads(line)
        print(f"procanim-batch: start {spec['name']}", flush=True)
        result = bake(spec)
        print(f"procanim-batch: {result['status']} {spec['name']} {result.get('message', '')}", flush=True)
        send(result)
    return 0
