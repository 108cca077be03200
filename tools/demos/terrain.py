"""A walk and a jump made on flat ground, adapted to the paper's zigzag terrain (blocks at knee height)."""

import bpy

NAME = "terrain"
GENERATORS = ("adapt_terrain", "source_motion")
ORDER = 30
SHEET_FRAMES = (1, 12, 23, 34, 45, 56, 67, 78)
# Both adapted motions from start to end (a walk over the zigzag and a jump onto it; they restart).
ANIMATION_FRAMES = (1, 81, 2)


def build(scene):
    figures = {}
    for name, x in (("Hiker", 0.6), ("Jumper", -0.6)):
        bpy.ops.procanim.add_human(name=name, location=(x, 0.0, 0.0))
    # the paper's zigzag at the rig's own knee height, built by the public operator, wide enough for both
    zigzag = f"{scene.name}.zigzag"
    assert bpy.ops.procanim.add_zigzag(armature="Hiker", name=zigzag, level="KNEE", width=3.2) == {"FINISHED"}
    terrain = bpy.data.objects[zigzag]
    stone = bpy.data.materials.new(f"{zigzag}.stone")
    stone.diffuse_color = (0.55, 0.5, 0.45, 1.0)
    terrain.data.materials.append(stone)
    for name, kind in (("Hiker", "WALK"), ("Jumper", "JUMP")):
        assert bpy.ops.procanim.source_motion(armature=name, kind=kind) == {"FINISHED"}
        result = bpy.ops.procanim.adapt_terrain(armature=name, terrain=terrain.name)
        assert result == {"FINISHED"}, f"{name}: {result}"
        figures[name] = bpy.data.objects[name].animation_data.action.procanim.metrics_json
    scene.frame_start, scene.frame_end = 1, 80
    bpy.ops.object.empty_add(location=(0.0, -1.6, 0.3))
    aim = bpy.context.object
    aim.name = f"{scene.name}.camera_target"
    bpy.ops.object.camera_add(location=(4.5, 2.0, 3.0))
    cam = bpy.context.object
    cam.constraints.new("TRACK_TO").target = aim
    cam.data.lens = 26
    scene.camera = cam
    bpy.ops.object.light_add(type="SUN", location=(2, -2, 4))
    scene.procanim.armature = bpy.data.objects["Hiker"]
    scene.procanim.terrain.terrain = terrain
    return figures
