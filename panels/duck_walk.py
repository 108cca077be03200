"""Duck Walk panel: the article's fields and sliders, emotion presets and user presets (Generate
and the figures of the last bake come from :mod:`.generator`)."""

from __future__ import annotations

from ..operators.duck_walk import settings as duck_settings
from ..procanim_addon.duck import PRESETS
from .emotions import draw_emotions, emotion_operator
from .presets import draw_preset_row, preset_classes

SLIDERS = ("amplitude", "speed", "weight", "direction")


PRESET_MENU, PRESET_ADD = preset_classes("duck_walk", "Duck Walk", "duck", duck_settings(ui=True))


EMOTION = emotion_operator(
    "duck_emotion", "duck", {key: values for key, (_label, values, _desc) in PRESETS.items()}, SLIDERS
)


def draw(layout, duck, _context) -> None:
    draw_preset_row(layout, PRESET_MENU, PRESET_ADD)
    draw_emotions(layout, "duck_emotion")
    col = layout.column(align=True)
    for name in ("frame_start", "frame_end", "fps", "key_interval"):
        col.prop(duck, name)
    col = layout.column(align=True)
    for name in SLIDERS:
        col.prop(duck, name, slider=True)
    layout.prop(duck, "gait", expand=True)
    layout.operator("procanim.duck_emotion", text="Reset", icon="LOOP_BACK").preset = "NEUTRAL"


classes = (PRESET_MENU, PRESET_ADD, EMOTION)
