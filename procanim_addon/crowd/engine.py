"""The crowd's one engine entry: walkers and crowd settings → each walker's Clip and a report.

:func:`generate_crowd` runs, in order:

1. each walker's settings varied (:mod:`.variation`; ``variation`` 0 leaves them as given);
2. meetings (:mod:`.greet`, with ``greet``): pairs, where each stops, their curves led there;
3. each walker's walk alone planned by the path walk (footsteps and their times, no frame yet)
   and read as a route with a schedule (:mod:`.routes`);
4. the crowd's plan (:mod:`.plan`, ORCA): every walker's trace on the floor every Δt;
5. the walks: a walker the plan left alone gets its walk alone, key for key; the others walk their
   traces, cut at their stops and timed by them (:mod:`.retime`);
6. the handshakes of the meetings (:mod:`.greet`), in the same clips;
7. the crowd measured on its clips (:mod:`.measure`): the closest two pelvises come on any frame.

Everything is deterministic: the same walkers and settings give the same keys.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from ..clip import Clip
from ..curves import gaussian_smooth
from ..errors import InputError
from ..progress import ProgressFn, no_progress, part
from ..walk import generate_path_walk
from ..walk.gait import plan_walk
from ..walk.timing import timeline_of
from . import greet
from .grid import near_pairs
from .measure import close_pairs, on_frames, pelvis_world
from .params import CrowdParams, Walker, check_walkers
from .plan import plan_crowd
from .retime import WalkerWalk, legs_of, walk_legs
from .routes import check_upright, route_of, to_armature, to_world
from .variation import vary

# Progress: where each part of the work starts (fractions of the whole crowd)
_P_PLANS, _P_CROWD, _P_WALKS, _P_REPAIR, _P_GREET, _P_MEASURE = 0.0, 0.1, 0.2, 0.8, 0.9, 0.97
REPAIRS = 3  # rounds of planning again where two walks came too close
REPAIR_TOLERANCE_M = 0.04  # … closer than twice the personal radius by more than this
REPAIR_MARGIN_M = 0.1  # each round widens the margin of the walkers planned again by this
FIXED_SMOOTH_S = 0.3  # walked pelvis tracks are smoothed over this (Gaussian σ, s) to be avoided


@dataclass
class CrowdWalker:
    """One walker of the result (what reports and the preview's ghosts show).

    name, clip:  the walker and its Clip (armature space, as the path walk's)
    path:        (M, 2) the path it walked on the floor, world m (its curve when the plan left it alone)
    moved:       the avoidance changed its walk
    stops:       [(first frame, last frame)] where it stands between two legs
    delay_s:     its start delay (variation)
    partner:     the walker it greets, or ""
    spot:        (2,) where it stops to greet (world m), or None
    end_gap_m:   its pelvis at the end from its curve's end, horizontal (m)
    note:        why it does not greet (with ``greet``), or ""
    """

    name: str
    clip: Clip
    path: np.ndarray
    moved: bool = False
    stops: list = field(default_factory=list)
    delay_s: float = 0.0
    partner: str = ""
    spot: np.ndarray | None = None
    end_gap_m: float = 0.0
    note: str = ""


@dataclass
class CrowdResult:
    """``clips``: one per walker, in the walkers' order; ``walkers``: :class:`CrowdWalker` each;
    ``report``: the crowd's figures (plain values) and ``handshakes``: one report per meeting."""

    clips: list[Clip]
    walkers: list[CrowdWalker]
    report: dict
    handshakes: list[dict] = field(default_factory=list)


@dataclass
class _Prepared:
    """A walker ready to walk: its curve (armature space), settings, delay, walk alone (plan and
    its ``replan``), metres per unit."""

    walker: Walker
    points: np.ndarray
    params: object
    delay: float
    plan: object
    replan: object
    scale: float


def generate_crowd(walkers: list[Walker], params: CrowdParams | None = None,
                   progress: ProgressFn = no_progress) -> CrowdResult:
    """Bake the crowd (module docstring). Raises :class:`InputError` naming the walker for input
    the path walk refuses, and for crowd settings out of their limits."""
    p = (params or CrowdParams()).validate()
    scales, fps = check_walkers(walkers)
    for w in walkers:
        check_upright(w.name, np.asarray(w.world, float))
    clock = _Clock()
    progress(0.0)
    varied = [vary(w.params, p.variation, p.seed, i) for i, w in enumerate(walkers)]
    points = [np.asarray(w.points, float) for w in walkers]
    meetings, notes = _meetings(walkers, points, [v[0] for v in varied], p) if p.greet else ([], {})
    for m in meetings:
        for k, who in ((0, m.a), (1, m.b)):
            w = walkers[who]
            led = greet.approach(to_world(w.world, points[who]), m.spots[k], m.facing[k])
            points[who] = to_armature(np.asarray(w.world, float), led)
    prepared = []
    for i, w in enumerate(walkers):
        prepared.append(_prepare(w, points[i], *varied[i], scales[i]))
        progress(_P_CROWD * (i + 1) / len(walkers))
    partners = {}
    for m in meetings:
        partners[m.a], partners[m.b] = m.b, m.a
    clock.lap("prepare")
    traces, routes = _plan(prepared, partners, p, part(progress, _P_CROWD, _P_WALKS))
    clock.lap("plan")
    n = len(prepared)
    results = [_walk_one(x, None if traces is None else traces[i], routes[i], p,
                         part(progress, _P_WALKS + (_P_REPAIR - _P_WALKS) * i / n,
                              _P_WALKS + (_P_REPAIR - _P_WALKS) * (i + 1) / n)) for i, x in enumerate(prepared)]
    clock.lap("walks")
    replanned = [] if traces is None else \
        _repair(results, traces, routes, prepared, partners, p, part(progress, _P_REPAIR, _P_GREET))
    clock.lap("repair")
    handshakes = _greet(results, prepared, meetings, p, fps, part(progress, _P_GREET, _P_MEASURE))
    clock.lap("greet")
    for i, note in notes.items():
        results[i].note = note
    report = _report(results, prepared, routes, meetings, p)
    clock.lap("measure")
    report.update(clock.laps, repair_rounds=len(replanned), replanned=len(set().union(*replanned)))
    progress(1.0)
    return CrowdResult([r.clip for r in results], results, report, handshakes)


class _Clock:
    """CPU time (this thread's) of each stage of a bake, for the report: ``cpu_<stage>_s``."""

    def __init__(self):
        self.laps: dict[str, float] = {}
        self._last = time.thread_time()

    def lap(self, stage: str) -> None:
        now = time.thread_time()
        self.laps[f"cpu_{stage}_s"] = now - self._last
        self._last = now


def _meetings(walkers, points, params: list, p) -> tuple[list, dict]:
    """The meetings of the crowd and, per walker that does not meet, why (``params``: each
    walker's path walk settings)."""
    ends, heads = [], []
    for w, pts in zip(walkers, points):
        world = to_world(np.asarray(w.world, float), pts)[:, :2]
        ends.append(world[-1])
        d = world[-1] - world[-2]
        for k in range(len(world) - 2, 0, -1):
            if np.linalg.norm(d) > 1e-6:
                break
            d = world[-1] - world[k - 1]
        heads.append(d / max(np.linalg.norm(d), 1e-12))
    ends, heads = np.array(ends), np.array(heads)
    names = [w.name for w in walkers]
    pairs, why = greet.pair_walkers(ends, heads, names, p.greet_distance_m, p.handshake.max_facing_deg)
    meetings = []
    for a, b in pairs:
        rest = tuple((walkers[k].skeleton, walkers[k].rigmap) for k in (a, b))
        try:
            stood = tuple((greet.standing(sk, rm, params[k]), rm) for (sk, rm), k in zip(rest, (a, b)))
            settings = greet.handshake_settings(p.handshake, rest, stood)
            gap = greet.meeting_gap(stood[0], stood[1], settings)
        except InputError as err:
            why[a] = f"cannot shake hands with {names[b]}: {err}"
            why[b] = f"cannot shake hands with {names[a]}: {err}"
            continue
        meetings.append(greet.meeting_of(a, b, ends, gap, settings))
    return meetings, why


def _prepare(w: Walker, points, params, delay: float, scale: float) -> _Prepared:
    """The walker's walk alone, planned (footsteps and times): its start ``delay`` s later."""
    params = params.validate()

    def replan(plan):
        tl = timeline_of(plan.tl.T, plan.params.double_support, plan.params.stand_s + delay, plan.params.stand_s)
        return dataclasses.replace(plan, tl=tl)

    hook = replan if delay > 0 else None
    try:
        plan = plan_walk(w.skeleton, w.rigmap, points, w.ground, params)
    except InputError as err:
        raise InputError(f"Walker '{w.name}': {err}") from None
    return _Prepared(w, points, params, delay, hook(plan) if hook else plan, hook, scale)


def _plan(prepared: list[_Prepared], partners: dict, p: CrowdParams, progress: ProgressFn):
    """(traces or None when nothing avoids, routes)."""
    routes = [route_of(x.plan, np.asarray(x.walker.world, float), x.scale, p.personal_radius_m, p.margin_m)
              for x in prepared]
    if p.personal_radius_m <= 0 and not p.obstacles:
        return None, routes
    return plan_crowd(routes, p.obstacles, p, progress, partners), routes


def _walk_one(x: _Prepared, trace, route, p: CrowdParams, progress: ProgressFn) -> CrowdWalker:
    """A walker's clip: its walk alone (no trace, or one the plan left alone), or its trace walked."""
    w = x.walker
    try:
        if trace is None or not trace.moved:
            clip = generate_path_walk(w.skeleton, w.rigmap, x.points, w.ground, x.params, progress, replan=x.replan)
            return CrowdWalker(w.name, clip, route.xy, delay_s=x.delay)
        legs = legs_of(trace.xy, trace.s, p.time_step_s, route.speed)
        ww = WalkerWalk(w.skeleton, w.rigmap, w.ground, x.params, np.asarray(w.world, float), x.scale,
                        _heights(x.plan, route), p.speed_up, route.speed)
        clip, legs = walk_legs(ww, legs, int(x.params.frame_start), progress)
    except InputError as err:
        raise InputError(f"Walker '{w.name}': {err}") from None
    return CrowdWalker(w.name, clip, np.concatenate([leg.xy for leg in legs]), True,
                       list(clip.metrics.pop("crowd_stops", [])), x.delay)


def _repair(results, traces, routes, prepared, partners: dict, p: CrowdParams, progress: ProgressFn) -> list:
    """Where two walks come closer than the plan allowed (the steps follow the plan to a few
    centimetres; where a plan asks for more than a walk can do, further), the walker that strayed
    more from its plan is planned again — the others, as walked, fixed — with a wider margin, and
    walked again; at most :data:`REPAIRS` rounds, while each improves on the one before (fewer
    pairs too close, or the closest pair further apart), the best kept, in place. Returns the
    walkers planned again, per round."""
    limit = 2 * p.personal_radius_m - REPAIR_TOLERANCE_M
    skip = {(min(a, b), max(a, b)) for a, b in partners.items()} | crowded_ends(routes, limit)
    done: list[set] = []
    best = None
    for rounds in range(REPAIRS + 1):
        frames, xyz = _realised(results, prepared)
        f, i, j, d = close_pairs(xyz[..., :2], limit, skip)
        score = (len({(a, b) for a, b in zip(i.tolist(), j.tolist())}), -float(d.min()) if len(d) else 0.0)
        if best is not None and score >= best[0]:
            break  # no better than the best so far: a crowd too dense for its walks to follow the plan
        best = (score, list(results), list(traces))
        if not len(d) or rounds == REPAIRS:
            break
        redo = _strayed(traces, frames, xyz, (f, i, j), prepared[0].params.fps, p.time_step_s)
        t = (frames - frames[0]) / prepared[0].params.fps
        steps = np.arange(max(max(len(tr.xy) for tr in traces), int(round(t[-1] / p.time_step_s)) + 1))
        fixed = {a: _smooth(np.column_stack([np.interp(steps * p.time_step_s, t, xyz[:, a, c]) for c in range(2)]),
                            p.time_step_s)
                 for a in range(len(results)) if a not in redo}
        wider = [dataclasses.replace(r, margin=r.margin + REPAIR_MARGIN_M * (rounds + 1)) if a in redo else r
                 for a, r in enumerate(routes)]
        again = plan_crowd(wider, p.obstacles, p, no_progress, partners, fixed)
        for a in redo:
            traces[a] = again[a]
            results[a] = _walk_one(prepared[a], again[a], routes[a], p, no_progress)
        done.append(set(redo))
        progress((rounds + 1) / REPAIRS)
    results[:], traces[:] = best[1], best[2]
    return done


def _strayed(traces, frames, xyz, pairs: tuple, fps: float, dt: float) -> list[int]:
    """Of each pair (frame index, i, j) too close, the walker further from its plan then."""
    f, i, j = pairs
    t = (frames - frames[0]) / fps
    stray = np.zeros((2, len(f)))
    for k, who in enumerate((i, j)):
        step = np.minimum(np.round(t[f] / dt).astype(int), [len(traces[a].xy) - 1 for a in who])
        planned = np.array([traces[a].xy[s_] for a, s_ in zip(who.tolist(), step.tolist())])
        stray[k] = np.linalg.norm(xyz[f, who, :2] - planned, axis=1)
    return sorted(set(np.where(stray[0] > stray[1], i, j).tolist()))


def _smooth(track: np.ndarray, dt: float) -> np.ndarray:
    """(K, 2) a walked pelvis track with its sway from step to step smoothed out (over
    :data:`FIXED_SMOOTH_S`): the velocities the plan reads from it are the walker's, not its sway's."""
    return gaussian_smooth(track, FIXED_SMOOTH_S / dt)


def crowded_ends(routes, limit: float) -> set:
    """{(i, j)}, i < j: walkers whose curves start, or end, closer than ``limit`` (m) to each other:
    no plan keeps those apart (they stand there)."""
    out = set()
    for k in (0, -1):
        xy = np.array([r.xy[k] for r in routes])
        i, j = near_pairs(xy, limit)
        out |= {(a, b) for a, b in zip(i.tolist(), j.tolist()) if a < b}
    return out


def _realised(results, prepared) -> tuple[np.ndarray, np.ndarray]:
    """(frames (F,), pelvises (F, A, 3) world m): every walker's pelvis on every frame of the crowd."""
    tracks = [pelvis_world(x.walker.skeleton, x.walker.rigmap, r.clip, x.walker.world)
              for r, x in zip(results, prepared)]
    return on_frames(tracks, [r.clip for r in results])


def _heights(plan, route):
    """progress along the route (world m) → the walk alone's path height there (armature units)."""
    per_m = plan.path.length / max(route.length, 1e-12)
    return lambda s: plan.path.at(np.asarray(s, float) * per_m)[:, 2]


def _greet(results, prepared, meetings, p: CrowdParams, fps: float, progress: ProgressFn) -> list[dict]:
    """The handshakes, each onto its pair's clips."""
    reports = []
    for k, m in enumerate(meetings):
        a, b = results[m.a], results[m.b]
        start = max(a.clip.frames[-1], b.clip.frames[-1]) + 1 - max(a.clip.frames[0], b.clip.frames[0])
        rigs = tuple((prepared[i].walker.skeleton, prepared[i].walker.rigmap) for i in (m.a, m.b))
        worlds = tuple(np.asarray(prepared[i].walker.world, float) for i in (m.a, m.b))
        clip_a, clip_b, report = greet.shake_hands((a.clip, b.clip), rigs, worlds, m.settings, fps)
        a.clip, b.clip = clip_a, clip_b
        a.partner, b.partner = b.name, a.name
        a.spot, b.spot = m.spots[0], m.spots[1]
        report = {k_: v for k_, v in report.items() if k_ != "curves"}
        report.update({"initiator": a.name, "partner": b.name, "gap_m": m.gap,
                       "frame_start": float(max(clip_a.frames[0], clip_b.frames[0]) + start)})
        reports.append(report)
        progress((k + 1) / len(meetings))
    return reports


def _report(results, prepared, routes, meetings, p: CrowdParams) -> dict:
    """The crowd's figures: closest pelvises (meeting pairs apart), the pairs whose curves start or
    end closer than twice the personal radius, when the crowd has finished, how far each walker
    ends from its curve's end."""
    frames, xyz = _realised(results, prepared)
    skip = {(min(m.a, m.b), max(m.a, m.b)) for m in meetings}
    reach = max(2 * p.personal_radius_m, 0.01) + 0.5
    f, i, j, d = close_pairs(xyz[..., :2], reach, skip)
    closest = float(d.min()) if len(d) else float("inf")
    limit = 2 * p.personal_radius_m
    for r, x in zip(results, prepared):
        end = to_world(np.asarray(x.walker.world, float), x.points[-1:])[0, :2]
        r.end_gap_m = float(np.linalg.norm(pelvis_world(x.walker.skeleton, x.walker.rigmap, r.clip,
                                                        x.walker.world)[-1, :2] - end))
    crowded = (crowded_ends(routes, 2 * p.personal_radius_m) - skip) if p.personal_radius_m > 0 else set()
    return {
        "crowded_ends": ", ".join(f"{results[a].name} – {results[b].name}" for a, b in sorted(crowded)),
        "walkers": len(results),
        "moved": int(sum(r.moved for r in results)),
        "meetings": len(meetings),
        "closest_pelvis_m": closest,
        "closest_pair": "" if not len(d) else f"{results[i[np.argmin(d)]].name} – {results[j[np.argmin(d)]].name}",
        "frames_closer_than_radii": int(len(np.unique(f[d < limit]))) if len(d) else 0,
        "last_frame": float(frames[-1]),
        "largest_end_gap_m": max(r.end_gap_m for r in results),
    }
