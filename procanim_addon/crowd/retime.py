"""From a walker's planned trace to steps: the path walk walks the trace, timed by it.

The avoidance never moves a body the path walk made: it changes the path and the timing the path
walk is given, so feet are planted and steps are steps (a sidestep is a step onto the detour).

1. **Stops.** Where the plan holds the walker nearly still for a while (slower than
   :data:`STOP_SPEED` of its own speed for :data:`STOP_MIN_S`), it stops on one spot (the little
   the plan creeps meanwhile left out) from when it gets there to when it leaves: the trace is cut there
   into legs; each leg is a path walk of its own that starts from standing and stops standing (the
   path walk's own start and stop, Tsutsuguchi et al. 2000 do not model them), and the walker
   stands between them, facing the way it arrived (the next leg leaves that way, then turns onto
   the trace). A leg too short for a step, or one that would start on a stair's edge, is joined
   to the next (the stop is dropped).
2. **The path** of a leg is the trace itself (world → armature space), its heights the curve's
   (the ground's, when there is one: the path walk drops it onto the ground).
3. **The steps** are shorter where the trace is slower than the walk alone (:func:`stride_share`:
   step ∝ √speed, down to :data:`SHORTEST_STEP` of the stride; the path walk's ``stride_at``).
4. **The timing**: the heel strikes come when the trace reaches the COM's place at heel strike
   (:func:`~.routes.schedule_points`' relation, read backwards), each step kept within
   ``1/speed_up``–:data:`SLOW_MAX` times its own time (faster or slower steps would not be a
   walk: the trace is then followed as closely as those allow), through
   :func:`~procanim_addon.walk.generate_path_walk`'s ``replan``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..clip import Clip
from ..errors import InputError
from ..walk import generate_path_walk
from ..walk.timing import timeline_of
from .routes import schedule_points, to_armature

STOP_SPEED = 0.2  # × the walker's own speed: slower than this (smoothed over a step) is standing …
STOP_MIN_S = 1.0  # … when it lasts this long (s)
SMOOTH_S = 0.6  # the trace's speed is smoothed over this (s) to find stops
SLOW_MAX = 1.9  # a step takes at most this many times its own time (slower ones look like slow motion)
SHORTEST_STEP = 0.5  # a walker slowing down shortens its steps down to this share of its stride
SMOOTH_POINTS = 9  # the trace's speed for the steps' length: a running mean over this many points
RESTART_S = 0.3  # a walker stands at least this long between two legs (s)
MIN_LEG_M = 0.2  # a leg shorter than this (m) is not walked: the walker stands through it
DEDUPE_M = 0.01  # trace points closer than this are one point
LEAD_M = 0.2  # a leg after a stop leaves straight along the way the walker stands for this long (m)


@dataclass
class Leg:
    """One leg of a walker's trace, from standing to standing.

    xy:       (M, 2) the path on the floor (world m), duplicate points removed
    t:        (M,) when the trace reaches each point (s, plan time), non-decreasing
    arc:      (M,) arc length along ``xy`` (m)
    t_start:  when the walker leaves the leg's first point (s)
    s_route:  (M,) the walker's progress along its route at each point (m)
    """

    xy: np.ndarray
    t: np.ndarray
    arc: np.ndarray
    t_start: float
    s_route: np.ndarray

    @property
    def length(self) -> float:
        return float(self.arc[-1])

    def time_at(self, arc) -> np.ndarray:
        """When the trace reaches arc lengths ``arc`` (m) first (s)."""
        return np.interp(arc, self.arc, self.t)


def stops(xy: np.ndarray, dt: float, speed: float, first: int, last: int) -> list[tuple[int, int]]:
    """(k_from, k_to) step indices of each stop of a trace ``xy`` (K, 2) between its first motion
    ``first`` and its arrival ``last`` (module docstring)."""
    v = np.linalg.norm(np.diff(xy, axis=0), axis=1) / dt
    w = max(int(round(SMOOTH_S / dt)), 1)
    smooth = np.convolve(v, np.ones(w) / w, mode="same")
    slow = smooth < STOP_SPEED * speed
    slow[:first] = False
    slow[last:] = False
    edges = np.diff(np.concatenate(([0], slow.astype(int), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    need = int(np.ceil(STOP_MIN_S / dt))
    return [(int(a), int(b)) for a, b in zip(starts, ends) if b - a >= need]


def legs_of(xy: np.ndarray, s: np.ndarray, dt: float, speed: float) -> list[Leg]:
    """The trace (K, 2) world m with its route progress ``s`` (K,) cut at its stops."""
    moved = np.linalg.norm(xy - xy[0], axis=1) > 1e-6
    first = int(np.argmax(moved)) if moved.any() else len(xy) - 1
    still = np.linalg.norm(xy - xy[-1], axis=1) > 1e-6
    last = int(len(xy) - 1 - np.argmax(still[::-1])) if still.any() else 0
    xy, s = np.array(xy, float), np.array(s, float)
    cuts = []
    for a, b in stops(xy, dt, speed, first, last):
        mid = (a + b) // 2
        xy[a:b + 1], s[a:b + 1] = xy[mid], s[mid]  # it stands on one spot (what it creeps is left out)
        cuts.append(mid)
    bounds = [0] + cuts + [len(xy) - 1]
    return [_leg(xy, s, dt, a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def facing(legs: list[Leg]) -> list[Leg]:
    """The legs with each stop between them faced one way: the leg before arrives straight over
    its last :data:`LEAD_M`, the leg after leaves straight the same way over its first (the path
    walk stops facing its path's last direction and starts facing its first); points of the traces
    nearer the stop than that are left out."""
    out = list(legs)
    for k in range(1, len(out)):
        before, after = out[k - 1], out[k]
        stop = before.xy[-1]
        far = np.flatnonzero(np.linalg.norm(before.xy - stop, axis=1) >= LEAD_M)
        ahead = np.linalg.norm(after.xy - stop, axis=1) >= LEAD_M
        if not len(far) or not ahead.any():
            continue
        keep = np.arange(len(before.xy)) <= far[-1]
        h = (stop - before.xy[far[-1]]) / np.linalg.norm(stop - before.xy[far[-1]])
        corner = stop - LEAD_M * h
        arc = before.arc[far[-1]] + np.linalg.norm(corner - before.xy[far[-1]])
        out[k - 1] = _with_points(before, keep, arc, corner, -1)
        first = int(np.argmax(ahead))
        out[k] = _with_points(after, np.arange(len(after.xy)) >= first, after.arc[first], stop + LEAD_M * h, 1)
    return out


def _with_points(leg: Leg, keep: np.ndarray, arc_at: float, point: np.ndarray, where: int) -> Leg:
    """The leg's points ``keep`` with its end (``where`` −1: the last, 1: the first) and ``point``
    (at arc length ``arc_at`` of the old leg) between it and them."""
    t_at, s_at = leg.time_at(arc_at), np.interp(arc_at, leg.arc, leg.s_route)
    if where > 0:
        xy = np.concatenate([leg.xy[:1], point[None], leg.xy[keep]])
        t = np.concatenate([leg.t[:1], [t_at], leg.t[keep]])
        sr = np.concatenate([leg.s_route[:1], [s_at], leg.s_route[keep]])
    else:
        xy = np.concatenate([leg.xy[keep], point[None], leg.xy[-1:]])
        t = np.concatenate([leg.t[keep], [t_at], leg.t[-1:]])
        sr = np.concatenate([leg.s_route[keep], [s_at], leg.s_route[-1:]])
    arc = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))))
    return Leg(xy, np.maximum.accumulate(t), arc, leg.t_start, sr)


def _leg(xy, s, dt: float, a: int, b: int) -> Leg:
    """The leg of trace steps a … b (the stop's middle point ends one leg and starts the next)."""
    pts, t, sr = xy[a:b + 1], dt * np.arange(a, b + 1), s[a:b + 1]
    keep = np.ones(len(pts), bool)
    last = pts[0]
    for k in range(1, len(pts)):
        if np.linalg.norm(pts[k] - last) < DEDUPE_M:
            keep[k] = False
        else:
            last = pts[k]
    keep[-1] = True
    if np.linalg.norm(pts[-1] - pts[keep][-2 if keep.sum() > 1 else -1]) < DEDUPE_M and keep.sum() > 2:
        keep[np.flatnonzero(keep)[-2]] = False  # the end point stands for the last close one
    moving = np.flatnonzero(np.linalg.norm(pts - pts[0], axis=1) > 1e-6)
    t_start = float(t[moving[0] - 1]) if len(moving) else float(t[0])
    away = np.flatnonzero(np.linalg.norm(pts - pts[-1], axis=1) >= DEDUPE_M)
    arrive = float(t[away[-1] + 1]) if len(away) else float(t[-1])  # the end is reached, not left
    p, tt, ss = pts[keep], t[keep], sr[keep]
    tt[-1] = min(tt[-1], arrive)
    arc = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))))
    tt = np.maximum.accumulate(np.maximum(tt, t_start))
    tt[0] = t_start
    return Leg(p, tt, arc, t_start, ss)


def join(a: Leg, b: Leg) -> Leg:
    """Two consecutive legs as one (the stop between them dropped)."""
    xy = np.concatenate([a.xy, b.xy[1:]])
    arc = np.concatenate([a.arc, a.length + b.arc[1:]])
    return Leg(xy, np.concatenate([a.t, b.t[1:]]), arc, a.t_start, np.concatenate([a.s_route, b.s_route[1:]]))


@dataclass
class WalkerWalk:
    """What a leg's path walk needs besides the leg: the walker's rig, ground and settings, its
    world matrix, metres per armature unit, the armature-space heights along its route
    (``route_z``: progress m → z), the plan's speed-up limit and the walker's speed alone (m/s)."""

    skeleton: object
    rigmap: object
    ground: object
    params: object
    world: np.ndarray
    scale: float
    route_z: object
    speed_up: float
    speed: float


def walk_legs(ww: WalkerWalk, legs: list[Leg], frame_start: int, progress=None) -> tuple[Clip, list[Leg]]:
    """The walker's clip over its legs (each a path walk, one after the other on consecutive
    frames, standing between them) and the legs walked (short ones and ones that could not be
    walked joined to their neighbours)."""
    legs = facing(_walkable(legs))
    while True:
        try:
            return _walk(ww, legs, frame_start, progress), legs
        except _LegFailed as failed:
            if len(legs) == 1:
                raise failed.error from None
            k = failed.index
            legs = legs[:k - 1] + [join(legs[k - 1], legs[k])] + legs[k + 1:] if k > 0 else \
                [join(legs[0], legs[1])] + legs[2:]
            legs = facing(legs)


def _walkable(legs: list[Leg]) -> list[Leg]:
    """Legs too short for a walk left out: the walker stands through them (the leg after starts
    where the short one did); a short last leg is joined to the one before (the walk ends at the
    curve's end)."""
    out: list[Leg] = []
    carry = None  # where the walker still stands: the start of the legs left out
    for k, leg in enumerate(legs):
        if leg.length < MIN_LEG_M and k < len(legs) - 1:
            carry = leg.xy[0] if carry is None else carry
            continue
        if carry is not None:
            leg = _from(leg, carry)
            carry = None
        out.append(leg)
    if len(out) > 1 and out[-1].length < MIN_LEG_M:
        out[-2:] = [join(out[-2], out[-1])]
    return out


def _from(leg: Leg, start: np.ndarray) -> Leg:
    """The leg starting from ``start`` (where the walker stands) instead of its own first point."""
    xy = np.concatenate([start[None], leg.xy[1:]])
    arc = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))))
    return Leg(xy, leg.t, arc, leg.t_start, leg.s_route)


class _LegFailed(Exception):
    def __init__(self, index: int, error: InputError):
        self.index, self.error = index, error


def _walk(ww: WalkerWalk, legs: list[Leg], frame_start: int, progress) -> Clip:
    fps = ww.params.fps
    clips = []
    frame = frame_start
    stops = []
    for k, leg in enumerate(legs):
        t0 = (frame - frame_start) / fps  # the leg's clip starts here (plan time, s)
        stand_end = ww.params.stand_s if k == len(legs) - 1 else 0.0
        least_stand = 0.0 if k == 0 else RESTART_S
        starts: list[float] = []
        hook = _retimer(leg, ww, t0, least_stand, stand_end, starts)
        z = ww.route_z(leg.s_route)
        pts = to_armature(ww.world, np.column_stack([leg.xy, np.zeros(len(leg.xy))]))
        pts[:, 2] = z
        p = dataclasses.replace(ww.params, frame_start=frame)
        try:
            clip = generate_path_walk(ww.skeleton, ww.rigmap, pts, ww.ground, p, replan=hook,
                                      stride_at=stride_share(leg, ww.speed, ww.scale))
        except InputError as err:
            raise _LegFailed(k, err) from None
        if k > 0:  # standing from the last leg's last frame until this one's first step
            stops.append((float(frame - 1), float(frame + int(np.floor(starts[0] * fps)))))
        clips.append(clip)
        frame += clip.frame_count
        if progress is not None:
            progress((k + 1) / len(legs))
    clip = concatenate(clips)
    clip.metrics["crowd_stops"] = stops
    return clip


def stride_share(leg: Leg, speed: float, scale: float):
    """The share of its stride a walker takes along a leg (armature units along the path → 0–1):
    √(v / v_alone) of the trace's speed v there (smoothed over :data:`SMOOTH_S`), as measured gait
    keeps step length ∝ cadence (the walk ratio, Sekiya et al. 1997: so step ∝ √speed), at least
    :data:`SHORTEST_STEP`; None where the trace is never slower than the walk alone."""
    dt = np.diff(leg.t)
    ok = dt > 1e-9
    if not ok.any():
        return None
    mid = 0.5 * (leg.arc[1:] + leg.arc[:-1])[ok]
    v = np.diff(leg.arc)[ok] / dt[ok]
    kernel = np.ones(min(SMOOTH_POINTS, len(v)))
    v = np.convolve(v, kernel, mode="same") / np.convolve(np.ones(len(v)), kernel, mode="same")
    share = np.clip(np.sqrt(np.maximum(v, 0.0) / max(speed, 1e-9)), SHORTEST_STEP, 1.0)
    if np.all(share >= 1.0):
        return None
    return lambda s: float(np.interp(s * scale, mid, share))


def _retimer(leg: Leg, ww: WalkerWalk, t0: float, least_stand: float, stand_end: float, starts: list):
    """The ``replan`` of a leg's path walk: its footsteps timed by the trace (module docstring);
    the time its first step starts (s from the leg's first frame) goes into ``starts``."""

    def replan(plan):
        t_sched, s_sched = schedule_points(plan)
        nominal = plan.tl.T
        n = len(nominal) - 1
        to_leg = leg.length / max(plan.path.length, 1e-12)  # the path's arc → the leg's (m)
        mid = s_sched[2:n + 1] * to_leg  # the COM at heel strikes 2 … n
        wanted = leg.time_at(mid) - t0
        hs = np.empty(n + 1)
        hs[1] = max(leg.t_start - t0, least_stand)
        for k in range(1, n):
            lo = nominal[k] / ww.speed_up
            hi = nominal[k] * SLOW_MAX
            hs[k + 1] = hs[k] + min(max(wanted[k - 1] - hs[k], lo), hi)
        T = nominal.copy()
        T[1:n] = np.diff(hs[1:])
        tl = timeline_of(T, plan.params.double_support, hs[1], stand_end)
        starts.append(float(hs[1]))
        return dataclasses.replace(plan, tl=tl)

    return replan


def concatenate(clips: list[Clip]) -> Clip:
    """One clip of consecutive clips of one rig (frames, channels, object channels); the figures
    (:func:`merged_metrics`) over all of them."""
    if len(clips) == 1:
        return clips[0]
    first = clips[0]

    def cat(name):
        parts = [getattr(c, name) for c in clips]
        return None if any(x is None for x in parts) else np.concatenate(parts)

    out = Clip(first.bone_names, cat("frames"), first.fps, cat("locations"), cat("rotations"), cat("scales"),
               first.key_location, first.key_rotation, cat("object_locations"), cat("object_rotations"),
               first.generator, merged_metrics(clips))
    return out.with_continuity()


def merged_metrics(clips: list[Clip]) -> dict:
    """The path walk's figures of several legs as one walk's: means weighted by frames, counts
    summed, every other figure the largest (the worst leg's)."""
    frames = np.array([c.frame_count for c in clips], float)
    out: dict = {}
    for key, value in clips[0].metrics.items():
        values = [c.metrics.get(key) for c in clips]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            out[key] = value
        elif "mean" in key or key == "cadence_spm":
            out[key] = float(np.average(np.asarray(values, float), weights=frames))
        elif key.endswith("count"):
            out[key] = int(sum(values))
        else:
            out[key] = float(np.nanmax(np.asarray(values, float)))
    out["legs"] = len(clips)
    return out
