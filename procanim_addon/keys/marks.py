"""What the keys say: contacts, lift-offs, passing positions and phases, as key types and pose markers.

A :class:`Mark` is a frame with a meaning: the keys on it get its key type (``EXTREME`` for a heel
strike, a lift-off or a phase boundary, ``BREAKDOWN`` for a passing position), its name becomes a
pose marker on the action (``"L contact"``, ``"R lift"``, ``"shake"``), and when it is *forced*
the curves in its scope get a key there whatever the tolerance.

Feet: :func:`feet` finds each foot's sole points (heel, ball, toe tip, rigid on the foot and toe
bones, as the walk defines them) from the rig's roles; :func:`contact_spans` finds when a foot is
planted from where those points are (near the ground and still); :func:`walk_marks` turns the
spans into contact and lift-off marks and the passing position between them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from ..handshake.phases import Phase
from ..skeleton import Skeleton
from ..walk.character import read_character
from ..walk.pose import fk_of

CONTACT_HEIGHT_M = 0.01  # a sole point this close to the ground may be planted
CONTACT_SPEED_M_S = 0.25  # ... when it moves slower than this
MIN_CONTACT_FRAMES = 3


@dataclass(frozen=True)
class Mark:
    """A frame with a meaning. ``key_type``: Blender's key type for the keys on ``frame``;
    ``name``: a pose marker's name ('' = none); ``forced``: curves are keyed on it — when ``foot`` is
    given, the foot's own curves (those that move nothing but what the foot bone moves: the foot and
    toe bones, an IK foot control; ``chain``: every curve that moves the foot, from the root — the
    whole contact pose), else those of ``bones``, else every curve."""

    frame: float
    key_type: str = "EXTREME"
    name: str = ""
    forced: bool = True
    bones: tuple[str, ...] | None = None
    foot: str = ""
    chain: bool = False


@dataclass(frozen=True)
class Foot:
    """A foot: its side (``'L'``/``'R'``) and its sole points ``(bone name, rest position (3,),
    armature space)``."""

    side: str
    points: tuple[tuple[str, tuple[float, float, float]], ...]


@dataclass(frozen=True)
class Contact:
    """A foot planted from ``start`` to ``end`` (frames, inclusive)."""

    foot: Foot
    start: float
    end: float


def feet(skeleton: Skeleton, rigmap) -> list[Foot]:
    """The feet of a rig with leg roles (``thigh``, ``shin``, ``foot``, optional ``toe``): their sole
    points as the walk places them (:func:`procanim_addon.walk.character.read_character`)."""
    char = read_character(skeleton, rigmap)
    out = []
    for side in ("L", "R"):
        f, t = char.foot[side], char.toe[side]
        g = char.feet[side]
        toe = skeleton.names[t] if t is not None else skeleton.names[f]
        points = ((skeleton.names[f], tuple(map(float, g.heel))), (toe, tuple(map(float, g.ball))),
                  (toe, tuple(map(float, g.tip))))
        out.append(Foot(side, points))
    return out


def contact_spans(points: np.ndarray, ground: np.ndarray, fps: float, height: float = CONTACT_HEIGHT_M,
                  speed: float = CONTACT_SPEED_M_S, min_frames: int = MIN_CONTACT_FRAMES) -> list[tuple[int, int]]:
    """Frame index spans ``(start, end)`` (inclusive) in which a foot is planted: its lowest sole point
    ``points`` ``(F, k, 3)`` is within ``height`` (m) of the ground heights ``ground`` ``(F, k)`` and
    moves slower than ``speed`` (m/s, horizontally); spans shorter than ``min_frames`` are dropped."""
    pts = np.asarray(points, float)
    gap = pts[..., 2] - np.asarray(ground, float)
    low = np.argmin(gap, axis=1)
    rows = np.arange(len(pts))
    v = np.zeros(len(pts))
    if len(pts) > 1:
        step = np.linalg.norm(np.diff(pts[:, :, :2], axis=0), axis=-1) * fps  # (F-1, k)
        v[1:] = step[rows[1:] - 1, low[1:]]
        v[0] = step[0, low[0]]
    on = (gap[rows, low] < height) & (v < speed)
    edges = np.diff(np.concatenate([[0], on.astype(int), [0]]))
    starts, ends = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0] - 1
    return [(int(a), int(b)) for a, b in zip(starts, ends) if b - a + 1 >= min_frames]


def passing_frame(swing: np.ndarray, stance: np.ndarray) -> int:
    """Index of the frame where the swinging foot's point ``swing`` ``(n, 3)`` passes the planted
    foot's ``stance`` ``(n, 3)`` along the swing's horizontal direction of travel."""
    travel = swing[-1, :2] - swing[0, :2]
    norm = np.linalg.norm(travel)
    if norm < 1e-9:
        return len(swing) // 2
    ahead = (swing[:, :2] - stance[:, :2]) @ (travel / norm)
    return int(np.argmin(np.abs(ahead)))


def walk_marks(contacts: list[Contact], frames: np.ndarray, ankles: dict[str, np.ndarray]) -> list[Mark]:
    """Marks of a walk: each contact's first frame (``"<side> contact"``) and last frame
    (``"<side> lift"``) — Extreme keys, forced on the foot's own curves — and between a lift-off and
    the same foot's next contact, the frame it passes the other foot (Breakdown, forced on the foot's
    own curves too).
    A contact that starts on the first frame or ends on the last gets no marker there (it is not an
    event of the motion). ``ankles``: side → the foot's ankle position per frame ``(F, 3)``."""
    frames = np.asarray(frames, float)
    out: list[Mark] = []
    by_side: dict[str, list[Contact]] = {}
    for c in contacts:
        side = c.foot.side
        by_side.setdefault(side, []).append(c)
        if c.start > frames[0]:
            out.append(Mark(c.start, "EXTREME", f"{side} contact", True, None, side))
        if c.end < frames[-1]:
            out.append(Mark(c.end, "EXTREME", f"{side} lift", True, None, side))
    for side, spans in by_side.items():
        other = next((s for s in ankles if s != side), None)
        spans = sorted(spans, key=lambda c: c.start)
        for a, b in zip(spans[:-1], spans[1:]):
            i0, i1 = int(np.searchsorted(frames, a.end)), int(np.searchsorted(frames, b.start))
            if other is None or i1 - i0 < 2:
                continue
            k = passing_frame(ankles[side][i0 : i1 + 1], ankles[other][i0 : i1 + 1])
            if 0 < k < i1 - i0:
                out.append(Mark(float(frames[i0 + k]), "BREAKDOWN", "", True, None, side))
    return sorted(out, key=lambda m: m.frame)


def phase_marks(starts: list[tuple[float, str]], frames: np.ndarray) -> list[Mark]:
    """Marks at phase boundaries ``(frame, phase name)``: Extreme keys on every curve and a pose
    marker named after the phase (a phase starting on the first frame gets its marker, no forced key
    beyond the first key every curve has)."""
    return [Mark(float(f), "EXTREME", name, True, None) for f, name in starts if frames[0] <= f <= frames[-1]]


def sole_positions(skeleton: Skeleton, pose, foot: Foot) -> np.ndarray:
    """Positions ``(F, k, 3)`` of ``foot``'s sole points for armature-space pose matrices ``(F, B, 4, 4)``
    (or ``{bone index: (F, 4, 4)}`` of the bones that carry them)."""
    out = []
    for bone, point in foot.points:
        b = skeleton.index(bone)
        m = pose[b] if isinstance(pose, dict) else pose[:, b]
        local = np.linalg.inv(skeleton.matrix_local[b]) @ np.append(point, 1.0)
        out.append(m[:, :3, :3] @ local[:3] + m[:, :3, 3])
    return np.stack(out, axis=1)


def walk_contacts(skeleton: Skeleton, clip, foot_list: list[Foot], ground) -> tuple[list[Contact], list[Mark]]:
    """The contacts of a walk (``clip`` on ``skeleton``, keyed channels only — what the bake plays) on
    ``ground`` (anything with ``height(xy (N, 2)) → (z, normal, hit)``), and its marks
    (:func:`walk_marks`)."""
    loc = np.where(np.asarray(clip.key_location)[None, :, None], clip.locations, 0.0)
    rot = np.where(np.asarray(clip.key_rotation)[None, :, None], clip.rotations, [1.0, 0.0, 0.0, 0.0])
    pose = fk_of(skeleton, loc, tf.quat_normalize(rot), [skeleton.index(b) for f in foot_list for b, _ in f.points])
    contacts: list[Contact] = []
    ankles = {}
    for foot in foot_list:
        pts = sole_positions(skeleton, pose, foot)
        z, _, hit = ground.height(pts.reshape(-1, 3)[:, :2])
        z = np.where(hit, z, -np.inf).reshape(pts.shape[:2])
        for a, b in contact_spans(pts, z, clip.fps):
            contacts.append(Contact(foot, float(clip.frames[a]), float(clip.frames[b])))
        ankles[foot.side] = pts[:, 0]
    return contacts, walk_marks(contacts, clip.frames, ankles)


def handshake_marks(phase_starts: list[tuple[int, str]], frames: np.ndarray) -> list[Mark]:
    """Phase marks of one handshake character from its report's ``phase_starts_<who>`` (frame index,
    phase letter): every boundary after the first frame, named after the phase it starts
    (``dummy``, ``approach``, ``shake``, ``retreat``, ``neutral``)."""
    frames = np.asarray(frames, float)
    starts = [(float(frames[i]), Phase(letter).name.lower()) for i, letter in phase_starts if 0 < i < len(frames)]
    return phase_marks(starts, frames)
