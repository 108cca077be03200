"""Terrain panel: terrain and reference pickers, frame range, source motions, Generate, last metrics;
damping and tolerance under Advanced."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, IntProperty, PointerProperty

from ..operators.adapt_terrain import solver_properties
from ..operators.bake import read_metrics
from ..procanim_addon.terrain.adapt import AdaptParams
from .character import ProcAnimPanel, active_armature

_P = AdaptParams()
GENERATOR = "adapt_terrain"  # operators.adapt_terrain.GENERATOR (panels import no operator module)


def _is_mesh(_self, obj):
    return obj.type == "MESH"


class ProcAnimTerrainSettings(bpy.types.PropertyGroup):
    terrain: PointerProperty(
        name="Terrain", description="Mesh the motion is adapted to", type=bpy.types.Object, poll=_is_mesh
    )
    reference: PointerProperty(
        name="Reference",
        description="Mesh the motion was made on (empty: flat ground at the motion's own lowest foot height)",
        type=bpy.types.Object,
        poll=_is_mesh,
    )
    use_action_range: BoolProperty(
        name="Whole Action", description="Adapt every frame of the action (off: the frames below)", default=True
    )
    frame_start: IntProperty(name="Start Frame", description="First frame to adapt", default=1)
    frame_end: IntProperty(name="End Frame", description="Last frame to adapt", default=120)
    __annotations__.update(solver_properties())  # the same settings as the operator's
    steps: IntProperty(name="Steps", description="Footsteps of the source walk", default=6, min=1, soft_max=40)


_ADVANCED = ("damping", "tolerance", "key_interval", "refuse_infeasible")
_METRICS = (
    ("collisions", "Collision frames"),
    ("collisions_leg_L", "  leg L"),
    ("collisions_leg_R", "  leg R"),
    ("collisions_arm_L", "  arm L"),
    ("collisions_arm_R", "  arm R"),
    ("bone_length_error_pct", "Bone length error %"),
    ("contact_error_cm_max", "Contact error cm"),
    ("solve_time_s", "Solve time s"),
)


class PROCANIM_PT_terrain(ProcAnimPanel, bpy.types.Panel):
    bl_label = "Terrain"
    bl_idname = "PROCANIM_PT_terrain"

    def draw(self, context):
        layout = self.layout
        st = context.scene.procanim.terrain
        obj = active_armature(context)
        action = obj.animation_data.action if obj is not None and obj.animation_data else None
        col = layout.column(align=True)
        col.label(text="Source motion (flat ground):")
        row = col.row(align=True)
        for kind, label in (("WALK", "Walk"), ("JUMP", "Jump"), ("TUMBLE", "Tumble")):
            op = row.operator("procanim.source_motion", text=label)
            op.armature = obj.name if obj else ""
            op.kind = kind
            op.steps = st.steps
        col.prop(st, "steps")
        if action is None:
            layout.label(text="The armature has no action to adapt.", icon="INFO")
        else:
            src = action
            if action.procanim.generator == GENERATOR and action.procanim.previous_action:
                src = bpy.data.actions.get(action.procanim.previous_action) or action
            layout.label(text=f"Adapts: {src.name}", icon="ACTION")
        row = layout.row(align=True)
        row.label(text="Add zigzag:")
        for level, label in (("ANKLE", "Ankle"), ("KNEE", "Knee"), ("WAIST", "Waist")):
            op = row.operator("procanim.add_zigzag", text=label)
            op.armature = obj.name if obj else ""
            op.level = level
        layout.prop(st, "terrain")
        layout.prop(st, "reference")
        layout.prop(st, "use_action_range")
        if not st.use_action_range:
            row = layout.row(align=True)
            row.prop(st, "frame_start", text="Start")
            row.prop(st, "frame_end", text="End")
        gen = layout.operator("procanim.adapt_terrain", text="Generate", icon="PLAY")
        gen.armature = obj.name if obj else ""
        gen.terrain = st.terrain.name if st.terrain else ""
        gen.reference = st.reference.name if st.reference else ""
        if not st.use_action_range:
            gen.frame_start, gen.frame_end = st.frame_start, st.frame_end
        for f in _ADVANCED:
            setattr(gen, f, getattr(st, f))
        draw_terrain_metrics(layout, action)


class PROCANIM_PT_terrain_advanced(ProcAnimPanel, bpy.types.Panel):
    bl_label = "Advanced"
    bl_idname = "PROCANIM_PT_terrain_advanced"
    bl_parent_id = "PROCANIM_PT_terrain"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        st = context.scene.procanim.terrain
        col = self.layout.column(align=True)
        for f in _ADVANCED:
            col.prop(st, f)


def draw_terrain_metrics(layout, action) -> None:
    """The figures of the last terrain adaptation, when it is the armature's action."""
    if action is None or action.procanim.generator != GENERATOR:
        return
    m = read_metrics(action)
    box = layout.box()
    box.label(text=f"Last bake: {action.name}", icon="ACTION")
    col = box.column(align=True)
    for key, label in _METRICS:
        v = m.get(key)
        if v is not None:
            col.label(text=f"{label}: {v:.3g}" if isinstance(v, float) else f"{label}: {v}")


classes = (PROCANIM_PT_terrain, PROCANIM_PT_terrain_advanced)
