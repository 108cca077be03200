"""The child side of a batch worker's pipe: the loop that bakes shot after shot in one Blender.

A worker process is started by :class:`.worker.Worker` with a command that brings up Blender with
the extension enabled and then calls :func:`serve` — ``blender -b -c procanim worker`` with a
Blender binary, ``python tools/batch.py worker`` with the ``bpy`` wheel. It reads shot specs (one
JSON object a line) on its standard input and answers each with a result line on the file
descriptor named by ``PROCANIM_BATCH_FD`` (Blender's own prints go to standard output, kept apart).
The first line it sends says it is ready. A worker whose parent process disappears exits (see
:func:`_exit_with_parent`), so killing a Dask worker or the command never leaves a Blender running.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import threading
import time

import bpy

from .shot import bake
from .worker import FD_VARIABLE, PARENT_VARIABLE

CLEANUPS: list = []  # called by the watchdog before a worker whose parent is gone exits


def _exit_with_parent(parent: int) -> None:
    """End this process when ``parent`` is gone: at once on Linux (the kernel sends SIGKILL when the
    parent dies: a shot in progress is not finished after its task was given to another worker),
    else within 0.5 s (a watchdog thread, which also runs :data:`CLEANUPS`)."""
    if sys.platform.startswith("linux") and parent:
        try:
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
