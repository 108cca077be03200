"""Three ducks with the article's emotion presets walk side by side."""

import bpy

NAME = "duck"
GENERATORS = ("duck_walk",)
ORDER = 0
SHEET_FRAMES = (0, 12, 24, 36, 48, 60, 72, 84)
DUCKS = [("Joy", "JOY"), ("Wandering", "HAPPY_WANDERING"), ("Sad", "SAD")]
# Every preset walks one cycle a second (Speed 5): frames 24-96 are three whole cycles of each duck.
ANIMATION_FRAMES = (24, 96, 2)
ANIMATION_TILES = {
    "characters": (("Joy", "Joy"), ("Wandering", "Happy-wandering"), ("Sad", "Sad")),
    "size": (160, 240),  # px per tile
    "offset": (0.75, -1.05, 0.3),  # camera from the duck's body centre (m): front right, a little above
    "lift": 0.06,  # aim this far above the body centre (m)
    "lens": 62,
}


def build(scene):
    figures = {}
    for i, (name, preset) in enumerate(DUCKS):
        bpy.ops.procanim.add_duck(name=name, location=(0.5 * (i - 1), 0.0, 0.0))
        result = bpy.ops.procanim.duck_walk(armature=name, preset=preset, frame_start=0, frame_end=120)
        assert result == {"FINISHED"}, f"{name}: {result}"
        figures[name] = bpy.data.objects[name].animation_data.action.procanim.metrics_json
    scene.frame_start, scene.frame_end = 0, 120
    add_ground_camera_light(scene, target=(0.0, -0.45, 0.16), camera=(1.45, -1.75, 0.55), lens=40)
    scene.procanim.armature = bpy.data.objects["Joy"]
    return figures


def add_ground_camera_light(scene, target, camera, lens=40, ground_size=30.0):
    """A ground plane, a sun and a camera tracking ``target`` (shared by the demo scenes)."""
    bpy.ops.mesh.primitive_plane_add(size=ground_size, location=(target[0], target[1], 0))
    bpy.context.object.name = f"{scene.name}.ground"
    bpy.ops.object.empty_add(location=target)
    aim = bpy.context.object
    aim.name = f"{scene.name}.camera_target"
    bpy.ops.object.camera_add(location=camera)
    cam = bpy.context.object
    cam.constraints.new("TRACK_TO").target = aim
    cam.data.lens = lens
    scene.camera = cam
    bpy.ops.object.light_add(type="SUN", location=(2, -2, 4))
