"""Choosing the keys: the fewest keys whose curves keep every deform joint within the tolerance.

The dense motion is known on every frame (the *samples*: every frame of the bake's range); each key
group (:func:`.layout.key_groups`) is keyed on a subset of them (``Problem.allowed``: the generator's
own frames). A key takes the dense value of its frame; its slopes are solved (:mod:`.fit`: the
curve that follows the dense one best between keys) or copied from the dense curve. Each segment
between two keys is the Hermite curve through them — the curve Blender draws through the handles
:func:`.handles.aligned` writes.

**Greedy refinement on the joint error** (a Douglas–Peucker split driven by the pose, not by each
curve's values). Every group starts with its first, last and forced keys. Then, round after round:

1. evaluate every curve on every frame and the forward model on the result: the error of a point on
   a frame is its distance from where the dense motion puts it;
2. on each frame whose worst point is beyond the target, find the curves responsible — of the groups
   that move that point, those whose own error moves it at least half as much as the largest
   (``model.contribution``: that curve reduced, every other channel dense; exact, not linearised);
3. give each responsible group a key in each run of such frames within one of its segments, on the
   frame of its largest share; where that share is many times the target, keys spread evenly over
   the segment, as many as the square root of the ratio (far from the keys the error does not yet
   shrink with the fourth power of the spacing).

Once every joint is within the bound, the feet's contact spans are checked for *skate*: the mean
horizontal speed the curves add to the sole points over every contact frame must stay under
``contact_speed``. The spans contributing most to the excess are fixed first: each group whose
share of a span's skate is at least half the largest gets a key where it moves the foot most.

Errors add along a chain (the hips' error moves the feet too), so per-curve budgets fixed in advance
would either overshoot or waste keys; deciding on the measured joint error spends keys only where the
pose needs them. A round costs one evaluation of the forward model over the clip and the group
contributions on the offending frames only, and adds keys to every offending segment at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .fit import solve_many
from .handles import hermite_values


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
    prior ``(S, C)``: the dense curves' slopes there (value per frame);
    groups: channel indices per key group; model: the forward model (:mod:`.forward`);
    allowed ``(S,)``: the samples a key may be put on (the generator's own key frames);
    forced / corners: per group, sample indices that must be keys / whose keys get a slope on each side;
    contacts: the feet's contact spans; fps: frames per second (skate speeds).
    """

    samples: np.ndarray
    reference: np.ndarray
    prior: np.ndarray
    groups: list[list[int]]
    model: object
    allowed: np.ndarray | None = None
    forced: list | None = None
    corners: list | None = None
    contacts: list[ContactSpan] = field(default_factory=list)
    fps: float = 24.0


@dataclass
class Refinement:
    """What :func:`refine` returns: per group the sample indices of its keys and their left and right
    slopes ``(K, n)``, the curves' values on every sample ``(S, C)``, the largest joint error (m) and
    the skate added (m/s, :func:`skate_added`) left, and the number of rounds."""

    keys: list[np.ndarray]
    slopes: list[tuple[np.ndarray, np.ndarray]]
    values: np.ndarray
    max_error: float = 0.0
    skate_added: float = 0.0
    rounds: int = 0
    notes: list[str] = field(default_factory=list)


def data_slopes(samples: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The dense curves' slopes (value per frame) at every sample ``(S, C)``: fourth-order central
    differences where the samples are evenly spaced, numpy's second-order gradient elsewhere."""
    x = np.asarray(samples, float)
    y = np.asarray(reference, float)
    if len(x) < 2:
        return np.zeros_like(y)
    m = np.gradient(y, x, axis=0, edge_order=2 if len(x) > 2 else 1)
    if len(x) >= 5:
        h = np.diff(x)
        even = np.abs(h[:-3] - h[3:]) + np.abs(h[1:-2] - h[2:-1]) + np.abs(h[:-3] - h[1:-2]) < 1e-9
        i = np.nonzero(even)[0] + 2
        if len(i):
            step = h[i - 2][:, None]
            m[i] = (y[i - 2] - 8 * y[i - 1] + 8 * y[i + 1] - y[i + 2]) / (12 * step)
    return m


MIN_SPREAD = 4  # keys spread over a segment at once are at least this many frames apart
SHARE_RATIO = 0.5  # groups moving the worst point at least this fraction of the most share the blame


class _State:
    """The keys, slopes and curves of every group while the refinement runs. Keys added with
    :meth:`add` take effect at :meth:`flush` (every changed group's slopes solved together)."""

    def __init__(self, samples, reference, groups, keys, prior, corners, solve: bool):
        self.x = np.asarray(samples, float)
        self.ref = reference
        self.groups = groups
        self.keys = [np.unique(np.asarray(k, dtype=int)) for k in keys]
        self.prior = prior
        self.corners = [np.asarray(sorted(c), dtype=int) for c in corners]
        self.solve = solve
        self.slopes: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros(0), np.zeros(0))] * len(groups)
        self.values = np.empty_like(reference)
        self.dirty = set(range(len(groups)))
        self.flush()

    def flush(self) -> None:
        dirty = sorted(self.dirty)
        self.dirty.clear()
        if self.solve:
            solved = solve_many([(self.x, self.keys[g], self.ref[:, self.groups[g]], self.prior[:, self.groups[g]],
                                  np.isin(self.keys[g], self.corners[g])) for g in dirty])
        else:
            solved = [(self.prior[self.keys[g]][:, self.groups[g]],) * 2 for g in dirty]
        for g, (ml, mr) in zip(dirty, solved):
            cols, k = self.groups[g], self.keys[g]
            self.slopes[g] = (ml, mr)
            self.values[:, cols] = hermite_values(self.x[k], self.ref[k][:, cols], ml, mr, self.x)

    def add(self, g: int, frames) -> None:
        self.keys[g] = np.union1d(self.keys[g], np.asarray(frames, dtype=int))
        self.dirty.add(g)


class _Spans:
    """Contact spans laid end to end: ``rows`` (frame of each row), ``span`` (its span), the spans'
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
        step = np.linalg.norm(moved[self.pairs, :, :2] - moved[self.pairs - 1, :, :2], axis=-1).mean(axis=1)
        total = np.bincount(self.span[self.pairs], step, minlength=len(self.contacts))
        return total / np.maximum(self.n_pairs, 1)

    def of(self, err_vec: np.ndarray) -> np.ndarray:
        """Per span, its sole points' skate change for point errors ``err_vec`` ``(S, P, 3)``."""
        return self.skates(err_vec[self.rows[:, None], self.row_points])


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


def refine(problem: Problem, tolerance: float, contact_speed: float = 0.0005, keys=None, solve: bool = True,
           max_rounds: int = 400) -> Refinement:
    """Keys per group so that the model moves no point further than ``tolerance`` (m) from where it
    puts it for the reference on any sample, and no contact span's foot skates more than
    ``contact_speed`` (m/s) faster on average (see the module docstring). ``keys``: keys to start
    from (sample indices per group; default the first, last and forced ones); ``solve``: fit the
    slopes (:mod:`.fit`) rather than copy the dense ones."""
    p = problem
    x = np.asarray(p.samples, float)
    ref = np.asarray(p.reference, float)
    n, n_groups = len(x), len(p.groups)
    forced = p.forced or [()] * n_groups
    corners = p.corners or [()] * n_groups
    allowed = np.ones(n, dtype=bool) if p.allowed is None else np.asarray(p.allowed, dtype=bool)
    if keys is None:
        keys = [np.concatenate([[0, n - 1], np.asarray(sorted(f), dtype=int)]) for f in forced]
    prior = np.asarray(p.prior, float)
    state = _State(x, ref, p.groups, keys, prior, corners, solve)
    model = p.model
    model.prepare(ref)
    ref_pts = model(ref)
    affects = np.asarray(model.affects)
    limit = contact_speed / p.fps
    spans = _Spans(p.contacts)
    result = Refinement(state.keys, state.slopes, state.values)
    for rounds in range(max_rounds):
        err_vec = model(state.values) - ref_pts
        err = np.linalg.norm(err_vec, axis=-1)
        bad = np.nonzero(err.max(axis=1) > tolerance)[0]
        skates = _contact_violations(err_vec, spans, limit)
        result.rounds = rounds
        if not len(bad) and not skates:
            break
        added = _split_errors(state, model, affects, err, bad, allowed, tolerance)
        if not added:  # skating is looked at once the joints are within the bound (that moves feet too)
            added = _split_skates(state, model, affects, spans, skates, allowed)
        if not added:  # nothing left to split: key the worst frames on every group that moves them
            added = _key_everything(state, affects, err, bad, allowed)
            if not added:
                result.notes.append("the bound could not be met: every allowed frame is a key")
                break
        state.flush()
    else:
        result.notes.append(f"stopped after {max_rounds} rounds")
    err_vec = model(state.values) - ref_pts
    result.max_error = float(np.linalg.norm(err_vec, axis=-1).max()) if n else 0.0
    result.skate_added = skate_added(err_vec, p.contacts, p.fps)
    result.keys, result.slopes, result.values = state.keys, state.slopes, state.values
    return result


def _snap(frames: np.ndarray, keys: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Each frame moved to the nearest allowed sample strictly between its neighbouring keys (-1: none)."""
    ok = np.nonzero(allowed)[0]
    out = np.full(len(frames), -1)
    for i, f in enumerate(frames):
        j = np.searchsorted(keys, f)
        lo, hi = keys[j - 1] if j > 0 else -1, keys[j] if j < len(keys) else len(allowed)
        cand = ok[(ok > lo) & (ok < hi)]
        if len(cand):
            out[i] = cand[np.argmin(np.abs(cand - f))]
    return out


def _key_everything(state: _State, affects: np.ndarray, err: np.ndarray, bad: np.ndarray, allowed: np.ndarray) -> int:
    added = 0
    for s in bad:
        for g in np.nonzero(affects[:, int(np.argmax(err[s]))])[0]:
            new = _snap(np.array([s]), state.keys[g], allowed)
            if new[0] >= 0:
                state.add(g, new)
                added += 1
    return added


def skate_added(err_vec: np.ndarray, contacts: list, fps: float) -> float:
    """The mean horizontal speed (m/s) the curves add to the feet's sole points over every contact
    frame (each span's skate weighted by its frames)."""
    spans = _Spans(contacts)
    if not spans.contacts:
        return 0.0
    return float(np.sum(spans.of(err_vec) * spans.n_pairs) / max(np.sum(spans.n_pairs), 1) * fps)


def _split_errors(state: _State, model, affects: np.ndarray, err: np.ndarray, bad: np.ndarray,
                  allowed: np.ndarray, tolerance: float) -> int:
    """More keys in every segment of a responsible group that holds frames beyond the bound: one on
    the frame of its largest share, or — where that share is many times the tolerance — keys
    spread evenly over the segment, as many as a Hermite curve's error (∝ spacing⁴) says it needs."""
    if not len(bad):
        return 0
    point = np.argmax(err[bad], axis=1)
    share = np.zeros((len(bad), len(state.groups)))
    for g in range(len(state.groups)):
        on = affects[g, point]
        if np.any(on):
            d = model.contribution(g, state.values, state.ref, bad[on], point[on])
            share[on, g] = np.linalg.norm(d, axis=-1)
    # every group whose share is close to the largest is responsible: the keys that a chain of curves
    # needs together are added in one round instead of one curve per round
    responsible = share >= SHARE_RATIO * share.max(axis=1, keepdims=True)
    added = 0
    for g in np.nonzero(responsible.any(axis=0))[0]:
        mine = responsible[:, g]
        frames, amount = bad[mine], share[mine, g]
        keep = amount > 0
        frames, amount = frames[keep], amount[keep]
        if not len(frames):
            continue
        keys = state.keys[g]
        segment = np.searchsorted(keys, frames)
        # runs: stretches of these frames within one segment (frames are sorted, as ``bad`` is)
        run = np.cumsum(np.concatenate([[1], (np.diff(frames) > 2) | (np.diff(segment) != 0)]))
        order = np.lexsort((-amount, run))
        first = np.ones(len(order), dtype=bool)
        first[1:] = run[order][1:] != run[order][:-1]
        new, worst, seg_of = frames[order][first], amount[order][first], segment[order][first]
        pieces = np.ceil(np.sqrt(worst / tolerance)).astype(int)
        spread = []
        for s_new, seg, p in zip(new, seg_of, pieces):
            if p > 2 and 0 < seg < len(keys):
                lo, hi = keys[seg - 1], keys[seg]
                p = min(p, (hi - lo) // MIN_SPREAD)
                if p > 2:
                    spread.append(np.round(np.linspace(lo, hi, p + 1)[1:-1]).astype(int))
                    continue
            spread.append(np.array([s_new]))
        new = np.concatenate(spread)
        if not np.all(allowed[new]):
            new = _snap(new, state.keys[g], allowed)
        new = np.unique(new[new >= 0])
        new = new[~np.isin(new, state.keys[g])]
        if len(new):
            state.add(g, new)
            added += len(new)
    return added


def _split_skates(state: _State, model, affects: np.ndarray, spans: _Spans, skates: list, allowed: np.ndarray) -> int:
    """For each contact span whose foot skates: a key for each group whose share of the skate is close
    to the largest, on the span's frame where that group moves the foot most."""
    if not skates:
        return 0
    bad = np.zeros(len(spans.contacts), dtype=bool)
    bad[skates] = True
    shares = np.zeros((len(spans.contacts), len(state.groups)))
    moves = np.zeros((len(spans.rows), len(state.groups)))
    for g in range(len(state.groups)):
        reach = bad & affects[g][spans.points].any(axis=1)
        rows = np.nonzero(reach[spans.span])[0]
        if not len(rows):
            continue
        k = spans.points.shape[1]
        frames, points = np.repeat(spans.rows[rows], k), spans.row_points[rows].ravel()
        d = model.contribution(g, state.values, state.ref, frames, points)
        moved = np.zeros((len(spans.rows), k, 3))
        moved[rows] = d.reshape(len(rows), k, 3)
        shares[:, g] = np.where(reach, spans.skates(moved), 0.0)
        moves[:, g] = np.linalg.norm(moved, axis=-1).max(axis=1)
    added = 0
    responsible = (shares >= SHARE_RATIO * shares.max(axis=1, keepdims=True)) & (shares > 0)
    for g in np.nonzero(responsible.any(axis=0))[0]:
        taken = np.zeros(len(allowed), dtype=bool)
        taken[state.keys[g]] = True
        rows = np.nonzero(responsible[spans.span, g])[0]
        size = np.where(taken[spans.rows[rows]] | ~allowed[spans.rows[rows]], -1.0, moves[rows, g])
        order = np.lexsort((-size, spans.span[rows]))
        first = np.ones(len(order), dtype=bool)
        first[1:] = spans.span[rows][order][1:] != spans.span[rows][order][:-1]
        pick = order[first]
        new = spans.rows[rows][pick][size[pick] > 0]
        if len(new):
            state.add(g, np.unique(new))
            added += len(np.unique(new))
    return added
