"""The forward model of a bake onto a control rig: control channels → the deform skeleton they drive.

The keys go on the animator's controls (:mod:`procanim_addon.controls`); the error that matters is
still on the deform skeleton. :class:`ControlForward` evaluates the rig as the conversion does
(:class:`~procanim_addon.controls.evaluate.RigPose`: parenting with every inheritance setting and the
constraints control rigs use) with each keyed control's basis built from its channel values, and
returns the heads and tails of the deform skeleton's bones (the ``ORG-`` bones and ``root`` on a
generated Rigify rig; a bone the skeleton turned end for end is measured on the rig's own bone).

The key groups of a control rig are fitted all at once to their dense values (:class:`Direct`):
the conversion's controls do not form one chain of parents a bone-by-bone compensation could follow.

The bones of two-bone IK chains (the limbs of Rigify's IK controls) are posed by solving the chain
from the controls above and at its end (:mod:`.ik_chains`), relative to the conversion's poses of
them when those are given (``pins``: rig bone → matrices ``(F, 4, 4)``, as the conversion pins them;
``reference``: the dense channel values they belong to; ``stretch``: the IK solver's measured response
per chain, by its IK constraint's owner). Other bones in ``pins`` are held there. The
model refuses, naming the chain, to measure a bone that depends on an IK chain it cannot solve.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from .. import transforms as tf
from ..controls.constraints import Unsupported
from ..controls.evaluate import RigPose
from ..controls.rig import ControlRig
from ..skeleton import Skeleton
from .compensate import rotation_jacobian
from .ik_chains import SolvingPose, Triangle, dense_chains, find_chains
from .layout import Channel, channel_basis, key_groups, rotation_prop, rotation_values

IK_STEP = 1e-5  # differences of the controls that move an IK chain (m or scale)
IK_MAP_EVERY = 8  # frames between the samples of the IK chains' measured error maps
FEW_ROWS = 0.5  # a model call evaluates the changed frames alone when they are at most this share of them
FOLLOW_SAMPLES = 24  # frames, spread over the clip, on which a bone is checked to move rigidly with another
FOLLOW_EPS = 1e-6  # largest change (m, or unitless in the rotation) of a follower's matrix in its anchor's
# frame: below Blender's own float32 resolution of a bone's position a few metres from the origin
ANCHOR_TRIES = 3  # bones moved by the same key groups tried as a bone's anchor, nearest first


class ControlForward:
    """Deform heads and tails (bone ``b`` of ``skeleton``: head ``2b``, tail ``2b + 1``), then
    ``extra_points`` (``(skeleton bone index, rest position (3,), armature space)``, carried by the
    rig's bone), ``(N, P, 3)``, for the values of ``channels`` (on ``rig``'s controls). With a
    ``reference``, bones that move rigidly with a measured bone above them are carried by it
    (:meth:`_find_followers`; ``followers=False``: every bone evaluated through the rig)."""

    checks_played = True  # an evaluation of the rig costs more than playing the curves: each round checks them

    def __init__(self, rig: ControlRig, skeleton: Skeleton, channels: list[Channel], pins: dict | None = None,
                 extra_points=(), reference: np.ndarray | None = None, stretch: dict | None = None,
                 followers: bool = True):
        self.rig, self.sk, self.channels = rig, skeleton, channels
        self.stretch = stretch or {}
        self.groups = key_groups(channels)
        self.chains = find_chains(rig)
        pins = {b if isinstance(b, (int, np.integer)) else rig.index(b): m for b, m in (pins or {}).items()}
        self.pins = {b: m for b, m in pins.items() if b not in self.chains}
        self.dense: dict = {}
        self._like: RigPose | None = None  # the first state made: its tables of the rig's structure are shared
        self._last: tuple | None = None  # (values, points) of the previous call
        self._full: tuple | None = None  # (values, their evaluation on every frame) of a previous call
        missing = sorted({c.bone for c in channels if not rig.has(c.bone)})
        if missing:
            raise ValueError(f"channels of bones the rig does not have: {', '.join(missing)}")
        self.columns: dict[int, list[int]] = {}
        for c, ch in enumerate(channels):
            self.columns.setdefault(rig.index(ch.bone), []).append(c)
        self.group_control = [rig.index(channels[cols[0]].bone) for cols in self.groups]
        self.measured = np.array([rig.index(n) for n in skeleton.names])
        self.extra = [(int(self.measured[b]), (tf.affine_inverse(rig.matrix_local[self.measured[b]])
                                               @ np.append(np.asarray(p, float), 1.0))[:3]) for b, p in extra_points]
        self.n_points = 2 * len(self.measured) + len(self.extra)
        self.follow: dict[int, tuple[int, np.ndarray]] = {}  # rig bone → (its anchor, its head and tail there)
        self._layouts: dict[bytes, tuple] = {}  # bones → how _points finds them (_layout)
        self._reference: tuple | None = None  # (values, the rig evaluated for them so far) for top_down
        try:
            if reference is not None:
                reference = np.asarray(reference, float)
                if followers:
                    self._find_followers(reference)
                state = self._state(reference)
                if pins:
                    chain_pins = {b: m for b, m in pins.items() if b in self.chains}
                    self.dense = dense_chains(rig, state, chain_pins)
                    state.dense, state.stretch = self.dense, (self.stretch if self.dense else None)
                    for top in {chain.top for chain in self.chains.values()}:
                        state._drop_solved(top)  # a chain solved from the rig's lengths, if any: again
                self._reference = (reference, state)
            self.affects = self._affects()
        except Unsupported as exc:
            raise ValueError(f"the control rig's deform bones cannot be evaluated here ({exc})") from exc

    def _rest_values(self) -> np.ndarray:
        """Channel values of the rest pose (quaternion w and scale 1, everything else 0) ``(C,)``."""
        out = np.zeros(len(self.channels))
        for c, ch in enumerate(self.channels):
            if (ch.prop == "rotation_quaternion" and ch.index == 0) or ch.prop == "scale":
                out[c] = 1.0
            elif ch.prop == "rotation_axis_angle" and ch.index == 2:
                out[c] = 1.0  # Blender's default axis (0, 1, 0)
        return out

    def _affects(self) -> np.ndarray:
        """Which points each group moves: the points that move when its control is turned and shifted
        a little on the rest pose — one evaluation of the rig, a row per group (its control nudged)
        and a last row at rest."""
        n = len(self.groups)
        rest = np.zeros((n + 1, len(self.channels))) + self._rest_values()
        probe = self._state(rest, np.zeros(n + 1, dtype=int), with_chains=False)  # pinned bones: the first frame's
        nudge = np.eye(4)
        nudge[:3, :3] = tf.quat_to_mat3(tf.quat_normalize(np.array([1.0, 0.1, 0.2, 0.3])))
        nudge[:3, 3] = (0.01, 0.02, 0.03)
        for control in set(self.group_control):
            rows = [g for g, c in enumerate(self.group_control) if c == control]
            basis = probe.basis[control].copy()
            basis[rows] = basis[rows] @ nudge
            probe.set_basis(control, basis)
        points = self._points(probe)
        return np.abs(points[:n] - points[n:]).max(axis=2) > 1e-9

    def _find_followers(self, reference: np.ndarray) -> None:
        """Find the measured bones that move rigidly with a measured bone above them (the face with
        the head, the fingers with the hand, while their own controls are not keyed): their points are
        then carried by that *anchor*'s matrices, and the rig machinery between them is not evaluated.

        A bone follows a candidate (:meth:`_anchor_candidates`) when its matrix in that bone's frame
        is the same, within :data:`FOLLOW_EPS`, on :data:`FOLLOW_SAMPLES` frames spread over the
        ``reference`` and with every keyed control turned and shifted there (the IK chains posed from
        the rig's lengths: a rigid attachment does not depend on them); its anchor is then that
        bone's own anchor, if it follows one. The extra points on a follower move to its anchor."""
        n = len(reference)
        rows = np.unique(np.linspace(0, n - 1, FOLLOW_SAMPLES).round().astype(int))
        state = self._state(np.tile(reference[rows], (2, 1)), np.tile(rows, 2), with_chains=False)  # 2nd copy nudged
        for k, control in enumerate(self.columns):
            basis = state.basis[control].copy()
            basis[len(rows) :] = basis[len(rows) :] @ _nudge(k)
            state.set_basis(control, basis)
        inverse: dict[int, np.ndarray] = {}
        anchor: dict[int, tuple[int, np.ndarray]] = {}  # follower → (anchor, its matrix in the anchor's frame)
        for b, candidates in self._anchor_candidates(state):
            for p in candidates:
                if p not in inverse:
                    inverse[p] = tf.affine_inverse(state.pose(p))
                rel = inverse[p] @ state.pose(b)
                fixed = rel[0]
                if float(np.abs(rel - fixed).max()) <= FOLLOW_EPS:
                    if p in anchor:  # the anchor's own anchor, the matrices composed
                        p, fixed = anchor[p][0], anchor[p][1] @ fixed
                    anchor[b] = (p, fixed)
                    break
        for b, (a, m) in anchor.items():
            tail = m[:3, 3] + m[:3, 1] * self.rig.lengths[b]
            self.follow[b] = (a, np.stack([m[:3, 3], tail]))
        self.extra = [(anchor[b][0], (anchor[b][1] @ np.append(p, 1.0))[:3]) if b in anchor else (b, p)
                      for b, p in self.extra]

    def _anchor_candidates(self, state: RigPose):
        """Per measured bone (rig index, parents first), the measured bones before it it may follow:
        its nearest measured ancestor, then those that read the same keyed controls, nearest first
        (a generated Rigify rig parents its palms to no measured bone: they follow the hand)."""
        rows = {int(b): k for k, b in enumerate(self.measured)}
        reads = [state._closure(control) for control in self.columns]
        moved_by = {b: tuple(b in closure for closure in reads) for b in rows}
        for b in sorted(rows):
            p = int(self.rig.parents[b])
            while p >= 0 and p not in rows:
                p = int(self.rig.parents[p])
            same = np.array([c for c in rows if c < b and c != p and moved_by[c] == moved_by[b]], dtype=int)
            near = np.argsort(tf.norms(self.rig.heads[same] - self.rig.heads[b]))[:ANCHOR_TRIES]
            yield b, ([p] if p >= 0 else []) + [int(c) for c in same[near]]

    def _reading(self, state: RigPose, controls) -> tuple[np.ndarray, list[int], np.ndarray]:
        """The measured bones (rig indices) and extra points (numbers) that read any of ``controls``
        (the only ones a change of their bases can move), and their columns of :meth:`_points`."""
        moved: set[int] = set()
        for control in controls:
            moved |= state._closure(int(control))
        rows = [k for k, b in enumerate(self.measured) if int(b) in moved]
        extra = [e for e, (bone, _) in enumerate(self.extra) if bone in moved]
        first = 2 * len(self.measured)
        cols = np.array([c for k in rows for c in (2 * k, 2 * k + 1)] + [first + e for e in extra], dtype=int)
        return self.measured[rows], extra, cols

    def _basis(self, control: int, values: np.ndarray) -> np.ndarray:
        loc, rot, scale = channel_basis(self.channels, values, self.columns[control])
        n = values.shape[0]
        m = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
        if rot is not None:
            m[:, :3, :3] = rot
        if scale is not None:
            m[:, :3, :3] *= scale[:, None, :]
        if loc is not None:
            m[:, :3, 3] = loc
        return m

    def _state(self, values: np.ndarray, rows: np.ndarray | None = None, with_chains: bool = True) -> SolvingPose:
        """The rig evaluated for ``values`` — the frames ``rows`` of the clip (default: all of them);
        ``with_chains`` False: the IK chains posed from the rig's lengths alone (not the clip's)."""
        n = values.shape[0]
        dense = {}
        if with_chains:
            dense = self.dense if rows is None else {top: _rows_of(d, rows) for top, d in self.dense.items()}
            dense = dense if all(len(d[3]) == n for d in dense.values()) else {}  # (other frames than the clip's)
        state = SolvingPose(self.rig, n, self.chains, dense, self.stretch if dense else None, like=self._like,
                            lean=True)
        self._like = self._like or state
        for control in self.columns:
            state.set_basis(control, self._basis(control, values))
        for bone, pose in self.pins.items():
            state.pin(bone, pose if rows is None else pose[rows])
        return state

    def _layout(self, bones) -> tuple[list[tuple[int, int]], list[tuple[int, np.ndarray, np.ndarray]]]:
        """How :meth:`_points` finds the heads and tails of ``bones``: ``(place, bone)`` of those
        evaluated through the rig, and per anchor ``(anchor, columns, local points (3, 2n))`` of the
        followers it carries (worked out once per list of bones)."""
        key = np.asarray(bones, dtype=np.int64).tobytes()
        got = self._layouts.get(key)
        if got is None:
            own, places = [], {}
            for k, b in enumerate(bones):
                follow = self.follow.get(int(b))
                if follow is None:
                    own.append((k, int(b)))
                else:
                    places.setdefault(follow[0], []).append(k)
            carried = [(anchor, np.ravel([(2 * k, 2 * k + 1) for k in ks]),
                        np.concatenate([self.follow[int(bones[k])][1] for k in ks]).T) for anchor, ks in places.items()]
            got = self._layouts[key] = (own, carried)
        return got

    def _points(self, state: RigPose, bones=None, extra=None) -> np.ndarray:
        """Heads and tails of ``bones`` (rig indices; default every measured bone, then the extra
        points), or of ``bones`` and then the extra points numbered ``extra``."""
        if bones is None:
            bones, extra = self.measured, range(len(self.extra))
        extra = [] if extra is None else list(extra)
        out = np.empty((state.frames, 2 * len(bones) + len(extra), 3))
        own, carried = self._layout(bones)
        for k, b in own:
            pose = state.pose(b)
            out[:, 2 * k] = pose[:, :3, 3]
            out[:, 2 * k + 1] = pose[:, :3, 3] + pose[:, :3, 1] * self.rig.lengths[b]  # the tail carries scale
        for anchor, cols, local in carried:  # the followers' heads and tails, carried by their anchors
            pose = state.pose(anchor)
            out[:, cols] = np.swapaxes(pose[:, :3, :3] @ local, 1, 2) + pose[:, None, :3, 3]
        for k, e in enumerate(extra):
            bone, local = self.extra[e]
            pose = state.pose(bone)
            out[:, 2 * len(bones) + k] = pose[:, :3, :3] @ local + pose[:, :3, 3]
        return out

    def __call__(self, values: np.ndarray) -> np.ndarray:
        """The points for ``values`` ``(N, C)``. The previous call's evaluation is kept: a call with
        the same number of frames evaluates again only what the controls whose values changed move
        (a refinement round changes a few key groups), on the frames where they changed when those
        are few (:data:`FEW_ROWS`), else on every frame. The array returned is read-only: the model
        keeps it for the next call."""
        values = np.asarray(values, float)
        if self._last is None or self._last[0].shape != values.shape:
            state = self._state(values)
            points = self._points(state)
            self._full = (values.copy(), state)
        else:
            old, points = self._last
            rows = np.flatnonzero((old != values).any(axis=1))
            if not len(rows):
                return points
            points = points.copy()
            if len(rows) <= FEW_ROWS * len(values):
                changed = self._changed(old[rows], values[rows])
                sub = self._state(values[rows], rows)
                bones, extra, cols = self._reading(sub, changed)
                points[np.ix_(rows, cols)] = self._points(sub, bones, extra)
            else:
                full_values, state = self._full
                changed = self._changed(full_values, values)
                for control in changed:
                    state.set_basis(control, self._basis(control, values))
                bones, extra, cols = self._reading(state, changed)
                if len(cols):
                    points[:, cols] = self._points(state, bones, extra)
                self._full = (values.copy(), state)
        points.flags.writeable = False
        self._last = (values.copy(), points)
        return points

    def reference_state(self, values: np.ndarray) -> RigPose:
        """The rig evaluated for ``values``: the state that worked out the IK chains' dense data when
        these are its values (what it evaluated is kept), else a new one. Handed out once."""
        kept, self._reference = self._reference, None
        if kept is not None and kept[0].shape == values.shape and np.array_equal(kept[0], values):
            return kept[1]
        return self._state(values)

    def start_from(self, values: np.ndarray, state: RigPose, points: np.ndarray) -> None:
        """Take ``state`` (the rig evaluated for ``values``, which gave ``points``) as the previous call's:
        the next call evaluates again only what changed, in that state (no second evaluation of the
        whole rig held at once). ``points`` is made read-only."""
        points.flags.writeable = False
        self._last = (values.copy(), points)
        self._full = (values.copy(), state)

    def _changed(self, old: np.ndarray, new: np.ndarray) -> list[int]:
        """The controls whose channel values differ between ``old`` and ``new``."""
        return [control for control, cols in self.columns.items() if not np.array_equal(old[:, cols], new[:, cols])]

    def top_down(self, reference: np.ndarray) -> Direct:
        """The key groups fitted all at once to their dense values, each bounded by how far its
        control moves the deform points it drives (:class:`Direct`)."""
        return Direct(self, reference)


class Direct:
    """Targets and error maps of a control rig's key groups: one level, each group fitted to its
    dense values. A rotation's map is its rotation vector (:func:`.compensate.rotation_jacobian`)
    times the distance from the control's head to the farthest deform point it moves, a location's
    the identity (controls are not scaled by their parents on these rigs) — except for the location
    and scale groups of the controls that move a solved IK chain, which moves its knee by many times
    the shift of its target or root near full reach: theirs is measured, the change of the chain's
    points per unit of each channel (forward differences, sampled: :meth:`_measure_ik_maps`) on each
    frame, at the point that moves most. A rotation group's map stays its lever's: on Rigify's rigs,
    whose chains stretch near full reach, a chain moved by a rotation did not move more than the
    lever says (docs/keys.md); on a chain that does not stretch it may (the engine tests' mini rig: up
    to 1.56×), and the exact check of the reduction tightens the frames it puts beyond the tolerance."""

    compensated = False  # each group is fitted to its dense values

    def __init__(self, model: ControlForward, reference: np.ndarray):
        self.m = model
        self.ref = np.asarray(reference, float)
        self.levels = [list(range(len(model.groups)))]
        state = model.reference_state(self.ref)
        points = self.reference_points = model._points(state)
        model.start_from(self.ref, state, points)
        self.lever = {}
        along = np.ascontiguousarray(np.moveaxis(points, 0, -1))  # (P, 3, F): frames last, for speed
        for control in set(model.group_control):  # the distances from a control's head, once per control
            groups = [g for g, c in enumerate(model.group_control) if c == control]
            cols = np.nonzero(model.affects[groups].any(axis=0))[0]
            away = along[cols] - np.ascontiguousarray(state.pose(control)[:, :3, 3].T)
            squared = np.einsum("pif,pif->pf", away, away)
            for g in groups:
                mine = model.affects[g, cols]
                self.lever[g] = np.sqrt(squared[mine].max(axis=0)) if mine.any() else np.zeros(len(points))
        self._lever_maps, self._lever_sizes = self._maps_of_levers()
        self.measured: dict[int, np.ndarray] = self._measure_ik_maps()
        self._targets: tuple[dict, dict] | None = None

    def _measure_ik_maps(self) -> dict[int, np.ndarray]:
        """Per location or scale group that moves a deform bone an IK chain poses: its measured map
        ``(S, 3, n)``, from forward differences on every :data:`IK_MAP_EVERY`-th frame (and the
        last), each frame taking the larger of its two neighbouring samples' maps. The maps guide the
        placement; the exact check of the reduction measures every frame."""
        m = self.m
        posed = _chain_bones(m._like, m.chains, m.measured)
        moving = {g: [i for i, k in enumerate(posed) if m.affects[g, 2 * k] or m.affects[g, 2 * k + 1]]
                  for g, cols in enumerate(m.groups) if not m.channels[cols[0]].prop.startswith("rotation")}
        moving = {g: mine for g, mine in moving.items() if mine}
        if not moving:
            return {}
        n = len(self.ref)
        rows = np.unique(np.append(np.arange(0, n, IK_MAP_EVERY), n - 1))
        ref = self.ref[rows]
        width = max(len(m.groups[g]) for g in moving)
        # the sampled frames once per channel of the widest group, one after the other: a group is
        # changed along each channel in its own copy and measured in one evaluation of the rig
        stacked = np.tile(ref, (width, 1))
        sampled = m._state(stacked, np.tile(rows, width))
        at_ref = m._points(sampled, m.measured[posed])[: len(rows)]  # their heads and tails at the dense controls
        lo = np.minimum(np.arange(n) // IK_MAP_EVERY, len(rows) - 1)
        hi = np.minimum(lo + 1, len(rows) - 1)
        out = {}
        for g, mine in moving.items():
            control, cols = m.group_control[g], m.groups[g]
            bones = [posed[i] for i in mine]
            points = np.concatenate([[2 * i, 2 * i + 1] for i in mine])
            values = stacked.copy()
            for i, c in enumerate(cols):
                values[i * len(rows) : (i + 1) * len(rows), c] += IK_STEP
            sampled.set_basis(control, m._basis(control, values))
            moved = m._points(sampled, m.measured[bones]).reshape(width, len(rows), len(points), 3)[: len(cols)]
            jac = np.moveaxis((moved - at_ref[:, points]) / IK_STEP, 0, -1)  # (S', P, 3, n): per unit of each channel
            sampled.set_basis(control, m._basis(control, stacked))
            size = np.einsum("spij,spij->sp", jac, jac)
            worst = np.argmax(size, axis=1)
            at = jac[np.arange(len(rows)), worst]  # (S', 3, n): each sample's point that moves most
            larger = size.max(axis=1)
            out[g] = at[np.where(larger[hi] > larger[lo], hi, lo)]
        return out

    def targets(self, level: int, values: np.ndarray) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
        """Each group's dense values and error map (the same whatever ``values``: worked out once)."""
        if self._targets is None:
            self._targets = self._work_out_targets(level)
        return self._targets

    def _maps_of_levers(self) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
        """Each group's map from its channels and lever (see the class docstring), unmeasured, and its
        squared size on each frame."""
        maps = {}
        s = len(self.ref)
        for g in self.levels[0]:
            cols = self.m.groups[g]
            ch = self.m.channels[cols[0]]
            if ch.prop == "location":
                maps[g] = np.broadcast_to(np.eye(3), (s, 3, 3))
            elif ch.prop == "scale":
                maps[g] = self.lever[g][:, None, None] * np.eye(3)
            else:
                maps[g] = rotation_jacobian(ch.prop, ch.mode, self.ref[:, cols]) * self.lever[g][:, None, None]
        return maps, {g: np.einsum("sij,sij->s", m, m) for g, m in maps.items()}

    def _work_out_targets(self, level: int) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
        targets, maps = {}, {}
        for g in self.levels[level]:
            targets[g] = self.ref[:, self.m.groups[g]]
            maps[g] = self._lever_maps[g]
            if g in self.measured:  # the larger of the two, frame by frame
                bigger = np.einsum("sij,sij->s", self.measured[g], self.measured[g]) > self._lever_sizes[g]
                maps[g] = np.where(bigger[:, None, None], self.measured[g], maps[g])
        return targets, maps

    def advance(self, level: int, values: np.ndarray) -> None:
        """Nothing to carry: the groups are not compensated."""


def _nudge(k: int) -> np.ndarray:
    """A turn of a few degrees and a shift of a few centimetres, different for each ``k``."""
    m = np.eye(4)
    m[:3, :3] = tf.quat_to_mat3(tf.quat_normalize(np.array([1.0, 0.05 + 0.01 * k, -0.03, 0.02 + 0.005 * k])))
    m[:3, 3] = (0.01, -0.02 - 0.001 * k, 0.03)
    return m


def _chain_bones(state, chains, measured: np.ndarray) -> list[int]:
    """The measured bones (their indices in ``measured``) the IK ``chains`` pose: the first measured
    bones found below a chain member, through the rig's dependencies (not past another measured
    bone: what hangs below those moves with them, as the levers of the maps already count)."""
    rows = {int(b): k for k, b in enumerate(measured)}
    found, seen, stack = set(), set(chains), list(chains)
    while stack:
        for d in state._dependents[stack.pop()]:
            if d in seen:
                continue
            seen.add(d)
            if d in rows:
                found.add(rows[d])
            else:
                stack.append(d)
    return sorted(found)


def _rows_of(dense: tuple, rows: np.ndarray) -> tuple:
    """A chain's dense data (:func:`.ik_chains.dense_chains`) on the frames ``rows``."""
    upper, lower, tri, scale, distance = dense
    return (upper[rows], lower[rows], Triangle(*(getattr(tri, f.name)[rows] for f in fields(Triangle))), scale[rows],
            distance[rows])


def control_channels(rig: ControlRig, keys) -> tuple[list[Channel], np.ndarray]:
    """The F-curves a bake onto controls writes for a conversion's ``keys``
    (:class:`~procanim_addon.controls.ControlKeys`) and their dense values ``(F, C)`` (float32-rounded):
    location, rotation in each control's rotation mode, and the scale of stretch-cancelling
    controls — as ``operators/control_rig.py`` writes them."""
    channels: list[Channel] = []
    columns: list[np.ndarray] = []
    for c in sorted(keys.basis):
        name, mode = rig.names[c], rig.rotation_modes[c]
        loc, rot = keys.location.get(c), keys.rotation.get(c)
        if loc is None or rot is None:
            loc, rot, _ = tf.decompose(keys.basis[c])
        if keys.key_location[c]:
            channels += [Channel(name, "location", k) for k in range(3)]
            columns.append(loc)
        if keys.key_rotation[c]:
            prop = rotation_prop(mode)
            kind = mode if prop != "rotation_axis_angle" else "AXIS_ANGLE"
            values = rotation_values(mode, rot)
            channels += [Channel(name, prop, k, kind) for k in range(values.shape[1])]
            columns.append(values)
        if c in keys.scale:
            channels += [Channel(name, "scale", k) for k in range(3)]
            columns.append(keys.scale[c])
    values = np.concatenate(columns, axis=1) if columns else np.zeros((0, 0))
    return channels, values.astype(np.float32).astype(float)
