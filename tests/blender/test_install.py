"""The extension installs from its zip like a user's Install from Disk, enables, registers its
operators, and survives being disabled and enabled again."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import bpy
import harness


def _operator_ids_defined_in(package_dir: Path) -> set[str]:
    """``bl_idname = "procanim.x"`` class settings in the installed add-on's source -> {"x", ...}."""
    ids = set()
    for path in package_dir.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "bl_idname" for t in node.targets):
                value = node.value
                if isinstance(value, ast.Constant) and str(value.value).startswith("procanim."):
                    ids.add(str(value.value).split(".", 1)[1])
    return ids


def test_extension_is_installed_into_the_repository_and_enabled(procanim_extension):
    package_dir = procanim_extension.repo_dir / harness.EXTENSION_ID
    assert (package_dir / "__init__.py").is_file()
    # Nothing that the manifest excludes was shipped.
    for excluded in ("tests", "tools", "bench", "docs"):
        assert not (package_dir / excluded).exists(), f"{excluded}/ was shipped in the zip"
    # the control maps are data files the engine reads: shipped beside its code
    maps = sorted(p.name for p in (package_dir / "procanim_addon" / "control_maps").glob("*.toml"))
    assert maps == ["cloudrig.toml", "rigify.toml"], maps
    assert harness.is_enabled(procanim_extension.module)
    assert procanim_extension.module in sys.modules


def test_every_operator_the_addon_defines_is_registered(procanim_extension):
    defined = _operator_ids_defined_in(procanim_extension.repo_dir / harness.EXTENSION_ID)
    assert defined, "the installed add-on defines no procanim.* operator"
    registered = set(harness.procanim_operator_names())
    assert defined - registered == set(), f"defined but not registered: {sorted(defined - registered)}"
    for name in defined:
        # A registered operator has RNA; a stale name in bpy.ops would raise here.
        assert getattr(bpy.ops.procanim, name).get_rna_type().identifier


def test_disable_and_enable_again(procanim_extension):
    module = procanim_extension.module
    before = set(harness.procanim_operator_names())
    assert before, "no procanim operators before disabling"

    harness.disable(module)
    assert module not in bpy.context.preferences.addons
    assert harness.procanim_operator_names() == [], "operators left registered after disabling"

    harness.enable(module)
    assert set(harness.procanim_operator_names()) == before
    # A second cycle catches classes that unregister() forgot and register() then refuses.
    harness.disable(module)
    harness.enable(module)
    assert set(harness.procanim_operator_names()) == before


def test_disabling_imports_nothing_register_did_not(procanim_extension):
    """Found: `python tools/batch.py bake … --scheduler …` ended with an ImportError from
    unregister() (``cannot import name 'runtime'``): at exit the batch command removes the installed
    files before Blender disables the extension, and unregister imported a module that register had
    not. Here the extension is loaded afresh, its files are moved away, and it is disabled."""
    module = procanim_extension.module
    harness.disable(module)
    for name in [n for n in sys.modules if n == module or n.startswith(module + ".")]:
        del sys.modules[name]
    harness.enable(module)  # a fresh import: only what register() imports is loaded
    package_dir = procanim_extension.repo_dir / harness.EXTENSION_ID
    moved = package_dir.with_name(package_dir.name + "-moved")
    package_dir.rename(moved)
    importlib.invalidate_caches()
    try:
        harness.disable(module)  # raises what unregister() raises
    finally:
        moved.rename(package_dir)
        importlib.invalidate_caches()
        if not harness.is_enabled(module):
            harness.enable(module)
    assert harness.is_enabled(module)
