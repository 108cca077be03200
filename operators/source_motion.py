"""The inputs of the terrain experiment (Jo & Choi 2019, §M4):

* procanim.source_motion — a walk, jump or forward roll made on flat ground at the rig's rest sole
  height, baked onto a humanoid armature;
* procanim.add_zigzag — the paper's zigzag terrain (four cells across the direction of travel, the
  1st and 3rd raised to the character's ankle, knee or waist) as a mesh in front of the character."""

from __future__ import annotations

from collections.abc import Callable

import bpy
import numpy as np
from bpy.props import EnumProperty, FloatProperty, IntProperty, StringProperty

from ..procanim_addon import motions
from ..procanim_addon.clip import Clip
from ..procanim_addon.errors import InputError
from ..procanim_addon.frames import character_frame
from ..procanim_addon.terrain.shapes import body_heights, zigzag
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


LEVELS = [
    ("ANKLE", "Ankle", "Blocks as high as the ankles (the paper's Low)"),
    ("KNEE", "Knee", "Blocks as high as the knees (the paper's Medium)"),
    ("WAIST", "Waist", "Blocks as high as the waist (the paper's High)"),
]


class PROCANIM_OT_add_zigzag(bpy.types.Operator):
    """Add the paper's zigzag terrain in front of the armature: 1st and 3rd cells raised to ankle, knee or waist"""

    bl_idname = "procanim.add_zigzag"
    bl_label = "Add Zigzag Terrain"
    bl_options = {"REGISTER", "UNDO"}

    armature: StringProperty(
        name="Armature", description="Armature whose size and facing set the terrain (empty: the sidebar's)"
    )
    name: StringProperty(name="Name", description="Name of the new mesh object", default="Zigzag")
    level: EnumProperty(name="Height", description="How high the raised cells are", items=LEVELS, default="KNEE")
    cell_length: FloatProperty(
        name="Cell Length",
        description="Length of each cell along the direction of travel",
        default=0.8,
        min=0.05,
        subtype="DISTANCE",
        unit="LENGTH",
    )
    width: FloatProperty(
        name="Width",
        description="Width of the cells across the direction of travel",
        default=3.0,
        min=0.1,
        subtype="DISTANCE",
        unit="LENGTH",
    )
    start: FloatProperty(
        name="Start",
        description="Distance ahead of the character where the first cell begins",
        default=0.3,
        subtype="DISTANCE",
        unit="LENGTH",
    )

    def execute(self, context):
        try:
            obj = resolve_armature(self.armature, context)
            skeleton = read_skeleton(obj)
            rigmap = read_rigmap(obj)
            cf = character_frame(skeleton, rigmap)
            height = body_heights(skeleton, rigmap)[self.level.lower()]
            unit = float(np.mean(np.abs(np.array(obj.matrix_world.to_scale()))))  # metres per armature unit
            hip_xy = skeleton.heads[rigmap.index(skeleton, "hips"), :2]
            mesh = zigzag(
                height,
                start_xy=hip_xy + self.start / unit * cf.forward[:2],
                direction_xy=cf.forward[:2],
                cell_length=self.cell_length / unit,
                width=self.width / unit,
                margin=10.0 / unit,
                ground_z=cf.ground_z,
                name=self.name,
            )
        except InputError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        me = bpy.data.meshes.new(self.name)
        me.from_pydata([tuple(v) for v in mesh.vertices.tolist()], [], [tuple(t) for t in mesh.triangles.tolist()])
        me.update()
        terrain = bpy.data.objects.new(self.name, me)
        context.collection.objects.link(terrain)
        terrain.matrix_world = obj.matrix_world.copy()  # built in the armature's space
        settings = getattr(context.scene, "procanim", None)
        if settings is not None:
            settings.terrain.terrain = terrain
        self.report({"INFO"}, f"Added '{terrain.name}': {self.level.lower()}-high blocks ({height * unit:.2f} m)")
        return {"FINISHED"}


classes = (PROCANIM_OT_source_motion, PROCANIM_OT_add_zigzag)
