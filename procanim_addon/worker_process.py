"""The live preview's worker process: engine calls run in a plain Python, outside Blender's.

A regeneration run in a thread of Blender's own process holds Python's interpreter lock while the
engine works, and every Python call Blender's main thread makes meanwhile (each panel, header and
draw handler of the redraw that follows a setting change) waits for it, up to the interpreter's
switch interval (5 ms) each time. Here the engine runs in its own interpreter, on the other core.
Blender's side (``preview/process.py``) starts one such process per running preview:

    python -I worker_process.py CONTROL PACKAGE PARENTS_JSON

``PACKAGE`` is the engine package's module name in Blender (``bl_ext.<repo>.procanim.procanim_addon``
for an installed extension) and ``PARENTS_JSON`` the search paths of the packages above it, so that
this process imports the engine under the same names and the pickles of both sides agree; nothing
above the engine is executed here (no bpy). Messages (:func:`write`, :func:`read`) go over the
process's stdin and stdout, each a pickled ``(kind, job_id, payload)``, the payload pickled again
so that a job this side cannot unpickle is answered with its id:

* Blender → here: ``("job", id, pickle((call, bodies)))`` — an :class:`~.jobs.EngineCall` and
  the ghost's :class:`~.ghost.Body` of each armature; ``("quit", 0, b"")``;
* here → Blender: ``("ready", pid, b"")`` once, then per job ``("done", id, pickle(result))``
  (:func:`run`'s dict), ``("cancelled", id, b"")`` or ``("error", id, message)``.

Progress and cancel go through :class:`Control`, a small file both processes map: Blender writes
the id of the job to cancel, the engine's progress reports write the fraction and raise
:class:`~.progress.Cancelled` at the first report after a cancel (the progress contract).
"""

from __future__ import annotations

import mmap
import os
import pickle
import struct
import sys
import time

_FRAME = struct.Struct("<Q")


class Control:
    """The shared block: job id to cancel (int64), the running job's fraction (float64) and its
    progress reports so far (int64)."""

    SIZE = 24

    def __init__(self, path: str, create: bool = False):
        if create:
            with open(path, "wb") as fh:
                fh.write(b"\0" * self.SIZE)
        self._file = open(path, "r+b")  # noqa: SIM115  (kept open with the map)
        self._map = mmap.mmap(self._file.fileno(), self.SIZE)

    def close(self) -> None:
        self._map.close()
        self._file.close()

    @property
    def cancel_id(self) -> int:
        return struct.unpack_from("<q", self._map, 0)[0]

    @cancel_id.setter
    def cancel_id(self, job_id: int) -> None:
        struct.pack_into("<q", self._map, 0, job_id)

    @property
    def fraction(self) -> float:
        return struct.unpack_from("<d", self._map, 8)[0]

    @property
    def calls(self) -> int:
        return struct.unpack_from("<q", self._map, 16)[0]

    def report(self, fraction: float, calls: int) -> None:
        struct.pack_into("<dq", self._map, 8, fraction, calls)


def write(stream, kind: str, job_id: int, payload: bytes) -> None:
    data = pickle.dumps((kind, job_id, payload), protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_FRAME.pack(len(data)) + data)
    stream.flush()


def read(stream) -> tuple[str, int, bytes] | None:
    """The next message, or None at the end of the stream."""
    head = stream.read(_FRAME.size)
    if len(head) < _FRAME.size:
        return None
    (size,) = _FRAME.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def run(call, bodies, progress) -> dict:
    """``call(progress)`` and the ghosts of its Clips (what the preview draws), with times (s):
    ``engine_s`` and ``engine_cpu_s`` (the engine alone: wall, and CPU time of this thread),
    ``seconds`` (with the ghosts). Raises InputError for a Clip with NaN values, Cancelled."""
    from .errors import InputError
    from .ghost import build_ghosts

    t0, cpu0 = time.perf_counter(), time.thread_time()
    clips = call(progress)
    engine_s, engine_cpu_s = time.perf_counter() - t0, time.thread_time() - cpu0
    if not all(clip.is_finite() for clip in clips):
        raise InputError(NAN_MESSAGE)
    ghosts = build_ghosts(clips, bodies)
    return {"clips": clips, "ghosts": ghosts, "engine_s": engine_s, "engine_cpu_s": engine_cpu_s,
            "seconds": time.perf_counter() - t0}


NAN_MESSAGE = "The generator produced invalid (NaN) values. Try less extreme settings."


def failure_text(err: BaseException) -> str:
    """An exception as the preview's status line says it."""
    from .errors import InputError

    return str(err) if isinstance(err, InputError) else f"ProcAnim failed: {type(err).__name__}: {err}"


class _Progress:
    """The engine's progress callback here: reports into the control block, raises Cancelled at
    the first report after Blender asked to cancel this job."""

    def __init__(self, control: Control, job_id: int):
        self.control, self.job_id, self.calls = control, job_id, 0

    def __call__(self, fraction: float) -> None:
        from .progress import Cancelled

        self.calls += 1
        self.control.report(min(max(float(fraction), 0.0), 1.0), self.calls)
        if self.control.cancel_id == self.job_id:
            raise Cancelled()


def serve(control_path: str) -> int:
    """The loop: answer jobs until ``quit`` or the end of stdin."""
    from .progress import Cancelled

    channel_in, channel_out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not reach the message stream
    control = Control(control_path)
    write(channel_out, "ready", os.getpid(), b"")
    while True:
        message = read(channel_in)
        if message is None or message[0] == "quit":
            control.close()
            return 0
        _kind, job_id, payload = message
        try:
            call, bodies = pickle.loads(payload)
            result = run(call, bodies, _Progress(control, job_id))
            write(channel_out, "done", job_id, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        except Cancelled:
            write(channel_out, "cancelled", job_id, b"")
        except Exception as err:  # InputError or a bug: the status line shows it
            write(channel_out, "error", job_id, failure_text(err).encode("utf-8"))


def _bootstrap(package: str, parents_json: str) -> None:
    """Make ``package`` importable under its own name without running its parents (Blender's)."""
    import json
    import types

    parents = json.loads(parents_json)  # [[name, [paths]], ...], outermost first
    for name, paths in parents:
        module = types.ModuleType(name)
        module.__path__ = list(paths)
        sys.modules[name] = module
        head, _, tail = name.rpartition(".")
        if head:
            setattr(sys.modules[head], tail, module)
    if not parents:  # a top-level engine package: its folder's parent is where it is found
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


if __name__ == "__main__":
    import importlib

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one thread, as the batch's workers
    nice = int(os.environ.get("PROCANIM_WORKER_NICE", "0"))
    if nice > 0 and hasattr(os, "nice"):
        os.nice(nice)  # Blender's own threads (its drawing) first, the engine on what is left
    _bootstrap(sys.argv[2], sys.argv[3])
    sys.exit(importlib.import_module(sys.argv[2] + ".worker_process").serve(sys.argv[1]))
