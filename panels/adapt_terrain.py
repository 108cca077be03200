"""Terrain panel: terrain and reference pickers, the zigzag of the paper, the action it adapts and
its frame range; solver settings under Advanced (Generate and figures: :mod:`.generator`)."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from .character import ProcAnimPanel, active_armature
from .generator import last_bake

ADVANCED = ("damping", "tolerance", "key_interval", "refuse_infeasible")


def panel_settings() -> dict:
    return {
        "use_action_range": BoolProperty(
            name="Whole Action", description="Adapt every frame of the action (off: the frames below)", default=True
        ),
    }


def button_skip(settings) -> set:
    """While "Whole Action" is on, the operator takes the action's own range."""
    return {"frame_start", "frame_end"} if settings.use_action_range else set()


def source_name(obj) -> str | None:
    """The action a Generate would adapt (the source of a previous adaptation), or None."""
    action = obj.animation_data.action if obj is not None and obj.animation_data else None
    if action is None:
        return None
    if last_bake(obj, "adapt_terrain") is not None and action.procanim.previous_action:
        action = bpy.data.actions.get(action.procanim.previous_action) or action
    return action.name


def draw(layout, settings, context) -> None:
    obj = active_armature(context)
    source = source_name(obj)
    if source is None:
        layout.label(text="The armature has no action to adapt (see Source Motion).", icon="INFO")
    else:
        layout.label(text=f"Adapts: {source}", icon="ACTION")
    row = layout.row(align=True)
    row.label(text="Add zigzag:")
    for level, label in (("ANKLE", "Ankle"), ("KNEE", "Knee"), ("WAIST", "Waist")):
        op = row.operator("procanim.add_zigzag", text=label)
        op.armature = obj.name if obj else ""
        op.level = level
    layout.prop(settings, "terrain")
    layout.prop(settings, "reference")
    layout.prop(settings, "use_action_range")
    if not settings.use_action_range:
        row = layout.row(align=True)
        row.prop(settings, "frame_start", text="Start")
        row.prop(settings, "frame_end", text="End")


class PROCANIM_PT_adapt_terrain_advanced(ProcAnimPanel, bpy.types.Panel):
    bl_label = "Advanced"
    bl_idname = "PROCANIM_PT_adapt_terrain_advanced"
    bl_parent_id = "PROCANIM_PT_adapt_terrain"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        settings = context.scene.procanim.terrain
        col = self.layout.column(align=True)
        for name in ADVANCED:
            col.prop(settings, name)


classes = (PROCANIM_PT_adapt_terrain_advanced,)
