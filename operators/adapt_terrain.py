"""procanim.adapt_terrain — the armature's action re-fitted to a terrain mesh (Jo & Choi 2019, §M4).

The source is the action the armature holds now (a ProcAnim bake, keys made by hand, imported
mocap), sampled on integer frames by :func:`bridge.read_action_clip`. When that action is itself a
terrain adaptation made here, its source (``procanim.previous_action``) is adapted again instead, so
adapting twice never adapts an adaptation. The result is a new action; the source is kept (fake user).
"""

from __future__ import annotations

import bpy
import numpy as np
from bpy.props import BoolProperty, FloatProperty, IntProperty, StringProperty

from ..procanim_addon.errors import InputError
from ..procanim_addon.terrain.adapt import AdaptParams, adapt_to_terrain
from ..procanim_addon.terrain.mesh import TerrainMesh
from .base import GeneratorMixin, Job
from .bridge import read_action_clip, read_mesh_triangles, read_rigmap, read_skeleton, resolve_armature, resolve_object
from .compat import action_fcurves, assign_action

GENERATOR = "adapt_terrain"
_OBJECT_CHANNELS = {
    "location",
    "rotation_euler",
    "rotation_quaternion",
    "rotation_axis_angle",
    "scale",
    "delta_location",
}
_P = AdaptParams()


def source_action(obj):
    """The action to adapt: the current one, or — when the current one is this operator's own bake —
    the action it was adapted from. Raises InputError when there is none."""
    ad = obj.animation_data
    action = ad.action if ad else None
    if action is None:
        raise InputError(f"'{obj.name}' has no action to adapt: bake or import a motion onto it first.")
    info = action.procanim
    if info.generator == GENERATOR and info.owner == obj.name:
        previous = bpy.data.actions.get(info.previous_action) if info.previous_action else None
        if previous is None:
            raise InputError(
                f"'{action.name}' on '{obj.name}' is a terrain adaptation whose source action "
                f"'{info.previous_action}' no longer exists; assign the motion to adapt to the armature."
            )
        return previous
    return action


def read_source_clip(obj, action, skeleton, frame_start: int, frame_end: int):
    """``action`` sampled into a Clip on ``obj``. If it is not the active action it is made active
    only while it is read, and the active action (and its slot) are put back whatever happens."""
    ad = obj.animation_data
    current = ad.action
    if action == current:
        return read_action_clip(obj, skeleton, frame_start, frame_end)
    slot = getattr(ad, "action_slot", None)  # Blender 4.4+ (None before)
    try:
        assign_action(obj, action)
        return read_action_clip(obj, skeleton, frame_start, frame_end)
    finally:
        ad.action = current
        if slot is not None:
            ad.action_slot = slot


def solver_properties() -> dict:
    """The adaptation's solver settings as bpy properties, shared by the operator and the sidebar."""
    return {
        "damping": FloatProperty(
            name="Damping",
            description="d of the damped update: part of the previous step carried into the next (0 ≤ d < 1)",
            default=_P.damping,
            min=0.0,
            max=0.95,
        ),
        "tolerance": FloatProperty(
            name="Tolerance",
            description="Key frames are refined until the spline between them is this close to the per-frame solve",
            default=_P.tolerance_m,
            min=1e-5,
            soft_max=0.05,
            subtype="DISTANCE",
            unit="LENGTH",
        ),
        "key_interval": IntProperty(
            name="Key Interval",
            description="Frames between the first key frames of the multi-resolution solve",
            default=_P.key_interval,
            min=1,
            soft_max=32,
        ),
        "refuse_infeasible": BoolProperty(
            name="Refuse Infeasible",
            description="Cancel when the terrain rises more than the motion can step; off: adapt anyway and "
            "report the collisions",
            default=_P.refuse_infeasible,
        ),
    }


class PROCANIM_OT_adapt_terrain(GeneratorMixin, bpy.types.Operator):
    """Adapt the armature's current action to a terrain mesh, keeping bone lengths and ground contacts"""

    bl_idname = "procanim.adapt_terrain"
    bl_label = "Adapt to Terrain"
    bl_options = {"REGISTER", "UNDO"}

    armature: StringProperty(
        name="Armature", description="Armature object name (empty: the sidebar's or the active one)"
    )
    terrain: StringProperty(name="Terrain", description="Mesh object the motion is adapted to")
    reference: StringProperty(
        name="Reference",
        description="Mesh object the motion was made on (empty: flat ground at the motion's own lowest foot height)",
    )
    frame_start: IntProperty(
        name="Start Frame", description="First frame to adapt (not set: the action's first frame)", default=1
    )
    frame_end: IntProperty(
        name="End Frame", description="Last frame to adapt (not set: the action's last frame)", default=250
    )
    __annotations__.update(solver_properties())  # the same settings as the sidebar's

    def prepare(self, context) -> Job:
        obj = resolve_armature(self.armature, context)
        terrain_obj = resolve_object(self.terrain, ("MESH",), "terrain")
        reference_obj = resolve_object(self.reference, ("MESH",), "reference") if self.reference else None
        if reference_obj is not None and reference_obj == terrain_obj:
            raise InputError(
                f"The reference and the terrain are the same object '{terrain_obj.name}': there is nothing to adapt. "
                "Pick the changed terrain, or leave the reference empty (flat ground)."
            )
        action = source_action(obj)
        moving = sorted({fc.data_path for fc in action_fcurves(action) if fc.data_path in _OBJECT_CHANNELS})
        if moving:
            raise InputError(
                f"The action '{action.name}' animates the object '{obj.name}' itself ({', '.join(moving)}); "
                "terrain adaptation works on bone motion: move the root motion onto the root or hips bone."
            )
        skeleton = read_skeleton(obj)
        bad = skeleton.unsupported_bones()
        if bad:
            raise InputError(
                f"Bones of '{obj.name}' do not inherit rotation, scale or location the default way: "
                f"{', '.join(bad[:6])}{' …' if len(bad) > 6 else ''}. Terrain adaptation needs the default settings."
            )
        rigmap = read_rigmap(obj)
        if not rigmap.roles:
            raise InputError(
                f"No bone roles could be found on '{obj.name}'; use Detect Roles or assign them in the Character panel."
            )
        frame_start, frame_end = self.frame_start, self.frame_end
        lo, hi = action.frame_range
        if not self.properties.is_property_set("frame_start"):
            frame_start = int(round(lo))
        if not self.properties.is_property_set("frame_end"):
            frame_end = int(round(hi))
        if frame_end <= frame_start:
            raise InputError(f"The end frame ({frame_end}) must come after the start frame ({frame_start}).")
        scale = np.abs(np.array(obj.matrix_world.to_scale(), dtype=float))
        if np.ptp(scale) > 1e-4 * scale.max():
            raise InputError(
                f"'{obj.name}' is scaled unevenly ({', '.join(f'{v:.3g}' for v in scale)}); "
                "apply its scale (Ctrl+A ▸ Scale) before adapting."
            )
        params = AdaptParams(
            unit_m=float(scale.mean()) * context.scene.unit_settings.scale_length,
            damping=self.damping,
            tolerance_m=self.tolerance,
            key_interval=self.key_interval,
            refuse_infeasible=self.refuse_infeasible,
        )
        params.validate()
        depsgraph = context.evaluated_depsgraph_get()
        terrain = TerrainMesh(*read_mesh_triangles(terrain_obj, obj, depsgraph, "terrain"), name=terrain_obj.name)
        reference = None
        if reference_obj is not None:
            verts, tris = read_mesh_triangles(reference_obj, obj, depsgraph, "reference")
            reference = TerrainMesh(verts, tris, name=reference_obj.name)
        source = read_source_clip(obj, action, skeleton, frame_start, frame_end)
        source.generator = "source"

        def compute(progress):
            progress(0.0)
            clip = adapt_to_terrain(skeleton, rigmap, source, reference, terrain, params)
            progress(1.0)
            clip.generator = GENERATOR
            clip.metrics.update(
                {
                    "source_action": action.name,
                    "terrain": terrain_obj.name,
                    "reference": reference_obj.name if reference_obj is not None else "",
                    "damping": params.damping,
                    "tolerance_m": params.tolerance_m,
                }
            )
            return [clip]

        return Job([obj], compute, extra={"source_action": action.name})

    def after_bake(self, context, job: Job, clips) -> None:
        m = clips[0].metrics
        limbs = ", ".join(
            f"{k[len('collisions_') :].replace('_', '.')} {v}"
            for k, v in m.items()
            if k.startswith("collisions_") and k not in ("collisions_legs", "collisions_arms")
        )
        self.report(
            {"INFO"},
            f"Adapted '{job.extra['source_action']}' to '{m.get('terrain', '')}': "
            f"{m.get('collisions', 0)} collision frames ({limbs}), "
            f"bone length error {m.get('bone_length_error_pct', 0.0):.4f} %, "
            f"contact error {m.get('contact_error_cm_max', 0.0):.2f} cm, solve {m.get('solve_time_s', 0.0):.2f} s",
        )


classes = (PROCANIM_OT_adapt_terrain,)
