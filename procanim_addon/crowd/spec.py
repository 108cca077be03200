"""The crowd as a generator (``procanim.crowd_walk``): its spec and the call a bake runs."""

from __future__ import annotations

import numpy as np

from ..clip import Clip
from ..metric_table import SKATE_MEAN, row
from ..progress import ProgressFn, no_progress
from ..spec import GeneratorSpec
from ..upright import clip_to_armature
from ..walk.spec import object_motion
from .engine import CrowdWalker, generate_crowd
from .params import CrowdParams, Walker

# The crowd's figures each walker's Clip carries (its action's metrics), beside its own walk's
SPEC_ID = "crowd_walk"
CROWD_FIGURES = ("walkers", "moved", "meetings", "closest_pelvis_m", "closest_pair", "crowded_ends",
                 "frames_closer_than_radii", "last_frame", "largest_end_gap_m", "repair_rounds")


def walker_figures(w: CrowdWalker, report: dict) -> dict:
    """What one walker's Clip says of the crowd and of itself in it (plain values)."""
    out = {f"crowd_{k}": report[k] for k in CROWD_FIGURES if k in report}
    out.update(crowd_moved_self=bool(w.moved), crowd_stops=len(w.stops), crowd_delay_s=float(w.delay_s),
               crowd_partner=w.partner, crowd_end_gap_m=float(w.end_gap_m), crowd_note=w.note)
    return out


def bake_call(walkers: list[Walker], params: CrowdParams, bases: list, progress: ProgressFn = no_progress
              ) -> list[Clip]:
    """What ``procanim.crowd_walk`` computes: the crowd (:func:`.engine.generate_crowd`), each
    walker's Clip handed back in its armature's terms with its object channels (root motion
    ``OBJECT``) composed with the object's own transform — ``bases``: (matrix_basis (4, 4), mean
    scale) per walker — and the crowd's figures in its metrics."""
    result = generate_crowd(walkers, params, progress)
    clips = []
    for w, r, (basis, unit_scale) in zip(walkers, result.walkers, bases):
        clip = clip_to_armature(r.clip, w.skeleton)
        clip.generator = SPEC_ID  # a re-run replaces its own bake; the panel shows its figures
        if clip.object_locations is not None and clip.object_rotations is not None:
            object_motion(clip, np.asarray(basis, float), unit_scale)
        clip.metrics.update(walker_figures(r, result.report))
        clips.append(clip)
    for hs in result.handshakes:
        for w, clip in zip(result.walkers, clips):
            role = {hs["initiator"]: "initiator", hs["partner"]: "partner"}.get(w.name)
            if role is not None:
                clip.metrics.update({f"greet_{k}": v for k, v in hs.items()
                                     if k.startswith("both_") and isinstance(v, float)})
                # the handshake's phase on each frame from its first (N, D, A, S, R …: docs/handshake.md)
                clip.metrics.update(greet_role=role, greet_frame_start=hs["frame_start"],
                                    greet_phases=str(hs.get(f"phase_{role}", "")))
    return clips


SPEC = GeneratorSpec(
    SPEC_ID, "Walk Crowd",
    "Each selected armature walks the selected curve nearest to it, keeping its distance from the "
    "others, in one bake (a crowd)",
    params=CrowdParams, engine=generate_crowd, call=bake_call,
    metrics=(
        SKATE_MEAN,
        row("crowd_closest_pelvis_m", "Closest pelvises", "m", 3,
            "Closest any two walkers' pelvises come on any frame, horizontally (greeting pairs aside): "
            "at least twice the personal radius, less a few centimetres"),
        row("crowd_moved", "Walkers avoiding", "", 0, "Walkers whose walk the avoidance changed"),
        row("crowd_meetings", "Meetings", "", 0, "Pairs that stopped face to face and shook hands"),
        row("crowd_largest_end_gap_m", "Largest end gap", "m", 2,
            "Farthest any walker's pelvis ends from its curve's end"),
        row("crowd_delay_s", "Start delay", "s", 2, "This walker's start delay (variation)"),
        row("greet_both_max_cm", "Grip error", "cm", 3,
            "Largest distance between the two grips in the shake phase of this walker's handshake"),
    ),
)
