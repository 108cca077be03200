"""The duck article's emotion presets on the human path walk: Neutral, Joy, Happy-wandering and Sad
walk side by side along straight lines; the animation shows each in its own tile, riding along.

The presets are the path walk's own style argument (an enum with the article's NEUTRAL, JOY,
HAPPY_WANDERING and SAD, whatever the argument is called): while the path walk has none the scene is
left out of the demo (``unavailable``), never imitated with other settings.
"""

import json

import bpy

from demos.duck import add_ground_camera_light
from demos.path_walk import add_poly_curve

NAME = "styles"
GENERATORS = ("path_walk",)
ORDER = 25
SHEET_FRAMES = (1, 30, 60, 90, 120, 150, 180, 210)
STYLES = (("NEUTRAL", "Neutral"), ("JOY", "Joy"), ("HAPPY_WANDERING", "Happy-wandering"), ("SAD", "Sad"))
SPACING_M, LENGTH_M = 1.2, 9.0  # walkers side by side along x, each walking LENGTH_M toward −y
WARM_UP_STEPS, COOL_DOWN_STEPS = 5, 3  # steady walking only: steps left out after the start, before the stop
LOOP_LENGTHS = range(48, 101, 2)  # candidate loop lengths (frames): the one with the smallest seam is taken
FIGURES = ("cadence_spm", "step_count", "com_vertical_travel_cm", "frame_end")


def style_argument() -> str | None:
    """Name of the path walk's enum argument that offers the four presets, or None."""
    wanted = {ident for ident, _ in STYLES}
    for prop in bpy.ops.procanim.path_walk.get_rna_type().properties:
        if prop.type == "ENUM" and wanted <= {item.identifier for item in prop.enum_items}:
            return prop.identifier
    return None


def unavailable() -> str | None:
    if style_argument() is None:
        return "procanim.path_walk has no style preset argument (NEUTRAL/JOY/HAPPY_WANDERING/SAD) yet"
    return None


def walkers():
    """(object name, preset, label) per style; object names are global across a file's scenes, so
    none of them may be another demo's (the ducks are called Joy and Sad)."""
    return [(f"{label} walker", ident, label) for ident, label in STYLES]


def build(scene):
    arg = style_argument()
    figures = {}
    for k, (name, ident, _) in enumerate(walkers()):
        assert name not in bpy.data.objects, f"{name} exists: the path walk would go to that object"
        x = SPACING_M * (k - 1.5)
        path = add_poly_curve(f"{name} path", [(x, 0.0, 0.0), (x, -LENGTH_M, 0.0)])
        bpy.ops.procanim.add_human(name=name, location=(x, 0.0, 0.0))
        result = bpy.ops.procanim.path_walk(armature=name, path=path.name, frame_start=1, **{arg: ident})
        assert result == {"FINISHED"}, f"{name}: {result}"
        m = json.loads(bpy.data.objects[name].animation_data.action.procanim.metrics_json)
        figures[name] = {key: m.get(key) for key in FIGURES}
    scene.frame_start, scene.frame_end = 1, max(int(f["frame_end"]) for f in figures.values())
    add_ground_camera_light(scene, target=(0.0, -1.2, 0.8), camera=(1.6, -8.2, 1.4), lens=50)
    aim = bpy.data.objects[f"{scene.name}.camera_target"]  # the camera rides along with Neutral
    follow = aim.constraints.new("COPY_LOCATION")
    follow.target, follow.subtarget = bpy.data.objects[walkers()[0][0]], "hips"
    follow.use_x = follow.use_z = False
    follow.use_offset = True
    scene.camera.parent = aim
    scene.camera.location = (1.6, -7.0, 0.6)  # ahead of the group, a little to the right
    scene.procanim.armature = bpy.data.objects[walkers()[0][0]]
    return figures


def ANIMATION_FRAMES(scene):  # noqa: N802 - the demo's attribute name, here a function of the scene
    """Steady walking of all four: from WARM_UP_STEPS of the slowest starter, loops of LOOP_LENGTHS
    that end COOL_DOWN_STEPS before the first to stop (``tools/demo.py`` picks the smoothest)."""
    starts, ends = [], []
    for name, _, _ in walkers():
        m = json.loads(bpy.data.objects[name].animation_data.action.procanim.metrics_json)
        step = 60.0 * scene.render.fps / m["cadence_spm"]  # frames per step
        starts.append(m["frame_start"] + WARM_UP_STEPS * step)
        ends.append(m["frame_end"] - COOL_DOWN_STEPS * step)
    start = int(max(starts)) + 1
    candidates = [start + n for n in LOOP_LENGTHS if start + n <= min(ends)]
    assert candidates, f"the walk is too short for a loop: steady from {start} to {min(ends):.0f}"
    return start, candidates, 2


ANIMATION_TILES = {
    "characters": tuple((name, label) for name, _, label in walkers()),
    "size": (150, 300),  # px per tile
    "offset": (2.7, -1.6, 0.35),  # camera from the walker's body centre (m): from the right, a little ahead
    "lift": 0.0,
    "lens": 46,
}
