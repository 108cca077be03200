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


GAITS = [
    ("PLANTED", "Planted", "Feet stay where they land (no foot sliding); the master moves by the stance sweep"),
    ("ARTICLE", "Article", "The article's channels verbatim: master speed s·a/q_a every 3 frames (feet slide)"),
]


def duck_walk_properties(ui: bool) -> dict:
    """The duck walk's settings as bpy properties, shared by the operator and the sidebar's settings.

    ``ui=True`` adds the sliders' limits (0–10, fps ≥ 1 …) for the panel; the operator has none, so a
    script passing an out-of-range value gets a clear error instead of a silent clamp.
    """

    def lim(**limits):
        return limits if ui else {}

    return {
        "frame_start": IntProperty(name="Start Frame", description="First frame of the walk", default=_D.frame_start),
        "frame_end": IntProperty(name="End Frame", description="Last frame of the walk", default=_D.frame_end),
        "fps": FloatProperty(
            name="FPS",
            description="Frames per second the cycle is timed for",
            default=_D.fps,
            **lim(min=1.0, soft_max=120.0),
        ),
        "key_interval": IntProperty(
            name="Key Every",
            description="A key every N frames on every control (the article: 3)",
            default=_D.key_interval,
            **lim(min=1, soft_max=12),
        ),
        "amplitude": FloatProperty(
            name="Amplitude",
            description="Stride length (0–10); 0 stands still",
            default=_D.amplitude,
            **lim(min=0.0, max=10.0),
        ),
        "speed": FloatProperty(
            name="Speed",
            description="Cycle rate (0–10): Speed 5 is one gait cycle per second",
            default=_D.speed,
            **lim(min=0.0, max=10.0),
        ),
        "weight": FloatProperty(
            name="Weight",
            description="Laban weight: light (0) bounces, heavy (10) sits low",
            default=_D.weight,
            **lim(min=0.0, max=10.0),
        ),
        "direction": FloatProperty(
            name="Direction",
            description="Laban space: direct (0) walks straight, indirect (10) weaves and turns",
            default=_D.direction,
            **lim(min=0.0, max=10.0),
        ),
        "gait": EnumProperty(name="Gait", description="How the feet meet the ground", items=GAITS, default="PLANTED"),
    }


class PROCANIM_OT_duck_walk(GeneratorMixin, bpy.types.Operator):
    """Bake a procedural duck walk (amplitude, speed, Laban weight and direction) onto the armature"""

    bl_idname = "procanim.duck_walk"
    bl_label = "Generate Duck Walk"
    bl_options = {"REGISTER", "UNDO"}

    __annotations__ = {
        "armature": StringProperty(
            name="Armature", description="Armature object name (empty: the sidebar's or the active one)"
        ),
        **duck_walk_properties(ui=False),
        "preset": EnumProperty(
            name="Preset",
            description="Emotion preset (overrides the four sliders)",
            items=PRESET_ITEMS,
            default="CUSTOM",
        ),
    }

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
