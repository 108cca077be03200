"""A walk cycle in place (issue 24): ProcAnim's human walks two gait cycles on the spot with the path
walk's loop ``IN_PLACE`` and no path; the animation renders the loop's SECOND repetition — frames
past the keys, which only the Cycles modifiers the bake added play — so the WebP loops as a game
engine would play the cycle."""

import json

import bpy

from demos.duck import add_ground_camera_light

NAME = "loops"
GENERATORS = ("path_walk",)
ORDER = 27
WALKER = "Cycle walker"  # object names are global across the demo file's scenes
CYCLES = 2


def _loop(scene) -> tuple[int, int]:
    """(first key, period in frames) of the baked loop."""
    m = json.loads(bpy.data.objects[WALKER].animation_data.action.procanim.metrics_json)
    return int(m["loop_frame_start"]), int(round(m["loop_period_frames"]))


def ANIMATION_FRAMES(scene):  # noqa: N802 - the demo's attribute name (tools/demos/__init__.py)
    start, period = _loop(scene)
    return (start + period, start + 2 * period, 2)  # the modifiers' repetition, every other frame


# the second repetition of the loop (frames 59-116: two cycles of 29 frames from frame 1), every 7th
SHEET_FRAMES = (59, 66, 73, 80, 87, 94, 101, 108)


def build(scene):
    bpy.ops.procanim.add_human(name=WALKER, location=(0.0, 0.0, 0.0))
    result = bpy.ops.procanim.path_walk(armature=WALKER, frame_start=1, loop="IN_PLACE", loop_cycles=CYCLES)
    assert result == {"FINISHED"}, f"{WALKER}: {result}"
    action = bpy.data.objects[WALKER].animation_data.action
    start, period = _loop(scene)
    scene.frame_start, scene.frame_end = start, start + 2 * period
    add_ground_camera_light(scene, target=(0.0, 0.0, 0.9), camera=(3.2, -3.6, 1.5), lens=45)
    scene.procanim.armature = bpy.data.objects[WALKER]
    m = json.loads(action.procanim.metrics_json)
    keys = ("loop_cycles", "cycle_frames", "cycle_stride_m", "loop_seam_velocity_ratio", "loop_seam_skate_cm_s")
    return {WALKER: {key: m.get(key) for key in keys} | {"cyclic": action.use_cyclic,
                                                          "frame_range": tuple(action.frame_range)}}
