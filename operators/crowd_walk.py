"""procanim.crowd_walk — many characters, each walking its own curve, baked in one operator call:
they keep a personal radius from each other and from obstacles, vary, and greet.

The walkers' settings are the path walk's (same arguments, same engine for each walk); the crowd
adds its own (``personal_radius``, ``obstacles``, ``variation``, ``seed``, ``greet``), and the engine
(``procanim_addon/crowd/``: ORCA avoidance after van den Berg et al. 2011, variation, meetings
with the handshake) computes every walker's Clip in one call. The armatures are named in
``armatures`` (comma-separated; empty: the selected armatures) and their curves in ``paths``
(comma-separated, in the same order; empty: each armature takes the selected curve whose start is
nearest to it, nearest pairs first). ``obstacles`` names a collection whose meshes the walkers keep
clear of (their outlines seen from above); ``greet`` makes two walkers whose curves end within 2 m
of each other, facing each other, stop face to face and shake hands with the Handshake panel's
settings (its timings and Accept). With a personal radius of 0 and no obstacles (or nothing to
avoid) and ``variation`` 0, each walker walks as ``procanim.path_walk`` walks it alone, key for key.

One call is one undo step, reads each armature's rig once, and lets Blender rebuild its dependency
graph once for the whole crowd. Nothing is written until every character's Clip has been generated
and checked (a bad pair cancels the whole call, with the character named in the message). The
sidebar: the Walk Crowd panel under Path Walk (the crowd's settings, the preview of the whole
crowd's ghosts, Generate), the walk's settings from the Path Walk panel.
"""

from __future__ import annotations

import bpy
import numpy as np
from bpy.props import BoolProperty, PointerProperty, StringProperty

from ..procanim_addon.crowd import CrowdParams, Walker, footprint
from ..procanim_addon.crowd.spec import SPEC
from ..procanim_addon.errors import InputError
from ..procanim_addon.handshake import HandshakeParams
from ..procanim_addon.jobs import EngineCall
from ..procanim_addon.key_marks import KeyMarks
from ..procanim_addon.upright import world_of_frame
from .bridge import resolve_armature, resolve_object
from .generator import Generator, Job, common_settings
from .limits import number
from .loops import is_loop
from .objects import SettingsArgs
from .path_walk import GENERATOR as PATH_WALK
from .path_walk import GROUND, walked_marks


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


def _name(value) -> str:
    """An argument naming a data-block: its name (the sidebar holds the data-block itself)."""
    return value if isinstance(value, str) else getattr(value, "name", "") or ""


def _obstacle_meshes(args) -> list:
    """The mesh objects of the collection ``obstacles`` names (none when it is empty)."""
    name = _name(args.obstacles).strip()
    if not name:
        return []
    collection = bpy.data.collections.get(name)
    if collection is None:
        raise InputError(f"No collection named '{name}' (obstacles: a collection of meshes the walkers keep clear "
                         "of).")
    meshes = sorted((o for o in collection.all_objects if o.type == "MESH"), key=lambda o: o.name)
    if not meshes:
        raise InputError(f"The obstacles collection '{name}' holds no mesh objects.")
    return meshes


def _footprints(meshes, depsgraph) -> tuple:
    """Each mesh's outline on the floor (world, scene units): the convex hull of its evaluated
    vertices seen from above."""
    out = []
    for obj in meshes:
        evaluated = obj.evaluated_get(depsgraph)
        mesh = evaluated.to_mesh()
        try:
            co = np.empty(len(mesh.vertices) * 3)
            mesh.vertices.foreach_get("co", co)
            world = np.array(evaluated.matrix_world, dtype=float)
        finally:
            evaluated.to_mesh_clear()
        verts = co.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3]
        out.append(footprint(obj.name, verts))
    return tuple(out)


def _handshake(context) -> HandshakeParams:
    """The Handshake panel's settings (timings, Accept) for every meeting of the crowd."""
    hs = getattr(getattr(context.scene, "procanim", None), "handshake", None)
    if hs is None:
        return HandshakeParams()
    return HandshakeParams(
        accept=bool(hs.accept), neutral_frames=hs.neutral_frames, dummy_frames=hs.dummy_frames,
        response_frames=hs.response_frames, approach_frames=hs.approach_frames, shake_frames=hs.shake_frames,
        secondary_shakes=hs.secondary_shakes, secondary_frames=hs.secondary_frames, retreat_frames=hs.retreat_frames,
        hold_frames=hs.hold_frames,
    )


def _crowd_params(args, context, depsgraph) -> CrowdParams:
    return CrowdParams(
        personal_radius_m=args.personal_radius,
        variation=args.variation,
        seed=args.seed,
        greet=bool(args.greet),
        obstacles=_footprints(_obstacle_meshes(args), depsgraph),
        handshake=_handshake(context) if args.greet else HandshakeParams(),
    ).validate()


class _PairArgs:
    """The crowd's arguments seen as one ``procanim.path_walk`` call's (its armature and path)."""

    def __init__(self, args, armature: str, path: str):
        self._args, self.armature, self.path = args, armature, path

    def __getattr__(self, name: str):
        return getattr(self._args, name)


class _Sidebar:
    """The Walk Crowd panel's settings with the Path Walk panel's behind them: what the crowd's
    Generate passes (the crowd's own settings first, the walk's for the rest)."""

    def __init__(self, crowd, walk):
        self._crowd, self._walk = crowd, walk

    def __getattr__(self, name: str):
        if name in ("armatures", "paths"):
            return ""  # the sidebar walks the selection
        if name == "obstacles":
            return _name(self._crowd.obstacles)  # as the button passes it
        if name in self._crowd.bl_rna.properties:
            return getattr(self._crowd, name)
        return getattr(self._walk, name)


def _walk_settings(settings):
    """The Path Walk panel's settings of the scene the crowd's ``settings`` belong to."""
    return getattr(settings.id_data.procanim, PATH_WALK.settings_name)


class CrowdWalk(Generator):
    spec = SPEC
    settings_name = "crowd_walk"
    parent = PATH_WALK.id  # a sub-panel of the Path Walk panel, whose settings the walkers take
    operator_label = "Walk Crowd"

    def settings(self, ui: bool) -> dict:
        """The crowd's own settings (limits: ``procanim_addon/limits.py``, CrowdParams); the walk's
        are the path walk's (:meth:`operator_settings`)."""
        P = CrowdParams  # noqa: N806 - the parameter class, as in the engine
        obstacles = (PointerProperty(name="Obstacles", description="Collection of meshes the walkers keep their "
                                     "personal radius from (their outlines seen from above)", type=bpy.types.Collection)
                     if ui else
                     StringProperty(name="Obstacles", description="Collection of meshes the walkers keep their "
                                    "personal radius from (collection name; empty: none)"))
        return {
            "personal_radius": number(P, "personal_radius_m", ui, "Personal Radius",
                                      "Each walker keeps its pelvis this far from the others' circles: pelvises "
                                      "at least twice apart (0: no avoidance, each walks as if alone)",
                                      unit="LENGTH"),
            "variation": number(P, "variation", ui, "Variation", "How much walkers differ (cadence, stride, style, "
                                "arm swing, start delay; 0: each as the settings say)"),
            "seed": number(P, "seed", ui, "Seed", "Seed of the variation: the same seed, the same crowd"),
            "greet": BoolProperty(name="Greet", description="Walkers whose curves end within 2 m of each other, "
                                  "facing each other, stop face to face and shake hands (the Handshake panel's "
                                  "timings)", default=False),
            "obstacles": obstacles,
        }

    def operator_settings(self) -> dict:
        """The armatures and their curves (names), the ground, then the path walk's arguments."""
        props = {
            "armatures": StringProperty(name="Armatures", description="Armature names, comma-separated (empty: the "
                                        "selected armatures)"),
            "paths": StringProperty(name="Paths", description="Curve names, comma-separated, one per armature in "
                                    "the same order (empty: each armature takes the nearest selected curve)"),
            GROUND.name: GROUND.string_property(),
        }
        props.update(PATH_WALK.settings(ui=False))
        props.update(PATH_WALK.operator_settings())
        return props

    def listed_objects(self, args, context) -> list:
        armatures = _armatures(args, context)
        return [*armatures, *_paths(args, context, armatures), *_obstacle_meshes(args)]

    def scene_values(self, args, context) -> tuple:
        hs = _handshake(context) if args.greet else None
        return () if hs is None else tuple(sorted(vars(hs).items()))

    def prepare(self, args, context) -> Job:
        if is_loop(args):  # the path walk's settings include its loop, which has no path to follow
            raise InputError("A crowd walks its paths: set the path walk's Loop to Off for a crowd.")
        armatures = _armatures(args, context)
        curves = _paths(args, context, armatures)
        params = _crowd_params(args, context, context.evaluated_depsgraph_get())
        walkers, bases, walked = [], [], []
        for obj, curve in zip(armatures, curves):
            try:
                _obj, inputs, extra = PATH_WALK.read(_PairArgs(args, obj.name, curve.name), context)
            except InputError as err:
                raise InputError(f"{obj.name} on '{curve.name}': {err}") from None
            skeleton, rigmap, points, ground, walk, basis, unit_scale = inputs
            walkers.append(Walker(obj.name, skeleton, rigmap, points, ground, walk,
                                  world_of_frame(obj.matrix_world, skeleton)))
            bases.append((basis, unit_scale))
            walked.append(extra["walked"])
        pairs = [f"{obj.name} → {curve.name}" for obj, curve in zip(armatures, curves)]
        return Job(armatures, EngineCall(self.spec.call, (walkers, params, bases)),
                   extra={"pairs": pairs, "walked": walked})

    def key_marks(self, job: Job, index: int, clip) -> KeyMarks:
        """Each walker's contacts, as its own path walk marks them."""
        return walked_marks(job.extra["walked"][index], clip)

    def summary(self, job: Job, clips) -> str:
        m = clips[0].metrics
        frames = sum(clip.frame_count for clip in clips)
        skate = max(clip.metrics.get("skate_mean_cm_s", 0.0) for clip in clips)
        closest = m.get("crowd_closest_pelvis_m", float("inf"))
        near = f"closest pelvises {closest:.2f} m" if np.isfinite(closest) else "no two pelvises near"
        return (f"Crowd walk: {len(clips)} characters, {frames} character-frames; {near}, "
                f"{m.get('crowd_moved', 0)} gave way, {m.get('crowd_meetings', 0)} handshakes; skate ≤ {skate:.2f} "
                f"cm/s ({', '.join(job.extra['pairs'][:4])}{' …' if len(clips) > 4 else ''})")

    def warnings(self, job: Job, clips) -> list[str]:
        """Walkers that could not greet (those with no curve end near theirs in one line), curves
        that start or end too close."""
        notes = [(obj.name, clip.metrics.get("crowd_note", "")) for obj, clip in zip(job.targets, clips)]
        alone = [name for name, note in notes if note.endswith("too far to greet")]
        out = [f"{name}: {note}" for name, note in notes if note and name not in alone]
        if alone:
            out.append(f"{len(alone)} walkers have no curve end within the greeting distance of theirs: "
                       f"{', '.join(alone[:6])}{' …' if len(alone) > 6 else ''}")
        crowded = clips[0].metrics.get("crowd_crowded_ends", "") if clips else ""
        if crowded:
            out.append(f"Curves that start or end closer than twice the personal radius (those walkers stand "
                       f"there closer): {crowded}")
        return out

    # ------------------------------------------------------------------ the sidebar
    def button_arguments(self, settings) -> list[str]:
        """The crowd's settings and where the keys go, then the Path Walk panel's (its ground, not its
        path: the crowd pairs armatures and curves itself)."""
        own = [*self.settings(ui=False), *common_settings()]
        walk = PATH_WALK.button_arguments(_walk_settings(settings))
        return own + [n for n in walk if n not in own and n != "path"]

    def sidebar_args(self, settings, explicit, reads=None) -> SettingsArgs:
        return SettingsArgs(_Sidebar(settings, _walk_settings(settings)), (GROUND,), explicit, reads=reads)

    def fill_arguments(self, op, settings, leave=()) -> None:
        view = self.sidebar_args(settings, ())
        for name in self.button_arguments(settings):
            if name not in leave:
                setattr(op, name, getattr(view, name))

    def draw(self, layout, settings, context) -> None:
        selected = context.selected_objects
        armatures = sum(o.type == "ARMATURE" for o in selected)
        curves = sum(o.type == "CURVE" for o in selected)
        layout.label(text=f"Selected: {armatures} armatures, {curves} curves")
        if armatures and curves < armatures:
            layout.label(text="Select one curve per armature", icon="INFO")
        col = layout.column(align=True)
        col.prop(settings, "personal_radius")
        col.prop(settings, "obstacles", icon="OUTLINER_COLLECTION")
        col = layout.column(align=True)
        col.prop(settings, "variation", slider=True)
        col.prop(settings, "seed")
        layout.prop(settings, "greet")
        layout.label(text="Each walks with the Path Walk settings above", icon="INFO")


GENERATOR = CrowdWalk()
