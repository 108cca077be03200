"""Path Walk panel: path (curve) and ground (mesh) pickers, timing and arm swing, user presets;
personality coefficients under Advanced (Generate and figures: :mod:`.generator`)."""

from __future__ import annotations

import bpy

from ..operators.path_walk import settings as walk_settings
from ..procanim_addon.walk.style import EMOTIONS
from .character import ProcAnimPanel
from .emotions import draw_emotions, emotion_operator
from .presets import draw_preset_row, preset_classes

STYLE_SLIDERS = ("style_amplitude", "style_weight", "style_direction")
STYLE = emotion_operator("path_walk_style", "path_walk", EMOTIONS, STYLE_SLIDERS)
ADVANCED = ("armpit_angle", "elbow_angle", "corner_radius", "clearance", "stand_time")


# presets hold the walk's settings, not the picked objects nor the start frame
PRESET_MENU, PRESET_ADD = preset_classes(
    "path_walk", "Path Walk", "path_walk", [f for f in walk_settings(ui=True) if f != "frame_start"]
)


def draw(layout, walk, context) -> None:
    draw_preset_row(layout, PRESET_MENU, PRESET_ADD)
    col = layout.column(align=True)
    col.prop(context.scene.procanim, "armature")
    col.prop(walk, "path", icon="CURVE_DATA")
    col.prop(walk, "ground", icon="MESH_DATA")
    col = layout.column(align=True)
    for name in ("frame_start", "cadence", "speed", "stride"):
        col.prop(walk, name)
    col.prop(walk, "double_support", slider=True)
    col = layout.column(align=True)
    col.prop(walk, "arm_swing_forward")
    col.prop(walk, "arm_swing_back")
    box = layout.box()
    box.label(text="Style (the duck article's sliders)")
    draw_emotions(box, "path_walk_style")
    col = box.column(align=True)
    for name in STYLE_SLIDERS:
        col.prop(walk, name, slider=True)
    layout.prop(walk, "root_motion", expand=True)


class PROCANIM_PT_path_walk_advanced(ProcAnimPanel, bpy.types.Panel):
    bl_label = "Advanced"
    bl_idname = "PROCANIM_PT_path_walk_advanced"
    bl_parent_id = "PROCANIM_PT_path_walk"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        walk = context.scene.procanim.path_walk
        layout.label(text="Personality δ (added to force coefficients)")
        for name in ("delta_x", "delta_y", "delta_z"):
            layout.prop(walk, name)
        col = layout.column(align=True)
        for name in ADVANCED:
            col.prop(walk, name)


class PROCANIM_PT_path_walk_crowd(ProcAnimPanel, bpy.types.Panel):
    """Many characters at once: each selected armature walks the selected curve nearest to it with
    the settings above, in one bake (``procanim.crowd_walk``)."""

    bl_label = "Crowd"
    bl_idname = "PROCANIM_PT_path_walk_crowd"
    bl_parent_id = "PROCANIM_PT_path_walk"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        from ..operators import path_walk as op_module
        from .generator import fill_arguments

        layout = self.layout
        walk = context.scene.procanim.path_walk
        selected = context.selected_objects
        armatures = sum(o.type == "ARMATURE" for o in selected)
        curves = sum(o.type == "CURVE" for o in selected)
        layout.label(text=f"Selected: {armatures} armatures, {curves} curves")
        row = layout.row()
        row.enabled = armatures > 0 and curves >= armatures
        op = row.operator("procanim.crowd_walk", text="Walk Selected", icon="COMMUNITY")
        fill_arguments(op, op_module, None, walk, leave=("armature", "path"))  # the crowd's own pairs
        if armatures and curves < armatures:
            layout.label(text="Select one curve per armature", icon="INFO")


classes = (PRESET_MENU, PRESET_ADD, STYLE, PROCANIM_PT_path_walk_advanced, PROCANIM_PT_path_walk_crowd)
