"""Every bake verified in Blender: the deform bones as Blender evaluates them against the generated pose.

A bake onto a rig's controls is verified where it is written (``control_rig.write_onto_controls``);
a bake onto the clip's own bones (a plain skeleton, or key target ``DEFORM``) here, the same way:
Blender evaluates a few frames (``control_rig.sample_matrices``: ``frame_set`` on the samples only,
one read of every bone's matrix per frame) and the engine compares the deform skeleton's bones, head
and tail, with the pose the clip describes (:func:`procanim_addon.controls.residual.verify_skeleton`).

The samples also measure how far the deform skeleton travelled, and when the bake does not take
effect (:mod:`procanim_addon.verification`) the generator's own figures are kept only as
``intended_<key>``: the sidebar never shows a walk that Blender does not show.
:func:`not_taking_effect` is the message the operator reports as an error.
"""

from __future__ import annotations

import bpy
import numpy as np

from ..procanim_addon.clip import Clip
from ..procanim_addon.controls.deform import rest_offsets
from ..procanim_addon.controls.intended import IntendedPose, intended_channels
from ..procanim_addon.controls.residual import verification_samples, verify_skeleton
from .bridge import constrained_bones, read_skeleton
from .control_rig import is_control_rig, read_control_rig, sample_matrices


def verify_bones(obj, clip: Clip) -> dict:
    """The verification metrics of ``clip`` written onto ``obj``'s own bones, with the figures the
    samples measure; ``{"control_verify_frames": 0}`` when ``obj`` is not in the scene."""
    scene = bpy.context.scene
    if obj.name not in scene.objects or clip.frame_count == 0:
        return {"control_verify_frames": 0}
    skeleton = read_skeleton(obj, upright=False)  # the clip poses the armature's own channels
    bones = [k for k, name in enumerate(skeleton.names) if name in obj.pose.bones]
    offsets = rest_offsets(read_control_rig(obj), skeleton) if is_control_rig(obj) else {}
    intended = IntendedPose(skeleton, *intended_channels(skeleton, clip), offsets=offsets)
    samples = verification_samples(clip.frame_count)
    world: list[np.ndarray] = []
    evaluated = sample_matrices(obj, scene, clip.frames[samples], [skeleton.names[k] for k in bones], world)
    return verify_skeleton(skeleton, intended, bones, samples, evaluated, np.stack(world))


def not_taking_effect(obj, metrics: dict) -> str:
    """The error a bake reports when Blender's deform bones do not follow it ('' when they do)."""
    if metrics.get("bake_takes_effect", True):
        return ""
    residual, bone = metrics.get("control_residual_cm_max", 0.0), metrics.get("control_residual_bone", "")
    measured = metrics.get("measured_travel_m")
    moved = (
        f"; it travelled {measured:.2f} m of {metrics.get('intended_travel_m', 0.0):.2f} m"
        if measured is not None
        else ""
    )
    head = (
        f"{obj.name}: the bake does not take effect — Blender's deform bones stay up to {residual:.1f} cm "
        f"from the generated motion (worst: {bone}){moved}."
    )
    target = str(metrics.get("key_target", ""))
    if target.endswith("_CONTROLS"):
        return (
            f"{head} The rig's controls do not drive its deform bones as its control map says: check the map "
            "(Character ▸ Control Map) or bake with Key Target 'Deform Bones' onto a rig without constraints."
        )
    if is_control_rig(obj):
        return (
            f"{head} Its keyed bones are driven by the rig's constraints: bake with Key Target 'IK Controls' "
            "or 'FK Controls'."
        )
    driven = constrained_bones(obj, [n for n in obj.pose.bones.keys()])
    which = f" ({', '.join(driven[:6])}{' …' if len(driven) > 6 else ''})" if driven else ""
    return (
        f"{head} Constraints override its keyed bones{which}: map the rig's controls (Character ▸ Control Map) "
        "and bake with Key Target 'IK Controls' or 'FK Controls', or mute those constraints."
    )
