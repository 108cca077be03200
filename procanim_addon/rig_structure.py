"""Rig roles by structure: the body's parts found from the bone tree and the rest pose.

A skeleton is read the way a person reads it; bone names play no part here except to break ties:

- the **pelvis** is where two leg chains and one spine chain meet: the deepest bone with two child
  chains that start high above the ground and reach down to it;
- a **leg** goes down to a **foot** that points forward: the first bone low on the leg that is
  more horizontal than vertical; the two bones above it are the shin and the thigh; the toe is the
  foot's child that points forward;
- **forward** is the horizontal feet → toes direction and **left** = up × forward, so left and
  right are the character's own (never an axis of the armature); the leg whose hip joint lies on
  that side is ``.L``;
- the **spine** climbs from the pelvis through bones on the mid-plane, always toward the highest
  point; the **head** ends it (an end marker that some exporters add above the head is skipped);
- the **arms** hang from the chest: the two branches of the spine that reach farthest to either
  side; the bone they hang from is the chest; clavicle (when the branch starts on the mid-plane),
  upper arm, forearm and hand follow in order;
- a **tail** is a mid-plane branch of the hips that reaches backward. When the pelvis hangs from a
  body bone that also carries the tail (Rigify's bird), that bone is the hips: it moves the body.

Up is +Z: the bridge hands the skeleton in its upright frame, where +Z is the scene's up whatever the
armature's own axes. A rig that stands along another axis even there (it lies in the scene) is found
too, with a note saying so; the generators refuse it until its object is turned to stand. Sizes are
fractions of the body height ``H`` (ground to the highest rest point) or of the leg length (hip
joint to ground); the thresholds below are the choices of this module, not measured constants.

Limits: one pair of legs (a quadruped's front legs are not found); a leg or arm whose segments are
split into twist bones along the chain is read as one bone per joint in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .skeleton import Skeleton

UP = np.array([0.0, 0.0, 1.0])

NEAR_GROUND = 0.08  # a leg chain reaches within 0.08·H of the ground …
HIP_HEIGHT = 0.2  # … from a bone whose head is at least 0.2·H above it
FOOT_LOW = 0.3  # a foot's head lies in the lowest 30 % of its leg
CLIMB = 0.01  # the spine goes on only toward a point more than 0.01·H higher
TIE = 0.02  # subtree tops within 0.02·H are a tie that names may break
SIDE_TIE = 0.05  # hip joints closer than 0.05·leg to the mid-plane cannot tell the sides apart
TAIL_REACH = 0.2  # a tail reaches at least 0.2·leg backward
MARKER_RATIO = 1.4  # a leaf above a bone 1.4× longer than the one below it is an end marker
KNEE_TIE = 0.005  # knees bent less than 0.5 % of the leg are straight: names decide left and right
FOOT_JOIN = 0.1  # a foot hanging elsewhere starts within 0.1 of the shin's length from the shin's end

SPINE_ROLES = ("spine", "chest", "neck", "head")
_END_NAME = re.compile(r"(_end|\.end|end_?site|nub)$", re.IGNORECASE)
_CAMEL_END = re.compile(r"[a-z]End$")


@dataclass
class Body:
    """What :func:`analyse` found: role → bone index, the character's frame, checks and notes.

    roles:        role → bone index (``thigh.L``, ``hips`` …)
    spine_bones:  bone indices from just above the hips up to the chest
    forward/left: unit vectors (the skeleton's space), ``None`` when no facing was found
    up:           the direction the body stands along (+Z unless it lies otherwise)
    up_name:      that direction's name when it is not +Z (``"+Y"`` …), else ``""``
    checks:       name → score in [0, 1] (how body-like the structure is; see :func:`body_checks`)
    notes:        sentences for the user (what was skipped or unsure)
    """

    roles: dict[str, int] = field(default_factory=dict)
    spine_bones: list[int] = field(default_factory=list)
    forward: np.ndarray | None = None
    left: np.ndarray | None = None
    up: np.ndarray = field(default_factory=lambda: UP.copy())
    up_name: str = ""
    checks: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        """Mean of the checks (0 when nothing was found)."""
        return float(np.mean(list(self.checks.values()))) if self.checks else 0.0


class _Tree:
    """The bone tree with rest geometry: children, heights along ``up`` (heads ``hh``, tails
    ``ht``), subtree height ranges, ground and body height."""

    def __init__(self, sk: Skeleton, hints: dict[int, str], up: np.ndarray):
        self.sk, self.hints, self.up = sk, hints, up
        self.heads, self.tails = sk.heads, sk.tails
        self.hh, self.ht = self.heads @ up, self.tails @ up
        n = len(sk)
        self.children: list[list[int]] = [[] for _ in range(n)]
        self.depth = np.zeros(n, int)
        for i, p in enumerate(sk.parents):
            if p >= 0:
                self.children[p].append(i)
                self.depth[i] = self.depth[p] + 1
        self.sub_lo = np.minimum(self.hh, self.ht)
        self.sub_hi = np.maximum(self.hh, self.ht)
        for i in range(n - 1, -1, -1):  # parents come first: fold children into parents
            p = sk.parents[i]
            if p >= 0:
                self.sub_lo[p] = min(self.sub_lo[p], self.sub_lo[i])
                self.sub_hi[p] = max(self.sub_hi[p], self.sub_hi[i])
        self.ground = float(np.min(self.sub_lo)) if n else 0.0
        self.height = float(np.max(self.sub_hi)) - self.ground if n else 0.0

    def points(self, i: int) -> np.ndarray:
        """Heads and tails of bone ``i`` and everything below it, ``(2k, 3)``."""
        sub = [i, *self.sk.descendants(i)]
        return np.concatenate([self.heads[sub], self.tails[sub]])

    def direction(self, i: int) -> np.ndarray:
        return self.tails[i] - self.heads[i]

    def hinted(self, candidates, roles) -> list[int]:
        return [c for c in candidates if self.hints.get(c) in roles]


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-12 else v * 0.0


def _horizontal(v: np.ndarray, up: np.ndarray = UP) -> np.ndarray:
    return v - (v @ up) * up


# ----------------------------------------------------------------------------- legs


def _leg_starts(t: _Tree, i: int) -> list[int]:
    """Children of ``i`` whose chains start high and reach the ground (leg candidates)."""
    low, high = t.ground + NEAR_GROUND * t.height, t.ground + HIP_HEIGHT * t.height
    return [c for c in t.children[i] if t.sub_lo[c] <= low and t.hh[c] >= high]


def find_pelvis(t: _Tree) -> tuple[int, list[int]] | None:
    """The deepest bone with two leg chains below it, and the starts of its two legs."""
    found = [(i, starts) for i in range(len(t.sk)) if len(starts := _leg_starts(t, i)) >= 2]
    if not found:
        return None
    pelvis, starts = max(found, key=lambda f: (t.depth[f[0]], -f[0]))
    # more than two: the two chains spanning the most height (helpers such as IK targets span less)
    starts = sorted(starts, key=lambda c: (t.hh[c] - t.sub_lo[c], len(t.sk.descendants(c))), reverse=True)
    return pelvis, starts[:2]


def _is_foot(t: _Tree, b: int, leg_top: float) -> bool:
    d = t.direction(b)
    horizontal = float(np.linalg.norm(_horizontal(d, t.up)))
    return t.hh[b] - t.ground <= FOOT_LOW * leg_top and horizontal > 0 and horizontal >= abs(d @ t.up)


def leg_chain(t: _Tree, start: int) -> tuple[list[int], int | None]:
    """Bones from ``start`` down toward the ground (always the child reaching lowest) up to and
    including the foot; the foot is ``None`` when no bone qualifies. A foot that hangs elsewhere
    (a game rig's IK foot under the root) is the foot whose head lies at the end of the chain."""
    leg_top = t.hh[start] - t.ground
    path = [start]
    while not _is_foot(t, path[-1], leg_top):
        kids = t.children[path[-1]]
        if not kids:
            return _detached_foot(t, path, leg_top)
        path.append(min(kids, key=lambda k: (t.sub_lo[k], -len(t.children[k]))))
    return path, path[-1]


def _detached_foot(t: _Tree, path: list[int], leg_top: float) -> tuple[list[int], int | None]:
    """The chain up to the bone whose tail a foot's head lies at (the nearest foot within
    :data:`FOOT_JOIN` of that bone's length), and that foot; ``(path, None)`` when there is none."""
    on_path = set(path)
    for k in range(len(path) - 1, 0, -1):
        end = t.tails[path[k]]
        reach = FOOT_JOIN * t.sk.lengths[path[k]]
        gap = np.linalg.norm(t.heads - end, axis=1)
        feet = [c for c in np.flatnonzero(gap <= reach) if c not in on_path and _is_foot(t, int(c), leg_top)]
        if feet:
            foot = int(min(feet, key=lambda c: gap[c]))
            return path[: k + 1] + [foot], foot
    return path, None


def _toe(t: _Tree, foot: int, forward: np.ndarray) -> int | None:
    """The foot's child that starts at the foot's end and points forward (the longest; names break
    ties)."""
    reach = 0.5 * t.sk.lengths[foot] + 1e-9
    kids = [
        k
        for k in t.children[foot]
        if _unit(t.direction(k)) @ forward > 0.5 and np.linalg.norm(t.heads[k] - t.tails[foot]) <= reach
    ]
    if not kids:
        return None
    named = t.hinted(kids, ("toe",))
    return named[0] if len(named) == 1 else max(kids, key=lambda k: t.sk.lengths[k])


def _forward(t: _Tree, feet: list[int], toes: list[int | None]) -> np.ndarray:
    """Horizontal feet → toes direction, summed over the feet (unit, or zero when undefined)."""
    total = np.zeros(3)
    for foot, toe in zip(feet, toes, strict=True):
        tip = t.tails[toe] if toe is not None else t.tails[foot]
        total += _horizontal(tip - t.heads[foot], t.up)
    return _unit(total)


# ----------------------------------------------------------------------------- spine, arms, tail


def _central(t: _Tree, i: int, centre: np.ndarray, left: np.ndarray, half_width: float) -> bool:
    return abs((t.heads[i] - centre) @ left) <= half_width and abs((t.tails[i] - centre) @ left) <= half_width


def spine_chain(t: _Tree, pelvis: int, exclude: set[int], is_central) -> list[int]:
    """From the pelvis up through mid-plane bones toward the highest point (names break near-ties)."""
    path = [pelvis]
    while True:
        b = path[-1]
        kids = [k for k in t.children[b] if k not in exclude and is_central(k)]
        if not kids:
            break
        best = max(kids, key=lambda k: t.sub_hi[k])
        near = [k for k in kids if t.sub_hi[best] - t.sub_hi[k] <= TIE * t.height]
        named = t.hinted(near, SPINE_ROLES)
        if len(near) > 1 and len(named) == 1:
            best = named[0]
        if t.sub_hi[best] <= max(t.hh[b], t.ht[b]) + CLIMB * t.height:
            break
        path.append(best)
    return path


def _is_end_marker(t: _Tree, path: list[int]) -> bool:
    """Is the last bone of the spine chain an exporter's end marker above the head?"""
    last, parent = path[-1], path[-2]
    if t.children[last]:
        return False
    name = t.sk.names[last]
    if _END_NAME.search(name) or _CAMEL_END.search(name):
        return True
    if t.hints.get(parent) == "head" and t.hints.get(last) != "head":
        return True
    if len(path) < 3 or t.hints.get(last) == "head":
        return False
    lengths = t.sk.lengths
    attached = np.linalg.norm(t.heads[last] - t.tails[parent]) <= 0.05 * lengths[parent] + 1e-9
    return bool(attached and lengths[parent] > MARKER_RATIO * lengths[path[-3]])


def _arm_chain(t: _Tree, start: int) -> list[int]:
    """Up to five bones from ``start``, always into the child whose bones reach farthest."""
    chain = [start]
    origin = t.heads[start]
    while len(chain) < 5 and t.children[chain[-1]]:
        kids = t.children[chain[-1]]
        chain.append(max(kids, key=lambda k: float(np.max(np.linalg.norm(t.points(k) - origin, axis=1)))))
    return chain


def find_arms(t: _Tree, path: list[int], exclude: set[int], centre, left, min_reach) -> dict[str, tuple[int, list]]:
    """Side (``L``/``R``) → (position on the spine chain it hangs from, its chain of bones).

    An arm is the branch of the spine (above the pelvis) that reaches farthest to that side, at
    least ``min_reach`` (m) from the mid-plane.
    """
    best: dict[str, tuple[float, int, int]] = {}
    on_path = set(path)
    for pos in range(1, len(path)):
        for k in t.children[path[pos]]:
            if k in on_path or k in exclude:
                continue
            lateral = (t.points(k) - centre) @ left
            for side, reach in (("L", float(np.max(lateral))), ("R", float(-np.min(lateral)))):
                if reach >= min_reach and reach > best.get(side, (0.0,))[0]:
                    best[side] = (reach, pos, k)
    return {side: (pos, _arm_chain(t, k)) for side, (_, pos, k) in best.items()}


def _arm_roles(t: _Tree, side: str, chain: list[int], centre, left) -> dict[str, int]:
    sign = 1.0 if side == "L" else -1.0
    first = chain[0]
    head_out = sign * (t.heads[first] - centre) @ left
    tail_out = sign * (t.tails[first] - centre) @ left
    roles = {}
    rest = chain
    if len(chain) >= 4 and head_out < 0.5 * tail_out:  # starts on the mid-plane: a clavicle
        roles[f"clavicle.{side}"] = first
        rest = chain[1:]
    for role, bone in zip(("upper_arm", "forearm", "hand"), rest, strict=False):
        roles[f"{role}.{side}"] = bone
    return roles


def _backward_reach(t: _Tree, i: int, origin: np.ndarray, forward: np.ndarray) -> float:
    return float(np.max((t.points(i) - origin) @ -forward))


def hips_and_tail(t: _Tree, pelvis: int, used: set[int], forward, leg: float, is_central) -> tuple[int, int | None]:
    """The hips bone (the pelvis, or the body bone above it that also carries a tail) and the tail."""

    def tails_of(bone, skip):
        kids = [c for c in t.children[bone] if c not in skip and is_central(c)]
        kids = [c for c in kids if _backward_reach(t, c, t.heads[bone], forward) >= TAIL_REACH * leg]
        return max(kids, key=lambda c: _backward_reach(t, c, t.heads[bone], forward)) if kids else None

    parent = int(t.sk.parents[pelvis])
    if parent >= 0 and t.hh[parent] - t.ground >= 0.5 * (t.hh[pelvis] - t.ground):
        tail = tails_of(parent, {pelvis})
        if tail is not None:
            return parent, tail
    return pelvis, tails_of(pelvis, used)


def _root(t: _Tree, hips: int, leg: float) -> int | None:
    """The nearest ancestor of the hips lying on the ground (a rig's root bone)."""
    p = int(t.sk.parents[hips])
    while p >= 0:
        if t.hh[p] - t.ground <= 0.1 * leg:
            return p
        p = int(t.sk.parents[p])
    return None


# ----------------------------------------------------------------------------- the whole body


#: the directions tried as "up" when the rig does not stand along +Z (e.g. a Y-up import whose
#: object was not rotated to stand)
_AXES = [np.array(v, float) for v in ((0, 0, 1), (0, 1, 0), (0, -1, 0), (1, 0, 0), (-1, 0, 0), (0, 0, -1))]
_AXIS_NAMES = ("+Z", "+Y", "−Y", "+X", "−X", "−Z")


def analyse(skeleton: Skeleton, hints: dict[int, str] | None = None) -> Body:
    """Find the body's roles in ``skeleton``'s rest pose; ``hints`` (bone index → role from a naming
    convention) only break ties. An empty :class:`Body` (with a note) when no pelvis is found.

    Up is +Z; when the rig does not stand along +Z (no complete body is found, or a poor one), the
    other axes are tried and the best-scoring body is kept, with a note.
    """
    best = analyse_along(skeleton, hints, _AXES[0])
    if best.checks.get("legs", 0.0) == 1.0 and best.score >= 0.9:
        return best
    for axis, name in zip(_AXES[1:], _AXIS_NAMES[1:], strict=True):
        body = analyse_along(skeleton, hints, axis)
        if (body.checks.get("legs", 0.0), body.score) > (best.checks.get("legs", 0.0), best.score):
            body.notes.append(f"the character stands along {name}, not up the scene's Z axis: it lies in the scene")
            body.up_name = name
            best = body
    return best


def analyse_along(skeleton: Skeleton, hints: dict[int, str] | None, up: np.ndarray) -> Body:
    """:func:`analyse` with ``up`` (a unit vector in armature space) given."""
    t = _Tree(skeleton, dict(hints or {}), up)
    body = Body(up=up)
    found = find_pelvis(t) if len(skeleton) else None
    if found is None:
        body.notes.append("no pelvis found: no bone has two legs reaching the ground below it")
        return body
    pelvis, starts = found
    legs = [leg_chain(t, s) for s in starts]
    leg_bones = {b for chain, _ in legs for b in chain}
    if _place_legs(t, body, pelvis, legs):
        hips = [body.roles["thigh.L"], body.roles["thigh.R"]]
    elif _facing_without_feet(t, body, legs):  # the arms and spine do not need the feet
        hips = [chain[0] for chain, _ in legs]
    else:
        return body
    _place_upper_body(t, body, pelvis, leg_bones, hips)
    body.checks = body_checks(skeleton, body.roles, body.forward, body.left, up)
    return body


def _place_legs(t: _Tree, body: Body, pelvis: int, legs) -> bool:
    """Feet → forward and left, legs → sides; False (with a note) when the feet are not found."""
    if any(foot is None or len(chain) < 3 for chain, foot in legs):
        body.notes.append("legs found but no foot pointing forward at the end of each, so the facing is unknown")
        return False
    feet = [foot for _, foot in legs]
    forward = _forward(t, feet, [None, None])
    toes = [_toe(t, f, forward) for f in feet]
    forward = _forward(t, feet, toes)
    if not np.any(forward):
        body.notes.append("the feet do not point forward in the rest pose")
        return False
    left = np.cross(t.up, forward)
    centre = t.heads[pelvis]
    lateral = [float((t.heads[chain[-3]] - centre) @ left) for chain, _ in legs]
    leg_len = float(t.hh[legs[0][0][-3]] - t.ground)
    order = (0, 1) if lateral[0] >= lateral[1] else (1, 0)
    if abs(lateral[0] - lateral[1]) < SIDE_TIE * leg_len:
        named = [k for k in (0, 1) if t.hints.get(legs[k][1], "").endswith(".L")]
        order = (named[0], 1 - named[0]) if len(named) == 1 else order
        body.notes.append("the hips are too narrow to tell left from right by geometry; names decided")
    for side, k in zip("LR", order, strict=True):
        chain, foot = legs[k]
        body.roles.update({f"thigh.{side}": chain[-3], f"shin.{side}": chain[-2], f"foot.{side}": foot})
        if toes[k] is not None:
            body.roles[f"toe.{side}"] = toes[k]
    body.forward, body.left = forward, left
    return True


def _facing_without_feet(t: _Tree, body: Body, legs) -> bool:
    """Left and forward from the two leg chains when their feet were not found: left runs across
    the tops of the legs, forward is the way the knees bend (names decide when the legs are
    straight; the notes say so). False when the legs start at the same place."""
    tops = [t.heads[chain[0]] for chain, _ in legs]
    across = _unit(_horizontal(tops[0] - tops[1], t.up))  # toward leg 0
    if not np.any(across):
        return False
    forward = np.cross(across, t.up)  # the facing in which leg 0 is the left one (left = up × forward)
    bend = 0.0
    for chain, _ in legs:  # the knees (the joints along each chain) lie ahead of the hip → end line
        top, line = t.heads[chain[0]], _unit(t.tails[chain[-1]] - t.heads[chain[0]])
        for b in chain[1:]:
            off = t.heads[b] - top
            bend += float(_horizontal(off - (off @ line) * line, t.up) @ forward)
    leg = float(t.hh[legs[0][0][0]] - t.ground)
    if abs(bend) > KNEE_TIE * leg:
        flip = bend < 0
    else:
        sides = {t.hints.get(b, "")[-2:] for b in legs[0][0]} & {".L", ".R"}
        flip = sides == {".R"}
        if not sides:
            body.notes.append("the legs are straight and unnamed: left and right are a guess")
    sign = -1.0 if flip else 1.0
    body.forward, body.left = sign * forward, sign * across
    body.notes.append("the facing comes from the knees (no feet found): the arms and spine are placed, not the legs")
    return True


def _place_upper_body(t: _Tree, body: Body, pelvis: int, leg_bones: set[int], hips: list[int]) -> None:
    """Spine chain, head, arms, chest, neck, hips, tail and root, once the facing is known;
    ``hips``: the two bones at the tops of the legs (hip joints)."""
    roles, left, forward = body.roles, body.left, body.forward
    centre = t.heads[pelvis]
    hip_width = float(abs((t.heads[hips[0]] - t.heads[hips[1]]) @ left))
    leg = float(0.5 * (t.hh[hips[0]] + t.hh[hips[1]]) - t.ground)
    half_width = max(0.5 * hip_width, 0.02 * t.height)

    def is_central(i):
        return _central(t, i, centre, left, half_width)

    path = spine_chain(t, pelvis, leg_bones, is_central)
    if len(path) >= 2 and _is_end_marker(t, path):
        body.notes.append(f"'{t.sk.names[path[-1]]}' taken for an end marker above the head, not the head")
        path = path[:-1]
    arms = find_arms(t, path, leg_bones, centre, left, max(hip_width, 0.1 * t.height))
    for side, (_, chain) in arms.items():
        roles.update(_arm_roles(t, side, chain, centre, left))
    hips, tail = hips_and_tail(t, pelvis, leg_bones | set(path), forward, leg, is_central)
    roles["hips"] = hips
    if tail is not None:
        roles["tail"] = tail
    root = _root(t, hips, leg)
    if root is not None:
        roles["root"] = root
    # the chain above the hips: the pelvis too when the hips are the body bone above it
    above = ([pelvis] if hips != pelvis else []) + path[1:]
    shift = len(above) - len(path)
    attach = {pos + shift for pos, _ in arms.values()}
    if len(attach) > 1:
        body.notes.append("the arms hang from different spine bones; the higher one is the chest")
    if not arms:
        body.notes.append("no arms found (no branch of the spine reaches out to the sides)")
    _place_spine(body, above, max(attach, default=None))


def _place_spine(body: Body, above: list[int], chest: int | None) -> None:
    """Spine, chest, neck and head on the chain of bones above the hips (``chest``: the position
    on it where the arms hang)."""
    roles = body.roles
    if not above:
        body.notes.append("no spine found above the pelvis")
        return
    head = len(above) - 1
    roles["head"] = above[head]
    if chest is not None and chest < head:
        roles["chest"] = above[chest]
        roles["spine"] = above[0]
        body.spine_bones = above[: chest + 1]
        if chest + 1 < head:
            roles["neck"] = above[chest + 1]
    elif head >= 1:  # no chest: the bone below the head is the neck, any bone below it is spine
        roles["neck"] = above[head - 1]
        if head >= 2:
            roles["spine"] = above[0]


# ----------------------------------------------------------------------------- checks


def body_checks(skeleton: Skeleton, roles: dict[str, int], forward=None, left=None, up=UP) -> dict[str, float]:
    """Scores in [0, 1] of how well a role map fits a body standing in its rest pose.

    legs: both legs complete (thigh, shin, foot); feet: the two feet point the same way;
    sides: ``.L`` is on the character's left (left = up × forward, forward from feet → toes);
    mirror: the hip joints mirror each other about the mid-plane; legs_equal: equal leg lengths;
    proportions: shin and thigh of similar length; head: the head is above the hips;
    arms_equal: equal arm lengths (only when an arm was found).
    """
    heads, tails, lengths = skeleton.heads, skeleton.tails, skeleton.lengths
    legs = [all(f"{r}.{s}" in roles for r in ("thigh", "shin", "foot")) for s in "LR"]
    checks = {"legs": sum(legs) / 2.0}
    if all(legs):
        tip = {s: tails[roles.get(f"toe.{s}", roles[f"foot.{s}"])] for s in "LR"}
        f = {s: _unit(_horizontal(tip[s] - heads[roles[f"foot.{s}"]], up)) for s in "LR"}
        forward = _unit(f["L"] + f["R"]) if forward is None else forward
        left = np.cross(up, forward) if left is None else left
        checks["feet"] = max(0.0, float(f["L"] @ f["R"]))
        centre = heads[roles["hips"]] if "hips" in roles else 0.5 * (heads[roles["thigh.L"]] + heads[roles["thigh.R"]])
        lat = {s: float((heads[roles[f"thigh.{s}"]] - centre) @ left) for s in "LR"}
        checks["sides"] = 1.0 if lat["L"] > lat["R"] else 0.0
        spread = abs(lat["L"]) + abs(lat["R"])
        checks["mirror"] = max(0.0, 1.0 - abs(lat["L"] + lat["R"]) / spread) if spread > 1e-9 else 0.0
        leg_len = {s: lengths[roles[f"thigh.{s}"]] + lengths[roles[f"shin.{s}"]] for s in "LR"}
        checks["legs_equal"] = float(min(leg_len.values()) / max(max(leg_len.values()), 1e-12))
        ratio = min(
            min(lengths[roles[f"shin.{s}"]], lengths[roles[f"thigh.{s}"]])
            / max(lengths[roles[f"shin.{s}"]], lengths[roles[f"thigh.{s}"]], 1e-12)
            for s in "LR"
        )
        checks["proportions"] = float(np.clip((ratio - 0.3) / 0.4, 0.0, 1.0))
    if "hips" in roles:
        checks["head"] = 1.0 if "head" in roles and heads[roles["head"]] @ up > heads[roles["hips"]] @ up else 0.0
    arm_len = [
        sum(lengths[roles[f"{r}.{s}"]] for r in ("upper_arm", "forearm"))
        for s in "LR"
        if f"upper_arm.{s}" in roles and f"forearm.{s}" in roles
    ]
    if arm_len:
        checks["arms_equal"] = float(min(arm_len) / max(arm_len)) if len(arm_len) == 2 else 0.5
    return checks
