"""The final fix after the descriptor solve: contacts on the terrain, limbs clear of it.

Jo & Choi (2019) solve joint positions (Table 1, Eq. 1–4) and leave the rest to an IK step; their
Section V notes that fewer collisions need "the rotation of each joint, especially where it
collides with the terrain". This is that step, in order:

a. planted feet and hands keep the source's orientation (turned with the ground normal) and one
   footprint per contact; a footprint that would straddle a step slides off it, back or toward its
   hip (:func:`FinalFix.run` is tried with both policies and the result with fewer collisions kept);
b. the hips come down where a foot or hand in contact could not reach its ground;
c. each end that touched the reference touches the terrain with its source gap (two-bone IK);
   limbs off the ground are lifted until their boxes keep min(source gap, clearance);
d. where limbs still collide: the hips rise as far as the contacts' reach allows, then knees turn
   out (swivel about hip→ankle), then free ends are lifted 1 cm at a time;
e. a planted end whose limb still cuts a block's edge leaves its ground, 1 cm at a time;
f. where a leg still cuts a block, the hips stay back along the direction of travel;

lifts, drops and turns fade in and out over ``ramp`` frames so nothing pops. Every stage ticks the
:class:`.ticker.Ticker` it is given (progress, and the point where a cancel is seen).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..frames import CharacterFrame
from ..skeleton import Skeleton
from .collisions import LimbBoxes, colliding
from .contact import (
    UP,
    Effector,
    footing_shifts,
    gaps,
    intervals,
    move_end,
    point_gaps,
    ramp_envelope,
    resolve_channels,
    set_world,
)
from .joints import JointSet
from .mesh import TerrainMesh
from .params import AdaptParams
from .rotations import turn_matrices
from .ticker import Ticker

# RECON: a leg in contact may stretch to this fraction of thigh + shin (a straight knee pops).
MAX_STRETCH = 0.995
# RECON: a source foot point slower than this (m/s) is planted; footprints are judged there.
PLANTED_SPEED_M_S = 0.25
# RECON: hips raise search (m): step and largest raise tried; a contact still counts as reached
# when its gap is within REACH_TOLERANCE_M of the source gap.
RAISE_STEP_M = 0.03
MAX_RAISE_M = 0.6
REACH_TOLERANCE_M = 0.005
# RECON: knee turn-out angles tried (degrees), smallest first.
SWIVEL_ANGLES_DEG = (15, 30, 45, 60, 75, 90, 105, 120)
SWIVEL_PASSES = 3  # a swivel fading in around one frame can touch its neighbours: re-checked
# RECON: hips moved back along the motion's direction where a leg still collides (m): step, largest.
SHIFT_STEP_M = 0.03
MAX_SHIFT_M = 0.3
MAX_SHIFT_RAISE_M = 0.15
# RECON: free ends still colliding are lifted LIFT_STEP_M at a time, at most LIFT_PASSES times.
LIFT_STEP_M = 0.01
LIFT_PASSES = 4
# RECON: a planted end still cutting the terrain (a block's edge under a rolling foot) may leave its
# ground by up to PLANTED_LIFT_PASSES × LIFT_STEP_M.
PLANTED_LIFT_PASSES = 6
# Clearance lifts: passes (lifting the end raises the bones above it only in part) and the
# lift under which a pass is not needed (m).
CLEARANCE_PASSES = 6
# Rows (frame × candidate raise or swivel angle) tried in one batch by the searches (speed and
# memory only: about 1.6 kB per bone and row).
SEARCH_ROWS = 384
CLEARANCE_DONE_M = 1e-4


@dataclass
class Trial:
    """One run of the fix: channels, pose, collisions ``(F, M)``, ``score`` (collision frames, worst
    contact error m rounded to mm), whether the footing policy decided where a footprint went (the
    other policy would have moved one elsewhere: only then is it worth trying), and the policy."""

    loc: np.ndarray
    rot: np.ndarray
    pose: np.ndarray
    hits: np.ndarray
    score: tuple
    decided: bool
    policy: str


@dataclass
class FinalFix:
    """The fix's state: what the source and the surfaces give, read once; :meth:`run` works on
    copies of the channels so that the footing policies can be compared.

    skeleton:       the rig
    joints:         the body joints of the solve (``hips`` is the bone the hips moves key)
    source_pose:    the source's armature-space bone matrices ``(F, B, 4, 4)``
    ends:           every effector (legs and arms)
    legs:           the leg effectors
    source_gap:     per effector name, its gap on the reference ``(F,)`` m (inf: no surface)
    contact:        per effector name, its contact frames ``(F,)`` bool
    reference:      the surface the motion was made on
    terrain:        the surface it is fitted to
    boxes:          the limb boxes of the collision measure
    box_source_gap: each box point's height above the reference in the source ``(F, M, P)`` m
    box_sink:       how deep each box may reach into the terrain on each frame ``(F, M)`` m
                    (:func:`.collisions.contact_allowance`)
    params:         the adaptation's parameters
    frame:          the character's directions and sizes
    ramp:           fade half-width of lifts, drops and turns (frames)
    fps:            frames per second of the clip
    """

    skeleton: Skeleton
    joints: JointSet
    source_pose: np.ndarray
    ends: list[Effector]
    legs: list[Effector]
    source_gap: dict[str, np.ndarray]
    contact: dict[str, np.ndarray]
    reference: TerrainMesh
    terrain: TerrainMesh
    boxes: LimbBoxes
    box_source_gap: np.ndarray
    box_sink: np.ndarray
    params: AdaptParams
    frame: CharacterFrame
    ramp: int
    fps: float
    _sides: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)

    def hint(self, e: Effector) -> np.ndarray:
        """The side a nearly straight limb bends to: knees forward, elbows back."""
        return self.frame.forward if e.is_leg else -self.frame.forward

    def side(self, e: Effector) -> np.ndarray:
        """Per frame ``(F, 3)``, the side the limb's middle joint bends to in the source (its knee
        or elbow off the root→end line; ``hint`` where the source limb is straight): the two-bone
        IK of the fix keeps the joint on that side (:func:`.contact.move_end`)."""
        if e.name not in self._sides:
            self._sides[e.name] = bend_side(self.source_pose, e, self.hint(e),
                                            0.01 * self.skeleton.lengths[e.upper])
        return self._sides[e.name]

    def run(self, loc, rot, pose, policy: str, tick: Ticker) -> Trial:
        """Steps a–f on ``loc``/``rot``/``pose`` (changed in place) with footing ``policy``
        (``back`` or ``near_hip``)."""
        decided = False
        for e in self.ends:  # a. planted ends: source orientation, one level footprint each
            decided |= _plant(self, loc, rot, pose, e, policy, tick)
        _lower_hips_for_reach(self, loc, rot, pose)  # b.
        tick()
        self.place_all(loc, rot, pose, tick)  # c.
        hits = self.collisions(pose)
        tick()
        hits = self.raise_hips(loc, rot, pose, hits, tick)  # d.
        hits = self.swivel_knees(loc, rot, pose, hits, tick)
        hits = self.lift_ends(loc, rot, pose, hits, tick, planted=False)
        hits = self.lift_ends(loc, rot, pose, hits, tick, planted=True)  # e.
        hits = self.shift_hips_back(loc, rot, pose, hits, tick)  # f.
        err = 0.0
        for e in self.ends:
            c = self.contact[e.name]
            if np.any(c):
                g, _ = gaps(e.points(self.skeleton, pose), self.terrain)
                err = max(err, float(np.abs(g - self.source_gap[e.name])[c].max()))
        score = (int(np.any(hits, axis=1).sum()), round(err, 3))
        resolve_channels(self.skeleton, loc, rot, pose)
        return Trial(loc, rot, pose, hits, score, decided, policy)

    def collisions(self, pose) -> np.ndarray:
        """Per frame and limb box, does it collide with the terrain ``(F, M)``."""
        return colliding(self.skeleton, self.boxes, pose, self.terrain, self.params.collision_tolerance_m,
                         self.box_sink)

    def place_all(self, loc, rot, pose, tick: Ticker, frames: np.ndarray | None = None) -> None:
        """c. Every end on its ground or clear of the terrain (only ``frames`` when given)."""
        for e in self.ends:
            _place_effector(self, loc, rot, pose, e, tick, frames)

    def raise_hips(self, loc, rot, pose, hits, tick: Ticker) -> np.ndarray:
        """d. Raise the hips where any box collides, as far as the contacts' reach allows."""
        if not np.any(hits):
            return hits
        every_box = np.ones(len(self.boxes.bones), bool)  # an arm pinned under a low, rolling body counts too
        raise_by = _hips_move_to_clear(self, loc, rot, pose, every_box, hits, _raise_moves(), tick)[:, 2]
        raise_by = np.minimum(ramp_envelope(raise_by, self.ramp), _hips_headroom(self, pose))
        if np.any(raise_by > 0):
            hips = self.joints.hips
            m = pose[:, hips].copy()
            m[:, :3, 3] += raise_by[:, None] * UP
            set_world(self.skeleton, loc, rot, pose, hips, m, raise_by > 0, with_location=True)
            self.place_all(loc, rot, pose, tick)
        return self.collisions(pose)

    def swivel_knees(self, loc, rot, pose, hits, tick: Ticker) -> np.ndarray:
        """d. Turn out the knees of legs that still collide."""
        leg_box = self.leg_boxes()
        for _ in range(SWIVEL_PASSES):
            if not np.any(hits[:, leg_box]):
                break
            _swivel_to_clear(self, loc, rot, pose, hits, tick)
            hits = self.collisions(pose)
        return hits

    def shift_hips_back(self, loc, rot, pose, hits, tick: Ticker) -> np.ndarray:
        """f. Where a leg still collides — a trailing foot still planted behind a block's face while
        the hips already pass over it, so that no bend of that leg clears the face — the hips (with
        everything above) stay back along the motion's direction, raised as the straighter leg
        allows, by the smallest move that clears it with every contact still on its footprint; the
        move fades in and out over ``ramp`` frames."""
        leg_box = self.leg_boxes()
        if not np.any(hits[:, leg_box]):
            return hits
        moves = _back_moves(self.frame.forward)
        move = _hips_move_to_clear(self, loc, rot, pose, leg_box, hits, moves, tick)
        if not np.any(move != 0.0):
            return hits
        back = moves[0] / np.linalg.norm(moves[0])
        # both parts fade in and out (never less than a frame needs)
        move = (ramp_envelope(move @ back, self.ramp)[:, None] * back
                + ramp_envelope(move[:, 2], self.ramp)[:, None] * UP)
        on = np.linalg.norm(move, axis=1) > 0
        hips = self.joints.hips
        m = pose[:, hips].copy()
        m[:, :3, 3] += move
        set_world(self.skeleton, loc, rot, pose, hips, m, on, with_location=True)
        flat = move.copy()
        flat[:, 2] = 0.0
        for e in self.ends:  # planted ends stay on their footprints
            move_end(self.skeleton, loc, rot, pose, e, -flat, self.contact[e.name] & on, self.hint(e),
                     side=self.side(e))
        self.place_all(loc, rot, pose, tick, on)
        return self.collisions(pose)

    def lift_ends(self, loc, rot, pose, hits, tick: Ticker, planted: bool) -> np.ndarray:
        """d. (``planted`` False) Lift free ends whose limb still collides — what the sampled
        clearance missed — ``LIFT_STEP_M`` at a time, at most ``LIFT_PASSES`` times.

        e. (``planted`` True) A planted foot (or hand) whose limb still cuts the terrain — a
        footprint of motion capture rolling over a block's edge, a shin leaning into it — is lifted
        the same way on those frames only, at most ``PLANTED_LIFT_PASSES`` times (the lift fades out
        over the free frames around them, never onto other planted frames): the end leaves its
        ground by that much rather than pass through the block."""
        for _ in range(PLANTED_LIFT_PASSES if planted else LIFT_PASSES):
            extra = False
            for e in self.ends:
                c = self.contact[e.name]
                bad = np.any(hits[:, np.isin(self.boxes.bones, _limb_bones(e))], axis=1) & (c if planted else ~c)
                if np.any(bad):
                    extra = True
                    lift = ramp_envelope(bad * LIFT_STEP_M, self.ramp)
                    move_end(self.skeleton, loc, rot, pose, e, lift, (lift > 0) & (bad | ~c), self.hint(e),
                             side=self.side(e))
            tick()
            if not extra:
                break
            hits = self.collisions(pose)
        return hits

    def leg_boxes(self) -> np.ndarray:
        """``(M,)`` bool: the boxes of the legs' bones."""
        return np.isin(self.boxes.bones, [b for e in self.legs for b in _limb_bones(e)])


# --------------------------------------------------------------------------- the steps

def bend_side(pose_src: np.ndarray, e: Effector, hint: np.ndarray, straight_m: float) -> np.ndarray:
    """Per frame ``(F, 3)``, unit direction from the root→end line of limb ``e`` to its middle
    joint in the source pose; ``hint`` where the middle joint is within ``straight_m`` of the line."""
    root, mid, end = (pose_src[:, b, :3, 3] for b in (e.upper, e.lower, e.end))
    axis = end - root
    axis = axis / np.maximum(np.linalg.norm(axis, axis=-1, keepdims=True), 1e-12)
    off = mid - root - np.sum((mid - root) * axis, axis=-1, keepdims=True) * axis
    n = np.linalg.norm(off, axis=-1, keepdims=True)
    return np.where(n > straight_m, off / np.maximum(n, 1e-12), np.asarray(hint, float))


def _limb_bones(e: Effector) -> list[int]:
    return [b for b in (e.upper, e.lower, e.end, e.tip) if b >= 0]


def _lower_hips_for_reach(fix: FinalFix, loc, rot, pose) -> None:
    """b. Lower the hips (with everything above) where a leg or arm in contact could not reach its ground."""
    sk = fix.skeleton
    drop = np.zeros(pose.shape[0])
    for e in fix.ends:
        c = fix.contact[e.name]
        if not np.any(c):
            continue
        g, _ = gaps(e.points(sk, pose), fix.terrain)
        dz = np.where(c, fix.source_gap[e.name] - g, 0.0)
        ankle = pose[:, e.end, :3, 3] + dz[:, None] * UP
        hip = pose[:, e.upper, :3, 3]
        # the leg may stretch to MAX_STRETCH of its length, or as far as the source itself stretched it
        src = fix.source_pose
        reach_src = np.linalg.norm(src[:, e.end, :3, 3] - src[:, e.upper, :3, 3], axis=-1)
        reach = np.maximum(MAX_STRETCH * (sk.lengths[e.upper] + sk.lengths[e.lower]), reach_src)
        dh = np.linalg.norm((hip - ankle)[:, :2], axis=-1)
        dv = hip[:, 2] - ankle[:, 2]
        dv_max = np.sqrt(np.maximum(reach**2 - dh**2, 0.0))
        drop = np.maximum(drop, np.where(c, dv - dv_max, 0.0))
    drop = ramp_envelope(drop, fix.ramp)
    if np.any(drop > 1e-9):
        hips = fix.joints.hips
        m = pose[:, hips].copy()
        m[:, :3, 3] -= drop[:, None] * UP
        set_world(sk, loc, rot, pose, hips, m, drop > 1e-9, with_location=True)


def _plant(fix: FinalFix, loc, rot, pose, e: Effector, policy: str, tick: Ticker) -> bool:
    """a. Contact frames: the end bone (and toe) take the source's orientation, turned as the ground
    normal turns from reference to terrain; then the footprint is made level (:func:`_nudge_footing`).
    True when ``policy`` decided where a footprint went (the other policy would have moved it elsewhere)."""
    tick()
    contact = fix.contact[e.name]
    if not np.any(contact):
        return False
    xy = pose[:, e.end, :2, 3]
    _, n_ref, _ = fix.reference.height(xy)
    _, n_ter, _ = fix.terrain.height(xy)
    tilt = turn_matrices(n_ref, n_ter)
    for bone in (e.end, e.tip):
        if bone < 0:
            continue
        m = pose[:, bone].copy()
        m[:, :3, :3] = tilt @ fix.source_pose[:, bone, :3, :3]
        set_world(fix.skeleton, loc, rot, pose, bone, m, contact)
    return _nudge_footing(fix, loc, rot, pose, e, policy, tick)


def _place_effector(fix: FinalFix, loc, rot, pose, e: Effector, tick: Ticker,
                    frames: np.ndarray | None = None) -> None:
    """c. Contact frames: the end touches the terrain with its source gap. Other frames: lift the end
    until every box point of the limb keeps min(source gap, clearance) above the terrain (a few
    passes: lifting the end raises the bones above it only in part). ``frames`` (F,) bool: only
    these can need it (the others were placed already and have not moved since).

    Each pass measures only the frames that can need a lift: at first those off the ground, then
    those the previous pass moved (a frame left alone keeps the clearance it had)."""
    sk, terrain, clearance = fix.skeleton, fix.terrain, fix.params.clearance_m
    contact, hint, side = fix.contact[e.name], fix.hint(e), fix.side(e)
    n = pose.shape[0]
    todo = np.ones(n, bool) if frames is None else np.asarray(frames, bool)
    if np.any(contact & todo):
        rows = np.nonzero(contact & todo)[0]
        g = np.zeros(n)
        g[rows], _ = gaps(e.points(sk, pose[rows]), terrain)
        dz = np.where(contact & todo, fix.source_gap[e.name] - g, 0.0)
        move_end(sk, loc, rot, pose, e, dz, contact & todo & (np.abs(dz) > 1e-9), hint, side=side)
    mine = np.isin(fix.boxes.bones, _limb_bones(e))
    boxes = fix.boxes.subset(mine)
    rows = np.nonzero(todo & ~contact)[0]
    last = np.zeros(n)  # the previous pass's lift, and the need it answered
    answered = np.full(n, np.inf)
    undo = None
    for k in range(CLEARANCE_PASSES + 1):
        tick()
        if rows.size == 0:
            break
        pts = boxes.sample_points(sk, pose[rows])
        near = pts[..., 2].reshape(len(rows), -1).min(axis=1) <= terrain.z_max + clearance
        rows, pts = rows[near], pts[near]  # higher than the terrain by more than the clearance: no lift
        if rows.size == 0:
            break
        gap_now = point_gaps(pts, terrain, below=False)
        need = np.minimum(fix.box_source_gap[rows][:, mine], clearance) - gap_now
        worst = np.max(np.where(np.isfinite(need), need, 0.0).reshape(len(rows), -1), axis=1)
        # a lift that did not take away at least half of itself from the need (the bones that cut
        # the terrain are the ones an end lift hardly moves: a knee over a block's edge) is undone
        # and not repeated there: a foot flung up does not clear a knee (RECON)
        futile = (worst > CLEARANCE_DONE_M) & (worst > answered[rows] - 0.5 * last[rows])
        if undo is not None and np.any(futile):
            back = rows[futile]
            at = np.searchsorted(undo[0], back)
            loc[back], rot[back], pose[back] = undo[1][at], undo[2][at], undo[3][at]
            rows, worst = rows[~futile], worst[~futile]
        if k == CLEARANCE_PASSES or rows.size == 0:
            break
        lift = np.zeros(n)
        lift[rows] = worst
        lift = np.where(contact, 0.0, np.maximum(lift, 0.0))
        if lift.max() < CLEARANCE_DONE_M:
            break
        lift = np.where(contact, 0.0, ramp_envelope(lift, fix.ramp))
        moved = np.nonzero(lift > 1e-9)[0]
        undo = (moved, loc[moved].copy(), rot[moved].copy(), pose[moved].copy())
        answered = np.full(n, np.inf)
        answered[rows] = worst
        last = lift
        move_end(sk, loc, rot, pose, e, lift, lift > 1e-9, hint, side=side)
        rows = moved


def _nudge_footing(fix: FinalFix, loc, rot, pose, e: Effector, policy: str, tick: Ticker) -> bool:
    """a. Each planted interval of an end keeps one footprint; one that would straddle a step of the
    terrain (uneven under the foot where the reference was even) slides along the limb's ``hint``
    direction to the nearest place, back or forward, where it stands on one level — with policy
    ``back`` the one on the side the foot comes from, with ``near_hip`` the one that keeps the foot
    nearer under its hip (legs reach). The slide fades in and out over ``ramp`` frames. True when the
    two policies pick different places for some footprint (a run with the other policy would end
    differently; when they agree everywhere it would repeat this one exactly)."""
    sk, pose_src, direction = fix.skeleton, fix.source_pose, fix.hint(e)
    n = pose.shape[0]
    pts = e.points(sk, pose)
    src = e.points(sk, pose_src)
    zr, _, _ = fix.reference.height(src[..., :2].reshape(-1, 2), normals=False)
    zr = zr.reshape(src.shape[:-1])
    ref_spread = zr.max(axis=1) - zr.min(axis=1)
    total = np.zeros((n, 3))
    weight = np.zeros(n)
    speed = np.zeros(n)
    speed[1:] = np.linalg.norm(np.diff(src[:, 0, :2], axis=0), axis=-1) * fix.fps
    d2 = np.asarray(direction, float)[:2]
    decided = False
    for a, b in intervals(fix.contact[e.name]):
        tick()
        still = np.arange(a, b)[speed[a:b] < PLANTED_SPEED_M_S]  # judge the footprint where the end is planted
        sel = still if still.size else np.arange(a, b)
        back, fwd = footing_shifts(pts[sel], ref_spread[sel], fix.terrain, direction)
        options = [x for x in (back, fwd) if x is not None]
        if not options or 0.0 in options:
            continue
        hip = pose_src[sel, e.upper, :2, 3]
        ankle = pose_src[sel, e.end, :2, 3]
        near = min(options, key=lambda x: float(np.max(np.linalg.norm(ankle + x * d2 - hip, axis=-1))))
        decided |= near != options[0]
        s = options[0] if policy == "back" else near
        ind = np.zeros(n)
        ind[a:b] = 1.0
        env = ramp_envelope(ind, fix.ramp)
        total += env[:, None] * (s * np.asarray(direction, float))
        weight += env
    if not np.any(weight > 0):
        return False
    offset = total / np.maximum(weight, 1.0)[:, None]
    offset[:, 2] = 0.0
    move_end(sk, loc, rot, pose, e, offset, weight > 0, direction, side=fix.side(e))
    return decided


def _first_that_works(frames: np.ndarray, values: np.ndarray, works, tick: Ticker) -> np.ndarray:
    """Per frame of ``frames``, the first of the ordered candidate ``values`` for which
    ``works(rows, row_values) -> ok`` holds (0 where none does). Frames still open are tried against
    a block of candidates in one batched call (each candidate on its own copy of the frame, so the
    answer is the same as trying them one by one); a call holds at most ``SEARCH_ROWS`` rows."""
    out = np.zeros(len(frames))
    for c0 in range(0, len(frames), SEARCH_ROWS):
        out[c0:c0 + SEARCH_ROWS] = _first_in_batches(frames[c0:c0 + SEARCH_ROWS], values, works, tick)
    return out


def _first_in_batches(frames: np.ndarray, values: np.ndarray, works, tick: Ticker) -> np.ndarray:
    """:func:`_first_that_works` for at most ``SEARCH_ROWS`` frames."""
    out = np.zeros(len(frames))
    todo = np.ones(len(frames), bool)
    a = 0
    while a < len(values):
        open_ = np.nonzero(todo)[0]
        if open_.size == 0:
            break
        tick()
        vals = values[a:a + max(1, SEARCH_ROWS // open_.size)]
        a += len(vals)
        rows = np.repeat(frames[open_], len(vals))
        ok = works(rows, np.tile(vals, open_.size)).reshape(open_.size, len(vals))
        found = ok.any(axis=1)
        out[open_[found]] = vals[np.argmax(ok[found], axis=1)]
        todo[open_[found]] = False
    return out


def _hips_move_to_clear(fix: FinalFix, loc, rot, pose, box_mask: np.ndarray, hits: np.ndarray,
                        moves: np.ndarray, tick: Ticker) -> np.ndarray:
    """d. Per frame ``(F, 3)``, the first of the candidate ``moves`` ``(S, 3)`` of the hips (m, with
    everything above them) after which no box of ``box_mask`` collides while every end in contact
    still reaches its ground — its footprint kept where the move has a horizontal part; zeros where
    none helps. (A leg folded under low hips pushes its knee into the block in front of it or past
    the edge it stands on; a straighter leg, or hips held back, keeps it clear.)"""
    sk, hips, terrain = fix.skeleton, fix.joints.hips, fix.terrain
    boxes = fix.boxes.subset(box_mask)

    def works(rows, which):
        move = moves[which.astype(int) - 1]
        sl, sr, sp = loc[rows].copy(), rot[rows].copy(), pose[rows].copy()
        m = sp[:, hips].copy()
        m[:, :3, 3] += move
        set_world(sk, sl, sr, sp, hips, m, np.ones(len(rows), bool), with_location=True)
        reached = np.ones(len(rows), bool)
        along = np.any(move[:, :2] != 0.0, axis=1)
        for e in fix.ends:
            c = fix.contact[e.name][rows]
            if not np.any(c):
                continue
            side, hint, gap_src = fix.side(e)[rows], fix.hint(e), fix.source_gap[e.name][rows]
            if np.any(c & along):  # planted ends stay on their footprints
                flat = move.copy()
                flat[:, 2] = 0.0
                move_end(sk, sl, sr, sp, e, -flat, c & along, hint, side=side)
            g, _ = gaps(e.points(sk, sp), terrain)
            move_end(sk, sl, sr, sp, e, np.where(c, gap_src - g, 0.0), c, hint, side=side)
            g2, _ = gaps(e.points(sk, sp), terrain)
            reached &= ~c | (np.abs(g2 - gap_src) < REACH_TOLERANCE_M)
        sink = fix.box_sink[rows][:, box_mask]
        return reached & ~np.any(colliding(sk, boxes, sp, terrain, fix.params.collision_tolerance_m, sink), axis=1)

    out = np.zeros((pose.shape[0], 3))
    bad = np.nonzero(np.any(hits[:, box_mask], axis=1))[0]
    if bad.size:
        which = _first_that_works(bad, np.arange(1.0, len(moves) + 1.0), works, tick).astype(int)
        out[bad[which > 0]] = moves[which[which > 0] - 1]
    return out


def _raise_moves() -> np.ndarray:
    """Candidate raises of the hips ``(S, 3)``: ``RAISE_STEP_M`` … ``MAX_RAISE_M`` straight up."""
    return np.arange(RAISE_STEP_M, MAX_RAISE_M + 1e-9, RAISE_STEP_M)[:, None] * UP


def _back_moves(forward) -> np.ndarray:
    """Candidate moves of the hips ``(S, 3)`` back along ``forward`` (``SHIFT_STEP_M`` …
    ``MAX_SHIFT_M``) combined with a raise (0 … ``MAX_SHIFT_RAISE_M`` by ``RAISE_STEP_M``),
    smallest first: held back, a straighter trailing leg keeps its knee behind a block's face."""
    back = -np.asarray(forward, float)
    back[2] = 0.0
    back = back / max(float(np.linalg.norm(back)), 1e-12)
    b, r = np.meshgrid(np.arange(SHIFT_STEP_M, MAX_SHIFT_M + 1e-9, SHIFT_STEP_M),
                       np.arange(0.0, MAX_SHIFT_RAISE_M + 1e-9, RAISE_STEP_M))
    b, r = b.ravel(), r.ravel()
    order = np.argsort(b * b + r * r, kind="stable")
    return b[order, None] * back + r[order, None] * UP


def _swivel_to_clear(fix: FinalFix, loc, rot, pose, hits: np.ndarray, tick: Ticker) -> None:
    """d. Legs still colliding turn the knee out (the bend plane swivels about hip→ankle, toward the
    leg's own side) by the smallest angle of ``SWIVEL_ANGLES_DEG`` that clears them (each angle
    tried both ways, the way that moves the knee outward counts); the swivel fades in and out over
    ``ramp`` frames. The foot stays where it is."""
    sk, cf = fix.skeleton, fix.frame
    angles = np.array([sign * np.radians(deg) for deg in SWIVEL_ANGLES_DEG for sign in (1.0, -1.0)])
    for e in fix.legs:
        mine = np.isin(fix.boxes.bones, _limb_bones(e))
        bad = np.nonzero(np.any(hits[:, mine], axis=1))[0]
        if bad.size == 0:
            continue
        outward = cf.left if e.name.endswith(".L") else -cf.left
        boxes = fix.boxes.subset(mine)
        sides = fix.side(e)

        def works(rows, ang, e=e, outward=outward, boxes=boxes, sides=sides, mine=mine):
            sl, sr, sp = loc[rows].copy(), rot[rows].copy(), pose[rows].copy()
            knee_before = sp[:, e.lower, :3, 3].copy()
            move_end(sk, sl, sr, sp, e, np.zeros(len(rows)), np.ones(len(rows), bool), cf.forward, ang, sides[rows])
            out = np.sum((sp[:, e.lower, :3, 3] - knee_before) * outward, axis=-1) > 0
            sink = fix.box_sink[rows][:, mine]
            return out & ~np.any(colliding(sk, boxes, sp, fix.terrain, fix.params.collision_tolerance_m, sink), axis=1)

        best = np.zeros(pose.shape[0])
        best[bad] = _first_that_works(bad, angles, works, tick)
        if not np.any(best != 0):
            continue
        turn = ramp_envelope(np.maximum(best, 0.0), fix.ramp) - ramp_envelope(np.maximum(-best, 0.0), fix.ramp)
        turn = np.where(best != 0, best, turn)  # the frames that need it get exactly what cleared them
        move_end(sk, loc, rot, pose, e, np.zeros(pose.shape[0]), turn != 0, cf.forward, turn, sides)


def _hips_headroom(fix: FinalFix, pose, stretch: float = MAX_STRETCH) -> np.ndarray:
    """Per frame, how far the hips may rise (m) before a leg in contact can no longer reach its
    ankle where it is now (``stretch`` × thigh + shin); inf where no end is in contact."""
    sk = fix.skeleton
    room = np.full(pose.shape[0], np.inf)
    for e in fix.ends:
        c = fix.contact[e.name]
        hip = pose[:, e.upper, :3, 3]
        ankle = pose[:, e.end, :3, 3]
        reach = stretch * (sk.lengths[e.upper] + sk.lengths[e.lower])
        dh = np.linalg.norm((hip - ankle)[:, :2], axis=-1)
        up = np.sqrt(np.maximum(reach**2 - dh**2, 0.0)) - (hip[:, 2] - ankle[:, 2])
        room = np.where(c, np.minimum(room, np.maximum(up, 0.0)), room)
    return room
