"""Two ProcAnim humans shake right hands: the host invites (Jacobian transpose), the guest — a bit
shorter and less dominant — answers with fuzzy controllers; the grip moves toward the guest."""

import json

import bpy

from demos.duck import add_ground_camera_light

NAME = "handshake"
GENERATORS = ("handshake",)
ORDER = 10
SHEET_FRAMES = (1, 12, 24, 36, 46, 56, 70, 90)
# The whole handshake: both stand in the neutral pose at its first and last frame, so it loops.
ANIMATION_FRAMES = (1, 105, 2)
PAIR = (("Host", 1.80, 0.0, "JACOBIAN_TRANSPOSE", 0.8), ("Guest", 1.65, 180.0, "FUZZY", 0.3))
DISTANCE_M = 0.9


def build(scene):
    objs = []
    for k, (name, height, yaw_deg, solver, dominance) in enumerate(PAIR):
        bpy.ops.procanim.add_human(name=name, height=height, location=(0.0, -k * DISTANCE_M, 0.0))
        obj = bpy.data.objects[name]
        obj.rotation_euler[2] = yaw_deg * 3.141592653589793 / 180.0
        obj.procanim_character.solver = solver  # stored on the character, as the panel does
        obj.procanim_character.dominance = dominance
        objs.append(obj)
    bpy.context.view_layer.update()
    host, guest = objs
    settings = scene.procanim.handshake
    settings.initiator, settings.partner = host, guest
    result = bpy.ops.procanim.handshake(initiator=host.name, partner=guest.name, frame_start=1)
    assert result == {"FINISHED"}, result
    action = host.animation_data.action
    scene.frame_start, scene.frame_end = (int(v) for v in action.frame_range)
    add_ground_camera_light(scene, target=(0.0, -0.6, 0.92), camera=(3.8, -0.6, 1.1), lens=42)
    scene.procanim.armature = host
    m = json.loads(action.procanim.metrics_json)
    keys = ("solver_initiator", "solver_partner", "both_mean_cm", "both_max_cm", "contact_weight", "sequence_initiator")
    return {key: m.get(key) for key in keys}
