"""Terrain adaptation as a generator: its spec and the call a bake runs."""

from __future__ import annotations

from dataclasses import replace

from ..clip import Clip
from ..metric_table import row
from ..progress import ProgressFn, no_progress
from ..spec import GeneratorSpec
from ..upright import clip_to_armature, clip_to_frame, unit_in_frame
from .adapt import AdaptParams, adapt_to_terrain


def bake_call(skeleton, rigmap, source, reference, terrain, params: AdaptParams, names: dict,
              progress: ProgressFn = no_progress) -> list[Clip]:
    """What ``procanim.adapt_terrain`` computes; ``names``: the source action, terrain and
    reference objects, for the metrics; ``source``: the armature's own channels; ``params.unit_m``:
    metres per armature unit."""
    source = clip_to_frame(source, skeleton)
    params = replace(params, unit_m=unit_in_frame(params.unit_m, skeleton))
    clip = adapt_to_terrain(skeleton, rigmap, source, reference, terrain, params, progress=progress)
    clip.generator = "adapt_terrain"
    clip.metrics.update({**names, "damping": params.damping, "tolerance_m": params.tolerance_m})
    return [clip_to_armature(clip, skeleton)]


SPEC = GeneratorSpec(
    "adapt_terrain", "Terrain", "The armature's action re-fitted to an uneven terrain mesh",
    params=AdaptParams, engine=adapt_to_terrain, call=bake_call,
    metrics=(
        row("collisions", "Collision frames", "", 0, "Frames with a limb inside the terrain (0 is the goal)"),
        row("collisions_leg_L", "… left leg", "", 0, "Frames the left leg is inside the terrain"),
        row("collisions_leg_R", "… right leg", "", 0, "Frames the right leg is inside the terrain"),
        row("collisions_arm_L", "… left arm", "", 0, "Frames the left arm is inside the terrain"),
        row("collisions_arm_R", "… right arm", "", 0, "Frames the right arm is inside the terrain"),
        row("unfixed_frames", "Frames not cleared", "", 0,
            "Frames where a limb still cuts the terrain after the adaptation (the motion cannot step there)"),
        row("bone_length_error_pct", "Bone length change", "%", 5,
            "Largest change of a bone's length (the method keeps lengths; the paper reports 1.7–5.3 %)"),
        row("contact_error_cm_max", "Contact error", "cm", 3,
            "Largest distance between a contact of the source motion and the terrain after adaptation"),
        row("solve_time_s", "Solve time", "s", 2, "Time spent in the descriptor solve"),
    ),
)
