"""ProcAnim's batch command with the ``bpy`` wheel — the pipeline runner.

    python tools/batch.py bake jobs.toml [--workers N | --scheduler tcp://HOST:8786 | --shot NAME] ...
    python tools/batch.py validate jobs.toml

The same command as ``blender -b -c procanim ...`` (the code is the extension's ``batch/``), for a
Python that has the ``bpy`` wheel — and, for ``--scheduler``, dask distributed; the progress bar is
tqdm's (both installed by tools/setup_env.sh). This process imports bpy once the job file has been
read, builds the extension zip (or takes ``$PROCANIM_ZIP``) and installs it, as Install from Disk
does; each worker process (``python tools/batch.py worker``) installs the same zip once and then
bakes shot after shot. The extension's source is loaded as the package ``procanim`` (its id), which
is also the name Dask workers know it by (batch/dask_plugin.py).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "procanim"
REPO_PURPOSE = "batch"
CLEANUPS: list = []  # run before this process ends (see exit_after)


def load_source_package():
    """The repository as the package ``procanim`` (importing it registers nothing)."""
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            PACKAGE, ROOT / "__init__.py", submodule_search_locations=[str(ROOT)]
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = module
        spec.loader.exec_module(module)
    return sys.modules[PACKAGE]


def build_zip(out_dir: Path) -> Path:
    """Build the extension zip with the bpy wheel's own builder (found without importing bpy)."""
    spec = importlib.util.spec_from_file_location("procanim_build", ROOT / "tools" / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    return build.build(out_dir=out_dir)


def install(zip_path: Path) -> str:
    """Install ``zip_path`` into this process's Blender: a temporary repository, removed at the end
    (:data:`CLEANUPS`) — also when a worker ends because its parent is gone (the watchdog's
    clean-ups), and, for a process that was killed, by the next process that installs here (its
    folder names its pid)."""
    import bpy

    sys.path.insert(0, str(ROOT / "tools"))
    from blender_install import install_extension

    _sweep_stale_installs()
    purpose = f"{REPO_PURPOSE}{os.getpid()}"
    module = install_extension(purpose, zip_path=zip_path)
    repo = next(r for r in bpy.context.preferences.extensions.repos if r.module == f"procanim_{purpose}")
    folder = Path(repo.custom_directory).parent
    CLEANUPS.append(lambda: shutil.rmtree(folder, True))
    serve_module = sys.modules.get(f"{PACKAGE}.batch.serve")
    if serve_module is not None:
        serve_module.CLEANUPS.append(lambda: shutil.rmtree(folder, True))
    return module


def _sweep_stale_installs() -> None:
    """Remove the temporary installs of batch processes that no longer exist."""
    alive = importlib.import_module(f"{PACKAGE}.batch.processes").process_alive
    for folder in Path(tempfile.gettempdir()).glob(f"procanim-{REPO_PURPOSE}[0-9]*-*"):
        pid = folder.name[len(f"procanim-{REPO_PURPOSE}") :].split("-")[0]
        if pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(folder, True)


def worker() -> int:
    """A worker process: Blender up with the extension from ``$PROCANIM_ZIP``, then shot after shot."""
    t0 = time.perf_counter()
    load_source_package()
    serve_module = importlib.import_module(f"{PACKAGE}.batch.serve")  # imports bpy: Blender is up
    install(Path(os.environ["PROCANIM_ZIP"]))
    return serve_module.serve(setup_seconds=time.perf_counter() - t0)


def main(argv: list[str]) -> int:
    if argv[:1] == ["worker"]:
        return worker()
    load_source_package()
    cli = importlib.import_module(f"{PACKAGE}.batch.cli")  # without Blender: it is brought up by prepare()
    worker_env: dict = {}

    def prepare():
        """Blender up in this process with the extension installed; what the command runs in it."""
        zip_path = os.environ.get("PROCANIM_ZIP")
        if not zip_path:
            work = Path(tempfile.mkdtemp(prefix="procanim-batch-zip-"))
            CLEANUPS.append(lambda: shutil.rmtree(work, True))
            zip_path = str(build_zip(work))
        install(Path(zip_path))
        worker_env["PROCANIM_ZIP"] = zip_path
        return importlib.import_module(f"{PACKAGE}.batch.command").blender_side()

    worker_command = [sys.executable, str(Path(__file__).resolve()), "worker"]
    host = cli.Host("python tools/batch.py", prepare, worker_command=worker_command, worker_env=worker_env)
    return cli.main(argv, host)


def exit_after(argv: list[str]) -> None:
    """Run :func:`main`, then end the process without Blender's own shutdown: every result is sent
    and every output written by then, the shutdown only costs time (which a pool waits for), and
    some bpy wheels crash there (4.2) or hang (4.5, once a file with a Python driver was open)."""
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse: --help, a usage error (its message is printed)
        code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    for cleanup in CLEANUPS:
        cleanup()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_after(sys.argv[1:])
