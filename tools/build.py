"""Build and validate the ProcAnim extension zip with Blender's own extension builder.

Usage::

    python tools/build.py [--out-dir DIR] [--scripts-dir DIR]

Prints the path of the built zip (``dist/procanim-<version>.zip`` by default) on the last line.

The builder is ``blender_ext.py`` shipped inside Blender (and inside the ``bpy`` wheel) under
``<scripts>/addons_core/bl_pkg/cli/``; tags are validated against
``<scripts>/modules/_bpy_internal/extensions/tags.py``. It is stdlib-only, so any Python 3.11+
runs it. ``<scripts>`` is found, in this order: ``--scripts-dir``; the ``bpy`` package visible to
this interpreter (found without importing it); the dev venv
``${PROCANIM_CACHE:-~/.cache/procanim}/venv-bpy-5.0.1``.

The Blender tests import :func:`build` from here (``tests/blender/harness.py``), passing the scripts
directory of the running Blender, so every Blender version is tested with its own builder.
Stdlib only: this file also runs inside a real Blender's Python.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILDER_REL = Path("addons_core", "bl_pkg", "cli", "blender_ext.py")
TAGS_REL = Path("modules", "_bpy_internal", "extensions", "tags.py")
DEFAULT_TOOLS_VENV = "venv-bpy-5.0.1"


class BuildError(RuntimeError):
    """The builder or the validator refused the package; the message holds their output."""


def _scripts_dirs_of_bpy_package(package_dir: Path) -> list[Path]:
    """``bpy/<X.Y>/scripts`` directories inside an installed ``bpy`` wheel, newest first."""
    return sorted(package_dir.glob("*/scripts"), reverse=True)


def find_scripts_dir() -> Path:
    """Blender's ``scripts`` directory that holds the extension builder (see module docstring)."""
    candidates: list[Path] = []
    spec = importlib.util.find_spec("bpy")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidates += _scripts_dirs_of_bpy_package(Path(location))
    cache = Path(os.environ.get("PROCANIM_CACHE", Path.home() / ".cache" / "procanim"))
    for site in sorted((cache / DEFAULT_TOOLS_VENV / "lib").glob("python3*/site-packages/bpy")):
        candidates += _scripts_dirs_of_bpy_package(site)
    for scripts in candidates:
        if (scripts / BUILDER_REL).is_file():
            return scripts
    raise BuildError(
        "Blender's extension builder was not found: no bpy wheel in this Python nor in "
        f"{cache / DEFAULT_TOOLS_VENV} (run `bash tools/setup_env.sh`), and no --scripts-dir given."
    )


def _python_for_builder() -> str:
    """A plain Python interpreter for the stdlib-only builder.

    Inside a real Blender ``sys.executable`` is normally its Python; if it is the Blender binary
    itself, fall back to ``python3`` on PATH.
    """
    exe = sys.executable or ""
    if exe and "blender" not in Path(exe).name.lower():
        return exe
    found = shutil.which("python3")
    if found is None:
        raise BuildError("no Python interpreter found to run Blender's extension builder")
    return found


def manifest_version(source_dir: Path = REPO_ROOT) -> tuple[str, str]:
    """``(id, version)`` from ``blender_manifest.toml``."""
    with open(source_dir / "blender_manifest.toml", "rb") as fh:
        manifest = tomllib.load(fh)
    return manifest["id"], manifest["version"]


def _run_builder(scripts_dir: Path, args: list[str]) -> str:
    cmd = [
        _python_for_builder(),
        str(scripts_dir / BUILDER_REL),
        *args,
        "--valid-tags",
        str(scripts_dir / TAGS_REL),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0:
        raise BuildError(f"{' '.join(cmd)}\nexited {proc.returncode}:\n{output}")
    return output


def build(
    out_dir: Path | None = None,
    scripts_dir: Path | None = None,
    source_dir: Path = REPO_ROOT,
    verbose: bool = False,
) -> Path:
    """Build ``<out_dir>/<id>-<version>.zip`` from ``source_dir`` and validate it; return its path."""
    scripts_dir = Path(scripts_dir) if scripts_dir is not None else find_scripts_dir()
    out_dir = Path(out_dir) if out_dir is not None else source_dir / "dist"
    out_dir.mkdir(parents=True, exist_ok=True)
    ext_id, version = manifest_version(source_dir)
    zip_path = out_dir / f"{ext_id}-{version}.zip"
    if zip_path.exists():
        zip_path.unlink()
    log = _run_builder(
        scripts_dir, ["build", "--source-dir", str(source_dir), "--output-filepath", str(zip_path)]
    )
    if verbose:
        print(log)
    if not zip_path.is_file():
        raise BuildError(f"builder reported success but wrote no {zip_path}:\n{log}")
    log = _run_builder(scripts_dir, ["validate", str(zip_path)])
    if verbose:
        print(log)
    return zip_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, default=None, help="default: <repo>/dist")
    parser.add_argument("--scripts-dir", type=Path, default=None, help="Blender's scripts directory")
    args = parser.parse_args(argv)
    try:
        zip_path = build(args.out_dir, args.scripts_dir, verbose=True)
    except BuildError as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 1
    print(zip_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
