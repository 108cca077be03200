"""Where each held foot goes: one placement per plant, a foot pose per frame, blends between.

Kovar, Schreiner & Gleicher, "Footskate cleanup for motion capture editing" (SCA 2002), hold each
footplant's constrained point at one position for the whole plant (they take a weighted average of
the point's positions over it) and spread the adjustment smoothly over the neighbouring frames.
Here, per plant:

* the *placement*: the foot's mean orientation and position over the frames where heel and ball
  are both down (the flat part) — moved, where a leg could not reach it, to the nearest spot
  every frame's leg reaches, within the area the source's foot covered (:func:`.reach.reachable_shift`),
  then lowered or raised until its lowest sole point touches the
  floor (the ground, or the motion's own level) — a foot over a step edge rests on the higher side,
  except that a foot held up by its toes alone (the toes over a higher step) rests its heel on its
  own floor and tilts its toes up until they clear (RECON: the source's foot placement is kept,
  not moved off the edge);
* per frame, the foot rolls as the source's does: before the flat part it turns about the held
  heel (heel strike), after it about the held ball (toe-off), with the source's own pitch; the
  small turn between the source's foot on the first (last) flat frame and the placement is
  eased in by ``w`` (0 at the plant's ends, 1 on the flat part, smoothstep between), so the ball
  lands where the placement puts it and the heel leaves from there; on the flat part the foot
  keeps the placement's orientation;
* between plants the correction of the foot (rotation and ankle offset) fades out after a plant
  and in before the next over ``blend`` frames; a lift shorter than two blends is one smooth
  interpolation from one plant's correction to the next.

A plant with one point only (no flat part) holds that point where it was on average, on the floor;
the foot's orientation is the source's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from ..curves import smoothstep
from .contacts import Plant
from .feet import BALL, HEEL, Feet
from .floor import Floor

BEARING = 3  # the first samples of a placed foot (heel, mid-foot, ball) bear its weight; the rest are toes
MAX_TOES_UP = np.radians(60.0)


@dataclass
class Placement:
    """A plant's held foot: orientation ``rotation (4,)`` (quaternion, armature space), held heel
    and ball ``(3,)`` each, the toe tip ``(3,)`` (for the ghost), and the frames (clip rows)
    treated as flat: ``flat_first``, ``flat_last`` (−1 when the plant has no flat part). A plant
    shortened for reach keeps the placement it was found with."""

    rotation: np.ndarray
    heel: np.ndarray
    ball: np.ndarray
    tip: np.ndarray
    flat_first: int
    flat_last: int


@dataclass
class FootTrack:
    """The source's foot of one side, ``rotation (F, 4)`` and ``ankle (F, 3)``, and its toe tip
    in the foot bone's frame ``tip_local (F, 3)`` (the toe bends)."""

    rotation: np.ndarray
    ankle: np.ndarray
    tip_local: np.ndarray


def quat_mean(q: np.ndarray) -> np.ndarray:
    """Mean rotation of quaternions ``(n, 4)`` (signs aligned to the first), unit."""
    q = np.asarray(q, float)
    signs = np.where(q @ q[0] < 0, -1.0, 1.0)
    return tf.quat_normalize(np.sum(q * signs[:, None], axis=0))


def _flat_span(plant: Plant) -> tuple[int, int]:
    """First and last frame (indices into the plant) of its flat part; where heel and ball never
    overlap but both touch, the frames where one hands over to the other; ``(-1, -1)`` for a plant
    of one point."""
    both = np.flatnonzero(plant.points.all(axis=1))
    if both.size:
        return int(both[0]), int(both[-1])
    heel, ball = np.flatnonzero(plant.points[:, HEEL]), np.flatnonzero(plant.points[:, BALL])
    if heel.size and ball.size:
        a, b = sorted((int(heel[-1]), int(ball[0]))) if heel[0] < ball[0] else sorted((int(ball[-1]), int(heel[0])))
        return a, b
    return -1, -1


def place(plant: Plant, track: FootTrack, feet: Feet, floor: Floor, level: float, shift=(0.0, 0.0)) -> Placement:
    """The held foot of ``plant``, moved horizontally by ``shift`` (2,); its lowest sole point gets
    gap ``level`` above ``floor``."""
    leg = feet.legs[plant.side]
    sole, tip_sole = feet.sole[plant.side], feet.tip_sole[plant.side]
    frames = plant.frames
    first, last = _flat_span(plant)
    ref = frames[first:last + 1] if first >= 0 else frames
    rot = quat_mean(track.rotation[ref])
    m = tf.quat_to_mat3(rot)
    tip_local = np.mean(track.tip_local[ref], axis=0)
    heel_off, ball_off, tip_off = m @ leg.heel_local, m @ leg.ball_local, m @ tip_local
    src_rot = tf.quat_to_mat3(track.rotation[ref])
    src_heel = track.ankle[ref] + src_rot @ leg.heel_local
    src_ball = track.ankle[ref] + src_rot @ leg.ball_local
    if first >= 0:
        ankle = 0.5 * ((src_heel.mean(axis=0) - heel_off) + (src_ball.mean(axis=0) - ball_off))
        offsets = np.array([heel_off, 0.5 * (heel_off + ball_off), ball_off, 0.5 * (ball_off + tip_off), tip_off])
        soles = np.array([sole[HEEL], 0.5 * (sole[HEEL] + sole[BALL]), sole[BALL],
                          0.5 * (sole[BALL] + tip_sole), tip_sole])
    else:  # one point: it alone is held, at its mean position
        point = HEEL if plant.points[:, HEEL].any() else BALL
        offset = heel_off if point == HEEL else ball_off
        src = src_heel if point == HEEL else src_ball
        ankle = src.mean(axis=0) - offset
        offsets, soles = offset[None], np.array([sole[point]])
    ankle = ankle + np.array([shift[0], shift[1], 0.0])
    ankle = ankle + np.array([0.0, 0.0, level - np.min(floor.gaps(ankle + offsets, soles))])
    if first >= 0 and np.min(floor.gaps(ankle + offsets[:BEARING], soles[:BEARING])) > level + 1e-9:
        rot, ankle = _toes_up(rot, ankle, offsets, soles, floor, level)
        m = tf.quat_to_mat3(rot)
        heel_off, ball_off, tip_off = m @ leg.heel_local, m @ leg.ball_local, m @ tip_local
    rows = (plant.first + first, plant.first + last) if first >= 0 else (-1, -1)
    return Placement(rot, ankle + heel_off, ankle + ball_off, ankle + tip_off, *rows)


def _toes_up(rot, ankle, offsets, soles, floor: Floor, level: float):
    """A flat foot held up by its toes (on a higher step) instead rests its heel on its own floor
    and tilts its toes up about the heel until they clear (``offsets (5, 3)``: heel … toe tip from
    the ankle; ``soles (5,)``). Returns the tilted rotation and ankle."""
    ankle = ankle + np.array([0.0, 0.0, level - np.min(floor.gaps(ankle + offsets[:BEARING], soles[:BEARING]))])
    heel = ankle + offsets[0]
    forward = offsets[-1] - offsets[0]
    forward[2] = 0.0
    forward /= max(np.linalg.norm(forward), 1e-12)
    axis = np.cross(forward, [0.0, 0.0, 1.0])
    pitch = 0.0
    for _ in range(3):  # the toes move back a little as they rise: measure again where they are
        turn = tf.quat_to_mat3(tf.quat_from_axis_angle(axis, pitch))
        points = heel + (offsets - offsets[0]) @ turn.T
        depth = level - floor.gaps(points[BEARING:], soles[BEARING:])
        reach = np.maximum(np.linalg.norm((points[BEARING:] - heel)[:, :2], axis=1), 1e-9)
        pitch += float(np.max(np.arcsin(np.clip(np.maximum(depth, 0.0) / reach, 0.0, 1.0))))
    pitch = min(pitch, MAX_TOES_UP)
    turn = tf.quat_from_axis_angle(axis, pitch)
    return tf.quat_mul(turn, rot), heel + tf.quat_rotate(turn, ankle - heel)


def _flat_rows(plant: Plant, placement: Placement) -> tuple[int, int]:
    """The placement's flat part in the plant's own frame indices (possibly outside ``0 … n−1``
    when the plant was shortened)."""
    return placement.flat_first - plant.first, placement.flat_last - plant.first


def _held_weights(plant: Plant, placement: Placement) -> np.ndarray:
    """``w (n,)``: 0 at the plant's ends, 1 on its flat part (smoothstep between)."""
    n = plant.length
    if placement.flat_first < 0:
        return np.zeros(n)
    first, last = _flat_rows(plant, placement)
    k = np.arange(n)
    w = np.ones(n)
    before, after = k < first, k > last
    w[before] = smoothstep(k[before] / max(first, 1))
    w[after] = smoothstep((n - 1 - k[after]) / max(n - 1 - last, 1))
    return w


def _pivots(plant: Plant, placement: Placement) -> np.ndarray:
    """Which point is held on each frame of the plant (HEEL or BALL): before the flat part the
    heel if it is down, after it the ball if it is down, on it the heel."""
    heel, ball = plant.points[:, HEEL], plant.points[:, BALL]
    if placement.flat_first < 0:
        return np.where(heel, HEEL, BALL)
    first, last = _flat_rows(plant, placement)
    k = np.arange(plant.length)
    return np.where(k < first, np.where(heel, HEEL, BALL), np.where(k > last, np.where(ball, BALL, HEEL), HEEL))


def held_foot(plant: Plant, placement: Placement, track: FootTrack, feet: Feet) -> tuple[np.ndarray, np.ndarray]:
    """The foot's rotation ``(n, 4)`` and ankle ``(n, 3)`` on the plant's frames: flat, the
    placement's orientation; before and after the flat part, the source's roll turned by a share
    ``w`` of the difference between the placement and the source's first (last) flat frame, so
    the roll joins the flat part without a jump."""
    leg = feet.legs[plant.side]
    src = track.rotation[plant.first:plant.last + 1]
    rot = src.copy()
    if placement.flat_first >= 0:
        first, last = _flat_rows(plant, placement)
        k = np.arange(plant.length)
        w = _held_weights(plant, placement)
        rot[(k >= first) & (k <= last)] = placement.rotation
        for part, edge in ((k < first, placement.flat_first), (k > last, placement.flat_last)):
            if part.any():
                join = tf.quat_mul(placement.rotation, tf.quat_conj(track.rotation[edge]))
                turn = tf.quat_slerp(tf.quat_identity((int(part.sum()),)), np.broadcast_to(join, (int(part.sum()), 4)),
                                     w[part])
                rot[part] = tf.quat_mul(turn, src[part])
    pivot = _pivots(plant, placement)
    local = np.where((pivot == HEEL)[:, None], leg.heel_local, leg.ball_local)
    target = np.where((pivot == HEEL)[:, None], placement.heel, placement.ball)
    ankle = target - np.einsum("nij,nj->ni", tf.quat_to_mat3(rot), local)
    return rot, ankle


def blend_between(rotation: np.ndarray, ankle: np.ndarray, track: FootTrack, held: np.ndarray, blend: int) -> None:
    """Fill the frames not ``held`` (F,) of one foot's ``rotation (F, 4)`` and ``ankle (F, 3)``
    (in place) with the source's foot carried by corrections that fade from the held frames' over
    ``blend`` frames (see the module's docstring)."""
    n = len(held)
    held_idx = np.flatnonzero(held)
    if held_idx.size == 0:
        rotation[:] = track.rotation
        ankle[:] = track.ankle
        return
    corr_rot = tf.quat_mul(rotation, tf.quat_conj(track.rotation))  # (F, 4), meaningful on held frames
    corr_ankle = ankle - track.ankle
    free = np.flatnonzero(~held)
    if free.size == 0:
        return
    # the held frame before and after each free frame (−1 / n: none)
    before = np.searchsorted(held_idx, free, side="right") - 1
    prev = np.where(before >= 0, held_idx[np.maximum(before, 0)], -1)
    nxt_i = before + 1
    nxt = np.where(nxt_i < held_idx.size, held_idx[np.minimum(nxt_i, held_idx.size - 1)], n)
    fade = float(blend + 1)
    w_prev = np.where(prev >= 0, 1.0 - smoothstep((free - prev) / fade), 0.0)
    w_next = np.where(nxt < n, 1.0 - smoothstep((nxt - free) / fade), 0.0)
    short = (prev >= 0) & (nxt < n) & (nxt - prev <= 2 * fade)
    u = smoothstep((free - prev) / np.maximum(nxt - prev, 1))
    w_prev = np.where(short, 1.0 - u, w_prev)
    w_next = np.where(short, u, w_next)
    identity = tf.quat_identity((free.size,))
    r_prev = corr_rot[np.maximum(prev, 0)]
    r_next = corr_rot[np.minimum(nxt, n - 1)]
    # a short lift interpolates one correction into the other; a long one fades each toward none
    r = np.where(short[:, None], tf.quat_slerp(r_prev, r_next, u),
                 tf.quat_mul(tf.quat_slerp(identity, r_prev, w_prev), tf.quat_slerp(identity, r_next, w_next)))
    a_prev = corr_ankle[np.maximum(prev, 0)]
    a_next = corr_ankle[np.minimum(nxt, n - 1)]
    rotation[free] = tf.quat_normalize(tf.quat_mul(r, track.rotation[free]))
    ankle[free] = track.ankle[free] + w_prev[:, None] * a_prev + w_next[:, None] * a_next
