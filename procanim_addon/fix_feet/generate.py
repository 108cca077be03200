"""Fix Feet: find a motion's foot contacts and hold them (the engine's entry point).

:func:`fix_feet` runs, in order:

1. the source's pose by forward kinematics; heel and ball of each foot, their gaps above the
   floor (:mod:`.floor`) and speeds;
2. contacts (:mod:`.detect`, :mod:`.contacts`, after Ikemoto et al. 2006): classified against
   the motion's own floor and the ground, in passes that measure the floor on the contacts and fit
   the thresholds to the motion's noise; the user's markers (:mod:`.markers`) win over detection;
3. the motion moved onto the ground (a capture floating over the given ground comes down);
4. one placement per plant and the held foot on every frame, blended in and out (:mod:`.plants`,
   after Kovar et al. 2002);
5. reach (:mod:`.reach`): where a held ankle is out of the leg's reach the pelvis comes down
   smoothly, at most ``max_pelvis_drop_m``; a contact that needs more is shortened and reported;
6. legs re-solved with the source's knee direction (:mod:`.legs`); figures (:mod:`.report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..errors import InputError
from ..limits import check_bake_size
from ..progress import ProgressFn, no_progress
from ..rig_roles import RigMap
from ..skeleton import Skeleton
from ..terrain.ticker import Ticker
from . import report
from .contacts import SPEED_WINDOW_S, Plant, plants_of, point_speeds, runs
from .detect import detect_contacts
from .feet import SIDES, Feet, read_feet
from .floor import Floor, fallback_height
from .legs import extension, move_pelvis, solve_leg
from .markers import ContactOverrides
from .params import FixFeetParams
from .plants import FootTrack, Placement, blend_between, held_foot, place
from .reach import nearest_plant, needed_drop, pelvis_drop, reach_limits, reachable_shift, shorten

MAX_SHORTEN_ROUNDS = 200  # each round trims at least one frame off a contact
# Share of the run each stage reports over (only the look of the progress bar depends on them).
SPAN_CONTACTS = (0.05, 0.35)
SPAN_HOLD = (0.35, 0.7)
SPAN_LEGS = (0.7, 0.95)
GENERATOR = "fix_feet"


@dataclass
class FixFeetResult:
    """What :func:`fix_feet` found and made.

    clip:        the fixed motion (``generator`` "fix_feet", figures in ``metrics``)
    contact:     per frame, per foot (L, R), per point (heel, ball): held in contact ``(F, 2, 2)``
    plants:      the held stretches of each foot, and their ``placements`` (armature space)
    pelvis_offset: the pelvis' vertical move per frame ``(F,)`` (armature units; negative = down)
    level:       the floor level the feet are held at: the gap above the ground (0) or, without
                 one, the height of the motion's own floor (armature units)
    shortened:   contacts cut for reach: ``(side, first, last, new first, new last)`` frame numbers
    """

    clip: Clip
    contact: np.ndarray
    plants: list[Plant]
    placements: list[Placement]
    pelvis_offset: np.ndarray
    level: float
    shortened: list[tuple] = field(default_factory=list)


def generate_fix_feet(skeleton: Skeleton, rigmap: RigMap, source: Clip, ground=None,
                      overrides: ContactOverrides | None = None, params: FixFeetParams | None = None,
                      progress: ProgressFn = no_progress) -> Clip:
    """The fixed Clip (the registry's engine entry); see :func:`fix_feet`."""
    return fix_feet(skeleton, rigmap, source, ground, overrides, params, progress).clip


def fix_feet(skeleton: Skeleton, rigmap: RigMap, source: Clip, ground=None,
             overrides: ContactOverrides | None = None, params: FixFeetParams | None = None,
             progress: ProgressFn = no_progress) -> FixFeetResult:
    """Hold the feet of ``source`` (a Clip of ``skeleton``'s bones: the deform pose as Blender
    evaluates it, one key per frame) where they bear weight.

    ``ground``: the floor (``height(xy) -> (z, normal, hit)`` in armature space), or None for the
    motion's own floor; ``overrides``: the user's contact markers; ``progress`` as in
    :mod:`..progress`.
    """
    p = (params or FixFeetParams()).validate()
    _check_source(source, skeleton)
    progress(0.0)
    unit = p.unit_m
    feet = read_feet(skeleton, rigmap, p.sole_from_rest, p.sole_m / unit)
    locations, rotations, scales = _channels(source, skeleton)
    src_pose = skeleton.fk(locations, rotations, scales)
    times = (source.frames - source.frames[0]) / source.fps
    points = feet.points(skeleton, src_pose)
    speeds = point_speeds(points, times, SPEED_WINDOW_S)
    floor = Floor(ground, fallback_height(ground, points[speeds < p.speed_m_s / unit]))
    progress(SPAN_CONTACTS[0])

    found = detect_contacts(points, speeds, feet.sole, floor, source.frames, source.fps, p, overrides,
                            Ticker(progress, *SPAN_CONTACTS, rate=0.08))
    contact = found.contact
    movable = not skeleton.connected[feet.hips]
    target_level = 0.0 if floor.given else found.floor_z
    shift = -found.ground_offset if (floor.given and p.place_on_ground and movable) else 0.0
    pose = src_pose.copy()
    offset = np.zeros((source.frame_count, 3))
    offset[:, 2] = shift
    move_pelvis(skeleton, locations, pose, feet.hips, offset)

    blend = p.frames(p.blend_s, source.fps)
    tracks = [_track(skeleton, feet, pose, s) for s in range(2)]
    plants = [pl for s in range(2) for pl in plants_of(contact[:, s], s)]
    reach = [reach_limits(extension(pose[:, leg.thigh, :3, 3], pose[:, leg.foot, :3, 3], leg), p.max_reach)
             for leg in feet.legs]
    max_drop = p.max_pelvis_drop_m / unit if movable else 0.0
    plants, placements, targets, needed, cut = _reachable(
        _HoldState(skeleton, feet, pose, tracks, floor, target_level, reach, blend, p.reach_slack_m / unit), plants,
        max_drop, Ticker(progress, *SPAN_HOLD, rate=0.2))

    drop = pelvis_drop(needed, max_drop, blend)
    offset[:, 2] = -drop
    move_pelvis(skeleton, locations, pose, feet.hips, offset)
    for s, leg in enumerate(feet.legs):
        progress(SPAN_LEGS[0] + s * (SPAN_LEGS[1] - SPAN_LEGS[0]) / 2)
        _solve_changed(skeleton, leg, (locations, rotations), pose, targets[s], tracks[s], drop, reach[s],
                       feet.forward)
    progress(SPAN_LEGS[1])

    contact = _held_contact(plants, source.frame_count)
    clip = _clip(source, skeleton, locations, rotations, scales)
    new_pose = skeleton.fk(clip.locations, clip.rotations, scales)
    fr = source.frames
    shortened = [(SIDES[side], float(fr[span[0]]), float(fr[span[1]]), None if new is None else float(fr[new.first]),
                  None if new is None else float(fr[new.last])) for span, side, new in cut]
    clip.metrics.update(_figures(skeleton, feet, (src_pose, new_pose), contact, times, floor,
                                 (target_level, unit, shift, drop), plants, shortened))
    progress(1.0)
    return FixFeetResult(clip, contact, plants, placements, shift - drop, target_level, shortened)


# ----------------------------------------------------------------------------- reading the source


def _check_source(source: Clip, skeleton: Skeleton) -> None:
    check_bake_size(source.frame_count, len(skeleton), "The motion to fix")
    if source.frame_count < 2:
        raise InputError("The motion to fix has fewer than two frames: there is no motion to fix.")
    if not np.all(np.diff(source.frames) > 0):
        raise InputError("The motion to fix must have its frames in increasing order.")
    if not (np.isfinite(source.fps) and source.fps > 0):
        raise InputError(f"The motion's frame rate must be a positive number (got {source.fps}).")
    if not source.is_finite():
        raise InputError("The motion to fix has channels that are not finite numbers.")
    unknown = [n for n in source.bone_names if not skeleton.has(n)]
    if len(unknown) == len(source.bone_names):
        raise InputError("The motion to fix animates none of the armature's bones.")


def _channels(source: Clip, skeleton: Skeleton):
    """The source's channels in skeleton order (bones it lacks at rest)."""
    f, b = source.frame_count, len(skeleton)
    locations, rotations = np.zeros((f, b, 3)), tf.quat_identity((f, b))
    scales = None if source.scales is None else np.ones((f, b, 3))
    for k, name in enumerate(source.bone_names):
        if skeleton.has(name):
            i = skeleton.index(name)
            locations[:, i] = source.locations[:, k]
            rotations[:, i] = tf.quat_normalize(source.rotations[:, k])
            if scales is not None:
                scales[:, i] = source.scales[:, k]
    return locations, rotations, scales


def _track(skeleton: Skeleton, feet: Feet, pose: np.ndarray, side: int) -> FootTrack:
    leg = feet.legs[side]
    foot = pose[:, leg.foot]
    tip = feet.tips(skeleton, pose)[:, side]
    tip_local = np.einsum("fji,fj->fi", foot[:, :3, :3], tip - foot[:, :3, 3])
    return FootTrack(tf.mat3_to_quat(foot[:, :3, :3]), foot[:, :3, 3].copy(), tip_local)


# ----------------------------------------------------------------------------- contacts


def _held_contact(plants: list[Plant], frames: int) -> np.ndarray:
    out = np.zeros((frames, 2, 2), dtype=bool)
    for pl in plants:
        out[pl.first:pl.last + 1, pl.side] = pl.points
    return out


# ----------------------------------------------------------------------------- holding and reach


@dataclass
class _HoldState:
    """What placing and holding the feet needs, fixed for a run: the pose after the ground offset,
    each foot's source track, the floor and the level the feet are held at, each leg's reach limit
    ``(F,)``, the blend in frames and how far (armature units) a held ankle may stop short; the
    placement of each plant as found, by (side, detected span)."""

    skeleton: Skeleton
    feet: Feet
    pose: np.ndarray
    tracks: list[FootTrack]
    floor: Floor
    level: float
    reach: list[np.ndarray]
    blend: int
    slack: float
    placements: dict = field(default_factory=dict)


def _hold(state: _HoldState, plants: list[Plant], side: int):
    """Placements of one foot's ``plants`` and its held foot on every frame (rotation, ankle)."""
    track = state.tracks[side]
    rotation, ankle = track.rotation.copy(), track.ankle.copy()
    held = np.zeros(len(rotation), dtype=bool)
    placements = []
    for pl in plants:
        key = (side, pl.detected)
        if key not in state.placements:  # placed once, as found: a shortened plant stays where it was
            state.placements[key] = _placed(state, pl, track)
        placement = state.placements[key]
        placements.append(placement)
        sl = slice(pl.first, pl.last + 1)
        rotation[sl], ankle[sl] = held_foot(pl, placement, track, state.feet)
        held[sl] = True
    blend_between(rotation, ankle, track, held, state.blend)
    return placements, (rotation, ankle)


def _placed(state: _HoldState, plant: Plant, track: FootTrack) -> Placement:
    """The plant's placement, moved toward where its leg reaches on every frame (see
    :func:`.reach.reachable_shift`) no farther than the source's foot strayed from it."""
    placement = place(plant, track, state.feet, state.floor, state.level)
    leg = state.feet.legs[plant.side]
    rows = plant.frames
    _rot, ankle = held_foot(plant, placement, track, state.feet)
    v = ankle - state.pose[rows, leg.thigh, :3, 3]
    room = (state.reach[plant.side][rows] * leg.length) ** 2 - v[:, 2] ** 2
    radii = np.where(room > 0, np.sqrt(np.maximum(room, 0.0)), np.nan)
    strayed = float(np.max(np.linalg.norm((track.ankle[rows] - ankle)[:, :2], axis=1)))
    shift = reachable_shift(v[:, :2], radii, strayed)
    if np.linalg.norm(shift) <= 1e-12:
        return placement
    return place(plant, track, state.feet, state.floor, state.level, shift)


def _reachable(state: _HoldState, plants: list[Plant], max_drop: float, tick: Ticker):
    """Hold the feet, shortening contacts until every held ankle is within reach with the pelvis
    at most ``max_drop`` lower. Returns the plants, their placements, each foot's target
    (rotation, ankle), the drop needed per frame, and the shortened contacts as ``[(detected
    plant span (first, last), side, the plant now or None)]``."""
    by_side = [[pl for pl in plants if pl.side == s] for s in range(2)]
    for _round in range(MAX_SHORTEN_ROUNDS):
        tick()
        held = [_hold(state, by_side[s], s) for s in range(2)]
        needs = []
        changed = False
        for s, leg in enumerate(state.feet.legs):
            hip = state.pose[:, leg.thigh, :3, 3]
            radius = state.reach[s] * leg.length
            # a miss within the slack is left (the ankle stops short); a larger one is met in full
            need = np.where(needed_drop(hip, held[s][1][1], radius + state.slack) > 0,
                            needed_drop(hip, held[s][1][1], radius), 0.0)
            needs.append(need)
            over = need > max_drop + 1e-9
            if np.any(over) and by_side[s]:
                by_side[s] = _trim(by_side[s], over)
                changed = True
        if not changed:
            break
    else:  # out of rounds: hold what is left, as it is
        held = [_hold(state, by_side[s], s) for s in range(2)]
    tick.done()
    final = by_side[0] + by_side[1]
    now = {(pl.side, pl.detected): pl for pl in final}
    cut = [(pl.detected, pl.side, now.get((pl.side, pl.detected))) for pl in plants
           if (pl.side, pl.detected) not in now or now[(pl.side, pl.detected)].original is not None]
    return final, held[0][0] + held[1][0], [held[0][1], held[1][1]], np.maximum(needs[0], needs[1]), cut


def _trim(plants: list[Plant], over: np.ndarray) -> list[Plant]:
    """One foot's plants without the frames ``over (F,)`` (out of reach): a plant holding such
    frames keeps its longest reachable stretch; an unreachable frame between plants (a blend)
    takes one frame off the nearest plant's nearer end."""
    out: list[Plant | None] = list(plants)
    inside = np.zeros(len(over), dtype=bool)
    for pl in plants:
        inside[pl.first:pl.last + 1] = True
    for k, pl in enumerate(plants):
        bad = over[pl.first:pl.last + 1]
        if bad.any():
            out[k] = shorten(pl, bad)
    live = [pl for pl in out if pl is not None]
    outside = np.flatnonzero(over & ~inside)
    if outside.size and live:
        f = int(outside[0])
        pl = live[nearest_plant(live, f)]
        bad = np.zeros(pl.length, dtype=bool)
        bad[0 if abs(f - pl.first) < abs(f - pl.last) else -1] = True
        out[next(k for k, x in enumerate(out) if x is pl)] = shorten(pl, bad)
    return [pl for pl in out if pl is not None]


def _solve_changed(skeleton, leg, channels, pose, target, track: FootTrack, drop, reach, forward) -> None:
    """Re-solve ``leg`` on the frames where its held foot differs from the source's or the pelvis
    came down (the other frames keep the source's channels exactly)."""
    rotation, ankle = target
    moved = (np.abs(ankle - track.ankle).max(axis=1) > 1e-12) | (tf.quat_angle(rotation, track.rotation) > 1e-12)
    idx = np.flatnonzero(moved | (drop > 0))
    if idx.size == 0:
        return
    locations, rotations = channels
    sub_loc, sub_rot, sub_pose = locations[idx], rotations[idx], pose[idx]
    solve_leg(skeleton, leg, (sub_loc, sub_rot), sub_pose, (rotation[idx], ankle[idx]), reach[idx], forward)
    locations[idx], rotations[idx], pose[idx] = sub_loc, sub_rot, sub_pose


# ----------------------------------------------------------------------------- the result


def _clip(source: Clip, skeleton: Skeleton, locations, rotations, scales) -> Clip:
    b = len(skeleton)
    key_loc, key_rot = np.zeros(b, bool), np.zeros(b, bool)
    src_loc, src_rot = _channels(source, skeleton)[:2]
    for k, name in enumerate(source.bone_names):
        if skeleton.has(name):
            key_loc[skeleton.index(name)] = bool(source.key_location[k])
            key_rot[skeleton.index(name)] = bool(source.key_rotation[k])
    key_loc |= np.any(np.abs(locations - src_loc) > 1e-12, axis=(0, 2))
    key_rot |= np.any(tf.quat_angle(rotations, src_rot) > 1e-12, axis=0)
    clip = Clip(list(skeleton.names), source.frames.copy(), source.fps, locations, rotations,
                scales=scales, key_location=key_loc, key_rotation=key_rot, generator=GENERATOR)
    return clip.with_continuity()


def _figures(skeleton, feet: Feet, poses, contact, times, floor: Floor, levels, plants, shortened) -> dict:
    """The metrics of a fix: ``poses = (source, fixed)``; ``levels = (held level, metres per unit,
    ground offset, drop (F,))``."""
    src_pose, new_pose = poses
    target_level, unit, shift, drop = levels
    cm = 100.0 * unit
    before = feet.points(skeleton, src_pose)
    after = feet.points(skeleton, new_pose)
    skate_before = report.skate(before, contact, times)
    skate_after = report.skate(after, contact, times)
    float_before, depth_before = report.float_and_depth(before, feet.tips(skeleton, src_pose), contact, feet, floor,
                                                        target_level)
    float_after, depth_after = report.float_and_depth(after, feet.tips(skeleton, new_pose), contact, feet, floor,
                                                      target_level)
    change, bone = report.joint_changes(skeleton, src_pose, new_pose)
    return {
        "contacts": len(plants),
        "heel_contacts": int(sum(len(runs(contact[:, s, 0])) for s in range(2))),
        "ball_contacts": int(sum(len(runs(contact[:, s, 1])) for s in range(2))),
        "skate_before_mean_cm_s": skate_before[0] * cm,
        "skate_before_p95_cm_s": skate_before[1] * cm,
        "skate_mean_cm_s": skate_after[0] * cm,
        "skate_p95_cm_s": skate_after[1] * cm,
        "float_before_cm": float_before * cm,
        "float_cm": float_after * cm,
        "penetration_before_cm": depth_before * cm,
        "penetration_cm": depth_after * cm,
        "frames_changed": int(np.sum(change * unit > report.CHANGED_M)),
        "max_joint_change_cm": float(change.max()) * cm,
        "max_joint_change_bone": skeleton.names[bone] if change.max() > 0 else "",
        "pelvis_drop_max_cm": float(drop.max()) * cm,
        "ground_offset_cm": float(shift) * cm,
        "shortened_contacts": len(shortened),
        "shortened": report.describe_shortened(shortened),
        "bone_length_error_pct": report.bone_lengths_pct(skeleton, src_pose, new_pose, feet.hips),
    }

