"""The path walk as a generator: its spec and the call a bake runs."""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..loop import cycle_of
from ..metric_table import LOOP, PLANTED_FEET, row
from ..progress import ProgressFn, no_progress
from ..spec import GeneratorSpec
from ..upright import clip_to_armature
from .gait import generate_path_walk
from .params import PathWalkParams


def object_motion(clip: Clip, basis: np.ndarray, unit_scale: float) -> None:
    """Root motion OBJECT: the engine's object delta D is in armature space; the object's new
    local transform is ``basis @ D`` (``basis``: the armature object's matrix_basis, 4×4;
    ``unit_scale``: its mean scale)."""
    R = tf.quat_to_mat3(clip.object_rotations)
    clip.object_locations = clip.object_locations @ basis[:3, :3].T + basis[:3, 3]
    rot0 = basis[:3, :3] / unit_scale
    clip.object_rotations = tf.mat3_to_quat(np.einsum("ij,fjk->fik", rot0, R))
    loop = cycle_of(clip)
    if loop is not None and loop.travel_role == "object":  # a loop's per-loop offset, in the object's channels
        offset = basis[:3, :3] @ np.asarray(loop.travel_offset)
        clip.metrics.update(dict(zip(("loop_offset_x_m", "loop_offset_y_m", "loop_offset_z_m"), map(float, offset))))


def bake_call(skeleton, rigmap, points, ground, params: PathWalkParams, basis: np.ndarray, unit_scale: float,
              progress: ProgressFn = no_progress) -> list[Clip]:
    """What ``procanim.path_walk`` computes: the walk, its object channels (root motion OBJECT)
    composed with the object's own transform."""
    clip = clip_to_armature(generate_path_walk(skeleton, rigmap, points, ground, params, progress=progress), skeleton)
    if clip.object_locations is not None and clip.object_rotations is not None:
        object_motion(clip, basis, unit_scale)
    return [clip]


SPEC = GeneratorSpec(
    "path_walk", "Path Walk", "A humanoid walks along a curve over stairs and turns",
    params=PathWalkParams, engine=generate_path_walk, call=bake_call,
    metrics=(
        row("step_count", "Steps", "", 0, "Footsteps along the path"),
        row("cadence_spm", "Cadence", "steps/min", 0, "Steps per minute over the walk"),
        *PLANTED_FEET,
        row("pelvis_deviation_mean_cm", "Pelvis off path", "cm", 1,
            "Mean horizontal distance of the pelvis from the curve (a walker sways a few cm)"),
        row("heading_error_mean_deg", "Heading error", "°", 1,
            "Mean angle between the pelvis' facing and the path's direction"),
        row("com_vertical_travel_cm", "Centre of mass bob", "cm", 1, "Vertical travel of the centre of mass per step"),
        row("max_joint_jump_deg", "Largest joint step", "°/frame", 1,
            "Largest rotation of any bone between two frames: spikes show pops"),
        *LOOP,
    ),
)
