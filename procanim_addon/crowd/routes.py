"""A walker's route in the crowd's plane: its curve seen from above (world m) and when it would be
where, walking alone — the schedule the plan (:mod:`.plan`) starts from.

The walk alone is read from the path walk's own plan (:class:`~procanim_addon.walk.gait.WalkPlan`),
before any frame is made: the centre of mass stands until the first step begins (heel strike time
of P_1), is midway between the feet P_{k−1}, P_k at heel strike k (Tsutsuguchi et al. 2000,
Figure 8), and settles at the path's end one step time after the last heel strike. The schedule is
piecewise linear through those points (:func:`schedule_points`); :mod:`.retime` reads a planned
trace back into heel strike times through the same points, so a walker the plan leaves alone gets
its own steps back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError

SAMPLE_M = 0.05  # the plan's curves: a point every this many metres of arc length


def schedule_points(plan) -> tuple[np.ndarray, np.ndarray]:
    """(t (K + 2,) s, s (K + 2,) m along ``plan.path``): the COM's place along the path at the
    standing start, the first step, each heel strike and the settled end (module docstring)."""
    steps, tl = plan.steps, plan.tl
    n = len(steps) - 1
    mid = 0.5 * (steps.s[1:n] + steps.s[2:n + 1])  # heel strikes 2 … n
    t = np.concatenate(([0.0, tl.heel_strike[1]], tl.heel_strike[2:n + 1], [tl.heel_strike[n] + tl.settle, tl.t_end]))
    s = np.concatenate(([0.0, 0.0], mid, [plan.path.length, plan.path.length]))
    return t, s


def to_world(world: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Armature-space points (N, 3) in world space."""
    return np.asarray(points, float) @ world[:3, :3].T + world[:3, 3]


def to_armature(world: np.ndarray, points: np.ndarray) -> np.ndarray:
    """World-space points (N, 3) in the armature's space."""
    return (np.asarray(points, float) - world[:3, 3]) @ np.linalg.inv(world[:3, :3]).T


def check_upright(name: str, world: np.ndarray) -> None:
    """The crowd meets on a floor: each armature's up must be the world's (turned about z only)."""
    z = world[:3, 2] / np.linalg.norm(world[:3, 2])
    if z[2] < 1 - 1e-6:
        raise InputError(f"'{name}' is tilted; a crowd walks armatures turned about the vertical only.")


@dataclass
class Route:
    """One walker in the plan (world m, s).

    xy:       (M, 2) its path (the path walk's, corners rounded) every :data:`SAMPLE_M` of arc length
    t, s:     its walk alone: the COM's arc length along ``xy`` (m) at times ``t`` (s), piecewise linear
    radius:   its personal radius (m)
    margin:   how much further the plan keeps it from the others while it walks (m: its steps
              follow the plan to a few centimetres; standing, it is where the plan has it)
    speed:    its walking speed alone between the first and the last heel strike (m/s)
    """

    xy: np.ndarray
    t: np.ndarray
    s: np.ndarray
    radius: float
    margin: float
    speed: float

    @property
    def length(self) -> float:
        return float(self.s[-1])

    @property
    def start_time(self) -> float:
        """When the walk alone leaves its standing start (s)."""
        return float(self.t[1])

    @property
    def end_time(self) -> float:
        """When the walk alone has settled at its curve's end (s)."""
        return float(self.t[-2])

    def at(self, s) -> np.ndarray:
        """Points (..., 2) at arc lengths ``s`` (m, clamped to the route)."""
        j = np.clip(np.asarray(s, float) / SAMPLE_M, 0.0, len(self.xy) - 1.0)
        j0 = np.minimum(j.astype(int), len(self.xy) - 2)
        f = (j - j0)[..., None]
        return (1 - f) * self.xy[j0] + f * self.xy[j0 + 1]


def route_of(plan, world: np.ndarray, scale: float, radius: float, margin: float) -> Route:
    """The :class:`Route` of a walker from its path walk plan and its armature's world matrix
    (``scale``: metres per armature unit)."""
    t, s = schedule_points(plan)
    path = plan.path
    xy = to_world(world, path.points)[:, :2]
    arc = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))))
    m = max(int(np.ceil(arc[-1] / SAMPLE_M)), 1)
    s_new = np.linspace(0.0, m * SAMPLE_M, m + 1)
    xy_new = np.stack([np.interp(s_new, arc, xy[:, k]) for k in range(2)], axis=-1)
    s_world = s * scale * (arc[-1] / max(path.length * scale, 1e-12))  # the path's arc in world metres
    walking = (t[-3] - t[2]) if len(t) > 4 else 0.0
    speed = (s_world[-3] - s_world[2]) / walking if walking > 1e-6 else float(np.max(np.diff(s_world)) / 0.5)
    return Route(xy_new, t, s_world, radius, margin, max(float(speed), 0.1))
