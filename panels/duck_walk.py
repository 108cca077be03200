"""Duck Walk panel: the article's fields and sliders, emotion presets, Generate, last metrics."""

from __future__ import annotations

import bpy
from bl_operators.presets import AddPresetBase

from ..operators.bake import read_metrics
from ..procanim_addon.duck import PRESETS
from .character import ProcAnimPanel, active_armature

PRESET_SUBDIR = "procanim/duck_walk"
_FIELDS = ("frame_start", "frame_end", "fps", "key_interval", "amplitude", "speed", "weight", "direction", "gait")


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
    preset_values = [f"bpy.context.scene.procanim.duck.{f}" for f in _FIELDS]
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
        duck.amplitude, duck.speed, duck.weight, duck.direction = PRESETS[self.preset][1]
        return {"FINISHED"}


class PROCANIM_PT_duck_walk(ProcAnimPanel, bpy.types.Panel):
    bl_label = "Duck Walk"
    bl_idname = "PROCANIM_PT_duck_walk"

    def draw(self, context):
        layout = self.layout
        duck = context.scene.procanim.duck
        row = layout.row(align=True)
        row.menu("PROCANIM_MT_duck_presets", text=PROCANIM_MT_duck_presets.bl_label)
        row.operator("procanim.duck_preset_add", text="", icon="ADD")
        row.operator("procanim.duck_preset_add", text="", icon="REMOVE").remove_active = True
        grid = layout.grid_flow(columns=2, align=True)
        for key, (label, _v, _d) in PRESETS.items():
            grid.operator("procanim.duck_emotion", text=label).preset = key
        col = layout.column(align=True)
        col.prop(duck, "frame_start")
        col.prop(duck, "frame_end")
        col.prop(duck, "fps")
        col.prop(duck, "key_interval")
        col = layout.column(align=True)
        for f in ("amplitude", "speed", "weight", "direction"):
            col.prop(duck, f, slider=True)
        layout.prop(duck, "gait", expand=True)
        row = layout.row(align=True)
        row.operator("procanim.duck_emotion", text="Reset", icon="LOOP_BACK").preset = "NEUTRAL"
        obj = active_armature(context)
        gen = row.operator("procanim.duck_walk", text="Generate", icon="PLAY")
        gen.armature = obj.name if obj else ""
        for f in _FIELDS:
            setattr(gen, f, getattr(duck, f))
        draw_metrics(layout, obj, "duck_walk")


def draw_metrics(layout, obj, generator: str) -> None:
    """The figures of the armature's last bake of ``generator`` (if it is the active action)."""
    action = obj.animation_data.action if obj is not None and obj.animation_data else None
    if action is None or action.procanim.generator != generator:
        return
    m = read_metrics(action)
    box = layout.box()
    box.label(text=f"Last bake: {action.name}", icon="ACTION")
    col = box.column(align=True)
    for key in (
        "keys",
        "stride_m",
        "speed_m_s",
        "skate_mean_cm_s",
        "skate_p95_cm_s",
        "penetration_max_cm",
        "reach_clamped_frames",
        "generate_ms",
    ):
        if key in m and m[key] is not None:
            v = m[key]
            col.label(
                text=f"{key.replace('_', ' ')}: {v:.3g}" if isinstance(v, float) else f"{key.replace('_', ' ')}: {v}"
            )


classes = (PROCANIM_MT_duck_presets, PROCANIM_OT_duck_preset_add, PROCANIM_OT_duck_emotion, PROCANIM_PT_duck_walk)
