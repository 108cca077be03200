"""Duck Walk panel: the article's fields and sliders, emotion presets and user presets (Generate
and the figures of the last bake come from :mod:`.generator`)."""

from __future__ import annotations

import bpy

from ..operators.duck_walk import settings as duck_settings
from ..procanim_addon.duck import PRESETS
from .presets import draw_preset_row, preset_classes

SLIDERS = ("amplitude", "speed", "weight", "direction")


PRESET_MENU, PRESET_ADD = preset_classes("duck_walk", "Duck Walk", "duck", duck_settings(ui=True))


class PROCANIM_OT_duck_emotion(bpy.types.Operator):
    """Set the four sliders to one of the article's emotion presets"""

    bl_idname = "procanim.duck_emotion"
    bl_label = "Emotion Preset"
    bl_options = {"REGISTER", "UNDO"}

    preset: bpy.props.EnumProperty(
        name="Preset",
        description="Emotion preset from the article's survey",
        items=[(k, label, desc) for k, (label, _v, desc) in PRESETS.items()],
    )

    def execute(self, context):
        duck = context.scene.procanim.duck
        for name, value in zip(SLIDERS, PRESETS[self.preset][1]):
            setattr(duck, name, value)
        return {"FINISHED"}


def draw(layout, duck, _context) -> None:
    draw_preset_row(layout, PRESET_MENU, PRESET_ADD)
    grid = layout.grid_flow(columns=2, align=True)
    for key, (label, _v, _d) in PRESETS.items():
        grid.operator("procanim.duck_emotion", text=label).preset = key
    col = layout.column(align=True)
    for name in ("frame_start", "frame_end", "fps", "key_interval"):
        col.prop(duck, name)
    col = layout.column(align=True)
    for name in SLIDERS:
        col.prop(duck, name, slider=True)
    layout.prop(duck, "gait", expand=True)
    layout.prop(duck, "key_target")
    layout.operator("procanim.duck_emotion", text="Reset", icon="LOOP_BACK").preset = "NEUTRAL"


classes = (PRESET_MENU, PRESET_ADD, PROCANIM_OT_duck_emotion)
