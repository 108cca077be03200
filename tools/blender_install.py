"""Build the extension and install it into the running Blender, as Install from Disk does.

For the scripts that run ProcAnim inside Blender outside the tests (``tools/demo.py``, ``bench/*``)::

    sys.path.insert(0, str(ROOT / "tools"))
    from blender_install import install_extension
    module = install_extension("bench")     # -> "bl_ext.procanim_bench.procanim"

The zip is built by the running Blender's own builder (``tools/build.py``) into a temporary folder,
which also holds the extensions repository. The Blender tests have their own fixture
(``tests/blender/conftest.py``) that also uninstalls and checks.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def install_extension(purpose: str, zip_path: Path | None = None) -> str:
    """Install and enable the extension in a new repository ``procanim_<purpose>``; returns its module.
    ``zip_path``: install this zip (e.g. one built once for several processes) instead of building one."""
    import bpy

    work = Path(tempfile.mkdtemp(prefix=f"procanim-{purpose}-"))
    if zip_path is None:
        spec = importlib.util.spec_from_file_location("procanim_build", ROOT / "tools" / "build.py")
        build = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(build)
        zip_path = build.build(out_dir=work / "dist", scripts_dir=Path(bpy.utils.system_resource("SCRIPTS")))
    repo = bpy.context.preferences.extensions.repos.new(
        name=f"ProcAnim {purpose}", module=f"procanim_{purpose}", custom_directory=str(work / "repo")
    )
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo=repo.module, enable_on_install=True)
    if not hasattr(bpy.ops.procanim, "duck_walk"):
        raise RuntimeError("the ProcAnim extension did not register")
    return f"bl_ext.{repo.module}.procanim"
