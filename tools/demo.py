"""ProcAnim demo: three ducks with the article's emotion presets walk side by side.

Run by ``bash tools/demo.sh`` (which provisions the bpy 5.0.1 venv). Builds the extension zip with
Blender's own builder, installs and enables it as Install from Disk would, builds the scene with the
public operators (exactly what a pipeline script would call), saves ``out/demo.blend`` and renders a
Workbench contact sheet to ``out/demo_contact_sheet.png`` (copied to ``docs/`` for the README).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path

import bpy
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
DUCKS = [("Joy", "JOY"), ("Wandering", "HAPPY_WANDERING"), ("Sad", "SAD")]
SHEET_FRAMES = (0, 12, 24, 36, 48, 60, 72, 84)
TILE = (480, 300)


def install_extension(workdir: Path) -> None:
    spec = importlib.util.spec_from_file_location("procanim_build", ROOT / "tools" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    zip_path = build.build(out_dir=workdir / "dist", scripts_dir=Path(bpy.utils.system_resource("SCRIPTS")))
    repo = bpy.context.preferences.extensions.repos.new(
        name="ProcAnim demo", module="procanim_demo", custom_directory=str(workdir / "repo")
    )
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo=repo.module, enable_on_install=True)
    assert hasattr(bpy.ops.procanim, "duck_walk"), "the extension did not register"


def build_scene() -> None:
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = 0, 120
    for i, (name, preset) in enumerate(DUCKS):
        bpy.ops.procanim.add_duck(name=name, location=(0.5 * (i - 1), 0.0, 0.0))
        result = bpy.ops.procanim.duck_walk(armature=name, preset=preset, frame_start=0, frame_end=120)
        assert result == {"FINISHED"}, f"{name}: {result}"
    bpy.ops.mesh.primitive_plane_add(size=30.0, location=(0, -1.0, 0))
    bpy.context.object.name = "Ground"
    bpy.ops.object.empty_add(location=(0.0, -0.45, 0.16))
    target = bpy.context.object
    target.name = "CameraTarget"
    bpy.ops.object.camera_add(location=(1.45, -1.75, 0.55))
    cam = bpy.context.object
    track = cam.constraints.new("TRACK_TO")
    track.target = target
    cam.data.lens = 40
    scene.camera = cam
    bpy.ops.object.light_add(type="SUN", location=(2, -2, 4))
    scene.render.engine = "BLENDER_WORKBENCH"
    shading = scene.display.shading
    shading.light = "STUDIO"
    shading.color_type = "MATERIAL"
    shading.show_shadows = True
    shading.show_cavity = True
    scene.view_settings.view_transform = "Standard"
    scene.world = bpy.data.worlds.new("Sky")
    scene.world.color = (0.75, 0.82, 0.9)
    scene.render.resolution_x, scene.render.resolution_y = TILE
    scene.render.resolution_percentage = 100
    scene.procanim.armature = bpy.data.objects["Joy"]


def contact_sheet(path: Path, workdir: Path) -> None:
    scene = bpy.context.scene
    tiles = []
    for frame in SHEET_FRAMES:
        scene.frame_set(frame)
        scene.render.filepath = str(workdir / f"frame_{frame:03d}.png")
        bpy.ops.render.render(write_still=True)
        img = bpy.data.images.load(scene.render.filepath)
        px = np.array(img.pixels[:], dtype=np.float32).reshape(img.size[1], img.size[0], 4)
        tiles.append(px)
        bpy.data.images.remove(img)
    cols = 4
    rows = (len(tiles) + cols - 1) // cols
    h, w = tiles[0].shape[:2]
    sheet = np.ones((rows * h, cols * w, 4), dtype=np.float32)
    for k, tile in enumerate(tiles):
        r, c = divmod(k, cols)
        # image rows are bottom-up in Blender: the first tile goes to the top-left
        sheet[(rows - 1 - r) * h : (rows - r) * h, c * w : (c + 1) * w] = tile
    out = bpy.data.images.new("contact_sheet", width=cols * w, height=rows * h, alpha=True)
    out.pixels.foreach_set(sheet.ravel())
    out.filepath_raw = str(path)
    out.file_format = "PNG"
    out.save()


def main() -> int:
    OUT.mkdir(exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="procanim-demo-"))
    try:
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
        install_extension(workdir)
        build_scene()
        blend = OUT / "demo.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(blend))
        sheet = OUT / "demo_contact_sheet.png"
        contact_sheet(sheet, workdir)
        (ROOT / "docs").mkdir(exist_ok=True)
        shutil.copy(sheet, ROOT / "docs" / "duck_contact_sheet.png")
        for name, _ in DUCKS:
            action = bpy.data.objects[name].animation_data.action
            print(f"{name:10s} {action.name:22s} {action.procanim.metrics_json}")
        print(f"saved {blend}\nsaved {sheet}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
