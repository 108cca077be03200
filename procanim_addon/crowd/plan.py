"""The crowd's plan: every walker's place on the floor every Δt, avoiding the others (ORCA).

Each walker follows its route (:mod:`.routes`) on its own clock τ: with nothing in the way its
preferred velocity takes it where its walk alone would be one step Δt later, so its trace is that
walk exactly (and :mod:`.engine` keeps that walk key for key). Pushed off its curve it heads back
over ``return_s``; slowed, its clock slows with it (τ is the time its walk alone is where it has
got to along its curve), so it resumes its own walk where it left it instead of hurrying to catch
up. Walkers
standing — before their first step or at their curve's end — do not avoid: the others take all of
the avoidance around them (share 1 of u). Nearby walkers are found through a grid
(:mod:`.grid`), at most ``neighbours`` per walker.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..progress import ProgressFn, no_progress
from .grid import near_pairs
from .obstacles import obstacle_lines
from .orca import agent_halfplanes, clear_within, solve_velocity
from .routes import SAMPLE_M, Route

ARRIVE_M = 0.02  # a walker this close to its curve's end has arrived
PROJECT_AHEAD_M = 2.0  # a walker's progress is looked for this far ahead on its curve …
PROJECT_BEHIND_M = 0.1  # … and this far behind
EXTRA_TIME = (2.0, 20.0)  # the plan runs at most this many times the longest walk alone, plus s
EXACT = 1e-12
ON_CURVE_M = 1e-6  # lengths along a route this close are the same place
KEEP_RIGHT = math.radians(60.0)  # a walker held up turns its preferred velocity up to this much to its right …
KEEP_RIGHT_FULL = 0.5  # … all of it when the avoidance slows it by this share of its speed …
UNTURN = math.radians(30.0)  # … and turns back at this rate (rad/s)
NO_TURN_M = 1.0  # a walker this close to its curve's end heads straight for it
GIVE_UP_S = 10.0  # a walker held still for this long, no nearer its curve's end, stops where it is
GIVE_UP_M = 0.05  # (nearer by this much; still: slower than GIVE_UP_SPEED m/s)
GIVE_UP_SPEED = 0.1
STOPPED_SPEED = 0.05  # m/s: a walker slower than this has stopped …
STAND_S = 1.5  # … and stands this long (s) before it walks on: the walk's stop and start take that
ACCELERATION = 1.5  # m/s²: how fast a walker's velocity changes in the plan (a walk starts or stops in about a step)


@dataclass
class Trace:
    """Where a walker is at each step of the plan (times ``k·Δt``).

    xy:      (K, 2) on the floor (world m)
    s:       (K,) its progress along its route (m)
    moved:   the avoidance changed its walk at some step (False: its walk alone, exactly)
    arrived: (s) when it reached its curve's end; inf when it did not within the plan
    """

    xy: np.ndarray
    s: np.ndarray
    moved: bool
    arrived: float


class _Tables:
    """The routes as padded arrays: schedules sampled every Δt, curves every SAMPLE_M."""

    def __init__(self, routes: list[Route], dt: float):
        self.dt = dt
        n_t = max(int(np.ceil(r.t[-1] / dt)) + 2 for r in routes)
        n_c = max(len(r.xy) for r in routes)
        grid = np.arange(n_t) * dt
        self.sched = np.stack([np.interp(grid, r.t, r.s) for r in routes])
        self.curve = np.stack([np.concatenate([r.xy, np.repeat(r.xy[-1:], n_c - len(r.xy), axis=0)]) for r in routes])
        self.length = np.array([r.length for r in routes])
        self.last = np.array([len(r.xy) - 1 for r in routes])

    def s_free(self, rows: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """(len(rows),) the walkers' progress alone (m) at their own times ``tau`` (s)."""
        j = np.clip(tau / self.dt, 0.0, self.sched.shape[1] - 1.0)
        j0 = np.minimum(j.astype(int), self.sched.shape[1] - 2)
        f = j - j0
        return (1 - f) * self.sched[rows, j0] + f * self.sched[rows, j0 + 1]

    def t_first(self, rows: np.ndarray, s: np.ndarray) -> np.ndarray:
        """(len(rows),) the first time each walker's walk alone is ``s`` along its route (s)."""
        sched = self.sched[rows]
        j = np.clip(np.sum(sched < s[:, None], axis=1), 1, sched.shape[1] - 1)
        r = np.arange(len(rows))
        lo, hi = sched[r, j - 1], sched[r, j]
        f = np.clip((s - lo) / np.maximum(hi - lo, EXACT), 0.0, 1.0)
        return (j - 1 + f) * self.dt

    def at(self, rows: np.ndarray, s: np.ndarray) -> np.ndarray:
        """(len(rows), 2) points of the walkers ``rows`` at arc lengths ``s``."""
        j = np.clip(s / SAMPLE_M, 0.0, self.last[rows].astype(float))
        j0 = np.minimum(j.astype(int), np.maximum(self.last[rows] - 1, 0))
        f = (j - j0)[:, None]
        return (1 - f) * self.curve[rows, j0] + f * self.curve[rows, np.minimum(j0 + 1, self.last[rows])]

    def project(self, rows: np.ndarray, xy: np.ndarray, s_from: np.ndarray) -> np.ndarray:
        """(len(rows),) the arc length of the point of each walker's curve nearest ``xy``, looked
        for from ``PROJECT_BEHIND_M`` behind ``s_from`` to ``PROJECT_AHEAD_M`` ahead."""
        if not len(rows):
            return np.zeros(0)
        count = int(np.ceil((PROJECT_AHEAD_M + PROJECT_BEHIND_M) / SAMPLE_M)) + 1
        j0 = np.clip(np.floor((s_from - PROJECT_BEHIND_M) / SAMPLE_M).astype(int), 0, None)
        idx = np.minimum(j0[:, None] + np.arange(count + 1)[None, :], self.last[rows][:, None])
        pts = self.curve[rows[:, None], idx]  # (n, count + 1, 2)
        a, b = pts[:, :-1], pts[:, 1:]
        ab = b - a
        l2 = np.maximum(np.sum(ab * ab, axis=-1), EXACT)
        t = np.clip(np.sum((xy[:, None, :] - a) * ab, axis=-1) / l2, 0.0, 1.0)
        d2 = np.sum((a + t[..., None] * ab - xy[:, None, :]) ** 2, axis=-1)
        k = np.argmin(d2, axis=1)
        r = np.arange(len(rows))
        return np.minimum((idx[r, k] + t[r, k] * (idx[r, k + 1] > idx[r, k])) * SAMPLE_M, self.length[rows])


@dataclass
class _State:
    """The walkers at one step of the plan."""

    xy: np.ndarray
    vel: np.ndarray
    s: np.ndarray
    tau: np.ndarray
    done: np.ndarray
    on_track: np.ndarray
    moved: np.ndarray
    arrived: np.ndarray
    turn: np.ndarray
    best: np.ndarray
    since: np.ndarray
    stand: np.ndarray


@dataclass
class _Crowd:
    """What stays the same over the plan: the routes as tables, each walker's curve end (A, 2),
    radius, margin, speed alone and fastest speed (A,), the walker it meets (or −1), when its walk
    alone starts and ends (A,) s, the obstacles, how far avoidance looks (m) and the settings."""

    tables: _Tables
    goal: np.ndarray
    radius: np.ndarray
    margin: np.ndarray
    speed: np.ndarray
    v_max: np.ndarray
    partner: np.ndarray
    start: np.ndarray
    end: np.ndarray
    footprints: tuple
    reach: float
    p: object


def _crowd(routes: list[Route], footprints: tuple, p, partners: dict | None) -> _Crowd:
    n = len(routes)
    partner = -np.ones(n, int)
    for a, b in (partners or {}).items():
        partner[a] = b
    radius = np.array([r.radius for r in routes])
    margin = np.array([r.margin for r in routes])
    speed = np.array([r.speed for r in routes])
    v_max = p.speed_up * speed
    reach = 2 * float((radius + margin).max()) + p.horizon_s * 2 * float(v_max.max())
    return _Crowd(_Tables(routes, p.time_step_s), np.array([r.xy[-1] for r in routes]), radius, margin, speed, v_max,
                  partner, np.array([r.start_time for r in routes]), np.array([r.end_time for r in routes]),
                  tuple(footprints), reach, p)


def plan_crowd(routes: list[Route], footprints: tuple, p, progress: ProgressFn = no_progress,
               partners: dict | None = None, fixed: dict | None = None) -> list[Trace]:
    """Every walker's :class:`Trace` (module docstring); ``p``: the :class:`~.params.CrowdParams`;
    ``partners``: {walker: the walker it meets}: the two do not avoid each other (their curves
    lead them to spots apart, facing); ``fixed``: {walker: (K, 2) where it is every Δt (world m)}:
    walkers that go their own way, the others avoiding them (their traces are those given)."""
    c = _crowd(routes, footprints, p, partners)
    dt = p.time_step_s
    n = len(routes)
    fixed = fixed or {}
    held = np.array(sorted(fixed), int)
    longest = max((len(fixed[a]) for a in held.tolist()), default=0)
    tracks = np.stack([np.concatenate([fixed[a], np.repeat(fixed[a][-1:], longest - len(fixed[a]), axis=0)])
                       for a in held.tolist()]) if len(held) else np.zeros((0, 1, 2))
    first = c.tables.at(np.arange(n), np.zeros(n))
    st = _State(first, np.zeros((n, 2)), np.zeros(n), np.zeros(n), np.isin(np.arange(n), held), np.ones(n, bool),
                np.zeros(n, bool), np.full(n, np.inf), np.zeros(n), np.full(n, np.inf), np.zeros(n), np.zeros(n))
    steps = int(np.ceil((EXTRA_TIME[0] * c.end.max() + EXTRA_TIME[1]) / dt))
    xs, ss = [st.xy.copy()], [st.s.copy()]
    for k in range(1, steps + 1):
        if k % 10 == 0:
            progress(min(k * dt / max(2 * c.end.max(), dt), 0.99))
        if len(held):  # where the fixed walkers are, and how fast they go
            st.xy[held] = tracks[:, min(k, longest - 1)]
            st.vel[held] = (st.xy[held] - tracks[:, min(k - 1, longest - 1)]) / dt
        active = ~st.done & (st.tau >= c.start - EXACT)
        st.tau[~active & ~st.done] += dt  # waiting to start
        if active.any():
            _step(st, np.flatnonzero(active), c)
        _arrive(st, active, c, k * dt)
        xs.append(st.xy.copy())
        ss.append(st.s.copy())
        if st.done.all() and k >= longest:
            break
    progress(1.0)
    xy, s = np.stack(xs, axis=1), np.stack(ss, axis=1)
    return [Trace(xy[a], s[a], bool(st.moved[a]), float(st.arrived[a])) for a in range(n)]


def _arrive(st: _State, active, c: _Crowd, now: float) -> None:
    """The walkers that arrive at their curve's end this step, or give up (one held still for
    :data:`GIVE_UP_S`, no nearer it, stops where it is), stop: they stand still from now on."""
    at_end = (st.tau >= c.end) | (st.s >= c.tables.length - ON_CURVE_M)
    to_goal = np.linalg.norm(st.xy - c.goal, axis=1)
    arrived = active & at_end & (to_goal < ARRIVE_M)
    nearer = to_goal < st.best - GIVE_UP_M
    st.best = np.where(nearer, to_goal, st.best)
    moving = np.linalg.norm(st.vel, axis=1) > GIVE_UP_SPEED
    st.since = np.where(nearer | moving | ~active, 0.0, st.since + c.p.time_step_s)
    stop = arrived | (active & (st.since > GIVE_UP_S))
    st.done |= stop
    st.vel[stop] = 0.0
    st.arrived = np.where(arrived, now, st.arrived)


def _preferred(st: _State, rows, c: _Crowd):
    """(v_pref (n, 2), progress wanted (n,)): along the curve as the walk alone goes from the
    walker's own time τ, plus the way back to the curve over ``return_s``; at the schedule's end,
    straight to the curve's end."""
    dt, tables = c.p.time_step_s, c.tables
    s_now, s_next = tables.s_free(rows, st.tau[rows]), tables.s_free(rows, st.tau[rows] + dt)
    ds = np.maximum(s_next - s_now, 0.0)
    here = tables.at(rows, st.s[rows])
    along = (tables.at(rows, st.s[rows] + ds) - here) / dt
    off = here - st.xy[rows]
    v = np.where(st.on_track[rows, None], along, along + off / c.p.return_s)
    to_goal = c.goal[rows] - st.xy[rows]
    dist = np.linalg.norm(to_goal, axis=1)
    ending = (s_now >= tables.length[rows] - ON_CURVE_M) & ~st.on_track[rows]
    homing = to_goal * (np.minimum(c.speed[rows], dist / (2 * dt)) / np.maximum(dist, EXACT))[:, None]
    v = np.where(ending[:, None], homing, v)
    norm = np.linalg.norm(v, axis=1)
    cap = c.v_max[rows]
    v = v * np.where(norm > cap, cap / np.maximum(norm, EXACT), 1.0)[:, None]
    return v, ds


def _step(st: _State, rows, c: _Crowd) -> None:
    """One step Δt of the walkers ``rows`` (moving on their schedules), in place."""
    dt, tables = c.p.time_step_s, c.tables
    v_pref, ds = _preferred(st, rows, c)
    near_end = np.linalg.norm(c.goal[rows] - st.xy[rows], axis=1)
    walking = np.zeros(len(st.xy), bool)  # the margin is for walkers whose steps follow the plan
    walking[rows] = (st.stand[rows] <= 0) & (near_end >= NO_TURN_M)
    wanted = st.vel.copy()
    wanted[rows] = v_pref
    v_new, changed = _avoid(st, rows, v_pref, _lines(st, rows, c.radius + c.margin * walking, c, wanted), c.v_max,
                            dt, near_end)
    exact = st.on_track[rows] & ~changed
    ex, off = rows[exact], rows[~exact]
    # on track: exactly the walk alone
    st.s[ex] = np.minimum(st.s[ex] + ds[exact], tables.length[ex])
    st.xy[ex] = tables.at(ex, st.s[ex])
    st.tau[ex] += dt
    st.vel[ex] = v_new[exact]
    # off track: moved by the plan's velocity (as fast as a walk can change it), its progress and
    # clock from where it got
    if len(off):
        v = _walkable(st, off, v_new[~exact], dt)
        # a walker that comes to a stop stands a while (a walk stops and starts again over steps)
        ending = near_end[~exact] < NO_TURN_M
        was = np.linalg.norm(st.vel[off], axis=1) >= STOPPED_SPEED
        stopped = (np.linalg.norm(v, axis=1) < STOPPED_SPEED) & was
        st.stand[off] = np.where(stopped & ~ending, STAND_S, np.maximum(st.stand[off] - dt, 0.0))
        v[st.stand[off] > 0] = 0.0
        st.on_track[off] = False
        st.moved[off] = True
        st.xy[off] = st.xy[off] + v * dt
        st.vel[off] = v
        st.s[off] = np.maximum(tables.project(off, st.xy[off], st.s[off]), st.s[off])
        st.tau[off] = np.maximum(st.tau[off], tables.t_first(off, st.s[off]))


def _avoid(st: _State, rows, v_pref, lines, v_max, dt: float, near_end):
    """(velocities (n, 2), changed (n,)): ORCA's velocity for each walker of ``rows`` whose
    preferred one leaves a half-plane (linear program 2, or 3), the preferred one otherwise;
    ``near_end``: (n,) each walker's distance to its curve's end (m)."""
    v_new = v_pref.copy()
    changed = np.zeros(len(rows), bool)
    for k, (hard, soft) in enumerate(lines):
        a = rows[k]
        if st.stand[a] > 0:  # standing: keeps still (others avoid it)
            v_new[k] = 0.0
            changed[k] = True
            continue
        every = hard + soft
        pref = (float(v_pref[k, 0]), float(v_pref[k, 1]))
        if not any((pref[0] - qx) * nx + (pref[1] - qy) * ny < -1e-9 for qx, qy, nx, ny in every):
            continue
        cap = float(v_max[a])
        v = solve_velocity(every, len(hard), pref, cap)
        slowed = 1.0 - math.hypot(*v) / max(math.hypot(*pref), EXACT)
        # keep right: a walker held up turns its preferred velocity to its right, the more the
        # slower it has to go, and turns back slowly (ORCA alone only slows both walkers of a
        # head-on meeting, and a crowd that meets in one place jams)
        want = KEEP_RIGHT * min(max(slowed, 0.0) / KEEP_RIGHT_FULL, 1.0)
        st.turn[a] = max(want, st.turn[a] - UNTURN * dt) if near_end[k] > NO_TURN_M else 0.0
        if st.turn[a] > 0.0:
            c, sn = math.cos(st.turn[a]), math.sin(st.turn[a])
            v = solve_velocity(every, len(hard), (c * pref[0] + sn * pref[1], -sn * pref[0] + c * pref[1]), cap)
        v_new[k] = v
        changed[k] = True
    return v_new, changed


def _walkable(st: _State, rows, v_want, dt: float) -> np.ndarray:
    """(n, 2) the velocities a walk can take toward ``v_want``: they change by at most
    :data:`ACCELERATION` (a walk starts, stops and turns aside over a step or so)."""
    v_old = st.vel[rows]
    dv = v_want - v_old
    size = np.linalg.norm(dv, axis=1)
    return v_old + dv * np.minimum(1.0, ACCELERATION * dt / np.maximum(size, EXACT))[:, None]


def _lines(st: _State, rows, radius, c: _Crowd, wanted) -> list[tuple[list, list]]:
    """Per walker of ``rows``: (its obstacles' half-planes, its ORCA half-planes with its nearest
    ``neighbours`` walkers, nearest first); ``radius`` (A,): each walker's size this step (m);
    ``wanted`` (A, 2): each walker's preferred velocity (its velocity for those not planned now).

    A pair of walkers both still on their walks alone that keeps clear for τ both at its velocities
    and at its preferred ones has nothing to avoid and gets no half-plane (ORCA's half-plane would
    still bend a preferred velocity that turns toward the other, however far from meeting):
    walkers that never come near walk alone. Once either has given way, ORCA's half-plane holds."""
    p = c.p
    dt = p.time_step_s
    partner = c.partner
    out: list[tuple[list, list]] = [([], []) for _ in rows]
    if c.footprints:
        for k, hard in enumerate(obstacle_lines(list(c.footprints), st.xy[rows], radius[rows], c.reach,
                                                p.obstacle_horizon_s, dt)):
            out[k][0].extend(hard)
    i, j = near_pairs(st.xy, c.reach)
    slot = -np.ones(len(st.xy), int)
    slot[rows] = np.arange(len(rows))
    keep = slot[i] >= 0
    i, j = i[keep & (partner[i] != j)], j[keep & (partner[i] != j)]  # two meeting walkers stop apart
    size = radius[i] + radius[j]
    near = ~(st.on_track[i] & st.on_track[j]
             & clear_within(st.xy[j] - st.xy[i], st.vel[i] - st.vel[j], size, p.horizon_s)
             & clear_within(st.xy[j] - st.xy[i], wanted[i] - wanted[j], size, p.horizon_s))
    i, j = i[near], j[near]
    if not len(i):
        return out
    first = np.searchsorted(i, i, "left")
    keep = (np.arange(len(i)) - first) < p.neighbours
    i, j = i[keep], j[keep]
    avoiding = (slot >= 0) & ~(st.stand > 0)  # the walkers moving this step (not standing)
    share = np.where(avoiding[j], 0.5, 1.0)
    u, n = agent_halfplanes(st.xy[j] - st.xy[i], st.vel[i] - st.vel[j], radius[i] + radius[j], share, p.horizon_s, dt)
    q = st.vel[i] + share[:, None] * u
    for a, qx, qy, nx, ny in zip(slot[i].tolist(), q[:, 0].tolist(), q[:, 1].tolist(), n[:, 0].tolist(),
                                 n[:, 1].tolist()):
        out[a][1].append((qx, qy, nx, ny))
    return out
