"""The parent side of a batch worker's pipe: :class:`Worker` starts one worker process and hands it
shot after shot.

The worker process runs :func:`.serve.serve` (the child side): it reads one shot spec (JSON) a
line on its standard input and answers each with a result line on the file descriptor named by
``PROCANIM_BATCH_FD``; its first line says it is ready. Used by the local pool and by each Dask
worker (whose Blender lives in such a child process).

Stdlib only at import time: the Dask worker processes import this module without Blender.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

from .processes import ONE_BLAS_THREAD

FD_VARIABLE = "PROCANIM_BATCH_FD"
PARENT_VARIABLE = "PROCANIM_BATCH_PARENT"


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
