"""procanim.adapt_terrain — the armature's action re-fitted to a terrain mesh (Jo & Choi 2019, "A Real-time Motion
Adaptation Method using Spatial Relationships between a Virtual Character and Its Surrounding
Environment").

The source is the action the armature holds now (a ProcAnim bake, keys made by hand, imported
mocap), sampled on integer frames by :func:`.bridge.read_action_clip`. When that action is itself a
terrain adaptation made here, its source (``procanim.previous_action``) is adapted again instead, so
adapting twice never adapts an adaptation. The result is a new action; the source is kept (fake user).
The panel: terrain and reference pickers, the zigzag of the paper, the action it adapts and its frame
range; solver settings under Advanced.
"""

from __future__ import annotations

import dataclasses
import math

import bpy
import numpy as np
from bpy.props import BoolProperty

from ..procanim_addon.errors import InputError
from ..procanim_addon.jobs import EngineCall
from ..procanim_addon.terrain.adapt import AdaptParams
from ..procanim_addon.terrain.mesh import TerrainMesh
from ..procanim_addon.terrain.spec import SPEC
from .bake import animated_channels, pose_channels, rest_channels, set_pose_channels
from .bridge import read_action_clip, read_mesh_triangles, read_rig, read_skeleton, require_uniform_scale
from .compat import action_fcurves, assign_action
from .control_rig import is_control_rig, read_deform_clip
from .generator import Generator, Job, SubPanel
from .limits import frame, number
from .objects import ARMATURE, ObjectArgument, active_armature, argument_given, kept_read, last_bake

_OBJECT_CHANNELS = {
    "location",
    "rotation_euler",
    "rotation_quaternion",
    "rotation_axis_angle",
    "scale",
    "delta_location",
}


def read_source_clip(obj, action, skeleton, frame_start: int, frame_end: int, evaluated: bool = False):
    """``action`` sampled into a Clip on ``obj``. If it is not the active action it is made active
    only while it is read, and the active action (and its slot) are put back whatever happens.

    ``evaluated``: the deform pose Blender evaluates is read on any rig (what the action, NLA strips
    and constraints make of it), not only on a control rig; ``action`` may then be None (no active
    action while it is read: the NLA alone)."""
    ad = obj.animation_data
    current = ad.action
    read = read_action_clip
    if evaluated or is_control_rig(obj):  # the deform bones follow controls: read what Blender evaluates
        lo, hi = action.frame_range if action is not None else (frame_start, frame_end)
        if frame_end <= frame_start or frame_start < lo - 1e-6 or frame_end > hi + 1e-6:
            raise InputError(
                f"Frames {frame_start}–{frame_end} are outside the action '{action.name}' ({lo:g}–{hi:g})."
            )

        def read(obj, skeleton, frame_start, frame_end):  # Blender's matrices: the armature-space skeleton
            return read_deform_clip(obj, read_skeleton(obj, upright=False), np.arange(frame_start, frame_end + 1))

    if action == current:
        return read(obj, skeleton, frame_start, frame_end)
    slot = getattr(ad, "action_slot", None)  # Blender 4.4+ (None before)
    # Channels only the current action animates would keep its last evaluated values while the
    # source is read (a DEFORM adaptation's ORG- bones under a source keyed on the controls): they are
    # read at rest, and every channel either action animates is put back as it was afterwards.
    current_channels = animated_channels(current, obj) if current is not None else set()
    saved: dict = {}
    try:
        if action is None:
            ad.action = None
        else:
            assign_action(obj, action)
        source_channels = animated_channels(action, obj) if action is not None else set()
        saved = pose_channels(obj, current_channels | source_channels)
        rest_channels(obj, current_channels - source_channels)
        return read(obj, skeleton, frame_start, frame_end)
    finally:
        ad.action = current
        if slot is not None:
            ad.action_slot = slot
        set_pose_channels(obj, saved)


TERRAIN = ObjectArgument("terrain", "Terrain", "Mesh the motion is adapted to", "MESH", "terrain")
REFERENCE = ObjectArgument(
    "reference",
    "Reference",
    "Mesh the motion was made on (empty: flat ground at the motion's own lowest foot height)",
    "MESH",
    "reference",
    optional=True,
)
OBJECTS = (ARMATURE, TERRAIN, REFERENCE)


def frame_range(args, action) -> tuple[int, int, str]:
    """The frames to adapt and a note for the user ('' when there is nothing to say).

    Not given: the action's own range, rounded inward so that it is always inside (an action
    imported at 120 fps into a 24 fps scene can end on a fraction of a frame). Given: clamped to
    the action with a note; refused only when it does not overlap the action at all.
    """
    lo, hi = (float(v) for v in action.frame_range)
    first, last = math.ceil(lo - 1e-6), math.floor(hi + 1e-6)
    start = args.frame_start if argument_given(args, "frame_start") else first
    end = args.frame_end if argument_given(args, "frame_end") else last
    if end <= start:
        raise InputError(f"The end frame ({end}) must come after the start frame ({start}).")
    if end < first or start > last:
        raise InputError(f"Frames {start}–{end} are outside the action '{action.name}' ({lo:g}–{hi:g}).")
    clamped = max(start, first), min(end, last)
    if clamped[1] <= clamped[0]:
        raise InputError(f"The action '{action.name}' has a single frame ({lo:g}–{hi:g}); there is no motion to adapt.")
    note = ""
    if clamped != (start, end):
        note = f"Frames {start}–{end} clamped to the action '{action.name}': {clamped[0]}–{clamped[1]}."
    return clamped[0], clamped[1], note


def _check_source(obj, action) -> None:
    moving = sorted({fc.data_path for fc in action_fcurves(action) if fc.data_path in _OBJECT_CHANNELS})
    if moving:
        raise InputError(
            f"The action '{action.name}' animates the object '{obj.name}' itself ({', '.join(moving)}); "
            "terrain adaptation works on bone motion: move the root motion onto the root or hips bone."
        )


def _skeleton(obj):
    skeleton, rigmap = read_rig(obj)
    bad = skeleton.unsupported_bones()
    if bad:
        raise InputError(
            f"Bones of '{obj.name}' do not inherit rotation, scale or location the default way: "
            f"{', '.join(bad[:6])}{' …' if len(bad) > 6 else ''}. Terrain adaptation needs the default settings."
        )
    return skeleton, rigmap


def _meshes(obj, terrain_obj, reference_obj, context):
    depsgraph = context.evaluated_depsgraph_get()
    terrain = TerrainMesh(*read_mesh_triangles(terrain_obj, obj, depsgraph, "terrain"), name=terrain_obj.name)
    reference = None
    if reference_obj is not None:
        verts, tris = read_mesh_triangles(reference_obj, obj, depsgraph, "reference")
        reference = TerrainMesh(verts, tris, name=reference_obj.name)
    return terrain, reference


ADVANCED = ("damping", "tolerance", "key_interval", "refuse_infeasible")


def source_name(obj) -> str | None:
    """The action a Generate would adapt (the source of a previous adaptation), or None."""
    action = obj.animation_data.action if obj is not None and obj.animation_data else None
    if action is None:
        return None
    if last_bake(obj, SPEC.id) is not None and action.procanim.previous_action:
        action = bpy.data.actions.get(action.procanim.previous_action) or action
    return action.name


def draw_advanced(layout, settings, _context) -> None:
    """The Advanced sub-panel: the solver's settings."""
    col = layout.column(align=True)
    for name in ADVANCED:
        col.prop(settings, name)


class AdaptTerrain(Generator):
    spec = SPEC
    settings_name = "terrain"
    objects = OBJECTS
    subpanels = (SubPanel("PROCANIM_PT_adapt_terrain_advanced", "Advanced", draw_advanced),)

    def source_action(self, obj):
        """The action to adapt: the current one, or — when the current one is this operator's own bake —
        the action it was adapted from. Raises InputError when there is none."""
        ad = obj.animation_data
        action = ad.action if ad else None
        if action is None:
            raise InputError(f"'{obj.name}' has no action to adapt: bake or import a motion onto it first.")
        info = action.procanim
        if info.generator == SPEC.id and info.owner == obj.name:
            previous = bpy.data.actions.get(info.previous_action) if info.previous_action else None
            if previous is None:
                raise InputError(
                    f"'{action.name}' on '{obj.name}' is a terrain adaptation whose source action "
                    f"'{info.previous_action}' no longer exists; assign the motion to adapt to the armature."
                )
            return previous
        return action

    def settings(self, ui: bool) -> dict:
        """The adaptation's settings as bpy properties, shared by the operator and the sidebar (frame
        limits: Blender's frame range; solver limits: ``procanim_addon/limits.py``)."""
        return {
            "frame_start": frame("Start Frame", "First frame to adapt (not given: the action's first frame)", 1, ui),
            "frame_end": frame("End Frame", "Last frame to adapt (not given: the action's last frame)", 250, ui),
            "damping": number(AdaptParams, "damping", ui, "Damping",
                              "d of the damped update: part of the previous step carried into the next (0 ≤ d < 1)"),
            "tolerance": number(AdaptParams, "tolerance_m", ui, "Tolerance",
                                "Key frames are refined until the spline between them is this close to the per-frame "
                                "solve", subtype="DISTANCE", unit="LENGTH"),
            "key_interval": number(AdaptParams, "key_interval", ui, "Key Interval",
                                   "Frames between the first key frames of the multi-resolution solve"),
            "refuse_infeasible": BoolProperty(
                name="Refuse Infeasible",
                description="Cancel when the terrain rises more than the motion can step; off: adapt anyway and "
                "report the collisions",
                default=AdaptParams.refuse_infeasible,
            ),
        }

    def prepare(self, args, context) -> Job:
        obj = ARMATURE.resolve(args, context, self.settings_name)
        terrain_obj = TERRAIN.resolve(args, context, self.settings_name)
        reference_obj = REFERENCE.resolve(args, context, self.settings_name)
        if reference_obj is not None and reference_obj == terrain_obj:
            raise InputError(
                f"The reference and the terrain are the same object '{terrain_obj.name}': there is nothing to adapt. "
                "Pick the changed terrain, or leave the reference empty (flat ground)."
            )
        action = self.source_action(obj)
        _check_source(obj, action)
        skeleton, rigmap = kept_read(args, "rig", (obj,), lambda: _skeleton(obj))
        frame_start, frame_end, note = frame_range(args, action)
        unit = require_uniform_scale(obj)
        params = AdaptParams(
            unit_m=unit * context.scene.unit_settings.scale_length,
            damping=args.damping,
            tolerance_m=args.tolerance,
            key_interval=args.key_interval,
            refuse_infeasible=args.refuse_infeasible,
        )
        params.validate()
        # the live preview keeps these reads while the objects (and the armature's action) are unchanged
        terrain, reference = kept_read(args, "meshes", (obj, terrain_obj, reference_obj),
                                       lambda: _meshes(obj, terrain_obj, reference_obj, context))
        source = kept_read(args, f"source {action.name} {frame_start}-{frame_end}", (obj,),
                           lambda: read_source_clip(obj, action, skeleton, frame_start, frame_end))
        source = dataclasses.replace(source, generator="source", metrics=dict(source.metrics))  # the kept one stays

        # names read here, on the main thread: compute runs in a worker that must not touch bpy data
        names = {
            "source_action": action.name,
            "terrain": terrain_obj.name,
            "reference": reference_obj.name if reference_obj is not None else "",
        }
        compute = EngineCall(self.spec.call, (skeleton, rigmap, source, reference, terrain, params, names))
        return Job([obj], compute, extra={"source_action": action.name, "notes": [note] if note else []})

    def warnings(self, _job: Job, clips) -> list[str]:
        """The bake's WARNING lines: frames that still cut the terrain."""
        unfixed = clips[0].metrics.get("unfixed_frames") or []
        if not unfixed:
            return []
        shown = ", ".join(str(f) for f in unfixed[:8]) + (" …" if len(unfixed) > 8 else "")
        return [f"{len(unfixed)} frames still cut the terrain (the motion cannot step there): {shown}"]

    def summary(self, job: Job, clips) -> str:
        m = clips[0].metrics
        limbs = ", ".join(
            f"{k[len('collisions_') :].replace('_', '.')} {v}"
            for k, v in m.items()
            if k.startswith("collisions_") and k not in ("collisions_legs", "collisions_arms")
        )
        return (
            f"Adapted '{job.extra['source_action']}' to '{m.get('terrain', '')}': "
            f"{m.get('collisions', 0)} collision frames ({limbs}), "
            f"bone length error {m.get('bone_length_error_pct', 0.0):.4f} %, "
            f"contact error {m.get('contact_error_cm_max', 0.0):.2f} cm, solve {m.get('solve_time_s', 0.0):.2f} s"
        )

    def panel_settings(self) -> dict:
        return {
            "use_action_range": BoolProperty(
                name="Whole Action", description="Adapt every frame of the action (off: the frames below)", default=True
            ),
        }

    def button_skip(self, settings) -> set[str]:
        """While "Whole Action" is on, the operator takes the action's own range."""
        return {"frame_start", "frame_end"} if settings.use_action_range else set()

    def draw(self, layout, settings, context) -> None:
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


GENERATOR = AdaptTerrain()
