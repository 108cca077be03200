"""The preview's worker process, seen from Blender (the process itself: ``procanim_addon/worker_process.py``).

:class:`WorkerProcess` starts a plain Python (``sys.executable``: Blender's bundled Python, the
system's for a distribution's Blender, the venv's for the ``bpy`` wheel) that imports the engine
and answers one job at a time; :meth:`WorkerProcess.submit` returns a :class:`RemoteWorker`, which
the session treats as it treats its thread :class:`~.session.Worker` (``done``, ``progress``,
``clips``, ``ghosts``, ``error``, ``cancelled``, times). A reader thread here waits for the answers
(it takes the interpreter lock only to unpickle one). The process starts when a preview is turned
on and is killed when it is turned off (:func:`live` counts the running ones for the hook tests);
until it is ready, and wherever it cannot run, the session computes in a thread as before.
``PROCANIM_PREVIEW_PROCESS=0`` in Blender's environment (or :data:`ENABLED` = False) keeps every
regeneration in a thread.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time

from ..procanim_addon import worker_process as wp

ENABLED = os.environ.get("PROCANIM_PREVIEW_PROCESS", "1") != "0"
NICE = int(os.environ.get("PROCANIM_PREVIEW_NICE", "0"))  # the process's scheduling niceness (POSIX)
READY_TIMEOUT_S = 20.0  # a process not ready by then is given up (the preview stays on threads)
_LIVE: set[WorkerProcess] = set()


def live() -> int:
    """Worker processes still running (0 once every preview is off)."""
    return sum(1 for p in _LIVE if p.running)


def python_executable() -> str | None:
    """The Python interpreter beside this Blender, or None when ``sys.executable`` is not one."""
    exe = sys.executable or ""
    return exe if os.path.basename(exe).lower().startswith("python") and os.path.isfile(exe) else None


def _parents(package: str) -> list:
    """``[[name, search path], …]`` of the packages above ``package``, outermost first."""
    parts = package.split(".")[:-1]
    return [[".".join(parts[: i + 1]), list(getattr(sys.modules[".".join(parts[: i + 1])], "__path__", []))]
            for i in range(len(parts))]


class RemoteProgress:
    """What the session reads of a remote job's progress, and its cancel."""

    def __init__(self, process: WorkerProcess, job_id: int):
        self._process, self._job_id, self.cancelled = process, job_id, False

    def cancel(self) -> None:
        self.cancelled = True
        self._process.cancel(self._job_id)

    @property
    def fraction(self) -> float:
        return self._process.fraction(self._job_id)[0]

    @property
    def calls(self) -> int:
        return self._process.fraction(self._job_id)[1]


class RemoteWorker:
    """A job in the worker process; the attributes of the session's thread Worker."""

    def __init__(self, process: WorkerProcess, job_id: int, key: tuple):
        self.key, self.job_id = key, job_id
        self.progress = RemoteProgress(process, job_id)
        self.clips: list | None = None
        self.ghosts: list | None = None
        self.error = ""
        self.cancelled = False
        self.seconds = self.engine_seconds = self.engine_cpu_seconds = 0.0
        self.done_wall = 0.0
        self.where = "process"
        self._done = threading.Event()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def join(self, timeout: float | None = None) -> None:
        self._done.wait(timeout)

    def finish(self, kind: str, payload: bytes) -> None:
        if kind == "done":
            result = pickle.loads(payload)
            self.clips, self.ghosts = result["clips"], result["ghosts"]
            self.seconds, self.engine_seconds = result["seconds"], result["engine_s"]
            self.engine_cpu_seconds = result["engine_cpu_s"]
        elif kind == "cancelled":
            self.cancelled = True
        else:
            self.error = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload)
        self.done_wall = time.time()
        self._done.set()


class WorkerProcess:
    """One engine process; one job at a time."""

    def __init__(self):
        exe = python_executable()
        if exe is None:
            raise RuntimeError(f"no Python interpreter beside Blender (sys.executable = {sys.executable!r})")
        fd, self._control_path = tempfile.mkstemp(prefix="procanim-preview-", suffix=".ctl")
        os.close(fd)
        self._control = wp.Control(self._control_path, create=True)
        package = wp.__name__.rpartition(".")[0]
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PROCANIM_WORKER_NICE": str(NICE)}
        # Windows: CREATE_NO_WINDOW, and BELOW_NORMAL_PRIORITY_CLASS for a niceness above 0
        flags = (0x08000000 | (0x00004000 if NICE > 0 else 0)) if sys.platform == "win32" else 0
        self._proc = subprocess.Popen(
            [exe, "-I", wp.__file__, self._control_path, package, json.dumps(_parents(package))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, creationflags=flags,
        )
        self.started = time.perf_counter()
        self._ready = threading.Event()
        self._jobs: dict[int, RemoteWorker] = {}
        self._next_id = 1
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="procanim-preview-process", daemon=True)
        self._reader.start()
        self._stopped = False
        _LIVE.add(self)

    # ------------------------------------------------------------------ state
    @property
    def running(self) -> bool:
        return self._proc.poll() is None

    @property
    def ready(self) -> bool:
        """Started and answering (False for good once it has ended or was too slow to start)."""
        if self._ready.is_set():
            return self.running
        if time.perf_counter() - self.started > READY_TIMEOUT_S or not self.running:
            self.stop()
        return False

    def wait_ready(self, timeout: float) -> bool:
        self._ready.wait(timeout)
        return self.ready

    # ------------------------------------------------------------------ jobs
    def submit(self, key: tuple, call, bodies) -> RemoteWorker:
        """Send a job (main thread: the inputs are pickled here)."""
        payload = pickle.dumps((call, bodies), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            job_id, self._next_id = self._next_id, self._next_id + 1
            worker = self._jobs[job_id] = RemoteWorker(self, job_id, key)
        assert self._proc.stdin is not None
        wp.write(self._proc.stdin, "job", job_id, payload)
        return worker

    def cancel(self, job_id: int) -> None:
        self._control.cancel_id = job_id

    def fraction(self, job_id: int) -> tuple[float, int]:
        """The fraction done and the progress reports so far of ``job_id`` (the newest job)."""
        return (self._control.fraction, self._control.calls) if job_id == self._next_id - 1 else (0.0, 0)

    def _read(self) -> None:
        stream = self._proc.stdout
        while True:
            try:
                message = wp.read(stream)
            except Exception:  # a broken stream: the process is gone
                message = None
            if message is None:
                break
            kind, job_id, payload = message
            if kind == "ready":
                self._ready.set()
                continue
            with self._lock:
                worker = self._jobs.pop(job_id, None)
            if worker is not None:
                worker.finish(kind, payload)
        with self._lock:  # the process ended: jobs still waiting end with a message
            waiting, self._jobs = list(self._jobs.values()), {}
        for worker in waiting:
            worker.finish("error", b"The preview's worker process ended; change a setting to try again.")

    def stop(self) -> None:
        """Kill the process (a job it runs is of no use any more) and wait for it."""
        if self._stopped:
            return
        self._stopped = True
        if self.running:
            self._proc.kill()
        try:
            self._proc.wait(5.0)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self._proc.stdin, self._proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._reader.join(1.0)
        self._control.close()
        try:
            os.unlink(self._control_path)
        except OSError:
            pass
        _LIVE.discard(self)
