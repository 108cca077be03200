"""Fix Feet: a walk with a capture's faults — planted feet drifting 5–15 cm/s, 1 cm of jitter, the whole
clip floating 3 cm — beside the same walk after Fix Feet, its feet held on the floor.

The faults are made as the tests make them (``procanim_addon/fix_feet/footskate.py``) on ProcAnim's
source walk and baked with the add-on's own baker; then ``procanim.fix_feet`` fixes one of the two.
"""

import importlib

import bpy

from demos.duck import add_ground_camera_light

NAME = "fix_feet"
GENERATORS = ("fix_feet",)
ORDER = 40
SHEET_FRAMES = (1, 10, 19, 28, 37, 46, 55, 64)
ANIMATION_FRAMES = (1, 73, 2)
CHARACTERS = (("Skated", 0.6), ("Fixed", -0.6))  # side by side, seen from the front: the feet show


def addon(module: str):
    """A module of the installed ProcAnim extension (its package as Blender named it)."""
    package = bpy.types.PROCANIM_OT_fix_feet.__module__.rsplit(".operators", 1)[0]
    return importlib.import_module(f"{package}.{module}")


def skate(obj, seed: int) -> None:
    """Replace the armature's walk by the same walk with foot skate added (a new action)."""
    bridge, bake = addon("operators.bridge"), addon("operators.bake")
    footskate = addon("procanim_addon.fix_feet.footskate")
    skeleton, rigmap = bridge.read_rig(obj)
    lo, hi = (int(round(v)) for v in obj.animation_data.action.frame_range)
    clean = bridge.read_action_clip(obj, skeleton, lo, hi)
    skated = footskate.add_footskate(skeleton, rigmap, clean, footskate.Footskate(seed=seed))
    skated.generator = "skated"
    bake.bake_clip(obj, skated, "DEFORM")


def build(scene):
    for name, x in CHARACTERS:
        assert bpy.ops.procanim.add_human(name=name, location=(x, 0.0, 0.0)) == {"FINISHED"}
        assert bpy.ops.procanim.source_motion(armature=name, kind="WALK", steps=6) == {"FINISHED"}
        skate(bpy.data.objects[name], seed=0)
    add_ground_camera_light(scene, target=(0.0, -2.0, 0.45), camera=(3.6, -8.0, 1.3), lens=42)
    ground = bpy.data.objects[f"{scene.name}.ground"]
    assert bpy.ops.procanim.fix_feet(armature="Fixed", ground=ground.name) == {"FINISHED"}
    scene.frame_start, scene.frame_end = 1, 72
    scene.procanim.armature = bpy.data.objects["Fixed"]
    scene.procanim.fix_feet.ground = ground
    return {"Fixed": bpy.data.objects["Fixed"].animation_data.action.procanim.metrics_json}
