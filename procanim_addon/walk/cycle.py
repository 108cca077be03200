"""Walk cycles: the path walk as N whole gait cycles on a straight line, in place or with root motion.

The path walk starts from standing and stops (Tsutsuguchi et al. 2000 solve the centre of mass with
boundary conditions at both ends), so no stretch of it is exactly periodic. A loop is made in three
moves (docs/path_walk.md, "Loops", says why):

1. **A straight walk long enough to settle** (:func:`line_walk`): the same settings on a straight
   line along the character's forward, with the step time rounded so that one gait cycle (two steps)
   is a whole number of frames. The style's weave (Happy-wandering) becomes a sine whose arc length per sway is exactly
   ``WEAVE_STEPS`` steps, so the footsteps meet the sway at the same phase every sway; a weaving loop
   holds whole sways (its cycles are rounded up to an even number).
2. **The most periodic stretch** (:func:`best_window`): of the stretches of one period of the motion
   (a gait cycle; a sway, two cycles, for a weaving walk) that start at the quietest point of the
   gait cycle (:func:`quiet_phase`: farthest from any sole point landing or lifting off) after
   ``WARMUP_STEPS`` and end ``COOLDOWN_STEPS`` before the stop, the one whose last frame best
   continues into its first (positions and frame-to-frame motion of every moving bone's head and
   tail, the travel taken off).
3. **Closing** (:func:`procanim_addon.loop.make_loop`): the small miss spread over the loop, the
   travel taken off (``IN_PLACE``) or put on the root bone (``ROOT_MOTION``; the hips when the rig has
   none, the object with root motion ``OBJECT``); that period repeated to the N cycles asked
   (:func:`procanim_addon.loop.repeat`): a steady walk's cycles are alike, and a longer stretch of the
   straight walk would carry more of its slow drift into the seam.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..clip import Clip
from ..errors import InputError
from ..ground import FlatGround
from ..loop import (
    SEAM_SPEED_FLOOR,
    Contacts,
    LoopSpec,
    joints_of,
    make_loop,
    moving_bones,
    repeat,
    repeated,
    travel_root,
    walker_pose,
)
from ..metrics import max_angular_jump
from .character import SIDES, WalkCharacter
from .metrics import CONTACT_TOL_M, contact_quality, sole_points
from .params import PathWalkParams
from .style import WEAVE_STEPS, StyleEffects

WARMUP_STEPS = 6  # steps from standing before a loop may start (the start's transient has settled)
COOLDOWN_STEPS = 6  # steps a loop ends before the stop (the stop's transient reaches back about this far)
CANDIDATES = 4  # loop starts compared, one gait cycle apart
MIN_CYCLE_FRAMES = 4  # a gait cycle shorter than this many frames cannot show a walk
# what a seam must meet (issue 24), the scales the candidate loops are compared on
SEAM_MISS_M = 0.001  # the pose one loop on within 1 mm of the first
SEAM_VELOCITY_SHARE = 0.1  # velocities across the seam within 10 % of the walk's


@dataclass
class LineWalk:
    """The straight walk a loop is cut from.

    params:       its settings (loop ``NONE``, root motion ``BONE``, frames from 0, the rounded step time)
    points:       its path (N, 3), armature space, along the character's forward from its rest place
    ground:       the rest ground (flat)
    cycle_frames: frames per gait cycle (whole)
    cycles:       gait cycles in the loop (the asked ones, rounded up to whole sways of a weave)
    cadence_spm:  the walk's cadence after rounding (steps/min)
    motion_cycles: gait cycles in one period of the motion (a sway of the weave: ``WEAVE_STEPS`` / 2)
    """

    params: PathWalkParams
    points: np.ndarray
    ground: FlatGround
    cycle_frames: int
    cycles: int
    cadence_spm: float
    motion_cycles: int = 1


def line_walk(char: WalkCharacter, p: PathWalkParams, settings: PathWalkParams, stride: float,
              style: StyleEffects) -> LineWalk:
    """The straight walk for a loop of ``p`` (``settings``: ``p`` with the style applied, as
    :func:`~.gait.effective_settings` gives it; ``stride``: the step length, m)."""
    step_time = 60.0 / settings.cadence_spm if settings.speed_mps <= 0 else stride / settings.speed_mps
    cycle_frames = int(round(2.0 * step_time * p.fps))
    if cycle_frames < MIN_CYCLE_FRAMES:
        raise InputError(
            f"Path walk loop: a gait cycle of {2 * step_time * p.fps:.1f} frames is too short to loop at "
            f"{p.fps:g} fps; lower the cadence or raise the frame rate.")
    cadence = 120.0 * p.fps / cycle_frames  # steps/min with two steps in cycle_frames
    weaving = style.weave_legs > 0
    sway_cycles = int(WEAVE_STEPS // 2)
    cycles = -(-p.loop_cycles // sway_cycles) * sway_cycles if weaving else p.loop_cycles
    base = stride / style.stride  # the step before the style, which the style scales back to `stride`
    line_params = dataclasses.replace(
        p, loop="NONE", root_motion="BONE", frame_start=0, speed_mps=0.0, style_direction=0.0,
        cadence_spm=cadence / style.cadence,
        stride_per_leg=p.stride_per_leg if p.stride_m > 0 else base * 100.0 / (char.leg_length * cadence))
    steps = WARMUP_STEPS + 2 * (CANDIDATES + (sway_cycles if weaving else 1)) + COOLDOWN_STEPS
    if weaving:
        steps = -(-steps // int(WEAVE_STEPS)) * int(WEAVE_STEPS)
    origin = np.array([char.pelvis_rest[0], char.pelvis_rest[1], char.rest_ground_z])
    points = _line(origin, char.forward, char.left, steps * stride, style.weave_legs * char.leg_length,
                   WEAVE_STEPS * stride)
    return LineWalk(line_params.validate(), points, FlatGround(char.rest_ground_z), cycle_frames, cycles, cadence,
                    sway_cycles if weaving else 1)


def _line(origin, forward, left, length: float, amplitude: float, sway_arc: float) -> np.ndarray:
    """A straight line of ``length`` m from ``origin`` along ``forward``; with an ``amplitude`` (m), a
    sine to the ``left`` whose arc length per period is ``sway_arc`` (m) over a whole number of periods."""
    if amplitude <= 0:
        return np.array([origin, origin + forward * length])
    periods = max(int(round(length / sway_arc)), 1)
    wavelength = sway_arc
    u = np.linspace(0.0, 1.0, 401)
    for _ in range(30):  # the wavelength whose sine has arc length sway_arc per period (fixed point)
        y = amplitude * np.sin(2 * np.pi * u)
        arc = float(np.sum(np.hypot(np.diff(u) * wavelength, np.diff(y))))
        if abs(arc - sway_arc) < 1e-9 * sway_arc:
            break
        wavelength *= sway_arc / arc
    u = np.linspace(0.0, periods * wavelength, periods * 200 + 1)
    side = amplitude * np.sin(2 * np.pi * u / wavelength)
    return origin + np.outer(u, forward) + np.outer(side, left)


def quiet_phase(touching: np.ndarray) -> int:
    """The frame of one period of a walk's contacts (``touching``: (P, S) whether each sole point bears
    weight, P frames from a heel strike) farthest from any sole point landing or lifting off, counted
    round the period: where a loop's seam disturbs no contact."""
    change = np.any(touching != np.roll(touching, 1, axis=0), axis=1)  # frame f differs from f − 1
    events = np.flatnonzero(change)
    if not len(events):
        return 0
    P = len(touching)
    gap = np.abs(np.arange(P)[:, None] - events[None, :])
    return int(np.argmax(np.min(np.minimum(gap, P - gap), axis=1)))  # the middle of the longest quiet stretch


def best_window(joints: np.ndarray, starts, period: int, travel: np.ndarray, fps: float) -> int:
    """Of the loops of ``period`` frames that may start at frames ``starts`` of a walk whose bones'
    heads and tails are ``joints`` (F, J, 3), the one that best continues into itself, measured
    against what a seam must meet (:data:`SEAM_MISS_M`, :data:`SEAM_VELOCITY_SHARE`): how far the
    walk one loop on, the loop's ``travel`` (3,) taken off, misses its first frame, and how far the
    velocities on either side of that frame miss those at the first (relative to the joint's speed,
    as :func:`~procanim_addon.loop.seam_figures` measures). Raises InputError when no start leaves
    room for a loop."""
    def share(a, b):  # |a − b| relative to b's speed (m per frame)
        return np.linalg.norm(a - b, axis=-1) / np.maximum(np.linalg.norm(b, axis=-1), SEAM_SPEED_FLOOR / fps)

    best, best_score = None, np.inf
    for j in starts:
        if j < 1 or j + period + 1 >= len(joints):
            continue
        miss = np.linalg.norm(joints[j + period] - joints[j] - travel, axis=-1).max() / SEAM_MISS_M
        ahead = share(joints[j + 1] - joints[j], joints[j + period + 1] - joints[j + period]).max()
        behind = share(joints[j] - joints[j - 1], joints[j + period] - joints[j + period - 1]).max()
        score = max(miss, ahead / SEAM_VELOCITY_SHARE, behind / SEAM_VELOCITY_SHARE)
        if score < best_score:
            best, best_score = int(j), score
    if best is None:
        raise InputError("Path walk loop: the straight walk found no stretch of steady walking to loop.")
    return best


def cut_loop(skeleton, char: WalkCharacter, walk: Clip, line: LineWalk, footsteps, heel_strike,
             p: PathWalkParams) -> Clip:
    """The loop of ``p.loop`` cut from the straight ``walk`` (``footsteps``: its
    :class:`~.steps.Footsteps`, ``heel_strike``: its timeline's heel strikes, s)."""
    k_mid = len(footsteps) // 2
    steps = 2 * line.motion_cycles  # the loop is cut for one period of the motion, then repeated
    travel = float(np.dot(footsteps.pos[k_mid + steps] - footsteps.pos[k_mid], char.forward))
    period = line.motion_cycles * line.cycle_frames
    pose = skeleton.fk(walk.locations, walk.rotations)

    def soles(pose):
        return np.concatenate([sole_points(skeleton, pose, char, side) for side in SIDES], axis=1)

    # candidate loops: from the quietest frame of the gait cycle after each left heel strike of
    # steady walking, WARMUP_STEPS after the start, ending COOLDOWN_STEPS before the stop
    n = len(heel_strike) - 1
    left = [k for k in range(WARMUP_STEPS, n - COOLDOWN_STEPS - steps + 1) if footsteps.side[k] > 0]
    strikes = np.floor(np.asarray(heel_strike)[left] * walk.fps + 0.5).astype(int)  # a whole cycle apart
    first = strikes[len(strikes) // 2]
    touching = np.abs(soles(pose[first:first + period])[..., 2] - char.rest_ground_z) < CONTACT_TOL_M
    bones = moving_bones(skeleton, walk)
    joints = joints_of(skeleton, pose[:, bones], bones)
    joints = joints[:, np.all(np.isfinite(joints), axis=(0, 2))]  # a bone the walk could not pose: the bake refuses
    j = best_window(joints, strikes + quiet_phase(touching), period, char.forward * travel, walk.fps)
    rows = slice(j, j + period + 2)  # the loop, the next loop's first frame and one more (the seam's measure)
    window = Clip(list(walk.bone_names), p.frame_start + np.arange(period + 2, dtype=float), walk.fps,
                  walk.locations[rows], walk.rotations[rows], key_location=walk.key_location,
                  key_rotation=walk.key_rotation, generator=walk.generator)
    root = travel_root(skeleton, char.hips, char.root)
    spec = LoopSpec(p.loop, line.motion_cycles, travel / line.motion_cycles, char.forward, char.hips, root,
                    carrier_object=p.root_motion == "OBJECT", motion_cycles=line.motion_cycles)
    clip = make_loop(skeleton, window, spec, Contacts(soles, char.rest_ground_z, CONTACT_TOL_M))
    clip = repeat(clip, line.cycles // line.motion_cycles)
    clip.metrics.update(loop_quality(skeleton, char, clip, walk, line))
    return clip


def loop_quality(skeleton, char: WalkCharacter, clip: Clip, walk: Clip, line: LineWalk) -> dict:
    """The path walk's figures for a loop: skate and penetration measured over the loop played once
    and into the next (in the walker's frame), steps and cadence of the loop, the straight walk's
    centre-of-mass bob and IK misses, the largest joint rotation per frame across the seam too."""
    pose, _ = walker_pose(skeleton, clip, loops=1)
    quality = contact_quality(skeleton, None, pose, line.ground, clip.fps, char=char)
    played = repeated(clip, 1)
    return {
        "skate_mean_cm_s": quality["skate_mean_cm_s"], "skate_p95_cm_s": quality["skate_p95_cm_s"],
        "skate_frac_fast": quality["skate_frac_fast"], "penetration_max_cm": quality["penetration_max_cm"],
        "step_count": 2 * line.cycles, "cadence_spm": line.cadence_spm,
        "com_vertical_travel_cm": walk.metrics["com_vertical_travel_cm"],
        "max_joint_jump_deg": max_angular_jump(played.rotations[:, played.key_rotation]),
        "ik_reach_miss_cm": walk.metrics.get("ik_reach_miss_cm", 0.0),
    }
