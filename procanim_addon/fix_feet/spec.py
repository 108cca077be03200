"""Fix Feet as a generator: its spec, the call a bake runs and what the preview's ghost marks."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..clip import Clip
from ..ghost import Body, Overlays
from ..ghost import Plant as GhostPlant
from ..progress import ProgressFn, no_progress
from ..spec import GeneratorSpec
from ..upright import clip_to_armature, clip_to_frame, unit_in_frame
from .generate import fix_feet, generate_fix_feet
from .markers import ContactOverrides
from .overlay import HELD, held_contacts, plants_of
from .params import FixFeetParams
from .report import METRICS


def bake_call(skeleton, rigmap, source: Clip, ground, overrides: ContactOverrides | None, params: FixFeetParams,
              names: dict, progress: ProgressFn = no_progress) -> list[Clip]:
    """What ``procanim.fix_feet`` computes: the fixed Clip, with the held footprints
    (``metrics["held_contacts"]``, armature space: what the preview draws) and ``names`` (the source
    action and the ground, read on the main thread) in its metrics. ``source``: the armature's own
    channels; ``params.unit_m``: metres per armature unit."""
    params = replace(params, unit_m=unit_in_frame(params.unit_m, skeleton))
    result = fix_feet(skeleton, rigmap, clip_to_frame(source, skeleton), ground, overrides, params, progress)
    clip = clip_to_armature(result.clip, skeleton)
    clip.metrics.update(names)
    clip.metrics["markers"] = sum(len(m) for m in overrides.markers.values()) if overrides else 0
    clip.metrics[HELD] = _in_armature(held_contacts(result), skeleton.from_armature)
    return [clip]


def _in_armature(rows: list[dict], frame) -> list[dict]:
    """Footprint rows of the engine's frame (``frame``: the matrix from armature space, or None) in
    the armature's space."""
    if frame is None:
        return rows
    back = np.linalg.inv(np.asarray(frame, float))
    return [{**r, **{k: (back[:3, :3] @ np.asarray(r[k], float)).tolist() for k in ("heel", "ball", "tip")}}
            for r in rows]


def held_plants(clip: Clip, body: Body) -> list[GhostPlant] | None:
    """The ghost's plants: the contacts Fix Feet held, where it holds them (world space)."""
    rows = clip.metrics.get(HELD)
    return None if rows is None else plants_of(rows, body.world)


SPEC = GeneratorSpec(
    "fix_feet", "Fix Feet",
    "The armature's motion with its planted feet held still: contacts found, legs re-solved, bone lengths kept",
    params=FixFeetParams, engine=generate_fix_feet, call=bake_call, metrics=METRICS,
    overlays=Overlays(plants=held_plants),
)
