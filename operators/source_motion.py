"""procanim.source_motion — the terrain experiment's source motions (walk, jump, forward roll),
made on flat ground at the rig's rest sole height and baked onto a humanoid armature."""

from __future__ import annotations

from collections.abc import Callable

import bpy
from bpy.props import EnumProperty, FloatProperty, IntProperty, StringProperty

from ..procanim_addon import motions
from ..procanim_addon.clip import Clip
from ..procanim_addon.errors import InputError
from .base import GeneratorMixin, Job
from .bridge import read_rigmap, read_skeleton, resolve_armature

KINDS = [
    ("WALK", "Walk", "A forward walk with planted feet and swinging arms"),
    ("JUMP", "Jump", "A standing long jump forward: crouch, flight with tucked legs, landing"),
    ("TUMBLE", "Tumble", "A forward roll: squat, roll over the back, stand up"),
]


class PROCANIM_OT_source_motion(GeneratorMixin, bpy.types.Operator):
    """Bake a procedural walk, jump or forward roll (made on flat ground) onto a humanoid armature"""

    bl_idname = "procanim.source_motion"
    bl_label = "Bake Source Motion"
    bl_options = {"REGISTER", "UNDO"}

    armature: StringProperty(
        name="Armature", description="Armature object name (empty: the sidebar's or the active one)"
    )
    kind: EnumProperty(name="Motion", description="Which source motion to bake", items=KINDS, default="WALK")
    frame_start: IntProperty(name="Start Frame", description="First frame of the motion", default=1)
    fps: FloatProperty(name="FPS", description="Frames per second the motion is timed for", default=24.0, min=1.0)
    steps: IntProperty(name="Steps", description="Footsteps of the walk", default=6, min=1, soft_max=40)

    def prepare(self, context) -> Job:
        obj = resolve_armature(self.armature, context)
        skeleton = read_skeleton(obj)
        rigmap = read_rigmap(obj)
        if not rigmap.roles:
            raise InputError(
                f"No bone roles could be found on '{obj.name}'; use Detect Roles or assign them in the Character panel."
            )
        make: Callable[[], Clip]
        if self.kind == "WALK":
            walk = motions.WalkParams(steps=self.steps, fps=self.fps, frame_start=self.frame_start)
            walk.validate()
            make = lambda: motions.walk(skeleton, rigmap, walk)  # noqa: E731
        elif self.kind == "JUMP":
            jump = motions.JumpParams(fps=self.fps, frame_start=self.frame_start)
            jump.validate()
            make = lambda: motions.jump(skeleton, rigmap, jump)  # noqa: E731
        else:
            tumble = motions.TumbleParams(fps=self.fps, frame_start=self.frame_start)
            tumble.validate()
            make = lambda: motions.tumble(skeleton, rigmap, tumble)  # noqa: E731

        def compute(progress):
            progress(0.0)
            clip = make()
            progress(1.0)
            return [clip]

        return Job([obj], compute)


classes = (PROCANIM_OT_source_motion,)
