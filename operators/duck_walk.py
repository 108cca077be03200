"""procanim.duck_walk — the Le Quack Walker cycle baked onto a bird armature."""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, FloatProperty, IntProperty, StringProperty

from ..procanim_addon.duck import PRESETS, DuckParams, generate_duck_walk
from ..procanim_addon.errors import InputError
from .base import GeneratorMixin, Job
from .bridge import read_rigmap, read_skeleton, resolve_armature

_D = DuckParams()
PRESET_ITEMS = [("CUSTOM", "Custom", "Use the slider values as given")] + [
    (key, label, desc) for key, (label, _values, desc) in PRESETS.items()
]


class PROCANIM_OT_duck_walk(GeneratorMixin, bpy.types.Operator):
    """Bake a procedural duck walk (amplitude, speed, Laban weight and direction) onto the armature"""

    bl_idname = "procanim.duck_walk"
    bl_label = "Generate Duck Walk"
    bl_options = {"REGISTER", "UNDO"}

    armature: StringProperty(
        name="Armature", description="Armature object name (empty: the sidebar's or the active one)"
    )
    frame_start: IntProperty(name="Start Frame", description="First frame of the walk", default=_D.frame_start)
    frame_end: IntProperty(name="End Frame", description="Last frame of the walk", default=_D.frame_end)
    fps: FloatProperty(name="FPS", description="Frames per second the cycle is timed for", default=_D.fps)
    key_interval: IntProperty(name="Key Every", description="A key every N frames", default=_D.key_interval)
    amplitude: FloatProperty(name="Amplitude", description="Stride length, 0–10", default=_D.amplitude)
    speed: FloatProperty(name="Speed", description="Cycle rate, 0–10 (5: one cycle per second)", default=_D.speed)
    weight: FloatProperty(name="Weight", description="Laban weight, 0 light – 10 heavy", default=_D.weight)
    direction: FloatProperty(name="Direction", description="Laban space, 0 direct – 10 indirect", default=_D.direction)
    preset: EnumProperty(
        name="Preset", description="Emotion preset (overrides the four sliders)", items=PRESET_ITEMS, default="CUSTOM"
    )
    gait: EnumProperty(
        name="Gait",
        description="Planted feet, or the article's channels verbatim",
        default="PLANTED",
        items=[("PLANTED", "Planted", "No foot sliding"), ("ARTICLE", "Article", "The article's formulas verbatim")],
    )

    def prepare(self, context) -> Job:
        obj = resolve_armature(self.armature, context)
        values = (self.amplitude, self.speed, self.weight, self.direction)
        if self.preset != "CUSTOM":
            values = PRESETS[self.preset][1]
        params = DuckParams(self.frame_start, self.frame_end, self.fps, self.key_interval, *values, gait=self.gait)
        params.validate()
        skeleton = read_skeleton(obj)
        rigmap = read_rigmap(obj)
        if not rigmap.roles:
            raise InputError(
                f"No bone roles could be found on '{obj.name}'; use Detect Roles or assign them in the Character panel."
            )
        return Job([obj], lambda progress: [generate_duck_walk(skeleton, rigmap, params)])


classes = (PROCANIM_OT_duck_walk,)
