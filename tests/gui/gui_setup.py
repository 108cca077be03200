"""Prepare Blender's user profile and the scene for the GUI check.

    blender -b --factory-startup --python-exit-code 1 --python tests/gui/gui_setup.py -- ZIP SCENE_OUT [DEMO_BLEND]

Run with HOME pointing at a throw-away directory (tests/gui/run_gui.sh does).
1. Installs the extension zip through Blender's extension API (a user repository,
   exactly like a drag-and-drop install) and enables it.
2. Turns the splash off and saves the user preferences, so the GUI session starts
   without the splash / first-run Quick Setup and with the extension enabled.
3. Writes SCENE_OUT: DEMO_BLEND (out/demo.blend) when this Blender can read it;
   otherwise (the demo is saved by the bpy 5.0 wheel, whose files 4.3 cannot
   read) the duck scene of the demo rebuilt here by tools/demos/duck.py's
   build(scene); failing that, the factory scene with a duck from ``procanim.add_duck``. The 3D view
   sidebar is switched on.
"""

import importlib.util
import os
import sys
import traceback

import bpy

REPO_MODULE = "procanim_gui"
DUCK_DEMO = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools", "demos", "duck.py"
)


def blend_version(path):
    """(major, minor) that wrote a .blend, from its header; None when unknown."""
    try:
        with open(path, "rb") as f:
            head = f.read(32)
    except OSError:
        return None
    if head[:2] == b"\x1f\x8b" or head[:4] == b"\x28\xb5\x2f\xfd":
        return None  # compressed: let Blender decide
    if not head.startswith(b"BLENDER"):
        return None
    try:
        if head[7:8] in (b"_", b"-"):  # legacy header: BLENDER_v403
            v = int(head[9:12])
        else:  # 4.5+/5.0 header: BLENDER17-01v0500
            i = head.index(b"v", 7)
            v = int(head[i + 1 : i + 5])
    except ValueError:
        return None
    return v // 100, v % 100


def install(zip_path):
    prefs = bpy.context.preferences
    directory = os.path.join(os.path.expanduser("~"), "procanim-extensions")
    os.makedirs(directory, exist_ok=True)
    repo = prefs.extensions.repos.new(
        name="ProcAnim GUI check", module=REPO_MODULE, custom_directory=directory, source="USER"
    )
    result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo=repo.module, enable_on_install=True)
    addon = "bl_ext.%s.procanim" % repo.module
    print("gui_setup: install %s -> %s, enabled: %s" % (zip_path, result, addon in prefs.addons), flush=True)
    if addon not in prefs.addons:
        raise RuntimeError("extension %s is not enabled after install" % addon)


def make_scene(scene_out, demo):
    use_demo = False
    if demo and os.path.isfile(demo):
        v = blend_version(demo)
        if v is not None and v > tuple(bpy.app.version[:2]):
            print(
                "gui_setup: %s was saved by Blender %d.%d, newer than this %s: not used"
                % (demo, v[0], v[1], bpy.app.version_string),
                flush=True,
            )
        else:
            try:
                bpy.ops.wm.open_mainfile(filepath=demo, load_ui=True)
                use_demo = True
                print("gui_setup: using demo scene %s" % demo, flush=True)
            except Exception:
                traceback.print_exc()
                print("gui_setup: this Blender cannot open %s" % demo, flush=True)
                bpy.ops.wm.read_homefile(use_factory_startup=True)
    if not use_demo and os.path.isfile(DUCK_DEMO):
        # The duck scene of the demo, rebuilt by this Blender through the demo's per-scene
        # contract (tools/demos/<name>.py: build(scene)), as tools/demo.py does.
        try:
            bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
            spec = importlib.util.spec_from_file_location("procanim_duck_demo", DUCK_DEMO)
            demo_mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(demo_mod)
            demo_mod.build(bpy.context.scene)
            use_demo = True
            print("gui_setup: demo scene rebuilt by this Blender with %s build(scene)" % DUCK_DEMO, flush=True)
        except Exception:
            traceback.print_exc()
            print("gui_setup: %s build(scene) failed: falling back to a fresh duck" % DUCK_DEMO, flush=True)
            bpy.ops.wm.read_homefile(use_factory_startup=True)
    if not use_demo:
        for obj in list(bpy.data.objects):
            if obj.type == "MESH" and obj.name == "Cube":
                bpy.data.objects.remove(obj)
        result = bpy.ops.procanim.add_duck()
        print("gui_setup: procanim.add_duck() -> %s" % result, flush=True)
        if "FINISHED" not in result:
            raise RuntimeError("procanim.add_duck failed")
    # Sidebar on in every 3D view of the file (the check also does it live).
    for screen in bpy.data.screens:
        for area in screen.areas:
            if area.type == "VIEW_3D":
                area.spaces.active.show_region_ui = True
    bpy.ops.wm.save_as_mainfile(filepath=scene_out, compress=False)
    print("gui_setup: wrote %s" % scene_out, flush=True)


def main():
    argv = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else []
    if len(argv) < 2:
        print(__doc__)
        return 2
    zip_path, scene_out = argv[0], argv[1]
    demo = argv[2] if len(argv) > 2 else ""
    install(zip_path)
    prefs = bpy.context.preferences
    prefs.view.show_splash = False
    bpy.ops.wm.save_userpref()
    print("gui_setup: saved preferences (splash off) in %s" % bpy.utils.resource_path("USER"), flush=True)
    make_scene(scene_out, demo)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except Exception:
        traceback.print_exc()
        sys.exit(1)
