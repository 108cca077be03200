"""A CloudRig human, generated once per test session and appended into each test's scene.

CloudRig (the Blender Studio's rig generator, vendored in ``tests/data/cloudrig``) is installed from
its archive as an extension in a repository of its own, its stock metarig ``META-Cloud_Human`` is
generated, the rig is saved in a .blend file and CloudRig is disabled again: the tests bake onto the
generated rig as a user's file holds it, with or without CloudRig installed.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from pathlib import Path

import bpy
import harness

ARCHIVE = Path(__file__).resolve().parents[1] / "data" / "cloudrig" / "cloudrig-2.1.20.tar.xz"
REPO_MODULE = "procanim_tests_cloudrig"
METARIG = "META-Cloud_Human"
RIG_NAME = "CloudHuman"


def _zip_from_archive(workdir: Path) -> Path:
    """The vendored .tar.xz as the extension zip Blender installs (files at the zip's top level)."""
    unpacked = workdir / "cloudrig"
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(unpacked, filter="data")
    zip_path = workdir / "cloudrig-2.1.20.zip"
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(unpacked.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(unpacked).as_posix())
    return zip_path


def _install(workdir: Path) -> str:
    """Install CloudRig into a repository of its own and enable it; returns its add-on module."""
    prefs = bpy.context.preferences
    prefs.use_preferences_save = False
    for i, repo in enumerate(prefs.extensions.repos):
        if repo.module == REPO_MODULE:
            prefs.extensions.repos.remove(prefs.extensions.repos[i])
            break
    prefs.extensions.repos.new(name="CloudRig tests", module=REPO_MODULE, custom_directory=str(workdir / "repo"))
    result = bpy.ops.extensions.package_install_files(
        filepath=str(_zip_from_archive(workdir)), repo=REPO_MODULE, enable_on_install=True
    )
    assert result == {"FINISHED"}, f"CloudRig did not install: {result}"
    return f"bl_ext.{REPO_MODULE}.cloudrig"


def _uninstall(module: str) -> None:
    import addon_utils

    # CloudRig's unregister() writes its preferences into the user config folder.
    os.makedirs(bpy.utils.user_resource("CONFIG"), exist_ok=True)
    addon_utils.disable(module, default_set=True)
    prefs = bpy.context.preferences
    for i, repo in enumerate(prefs.extensions.repos):
        if repo.module == REPO_MODULE:
            prefs.extensions.repos.remove(prefs.extensions.repos[i])
            break


def generate_library(workdir: Path) -> Path:
    """Generate CloudRig's human from its stock metarig and save it (object ``CloudHuman``) in
    ``workdir/cloud_human.blend``; returns that path."""
    module = _install(workdir)
    try:
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
        assert bpy.ops.object.cloudrig_metarig_add(metarig_name=METARIG) == {"FINISHED"}
        meta = bpy.data.objects[METARIG]
        bpy.context.view_layer.objects.active = meta
        meta.select_set(True)
        assert bpy.ops.pose.cloudrig_generate() == {"FINISHED"}
        rig = next(o for o in bpy.data.objects if o.type == "ARMATURE" and o.data.get("is_generated_cloudrig"))
        rig.name = rig.data.name = RIG_NAME
        path = workdir / "cloud_human.blend"
        bpy.data.libraries.write(str(path), {rig}, fake_user=True)
    finally:
        _uninstall(module)
    return path


def add_cloudrig(library: Path, name: str | None = None, location=(0.0, 0.0, 0.0)):
    """Append a copy of the generated CloudRig human into the current scene."""
    return harness.append_object(library, RIG_NAME, name, location)
