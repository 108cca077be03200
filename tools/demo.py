"""ProcAnim demo: every generator's scene in ``out/demo.blend`` and a Workbench contact sheet each.

Run by ``bash tools/demo.sh`` (which provisions the bpy 5.0.1 venv). Builds the extension zip with
Blender's own builder, installs and enables it as Install from Disk would, then builds one Scene per
module of ``tools/demos/`` with the public operators (what a pipeline script would call), saves
``out/demo.blend`` and renders ``out/<name>_contact_sheet.png`` (copied to ``docs/`` for the README).
``python tools/demo.py duck`` builds only the named demos.
"""

from __future__ import annotations

import importlib
import pkgutil
import shutil
import sys
import tempfile
from pathlib import Path

import bpy
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
TILE = (480, 300)
sys.path.insert(0, str(ROOT / "tools"))
from blender_install import install_extension  # noqa: E402


def demo_modules(names):
    import demos

    mods = [importlib.import_module(f"demos.{m.name}") for m in pkgutil.iter_modules(demos.__path__)]
    mods = [m for m in mods if hasattr(m, "build") and (not names or m.NAME in names)]
    return sorted(mods, key=lambda m: m.ORDER)


def setup_render(scene) -> None:
    scene.render.fps = 24
    scene.render.engine = "BLENDER_WORKBENCH"
    shading = scene.display.shading
    shading.light = "STUDIO"
    shading.color_type = "MATERIAL"
    shading.show_shadows = True
    shading.show_cavity = True
    scene.view_settings.view_transform = "Standard"
    scene.world = bpy.data.worlds.get("Sky") or bpy.data.worlds.new("Sky")
    scene.world.color = (0.75, 0.82, 0.9)
    scene.render.resolution_x, scene.render.resolution_y = TILE
    scene.render.resolution_percentage = 100


def contact_sheet(scene, frames, path: Path, workdir: Path) -> None:
    tiles = []
    for frame in frames:
        # the render must see this scene as the context's: with ``render(scene=…)`` alone a scene that
        # is not the window's renders its first evaluated frame every time
        with bpy.context.temp_override(scene=scene):
            scene.frame_set(frame)
            scene.render.filepath = str(workdir / f"{scene.name}_{frame:04d}.png")
            bpy.ops.render.render(write_still=True)
        img = bpy.data.images.load(scene.render.filepath)
        tiles.append(np.array(img.pixels[:], dtype=np.float32).reshape(img.size[1], img.size[0], 4))
        bpy.data.images.remove(img)
    cols = 4
    rows = (len(tiles) + cols - 1) // cols
    h, w = tiles[0].shape[:2]
    sheet = np.ones((rows * h, cols * w, 4), dtype=np.float32)
    for k, tile in enumerate(tiles):
        r, c = divmod(k, cols)
        sheet[(rows - 1 - r) * h : (rows - r) * h, c * w : (c + 1) * w] = tile  # image rows are bottom-up
    out = bpy.data.images.new(f"{scene.name} contact sheet", width=cols * w, height=rows * h, alpha=True)
    out.pixels.foreach_set(sheet.ravel())
    out.filepath_raw = str(path)
    out.file_format = "PNG"
    out.save()
    bpy.data.images.remove(out)


def main(argv) -> int:
    OUT.mkdir(exist_ok=True)
    (ROOT / "docs").mkdir(exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="procanim-demo-"))
    try:
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
        install_extension("demo")
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
        first = bpy.context.window.scene if bpy.context.window else bpy.context.scene
        sheets = []
        for k, mod in enumerate(demo_modules(argv)):
            scene = first if k == 0 else bpy.data.scenes.new(mod.NAME)
            scene.name = mod.NAME
            if bpy.context.window:
                bpy.context.window.scene = scene
            with bpy.context.temp_override(scene=scene):
                setup_render(scene)
                figures = mod.build(scene)
            for key, value in (figures or {}).items():
                print(f"[{mod.NAME}] {key}: {value}")
            sheets.append((scene, mod))
        if bpy.context.window:
            bpy.context.window.scene = first
        blend = OUT / "demo.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(blend))
        for scene, mod in sheets:
            sheet = OUT / f"{mod.NAME}_contact_sheet.png"
            contact_sheet(scene, mod.SHEET_FRAMES, sheet, workdir)
            shutil.copy(sheet, ROOT / "docs" / sheet.name)
            print(f"saved {sheet}")
        print(f"saved {blend}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]))
