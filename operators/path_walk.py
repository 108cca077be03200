"""procanim.path_walk — a humanoid walks along a curve object, over an optional ground mesh (M3).

The operator only reads the scene (armature → Skeleton/RigMap, curve → polyline, mesh → triangles,
all in the armature's space) and calls the engine (``procanim_addon.walk.generate_path_walk``); the
Clip is baked by the shared baker. With root motion ``OBJECT`` the engine's per-frame object delta
(armature space) is composed with the object's current local transform so the object walks the path.
"""

from __future__ import annotations

import numpy as np
from bpy.props import EnumProperty, FloatProperty, FloatVectorProperty, IntProperty

from ..procanim_addon import registry
from ..procanim_addon import transforms as tf
from ..procanim_addon.errors import InputError
from ..procanim_addon.ground import FlatGround, Ground
from ..procanim_addon.rig_roles import LEG_ROLES
from ..procanim_addon.terrain.mesh import TerrainMesh
from ..procanim_addon.walk import PathWalkParams, generate_path_walk
from .base import Job
from .bridge import obj_fps, read_curve_polyline, read_mesh_triangles, read_rigmap, read_skeleton, require_uniform_scale
from .objects import ARMATURE, ObjectArgument

ENTRY = registry.get("path_walk")

_P = PathWalkParams()
ROOT_MOTION = [
    ("BONE", "Root Bone", "Move the rig's root bone (the hips when it has none); the object stays put"),
    ("OBJECT", "Object", "Move and turn the armature object; the bones walk in place around it"),
]


def settings(ui: bool) -> dict:
    """The path walk's settings as bpy properties, shared by the operator and the sidebar's settings.

    ``ui=True`` gives the sidebar hard limits; the operator gets the same range as soft limits only, so
    a script passing an out-of-range value gets the engine's message instead of a silent clamp.
    """

    def lim(lo, hi, **extra):
        return {"min": lo, "max": hi, **extra} if ui else {"soft_min": lo, "soft_max": hi}

    return {
        "frame_start": IntProperty(name="Start Frame", description="First frame of the walk", default=_P.frame_start),
        "cadence": FloatProperty(
            name="Cadence",
            description="Steps per minute (the paper: 100; normal walking 100–120)",
            default=_P.cadence_spm,
            **lim(20.0, 240.0, soft_min=60.0, soft_max=140.0),
        ),
        "speed": FloatProperty(
            name="Speed",
            description="Walking speed in m/s; when above 0 it times each step instead of the cadence",
            default=_P.speed_mps,
            unit="VELOCITY",
            **lim(0.0, 3.0),
        ),
        "stride": FloatProperty(
            name="Stride",
            description="Step length (heel strike to the other heel strike); 0 = from the leg length",
            default=_P.stride_m,
            unit="LENGTH",
            **lim(0.0, 2.0),
        ),
        "double_support": FloatProperty(
            name="Double Support",
            description="Time both feet are down, as a fraction of a step (the paper: 0.25)",
            default=_P.double_support,
            **lim(0.05, 0.45),
        ),
        "arm_swing_forward": FloatProperty(
            name="Arm Swing Forward",
            description="Upper-arm swing ahead of the body, degrees (ordinary walking: 30)",
            default=_P.arm_swing_fwd_deg,
            **lim(0.0, 90.0),
        ),
        "arm_swing_back": FloatProperty(
            name="Arm Swing Back",
            description="Upper-arm swing behind the body, degrees (ordinary walking: 9)",
            default=_P.arm_swing_back_deg,
            **lim(0.0, 90.0),
        ),
        "armpit_angle": FloatProperty(
            name="Armpit Angle",
            description="Arms lifted away from the body (armpit angle ρ), degrees",
            default=_P.armpit_deg,
            **lim(-10.0, 80.0),
        ),
        "elbow_angle": FloatProperty(
            name="Elbow Angle",
            description="Mean elbow bend β_c while the arm swings, degrees",
            default=_P.elbow_deg,
            **lim(0.0, 120.0),
        ),
        "delta_x": FloatVectorProperty(
            name="δ Progression",
            description="Personality offsets δ_x1..3 added to the progression force coefficients",
            size=3,
            default=_P.delta_x,
            **lim(-1.0, 1.0),
        ),
        "delta_y": FloatVectorProperty(
            name="δ Vertical",
            description="Personality offsets δ_y1..3 added to the vertical force coefficients (1.3, f_v, 0.4)",
            size=3,
            default=_P.delta_y,
            **lim(-1.0, 1.0),
        ),
        "delta_z": FloatVectorProperty(
            name="δ Lateral",
            description="Personality offsets δ_z1..3 added to the lateral force coefficients (0.07, −0.03, −0.03)",
            size=3,
            default=_P.delta_z,
            **lim(-1.0, 1.0),
        ),
        "root_motion": EnumProperty(
            name="Root Motion",
            description="What carries the character along the path",
            items=ROOT_MOTION,
            default="BONE",
        ),
        "corner_radius": FloatProperty(
            name="Corner Radius",
            description="How much sharp corners of the path are rounded",
            default=_P.corner_radius_m,
            unit="LENGTH",
            **lim(0.0, 5.0),
        ),
        "clearance": FloatProperty(
            name="Clearance",
            description="Lowest gap between the swinging sole and the ground or a stair nosing",
            default=_P.clearance_m,
            unit="LENGTH",
            **lim(0.0, 0.5),
        ),
        "stand_time": FloatProperty(
            name="Stand Time",
            description="Seconds standing still before the first step and after the last",
            default=_P.stand_s,
            **lim(0.0, 10.0),
        ),
    }


PATH = ObjectArgument("path", "Path", "Curve object to walk along (drag a curve here)", "CURVE", "walking path")
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
    ).validate()


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


def _object_motion(clip, basis: np.ndarray, unit_scale: float) -> None:
    """Root motion OBJECT: the engine's object delta D is in armature space; the object's new
    local transform is ``basis @ D``."""
    R = tf.quat_to_mat3(clip.object_rotations)
    clip.object_locations = clip.object_locations @ basis[:3, :3].T + basis[:3, 3]
    rot0 = basis[:3, :3] / unit_scale
    clip.object_rotations = tf.mat3_to_quat(np.einsum("ij,fjk->fik", rot0, R))


def prepare(args, context) -> Job:
    obj = ARMATURE.resolve(args, context, ENTRY.settings)
    curve = PATH.resolve(args, context, ENTRY.settings)
    ground_obj = GROUND.resolve(args, context, ENTRY.settings)
    params = _params(args, obj_fps(obj))
    if params.root_motion == "OBJECT":
        require_uniform_scale(obj, "use Root Motion 'Root Bone'")
    points = read_curve_polyline(curve, obj)
    ground = _ground(ground_obj, obj, points, context.evaluated_depsgraph_get())
    skeleton = read_skeleton(obj)
    rigmap = read_rigmap(obj)
    missing = [r for r in LEG_ROLES if not skeleton.has(rigmap.get(r) or "")]
    if missing:
        raise InputError(
            f"'{obj.name}' has no bones for the leg roles {', '.join(missing)}; "
            "use Detect Roles or assign them in the ProcAnim > Character panel."
        )
    basis = np.array(obj.matrix_basis, dtype=float)
    unit_scale = float(np.mean(np.array(obj.matrix_basis.to_scale(), dtype=float)))

    def compute(progress):
        clip = generate_path_walk(skeleton, rigmap, points, ground, params, progress=progress)
        if clip.object_locations is not None and clip.object_rotations is not None:
            _object_motion(clip, basis, unit_scale)
        return [clip]

    return Job([obj], compute, extra={"path": curve.name, "ground": ground_obj.name if ground_obj else ""})


def summary(job: Job, clips) -> str:
    m = clips[0].metrics
    return (
        f"Path walk on '{job.targets[0].name}' along '{job.extra['path']}': {m.get('step_count', 0)} steps, "
        f"skate {m.get('skate_mean_cm_s', 0):.2f} cm/s, pelvis off path {m.get('pelvis_deviation_mean_cm', 0):.1f} cm"
    )
