"""The Dask worker plugin that brings up a Blender on each worker of the cluster.

``dask_client.run`` registers it with the scheduler (``Client.register_plugin``), which runs its
``setup`` on every worker, now and on any that joins or restarts later: nothing is configured on
the workers beyond ``dask worker ADDRESS --nthreads 1`` in an environment with the ``bpy`` wheel.
``setup`` loads the extension's source as the package ``procanim`` from the repository (the
client's path, or ``$PROCANIM_ROOT`` on the worker: a shared file system is assumed, as for the
shots' own files), builds the extension zip once per worker (or takes ``$PROCANIM_ZIP``) and starts
the worker's Blender child (``python tools/batch.py worker``), waiting until it is ready. A worker
that already has its Blender for the same repository and extension version keeps it (a second
batch starts warm); another version gets a new Blender. (The Dask worker's own copy of this
package is loaded once: restart the workers after updating ProcAnim's code without a new version.)

This module is pickled by value (``cloudpickle.register_pickle_by_value``): neither the workers
(before the plugin has run) nor the scheduler (which unpickles the tasks) can import ``procanim``.
So the task itself (:func:`task`) is a small function that hands the shot to the real one,
``procanim.batch.dask_worker.bake_shot``, on the worker.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import sys
from pathlib import Path

from distributed.diagnostics.plugin import WorkerPlugin

NAME = "procanim-batch"
DASK_WORKER = "procanim.batch.dask_worker"


def task():
    """The Dask task, ``bake(spec)``: it hands the shot to this worker's Blender (``dask_worker.bake_shot``).

    Made here as a local function so that Dask, which tries plain pickle first (by name, which the
    scheduler could not import), falls back to cloudpickle, which sends its code."""

    def bake(spec: dict) -> dict:
        module = sys.modules.get(DASK_WORKER)
        if module is None:
            raise RuntimeError("the ProcAnim worker plugin has not run on this Dask worker")
        return module.bake_shot(spec)

    return bake


class BlenderOnWorker(WorkerPlugin):
    name = NAME

    def __init__(self, root: str, version: str):
        self.root = root
        self.version = version

    async def setup(self, worker) -> None:
        root = Path(os.environ.get("PROCANIM_ROOT") or self.root)
        launcher_path = root / "tools" / "batch.py"
        spec = importlib.util.spec_from_file_location("procanim_batch_launcher", launcher_path)
        if spec is None or spec.loader is None or not launcher_path.is_file():
            raise RuntimeError(f"no ProcAnim repository at {root} on this worker (set PROCANIM_ROOT)")
        launcher = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(launcher)
        launcher.load_source_package()
        dask_worker = importlib.import_module(DASK_WORKER)
        key = f"{root} {self.version} {os.environ.get('PROCANIM_ZIP', '')}"
        if not dask_worker.has_child(key):
            local = Path(worker.local_directory)
            zip_path = os.environ.get("PROCANIM_ZIP") or str(
                await asyncio.to_thread(launcher.build_zip, local / "procanim-dist")
            )
            log = Path(os.environ.get("PROCANIM_BATCH_LOG") or local / "procanim-blender.log")
            command = [sys.executable, str(launcher_path), "worker"]
            dask_worker.start_child(command, {"PROCANIM_ZIP": zip_path}, log, key)
        await asyncio.to_thread(dask_worker.wait_child_ready)
