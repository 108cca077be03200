"""ProcAnim demo: every generator's scene in ``out/demo.blend``, a Workbench contact sheet and a short
looping animation each.

Run by ``bash tools/demo.sh`` (which provisions the bpy 4.5.15 venv, with Pillow for the animations).
Builds the extension zip with Blender's own builder, installs and enables it as Install from Disk
would, then builds one Scene per module of ``tools/demos/`` with the public operators (what a
pipeline script would call), saves ``out/demo.blend``, renders ``out/<name>_contact_sheet.png`` and
``out/<name>_animation.webp`` (both copied to ``docs/`` for the README).
``python tools/demo.py duck`` builds only the named demos.

The animation of a scene is driven by attributes of its module (``tools/demos/__init__.py``):
``ANIMATION_FRAMES = (start, end, step)`` renders frames ``start, start + step, … < end`` and plays
them at ``scene fps / step`` (``end`` excluded: a window of whole gait cycles then loops without a
repeated pose); without it, the scene's whole frame range at step 2. ``ANIMATION_TILES`` renders one
tile per listed character instead of the scene camera's view, each seen by a camera that rides along
with that character at its mean velocity over the window, so a walk of whole cycles loops in place.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

import bpy
import numpy as np
from mathutils import Vector

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
TILE = (480, 300)
ANIMATION_STEP = 2  # default: every 2nd frame, i.e. 12 fps from the scenes' 24
WEBP_QUALITY = 82  # lossy WebP: Workbench's smooth shading stays clean where a GIF palette bands
ANIMATION_AA = "5"  # Workbench samples per pixel for animation frames: half the time of the stills' 8, alike
sys.path.insert(0, str(ROOT / "tools"))
from blender_install import install_extension  # noqa: E402


def demo_modules(names):
    """The demo modules (all, or those named), in ORDER; a module whose ``unavailable()`` returns a
    reason (e.g. an operator argument it needs does not exist yet) is left out with that reason."""
    import demos

    mods = [importlib.import_module(f"demos.{m.name}") for m in pkgutil.iter_modules(demos.__path__)]
    mods = [m for m in mods if hasattr(m, "build") and (not names or m.NAME in names)]
    ready = []
    for mod in sorted(mods, key=lambda m: m.ORDER):
        reason = getattr(mod, "unavailable", lambda: None)()
        if reason:
            print(f"[{mod.NAME}] skipped: {reason}")
        else:
            ready.append(mod)
    return ready


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


def render_frame(scene, frame: int, path: Path) -> Path:
    """Render ``frame`` of ``scene`` with its camera and resolution to the PNG ``path``."""
    # the render must see this scene as the context's: with ``render(scene=…)`` alone a scene that
    # is not the window's renders its first evaluated frame every time
    with bpy.context.temp_override(scene=scene):
        scene.frame_set(frame)
        scene.render.filepath = str(path)
        bpy.ops.render.render(write_still=True)
    return path


def contact_sheet(scene, frames, path: Path, workdir: Path) -> None:
    tiles = []
    for frame in frames:
        render_frame(scene, frame, workdir / f"{scene.name}_{frame:04d}.png")
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


# --------------------------------------------------------------------------------------------
# Animations


def animation_frames(mod, scene, names, riding: bool) -> range:
    """The frames of the module's animation: ``ANIMATION_FRAMES`` (a tuple, or a function of the
    scene returning one), else the scene's range at ``ANIMATION_STEP``. When its ``end`` is a sequence
    of candidates, the one whose loop has the smallest seam (:func:`loop_seam_cm`) is taken."""
    spec = getattr(mod, "ANIMATION_FRAMES", None)
    if callable(spec):
        spec = spec(scene)
    start, end, step = spec or (scene.frame_start, scene.frame_end + 1, ANIMATION_STEP)
    if isinstance(end, int | float):
        return range(int(start), int(end), int(step))
    candidates = [range(int(start), int(e), int(step)) for e in end]
    return min(candidates, key=lambda frames: loop_seam_cm(scene, names, frames, riding))


def bone_heads(scene, name: str, frame: int) -> np.ndarray:
    """World positions of the armature's evaluated bone heads at ``frame`` (m), (bones, 3)."""
    with bpy.context.temp_override(scene=scene, view_layer=scene.view_layers[0]):
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
    obj = bpy.data.objects[name].evaluated_get(depsgraph)
    return np.array([obj.matrix_world @ bone.head for bone in obj.pose.bones])


def body_centre(scene, name: str, frame: int) -> Vector:
    """Mean world position of the armature's evaluated bone heads at ``frame`` (m)."""
    return Vector(bone_heads(scene, name, frame).mean(axis=0))


def loop_seam_cm(scene, names, frames: range, riding: bool) -> float:
    """How far any bone head jumps when the animation starts over (cm): its pose at ``frames.stop``
    (where the loop's next frame would be) against ``frames.start``; with ``riding`` cameras, relative
    to each character's body centre. About 0 for whole gait cycles; a journey shows its length."""
    worst = 0.0
    for name in names:
        a, b = bone_heads(scene, name, frames.start), bone_heads(scene, name, frames.stop)
        if riding:
            a, b = a - a.mean(axis=0), b - b.mean(axis=0)
        worst = max(worst, float(np.linalg.norm(b - a, axis=1).max()))
    return 100.0 * worst


def riding_camera(scene, name: str, frames: range, offset, lens: float, lift: float = 0.0):
    """A camera at ``offset`` (m) from a point ``lift`` (m) above the character's body centre, moving
    in a straight line at the character's mean velocity from ``frames.start`` to ``frames.stop`` (the
    start of the next loop), aimed along ``-offset``: a whole number of gait cycles then loops in
    place. Returns the camera and a function frame -> its location."""
    up = Vector((0.0, 0.0, lift))
    first, last = body_centre(scene, name, frames.start) + up, body_centre(scene, name, frames.stop) + up
    data = bpy.data.cameras.new(f"{scene.name}.{name}.animation_camera")
    data.lens = lens
    cam = bpy.data.objects.new(data.name, data)
    scene.collection.objects.link(cam)
    cam.rotation_mode = "QUATERNION"
    cam.rotation_quaternion = (-Vector(offset)).to_track_quat("-Z", "Y")

    def location(frame):
        u = (frame - frames.start) / (frames.stop - frames.start)
        return first.lerp(last, u) + Vector(offset)

    return cam, location


def label(image, text: str):
    """``text`` in the top-left corner of a PIL image (dark on the light sky)."""
    from PIL import ImageDraw, ImageFont

    draw = ImageDraw.Draw(image)
    draw.text((8, 6), text, fill=(30, 34, 40), font=ImageFont.load_default(size=max(12, image.height // 18)))
    return image


def character_objects(name: str) -> list:
    """The armature ``name`` and everything parented under it (its body mesh …)."""
    obj = bpy.data.objects[name]
    return [obj, *obj.children_recursive]


def tiles_of(mod, scene) -> dict | None:
    """The module's ``ANIMATION_TILES`` (a dict, or a function of the scene returning one), or None."""
    spec = getattr(mod, "ANIMATION_TILES", None)
    return spec(scene) if callable(spec) else spec


def render_tiles(scene, spec: dict, frames: range, workdir: Path) -> list:
    """One row of tiles per frame, one tile per ``spec['characters']`` entry (name, label), each
    showing its character alone (the others hidden) from its riding camera, labelled."""
    from PIL import Image

    width, height = spec["size"]
    rows = [Image.new("RGB", (width * len(spec["characters"]), height)) for _ in frames]
    shown = {obj: obj.hide_render for name, _ in spec["characters"] for obj in character_objects(name)}
    saved_camera = scene.camera
    scene.render.resolution_x, scene.render.resolution_y = width, height
    try:
        for col, (name, text) in enumerate(spec["characters"]):
            mine = set(character_objects(name))
            for obj, hidden in shown.items():
                obj.hide_render = hidden or obj not in mine
            cam, location = riding_camera(scene, name, frames, spec["offset"], spec["lens"], spec.get("lift", 0.0))
            scene.camera = cam
            for row, frame in zip(rows, frames):
                cam.location = location(frame)
                path = render_frame(scene, frame, workdir / f"{scene.name}_{name}_{frame:04d}.png")
                row.paste(label(Image.open(path).convert("RGB"), text), (col * width, 0))
            bpy.data.objects.remove(cam)
    finally:
        for obj, hidden in shown.items():
            obj.hide_render = hidden
        scene.camera = saved_camera
        scene.render.resolution_x, scene.render.resolution_y = TILE
    return rows


def render_animation(scene, mod, path: Path, workdir: Path) -> str:
    """Render the module's animation and write it as a looping animated WebP; returns a summary."""
    from PIL import Image

    started = time.perf_counter()
    tiles = tiles_of(mod, scene)
    if tiles:
        names = [name for name, _ in tiles["characters"]]
    else:
        names = [obj.name for obj in scene.objects if obj.type == "ARMATURE" and not obj.hide_render]
    frames = animation_frames(mod, scene, names, riding=bool(tiles))
    seam = loop_seam_cm(scene, names, frames, riding=bool(tiles))
    still_aa, scene.display.render_aa = scene.display.render_aa, ANIMATION_AA
    try:
        if tiles:
            images = render_tiles(scene, tiles, frames, workdir)
        else:
            images = [
                Image.open(render_frame(scene, f, workdir / f"{scene.name}_anim_{f:04d}.png")).convert("RGB")
                for f in frames
            ]
    finally:
        scene.display.render_aa = still_aa
    frame_ms = round(1000.0 * frames.step / scene.render.fps)
    images[0].save(
        path, format="WEBP", save_all=True, append_images=images[1:], duration=frame_ms, loop=0,
        quality=WEBP_QUALITY, method=6,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    w, h = images[0].size
    return (
        f"{len(images)} frames {w}x{h} (scene frames {frames.start}-{frames.stop - 1} every {frames.step}), "
        f"{len(images) * frame_ms / 1000:.1f} s at {1000 / frame_ms:.0f} fps, {path.stat().st_size / 1e6:.2f} MB, "
        f"loop seam {seam:.1f} cm, rendered and encoded in {seconds:.0f} s"
    )


def main(argv) -> int:
    OUT.mkdir(exist_ok=True)
    (ROOT / "docs").mkdir(exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="procanim-demo-"))
    started = time.perf_counter()
    try:
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
        install_extension("demo")
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
        first = bpy.context.window.scene if bpy.context.window else bpy.context.scene
        built = []
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
            built.append((scene, mod))
        if bpy.context.window:
            bpy.context.window.scene = first
        blend = OUT / "demo.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(blend))
        print(f"saved {blend} ({time.perf_counter() - started:.0f} s)")
        for scene, mod in built:
            sheet = OUT / f"{mod.NAME}_contact_sheet.png"
            contact_sheet(scene, mod.SHEET_FRAMES, sheet, workdir)
            shutil.copy(sheet, ROOT / "docs" / sheet.name)
            print(f"saved {sheet}")
        for scene, mod in built:  # after the save: the riding cameras are not part of demo.blend
            anim = OUT / f"{mod.NAME}_animation.webp"
            summary = render_animation(scene, mod, anim, workdir)
            shutil.copy(anim, ROOT / "docs" / anim.name)
            print(f"saved {anim}: {summary}")
        print(f"demo done in {time.perf_counter() - started:.0f} s")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        status = main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
    except SystemExit as stop:  # argparse's --help and usage errors
        status = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    except BaseException:  # noqa: BLE001 - printed, then the same hard exit with status 1
        traceback.print_exc()
        status = 1
    # The bpy 4.5 wheel can deadlock in its exit handlers once a .blend has been saved (the main
    # thread destroying a condition variable bpy's delayed-close thread still waits on; see
    # tests/blender/conftest.py): the demo, done and flushed, leaves without running them.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
