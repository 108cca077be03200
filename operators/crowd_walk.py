"""procanim.crowd_walk — many characters, each walking its own curve, baked in one operator call.

The same walk as ``procanim.path_walk`` (same settings, same engine, same bake, one Clip per
character), for a crowd: the armatures are named in ``armatures`` (comma-separated; empty: the
selected armatures) and their curves in ``paths`` (comma-separated, in the same order; empty: each
armature takes the selected curve whose start is nearest to it, nearest pairs first). One call is
one undo step, reads each armature's rig once, and lets Blender rebuild its dependency graph once
for the whole crowd (calling ``procanim.path_walk`` per character makes Blender rebuild it after
every call, a cost that grows with the scene).

Nothing is written until every character's Clip has been generated and checked (a bad pair cancels
the whole call, with the character named in the message). From the sidebar (the Crowd sub-panel of
the Path Walk panel, with the path walk's settings) it runs as Generate does
(:class:`.base.GeneratorOperator`: the engines in a worker thread, Esc cancels before anything is
written). It has no panel, settings or preview of its own.
"""

from __future__ import annotations

import numpy as np
from bpy.props import StringProperty

from ..procanim_addon import crowd
from ..procanim_addon.errors import InputError
from ..procanim_addon.jobs import EngineCall
from .bridge import resolve_armature, resolve_object
from .generator import Generator, Job, SubPanel, common_settings
from .loops import is_loop
from .path_walk import GENERATOR as PATH_WALK
from .path_walk import GROUND


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _armatures(args, context) -> list:
    names = _names(args.armatures)
    if names:
        objs = [resolve_armature(name, context) for name in names]
    else:
        objs = sorted((o for o in context.selected_objects if o.type == "ARMATURE"), key=lambda o: o.name)
        if not objs:
            raise InputError("Select the armatures that walk (or pass their names in 'armatures').")
    seen = set()
    for obj in objs:
        if obj.name in seen:
            raise InputError(f"'{obj.name}' is named twice in the crowd; each armature walks once.")
        seen.add(obj.name)
    return objs


def curve_start(curve) -> np.ndarray:
    """World position of the first point of the curve's first spline (m); the curve's origin when it
    has no points (the walk itself then refuses it with the bridge's message)."""
    world = np.array(curve.matrix_world, dtype=float)
    splines = curve.data.splines
    if len(splines):
        sp = splines[0]
        pts = sp.bezier_points if sp.type == "BEZIER" else sp.points
        if len(pts):
            return world[:3, :3] @ np.array(pts[0].co[:3], dtype=float) + world[:3, 3]
    return world[:3, 3]


def pair_nearest(starts: np.ndarray, ends: np.ndarray) -> list[int]:
    """For each armature position ``starts[i]`` the index of a curve start ``ends[j]``: the nearest
    pair of all is matched first, then the nearest of what is left (one curve per armature)."""
    d = np.linalg.norm(starts[:, None, :] - ends[None, :, :], axis=2)
    order = np.dstack(np.unravel_index(np.argsort(d, axis=None, kind="stable"), d.shape))[0]
    pick = [-1] * len(starts)
    used = set()
    for i, j in order:
        if pick[i] < 0 and j not in used:
            pick[i] = int(j)
            used.add(int(j))
    return pick


def _paths(args, context, armatures) -> list:
    names = _names(args.paths)
    if names:
        curves = [resolve_object(name, ("CURVE",), "walking path") for name in names]
        if len(curves) != len(armatures):
            raise InputError(f"{len(armatures)} armatures and {len(curves)} paths: name one curve per armature, "
                             "in the same order.")
        return curves
    curves = sorted((o for o in context.selected_objects if o.type == "CURVE"), key=lambda o: o.name)
    if len(curves) < len(armatures):
        raise InputError(f"{len(armatures)} armatures and {len(curves)} curves selected: select one curve per "
                         "armature (or pass their names in 'paths').")
    starts = np.array([np.array(o.matrix_world, dtype=float)[:3, 3] for o in armatures])
    pick = pair_nearest(starts, np.array([curve_start(c) for c in curves]))
    return [curves[j] for j in pick]


class _PairArgs:
    """The crowd's arguments seen as one ``procanim.path_walk`` call's (its armature and path)."""

    def __init__(self, args, armature: str, path: str):
        self._args, self.armature, self.path = args, armature, path

    def __getattr__(self, name: str):
        return getattr(self._args, name)


def draw_crowd(layout, walk, context) -> None:
    """The Crowd sub-panel of the Path Walk panel: what is selected, and the button that walks it
    with the path walk's settings (``walk``)."""
    selected = context.selected_objects
    armatures = sum(o.type == "ARMATURE" for o in selected)
    curves = sum(o.type == "CURVE" for o in selected)
    layout.label(text=f"Selected: {armatures} armatures, {curves} curves")
    row = layout.row()
    row.enabled = armatures > 0 and curves >= armatures
    op = row.operator("procanim.crowd_walk", text="Walk Selected", icon="COMMUNITY")
    PATH_WALK.fill_arguments(op, walk, leave=("armature", "path"))  # the crowd's own pairs
    if armatures and curves < armatures:
        layout.label(text="Select one curve per armature", icon="INFO")


class CrowdWalk(Generator):
    spec = crowd.SPEC
    settings_name = PATH_WALK.settings_name  # the path walk's sidebar settings
    has_panel = False
    operator_label = "Walk Crowd"
    subpanels = (
        SubPanel("PROCANIM_PT_path_walk_crowd", "Crowd", draw_crowd, parent="PROCANIM_PT_path_walk",
                 description="Many characters at once: each selected armature walks the selected curve nearest "
                 "to it with the settings above, in one bake (``procanim.crowd_walk``)."),
    )

    def settings(self, ui: bool) -> dict:
        return PATH_WALK.settings(ui)

    def operator_arguments(self) -> dict:
        """The armatures and their curves (names), the ground, then the path walk's arguments."""
        props = {
            "armatures": StringProperty(name="Armatures", description="Armature names, comma-separated (empty: the "
                                        "selected armatures)"),
            "paths": StringProperty(name="Paths", description="Curve names, comma-separated, one per armature in "
                                    "the same order (empty: each armature takes the nearest selected curve)"),
            GROUND.name: GROUND.string_property(),
        }
        props.update(self.settings(ui=False))
        props.update(common_settings())
        props.update(PATH_WALK.operator_settings())
        return props

    def prepare(self, args, context) -> Job:
        if is_loop(args):  # the path walk's settings include its loop, which has no path to follow
            raise InputError("A crowd walks its paths: set the path walk's Loop to Off for a crowd.")
        armatures = _armatures(args, context)
        curves = _paths(args, context, armatures)
        jobs = []
        for obj, curve in zip(armatures, curves):
            try:
                jobs.append(PATH_WALK.prepare(_PairArgs(args, obj.name, curve.name), context))
            except InputError as err:
                raise InputError(f"{obj.name} on '{curve.name}': {err}") from None
        compute = EngineCall(self.spec.call, ([job.compute for job in jobs],))
        pairs = [f"{obj.name} → {curve.name}" for obj, curve in zip(armatures, curves)]
        return Job([job.targets[0] for job in jobs], compute, extra={"pairs": pairs})

    def summary(self, job: Job, clips) -> str:
        frames = sum(clip.frame_count for clip in clips)
        skate = max(clip.metrics.get("skate_mean_cm_s", 0.0) for clip in clips)
        return (f"Crowd walk: {len(clips)} characters, {frames} character-frames; skate ≤ {skate:.2f} cm/s "
                f"({', '.join(job.extra['pairs'][:4])}{' …' if len(clips) > 4 else ''})")


GENERATOR = CrowdWalk()
