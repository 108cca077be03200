"""Choosing the keys: the fewest keys whose curves keep every deform joint within the tolerance.

The dense motion is known on every frame (the *samples*: every frame of the bake's range); each key
group (:func:`.layout.key_groups`) is keyed on a subset of them (``Problem.allowed``: the generator's
own frames). A key takes its group's *target* value on its frame — the dense motion, compensated
for the reduced bones above it (:mod:`.compensate`) — and each segment between two keys is the
Hermite curve through them whose two end slopes follow the target best (:mod:`.fit`; one slope
where it serves both segments).

1. **Placement, top-down.** The groups are fitted level by level, parents first
   (``model.top_down``): each level's targets and error maps come from the levels above as reduced;
   its keys are placed by bottom-up merging (:mod:`.place`) within a per-frame bound — ``BUDGET`` of
   the tolerance for rotations, ``ORIGIN_SHARE`` for locations, ``CONTACT_SHARE`` on a foot's contact
   frames for the groups that move that foot and no other (their error's frame-to-frame change is the
   skate they add to a planted foot); groups a model does not compensate (a control rig's) share the
   tolerance along their chains (``CHAIN_POWER``).
2. **The exact check.** The forward model measures every point on every frame with all curves
   reduced. Where a point is beyond the tolerance, the groups on its chain with the largest own
   fitting errors on that frame, as many as the excess needs, have their bounds tightened over that
   segment; where the planted feet skate more than ``contact_speed`` on average, the spans adding
   most have their leg's bounds tightened (the trunk's once the leg's are small, or once tightening
   the leg's left the skate) — in the same round as the errors, when there are both. Those groups
   and the groups below them (whose targets follow them) are placed again, every group is fitted
   again top-down, and checked again.
   With compensated targets a point's error is nearly its own bone's fitting error, so this rarely
   takes more than a round or two.

The whole is a few passes of whole-array operations over the clip — no per-frame or per-key loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .fit import align_many, fit_keys_many
from .place import merge

BUDGET = 0.95  # placement bound of rotations: this fraction of the tolerance (what compensation cannot
# take away of a parent's error, along the bone, comes on top)
ORIGIN_SHARE = 0.3  # … of locations: a bone's origin error runs down its chains along the bones
CONTACT_SHARE = 0.12  # … on a foot's contact frames, of the curves that move that foot and no other
CHAIN_POWER = 0.25  # uncompensated groups (a control rig's): BUDGET / n^CHAIN_POWER, n groups on the chain
TIGHTEN = 0.5  # a bound found too loose by the exact check is multiplied by this, where it was
REFIT_GAIN = 0.5  # a group fitted again within a bound tighter by f is counted to lose this share of (1 − f)
#                   of its own error on the frame (the rest: the refit rarely removes all it could)
MAX_FIX_ROUNDS = 40
STALLED = 0.9  # a skate round that left more than this share of the skate: the later ones tighten every mover


@dataclass
class ContactSpan:
    """A foot planted from sample ``start`` to sample ``end`` (inclusive); ``points``: the indices of
    the forward model's points on that foot (their skate is bounded)."""

    start: int
    end: int
    points: tuple[int, ...]


@dataclass
class Problem:
    """What to reduce: the dense curves on every sample frame and how to measure them.

    samples ``(S,)``: the frames the error is checked on (every frame of the bake's range);
    reference ``(S, C)``: the dense curves' values there (what the dense bake plays);
    groups: channel indices of each key group; model: the forward model (:mod:`.forward`);
    allowed ``(S,)``: samples a key may sit on (default all); forced: per group, sample indices that
    must be keys; contacts: the feet's contact spans; fps: frames per second (skate speeds);
    reference_points: the model's points for the reference (set by :func:`reduce`).
    """

    samples: np.ndarray
    reference: np.ndarray
    groups: list[list[int]]
    model: object
    allowed: np.ndarray | None = None
    forced: list | None = None
    contacts: list[ContactSpan] = field(default_factory=list)
    fps: float = 24.0
    reference_points: np.ndarray | None = None


@dataclass
class Refinement:
    """What :func:`reduce` returns: per group the sample indices of its keys, their values ``(K, n)``
    and left and right slopes ``(K, n)`` (value per frame); the curves' values on every sample
    ``(S, C)``; the largest point error (m) and the skate added (m/s, :func:`skate_added`) left; the
    number of check rounds."""

    keys: list[np.ndarray]
    key_values: list[np.ndarray]
    slopes: list[tuple[np.ndarray, np.ndarray]]
    values: np.ndarray
    max_error: float = 0.0
    skate_added: float = 0.0
    rounds: int = 0
    notes: list[str] = field(default_factory=list)


def lengths(v: np.ndarray) -> np.ndarray:
    """Euclidean lengths along the last axis (``np.linalg.norm(v, axis=-1)``, several times faster
    on a last axis of 2 or 3)."""
    return np.sqrt(np.einsum("...i,...i->...", v, v))


class _Spans:
    """Contact spans laid end to end: ``rows`` (sample of each row), ``span`` (its span), the spans'
    points ``(n_spans, k)``, and per row its span's points; a row's change is taken from the row
    before it in the same span. A span's *skate* is the mean frame-to-frame horizontal change (m per
    frame, Z up) of its points' errors: the speed the curves add to points that should stand still."""

    def __init__(self, contacts: list):
        self.contacts = [c for c in contacts if c.end > c.start]
        width = max((len(c.points) for c in self.contacts), default=0)
        self.points = np.array([c.points for c in self.contacts], dtype=int).reshape(len(self.contacts), width)
        self.rows = np.concatenate([np.arange(c.start, c.end + 1) for c in self.contacts] or [np.zeros(0, int)])
        self.span = np.concatenate([np.full(c.end - c.start + 1, i) for i, c in enumerate(self.contacts)]
                                   or [np.zeros(0, int)])
        self.row_points = self.points[self.span] if len(self.contacts) else np.zeros((0, 0), int)
        self.pairs = np.nonzero(self.span[1:] == self.span[:-1])[0] + 1  # rows with a row before in the span
        self.n_pairs = np.bincount(self.span[self.pairs], minlength=len(self.contacts))

    def skates(self, moved: np.ndarray) -> np.ndarray:
        """Per span, the skate of the displacements ``moved`` ``(rows, k, 3)``."""
        step = lengths(moved[self.pairs, :, :2] - moved[self.pairs - 1, :, :2]).mean(axis=1)
        total = np.bincount(self.span[self.pairs], step, minlength=len(self.contacts))
        return total / np.maximum(self.n_pairs, 1)

    def of(self, err_vec: np.ndarray) -> np.ndarray:
        """Per span, its sole points' skate change for point errors ``err_vec`` ``(S, P, 3)``."""
        return self.skates(err_vec[self.rows[:, None], self.row_points])


def skate_added(err_vec: np.ndarray, contacts: list, fps: float) -> float:
    """The mean horizontal speed (m/s) the curves add to the feet's sole points over every contact
    frame (each span's skate weighted by its frames)."""
    spans = _Spans(contacts)
    if not spans.contacts:
        return 0.0
    return float(np.sum(spans.of(err_vec) * spans.n_pairs) / max(np.sum(spans.n_pairs), 1) * fps)


def _contact_violations(err_vec: np.ndarray, spans: _Spans, limit_per_frame: float) -> list:
    """The contact spans to fix when the feet's errors change faster than ``limit_per_frame`` (m) on
    average over every contact frame of the clip (the skate measure is a mean over contacts): the
    spans above that limit, worst first, as many as bring the mean under it once fixed."""
    if not spans.contacts:
        return []
    skate = spans.of(err_vec)
    weights = spans.n_pairs
    excess = float(np.sum(skate * weights)) - limit_per_frame * float(np.sum(weights))
    if excess <= 0.0:
        return []
    order = np.argsort(-(skate - limit_per_frame) * weights)
    gain = np.cumsum(np.maximum(skate[order] - limit_per_frame, 0.0) * weights[order])
    return list(order[: int(np.searchsorted(gain, excess)) + 1])


class _Fitting:
    """Keys, fitted curves and each group's own error while the reduction runs."""

    def __init__(self, problem: Problem, tolerance: float, compensated: bool = True, played=None):
        p = problem
        self.p = p
        self.played = played
        self.x = np.asarray(p.samples, float)
        self.ref = np.asarray(p.reference, float)
        n, n_groups = len(self.x), len(p.groups)
        self.allowed = np.ones(n, dtype=bool) if p.allowed is None else np.asarray(p.allowed, dtype=bool)
        forced = p.forced or [()] * n_groups
        self.fixed = [np.asarray(sorted({0, n - 1} | {int(s) for s in f}), dtype=int) for f in forced]
        self.affects = np.asarray(p.model.affects)
        self.compensated = compensated
        if compensated:
            share = [ORIGIN_SHARE if p.model.channels[cols[0]].prop == "location" else BUDGET for cols in p.groups]
        else:  # errors add up along the chains (rarely all at once): a share by the longest chain it is on
            depth = self.affects.sum(axis=0)
            share = [BUDGET / depth[self.affects[g]].max(initial=1) ** CHAIN_POWER for g in range(n_groups)]
        self.bound = tolerance * np.repeat(np.asarray(share)[:, None], n, axis=1)
        feet = {tuple(c.points) for c in p.contacts}
        every_foot = sorted({q for pts in feet for q in pts})
        self.floor = 0.01 * tolerance
        self.smooth = np.ones((n_groups, n), dtype=bool)  # where a key may take one slope (not on a planted foot)
        for c in p.contacts:
            self.smooth[self.affects[:, list(c.points)].any(axis=1), c.start : c.end + 1] = False
            others = sorted(set(every_foot) - set(c.points))
            mine = self.affects[:, list(c.points)].any(axis=1)
            if others:
                mine &= ~self.affects[:, others].any(axis=1)
            self.bound[mine, c.start : c.end + 1] = tolerance * CONTACT_SHARE
        self.keys: list[np.ndarray] = [np.zeros(0, int)] * n_groups
        self.key_values: list[np.ndarray] = [np.zeros((0, len(c))) for c in p.groups]
        self.slopes: list[tuple[np.ndarray, np.ndarray]] = [(v, v) for v in self.key_values]
        self.values = self.ref.copy()
        self.own = np.zeros((n_groups, n, 3))  # each group's fitting error as a displacement (m)

    def fit(self, top_down, place=(), opened: dict | None = None, follow: bool = False) -> None:
        """One pass over the levels: targets from the reduced levels above, the keys of the groups in
        ``place`` placed afresh (the others kept), curves fitted. ``opened``: group → the samples
        (booleans ``(S,)``) whose keys are placed again, the group's other keys and curve kept — a
        pass after the first one of an uncompensated reduction, whose targets do not follow the
        levels above (the groups not placed keep their curves). ``follow``: a later pass of a
        compensated reduction, ``place`` holding the groups below those it places (:meth:`below`:
        their targets follow them) — only those are fitted again, and only the bones whose basis
        or frame they change are advanced; the others keep their curves."""
        changed: set[int] = set()  # (follow) the nodes whose frame or basis this pass changed
        for level, groups in enumerate(top_down.levels):
            if follow:
                groups = [g for g in groups if g in place]
                targets, maps = top_down.targets(level, self.values, groups)
            else:
                targets, maps = top_down.targets(level, self.values)
            placed = [g for g in groups if g in place]
            before = {g: (self.keys[g], self.slopes[g]) for g in placed}
            if placed:
                self._place(placed, targets, maps, opened)
            todo = placed if opened is not None else groups  # every curve of a level fitted at once
            slopes = fit_keys_many(self.x, [targets[g] for g in todo], [self.keys[g] for g in todo]) if todo else []
            wheres = []
            for g, (_, left, right) in zip(todo, slopes):
                where = self.smooth[g]
                if opened is not None:  # the keys outside keep their slopes, aligned or not
                    keys = self.keys[g]
                    old_keys, (old_left, old_right) = before[g]
                    redo = opened[g] | np.roll(opened[g], 1) | np.roll(opened[g], -1)  # the ends of a gap too
                    kept = ~redo[keys]
                    at = np.searchsorted(old_keys, keys[kept])
                    left[kept], right[kept] = old_left[at], old_right[at]
                    where = where & redo
                wheres.append(where)
            fitted_curves = align_many(self.x, [targets[g] for g in todo], [self.keys[g] for g in todo],
                                       [s[1] for s in slopes], [s[2] for s in slopes], [maps[g] for g in todo],
                                       [self.bound[g] for g in todo], wheres) if todo else []
            for g, (values, left, right) in zip(todo, fitted_curves):
                self.values[:, self.p.groups[g]] = values
                self.key_values[g] = targets[g][self.keys[g]]
                self.slopes[g] = (left, right)
            fitted = placed if opened is not None else groups
            if self.played is not None and fitted:
                played = self.played([(g, self.keys[g], self.key_values[g], *self.slopes[g]) for g in fitted])
                for g, values in zip(fitted, played):
                    self.values[:, self.p.groups[g]] = values
            for g in fitted:
                self.own[g] = (maps[g] @ (self.values[:, self.p.groups[g]] - targets[g])[..., None])[..., 0]
            if follow:
                changed.update(top_down.m.group_node[g] for g in fitted)
                parent = top_down.m.node_parent
                moved = [k for k in top_down.level_nodes(level) if k in changed or parent[k] in changed]
                top_down.advance(level, self.values, moved)
                changed.update(moved)
            else:
                top_down.advance(level, self.values)

    def opened(self, groups: set[int], changed: np.ndarray) -> dict[int, np.ndarray]:
        """Per group of ``groups``, the samples strictly inside the segments between its keys that hold
        a sample where its bound changed (``changed`` ``(G, S)`` booleans)."""
        out = {}
        for g in groups:
            keys = self.keys[g]
            at = np.nonzero(changed[g])[0]
            at = at[~np.isin(at, keys)]
            gaps = np.zeros(len(self.x) + 1, dtype=int)
            j = np.unique(np.searchsorted(keys, at) - 1)  # the segments keys[j]..keys[j + 1]
            np.add.at(gaps, keys[j] + 1, 1)
            np.add.at(gaps, keys[j + 1], -1)
            out[g] = np.cumsum(gaps[:-1]) > 0
        return out

    def _place(self, groups: list[int], targets: dict, maps: dict, opened: dict | None = None) -> None:
        """Merge the keys of ``groups`` together, their samples laid end to end; with ``opened``
        (see :meth:`fit`), only in the opened samples (the keys elsewhere fixed)."""
        n = len(self.x)
        width = max(len(self.p.groups[g]) for g in groups)
        span = self.x[-1] - self.x[0] + 1.0
        x = np.concatenate([self.x + i * span for i in range(len(groups))])
        target = np.zeros((width, n * len(groups)))  # channels first (see fit.fit_rows)
        mats = np.zeros((3, width, n * len(groups)))
        candidates = np.tile(self.allowed, len(groups))
        fixed = np.zeros(n * len(groups), dtype=bool)
        for i, g in enumerate(groups):
            cols = len(self.p.groups[g])
            target[:cols, i * n : (i + 1) * n] = targets[g].T
            mats[:, :cols, i * n : (i + 1) * n] = np.transpose(maps[g], (1, 2, 0))
            fixed[i * n + self.fixed[g]] = True
            if opened is not None:
                mine = np.zeros(n, dtype=bool)
                mine[self.keys[g]] = True
                fixed[i * n : (i + 1) * n] |= mine & ~opened[g]
                candidates[i * n : (i + 1) * n] &= opened[g]
        bound = np.concatenate([self.bound[g] for g in groups])
        keys = merge(x, target, mats, bound, candidates, fixed)
        for i, g in enumerate(groups):
            self.keys[g] = keys[(keys >= i * n) & (keys < (i + 1) * n)] - i * n

    def below(self, groups: set[int]) -> set[int]:
        """``groups`` and the groups below them (moving a subset of their points): their targets
        follow them, so they are placed again with them."""
        chosen = self.affects[sorted(groups)]
        inside = ~(self.affects[:, None, :] & ~chosen[None, :, :]).any(axis=2)  # (G, chosen)
        return set(np.nonzero(inside.any(axis=1))[0].tolist()) | set(groups)


def reduce(problem: Problem, tolerance: float, contact_speed: float = 0.0005, keys=None, played=None) -> Refinement:
    """Keys per group so that the model moves no point further than ``tolerance`` (m) from where it
    puts it for the reference on any sample, and the planted feet skate no more than
    ``contact_speed`` (m/s) faster on average (see the module docstring). ``keys``: keys to start
    from (sample indices per group) instead of placing them. ``played``: ``[(group, key samples, key
    values (K, n), left and right slopes (K, n)), …] →`` those groups' curves on every sample
    ``(S, n)`` each, as Blender will play them (default: the fitted Hermite curves), so that each
    check is of the curves as written."""
    p = problem
    top_down = p.model.top_down(np.asarray(p.reference, float))
    state = _Fitting(p, tolerance, getattr(top_down, "compensated", True), played)
    ref_pts = p.reference_points = top_down.reference_points
    if keys is None:
        state.fit(top_down, place=set(range(len(p.groups))))
    else:
        state.keys = [np.union1d(np.asarray(k, dtype=int), f) for k, f in zip(keys, state.fixed)]
        state.fit(top_down)
    spans = _Spans(p.contacts)
    limit = contact_speed / p.fps
    escalation = _Escalation()
    result = Refinement(state.keys, state.key_values, state.slopes, state.values)
    for rounds in range(MAX_FIX_ROUNDS + 1):
        err_vec = p.model(state.values) - ref_pts
        err = lengths(err_vec)
        result.rounds = rounds
        bad = np.nonzero(err.max(axis=1) > tolerance)[0]
        skates = _contact_violations(err_vec, spans, limit)
        if (not len(bad) and not skates) or rounds == MAX_FIX_ROUNDS:
            break
        bound = state.bound.copy()
        again = _tighten_errors(state, err, bad, tolerance) if len(bad) else set()
        if skates:
            skate = float(np.sum(spans.of(err_vec) * spans.n_pairs))
            again |= _tighten_skates(state, spans, skates, escalate=escalation(skate))
        if not again:
            result.notes.append("the bound could not be met: every allowed frame is a key")
            break
        if state.compensated:  # the groups below follow them
            state.fit(top_down, place=state.below(again), follow=True)
        else:  # only where the bounds changed
            state.fit(top_down, place=again, opened=state.opened(again, state.bound != bound))
    if rounds == MAX_FIX_ROUNDS and (len(bad) or skates):
        result.notes.append(f"stopped after {MAX_FIX_ROUNDS} rounds")
    result.max_error = float(err.max()) if err.size else 0.0
    result.skate_added = skate_added(err_vec, p.contacts, p.fps)
    result.keys, result.key_values, result.slopes, result.values = (state.keys, state.key_values, state.slopes,
                                                                     state.values)
    return result


def _tighten_errors(state: _Fitting, err: np.ndarray, bad: np.ndarray, tolerance: float) -> set[int]:
    """On each frame beyond the tolerance, the groups on its worst point's chain have their bounds
    tightened over the segment holding that frame, largest own error first, as many as the excess
    needs: tightening a group by the factor ``f`` is counted to remove :data:`REFIT_GAIN` ``× (1 − f)``
    of its own error; those groups are returned (to be placed again)."""
    point = np.argmax(err[bad], axis=1)
    own = lengths(state.own[:, bad])  # (G, n_bad)
    own = np.where(state.affects[:, point], own, -1.0)
    again = set()
    for i, s in enumerate(bad):
        factor = min(TIGHTEN, tolerance / err[s, point[i]])
        excess = err[s, point[i]] - tolerance
        for g in np.argsort(-own[:, i]):
            if own[g, i] <= 0.0 or excess <= 0.0:
                break
            keys = state.keys[g]
            j = int(np.searchsorted(keys, s, side="right"))
            lo, hi = keys[j - 1], keys[min(j, len(keys) - 1)]
            if state.allowed[lo + 1 : hi].any():  # a key can still go in there
                state.bound[g, lo : hi + 1] *= factor
                again.add(int(g))
                excess -= REFIT_GAIN * (1.0 - factor) * own[g, i]
    return again


class _Escalation:
    """Whether a skate round tightens every group that moves a skating foot (:func:`_tighten_skates`):
    from the round after one that left more than :data:`STALLED` of the feet's summed skate on, for
    the rest of the reduction — the leg's own groups were tightened and the skate stayed, so it comes
    from above the legs."""

    def __init__(self) -> None:
        self.last = np.inf  # the feet's summed skate (m per frame) before the last skate round
        self.stalled = False

    def __call__(self, skate: float) -> bool:
        """Whether the round about to start escalates, given the feet's summed skate now."""
        self.stalled = self.stalled or skate > STALLED * self.last
        self.last = skate
        return self.stalled


def _tighten_skates(state: _Fitting, spans: _Spans, skates: list, escalate: bool = False) -> set[int]:
    """For each contact span whose foot skates, the bound of the groups that move that foot and no
    other (the leg's: the trunk's error reaches the foot along the leg only) is tightened over the
    span — of every group that moves it once the leg's are at a hundredth of the tolerance, or
    when ``escalate`` (the leg's tightening stalled: the skate comes from above); those groups are
    returned (to be placed again)."""
    again = set()
    every_foot = set(spans.points.ravel().tolist())
    for i in skates:
        c = spans.contacts[i]
        movers = state.affects[:, list(c.points)].any(axis=1)
        others = sorted(every_foot - set(c.points))
        own = movers & ~state.affects[:, others].any(axis=1) if others else movers
        rows = slice(c.start, c.end + 1)
        if not escalate and np.any(own) and state.bound[own, rows].max() > state.floor:
            movers = own
        state.bound[movers, rows] *= TIGHTEN
        again.update(int(g) for g in np.nonzero(movers)[0])
    return again
