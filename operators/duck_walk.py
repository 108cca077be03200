"""procanim.duck_walk — the Le Quack Walker cycle baked onto a bird armature."""

from __future__ import annotations

from bpy.props import EnumProperty, FloatProperty, IntProperty

from ..procanim_addon import registry
from ..procanim_addon.duck import PRESETS, DuckParams, generate_duck_walk
from .base import Job
from .bridge import read_rig
from .objects import ARMATURE

ENTRY = registry.get("duck_walk")
OBJECTS = (ARMATURE,)

_D = DuckParams()
PRESET_ITEMS = [("CUSTOM", "Custom", "Use the slider values as given")] + [
    (key, label, desc) for key, (label, _values, desc) in PRESETS.items()
]


GAITS = [
    ("PLANTED", "Planted", "Feet stay where they land (no foot sliding); the master moves by the stance sweep"),
    ("ARTICLE", "Article", "The article's channels verbatim: master speed s·a/q_a every 3 frames (feet slide)"),
]


def settings(ui: bool) -> dict:
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


def operator_settings() -> dict:
    """Arguments scripts have and the sidebar does not (it sets the sliders with emotion buttons)."""
    return {
        "preset": EnumProperty(
            name="Preset",
            description="Emotion preset (overrides the four sliders)",
            items=PRESET_ITEMS,
            default="CUSTOM",
        ),
    }


def prepare(args, context) -> Job:
    obj = ARMATURE.resolve(args, context, ENTRY.settings)
    values = (args.amplitude, args.speed, args.weight, args.direction)
    preset = getattr(args, "preset", "CUSTOM")
    if preset != "CUSTOM":
        values = PRESETS[preset][1]
    params = DuckParams(args.frame_start, args.frame_end, args.fps, args.key_interval, *values, gait=args.gait)
    params.validate()
    skeleton, rigmap = read_rig(obj)
    return Job([obj], lambda progress: [generate_duck_walk(skeleton, rigmap, params, progress=progress)])
