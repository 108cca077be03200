"""Path Walk panel: armature, path (curve) and ground (mesh) pickers, timing and arm swing,
personality coefficients under Advanced, Generate, and the figures of the last bake."""

from __future__ import annotations

import bpy
from bl_operators.presets import AddPresetBase
from bpy.props import BoolProperty, PointerProperty

from ..operators.bake import read_metrics
from ..operators.path_walk import path_walk_properties
from .character import ProcAnimPanel, active_armature

# operator argument ← settings field (same names)
FIELDS = (
    "frame_start",
    "cadence",
    "speed",
    "stride",
    "double_support",
    "arm_swing_forward",
    "arm_swing_back",
    "armpit_angle",
    "elbow_angle",
    "delta_x",
    "delta_y",
    "delta_z",
    "root_motion",
    "corner_radius",
    "clearance",
    "stand_time",
)

PRESET_SUBDIR = "procanim/path_walk"

METRICS = (
    ("step_count", "Steps", "{:d}"),
    ("cadence_spm", "Cadence (steps/min)", "{:.0f}"),
    ("skate_mean_cm_s", "Foot skate mean (cm/s)", "{:.2f}"),
    ("skate_p95_cm_s", "Foot skate p95 (cm/s)", "{:.2f}"),
    ("penetration_max_cm", "Penetration max (cm)", "{:.2f}"),
    ("pelvis_deviation_mean_cm", "Pelvis off path, mean (cm)", "{:.1f}"),
    ("heading_error_mean_deg", "Heading error, mean (°)", "{:.1f}"),
    ("com_vertical_travel_cm", "COM vertical travel (cm)", "{:.1f}"),
    ("max_joint_jump_deg", "Largest joint step/frame (°)", "{:.1f}"),
    ("generate_ms", "Generate time (ms)", "{:.0f}"),
)


def _is_curve(_self, obj):
    return obj.type == "CURVE"


def _is_mesh(_self, obj):
    return obj.type == "MESH"


class ProcAnimPathWalkSettings(bpy.types.PropertyGroup):
    __annotations__ = {
        "path": PointerProperty(
            name="Path",
            description="Curve object to walk along (drag a curve here)",
            type=bpy.types.Object,
            poll=_is_curve,
        ),
        "ground": PointerProperty(
            name="Ground",
            description="Mesh the path is dropped onto: floor, ramp, stairs (empty: the curve's own height)",
            type=bpy.types.Object,
            poll=_is_mesh,
        ),
        **path_walk_properties(ui=True),
        "show_metrics": BoolProperty(
            name="Show Figures", description="Show the figures of the last bake", default=True
        ),
    }


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
    preset_values = [f"bpy.context.scene.procanim.path_walk.{f}" for f in FIELDS if f != "frame_start"]
    preset_subdir = PRESET_SUBDIR


class PROCANIM_PT_path_walk(ProcAnimPanel, bpy.types.Panel):
    bl_label = "Path Walk"
    bl_idname = "PROCANIM_PT_path_walk"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.procanim
        walk = settings.path_walk
        row = layout.row(align=True)
        row.menu("PROCANIM_MT_path_walk_presets", text=PROCANIM_MT_path_walk_presets.bl_label)
        row.operator("procanim.path_walk_preset_add", text="", icon="ADD")
        row.operator("procanim.path_walk_preset_add", text="", icon="REMOVE").remove_active = True
        col = layout.column(align=True)
        col.prop(settings, "armature")
        col.prop(walk, "path", icon="CURVE_DATA")
        col.prop(walk, "ground", icon="MESH_DATA")
        col = layout.column(align=True)
        col.prop(walk, "frame_start")
        col.prop(walk, "cadence")
        col.prop(walk, "speed")
        col.prop(walk, "stride")
        col.prop(walk, "double_support", slider=True)
        col = layout.column(align=True)
        col.prop(walk, "arm_swing_forward")
        col.prop(walk, "arm_swing_back")
        layout.prop(walk, "root_motion", expand=True)
        obj = active_armature(context)
        row = layout.row()
        row.enabled = obj is not None and walk.path is not None
        gen = row.operator("procanim.path_walk", text="Generate", icon="PLAY")
        gen.armature = obj.name if obj else ""
        gen.path = walk.path.name if walk.path else ""
        gen.ground = walk.ground.name if walk.ground else ""
        for f in FIELDS:
            setattr(gen, f, getattr(walk, f))
        if walk.path is None:
            layout.label(text="Pick a curve object as the path.", icon="INFO")
        draw_walk_metrics(layout, obj)


class PROCANIM_PT_path_walk_advanced(ProcAnimPanel, bpy.types.Panel):
    bl_label = "Advanced"
    bl_idname = "PROCANIM_PT_path_walk_advanced"
    bl_parent_id = "PROCANIM_PT_path_walk"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        walk = context.scene.procanim.path_walk
        layout.label(text="Personality δ (added to force coefficients)")
        for f in ("delta_x", "delta_y", "delta_z"):
            layout.prop(walk, f)
        col = layout.column(align=True)
        col.prop(walk, "armpit_angle")
        col.prop(walk, "elbow_angle")
        col = layout.column(align=True)
        col.prop(walk, "corner_radius")
        col.prop(walk, "clearance")
        col.prop(walk, "stand_time")


def draw_walk_metrics(layout, obj) -> None:
    """The figures of the armature's last path walk bake (if it is the active action)."""
    action = obj.animation_data.action if obj is not None and obj.animation_data else None
    if action is None or action.procanim.generator != "path_walk":
        return
    m = read_metrics(action)
    box = layout.box()
    box.label(text=f"Last bake: {action.name}", icon="ACTION")
    col = box.column(align=True)
    for key, label, fmt in METRICS:
        v = m.get(key)
        if v is None:
            continue
        col.label(text=f"{label}: {fmt.format(int(v) if fmt == '{:d}' else float(v))}")


classes = (
    PROCANIM_MT_path_walk_presets,
    PROCANIM_OT_path_walk_preset_add,
    PROCANIM_PT_path_walk,
    PROCANIM_PT_path_walk_advanced,
)
