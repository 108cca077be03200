"""Path Walk panel: path (curve) and ground (mesh) pickers, timing and arm swing, user presets;
personality coefficients under Advanced (Generate and figures: :mod:`.generator`)."""

from __future__ import annotations

import bpy
from bl_operators.presets import AddPresetBase

from ..operators.path_walk import settings as walk_settings
from .character import ProcAnimPanel

PRESET_SUBDIR = "procanim/path_walk"
ADVANCED = ("armpit_angle", "elbow_angle", "corner_radius", "clearance", "stand_time")


class PROCANIM_MT_path_walk_presets(bpy.types.Menu):
    """User presets of the path walk (timing, arms, personality), saved like Blender's own presets"""

    bl_label = "Path Walk Presets"
    preset_subdir = PRESET_SUBDIR
    preset_operator = "script.execute_preset"
    draw = bpy.types.Menu.draw_preset


class PROCANIM_OT_path_walk_preset_add(AddPresetBase, bpy.types.Operator):
    """Save the path walk settings (not the picked objects) as a preset, or remove one"""

    bl_idname = "procanim.path_walk_preset_add"
    bl_label = "Add Path Walk Preset"
    preset_menu = "PROCANIM_MT_path_walk_presets"
    # full paths: Blender 4.3 + Python 3.13 evaluates values without the names preset_defines makes
    preset_values = [f"bpy.context.scene.procanim.path_walk.{f}" for f in walk_settings(ui=True) if f != "frame_start"]
    preset_subdir = PRESET_SUBDIR


def draw(layout, walk, context) -> None:
    row = layout.row(align=True)
    row.menu("PROCANIM_MT_path_walk_presets", text=PROCANIM_MT_path_walk_presets.bl_label)
    row.operator("procanim.path_walk_preset_add", text="", icon="ADD")
    row.operator("procanim.path_walk_preset_add", text="", icon="REMOVE").remove_active = True
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
    layout.prop(walk, "root_motion", expand=True)
    layout.prop(walk, "key_target")


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


classes = (PROCANIM_MT_path_walk_presets, PROCANIM_OT_path_walk_preset_add, PROCANIM_PT_path_walk_advanced)
