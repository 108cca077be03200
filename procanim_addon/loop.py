"""Seamless cycles: a stretch of a generated walk made into a loop a Cycles F-modifier repeats.

The walks (the path walk's :mod:`.walk.cycle`, the duck's :mod:`.duck_cycle`) generate a *window*:
their motion over whole gait cycles, frames ``f₀ … f₀ + P`` where P (frames) is the loop's period
and frame f₀ + P is the first frame of the next loop. This module turns the window into the loop:

1. **Travel.** The walk advances ``travel_m`` along ``forward`` per loop, taken as uniform,
   τ(f) = forward · travel_m · (f − f₀)/P. The loop is placed so that the pelvis' mean horizontal
   place (travel removed) is its rest place. ``IN_PLACE``: τ is taken off every bone; the root bone,
   when the rig has one, stays at rest. ``ROOT_MOTION``: τ goes on the *carrier* — the rig's root
   bone, else the hips bone (the pelvis), else (``carrier_object``) the object — and the pelvis
   moves about it with no drift over the loop.
2. **Closing.** Whatever the window's last frame misses of its first (after τ) is spread over the
   loop: each keyed channel c becomes c(f) − s·Δc with s = (f − f₀)/P and Δc = c(f₀ + P) − c(f₀)
   (− the carrier's per-loop offset), quaternions by the matching slerp. Every frame-to-frame change
   moves by the same Δc/P, so the velocity across the seam stays what it was in the window.
3. The closing frame is dropped: the Clip holds frames ``frame_start … frame_end`` and the frame
   one key step after ``frame_end`` is ``frame_start`` again (plus the travel on the carrier).

What the Blender side needs (:class:`CycleInfo`, also stored flat in ``clip.metrics`` under
``loop_*`` so it travels with the action): the loop's frame range for a cyclic action,
``(frame_start, frame_start + period)``; a closing key at ``frame_start + period`` (the first key
plus ``travel_offset`` on the carrier's location channels: :func:`repeated`) so that a Cycles
modifier repeats exactly one loop; ``REPEAT_OFFSET`` on the carrier's location channels
(``travel_channels``), ``REPEAT`` elsewhere. docs/loops.md has the whole contract.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from . import transforms as tf
from .clip import Clip
from .errors import InputError
from .skeleton import Skeleton

LOOP_MODES = ("NONE", "IN_PLACE", "ROOT_MOTION")
#: Location channels of the carrier whose per-loop offset is below this (m) repeat as they are.
OFFSET_EPS_M = 1e-9


def check_loop(mode: str, cycles, what: str) -> None:
    """Refuse a loop mode that is not one of :data:`LOOP_MODES`, or a cycle count that is not a whole
    number (InputError naming ``what``; its range is checked with the other limits)."""
    if mode not in LOOP_MODES:
        raise InputError(f"{what}: loop must be one of {', '.join(LOOP_MODES)} (got {mode!r}).")
    if not float(cycles).is_integer():
        raise InputError(f"{what}: loop cycles must be a whole number (got {cycles}).")


def travel_root(skeleton: Skeleton, hips: int, root: int | None) -> int | None:
    """The bone a loop's root motion goes on above the hips: the rig's root bone (``root``, its role),
    else the top of the hierarchy the hips hang from (a generated Rigify rig's ``root``); None when
    the hips are the top (the hips then carry the travel themselves)."""
    if root is not None:
        return root
    top = hips
    while skeleton.parents[top] >= 0:
        top = int(skeleton.parents[top])
    return None if top == hips else top


@dataclass(frozen=True)
class LoopSpec:
    """How a window becomes a loop.

    mode:           ``IN_PLACE`` or ``ROOT_MOTION``
    cycles:         gait cycles in the loop (≥ 1)
    cycle_stride_m: travel of one gait cycle (m; two steps of a biped)
    forward:        (3,) unit horizontal direction of travel, armature space
    hips:           bone index of the pelvis
    root:           bone index of the rig's root bone (an ancestor of the hips: :func:`travel_root`), or None
    carrier_object: ROOT_MOTION carries the travel on the object (the Clip's object channels)
    motion_cycles:  gait cycles in one period of the motion (2 for a walk that weaves every four steps)
    """

    mode: str
    cycles: int
    cycle_stride_m: float
    forward: np.ndarray
    hips: int
    root: int | None
    carrier_object: bool = False
    motion_cycles: int = 1

    @property
    def travel_m(self) -> float:
        return self.cycle_stride_m * self.cycles

    @property
    def carrier(self) -> int | None:
        """Bone that carries the travel in ROOT_MOTION: the root bone, else the hips (None: the object)."""
        if self.carrier_object:
            return None
        return self.root if self.root is not None else self.hips


@dataclass(frozen=True)
class CycleInfo:
    """What a loop's Clip is, for the Blender side (keys, Cycles modifiers, frame range) and scripts.

    mode, cycles:      the loop mode and the gait cycles the loop holds
    frame_start, frame_end: the first and last key of the loop (frames); the pose one key step after
                       ``frame_end`` — frame ``frame_start + period_frames`` — is the first again
    period_frames:     the loop's length (frames): ``cycles × cycle_frames``
    cycle_frames:      one gait cycle (frames)
    cycle_stride_m:    one gait cycle's travel (m); the loop travels ``travel_m`` = stride × cycles
    travel_bone:       bone whose location carries the travel in ROOT_MOTION ('' for IN_PLACE or
                       when the object carries it); ``travel_role`` its role: 'root', 'hips', 'object' or ''
    travel_offset:     per-loop offset of the carrier's location channels (x, y, z; bone-local for a
                       bone, the object's channels (armature space) for the object; zeros in place)
    forward:           the direction of travel (unit, armature space)
    """

    mode: str
    cycles: int
    frame_start: float
    frame_end: float
    period_frames: float
    cycle_frames: float
    cycle_stride_m: float
    travel_m: float
    travel_bone: str
    travel_role: str
    travel_offset: tuple[float, float, float]
    forward: tuple[float, float, float]

    @property
    def frame_range(self) -> tuple[float, float]:
        """The cyclic action's manual frame range: from the first key to where it repeats."""
        return self.frame_start, self.frame_start + self.period_frames

    @property
    def travel_channels(self) -> tuple[int, ...]:
        """Indices of the carrier's location channels that advance per loop (REPEAT_OFFSET)."""
        return tuple(k for k, v in enumerate(self.travel_offset) if abs(v) > OFFSET_EPS_M)

    def to_metrics(self) -> dict:
        """Flat, plain values for ``clip.metrics`` (prefix ``loop_``; the stride as ``cycle_stride_m``)."""
        ox, oy, oz = self.travel_offset
        fx, fy, fz = self.forward
        return {
            "loop_mode": self.mode, "loop_cycles": int(self.cycles),
            "loop_frame_start": float(self.frame_start), "loop_frame_end": float(self.frame_end),
            "loop_period_frames": float(self.period_frames), "cycle_frames": float(self.cycle_frames),
            "cycle_stride_m": float(self.cycle_stride_m), "loop_travel_m": float(self.travel_m),
            "loop_travel_bone": self.travel_bone, "loop_travel_role": self.travel_role,
            "loop_offset_x_m": float(ox), "loop_offset_y_m": float(oy), "loop_offset_z_m": float(oz),
            "loop_forward_x": float(fx), "loop_forward_y": float(fy), "loop_forward_z": float(fz),
        }

    @classmethod
    def from_metrics(cls, m: dict) -> CycleInfo | None:
        """The loop a Clip's (or a baked action's) metrics describe; None for a walk that is no loop."""
        if m.get("loop_mode", "NONE") == "NONE":
            return None
        return cls(
            m["loop_mode"], int(m["loop_cycles"]), float(m["loop_frame_start"]), float(m["loop_frame_end"]),
            float(m["loop_period_frames"]), float(m["cycle_frames"]), float(m["cycle_stride_m"]),
            float(m["loop_travel_m"]), str(m["loop_travel_bone"]), str(m["loop_travel_role"]),
            (float(m["loop_offset_x_m"]), float(m["loop_offset_y_m"]), float(m["loop_offset_z_m"])),
            (float(m["loop_forward_x"]), float(m["loop_forward_y"]), float(m["loop_forward_z"])),
        )


def cycle_of(clip: Clip) -> CycleInfo | None:
    """The loop ``clip`` is (None when it is no loop)."""
    return CycleInfo.from_metrics(clip.metrics)


def _horizontal(v: np.ndarray) -> np.ndarray:
    out = np.array(v, float)
    out[..., 2] = 0.0
    return out


@dataclass(frozen=True)
class Contacts:
    """Where a walk touches the ground, for the seam's skate: ``points(pose)`` gives (F, K, 3) points
    carried by the feet from armature-space poses (F, B, 4, 4); point k is in contact where it lies
    within ``tolerance_m`` of its contact height ``contact_z[k]`` (m; one number for all)."""

    points: Callable[[np.ndarray], np.ndarray]
    contact_z: float | np.ndarray
    tolerance_m: float


def make_loop(skeleton: Skeleton, window: Clip, spec: LoopSpec, contacts: Contacts) -> Clip:
    """The loop made of ``window``: keys at frames f₀ … f₀ + P (the last one the next loop's first)
    and one key more, the uncut walk's continuation that the seam is measured against.

    ``clip.metrics`` holds the :class:`CycleInfo` (``loop_*``) and the seam figures of
    :func:`seam_figures`; the generator adds its own.
    """
    frames = window.frames[:-1]
    f0, period = float(frames[0]), float(frames[-1] - frames[0])
    s = (frames - f0) / period  # 0 … 1 over the loop
    travel = np.asarray(spec.forward, float) * spec.travel_m
    tau = s[:, None] * travel  # (F, 3) the uniform travel τ(f)
    bones_travel = spec.mode == "ROOT_MOTION" and not spec.carrier_object
    target, root_pose = _placed(skeleton, skeleton.fk(window.locations[:-1], window.rotations[:-1]), spec, tau,
                                bones_travel)
    body = Clip(list(window.bone_names), frames, window.fps, window.locations[:-1], window.rotations[:-1],
                key_location=window.key_location, key_rotation=window.key_rotation)
    locs, rots, key_loc, key_rot, new_pose = _channels(skeleton, body, target, spec.root, root_pose)
    one_loop_on = new_pose[-1].copy()
    if bones_travel:
        one_loop_on[:, :3, 3] -= travel
    mismatch = _joint_distance(skeleton, one_loop_on, new_pose[0])
    offset = np.zeros(3)
    if spec.mode == "ROOT_MOTION" and spec.carrier is not None:
        offset = _unposed(skeleton, new_pose[0], spec.carrier)[:3, :3].T @ travel  # the carrier's channels
    _close(locs, rots, s, spec.carrier if bones_travel else None, offset)
    obj_locs = obj_rots = None
    if spec.mode == "ROOT_MOTION" and spec.carrier_object:
        obj_locs, obj_rots = tau[:-1].copy(), tf.quat_identity((len(frames) - 1,))
        offset = travel.copy()
    clip = Clip(list(window.bone_names), frames[:-1], window.fps, locs[:-1], rots[:-1],
                key_location=key_loc, key_rotation=key_rot, object_locations=obj_locs,
                object_rotations=obj_rots, generator=window.generator).with_continuity()
    info = CycleInfo(
        mode=spec.mode, cycles=int(spec.cycles), frame_start=f0, frame_end=float(frames[-2]),
        period_frames=period, cycle_frames=period / spec.cycles, cycle_stride_m=float(spec.cycle_stride_m),
        travel_m=float(spec.travel_m), travel_bone=_carrier_name(skeleton, spec),
        travel_role=_carrier_role(spec), travel_offset=(float(offset[0]), float(offset[1]), float(offset[2])),
        forward=(float(spec.forward[0]), float(spec.forward[1]), float(spec.forward[2])),
    )
    clip.metrics = info.to_metrics()
    clip.metrics["loop_source_mismatch_mm"] = 1000.0 * mismatch
    clip.metrics.update(seam_figures(skeleton, clip, window, spec, contacts))
    return clip


def _placed(skeleton: Skeleton, pose: np.ndarray, spec: LoopSpec, tau: np.ndarray, bones_travel: bool):
    """Where the window's bones go in the loop — ``pose`` (F, B, 4, 4) moved so that the pelvis' mean
    horizontal place (the travel ``tau`` (F, 3) taken off) is its rest place, and by −τ unless the bones
    carry the travel — and the root bone's pose (F, 4, 4): at rest, or carried by τ (None: no root)."""
    in_place = pose[:-1, spec.hips, :3, 3] - tau[:-1]
    shift = _horizontal(np.mean(in_place, axis=0) - skeleton.heads[spec.hips])
    move = -shift - (np.zeros_like(tau) if bones_travel else tau)
    target = pose.copy()
    target[:, :, :3, 3] += move[:, None, :]
    if spec.root is None:
        return target, None
    root_pose = np.broadcast_to(skeleton.matrix_local[spec.root], pose[:, 0].shape).copy()
    if bones_travel:
        root_pose[:, :3, 3] += tau
    return target, root_pose


#: Joints slower than this (m/s) have their seam velocity compared in absolute terms: 10 % of it
#: (1 cm/s, the skate limit) rather than 10 % of their own speed.
SEAM_SPEED_FLOOR = 0.1


def walker_pose(skeleton: Skeleton, clip: Clip, loops: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Armature-space poses ``(F, B, 4, 4)`` of ``loops`` repetitions of a loop plus the first key of
    the next, as a Cycles modifier plays it (:func:`repeated`), in the walker's frame: a loop in place
    carried along by its travel, root motion as it is (the object's motion included); and their frames."""
    info = cycle_of(clip)
    if info is None:
        raise ValueError("walker_pose: the clip is not a loop (loop mode NONE)")
    played = repeated(clip, loops)
    pose = skeleton.fk(played.locations, played.rotations)
    if played.object_locations is not None:
        pose = tf.compose(played.object_locations, played.object_rotations)[:, None] @ pose
    if info.mode == "IN_PLACE":
        pose[:, :, :3, 3] += _travel_at(info, played.frames)[:, None, :]
    return pose, played.frames


def _travel_at(info: CycleInfo, frames: np.ndarray) -> np.ndarray:
    """(F, 3) the uniform travel τ(f) from the loop's first key (m, armature space)."""
    return np.outer((np.asarray(frames) - info.frame_start) / info.period_frames * info.travel_m, info.forward)


def joints_of(skeleton: Skeleton, pose: np.ndarray, bones=None) -> np.ndarray:
    """Heads and tails ``(F, 2B, 3)`` of the bones whose poses are ``pose`` (F, B, 4, 4): every bone,
    or the bones ``bones`` (indices into the skeleton) in that order."""
    lengths = skeleton.lengths if bones is None else skeleton.lengths[np.asarray(bones)]
    heads = pose[..., :3, 3]
    return np.concatenate([heads, heads + pose[..., :3, 1] * lengths[:, None]], axis=1)


def seam_figures(skeleton: Skeleton, clip: Clip, source: Clip, spec: LoopSpec, contacts: Contacts) -> dict:
    """The seam of a loop, measured on its FK in the walker's frame (:func:`walker_pose`), on the bones
    the walk moves (keyed, or below a keyed bone) but for the root bone, whose motion the loop makes
    uniform:

    loop_seam_position_mm:    largest distance of a head or tail between the pose one loop after the
                              first key and the first pose moved by the loop's travel
    loop_seam_velocity_ratio: largest |v − v_walk| / max(|v_walk|, :data:`SEAM_SPEED_FLOOR`) of a head
                              or tail over the two key steps at the seam (last key → next first, next
                              first → its second), v_walk the uncut walk's velocity over the same
                              steps (``source``: the walk's keys from the loop's first to one past
                              where the next loop starts)
    loop_seam_skate_cm_s:     fastest horizontal slide of a foot point in contact over those two steps
                              and the one before
    loop_pelvis_drift_cm:     largest horizontal move of the pelvis, the travel taken off, between the
                              first key and a key whole periods of the motion later
                              (``spec.motion_cycles``; in place: the pelvis' travel; root motion: the
                              pelvis relative to the carrier)
    """
    info = cycle_of(clip)
    K = clip.frame_count
    pose, frames = walker_pose(skeleton, clip)
    bones = moving_bones(skeleton, source, spec.root)
    joints = joints_of(skeleton, pose[:, bones], bones)
    travel = np.asarray(info.forward) * info.travel_m
    v = np.diff(joints, axis=0) / (np.diff(frames) / clip.fps)[:, None, None]
    src = joints_of(skeleton, skeleton.fk(source.locations, source.rotations)[:, bones], bones)
    v_walk = np.diff(src, axis=0) / (np.diff(source.frames) / clip.fps)[:, None, None]
    ratio = max(float(np.max(np.linalg.norm(v[i] - v_walk[i], axis=-1)
                             / np.maximum(np.linalg.norm(v_walk[i], axis=-1), SEAM_SPEED_FLOOR))) for i in (K - 1, K))
    points = contacts.points(pose)  # (F, P, 3)
    touching = np.abs(points[..., 2] - contacts.contact_z) < contacts.tolerance_m
    skate = 0.0
    for i in (K - 2, K - 1, K):
        both = touching[i] & touching[i + 1]
        if np.any(both):
            slide = np.linalg.norm(points[i + 1, both, :2] - points[i, both, :2], axis=-1)
            skate = max(skate, float(np.max(slide)) * clip.fps / (frames[i + 1] - frames[i]))
    pelvis = pose[:K + 1, spec.hips, :3, 3] - _travel_at(info, frames[:K + 1])
    phase = np.mod(frames[1:K + 1] - info.frame_start, info.cycle_frames * spec.motion_cycles)
    boundary = np.isclose(phase, 0.0) | np.isclose(phase, info.cycle_frames * spec.motion_cycles)
    drift = np.linalg.norm((pelvis[1:] - pelvis[0])[boundary, :2], axis=-1)
    return {
        "loop_seam_position_mm": 1000.0 * float(np.max(np.linalg.norm(joints[K] - joints[0] - travel, axis=-1))),
        "loop_seam_velocity_ratio": ratio,
        "loop_seam_skate_cm_s": 100.0 * skate,
        "loop_pelvis_drift_cm": 100.0 * float(np.max(drift)),
    }


def moving_bones(skeleton: Skeleton, clip: Clip, root: int | None = None) -> np.ndarray:
    """Bones that are keyed in ``clip`` or hang below one (the walk moves them), ``root`` left out."""
    moved = (clip.key_location | clip.key_rotation).copy()
    if root is not None:
        moved[root] = False
    for b, p in enumerate(skeleton.parents):
        moved[b] |= p >= 0 and moved[p]
    return np.flatnonzero(moved)


def _carrier_name(skeleton: Skeleton, spec: LoopSpec) -> str:
    if spec.mode != "ROOT_MOTION" or spec.carrier is None:
        return ""
    return skeleton.names[spec.carrier]


def _carrier_role(spec: LoopSpec) -> str:
    if spec.mode != "ROOT_MOTION":
        return ""
    if spec.carrier_object:
        return "object"
    return "root" if spec.root is not None else "hips"


def _joint_distance(skeleton: Skeleton, a: np.ndarray, b: np.ndarray) -> float:
    """Largest distance (m) between the heads and tails of two poses (B, 4, 4)."""
    heads = np.linalg.norm(a[:, :3, 3] - b[:, :3, 3], axis=-1)
    tails = np.linalg.norm(skeleton.tails_of(a) - skeleton.tails_of(b), axis=-1)
    return float(max(heads.max(), tails.max()))


def _unposed(skeleton: Skeleton, pose: np.ndarray, i: int) -> np.ndarray:
    """Bone ``i``'s matrix with an identity basis under its posed parent, one frame ``pose`` (B, 4, 4)."""
    p = skeleton.parents[i]
    return skeleton.rest_rel[i] if p < 0 else pose[p] @ skeleton.rest_rel[i]


def _channels(skeleton: Skeleton, window: Clip, target: np.ndarray, root: int | None, root_pose: np.ndarray | None):
    """Channels that put the bones keyed in ``window`` at ``target`` and the root at ``root_pose``,
    parents first; bones without keys follow their parents. Returns (locations, rotations,
    key_location, key_rotation, pose)."""
    keyed = window.key_location | window.key_rotation
    locs, rots = window.locations.copy(), window.rotations.copy()
    key_loc, key_rot = window.key_location.copy(), window.key_rotation.copy()
    pose = np.empty_like(target)
    for b, p in enumerate(skeleton.parents):
        U = np.broadcast_to(skeleton.rest_rel[b], target[:, b].shape) if p < 0 else pose[:, p] @ skeleton.rest_rel[b]
        if b == root:
            want = root_pose
            key_loc[b] = key_rot[b] = True
        elif keyed[b]:
            want = target[:, b]
        else:
            pose[:, b] = U @ tf.compose(locs[:, b] * (not skeleton.connected[b]), rots[:, b])
            continue
        loc, rot, _ = tf.decompose(tf.affine_inverse(U) @ want)
        rots[:, b] = rot
        if key_loc[b] and not skeleton.connected[b]:
            locs[:, b] = loc
        pose[:, b] = U @ tf.compose(locs[:, b] * (not skeleton.connected[b]), rot)
    rots = tf.quat_continuity(rots, axis=0)
    return locs, rots, key_loc, key_rot, pose


def _close(locs: np.ndarray, rots: np.ndarray, s: np.ndarray, carrier: int | None, offset: np.ndarray) -> None:
    """Spread the last frame's miss of the first over the frames (in place): c(f) − s·Δc."""
    d_loc = locs[-1] - locs[0]
    if carrier is not None:
        d_loc[carrier] -= offset
    locs -= s[:, None, None] * d_loc[None]
    d_rot = tf.quat_mul(rots[-1], tf.quat_conj(rots[0]))  # q(f₀ + P) = Δq · q(f₀)
    ident = tf.quat_identity(d_rot.shape[:-1])
    partial = tf.quat_slerp(np.broadcast_to(ident, rots.shape), np.broadcast_to(d_rot, rots.shape), s[:, None])
    rots[:] = tf.quat_mul(tf.quat_conj(partial), rots)


def repeated(clip: Clip, loops: int = 1) -> Clip:
    """``clip`` played ``loops`` times and the first key of the next loop, as a Cycles modifier plays
    it: each repetition's keys with the carrier's location channels (or the object's) advanced by the
    per-loop offset (REPEAT_OFFSET), every other channel as it is (REPEAT). ``repeated(clip)`` is the
    loop with its closing key, the key the bake writes at ``frame_start + period_frames`` so that the
    modifier repeats exactly one loop. Raises ValueError for a clip that is no loop."""
    info = cycle_of(clip)
    if info is None:
        raise ValueError("repeated: the clip is not a loop (loop mode NONE)")
    K = clip.frame_count
    rows = np.append(np.tile(np.arange(K), loops), 0)
    turn = np.append(np.repeat(np.arange(loops), K), loops).astype(float)  # the repetition of each key
    offset = np.asarray(info.travel_offset)
    locs, rots = clip.locations[rows], clip.rotations[rows]
    obj_locs = obj_rots = None
    if clip.object_locations is not None:
        obj_locs, obj_rots = clip.object_locations[rows], clip.object_rotations[rows]
    if info.travel_role == "object":
        obj_locs = obj_locs + turn[:, None] * offset
    elif info.travel_bone:
        locs[:, clip.index(info.travel_bone)] += turn[:, None] * offset
    out = Clip(list(clip.bone_names), clip.frames[rows] + turn * info.period_frames, clip.fps, locs, rots,
               key_location=clip.key_location, key_rotation=clip.key_rotation, object_locations=obj_locs,
               object_rotations=obj_rots, generator=clip.generator)
    out.metrics = dict(clip.metrics)
    return out


def repeat(clip: Clip, times: int) -> Clip:
    """The loop ``clip`` played ``times`` times, as one loop of ``times`` × its cycles (its keys
    repeated as :func:`repeated` plays them; the seam and its figures are the loop's own)."""
    if times == 1:
        return clip
    info = cycle_of(clip)
    played = repeated(clip, times)
    keys = slice(0, -1)  # the next loop's first key is the bake's to write
    obj = played.object_locations is not None
    out = Clip(list(clip.bone_names), played.frames[keys], clip.fps, played.locations[keys], played.rotations[keys],
               key_location=clip.key_location, key_rotation=clip.key_rotation,
               object_locations=played.object_locations[keys] if obj else None,
               object_rotations=played.object_rotations[keys] if obj else None,
               generator=clip.generator).with_continuity()
    longer = replace(info, cycles=info.cycles * times, frame_end=float(played.frames[-2]),
                     period_frames=info.period_frames * times, travel_m=info.travel_m * times,
                     travel_offset=tuple(v * times for v in info.travel_offset))
    out.metrics = {**clip.metrics, **longer.to_metrics()}
    return out
