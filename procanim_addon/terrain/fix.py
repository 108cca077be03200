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

lifts, drops and turns fade in and out over ``ramp`` frames so nothing pops. Every stage ticks the
:class:`.ticker.Ticker` it is given (progress, and the point where a cancel is seen).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .collisions import colliding
from .contact import (
    UP,
    footing_shifts,
    gaps,
    intervals,
    move_end,
    point_gaps,
    ramp_envelope,
    resolve_channels,
    set_world,
)
from .mesh import TerrainMesh
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
    """The fix, run on copies of the channels so that alternatives can be compared.
    ``src_gap``/``contact``: per effector name, (F,); ``box_gap_src``: (F, M, P) m; ``p``: AdaptParams;
    ``ramp``: fade half-width (frames)."""

    skeleton: object
    js: object
    pose_src: np.ndarray
    effs: list
    legs: list
    src_gap: dict
    contact: dict
    reference: TerrainMesh
    terrain: TerrainMesh
    lb: object
    box_gap_src: np.ndarray
    p: object
    cf: object
    ramp: int
    fps: float
    _sides: dict = field(default_factory=dict, init=False, repr=False)

    def hint(self, e) -> np.ndarray:
        """The side a nearly straight limb bends to: knees forward, elbows back."""
        return self.cf.forward if e.is_leg else -self.cf.forward

    def side(self, e) -> np.ndarray:
        """Per frame ``(F, 3)``, the side the limb's middle joint bends to in the source (its knee
        or elbow off the root→end line; ``hint`` where the source limb is straight): the two-bone
        IK of the fix keeps the joint on that side (:func:`.contact.move_end`)."""
        if e.name not in self._sides:
            self._sides[e.name] = bend_side(self.pose_src, e, self.hint(e), 0.01 * self.skeleton.lengths[e.upper])
        return self._sides[e.name]

    def run(self, loc, rot, pose, policy: str, tick: Ticker) -> Trial:
        """Steps a–d on ``loc``/``rot``/``pose`` (changed in place) with footing ``policy``
        (``back`` or ``near_hip``)."""
        decided = False
        for e in self.effs:  # a. planted ends: source orientation, one level footprint each
            decided |= _plant(self.skeleton, loc, rot, pose, self.pose_src, e, self.contact[e.name], self.reference,
                             self.terrain, self.ramp, self.hint(e), self.fps, policy, tick, self.side(e))
        _lower_hips_for_reach(self.skeleton, self.js.hips, loc, rot, pose, self.pose_src, self.effs, self.src_gap,
                              self.contact, self.terrain, self.ramp)  # b.
        tick()
        self.place_all(loc, rot, pose, tick)  # c.
        hits = self.collisions(pose)
        tick()
        hits = self.raise_hips(loc, rot, pose, hits, tick)  # d.
        hits = self.swivel_knees(loc, rot, pose, hits, tick)
        hits = self.lift_free_ends(loc, rot, pose, hits, tick)
        hits = self.lift_planted_ends(loc, rot, pose, hits, tick)
        hits = self.shift_hips_back(loc, rot, pose, hits, tick)  # f.
        err = 0.0
        for e in self.effs:
            c = self.contact[e.name]
            if np.any(c):
                g, _ = gaps(e.points(self.skeleton, pose), self.terrain)
                err = max(err, float(np.abs(g - self.src_gap[e.name])[c].max()))
        score = (int(np.any(hits, axis=1).sum()), round(err, 3))
        resolve_channels(self.skeleton, loc, rot, pose)
        return Trial(loc, rot, pose, hits, score, decided, policy)

    def collisions(self, pose) -> np.ndarray:
        return colliding(self.skeleton, self.lb, pose, self.terrain, self.p.collision_tolerance_m)

    def place_all(self, loc, rot, pose, tick: Ticker, frames: np.ndarray | None = None) -> None:
        """c. Every end on its ground or clear of the terrain (only ``frames`` when given)."""
        for e in self.effs:
            _place_effector(self.skeleton, loc, rot, pose, e, self.src_gap[e.name], self.contact[e.name],
                            self.terrain, self.lb, self.box_gap_src, self.p, self.ramp, self.hint(e), tick, frames,
                            self.side(e))

    def raise_hips(self, loc, rot, pose, hits, tick: Ticker) -> np.ndarray:
        """d. Raise the hips where any box collides, as far as the contacts' reach allows."""
        if not np.any(hits):
            return hits
        every_box = np.ones(len(self.lb.bones), bool)  # an arm pinned under a low, rolling body counts too
        raise_by = _hips_move_to_clear(self.skeleton, self.js.hips, loc, rot, pose, self.effs, self.src_gap,
                                       self.contact, self.terrain, self.lb, every_box, hits, self.p, self.cf.forward,
                                       tick, _raise_moves(), {e.name: self.side(e) for e in self.effs})[:, 2]
        raise_by = np.minimum(ramp_envelope(raise_by, self.ramp),
                              _hips_headroom(self.skeleton, pose, self.effs, self.contact))
        if np.any(raise_by > 0):
            m = pose[:, self.js.hips].copy()
            m[:, :3, 3] += raise_by[:, None] * UP
            set_world(self.skeleton, loc, rot, pose, self.js.hips, m, raise_by > 0, with_location=True)
            self.place_all(loc, rot, pose, tick)
        return self.collisions(pose)

    def swivel_knees(self, loc, rot, pose, hits, tick: Ticker) -> np.ndarray:
        """d. Turn out the knees of legs that still collide."""
        leg_box = np.isin(self.lb.bones, [b for e in self.legs for b in _limb_bones(e)])
        for _ in range(SWIVEL_PASSES):
            if not np.any(hits[:, leg_box]):
                break
            _swivel_to_clear(self.skeleton, loc, rot, pose, self.legs, self.lb, hits, self.terrain, self.p, self.cf,
                             self.ramp, tick, {e.name: self.side(e) for e in self.legs})
            hits = self.collisions(pose)
        return hits

    def shift_hips_back(self, loc, rot, pose, hits, tick: Ticker) -> np.ndarray:
        """d. Where a leg still collides — a trailing foot still planted behind a block's face while
        the hips already pass over it, so that no bend of that leg clears the face — the hips (with
        everything above) stay back along the motion's direction, raised as the straighter leg
        allows, by the smallest move that clears it with every contact still on its footprint; the
        move fades in and out over ``ramp`` frames."""
        leg_box = np.isin(self.lb.bones, [b for e in self.legs for b in _limb_bones(e)])
        if not np.any(hits[:, leg_box]):
            return hits
        move = _hips_move_to_clear(self.skeleton, self.js.hips, loc, rot, pose, self.effs, self.src_gap,
                                   self.contact, self.terrain, self.lb, leg_box, hits, self.p, self.cf.forward, tick,
                                   _back_moves(self.cf.forward), {e.name: self.side(e) for e in self.effs})
        if not np.any(move != 0.0):
            return hits
        back = _back_moves(self.cf.forward)[0]
        back = back / np.linalg.norm(back)
        # both parts fade in and out (never less than a frame needs)
        move = (ramp_envelope(move @ back, self.ramp)[:, None] * back
                + ramp_envelope(move[:, 2], self.ramp)[:, None] * UP)
        on = np.linalg.norm(move, axis=1) > 0
        m = pose[:, self.js.hips].copy()
        m[:, :3, 3] += move
        set_world(self.skeleton, loc, rot, pose, self.js.hips, m, on, with_location=True)
        flat = move.copy()
        flat[:, 2] = 0.0
        for e in self.effs:  # planted ends stay on their footprints
            move_end(self.skeleton, loc, rot, pose, e, -flat, self.contact[e.name] & on, self.hint(e),
                     side=self.side(e))
        self.place_all(loc, rot, pose, tick, on)
        return self.collisions(pose)

    def lift_free_ends(self, loc, rot, pose, hits, tick: Ticker) -> np.ndarray:
        """d. Lift what the sampled clearance missed, ``LIFT_STEP_M`` at a time."""
        for _ in range(LIFT_PASSES):
            extra = False
            for e in self.effs:
                mine = np.isin(self.lb.bones, _limb_bones(e))
                bad = np.any(hits[:, mine], axis=1) & ~self.contact[e.name]
                if np.any(bad):
                    extra = True
                    lift = ramp_envelope(bad * LIFT_STEP_M, self.ramp)
                    move_end(self.skeleton, loc, rot, pose, e, lift, (lift > 0) & ~self.contact[e.name], self.hint(e),
                             side=self.side(e))
            tick()
            if not extra:
                break
            hits = self.collisions(pose)
        return hits

    def lift_planted_ends(self, loc, rot, pose, hits, tick: Ticker) -> np.ndarray:
        """e. A planted foot (or hand) whose limb still cuts the terrain — a footprint of real motion
        capture rolling over a block's edge, a shin leaning into it — is lifted ``LIFT_STEP_M`` at a time on those
        frames only (the lift fades out over the free frames around them, never onto other planted
        frames): the end leaves its ground by that much rather than pass through the block."""
        for _ in range(PLANTED_LIFT_PASSES):
            extra = False
            for e in self.effs:
                own = np.isin(self.lb.bones, _limb_bones(e))
                c = self.contact[e.name]
                bad = np.any(hits[:, own], axis=1) & c
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


# --------------------------------------------------------------------------- the steps

def bend_side(pose_src: np.ndarray, e, hint: np.ndarray, straight_m: float) -> np.ndarray:
    """Per frame ``(F, 3)``, unit direction from the root→end line of limb ``e`` to its middle
    joint in the source pose; ``hint`` where the middle joint is within ``straight_m`` of the line."""
    root, mid, end = (pose_src[:, b, :3, 3] for b in (e.upper, e.lower, e.end))
    axis = end - root
    axis = axis / np.maximum(np.linalg.norm(axis, axis=-1, keepdims=True), 1e-12)
    off = mid - root - np.sum((mid - root) * axis, axis=-1, keepdims=True) * axis
    n = np.linalg.norm(off, axis=-1, keepdims=True)
    return np.where(n > straight_m, off / np.maximum(n, 1e-12), np.asarray(hint, float))


def _limb_bones(e) -> list[int]:
    return [b for b in (e.upper, e.lower, e.end, e.tip) if b >= 0]


def _lower_hips_for_reach(skeleton, hips, loc, rot, pose, pose_src, legs, src_gap, contact, terrain, ramp) -> None:
    """Lower the hips (with everything above) where a leg or arm in contact could not reach its ground."""
    drop = np.zeros(pose.shape[0])
    for e in legs:
        c = contact[e.name]
        if not np.any(c):
            continue
        g, _ = gaps(e.points(skeleton, pose), terrain)
        dz = np.where(c, src_gap[e.name] - g, 0.0)
        ankle = pose[:, e.end, :3, 3] + dz[:, None] * UP
        hip = pose[:, e.upper, :3, 3]
        # the leg may stretch to MAX_STRETCH of its length, or as far as the source itself stretched it
        reach_src = np.linalg.norm(pose_src[:, e.end, :3, 3] - pose_src[:, e.upper, :3, 3], axis=-1)
        reach = np.maximum(MAX_STRETCH * (skeleton.lengths[e.upper] + skeleton.lengths[e.lower]), reach_src)
        dh = np.linalg.norm((hip - ankle)[:, :2], axis=-1)
        dv = hip[:, 2] - ankle[:, 2]
        dv_max = np.sqrt(np.maximum(reach**2 - dh**2, 0.0))
        drop = np.maximum(drop, np.where(c, dv - dv_max, 0.0))
    drop = ramp_envelope(drop, ramp)
    if np.any(drop > 1e-9):
        m = pose[:, hips].copy()
        m[:, :3, 3] -= drop[:, None] * UP
        set_world(skeleton, loc, rot, pose, hips, m, drop > 1e-9, with_location=True)


def _plant(skeleton, loc, rot, pose, pose_src, e, contact, reference, terrain, ramp, direction, fps,
           policy: str, tick: Ticker, side=None) -> bool:
    """Contact frames: the end bone (and toe) take the source's orientation, turned as the ground
    normal turns from reference to terrain; then the footprint is made level (:func:`_nudge_footing`).
    True when ``policy`` decided where a footprint went (the other policy would have moved it elsewhere)."""
    tick()
    if not np.any(contact):
        return False
    xy = pose[:, e.end, :2, 3]
    _, n_ref, _ = reference.height(xy)
    _, n_ter, _ = terrain.height(xy)
    tilt = turn_matrices(n_ref, n_ter)
    for bone in (e.end, e.tip):
        if bone < 0:
            continue
        m = pose[:, bone].copy()
        m[:, :3, :3] = tilt @ pose_src[:, bone, :3, :3]
        set_world(skeleton, loc, rot, pose, bone, m, contact)
    return _nudge_footing(skeleton, loc, rot, pose, pose_src, e, contact, reference, terrain, ramp, direction, fps,
                          policy, tick, side)


def _place_effector(skeleton, loc, rot, pose, e, gap_src, contact, terrain, lb, box_gap_src, p, ramp, hint,
                    tick: Ticker, frames: np.ndarray | None = None, side=None) -> None:
    """Contact frames: the end touches the terrain with its source gap. Other frames: lift the end
    until every box point of the limb keeps min(source gap, clearance) above the terrain (a few
    passes: lifting the end raises the bones above it only in part). ``frames`` (F,) bool: only
    these can need it (the others were placed already and have not moved since).

    Each pass measures only the frames that can need a lift: at first those off the ground, then
    those the previous pass moved (a frame left alone keeps the clearance it had)."""
    n = pose.shape[0]
    todo = np.ones(n, bool) if frames is None else np.asarray(frames, bool)
    if np.any(contact & todo):
        rows = np.nonzero(contact & todo)[0]
        g = np.zeros(n)
        g[rows], _ = gaps(e.points(skeleton, pose[rows]), terrain)
        dz = np.where(contact & todo, gap_src - g, 0.0)
        move_end(skeleton, loc, rot, pose, e, dz, contact & todo & (np.abs(dz) > 1e-9), hint, side=side)
    mine = np.isin(lb.bones, _limb_bones(e))
    boxes = lb.subset(mine)
    rows = np.nonzero(todo & ~contact)[0]
    last = np.zeros(n)  # the previous pass's lift, and the need it answered
    answered = np.full(n, np.inf)
    undo = None
    for k in range(CLEARANCE_PASSES + 1):
        tick()
        if rows.size == 0:
            break
        pts = boxes.sample_points(skeleton, pose[rows])
        near = pts[..., 2].reshape(len(rows), -1).min(axis=1) <= terrain.z_max + p.clearance_m
        rows, pts = rows[near], pts[near]  # higher than the terrain by more than the clearance: no lift
        if rows.size == 0:
            break
        gap_now = point_gaps(pts, terrain, below=False)
        need = np.minimum(box_gap_src[rows][:, mine], p.clearance_m) - gap_now
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
        lift = np.where(contact, 0.0, ramp_envelope(lift, ramp))
        moved = np.nonzero(lift > 1e-9)[0]
        undo = (moved, loc[moved].copy(), rot[moved].copy(), pose[moved].copy())
        answered = np.full(n, np.inf)
        answered[rows] = worst
        last = lift
        move_end(skeleton, loc, rot, pose, e, lift, lift > 1e-9, hint, side=side)
        rows = moved


def _nudge_footing(skeleton, loc, rot, pose, pose_src, e, contact, reference, terrain, ramp, direction, fps,
                   policy: str, tick: Ticker, side=None) -> bool:
    """Each planted interval of an end keeps one footprint; one that would straddle a step of the
    terrain (uneven under the foot where the reference was even) slides along ``direction`` to the
    nearest place, back or forward, where it stands on one level — with policy ``back`` the one on
    the side the foot comes from, with ``near_hip`` the one that keeps the foot nearer under its hip
    (legs reach). The slide fades in and out over ``ramp`` frames. True when the two policies pick
    different places for some footprint (a run with the other policy would end differently; when
    they agree everywhere it would repeat this one exactly)."""
    n = pose.shape[0]
    pts = e.points(skeleton, pose)
    src = e.points(skeleton, pose_src)
    zr, _, _ = reference.height(src[..., :2].reshape(-1, 2), normals=False)
    zr = zr.reshape(src.shape[:-1])
    ref_spread = zr.max(axis=1) - zr.min(axis=1)
    total = np.zeros((n, 3))
    weight = np.zeros(n)
    speed = np.zeros(n)
    speed[1:] = np.linalg.norm(np.diff(src[:, 0, :2], axis=0), axis=-1) * fps
    d2 = np.asarray(direction, float)[:2]
    decided = False
    for a, b in intervals(contact):
        tick()
        still = np.arange(a, b)[speed[a:b] < PLANTED_SPEED_M_S]  # judge the footprint where the end is planted
        sel = still if still.size else np.arange(a, b)
        back, fwd = footing_shifts(pts[sel], ref_spread[sel], terrain, direction)
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
        env = ramp_envelope(ind, ramp)
        total += env[:, None] * (s * np.asarray(direction, float))
        weight += env
    if not np.any(weight > 0):
        return False
    offset = total / np.maximum(weight, 1.0)[:, None]
    offset[:, 2] = 0.0
    move_end(skeleton, loc, rot, pose, e, offset, weight > 0, direction, side=side)
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


def _hips_move_to_clear(skeleton, hips, loc, rot, pose, legs, src_gap, contact, terrain, lb, leg_box, hits, p,
                        forward, tick: Ticker, moves: np.ndarray, sides: dict | None = None) -> np.ndarray:
    """Per frame ``(F, 3)``, the first of the candidate ``moves`` ``(S, 3)`` of the hips (m, with
    everything above them) after which no box of ``leg_box`` collides while every leg in contact
    still reaches its ground — its footprint kept where the move has a horizontal part; zeros where
    none helps. (A leg folded under low hips pushes its knee into the block in front of it or past
    the edge it stands on; a straighter leg, or hips held back, keeps it clear.)"""
    boxes = lb.subset(leg_box)

    def works(rows, which):
        move = moves[which.astype(int) - 1]
        sl, sr, sp = loc[rows].copy(), rot[rows].copy(), pose[rows].copy()
        m = sp[:, hips].copy()
        m[:, :3, 3] += move
        set_world(skeleton, sl, sr, sp, hips, m, np.ones(len(rows), bool), with_location=True)
        reached = np.ones(len(rows), bool)
        along = np.any(move[:, :2] != 0.0, axis=1)
        for e in legs:
            c = contact[e.name][rows]
            if not np.any(c):
                continue
            side = None if sides is None else sides[e.name][rows]
            hint = forward if e.is_leg else -forward
            if np.any(c & along):  # planted ends stay on their footprints
                flat = move.copy()
                flat[:, 2] = 0.0
                move_end(skeleton, sl, sr, sp, e, -flat, c & along, hint, side=side)
            g, _ = gaps(e.points(skeleton, sp), terrain)
            want = np.where(c, src_gap[e.name][rows] - g, 0.0)
            move_end(skeleton, sl, sr, sp, e, want, c, hint, side=side)
            g2, _ = gaps(e.points(skeleton, sp), terrain)
            reached &= ~c | (np.abs(g2 - src_gap[e.name][rows]) < REACH_TOLERANCE_M)
        return reached & ~np.any(colliding(skeleton, boxes, sp, terrain, p.collision_tolerance_m), axis=1)

    out = np.zeros((pose.shape[0], 3))
    bad = np.nonzero(np.any(hits[:, leg_box], axis=1))[0]
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


def _swivel_to_clear(skeleton, loc, rot, pose, legs, lb, hits, terrain, p, cf, ramp, tick: Ticker,
                     sides: dict | None = None) -> None:
    """Legs still colliding turn the knee out (the bend plane swivels about hip→ankle, toward the
    leg's own side) by the smallest angle of ``SWIVEL_ANGLES_DEG`` that clears them (each angle
    tried both ways, the way that moves the knee outward counts); the swivel fades in and out over
    ``ramp`` frames. The foot stays where it is."""
    angles = np.array([sign * np.radians(deg) for deg in SWIVEL_ANGLES_DEG for sign in (1.0, -1.0)])
    for e in legs:
        mine = np.isin(lb.bones, _limb_bones(e))
        bad = np.nonzero(np.any(hits[:, mine], axis=1))[0]
        if bad.size == 0:
            continue
        side = cf.left if e.name.endswith(".L") else -cf.left
        boxes = lb.subset(mine)

        def works(rows, ang, e=e, side=side, boxes=boxes):
            sl, sr, sp = loc[rows].copy(), rot[rows].copy(), pose[rows].copy()
            knee_before = sp[:, e.lower, :3, 3].copy()
            side_rows = None if sides is None else sides[e.name][rows]
            move_end(skeleton, sl, sr, sp, e, np.zeros(len(rows)), np.ones(len(rows), bool), cf.forward, ang, side_rows)
            outward = np.sum((sp[:, e.lower, :3, 3] - knee_before) * side, axis=-1) > 0
            return outward & ~np.any(colliding(skeleton, boxes, sp, terrain, p.collision_tolerance_m), axis=1)

        best = np.zeros(pose.shape[0])
        best[bad] = _first_that_works(bad, angles, works, tick)
        if not np.any(best != 0):
            continue
        turn = ramp_envelope(np.maximum(best, 0.0), ramp) - ramp_envelope(np.maximum(-best, 0.0), ramp)
        turn = np.where(best != 0, best, turn)  # the frames that need it get exactly what cleared them
        move_end(skeleton, loc, rot, pose, e, np.zeros(pose.shape[0]), turn != 0, cf.forward, turn,
                 None if sides is None else sides[e.name])


def _hips_headroom(skeleton, pose, legs, contact, stretch: float = MAX_STRETCH) -> np.ndarray:
    """Per frame, how far the hips may rise (m) before a leg in contact can no longer reach its
    ankle where it is now (``stretch`` × thigh + shin); inf where no leg is in contact."""
    room = np.full(pose.shape[0], np.inf)
    for e in legs:
        c = contact[e.name]
        hip = pose[:, e.upper, :3, 3]
        ankle = pose[:, e.end, :3, 3]
        reach = stretch * (skeleton.lengths[e.upper] + skeleton.lengths[e.lower])
        dh = np.linalg.norm((hip - ankle)[:, :2], axis=-1)
        up = np.sqrt(np.maximum(reach**2 - dh**2, 0.0)) - (hip[:, 2] - ankle[:, 2])
        room = np.where(c, np.minimum(room, np.maximum(up, 0.0)), room)
    return room
