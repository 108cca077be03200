"""procanim.duck_walk — the Le Quack Walker cycle baked onto a bird armature."""

from __future__ import annotations

from bpy.props import EnumProperty

from ..procanim_addon import jobs, registry
from ..procanim_addon.duck import PRESETS, DuckParams
from .base import Job
from .bridge import read_rig
from .limits import number
from .objects import ARMATURE

ENTRY = registry.get("duck_walk")
OBJECTS = (ARMATURE,)

PRESET_ITEMS = [("CUSTOM", "Custom", "Use the slider values as given")] + [
    (key, label, desc) for key, (label, _values, desc) in PRESETS.items()
]


GAITS = [
    ("PLANTED", "Planted", "Feet stay where they land (no foot sliding); the master moves by the stance sweep"),
    ("ARTICLE", "Article", "The article's channels verbatim: master speed s·a/q_a every 3 frames (feet slide)"),
]


def settings(ui: bool) -> dict:
    """The duck walk's settings as bpy properties, shared by the operator and the sidebar's settings
    (limits: ``procanim_addon/limits.py``; see :func:`.limits.number`)."""
    return {
        "frame_start": number(DuckParams, "frame_start", ui, "Start Frame", "First frame of the walk"),
        "frame_end": number(DuckParams, "frame_end", ui, "End Frame", "Last frame of the walk"),
        "fps": number(DuckParams, "fps", ui, "FPS", "Frames per second the cycle is timed for"),
        "key_interval": number(
            DuckParams, "key_interval", ui, "Key Every", "A key every N frames on every control (the article: 3)"
        ),
        "amplitude": number(DuckParams, "amplitude", ui, "Amplitude", "Stride length (0–10); 0 stands still"),
        "speed": number(DuckParams, "speed", ui, "Speed", "Cycle rate (0–10): Speed 5 is one gait cycle per second"),
        "weight": number(DuckParams, "weight", ui, "Weight", "Laban weight: light (0) bounces, heavy (10) sits low"),
        "direction": number(
            DuckParams, "direction", ui, "Direction", "Laban space: direct (0) walks straight, indirect (10) weaves"
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
    return Job([obj], jobs.EngineCall(jobs.duck_walk, (skeleton, rigmap, params)))
