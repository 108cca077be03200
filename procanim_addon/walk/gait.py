"""Gait assembly: path → steps → timing → COM and feet → pelvis, legs, trunk, arms, root → Clip.

:func:`generate_path_walk` is the path walk's one public entry (a pure function), the path-driven
approach of Tsutsuguchi et al. (2000), Introduction: "1. Set walking path. 2. Divide path into steps
and calculate boundary conditions or constraints. 3. Calculate one-step motion. 4. Connect each
one-step motion." Here the steps are solved together (one shooting over the whole walk), so they
are connected with continuous position and velocity by construction. Every pose is built as an
armature-space matrix per bone and turned into pose-bone channels parents first (:mod:`.pose`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..errors import InputError
from ..limits import check_bake_size
from ..progress import ProgressFn, no_progress, part
from ..transforms import affine_inverse
from . import cycle
from . import style as style_model
from .arms import arm_poses, swing_angles
from .body import body_frames, trunk_poses
from .character import SIDES, WalkCharacter, read_character
from .legs import knee_tracks, leg_poses
from .metrics import walk_metrics
from .params import PathWalkParams
from .path import PathHeightGround, WalkPath, build_path
from .pose import channels
from .steps import Footsteps, StepRules, divide_path
from .support import solve_support
from .swing import min_swing_time
from .timing import Timeline, make_timeline
from .turning import body_yaw

STRIDE_MAX = 1.05  # × hip height: the longest walking step (ProcAnim's limit; longer is a run or a lunge)
STRIDE_AUTO_MAX = 0.98  # × hip height: the longest stride the cadence (walk ratio) makes
STEP_HEIGHT_MAX = 0.26  # × hip height: the highest riser one step climbs when max_step_height_m is 0
# (a 0.9 m leg climbs 23 cm; building codes allow risers up to about 18–20 cm)

# Progress: where each part of the work starts (fractions of the whole bake)
_P_DIVIDE, _P_SUPPORT, _P_TRACKS, _P_POSES, _P_CHANNELS, _P_METRICS = 0.0, 0.1, 0.4, 0.65, 0.8, 0.92


@dataclass
class WalkPlan:
    """What the walk is made of before any frame: the character, the path and its ground, the
    footsteps and their timeline, the stride (m), the settings once the style and cadence are
    applied (``params``) and the style's effects."""

    char: WalkCharacter
    path: WalkPath
    ground: object
    steps: Footsteps
    tl: Timeline
    stride: float
    params: PathWalkParams
    style: style_model.StyleEffects

    def psi(self, t):
        """Body yaw Ψ(t) (rad) at times ``t`` (s)."""
        tl = self.tl
        return body_yaw(t, tl.heel_strike, tl.T, tl.T_ds, float(self.path.heading_at(0.0)), self.steps.alpha)


def effective_settings(p: PathWalkParams, leg: float):
    """(settings, stride (m), style effects): the cadence, speed, stride and arm swing the walk uses.

    The stride, when not given, is ``stride_per_leg`` leg lengths at 100 steps/min and grows with
    the cadence (a constant walk ratio, Sekiya et al. 1997), or with √speed; the arm swing grows
    with it (the arms counter the legs' swing). The style (:mod:`.style`) scales all of them.
    """
    fx = style_model.of(p)
    ref = p.stride_per_leg * leg  # the step at 100 steps/min
    if p.stride_m > 0:
        base = p.stride_m
    elif p.speed_mps > 0:
        base = ref * np.sqrt(p.speed_mps / (ref * 100.0 / 60.0))
    else:
        base = ref * p.cadence_spm * fx.cadence / 100.0
    if p.stride_m <= 0:
        base = min(base, STRIDE_AUTO_MAX * leg)  # a derived stride is never refused
    settings = dataclasses.replace(
        p, cadence_spm=p.cadence_spm * fx.cadence, speed_mps=p.speed_mps * fx.cadence * fx.stride,
        arm_swing=p.arm_swing * fx.arm_swing * base / ref)
    return settings, base * fx.stride, fx


def plan_walk(skeleton, rigmap, path_points, ground, p: PathWalkParams,
              progress: ProgressFn = no_progress, stride_at: Callable[[float], float] | None = None) -> WalkPlan:
    """Read the rig, build the path (with the style's weave), divide it into footsteps and time
    them. Raises :class:`InputError` for strides too long for the character and paths too short.
    ``stride_at``: the share of the stride wanted at each arc length along the path (m → 0–1; a
    walker slowing down takes shorter steps), None: the whole stride everywhere."""
    char = read_character(skeleton, rigmap)
    L = char.leg_length
    p, stride, fx = effective_settings(p, L)
    if stride > STRIDE_MAX * L:
        raise InputError(
            f"A stride of {stride:.2f} m is too long for this character (hip height {L:.2f} m): "
            f"walking steps reach at most about {STRIDE_MAX * L:.2f} m."
        )
    max_h = p.max_step_height_m if p.max_step_height_m > 0 else STEP_HEIGHT_MAX * L
    check_bake_size(estimated_frames(path_points, stride, p), len(skeleton), "The path walk")
    path = build_path(_weave(path_points, fx.weave_legs * L, style_model.WEAVE_STEPS * stride), ground,
                      p.corner_radius_m)
    path.raw = np.asarray(path_points, float)  # the path asked for, for the deviation figures
    gnd = ground if ground is not None else PathHeightGround(path)
    heel_back = max(f.heel_back for f in char.feet.values())
    tip_fwd = max(f.tip_fwd for f in char.feet.values())
    rules = StepRules(stride, char.hip_width, heel_back, tip_fwd, max_h, p.tread_margin_m, p.max_incline_deg,
                      stride_at=None if stride_at is None else lambda s: stride * stride_at(s))
    steps = divide_path(path, rules, ground=gnd, progress=progress)
    if len(steps) - 1 < 3:
        raise InputError("The walking path is too short for a step; make it at least half a stride long.")
    tl = make_timeline(steps.w, p.cadence_spm, p.speed_mps, p.double_support, p.stand_s, stride,
                       min_swing=_stairs_swing_times(steps))
    return WalkPlan(char, path, gnd, steps, tl, stride, p, fx)


def estimated_frames(path_points, stride: float, p: PathWalkParams) -> float:
    """Frames the walk will take, from the polyline's horizontal length (m) at the walking speed
    (``speed_mps``, else ``stride`` m per step at ``cadence_spm``) plus the standing before and
    after: known before the path is resampled (every centimetre) or divided, so a walk too long to
    bake is refused before either allocates. 0 for points that are not (N ≥ 2, 3) finite numbers:
    :func:`~.path.build_path` says what is wrong with those."""
    pts = np.asarray(path_points, float)
    if pts.ndim != 2 or pts.shape[-1] != 3 or len(pts) < 2:
        return 0.0  # build_path explains what is wrong with it
    length = float(np.sum(np.linalg.norm(np.diff(pts[:, :2], axis=0), axis=-1)))
    if not np.isfinite(length):
        return 0.0
    speed = p.speed_mps if p.speed_mps > 0 else stride * p.cadence_spm / 60.0
    return (length / max(speed, 1e-9) + 2 * p.stand_s) * p.fps


def _weave(points, amplitude: float, wavelength: float) -> np.ndarray:
    """The polyline swayed sideways by ``amplitude`` m every ``wavelength`` m of its length (a
    sine, faded in over the first wavelength and out over the last); unchanged when 0."""
    pts = np.asarray(points, float)
    if amplitude <= 0 or len(pts) < 2:
        return pts
    seg = np.linalg.norm(np.diff(pts[:, :2], axis=0), axis=-1)
    s = np.concatenate(([0.0], np.cumsum(seg)))
    n = max(int(np.ceil(s[-1] / 0.05)), 2)
    s_new = np.linspace(0.0, s[-1], n + 1)
    pts = np.stack([np.interp(s_new, s, pts[:, k]) for k in range(3)], axis=-1)
    d = np.gradient(pts[:, :2], axis=0)
    left = np.stack([-d[:, 1], d[:, 0]], axis=-1) / np.maximum(np.linalg.norm(d, axis=-1, keepdims=True), 1e-12)
    fade = np.clip(s_new / wavelength, 0, 1) * np.clip((s_new[-1] - s_new) / wavelength, 0, 1)
    out = pts.copy()
    out[:, :2] += left * (amplitude * np.sin(2 * np.pi * s_new / wavelength) * fade)[:, None]
    return out


def _stairs_swing_times(steps) -> np.ndarray:
    """(K,) the shortest swing onto footstep i (s) where a stairs swing would otherwise need a flick:
    on stairs the foot lifts before it travels and sets down after (swing.py), so a long chord needs
    time (people slow down on stairs); 0 elsewhere."""
    out = np.zeros(len(steps))
    k = np.arange(len(steps) - 2)
    chord = np.linalg.norm(steps.pos[k + 2, :2] - steps.pos[k, :2], axis=-1)
    on = steps.on_stairs
    stairs = on[k] | on[k + 2]
    out[k + 2] = np.where(stairs, min_swing_time(chord, on[k], on[k + 2]), 0.0)
    return out


def generate_path_walk(skeleton, rigmap, path_points, ground=None, params: PathWalkParams | None = None,
                       progress: ProgressFn | None = no_progress,
                       replan: Callable[[WalkPlan], WalkPlan] | None = None,
                       stride_at: Callable[[float], float] | None = None) -> Clip:
    """Bake a walk along ``path_points`` (N, 3), armature space, onto ``skeleton``.

    ground: a :class:`~procanim_addon.ground.Ground` (None: the path's own heights).
    progress: called with the fraction done (0–1) throughout; raises
    :class:`~procanim_addon.progress.Cancelled` from it to stop.
    Returns a :class:`Clip` with one key per frame from ``params.frame_start``; ``clip.metrics``
    holds the quality measures of :func:`~.metrics.walk_metrics`. Raises :class:`InputError` for
    paths of zero length, paths steeper than a ladder, risers too high, treads too short, rigs
    missing leg roles.
    replan: given the :class:`WalkPlan` (footsteps and timeline), returns the plan walked instead
    (e.g. a crowd's retimed steps, :mod:`procanim_addon.crowd`); None walks the plan as made.
    stride_at: the share of the stride wanted at each arc length along the path (see :func:`plan_walk`).
    """
    p = (params or PathWalkParams()).validate()
    progress = progress or no_progress
    if p.loop != "NONE":
        return _walk_loop(skeleton, rigmap, p, progress)
    progress(0.0)
    plan = plan_walk(skeleton, rigmap, path_points, ground, p, part(progress, _P_DIVIDE, _P_SUPPORT), stride_at)
    if replan is not None:
        plan = replan(plan)
    char, path, steps, tl, p = plan.char, plan.path, plan.steps, plan.tl, plan.params
    com, feet = solve_support(char, path, plan.ground, steps, tl, p, plan.psi, part(progress, _P_SUPPORT, _P_TRACKS),
                              style=plan.style)
    n_frames = int(np.floor(tl.t_end * p.fps + 1e-9)) + 1
    t = np.arange(n_frames) / p.fps  # clip times (s)
    tracks = {s: feet[s].track(t, progress=part(part(progress, _P_TRACKS, _P_POSES), k / 2, (k + 1) / 2))
              for k, s in enumerate(SIDES)}
    body = body_frames(char, path, steps, tl, p, com, plan.psi, t, tracks, plan.stride)
    progress(_P_POSES)
    want: dict[int, tuple] = {}
    tracks = knee_tracks(char, body, tracks, feet, p, steps.steady_level((0, 0)))
    miss = leg_poses(char, skeleton, body, tracks, want)
    progress(_P_POSES + 0.25 * (_P_CHANNELS - _P_POSES))
    chest_yaw = trunk_poses(char, skeleton, rigmap, body, p, want, plan.style)
    progress(_P_POSES + 0.4 * (_P_CHANNELS - _P_POSES))
    arm_info = swing_angles(char, rigmap, skeleton, steps, tl, p, t, plan.stride)
    progress(_P_POSES + 0.8 * (_P_CHANNELS - _P_POSES))
    arm_poses(char, skeleton, arm_info, chest_yaw, p, want)
    locs_obj, rots_obj = _root_motion(char, skeleton, want, body.D, p.root_motion)
    frames = p.frame_start + np.arange(n_frames, dtype=float)
    clip = channels(skeleton, want, frames, p.fps, part(progress, _P_CHANNELS, _P_METRICS))
    clip.object_locations = locs_obj
    # quaternion signs: made continuous per keyed bone in channels(), here for the object
    clip.object_rotations = None if rots_obj is None else tf.quat_continuity(tf.quat_normalize(rots_obj), axis=0)
    clip.generator = "path_walk"
    clip.metrics = walk_metrics(skeleton, clip, plan, t, body.s_c, body.D if p.root_motion == "OBJECT" else None,
                                part(progress, _P_METRICS, 1.0))
    clip.metrics["ik_reach_miss_cm"] = round(100 * miss, 3)
    progress(1.0)
    return clip


def _walk_loop(skeleton, rigmap, p: PathWalkParams, progress: ProgressFn) -> Clip:
    """A seamless loop of ``p.loop_cycles`` gait cycles (:mod:`.cycle`): cut from a straight walk of
    the same settings, closed, the travel taken off or put on the root."""
    progress(0.0)
    char = read_character(skeleton, rigmap)
    settings, stride, fx = effective_settings(p, char.leg_length)
    line = cycle.line_walk(char, p, settings, stride, fx)
    plan = plan_walk(skeleton, rigmap, line.points, line.ground, line.params)
    walk = generate_path_walk(skeleton, rigmap, line.points, line.ground, line.params,
                              part(progress, 0.0, _P_METRICS))
    clip = cycle.cut_loop(skeleton, char, walk, line, plan.steps, plan.tl.heel_strike, p)
    progress(1.0)
    return clip


def _root_motion(char, sk, want: dict, D, root_motion: str):
    """Carry the walk by the root bone (``BONE``: the root's wanted matrix is D @ rest) or by the
    object (``OBJECT``: every wanted matrix is taken into the moving object's frame D⁻¹, and D is
    returned as the object's (locations, quaternions)); (None, None) for ``BONE``."""
    if root_motion == "OBJECT":
        Dinv = affine_inverse(D)
        for b, (R, pos) in list(want.items()):
            R2 = Dinv[:, :3, :3] @ R
            pos2 = None if pos is None else np.einsum("fij,fj->fi", Dinv[:, :3, :3], pos) + Dinv[:, :3, 3]
            want[b] = (R2, pos2)
        locs, rots, _ = tf.decompose(D)
        return locs, rots
    if char.root is not None:
        W = D @ sk.matrix_local[char.root]
        want[char.root] = (W[:, :3, :3], W[:, :3, 3])
    return None, None
