"""Batch tests: the extension is built once and installed into this pytest process (to make the
input scenes with the public operators and to read the outputs back); the batch command runs as
the pipeline runner would, ``python tools/batch.py ...``, in subprocesses — or, for the quick
checks, in this process through ``procanim.batch.cli.main``.

Run with the 5.0.1 dev venv (it has bpy, dask distributed and tqdm)::

    PROCANIM_REQUIRE_BPY=1 ~/.cache/procanim/venv-bpy-5.0.1/bin/python -m pytest -q -p no:cacheprovider tests/batch
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "blender"))

try:
    import bpy
except ImportError:
    if os.environ.get("PROCANIM_REQUIRE_BPY") == "1":
        raise
    collect_ignore_glob = ["*"]
    print("tests/batch: bpy is not importable here, batch tests not collected", file=sys.stderr)
else:
    import harness
    from launcher import batch_env, run_batch_command

    def _launcher():
        spec = importlib.util.spec_from_file_location("procanim_batch_launcher", ROOT / "tools" / "batch.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    @pytest.fixture(scope="session")
    def extension_zip():
        """The extension zip, built once or ``$PROCANIM_ZIP`` (handed to every batch process)."""
        zip_from_env = os.environ.get("PROCANIM_ZIP")
        if zip_from_env:
            assert Path(zip_from_env).is_file(), f"PROCANIM_ZIP={zip_from_env} does not exist"
            yield Path(zip_from_env).resolve()
            return
        work = Path(tempfile.mkdtemp(prefix="procanim-batch-tests-"))
        try:
            yield harness.build_zip(work / "dist")
        finally:
            shutil.rmtree(work, ignore_errors=True)

    @pytest.fixture(scope="session")
    def installed(extension_zip, tmp_path_factory):
        """The extension installed and enabled in this process."""
        harness.reset_scene()
        ext = harness.install_extension(extension_zip, tmp_path_factory.mktemp("repo"), "procanim_batch_tests")
        yield ext
        harness.uninstall_extension(ext)

    @pytest.fixture(scope="session")
    def cli(installed):
        """``procanim.batch.cli`` of the source tree (loaded as tools/batch.py does), to run the
        command in this process, where the extension is enabled."""
        _launcher().load_source_package()
        return importlib.import_module("procanim.batch.cli")

    @pytest.fixture(scope="session")
    def inputs(installed, tmp_path_factory):
        """The input scenes and the BVH (see batch_scenes.py), made once per session."""
        import batch_scenes

        folder = tmp_path_factory.mktemp("inputs")
        made = batch_scenes.make_all(folder)
        harness.reset_scene()
        return made

    @pytest.fixture(scope="session")
    def scripted_inputs(installed, tmp_path_factory):
        """Two ducks whose .blend files carry Python, and their scripts' marker folder (see
        batch_scenes.make_scripted)."""
        import batch_scenes

        made = batch_scenes.make_scripted(tmp_path_factory.mktemp("scripted"))
        harness.reset_scene()
        return made

    @pytest.fixture
    def run_batch(extension_zip):
        """``run_batch(*args)``: ``python tools/batch.py *args`` in a subprocess (CompletedProcess)."""

        def run(*args, timeout=600):
            return run_batch_command(batch_env(extension_zip), *args, timeout=timeout)

        return run

    # As in tests/blender/conftest.py: the bpy wheels do not always shut down (4.5 hangs in its
    # exit handlers once a file with a Python driver was open, as the security tests' files are),
    # so under a wheel the session ends through os._exit with pytest's own status.
    _EXIT_STATUS = pytest.StashKey[int]()

    def pytest_sessionfinish(session, exitstatus):
        session.config.stash[_EXIT_STATUS] = int(exitstatus)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(config):
        if bpy.app.binary_path == "" and _EXIT_STATUS in config.stash:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(config.stash[_EXIT_STATUS])
