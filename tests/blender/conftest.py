"""Blender test session: the extension is built once, installed from its zip into a temporary
extensions repository and enabled, exactly as a user's Install from Disk would; every test starts
from an empty factory scene with the add-on still enabled.

``PROCANIM_ZIP=/path/to/procanim-x.y.z.zip`` tests a zip built elsewhere instead of building one.
Without ``bpy`` (plain Python) these tests are not collected, unless ``PROCANIM_REQUIRE_BPY=1``,
in which case the import error is reported.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

try:
    import bpy  # noqa: F401
except ImportError:
    if os.environ.get("PROCANIM_REQUIRE_BPY") == "1":
        raise
    collect_ignore_glob = ["*"]
    print("tests/blender: bpy is not importable here, Blender tests not collected", file=sys.stderr)
else:
    import harness

    @pytest.fixture(scope="session")
    def procanim_extension():
        """The installed and enabled extension (a :class:`harness.InstalledExtension`)."""
        workdir = Path(tempfile.mkdtemp(prefix="procanim-blender-tests-"))
        try:
            harness.reset_scene()
            zip_from_env = os.environ.get("PROCANIM_ZIP")
            if zip_from_env:
                zip_path = Path(zip_from_env).resolve()
                assert zip_path.is_file(), f"PROCANIM_ZIP={zip_from_env} does not exist"
            else:
                zip_path = harness.build_zip(workdir / "dist")
            installed = harness.install_extension(zip_path, workdir / "repo")
            assert harness.is_enabled(installed.module), f"{installed.module} is not enabled after install"
            yield installed
            harness.uninstall_extension(installed)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    @pytest.fixture(autouse=True)
    def clean_scene(procanim_extension):
        """Every test starts from an empty factory scene with the add-on enabled."""
        harness.reset_scene()
        assert harness.is_enabled(procanim_extension.module), (
            f"{procanim_extension.module} was disabled by a previous test or by the scene reset"
        )
        yield

    # The bpy wheels do not always shut down: 4.2 segfaults once Rigify has been enabled
    # (reproduced without ProcAnim: `import bpy, addon_utils; addon_utils.enable("rigify",
    # default_set=True)` exits 139 on bpy 4.2.23), and 4.5 can deadlock in its exit handlers once a
    # .blend has been saved (gdb: the main thread in GlobalState::~GlobalState destroying the
    # condition variable that bpy's delayed_close_thread_run still waits on; the stage then hangs
    # until its timeout). Under the wheels, leave through os._exit with pytest's own status once
    # everything, the summary included, has been written. A real Blender binary
    # (bpy.app.binary_path set) exits normally.
    _EXIT_STATUS = pytest.StashKey[int]()
    _HARD_EXIT = bpy.app.binary_path == ""

    def pytest_sessionfinish(session, exitstatus):
        session.config.stash[_EXIT_STATUS] = int(exitstatus)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(config):
        if _HARD_EXIT and _EXIT_STATUS in config.stash:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(config.stash[_EXIT_STATUS])
