"""Meetings: two walkers whose curves end near each other, facing, stop face to face and shake
hands with the handshake generator (Deglorie et al. 2015: its phases, arbiter and solvers).

* **Pairs.** Curve ends at most ``greet_distance_m`` apart are paired nearest first, each walker
  once. A pair meets when each walker's curve ends heading toward the other, within the
  handshake's ``max_facing_deg``; otherwise both walk on to their curves' ends and the report says
  why (a walker left without a partner is reported with the nearest curve end).
* **Where they stop.** On the line between the two curve ends, about its middle, as far apart as
  the handshake reaches without a step (the handshake's step would slide the body: a walker
  stops at a distance where none is needed). That distance is read from the handshake itself: a
  probe with both characters at rest a known distance apart says how far each would step.
* **How they get there.** Each walker's curve is cut where it still leads toward its spot, joined
  to a short straight run along the facing direction, so the walk ends standing, facing the other.
* **The handshake** starts once both stand. Each character's rest pose for the handshake is its
  last pose of the walk (the skeleton "re-rested" there: the handshake's channels are relative to
  it), so its channels compose onto the walk's: basis = basis_walk_end · basis_handshake.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..errors import InputError
from ..frames import character_frame
from ..handshake import generate_handshake
from ..skeleton import Skeleton
from ..walk import generate_path_walk

PROBE_M = 0.8  # the probe stands the two this far apart (m, root to root)
PROBE_WALK_LEGS = 2.0  # a walker's standing pose is read from a walk this many leg lengths long
PROBES = 4  # at most this many probes
PROBE_STAND_S = 1.0  # … that stands this long first (its first frame before any weight shift)
SPARE_M = 0.01  # the spots are this much closer than the probe's no-step distance (m)
LEAD_M = 0.4  # each walker's last straight run toward its partner (m)
JOIN_AHEAD_M = 0.05  # the curve is cut where the run still lies this far ahead of it (m)
CUT_STEP_M = 0.05


@dataclass
class Meeting:
    """Walkers ``a`` (the initiator) and ``b`` stop at ``spots`` (2, 2) world m facing ``facing``
    (2, 2) unit vectors, ``gap`` m apart, and shake hands with ``settings``."""

    a: int
    b: int
    spots: np.ndarray
    facing: np.ndarray
    gap: float
    settings: object


def pair_walkers(ends: np.ndarray, headings: np.ndarray, names: list[str], distance: float,
                 max_facing_deg: float) -> tuple[list[tuple[int, int]], dict]:
    """(pairs (a, b) that meet, {walker index: why it does not}) from the curve ends (A, 2) and
    end headings (A, 2) in world space (module docstring)."""
    n = len(ends)
    gaps = np.linalg.norm(ends[:, None] - ends[None], axis=-1)
    cos_max = np.cos(np.radians(max_facing_deg))
    pairs, why, taken = [], {}, set()
    i, j = np.triu_indices(n, 1)
    order = np.argsort(gaps[i, j], kind="stable")
    for a, b in zip(i[order].tolist(), j[order].tolist()):
        if gaps[a, b] > distance:
            break
        if a in taken or b in taken:
            continue
        toward = (ends[b] - ends[a]) / max(gaps[a, b], 1e-9)
        away = [w for w, d in ((a, toward), (b, -toward)) if float(headings[w] @ d) < cos_max]
        if away:
            for w in (a, b):
                why.setdefault(w, f"its curve ends {gaps[a, b]:.2f} m from {names[b if w == a else a]}'s, but "
                                  f"{' and '.join(names[x] for x in away)} {'does' if len(away) == 1 else 'do'} "
                                  "not face the other: walks on")
            continue
        pairs.append((a, b))
        taken.update((a, b))
    for w in range(n):
        if w in taken or w in why:
            continue
        others = np.delete(np.arange(n), w)
        if not len(others):
            why[w] = "no other walker to greet"
            continue
        k = int(others[np.argmin(gaps[w, others])])
        free = " (already greeting another)" if gaps[w, k] <= distance else ""
        why[w] = f"the nearest curve end is {names[k]}'s, {gaps[w, k]:.2f} m away{free}: too far to greet"
    return pairs, why


def standing(skeleton: Skeleton, rigmap, params) -> Skeleton:
    """The skeleton re-rested at the walker's standing pose (its walk's first frame; the walk
    stops in the same pose), at the origin, facing +x: what a handshake after the walk starts from."""
    leg = character_frame(skeleton, rigmap).leg_length
    probe = dataclasses.replace(params, frame_start=1, stand_s=PROBE_STAND_S, root_motion="BONE")
    clip = generate_path_walk(skeleton, rigmap, np.array([[0.0, 0.0, 0.0], [PROBE_WALK_LEGS * leg, 0.0, 0.0]]),
                              None, probe)
    return rested_at(skeleton, clip, 0)


def handshake_settings(handshake, rest: tuple, stood: tuple):
    """The handshake's settings for two walkers: its point of contact where the handshake puts it
    for the two characters in their rest poses (``contact_drop_forearms`` is measured from the rest
    poses' elbows; a walker's arms hang lower than most rest poses hold them). ``rest``, ``stood``:
    ((skeleton, rigmap), …) at rest and standing (:func:`standing`)."""
    lower = []
    for (sk, rm), (st, _) in zip(rest, stood):
        elbow, forearm = rm.index(sk, "forearm.R"), float(sk.lengths[rm.index(sk, "forearm.R")])
        lower.append((sk.heads[elbow, 2] - st.heads[elbow, 2], forearm))
    drop = handshake.contact_drop_forearms - np.mean([d for d, _ in lower]) / np.mean([f for _, f in lower])
    return dataclasses.replace(handshake, contact_drop_forearms=float(max(drop, 0.0)))


def meeting_gap(a: tuple, b: tuple, handshake) -> float:
    """How far apart (m, root to root) two standing characters ((skeleton, rigmap), from
    :func:`standing`: at the origin facing +x) stand to shake hands without a step: probes from
    :data:`PROBE_M` apart, facing, each closer by the steps the last one asked for."""
    probe = dataclasses.replace(handshake, neutral_frames=1, dummy_frames=2, response_frames=0, approach_frames=2,
                                shake_frames=2, secondary_shakes=0, retreat_frames=2, hold_frames=0)
    gap = PROBE_M
    for _ in range(PROBES):
        face = np.diag([-1.0, -1.0, 1.0, 1.0])
        face[0, 3] = gap
        _, _, report = generate_handshake((a[0], a[1], np.eye(4)), (b[0], b[1], face), probe)
        steps = report["step_initiator_m"] + report["step_partner_m"]
        if steps <= 0.0:
            break
        gap -= steps
    return gap - SPARE_M


def meeting_of(a: int, b: int, ends: np.ndarray, gap: float, settings) -> Meeting:
    """The spots of a pair: the middle of their curve ends, ``gap`` apart along the line between
    them, each facing the other."""
    u = ends[b] - ends[a]
    u = u / max(np.linalg.norm(u), 1e-9)
    mid = 0.5 * (ends[a] + ends[b])
    spots = np.array([mid - 0.5 * gap * u, mid + 0.5 * gap * u])
    return Meeting(a, b, spots, np.array([u, -u]), gap, settings)


def approach(points_world: np.ndarray, spot: np.ndarray, facing: np.ndarray) -> np.ndarray:
    """A walker's curve (N, 3) world, cut and led to ``spot`` along ``facing`` (module docstring):
    (M, 3) world, the new points at the cut's height."""
    p = np.asarray(points_world, float)
    seg = np.linalg.norm(np.diff(p[:, :2], axis=0), axis=1)
    arc = np.concatenate(([0.0], np.cumsum(seg)))
    lead_in = spot - LEAD_M * facing
    s = arc[-1]
    while s > 0.0:
        at = np.array([np.interp(s, arc, p[:, k]) for k in range(3)])
        k = min(int(np.searchsorted(arc, s, "right")) - 1, len(seg) - 1)
        tangent = (p[k + 1, :2] - p[k, :2]) / max(seg[k], 1e-9)
        if float((lead_in - at[:2]) @ tangent) >= JOIN_AHEAD_M:
            break
        s = max(s - CUT_STEP_M, 0.0)
    at = np.array([np.interp(s, arc, p[:, k]) for k in range(3)])
    keep = p[arc < s - 1e-9]
    z = at[2]
    tail = np.array([at, [lead_in[0], lead_in[1], z], [spot[0], spot[1], z]])
    return np.concatenate([keep, tail])


def rested_at(skeleton: Skeleton, clip: Clip, frame: int = -1) -> Skeleton:
    """The skeleton with its rest pose where the clip's ``frame`` has it (armature space)."""
    pose = skeleton.fk(clip.locations[frame:frame + 1 or None], clip.rotations[frame:frame + 1 or None],
                       None if clip.scales is None else clip.scales[frame:frame + 1 or None])[0]
    return Skeleton(skeleton.names, skeleton.parents, pose, skeleton.lengths, list(skeleton.inherit_rotation),
                    list(skeleton.inherit_scale), list(skeleton.local_location), list(skeleton.connected))


def compose_onto(clip: Clip, hs: Clip) -> tuple[np.ndarray, np.ndarray]:
    """(locations, rotations) of the handshake clip ``hs`` made on the re-rested skeleton, as
    channels of the original one: T(l_e) R(q_e) · T(l_h) R(q_h) = T(l_e + R(q_e) l_h) R(q_e q_h),
    with (l_e, q_e) the walk's last frame."""
    l_e, q_e = clip.locations[-1], clip.rotations[-1]
    loc = l_e[None] + tf.quat_rotate(np.broadcast_to(q_e, hs.rotations.shape), hs.locations)
    rot = tf.quat_mul(np.broadcast_to(q_e, hs.rotations.shape), hs.rotations)
    return loc, rot


def hold_until(clip: Clip, last_frame: float) -> Clip:
    """The clip with its last frame held until ``last_frame``."""
    extra = int(round(last_frame - clip.frames[-1]))
    if extra <= 0:
        return clip
    return extend(clip, np.repeat(clip.locations[-1:], extra, axis=0), np.repeat(clip.rotations[-1:], extra, axis=0))


def extend(clip: Clip, locations: np.ndarray, rotations: np.ndarray, keyed: Clip | None = None) -> Clip:
    """The clip with frames after its last (the object channels and scales held); ``keyed``: a clip
    of the same bones whose keyed bones are keyed too (the handshake's arms, which the walk does not key)."""
    m = len(locations)
    frames = clip.frames[-1] + 1 + np.arange(m, dtype=float)

    def held(a):
        return None if a is None else np.concatenate([a, np.repeat(a[-1:], m, axis=0)])

    out = Clip(clip.bone_names, np.concatenate([clip.frames, frames]), clip.fps,
               np.concatenate([clip.locations, locations]), np.concatenate([clip.rotations, rotations]),
               held(clip.scales), clip.key_location | (False if keyed is None else keyed.key_location),
               clip.key_rotation | (False if keyed is None else keyed.key_rotation), held(clip.object_locations),
               held(clip.object_rotations), clip.generator, dict(clip.metrics))
    return out.with_continuity()


def shake_hands(walks: tuple[Clip, Clip], rigs: tuple, worlds: tuple, handshake, fps: float):
    """(clip a, clip b, report): both walks held to the later one's end, then the handshake on
    both. ``rigs``: ((skeleton, rigmap), (skeleton, rigmap)); ``worlds``: the armature objects' world
    matrices (4, 4), the walk's object motion folded in at its end."""
    start = max(walks[0].frames[-1], walks[1].frames[-1]) + 1
    held = [hold_until(c, start - 1) for c in walks]
    posed = []
    for clip, (sk, rm), world in zip(held, rigs, worlds):
        w = np.asarray(world, float)
        if clip.object_locations is not None:
            w = w @ tf.compose(clip.object_locations[-1], clip.object_rotations[-1])
        posed.append((rested_at(sk, clip), rm, w))
    hp = dataclasses.replace(handshake, frame_start=int(start), fps=fps)
    try:
        hs_a, hs_b, report = generate_handshake(posed[0], posed[1], hp)
    except InputError as err:
        return held[0], held[1], {"error": str(err)}
    out = [extend(clip, *compose_onto(clip, hs), keyed=hs) for clip, hs in zip(held, (hs_a, hs_b))]
    return out[0], out[1], report
