"""procanim.path_walk — a humanoid walks along a curve object, over an optional ground mesh
(Tsutsuguchi et al., "Human walking animation based on foot reaction force in the three-dimensional
virtual world", J. Visual. Comput. Animat. 2000).

``prepare`` only reads the scene (armature → Skeleton/RigMap, curve → polyline, mesh → triangles,
all in the armature's space) for the engine's call (``procanim_addon/walk/spec.py``); the Clip is
baked by the shared baker. With root motion ``OBJECT`` the engine's per-frame object delta (armature
space) is composed with the object's current local transform so the object walks the path. The
panel: path and ground pickers, timing and arm swing, style emotions, user presets; personality
coefficients under Advanced.
"""

from __future__ import annotations

import numpy as np
from bpy.props import EnumProperty

from ..procanim_addon.errors import InputError
from ..procanim_addon.ground import FlatGround, Ground
from ..procanim_addon.jobs import EngineCall
from ..procanim_addon.key_marks import KeyMarks, contact_marks, walk_ground
from ..procanim_addon.rig_roles import LEG_ROLES
from ..procanim_addon.terrain.mesh import TerrainMesh
from ..procanim_addon.walk import PathWalkParams
from ..procanim_addon.walk.spec import SPEC
from ..procanim_addon.walk.style import EMOTIONS
from .bridge import obj_fps, read_curve_polyline, read_mesh_triangles, read_rigmap, read_skeleton, require_uniform_scale
from .generator import Emotions, Generator, Job, SubPanel
from .layout import EMOTION_ITEMS, draw_emotions
from .limits import number
from .loops import draw_loop, is_loop, loop_settings, loop_summary
from .objects import ARMATURE, ObjectArgument, kept_read

ROOT_MOTION = [
    ("BONE", "Root Bone", "Move the rig's root bone (the hips when it has none); the object stays put"),
    ("OBJECT", "Object", "Move and turn the armature object; the bones walk in place around it"),
]


PATH = ObjectArgument("path", "Path", "Curve object to walk along (drag a curve here; a loop needs none)", "CURVE",
                      "walking path", needed=lambda args: not is_loop(args))
GROUND = ObjectArgument("ground", "Ground", "Mesh the path is dropped onto: floor, ramp, stairs (empty: the "
                        "curve's own height)", "MESH", "ground", optional=True)
OBJECTS = (ARMATURE, PATH, GROUND)


def _params(args, fps: float) -> PathWalkParams:
    return PathWalkParams(
        frame_start=args.frame_start,
        fps=fps,
        cadence_spm=args.cadence,
        speed_mps=args.speed,
        stride_m=args.stride,
        double_support=args.double_support,
        arm_swing_fwd_deg=args.arm_swing_forward,
        arm_swing_back_deg=args.arm_swing_back,
        armpit_deg=args.armpit_angle,
        elbow_deg=args.elbow_angle,
        delta_x=tuple(args.delta_x),
        delta_y=tuple(args.delta_y),
        delta_z=tuple(args.delta_z),
        root_motion=args.root_motion,
        corner_radius_m=args.corner_radius,
        clearance_m=args.clearance,
        stand_s=args.stand_time,
        loop=args.loop,
        loop_cycles=args.loop_cycles,
        **_style(args),
    ).validate()


def _style(args) -> dict:
    """The style sliders, or the emotion preset's values when one is named (it overrides them)."""
    preset = getattr(args, "style", "CUSTOM")
    values = EMOTIONS[preset] if preset != "CUSTOM" else (args.style_amplitude, args.style_weight, args.style_direction)
    return dict(zip(("style_amplitude", "style_weight", "style_direction"), values))


def _ground(ground_obj, obj, points, depsgraph) -> Ground | None:
    """The ground mesh in the armature's space; a level curve without one walks its own plane."""
    if ground_obj is not None:
        verts, tris = read_mesh_triangles(ground_obj, obj, depsgraph, what="ground")
        return TerrainMesh(verts, tris, name=ground_obj.name)
    if np.ptp(points[:, 2]) < 1e-6:
        # A level curve and no ground object: its own height is a plane. Same result as the
        # engine's path-height ground, whose per-query nearest-sample search grows with
        # frames × path samples (procanim_addon/walk/path.py PathHeightGround.height).
        return FlatGround(float(points[0, 2]))
    return None


def _rig(obj):
    skeleton = read_skeleton(obj)
    return skeleton, read_rigmap(obj, skeleton)


STYLE_SLIDERS = ("style_amplitude", "style_weight", "style_direction")
ADVANCED = ("armpit_angle", "elbow_angle", "corner_radius", "clearance", "stand_time")


def draw_advanced(layout, walk, _context) -> None:
    """The Advanced sub-panel: personality coefficients, arm angles, corners, clearance, standing."""
    layout.label(text="Personality δ (added to force coefficients)")
    for name in ("delta_x", "delta_y", "delta_z"):
        layout.prop(walk, name)
    col = layout.column(align=True)
    for name in ADVANCED:
        col.prop(walk, name)


def walked_marks(walked: tuple, clip) -> KeyMarks:
    """The feet's contacts on the ground a walk walked on (a loop: the plane of the rest soles);
    ``walked``: what :meth:`PathWalk.read` keeps of it under ``extra["walked"]``."""
    skeleton, rigmap, points, ground, radius, basis = walked
    ground_walked = walk_ground(points, ground, radius) if points is not None else None
    return contact_marks(skeleton, rigmap, clip, ground_walked, object_basis=basis)


class PathWalk(Generator):
    spec = SPEC
    settings_name = "path_walk"
    objects = OBJECTS
    emotions = Emotions("path_walk_style", EMOTIONS, STYLE_SLIDERS)
    subpanels = (SubPanel("PROCANIM_PT_path_walk_advanced", "Advanced", draw_advanced),)

    def settings(self, ui: bool) -> dict:
        """The path walk's settings as bpy properties, shared by the operator and the sidebar's settings
        (limits: ``procanim_addon/limits.py``; see :func:`.limits.number`)."""
        P = PathWalkParams  # noqa: N806 - the parameter class, as in the engine

        def deg(field, name, description):
            return number(P, field, ui, name, description)

        return {
            "frame_start": number(P, "frame_start", ui, "Start Frame", "First frame of the walk"),
            "cadence": number(P, "cadence_spm", ui, "Cadence",
                              "Steps per minute (the paper: 100; normal walking 100–120)"),
            "speed": number(P, "speed_mps", ui, "Speed", "Walking speed in m/s; when above 0 it times each step "
                            "instead of the cadence", unit="VELOCITY"),
            "stride": number(P, "stride_m", ui, "Stride", "Step length (heel strike to the other heel strike); 0 = "
                             "from the leg length", unit="LENGTH"),
            "double_support": number(P, "double_support", ui, "Double Support",
                                     "Time both feet are down, as a fraction of a step (the paper: 0.25)"),
            "arm_swing_forward": deg("arm_swing_fwd_deg", "Arm Swing Forward",
                                     "Upper-arm swing ahead of the body, degrees (ordinary walking: 30)"),
            "arm_swing_back": deg("arm_swing_back_deg", "Arm Swing Back",
                                  "Upper-arm swing behind the body, degrees (ordinary walking: 9)"),
            "armpit_angle": deg("armpit_deg", "Armpit Angle",
                                "Arms lifted away from the body (armpit angle ρ), degrees"),
            "elbow_angle": deg("elbow_deg", "Elbow Angle", "Mean elbow bend β_c while the arm swings, degrees"),
            "delta_x": number(P, "delta_x", ui, "δ Progression",
                              "Personality offsets δ_x1..3 added to the progression force coefficients"),
            "delta_y": number(P, "delta_y", ui, "δ Vertical", "Personality offsets δ_y1..3 added to the vertical "
                              "force coefficients (1.3, f_v, 0.4)"),
            "delta_z": number(P, "delta_z", ui, "δ Lateral", "Personality offsets δ_z1..3 added to the lateral "
                              "force coefficients (0.07, −0.03, −0.03)"),
            "root_motion": EnumProperty(
                name="Root Motion", description="What carries the character along the path", items=ROOT_MOTION,
                default="BONE",
            ),
            "corner_radius": number(P, "corner_radius_m", ui, "Corner Radius",
                                    "How much sharp corners of the path are rounded", unit="LENGTH"),
            "clearance": number(P, "clearance_m", ui, "Clearance",
                                "Lowest gap between the swinging sole and the ground or a stair nosing",
                                unit="LENGTH"),
            "stand_time": number(P, "stand_s", ui, "Stand Time",
                                 "Seconds standing still before the first step and after the last"),
            "style_amplitude": number(P, "style_amplitude", ui, "Amplitude", "Size of the walk's movements (the duck "
                                      "article's Amplitude; 5 is the plain walk)"),
            "style_weight": number(P, "style_weight", ui, "Weight",
                                   "Laban weight: light (0) bounces, upright, swings its arms; heavy (10) walks low, "
                                   "slow, head down"),
            "style_direction": number(P, "style_direction", ui, "Direction",
                                      "Laban space: direct (0) walks the line, indirect (10) weaves along it"),
            **loop_settings(P, ui),
        }

    def operator_settings(self) -> dict:
        """Arguments scripts have and the sidebar does not (it sets the sliders with emotion buttons)."""
        return {
            "style": EnumProperty(
                name="Style",
                description="Emotion preset of the duck article (overrides the three style sliders)",
                items=[("CUSTOM", "Custom", "Use the style sliders as given")] + EMOTION_ITEMS,
                default="CUSTOM",
            ),
        }

    def prepare(self, args, context) -> Job:
        obj, inputs, extra = self.read(args, context)
        return Job([obj], EngineCall(self.spec.call, inputs), extra=extra)

    def read(self, args, context) -> tuple:
        """(the armature, the inputs of the walk's call — skeleton, rig map, path points, ground,
        settings, the object's matrix_basis and mean scale —, what the summary names): the scene
        as one walk reads it (the crowd reads each of its walkers so)."""
        obj = ARMATURE.resolve(args, context, self.settings_name)
        curve = PATH.resolve(args, context, self.settings_name)
        ground_obj = GROUND.resolve(args, context, self.settings_name)
        params = _params(args, obj_fps(obj))
        if params.root_motion == "OBJECT":
            require_uniform_scale(obj)
        points = ground = None
        if params.loop == "NONE":  # a loop walks a straight line from where the character stands
            points = kept_read(args, "path", (curve, obj), lambda: read_curve_polyline(curve, obj))
            ground = kept_read(args, "ground", (ground_obj, curve, obj),
                               lambda: _ground(ground_obj, obj, points, context.evaluated_depsgraph_get()))
        skeleton, rigmap = kept_read(args, "rig", (obj,), lambda: _rig(obj))
        missing = [r for r in LEG_ROLES if not skeleton.has(rigmap.get(r) or "")]
        if missing:
            raise InputError(
                f"'{obj.name}' has no bones for the leg roles {', '.join(missing)}; "
                "use Detect Roles or assign them in the ProcAnim > Character panel."
            )
        basis = np.array(obj.matrix_basis, dtype=float)
        unit_scale = float(np.mean(np.array(obj.matrix_basis.to_scale(), dtype=float)))
        extra = {"path": curve.name if curve is not None and points is not None else "",
                 "ground": ground_obj.name if ground_obj and ground is not None else "",
                 "walked": (skeleton, rigmap, points, ground, params.corner_radius_m, basis)}
        return obj, (skeleton, rigmap, points, ground, params, basis, unit_scale), extra

    def key_marks(self, job: Job, index: int, clip) -> KeyMarks:
        return walked_marks(job.extra["walked"], clip)

    def summary(self, job: Job, clips) -> str:
        m = clips[0].metrics
        if m.get("loop_mode", "NONE") != "NONE":
            return loop_summary(job.targets[0].name, m)
        return (
            f"Path walk on '{job.targets[0].name}' along '{job.extra['path']}': {m.get('step_count', 0)} steps, "
            f"skate {m.get('skate_mean_cm_s', 0):.2f} cm/s, "
            f"pelvis off path {m.get('pelvis_deviation_mean_cm', 0):.1f} cm"
        )

    def preset_fields(self) -> tuple[str, ...]:
        """The walk's settings, not the picked objects nor the start frame."""
        return tuple(f for f in self.settings(ui=True) if f != "frame_start")

    def draw(self, layout, walk, context) -> None:
        col = layout.column(align=True)
        col.prop(context.scene.procanim, "armature")
        sub = col.column(align=True)
        sub.active = walk.loop == "NONE"  # a loop walks a straight line: no path, no ground
        sub.prop(walk, "path", icon="CURVE_DATA")
        sub.prop(walk, "ground", icon="MESH_DATA")
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
        draw_loop(layout, walk)


GENERATOR = PathWalk()
