"""procanim.duck_walk — the Le Quack Walker cycle baked onto a bird armature: its arguments, its
reading of the scene and its panel (the article's fields and sliders, emotion presets)."""

from __future__ import annotations

from bpy.props import EnumProperty

from ..procanim_addon import duck
from ..procanim_addon.duck import PRESETS, DuckParams
from ..procanim_addon.jobs import EngineCall
from .bridge import read_rig
from .generator import Emotions, Generator, Job
from .layout import draw_emotions
from .limits import number
from .loops import draw_loop, loop_settings, loop_summary
from .objects import ARMATURE

PRESET_ITEMS = [("CUSTOM", "Custom", "Use the slider values as given")] + [
    (key, label, desc) for key, (label, _values, desc) in PRESETS.items()
]
GAITS = [
    ("PLANTED", "Planted", "Feet stay where they land (no foot sliding); the master moves by the stance sweep"),
    ("ARTICLE", "Article", "The article's channels verbatim: master speed s·a/q_a every 3 frames (feet slide)"),
]
SLIDERS = ("amplitude", "speed", "weight", "direction")


class DuckWalk(Generator):
    spec = duck.SPEC
    settings_name = "duck"
    objects = (ARMATURE,)
    emotions = Emotions("duck_emotion", {key: values for key, (_label, values, _desc) in PRESETS.items()}, SLIDERS)

    def settings(self, ui: bool) -> dict:
        """The duck walk's settings (limits: ``procanim_addon/limits.py``; see :func:`.limits.number`)."""
        return {
            "frame_start": number(DuckParams, "frame_start", ui, "Start Frame", "First frame of the walk"),
            "frame_end": number(DuckParams, "frame_end", ui, "End Frame", "Last frame of the walk"),
            "fps": number(DuckParams, "fps", ui, "FPS", "Frames per second the cycle is timed for"),
            "key_interval": number(
                DuckParams, "key_interval", ui, "Key Every", "A key every N frames on every control (the article: 3)"
            ),
            "amplitude": number(DuckParams, "amplitude", ui, "Amplitude", "Stride length (0–10); 0 stands still"),
            "speed": number(DuckParams, "speed", ui, "Speed",
                            "Cycle rate (0–10): Speed 5 is one gait cycle per second"),
            "weight": number(DuckParams, "weight", ui, "Weight",
                             "Laban weight: light (0) bounces, heavy (10) sits low"),
            "direction": number(
                DuckParams, "direction", ui, "Direction", "Laban space: direct (0) walks straight, indirect (10) weaves"
            ),
            "gait": EnumProperty(name="Gait", description="How the feet meet the ground", items=GAITS,
                                 default="PLANTED"),
            **loop_settings(DuckParams, ui),
        }

    def preset_fields(self) -> tuple[str, ...]:
        return tuple(self.settings(ui=True))

    def operator_settings(self) -> dict:
        """Arguments scripts have and the sidebar does not (it sets the sliders with emotion buttons)."""
        return {
            "preset": EnumProperty(
                name="Preset",
                description="Emotion preset (overrides the four sliders)",
                items=PRESET_ITEMS,
                default="CUSTOM",
            ),
        }

    def prepare(self, args, context) -> Job:
        obj = ARMATURE.resolve(args, context, self.settings_name)
        values = (args.amplitude, args.speed, args.weight, args.direction)
        preset = getattr(args, "preset", "CUSTOM")  # an operator argument only
        if preset != "CUSTOM":
            values = PRESETS[preset][1]
        params = DuckParams(args.frame_start, args.frame_end, args.fps, args.key_interval, *values, gait=args.gait,
                            loop=args.loop, loop_cycles=args.loop_cycles)
        params.validate()
        skeleton, rigmap = read_rig(obj)
        return Job([obj], EngineCall(self.spec.call, (skeleton, rigmap, params)))

    def summary(self, job: Job, clips) -> str:
        m = clips[0].metrics
        return loop_summary(job.targets[0].name, m) if m.get("loop_mode", "NONE") != "NONE" else ""

    def draw(self, layout, settings, context) -> None:
        draw_emotions(layout, "duck_emotion")
        col = layout.column(align=True)
        for name in ("frame_start", "frame_end", "fps", "key_interval"):
            row = col.row(align=True)
            row.active = name != "frame_end" or settings.loop == "NONE"  # a loop is whole cycles long
            row.prop(settings, name)
        col = layout.column(align=True)
        for name in SLIDERS:
            col.prop(settings, name, slider=True)
        layout.prop(settings, "gait", expand=True)
        draw_loop(layout, settings)
        layout.operator("procanim.duck_emotion", text="Reset", icon="LOOP_BACK").preset = "NEUTRAL"


GENERATOR = DuckWalk()
