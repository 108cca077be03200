"""A crowd crosses a plaza: eight humans walk straight across a circle of 3.5 m radius (all through
its centre) and give way to each other, while two more walk in from the side and stop face to face
to shake hands — one ``procanim.crowd_walk`` call (avoidance, variation, greet)."""

import json
import math

import bpy

from demos.duck import add_ground_camera_light
from demos.path_walk import add_poly_curve

NAME = "crowd"
GENERATORS = ("crowd_walk",)
ORDER = 25
SHEET_FRAMES = (1, 40, 70, 100, 130, 160, 190, 230)
# the crossing and the handshake at 6 fps (every 4th frame): a short loop of a small file
ANIMATION_FRAMES = (1, 241, 4)
RADIUS_M = 3.5
CROSSING = 8
GREET_END_M = 0.6  # each greeter's curve ends this far from the meeting point (1.2 m apart)
GREET_AT = (0.0, -4.7)


def _walkers():
    """(name, start, end) of each walker: the crossing, then the greeting pair."""
    out = []
    for k in range(CROSSING):
        a = 2 * math.pi * k / CROSSING
        start = (RADIUS_M * math.cos(a), RADIUS_M * math.sin(a), 0.0)
        out.append((f"Crosser.{k}", start, (-start[0], -start[1], 0.0)))
    gx, gy = GREET_AT
    out.append(("Greeter.L", (gx - 3.5, gy, 0.0), (gx - GREET_END_M, gy, 0.0)))
    out.append(("Greeter.R", (gx + 3.5, gy, 0.0), (gx + GREET_END_M, gy, 0.0)))
    return out


def build(scene):
    humans, curves = [], []
    for name, start, end in _walkers():
        bpy.ops.procanim.add_human(name=name, location=start)
        humans.append(bpy.data.objects[name])
        curves.append(add_poly_curve(f"{name}.path", [start, end]))
    bpy.context.view_layer.update()
    result = bpy.ops.procanim.crowd_walk(armatures=",".join(h.name for h in humans),
                                         paths=",".join(c.name for c in curves), personal_radius=0.3,
                                         variation=0.5, seed=3, greet=True, frame_start=1)
    assert result == {"FINISHED"}, result
    scene.frame_start = 1
    scene.frame_end = max(int(h.animation_data.action.frame_range[1]) for h in humans)
    add_ground_camera_light(scene, target=(0.0, -1.9, 0.6), camera=(5.5, -9.0, 4.6), lens=32)
    scene.procanim.armature = humans[-1]
    m = json.loads(humans[-1].animation_data.action.procanim.metrics_json)
    keys = ("crowd_closest_pelvis_m", "crowd_moved", "crowd_meetings", "greet_both_max_cm", "crowd_last_frame")
    return {key: m.get(key) for key in keys}
