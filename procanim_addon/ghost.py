"""What the live preview draws: generated Clips seen in world space (numpy only, no Blender).

A :class:`Ghost` holds, for one armature and every integer frame its Clip spans:

* the drawn bones' heads and tails in world space (m) by the engine's forward kinematics
  (:meth:`~.skeleton.Skeleton.fk`, which mirrors Blender's pose evaluation). On the Clip's key
  frames they are the pose Generate bakes; between keys the channels the baker writes are
  interpolated as Blender's F-curves interpolate them (:mod:`.fcurves`), so in-between frames are
  the baked pose too (the preview's Blender tests measure how closely);
* the pelvis path: the ``hips`` bone's head on every frame;
* the foot plants: each stretch of frames over which a foot's ball point (the foot bone's tail)
  moves slower than :data:`PLANT_SPEED` leg lengths per second, drawn as a footprint — or the
  plants the generator decided itself (its overlays: Fix Feet's held contacts);
* a generator's overlays (:class:`Overlays`, from its spec): a grip point carried by one hand, and
  where two characters' grips meet, the point of contact: the middle of the two grips over the
  frames where they hold each other (the handshake).

World space is ``world @ pose``. A Clip that moves the armature object itself (object channels,
e.g. the path walk's root motion ``OBJECT``) is placed as Blender does:
``matrix_world = parent_world @ T(location) @ R(rotation) @ S(object_scale)``, where
``parent_world = matrix_world @ matrix_basis⁻¹`` when the preview read the scene.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import transforms as tf
from .clip import Clip
from .errors import InputError
from .fcurves import evaluate
from .frames import character_frame
from .rig_roles import RigMap
from .skeleton import Skeleton

PLANT_SPEED = 0.1  # leg lengths per second: a foot's ball point slower than this is planted
PLANT_MIN_FRAMES = 2  # shorter stretches are not drawn as plants
MEET_DISTANCE = 0.01  # hands whose grip points are this close (a fraction of their widest gap) hold
FOOT_SIDES = ("L", "R")


@dataclass
class Body:
    """One armature as the ghost needs it (read from the scene on Blender's main thread).

    ``world``: the object's ``matrix_world`` (4, 4); ``parent_world``: ``matrix_world @
    matrix_basis⁻¹``, what the object's own channels compose under (None: the Clip never moves
    the object); ``object_scale``: the object's scale (3,), kept by object channels; ``drawn``:
    the bones to draw (the deform bones; empty: every bone); ``rotation_modes``: bone name → its
    pose bone's rotation mode and ``object_rotation_mode`` the object's (how the baker writes
    rotations, hence how Blender interpolates them between keys; default quaternion / XYZ).
    """

    name: str
    skeleton: Skeleton
    rigmap: RigMap
    world: np.ndarray
    parent_world: np.ndarray | None = None
    object_scale: np.ndarray | None = None
    drawn: tuple[str, ...] = ()
    rotation_modes: dict = field(default_factory=dict)
    object_rotation_mode: str = "XYZ"


GripPoint = Callable[[Body, np.ndarray], "np.ndarray | None"]
FoundPlants = Callable[[Clip, Body], "list[Plant] | None"]


@dataclass(frozen=True)
class Overlays:
    """What a generator's ghost marks beyond the bones, the pelvis path and the foot plants
    (``GeneratorSpec.overlays``).

    ``grip(body, pose)``: a point held by one hand, armature space ``(N, 3)``, from the pose
    ``(N, B, 4, 4)`` (armature space, the body's skeleton order); None when the body has no such
    hand. Two ghosts with grips also get their point of contact (:func:`build_ghosts`).

    ``plants(clip, body)``: the foot plants the generator itself decided (Fix Feet's held
    contacts), world space, drawn instead of those the ghost finds from the feet's speed; None
    when the Clip carries none.
    """

    grip: GripPoint | None = None
    plants: FoundPlants | None = None


NO_OVERLAYS = Overlays()


@dataclass(frozen=True)
class Plant:
    """A foot at rest on frames ``first``–``last``: its heel (ankle), ball and tip, world m."""

    side: str
    first: float
    last: float
    heel: np.ndarray
    ball: np.ndarray
    tip: np.ndarray


@dataclass
class Ghost:
    """One armature's generated motion as lines in world space (m), per integer frame.

    frames ``(N,)``; heads, tails ``(N, D, 3)`` of the ``bone_names`` drawn; pelvis ``(N, 3)``
    (empty ``(0, 3)`` without a hips role); plants; grip ``(N, 3)`` or None; meeting: the
    handshake's point of contact ``(3,)`` or None; key_frames: the Clip's frames.
    """

    name: str
    generator: str
    frames: np.ndarray
    key_frames: np.ndarray
    bone_names: list[str]
    heads: np.ndarray
    tails: np.ndarray
    pelvis: np.ndarray
    plants: list[Plant] = field(default_factory=list)
    grip: np.ndarray | None = None
    meeting: np.ndarray | None = None

    def index(self, frame: float) -> int:
        """Row of ``frame`` (rounded; before the first / after the last frame: the first / last,
        as Blender holds the first and last keys)."""
        return int(np.clip(round(float(frame) - float(self.frames[0])), 0, len(self.frames) - 1))

    def bones_at(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        """Heads and tails ``(D, 3)`` of the drawn bones at ``frame``."""
        i = self.index(frame)
        return self.heads[i], self.tails[i]

    def plants_at(self, frame: float) -> list[Plant]:
        """The plants under way at ``frame``."""
        return [p for p in self.plants if p.first <= frame <= p.last]


# ----------------------------------------------------------------------------- sampling


def display_frames(clip: Clip) -> np.ndarray:
    """Every integer frame from the Clip's first to its last key (its keys, when they are integer)."""
    lo, hi = clip.frame_range
    first, last = int(np.ceil(lo - 1e-9)), int(np.floor(hi + 1e-9))
    return np.arange(first, max(last, first) + 1, dtype=float)


EULER_MODES = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


def _on_keys(key_t: np.ndarray, t: np.ndarray) -> bool:
    return len(key_t) == len(t) and bool(np.array_equal(key_t, t))


def _interpolate(key_t: np.ndarray, values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Key values at ``t`` as Blender's F-curves give them (:mod:`.fcurves`)."""
    return values if _on_keys(key_t, t) else evaluate(key_t, values, t)


def _rotation_channels(quats: np.ndarray, mode: str) -> np.ndarray:
    """The channels the baker writes for rotations ``quats`` ``(K, ..., 4)`` of a bone or object
    of rotation ``mode``: quaternion components made continuous, Euler angles each compatible with
    the previous key's, or (angle, axis)."""
    quats = tf.quat_normalize(np.asarray(quats, float))
    if mode in EULER_MODES:
        return tf.euler_sequence_from_mat3(tf.quat_to_mat3(quats), mode)
    if mode == "AXIS_ANGLE":
        return tf.quat_to_axis_angle(tf.quat_continuity(quats, axis=0))
    return tf.quat_continuity(quats, axis=0)


def _rotation_from_channels(values: np.ndarray, mode: str) -> np.ndarray:
    """Unit quaternions from rotation channels, as Blender's pose evaluation reads them."""
    if mode in EULER_MODES:
        return tf.mat3_to_quat(tf.euler_to_mat3(values, mode))
    if mode == "AXIS_ANGLE":
        return tf.quat_from_axis_angle(values[..., 1:], values[..., 0])
    return tf.quat_normalize(values)


def _rotations(key_t: np.ndarray, quats: np.ndarray, t: np.ndarray, mode: str = "QUATERNION") -> np.ndarray:
    """Unit quaternions at ``t`` of rotations keyed as ``quats`` ``(K, ..., 4)``: between keys,
    the baker's channels for rotation ``mode`` interpolated as Blender's F-curves are."""
    if _on_keys(key_t, t):
        return tf.quat_normalize(np.asarray(quats, float))
    return _rotation_from_channels(evaluate(key_t, _rotation_channels(quats, mode), t), mode)


def channels_at(clip: Clip, skeleton: Skeleton, frames: np.ndarray, rotation_modes: dict | None = None):
    """The Clip's pose channels in ``skeleton`` order at ``frames``: ``(locations (N, B, 3),
    rotations (N, B, 4), scales (N, B, 3) or None)``, between keys as Blender gives the baked keys
    (``rotation_modes``: bone name → its pose bone's rotation mode, default quaternion). Bones the
    Clip does not hold keep their rest pose."""
    rotation_modes = rotation_modes or {}
    pairs = [(k, skeleton.index(n)) for k, n in enumerate(clip.bone_names) if skeleton.has(n)]
    src = [k for k, _ in pairs]
    dst = [i for _, i in pairs]
    n, b = len(frames), len(skeleton)
    locations = np.zeros((n, b, 3))
    rotations = tf.quat_identity((n, b))
    scales = None if clip.scales is None else np.ones((n, b, 3))
    if _on_keys(clip.frames, frames):  # a key on every frame: the keys themselves
        locations[:, dst] = clip.locations[:, src]
        rotations[:, dst] = tf.quat_normalize(clip.rotations[:, src])
        if scales is not None:
            scales[:, dst] = np.asarray(clip.scales, float)[:, src]
        return locations, rotations, scales
    # every channel of every bone through one evaluation (one solve for all curves)
    modes = [rotation_modes.get(skeleton.names[i], "QUATERNION") for i in dst]
    groups = {mode: [k for k, m in enumerate(modes) if m == mode] for mode in set(modes)}
    parts = [clip.locations[:, src]]
    parts += [_rotation_channels(clip.rotations[:, [src[k] for k in cols]], mode) for mode, cols in groups.items()]
    if scales is not None:
        parts.append(np.asarray(clip.scales, float)[:, src])
    keys = len(clip.frames)
    values = evaluate(clip.frames, np.concatenate([p.reshape(keys, -1) for p in parts], axis=1), frames)
    split = np.split(values, np.cumsum([p[0].size for p in parts])[:-1], axis=1)
    locations[:, dst] = split[0].reshape(n, len(dst), 3)
    for (mode, cols), part in zip(groups.items(), split[1:]):
        rotations[:, [dst[k] for k in cols]] = _rotation_from_channels(part.reshape(n, len(cols), -1), mode)
    if scales is not None:
        scales[:, dst] = split[-1].reshape(n, len(dst), 3)
    return locations, rotations, scales


def object_worlds(clip: Clip, body: Body, frames: np.ndarray, still: bool = False) -> np.ndarray:
    """The armature object's world matrix ``(N, 4, 4)`` at ``frames``; ``still``: ``(4, 4)`` when
    the Clip does not move the object (the same matrix on every frame)."""
    world = np.asarray(body.world, float)
    moves = clip.object_locations is not None or clip.object_rotations is not None
    if not moves or body.parent_world is None:
        return world.copy() if still else np.broadcast_to(world, (len(frames), 4, 4)).copy()
    parent = np.asarray(body.parent_world, float)
    basis = np.linalg.inv(parent) @ world  # the object's own transform when the scene was read
    scale = np.linalg.norm(basis[:3, :3], axis=0) if body.object_scale is None else np.asarray(body.object_scale)
    if clip.object_locations is not None:
        loc = _interpolate(clip.frames, np.asarray(clip.object_locations, float), frames)
    else:
        loc = np.broadcast_to(basis[:3, 3], (len(frames), 3))
    if clip.object_rotations is not None:
        rot = _rotations(clip.frames, clip.object_rotations, frames, body.object_rotation_mode)
    else:
        rot = np.broadcast_to(tf.mat3_to_quat(basis[:3, :3] / scale), (len(frames), 4))
    own = tf.compose(loc, rot, np.broadcast_to(scale, (len(frames), 3)))
    return parent @ own


def _apply(worlds: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Armature-space points ``(N, K, 3)`` → world, one matrix per frame ``(N, 4, 4)``; a matrix
    ``(4, 4)``: the same for every frame (the object does not move: one matrix product)."""
    if worlds.ndim == 2:
        return (points.reshape(-1, 3) @ worlds[:3, :3].T).reshape(points.shape) + worlds[:3, 3]
    return points @ worlds[:, :3, :3].swapaxes(-1, -2) + worlds[:, None, :3, 3]


# ----------------------------------------------------------------------------- what is drawn


def foot_plants(heel: np.ndarray, ball: np.ndarray, tip: np.ndarray, frames: np.ndarray, fps: float,
                limit: float, side: str = "") -> list[Plant]:
    """Stretches of at least :data:`PLANT_MIN_FRAMES` frames over which the ``ball`` point
    ``(N, 3)`` moves slower than ``limit`` (m/s); each becomes a :class:`Plant` at the mean heel,
    ball and tip positions of its frames."""
    if len(frames) < 2:
        return []
    speed = np.linalg.norm(np.diff(ball, axis=0), axis=1) * fps / np.maximum(np.diff(frames), 1e-9)
    slow = speed < limit
    planted = np.zeros(len(frames), dtype=bool)
    planted[:-1] |= slow
    planted[1:] |= slow
    edges = np.flatnonzero(np.diff(np.concatenate(([0], planted.astype(np.int8), [0]))))
    starts, stops = edges[0::2], edges[1::2]
    keep = stops - starts >= PLANT_MIN_FRAMES
    starts, stops = starts[keep], stops[keep]
    if not len(starts):
        return []
    # the mean heel, ball and tip of each stretch: sums over [start, stop) by reduceat, all at once
    points = np.concatenate((heel, ball, tip), axis=1)
    cuts = np.stack((starts, stops), axis=1).ravel()
    sums = np.add.reduceat(np.vstack((points, np.zeros((1, 9)))), cuts, axis=0)[0::2]
    means = sums / (stops - starts)[:, None]
    return [Plant(side, float(frames[a]), float(frames[b - 1]), m[0:3], m[3:6], m[6:9])
            for a, b, m in zip(starts, stops, means)]


def _plants(body: Body, pose_world: np.ndarray, tails_world: np.ndarray, frames, fps, world_scale) -> list[Plant]:
    sk, rm = body.skeleton, body.rigmap
    try:
        leg = character_frame(sk, rm).leg_length * world_scale
    except (InputError, ValueError):
        return []
    out = []
    for side in FOOT_SIDES:
        foot = rm.get(f"foot.{side}")
        if not foot or not sk.has(foot):
            continue
        i = sk.index(foot)
        toe = rm.get(f"toe.{side}")
        tip = tails_world[:, sk.index(toe)] if toe and sk.has(toe) else tails_world[:, i]
        out += foot_plants(pose_world[:, i], tails_world[:, i], tip, frames, fps, PLANT_SPEED * leg, side)
    return sorted(out, key=lambda p: p.first)


def build_ghost(clip: Clip, body: Body, overlays: Overlays = NO_OVERLAYS) -> Ghost:
    """The :class:`Ghost` of ``clip`` on ``body``, with the generator's ``overlays``."""
    sk = body.skeleton
    frames = display_frames(clip)
    locations, rotations, scales = channels_at(clip, sk, frames, body.rotation_modes)
    pose = sk.fk(locations, rotations, scales)
    worlds = object_worlds(clip, body, frames, still=True)
    heads = _apply(worlds, pose[..., :3, 3])
    tails = _apply(worlds, sk.tails_of(pose))
    drawn = [sk.index(n) for n in body.drawn if sk.has(n)] or list(range(len(sk)))
    hips = body.rigmap.get("hips")
    pelvis = heads[:, sk.index(hips)] if hips and sk.has(hips) else np.zeros((0, 3))
    world_scale = float(np.linalg.norm(np.asarray(body.world, float)[:3, 0]))
    ghost = Ghost(
        name=body.name,
        generator=clip.generator,
        frames=frames,
        key_frames=np.asarray(clip.frames, float).copy(),
        bone_names=[sk.names[i] for i in drawn],
        heads=heads[:, drawn],
        tails=tails[:, drawn],
        pelvis=pelvis,
    )
    found = overlays.plants(clip, body) if overlays.plants is not None else None
    ghost.plants = found if found is not None else _plants(body, heads, tails, frames, clip.fps, world_scale)
    if overlays.grip is not None:
        grip = overlays.grip(body, pose)
        ghost.grip = None if grip is None else _apply(worlds, grip[:, None])[:, 0]
    return ghost


def build_ghosts(clips: list[Clip], bodies: list[Body], overlays: Overlays = NO_OVERLAYS) -> list[Ghost]:
    """One ghost per (Clip, Body) pair, in the generator's order of armatures."""
    if len(clips) != len(bodies):
        raise ValueError(f"{len(clips)} clips for {len(bodies)} armatures")
    ghosts = [build_ghost(clip, body, overlays) for clip, body in zip(clips, bodies)]
    grips = [g.grip for g in ghosts]
    if len(ghosts) == 2 and all(g is not None and len(g) for g in grips) and len(grips[0]) == len(grips[1]):
        # the point of contact: the middle of the two grips over the frames where they hold each other
        gap = np.linalg.norm(grips[0] - grips[1], axis=1)
        held = gap <= max(MEET_DISTANCE * float(np.max(gap)), 1e-9)
        meeting = 0.5 * (grips[0][held] + grips[1][held]).mean(axis=0)
        for g in ghosts:
            g.meeting = meeting
    return ghosts
