"""Shots on a Dask ``distributed`` cluster (``--scheduler tls://HOST:8786``): the client's side.

The cluster is plain Dask: ``dask scheduler`` and ``dask worker ADDRESS --nthreads 1`` in an
environment with the ``bpy`` wheel and dask (see docs/batch.md). Dask schedules the shots, retries a
task that raised, and re-runs elsewhere the tasks of a worker that died; nothing here schedules
anything. :func:`run` registers the worker plugin (:mod:`.dask_plugin`), which brings up a Blender
on every worker, and submits one task per shot (made by :func:`.dask_plugin.task`, pickled by
value, which calls ``bake_shot`` of :mod:`.dask_worker` on the worker).

A Dask cluster runs whatever code its clients send. Over ``tls://`` the client shows the
certificate and key given with ``--tls-cert``/``--tls-key``, and the scheduler, started with the
same CA (``--tls-ca-file``), refuses a client without a certificate that CA signed.

Imported by the command only for ``--scheduler``: ``distributed`` is there in the pipeline
runner's Python (``tools/batch.py``), not in Blender's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import cloudpickle  # type: ignore[import-untyped, unused-ignore]
from distributed import Client, as_completed
from distributed.security import Security

from . import dask_plugin
from .hashing import extension_version

ROOT = Path(__file__).resolve().parents[1]  # the repository, when this is the pipeline runner


class DaskUnavailable(RuntimeError):
    """The cluster cannot run shots from here (not the pipeline runner, TLS files that do not fit,
    unreachable, no workers, a worker that cannot start Blender): nothing was submitted."""


def security(address: str, tls: dict) -> Security | None:
    """The client's ``distributed.security.Security`` for ``address``: None (Dask's own
    configuration) unless the address is ``tls://``; then ``tls`` (``tls_ca_file``,
    ``tls_client_cert``, ``tls_client_key``: paths) over Dask's configuration, which must end with a
    CA and a certificate."""
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
