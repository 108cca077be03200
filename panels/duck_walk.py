"""Duck Walk panel: the article's fields and sliders, emotion presets and user presets (Generate
and the figures of the last bake come from :mod:`.generator`)."""

from __future__ import annotations

import bpy
from bl_operators.presets import AddPresetBase

from ..operators.duck_walk import settings as duck_settings
from ..procanim_addon.duck import PRESETS

PRESET_SUBDIR = "procanim/duck_walk"
SLIDERS = ("amplitude", "speed", "weight", "direction")


class PROCANIM_MT_duck_presets(bpy.types.Menu):
    """User presets of the duck walk, saved like Blender's own presets"""

    bl_label = "Duck Walk Presets"
    preset_subdir = PRESET_SUBDIR
    preset_operator = "script.execute_preset"
    draw = bpy.types.Menu.draw_preset


class PROCANIM_OT_duck_preset_add(AddPresetBase, bpy.types.Operator):
    """Save the duck walk settings as a preset, or remove one"""

    bl_idname = "procanim.duck_preset_add"
    bl_label = "Add Duck Walk Preset"
    preset_menu = "PROCANIM_MT_duck_presets"
    # Full paths, no preset_defines: Blender 4.3 under Python 3.13 exec()s the defines and eval()s the
    # values in scopes that do not share names (NameError), so nothing may rely on a defined name.
    preset_values = [f"bpy.context.scene.procanim.duck.{f}" for f in duck_settings(ui=True)]
    preset_subdir = PRESET_SUBDIR


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
    row = layout.row(align=True)
    row.menu("PROCANIM_MT_duck_presets", text=PROCANIM_MT_duck_presets.bl_label)
    row.operator("procanim.duck_preset_add", text="", icon="ADD")
    row.operator("procanim.duck_preset_add", text="", icon="REMOVE").remove_active = True
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


classes = (PROCANIM_MT_duck_presets, PROCANIM_OT_duck_preset_add, PROCANIM_OT_duck_emotion)
