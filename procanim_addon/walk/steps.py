"""Path division: footsteps P_i along the path and the step objects S_i between them.

Footsteps are the ground points under the ankles. P_0 and P_1 stand side by side at the start,
P_{n-1} and P_n at the end; in between they alternate sides, offset by half the hip width from the
path. Step i (1 ≤ i ≤ n−1) has its stance foot at P_i while the swing foot goes from P_{i−1} to
P_{i+1}; it carries S_i = [stance side, T_i, w_{i−1}, h_{i−1}, w_i, h_i, α_i] with w_i the
horizontal distance P_i→P_{i+1} along the path, h_i the height change and α_i the signed turn
between the directions d_{i−1} and d_i.

Stairs: the ground profile under the path is scanned for risers (height jumps between 1-cm
samples); every footstep must lie with its whole sole (heel to toe tip, plus a margin) on one flat
run, one step per tread, or per two treads when both fit within a stride and the height limit.

Tsutsuguchi, Shimada, Suenaga, Sonehara, Ohtsuka (2000), "Human walking animation based on foot
reaction force in the three-dimensional virtual world", section "Motion Creation for Successive
Walking" and Figures 17–18 (path points P_i, step objects S_i, vertical and horizontal modes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..progress import ProgressFn, no_progress, part
from .path import RISER_MIN_M, WalkPath

PLANE_H_M = 0.02    # |h_i| below this is plane walking
TURN_DEG = 5.0      # |α_i| below this is straight walking
# The stride limits of one step (ProcAnim's choices; the paper divides by "the default value of stride"):
STEP_MAX = 1.25     # × stride: the longest step taken to reach the next allowed run
STEP_MIN = 0.1      # × stride: a shorter remainder of a run is not worth a step
SHORT_RUN = 0.5     # × stride: a run shorter than this is a stair tread (stand in its middle)
RISER_PROBE_M = 0.02  # riser heights are read this far before and after each edge
STAIRS_ZONE_M = 0.1   # a foot within its own length plus this of a riser is "on stairs"
REST_STEP_M = 0.01    # the ground under a footstep's sole is read this often along it …
REST_TOL_M = 1e-4     # … and a sole cutting deeper than this into it is rested on it instead


@dataclass
class Footsteps:
    """K = n + 1 footsteps and n − 1 steps.

    s:        (K,) arc length along the path (m)
    side:     (K,) +1 left foot, −1 right foot
    pos:      (K, 3) ground point under the ankle (m)
    heading:  (K,) foot heading angle (rad, atan2 of the forward direction)
    normal:   (K, 3) ground normal under the foot
    on_stairs:(K,) the foot stands on a tread bounded by a riser within a foot length
    w, h, alpha: (K,) per footstep i: horizontal distance / height to P_{i+1} (m), signed turn at
              P_i (rad); the last entries are 0
    mode_v:   (K,) 'plane' | 'up' | 'down' of step i (from h_i)
    mode_h:   (K,) 'straight' | 'left' | 'right' of step i (from α_i)
    runs:     list of (s_from, s_to, z) flat runs found between risers (m)
    edges:    (E,) arc lengths of the risers (m)
    """

    s: np.ndarray
    side: np.ndarray
    pos: np.ndarray
    heading: np.ndarray
    normal: np.ndarray
    on_stairs: np.ndarray
    w: np.ndarray
    h: np.ndarray
    alpha: np.ndarray
    mode_v: list
    mode_h: list
    edges: np.ndarray

    def __len__(self) -> int:
        return len(self.s)

    @property
    def n_steps(self) -> int:
        """Number of steps (heel strikes after the start), n − 1."""
        return len(self.s) - 2

    def steady_level(self, skip: tuple = (3, 3)) -> np.ndarray:
        """(K,) bool: footsteps of level, steady walking — not on stairs, the steps onto and off
        them level ('plane'), and not among the first ``skip[0]`` (from standing) nor the last
        ``skip[1]`` (the stop)."""
        K = len(self.s)
        k = np.arange(K)
        plane = np.array([m == "plane" for m in self.mode_v])
        out = ~self.on_stairs & plane
        out[1:] &= plane[:-1] & ~self.on_stairs[:-1]
        out[:-1] &= ~self.on_stairs[1:]
        return out & (k >= skip[0]) & (k <= K - 1 - skip[1])


def find_edges(path: WalkPath, riser_min: float = RISER_MIN_M, ground=None) -> np.ndarray:
    """Arc lengths (m) of the risers under the path (height jumps between samples).

    With a ``ground`` each edge is refined by bisection between its two samples (to 0.1 mm), so
    a foot's margin to the edge is not eaten by the sampling.
    """
    z = path.points[:, 2]
    dz = np.abs(np.diff(z))
    idx = np.nonzero(dz > riser_min)[0]
    # merge neighbouring samples of one riser
    if idx.size:
        keep = np.concatenate(([True], np.diff(idx) > 1))
        idx = idx[keep]
    lo, hi = path.s[idx].copy(), path.s[idx + 1].copy()
    if ground is not None and idx.size:
        z_lo = z[idx]
        for _ in range(7):
            mid = 0.5 * (lo + hi)
            zm, _, _ = ground.height(path.at(mid)[:, :2])
            before = np.abs(zm - z_lo) < 0.5 * np.abs(z[idx + 1] - z_lo)  # still on the first level
            lo = np.where(before, mid, lo)
            hi = np.where(before, hi, mid)
    return 0.5 * (lo + hi)


def _allowed_intervals(path: WalkPath, edges: np.ndarray, heel_back: float, tip_fwd: float, margin: float):
    """Intervals of ankle arc lengths where a whole foot fits on one run: [(lo, hi), ...]."""
    bounds = np.concatenate(([0.0], edges, [path.length]))
    out = []
    for k in range(len(bounds) - 1):
        a, b = bounds[k], bounds[k + 1]
        lo = a + heel_back + margin if k > 0 else 0.0
        hi = b - tip_fwd - margin if k < len(bounds) - 2 else path.length
        if lo <= hi + 1e-9:
            out.append((lo, max(lo, hi)))
    return out


def _foot_fits(path: WalkPath, ground, edges: np.ndarray, lateral: float, heel_back: float, tip_fwd: float,
               margin: float, zone: float = 1.5) -> np.ndarray:
    """(N,) bool per path sample: a foot standing there (``lateral`` m to the path's left, along
    the tangent) has no riser under its sole or within ``margin`` of it. Only samples within
    ``zone`` m of a riser under the path are probed (the ground is flat or smooth elsewhere)."""
    ok = np.ones(len(path.s), dtype=bool)
    if not edges.size:
        return ok
    near = np.min(np.abs(path.s[:, None] - edges[None, :]), axis=1) < zone
    idx = np.nonzero(near)[0]
    along = np.arange(-heel_back - margin, tip_fwd + margin + 1e-9, 0.008)
    across = np.array([-0.035, 0.0, 0.035])
    t = path.tangent[idx, :2]
    lft = np.stack([-t[:, 1], t[:, 0]], axis=-1)
    pts = (path.points[idx, None, None, :2] + lft[:, None, None, :] * (lateral + across)[None, :, None, None]
           + t[:, None, None, :] * along[None, None, :, None])
    gz, _, hit = ground.height(pts.reshape(-1, 2))
    hit = np.asarray(hit).reshape(pts.shape[:3])
    gz = np.where(hit, np.asarray(gz).reshape(pts.shape[:3]), 0.0)  # misses are refused below
    jump = np.max(np.abs(np.diff(gz, axis=2)), axis=(1, 2))
    ok[idx] = (jump < RISER_MIN_M) & hit.all(axis=(1, 2))
    return ok


def _runs(s: np.ndarray, ok: np.ndarray) -> list[tuple[float, float]]:
    """Intervals [s_from, s_to] where ``ok`` holds, from samples."""
    d = np.diff(np.concatenate(([0], ok.astype(int), [0])))
    starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0] - 1
    return [(float(s[a]), float(s[b])) for a, b in zip(starts, ends)]


@dataclass(frozen=True)
class StepRules:
    """Where footsteps may go: the wanted step length and the feet's and the legs' limits (m, deg).

    stride:          the step length wanted (m)
    hip_width:       the feet's lines this far apart (m)
    heel_back, tip_fwd: the sole behind and ahead of the ankle (m)
    max_step_height: the highest riser climbed in one step (m)
    tread_margin:    the whole sole stays this far from a riser (m)
    max_incline_deg: a path steeper than this over a stride is refused (a ladder)
    first_side:      the foot that steps first, +1 left, −1 right
    stride_at:       the step length wanted at an arc length (m → m) where it changes along the
                     path (a walker slowing down in a crowd takes shorter steps); None: ``stride``
    """

    stride: float
    hip_width: float
    heel_back: float
    tip_fwd: float
    max_step_height: float
    tread_margin: float = 0.01
    max_incline_deg: float = 50.0
    first_side: int = -1
    stride_at: Callable[[float], float] | None = None


def divide_path(path: WalkPath, rules: StepRules, ground=None, progress: ProgressFn = no_progress) -> Footsteps:
    """Divide ``path`` into footsteps of about ``rules.stride`` m (see the module docstring).

    ``progress`` gets the fraction of the path divided (0–1). Raises :class:`InputError` when the
    path is too steep, a riser is too high, or a tread is too short for a foot.
    """
    r = rules
    _refuse_ladders(path, r.stride, r.max_incline_deg)
    edges = find_edges(path, ground=ground)
    _refuse_bad_stairs(path, edges, r.max_step_height, r.heel_back + r.tip_fwd, r.tread_margin)
    progress(0.1)
    # where each foot (left +1, right −1) may stand: whole sole on one flat run
    if ground is None:
        both = _allowed_intervals(path, edges, r.heel_back, r.tip_fwd, r.tread_margin)
        allowed = {1: both, -1: both}
    else:
        allowed = {sd: _runs(path.s, _foot_fits(path, ground, edges, sd * 0.5 * r.hip_width, r.heel_back, r.tip_fwd,
                                                 r.tread_margin))
                   for sd in (1, -1)}
    for sd in (1, -1):
        runs = allowed[sd]
        if not runs or runs[0][0] > 1e-9 or runs[-1][1] < path.length - 1e-9:
            raise InputError("The walking path starts or ends on the edge of a step: start and end it on flat ground.")
    progress(0.3)
    seq = _place_footsteps(path, allowed, r.stride, r.max_step_height, r.first_side, part(progress, 0.3, 0.9),
                           r.stride_at)
    steps = _footsteps(path, seq, edges, r, ground)
    progress(1.0)
    return steps


def _refuse_ladders(path: WalkPath, stride: float, max_incline_deg: float) -> None:
    """Refuse a path steeper than ``max_incline_deg`` averaged over a stride (a ladder)."""
    z = path.points[:, 2]
    win = max(int(round(stride / max(path.s[1] - path.s[0], 1e-9))), 1)
    if len(z) <= win:
        return
    rise = np.abs(z[win:] - z[:-win])
    run = path.s[win:] - path.s[:-win]
    worst = int(np.argmax(rise / run))
    incline = float(np.degrees(np.arctan2(rise[worst], run[worst])))
    if incline > max_incline_deg:
        raise InputError(
            f"The path is too steep to walk near {path.s[worst]:.2f} m: it climbs {incline:.0f}° "
            f"(steeper than {max_incline_deg:.0f}°, more like a ladder than stairs or a ramp)."
        )


def _refuse_bad_stairs(path: WalkPath, edges: np.ndarray, max_step_height: float, foot_length: float,
                       tread_margin: float) -> None:
    """Refuse risers higher than one step can climb and treads shorter than a foot plus margins."""
    z = path.points[:, 2]
    if edges.size:
        jumps = np.abs(np.interp(edges + RISER_PROBE_M, path.s, z) - np.interp(edges - RISER_PROBE_M, path.s, z))
        if np.any(jumps > max_step_height):
            k = int(np.argmax(jumps))
            raise InputError(
                f"A step of {jumps[k] * 100:.0f} cm at {edges[k]:.2f} m along the path is higher than this character "
                f"can climb in one step ({max_step_height * 100:.0f} cm)."
            )
    bounds = np.concatenate(([0.0], edges, [path.length]))
    for k in range(1, len(bounds) - 2):
        if bounds[k + 1] - bounds[k] < foot_length + 2 * tread_margin:
            raise InputError(
                f"A tread at {bounds[k]:.2f} m along the path is {100 * (bounds[k + 1] - bounds[k]):.0f} cm deep, "
                f"shorter than the character's foot ({100 * foot_length:.0f} cm) plus margins."
            )


class _Placer:
    """Where the next footstep goes, given the runs each foot may stand on."""

    def __init__(self, path: WalkPath, allowed: dict, stride: float, max_step_height: float, stride_at=None):
        self.path, self.allowed, self.stride, self.max_h = path, allowed, stride, max_step_height
        self.stride_at = stride_at
        self.w_max = STEP_MAX * stride
        self.w_min = STEP_MIN * stride

    def z_at(self, s) -> float:
        return float(np.interp(s, self.path.s, self.path.points[:, 2]))

    def climbable(self, a: float, b: float) -> bool:
        return abs(self.z_at(b) - self.z_at(a)) <= self.max_h + 1e-6

    def next(self, cur: float, side: int) -> float:
        """Arc length of the footstep after one at ``cur`` (m), for a foot of ``side``."""
        runs = self.allowed[side]
        here = next((r for r in runs if r[0] - 1e-9 <= cur <= r[1] + 1e-9), None)
        later = [r for r in runs if r[0] > cur + 1e-9]
        nxt = later[0] if later else None
        if here is not None:
            room = here[1] - cur
            jump_ok = (nxt is not None and nxt[0] <= cur + self.w_max
                       and self.climbable(cur, min(nxt[1], cur + self.stride)))
            if room > self.w_min and not (jump_ok and room < SHORT_RUN * self.stride):
                stride = self.stride if self.stride_at is None else self.stride_at(cur)
                return cur + room / max(int(np.ceil(room / stride - 1e-9)), 1)
        return self._jump(cur, later)

    def _jump(self, cur: float, later: list) -> float:
        """The farthest later run reachable within a stride (and the height limit)."""
        best = None
        L = self.path.length
        for a, b in later:
            if a > cur + self.w_max:
                break
            # a step up or down a riser is shorter: the legs also have to cover the height
            dz = abs(self.z_at(min(b, max(a, cur + self.stride))) - self.z_at(cur))
            reach = self.stride * max(0.5, 1.0 - 0.5 * dz / max(self.max_h, 1e-6))
            cand = min(b, max(a, cur + reach))
            if b < L - 1e-9 and b - a < SHORT_RUN * self.stride:
                # a stair tread: stand in its middle when that is within reach (room at both edges)
                cand = max(a, min(0.5 * (a + b), cur + self.w_max))
            if self.climbable(cur, cand):
                best = cand
        if best is None:
            raise InputError(f"No place for the next foot within a stride after {cur:.2f} m along the path.")
        return best


def _place_footsteps(path: WalkPath, allowed: dict, stride: float, max_step_height: float, first_side: int,
                     progress: ProgressFn, stride_at=None) -> list[float]:
    """Arc lengths of P_1 … P_{n−1} (m), the last one at the path's end."""
    placer = _Placer(path, allowed, stride, max_step_height, stride_at)
    L = path.length
    seq = [0.0]
    cur = 0.0
    while cur < L - 1e-6:
        if len(seq) > 100000:
            raise InputError("The path could not be divided into steps.")
        progress(cur / L)
        # seq holds P_1 …; the next footstep is P_{len(seq)+1}
        cur = placer.next(cur, first_side * (1 if (len(seq) + 1) % 2 == 0 else -1))
        seq.append(cur)
    seq[-1] = L
    return seq


def _footsteps(path: WalkPath, seq: list[float], edges: np.ndarray, rules: StepRules, ground) -> Footsteps:
    """The footstep table P_0 … P_n (positions, headings, normals, w_i, h_i, α_i, modes)."""
    L = path.length
    foot_length = rules.heel_back + rules.tip_fwd
    s_all = np.concatenate(([0.0], np.asarray(seq), [L]))  # P_0 … P_n
    K = len(s_all)
    side = np.array([rules.first_side * (1 if k % 2 == 0 else -1) for k in range(K)])
    centre = path.at(s_all)
    left = path.left_at(s_all)
    pos = centre + left * (side * 0.5 * rules.hip_width)[:, None]
    heading = path.heading_at(s_all)
    if ground is not None:
        gz, gn, hit = ground.height(pos[:, :2])
        hit = np.asarray(hit, bool)
        # a foot beside a narrow ground object stands at the path's height there
        pos[:, 2] = np.where(hit, gz, centre[:, 2])
        normal = np.where(hit[:, None], np.asarray(gn, float), np.array([0.0, 0.0, 1.0]))
        pos[:, 2], normal = rest_on_ground(pos, heading, normal, ground, rules.heel_back, rules.tip_fwd)
    else:
        normal = np.tile([0.0, 0.0, 1.0], (K, 1))
    # a foot is on stairs when a riser lies within its length around it
    on_stairs = np.zeros(K, dtype=bool)
    if edges.size:
        on_stairs = np.min(np.abs(edges[None, :] - s_all[:, None]), axis=1) < foot_length + STAIRS_ZONE_M
    w = np.zeros(K)
    h = np.zeros(K)
    alpha = np.zeros(K)
    w[:-1] = np.diff(s_all)
    h[:-1] = np.diff(centre[:, 2])
    # directions d_i = P_i → P_{i+1} along the centre line (tangent where the points coincide)
    d = np.zeros((K, 2))
    for k in range(K - 1):
        v = centre[k + 1, :2] - centre[k, :2]
        d[k] = v if np.linalg.norm(v) > 1e-6 else path.tangent_at(s_all[k])[:2]
    d[-1] = path.tangent_at(L)[:2]
    ang = np.unwrap(np.arctan2(d[:, 1], d[:, 0]))
    alpha[1:] = np.diff(ang)
    mode_v = ["plane" if abs(x) < PLANE_H_M else ("up" if x > 0 else "down") for x in h]
    mode_h = ["straight" if abs(np.degrees(a)) < TURN_DEG else ("left" if a > 0 else "right") for a in alpha]
    return Footsteps(s_all, side, pos, heading, normal, on_stairs, w, h, alpha, mode_v, mode_h, edges)


def rest_on_ground(pos, heading, normal, ground, heel_back: float, tip_fwd: float):
    """(z (K,), normal (K, 3)) of footsteps whose sole, laid on the ground's plane under the ankle
    (``pos`` (K, 3), ``normal`` (K, 3)), would cut into the ground ahead or behind (a foot at the
    foot of a ramp, across a ridge or a fold of a mesh): the sole line from ``heel_back`` behind
    the ankle to ``tip_fwd`` ahead (m, along ``heading`` (K,) rad) instead rests on the highest
    ground under it — the lowest line above the ground there at the ankle (the ground profile's
    upper hull: the highest chord between a sample behind the ankle and one ahead), the footstep's
    tilt across kept. Footsteps whose sole lies on their plane within :data:`REST_TOL_M` keep it."""
    K = len(pos)
    x = np.concatenate((np.linspace(-heel_back, 0.0, max(int(np.ceil(heel_back / REST_STEP_M)), 1) + 1),
                        np.linspace(0.0, tip_fwd, max(int(np.ceil(tip_fwd / REST_STEP_M)), 1) + 1)[1:]))
    fwd = np.stack([np.cos(heading), np.sin(heading)], axis=-1)
    gz, _, hit = ground.height((pos[:, None, :2] + x[None, :, None] * fwd[:, None, :]).reshape(-1, 2))
    g = np.where(np.asarray(hit, bool), np.asarray(gz, float), -np.inf).reshape(K, len(x))
    nz = np.maximum(normal[:, 2], 1e-6)
    slope = -(normal[:, 0] * fwd[:, 0] + normal[:, 1] * fwd[:, 1]) / nz  # dz per m along the foot
    cut = np.max(g - (pos[:, 2:3] + slope[:, None] * x[None, :]), axis=1)
    bad = np.flatnonzero(cut > REST_TOL_M)
    z, out = pos[:, 2].copy(), normal.copy()
    if not len(bad):
        return z, out
    back, ahead = np.flatnonzero(x <= 0.0), np.flatnonzero(x > 0.0)
    xb, xa = x[back][:, None], x[ahead][None, :]
    gb, ga = g[bad][:, back][:, :, None], g[bad][:, ahead][:, None, :]
    with np.errstate(invalid="ignore"):
        at0 = (gb * xa - ga * xb) / (xa - xb)  # each chord's height over the ankle
    at0 = np.where(np.isfinite(at0), at0, -np.inf).reshape(len(bad), -1)
    best = np.argmax(at0, axis=1)
    i, j = np.unravel_index(best, (len(back), len(ahead)))
    rows = np.arange(len(bad))
    m = (g[bad, ahead[j]] - g[bad, back[i]]) / (x[ahead[j]] - x[back[i]])
    ok = np.isfinite(at0[rows, best])
    bad, m = bad[ok], m[ok]
    z[bad] = at0[rows, best][ok]
    lft = np.stack([-fwd[bad, 1], fwd[bad, 0]], axis=-1)
    across = -(normal[bad, 0] * lft[:, 0] + normal[bad, 1] * lft[:, 1]) / nz[bad]  # the tilt across, kept
    n = np.zeros((len(bad), 3))
    n[:, :2] = -m[:, None] * fwd[bad] - across[:, None] * lft
    n[:, 2] = 1.0
    out[bad] = n / np.linalg.norm(n, axis=-1, keepdims=True)
    return z, out

