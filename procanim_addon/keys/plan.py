"""The keys of a bake: from the dense channels to the curves the writer writes.

:func:`plan_keys` is the general entry (any channels, any forward model); :func:`plan_clip_keys`
the one for a Clip baked onto its own (deform) bones, :func:`plan_control_keys` the one for a
conversion onto a control rig's controls.

Steps: the dense bake as Blender plays it on every frame (:mod:`.dense`); the marks' forced keys and
the feet's contact spans; the reduction (:mod:`.reduce`) aiming at ``MARGIN × tolerance``; the keys,
slopes and marks turned into handles and key types (:mod:`.handles`, :mod:`.output`); then the
written curves measured as Blender evaluates them (:mod:`.bezier`, handles as ``FCurve.update()``
leaves them) through the same forward model — the bake's figure — and refined further in the rare
case that float32 rounding put a frame past the tolerance. ``tolerance = 0`` returns the dense bake
itself: the generator's keys, untouched, with Blender's automatic handles.
"""

from __future__ import annotations

import numpy as np

from .. import collector, heap
from ..clip import Clip
from ..skeleton import Skeleton
from .bezier import HANDLE, INTERPOLATION, KEY_TYPE, Keys, evaluate_laid, evaluate_many, frames_of_changes
from .control_forward import ControlForward, control_channels
from .dense import dense_reference, sample_frames
from .forward import DeformForward
from .handles import aligned, recalc, recalc_many, recalc_unautomatic
from .layout import Channel, clip_channels, key_groups
from .marks import Contact, Foot, Mark
from .output import CurveKeys, KeyedAction
from .reduce import ContactSpan, Problem, lengths, reduce, skate_added

MARGIN = 0.98  # the reduction aims at this fraction of the tolerance (room for float32 keys)
CONTACT_SPEED_M_S = 0.0008  # the mean speed the keys may add to a planted foot (0.08 cm/s)
MAX_TOLERANCE_M = 0.05  # larger tolerances are refused: they would change the motion visibly
_RANK = {"KEYFRAME": 0, "BREAKDOWN": 1, "EXTREME": 2}


def validate_tolerance(tolerance: float) -> None:
    """Raise ValueError (a message for the user) unless 0 ≤ ``tolerance`` ≤ :data:`MAX_TOLERANCE_M`."""
    if not np.isfinite(tolerance) or tolerance < 0.0 or tolerance > MAX_TOLERANCE_M:
        raise ValueError(
            f"Key tolerance must be between 0 (every frame keyed) and {MAX_TOLERANCE_M * 1000:.0f} mm, "
            f"not {tolerance * 1000:g} mm."
        )


def _key_types(frames: np.ndarray, marks: list[Mark]) -> np.ndarray:
    """Key type codes of keys at ``frames``: the strongest mark on each frame, else KEYFRAME."""
    codes = np.array([KEY_TYPE[name] for name in sorted(_RANK, key=_RANK.get)], dtype=np.int32)
    if not marks:
        return np.full(len(frames), codes[0], dtype=np.int32)
    at = np.array([m.frame for m in marks], float)
    rank = np.array([_RANK.get(m.key_type, 0) for m in marks])
    order = np.argsort(at)
    at, rank = at[order], rank[order]
    best = np.zeros(len(frames), dtype=int)
    lo = np.searchsorted(at, np.asarray(frames, float) - 1e-4)
    hi = np.searchsorted(at, np.asarray(frames, float) + 1e-4)
    for i in np.nonzero(hi > lo)[0]:  # the few keys on a marked frame
        best[i] = rank[lo[i] : hi[i]].max()
    return codes[best]


def _markers(marks: list[Mark]) -> list[tuple[float, str]]:
    return sorted({(float(m.frame), m.name) for m in marks if m.name})


def _dense(channels, frames, values, marks) -> list[CurveKeys]:
    """The dense bake's curves: every frame keyed, Blender's automatic handles."""
    out = []
    types = _key_types(np.asarray(frames, float), marks)
    auto = np.full(len(frames), HANDLE["AUTO_CLAMPED"], dtype=np.int32)
    bez = np.full(len(frames), INTERPOLATION["BEZIER"], dtype=np.int32)
    for c, ch in enumerate(channels):
        co = np.stack([frames, values[:, c]], axis=-1).astype(np.float32)
        left, right = recalc(co[:, 0], co[:, 1], co, co, auto, auto, "CONT_ACCEL")
        out.append(CurveKeys(ch.data_path, ch.index, ch.group_name, co, left, right, auto, auto, bez, types))
    return out


def _feet_scope(model, foot_points: dict[str, tuple[int, ...]], side: str) -> list[int]:
    """The key groups of a foot's own curves: those that move nothing but what the foot's bone moves.

    The foot's bone is the group that moves every sole point of the foot and the fewest points
    (the foot bone on a skeleton, the IK foot control on a control rig); its own curves are it and the
    groups that move a subset of its points (the toes)."""
    affects = np.asarray(model.affects)
    sole = list(foot_points[side])
    whole = np.nonzero(affects[:, sole].all(axis=1))[0]
    if not len(whole):
        return list(np.nonzero(affects[:, sole].any(axis=1))[0])
    foot = whole[np.argmin(affects[whole].sum(axis=1))]
    return list(np.nonzero(affects[:, sole].any(axis=1) & ~(affects & ~affects[foot]).any(axis=1))[0])


def _scopes(channels: list[Channel], groups: list[list[int]], model, foot_points: dict[str, tuple[int, ...]],
            mark: Mark) -> list[int]:
    """The key groups a forced mark keys: a foot's own curves (:func:`_feet_scope`) or, for a
    ``chain`` mark, every group that moves the foot; the groups of ``mark.bones``; or every group."""
    if mark.foot and mark.foot in foot_points:
        if mark.chain:
            return list(np.nonzero(np.asarray(model.affects)[:, list(foot_points[mark.foot])].any(axis=1))[0])
        return _feet_scope(model, foot_points, mark.foot)
    if mark.bones is not None:
        return [g for g, cols in enumerate(groups) if channels[cols[0]].bone in mark.bones]
    return list(range(len(groups)))


@collector.paused()
@heap.kept()
def plan_keys(channels: list[Channel], frames, values, model, tolerance: float, fps: float, marks=(),
              contacts=(), foot_points=None, contact_speed: float = CONTACT_SPEED_M_S) -> KeyedAction:
    """The keys of a bake of ``channels`` (dense ``values`` ``(F, C)`` at the generator's ``frames``):
    the fewest, within ``tolerance`` (m) of the dense motion as ``model`` measures it on every frame.

    ``marks``: :class:`.marks.Mark`; ``contacts``: :class:`.marks.Contact`; ``foot_points``: foot side →
    the model's point indices of that foot's sole (the skate check and the contact keys' scope);
    ``contact_speed``: the mean speed (m/s) the keys may add to a planted foot.
    """
    validate_tolerance(tolerance)
    frames = np.asarray(frames, float)
    values = np.asarray(values, float)
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(frames))):
        raise ValueError("The motion holds invalid (NaN) values; no keys were planned.")
    marks = list(marks)
    dense_count = values.size
    if tolerance == 0.0 or len(frames) < 3:
        curves = _dense(channels, frames, values, marks)
        return KeyedAction(curves, _markers(marks), dense_count, dense_count, 0.0, 0.0, True, tolerance)
    samples = sample_frames(frames)
    if len(samples) == len(frames):  # a key on every frame: the dense curves are the keys themselves
        reference = values
    else:
        reference = dense_reference(frames, values, samples)
    groups = key_groups(channels)
    foot_points = foot_points or {}
    forced: list[set[int]] = [set() for _ in groups]
    feet_scope = {side: _feet_scope(model, foot_points, side) for side in foot_points}
    for m in marks:
        if not m.forced or not samples[0] <= m.frame <= samples[-1]:
            continue
        s = int(np.argmin(np.abs(samples - m.frame)))
        scope = feet_scope[m.foot] if m.foot in feet_scope and not m.chain else None
        for g in scope if scope is not None else _scopes(channels, groups, model, foot_points, m):
            forced[g].add(s)
    spans = []
    for c in contacts:
        if c.foot.side in foot_points:
            a, b = (int(np.argmin(np.abs(samples - f))) for f in (c.start, c.end))
            spans.append(ContactSpan(a, b, tuple(foot_points[c.foot.side])))
    problem = Problem(samples, reference, groups, model, np.isin(samples, frames), forced, spans, fps)
    # the curves as Blender plays them checked in every round where a model evaluation costs more than
    # playing them (a control rig's), else the fitted curves in the rounds and the written ones once
    played = _player(channels, groups, samples) if getattr(model, "checks_played", False) else None
    result, curves, error, skate = _reduced(problem, tolerance * MARGIN, contact_speed * MARGIN, played, channels,
                                            marks)
    for _ in range(3):  # beyond the bound (float32 keys, or stopped short): refine on, from these keys, tighter
        if error <= tolerance and skate <= contact_speed:
            break
        result, curves, error, skate = _reduced(problem, tolerance * MARGIN * 0.9, contact_speed * MARGIN * 0.9,
                                                played, channels, marks, result.keys)
    written = sum(len(c) for c in curves)
    keyed = all(
        s in result.keys[g]
        for c in contacts if c.foot.side in foot_points
        for g in feet_scope[c.foot.side]
        for s in (int(np.argmin(np.abs(samples - c.start))), int(np.argmin(np.abs(samples - c.end))))
    )
    out = KeyedAction(curves, _markers(marks), written, dense_count, error, skate,
                      keyed and skate <= contact_speed, tolerance, list(result.notes))
    if error > tolerance:
        out.notes.append(f"the keys leave the motion {error * 1000:.2f} mm from the dense bake")
    return out


def _curve(ch: Channel, frames, y, slope_left, slope_right, types) -> CurveKeys:
    """The written curve of a channel: keys at ``frames`` with values ``y`` and the handles of the
    slopes (:func:`.handles.aligned`)."""
    left, right, lt, rt = aligned(frames, y, slope_left, slope_right)
    return CurveKeys(ch.data_path, ch.index, ch.group_name, np.stack([frames, y], axis=-1), left, right, lt, rt,
                     np.full(len(frames), INTERPOLATION["BEZIER"], dtype=np.int32), types)


def _player(channels, groups, samples):
    """The ``played`` of :func:`.reduce.reduce`: a group's curves as written, evaluated as Blender does
    (:mod:`.bezier`, handles as ``FCurve.update()`` leaves them). A group played before is evaluated
    again only on the frames of its segments that changed (:func:`.bezier.frames_of_changes`). A
    group's channels share their keys' frames: each group's curves are worked out as one array, and
    every curve of every group played is evaluated at once."""
    last: dict[int, tuple] = {}  # group → its curves as Blender holds them (_held), their values (S, n)
    t = np.asarray(samples, np.float32)

    def played(fitted):
        held, rows = [], np.zeros(len(samples), dtype=bool)  # the frames to evaluate again
        for g, keys, key_values, slope_left, slope_right in fitted:
            now = _held(samples[keys], key_values, slope_left, slope_right)
            rows |= _changed(last[g][0], now, t) if g in last else True
            held.append(now)
        widths = [h[1].shape[0] for h in held]
        values = np.empty((len(samples), sum(widths)))
        if rows.any():
            at = t[rows]
            every = Keys(np.concatenate([np.tile(x, n) for (x, *_), n in zip(held, widths)]),
                         np.concatenate([y.ravel() for _, y, _, _ in held]),
                         np.concatenate([left.reshape(-1, 2) for _, _, left, _ in held]),
                         np.concatenate([right.reshape(-1, 2) for *_, right in held]),
                         np.full(sum(len(h[0]) * n for h, n in zip(held, widths)), INTERPOLATION["BEZIER"]))
            sizes = np.repeat([len(h[0]) for h in held], widths)
            found = np.repeat(np.stack([np.searchsorted(h[0], at, side="left") for h in held], axis=1), widths,
                              axis=1)
            values[rows] = evaluate_laid(every, sizes, found, at)
        out, start = [], 0
        for (g, *_), now, n in zip(fitted, held, widths):
            group_values = values[:, start : start + n]  # (a copy below: the caller's to keep)
            start += n
            if g in last:  # the frames not evaluated again: as last played
                group_values[~rows] = last[g][1][~rows]
            group_values = group_values.copy()
            last[g] = (now, group_values)
            out.append(group_values)
        return out

    return played


def _held(frames, key_values, slope_left, slope_right) -> tuple:
    """A group's curves as written (:func:`_curve`, keys ``(K,)`` with values and slopes ``(K, n)``) and
    as Blender holds them after ``FCurve.update()``: ``(frames (K,), values (n, K), left and right
    handles (n, K, 2))``, float32 — the handles (:func:`.handles.aligned`: ``ALIGNED`` or ``FREE``, none
    automatic) each kept on its side of its key and aligned (:func:`.handles.recalc_unautomatic`),
    every curve of the group at once."""
    left, right, kind, _ = aligned(frames, key_values, slope_left, slope_right)  # (K, n, 2), (K, n)
    left, right = (np.ascontiguousarray(np.swapaxes(a, 0, 1), dtype=np.float32) for a in (left, right))
    x32, y32 = np.asarray(frames, np.float32), np.asarray(key_values, np.float32).T  # (K,), (n, K)
    if len(x32) >= 2:
        flat_left, flat_right = left.reshape(-1, 2), right.reshape(-1, 2)  # (views)
        kind = np.ascontiguousarray(kind.T).ravel()
        recalc_unautomatic(np.tile(x32, len(y32)), y32.ravel(), flat_left, flat_right, kind, kind)
    return x32, y32, left, right


def _changed(old: tuple, new: tuple, t: np.ndarray) -> np.ndarray:
    """:func:`.bezier.frames_of_changes` of a group's curves (:func:`_held`, Bezier all) at once: the
    frames where any of them may evaluate otherwise."""
    x, old_x = new[0], old[0]
    if len(x) < 2 or len(old_x) < 2:
        return np.ones(len(t), dtype=bool)
    i = np.minimum(np.searchsorted(old_x, x), len(old_x) - 1)
    same = ((old_x[i] == x) & (old[1][:, i] == new[1]).all(axis=0) & (old[2][:, i] == new[2]).all(axis=(0, 2))
            & (old[3][:, i] == new[3]).all(axis=(0, 2)))
    return frames_of_changes(x, i, same, t)


def _reduced(problem: Problem, tolerance: float, contact_speed: float, played, channels, marks, keys=None):
    """:func:`.reduce.reduce`, its written curves and their largest error (m) and added skate (m/s)
    as Blender plays them."""
    result = reduce(problem, tolerance, contact_speed, keys=keys, played=played)
    curves = _curves(channels, problem.groups, problem.samples, result, marks)
    if played is not None:  # its last check was of the curves as played
        return result, curves, result.max_error, result.skate_added
    exact = evaluate_many(_blender_keys(curves), problem.samples).astype(float)
    err = problem.model(exact) - problem.reference_points
    return result, curves, float(lengths(err).max()), skate_added(err, problem.contacts, problem.fps)


def _blender_keys(curves: list[CurveKeys]) -> list[Keys]:
    """The keys of ``curves`` as Blender holds them after ``FCurve.update()`` (:meth:`CurveKeys.blender_keys`,
    the handles of every curve recalculated at once)."""
    handles = recalc_many([(c.frames, c.values, c.handle_left, c.handle_right, c.handle_left_type,
                            c.handle_right_type, c.smoothing) for c in curves])
    return [Keys(c.frames, c.values, left, right, c.interpolation) for c, (left, right) in zip(curves, handles)]


def _curves(channels, groups, samples, result, marks) -> list[CurveKeys]:
    """The written curves of a reduction (their values on every sample are the reduction's: see
    :func:`_player`)."""
    out: list[CurveKeys] = [None] * len(channels)  # type: ignore[list-item]
    for g, cols in enumerate(groups):
        k = result.keys[g]
        ml, mr = result.slopes[g]
        types = _key_types(samples[k], marks)
        for j, c in enumerate(cols):
            out[c] = _curve(channels[c], samples[k], result.key_values[g][:, j], ml[:, j], mr[:, j], types)
    return out


# ----------------------------------------------------------------------------- a Clip on its own bones


@collector.paused()
@heap.kept()
def plan_clip_keys(clip: Clip, skeleton: Skeleton, tolerance: float, rotation_modes=None, object_mode: str = "XYZ",
                   marks=(), contacts=(), feet: list[Foot] | None = None,
                   contact_speed: float = CONTACT_SPEED_M_S) -> KeyedAction:
    """:func:`plan_keys` for ``clip`` baked onto ``skeleton``'s own bones (key target ``DEFORM``):
    the channels the baker writes (:func:`.layout.clip_channels`) measured on every bone's head and
    tail and on the feet's sole points (``feet``: :func:`.marks.feet`; needed for ``contacts``)."""
    channels, values = clip_channels(clip, rotation_modes, object_mode)
    extra, foot_points = _feet_points(skeleton, feet, 2 * len(skeleton))
    model = DeformForward(skeleton, channels, extra)
    return plan_keys(channels, clip.frames, values, model, tolerance, clip.fps, marks, contacts, foot_points,
                     contact_speed)


def _feet_points(skeleton: Skeleton, feet: list[Foot] | None, first: int) -> tuple[list, dict]:
    """Extra points ``(skeleton bone index, rest position)`` of the feet's soles and their indices
    per side, numbered from ``first``."""
    extra, foot_points = [], {}
    for foot in feet or []:
        idx = []
        for bone, point in foot.points:
            idx.append(first + len(extra))
            extra.append((skeleton.index(bone), point))
        foot_points[foot.side] = tuple(idx)
    return extra, foot_points


@collector.paused()
@heap.kept()
def plan_control_keys(rig, skeleton: Skeleton, keys, clip: Clip, tolerance: float, marks=(), contacts=(),
                      feet: list[Foot] | None = None, pins=None,
                      contact_speed: float = CONTACT_SPEED_M_S) -> KeyedAction:
    """:func:`plan_keys` for a bake of ``clip`` onto a control rig's controls: ``keys`` is the
    conversion's :class:`~procanim_addon.controls.ControlKeys` of ``rig`` for the deform ``skeleton``
    (their frames are the clip's); the error is measured on the deform skeleton the controls drive
    (:class:`.control_forward.ControlForward`; ``pins``: rig bone → matrices of the bones an IK
    solve places, default the conversion's ``keys.pins``; the IK solver's stretch response comes with
    them, ``keys.stretch``). The switch curves are not part of it (two constant keys, written as
    they are)."""
    channels, values = control_channels(rig, keys)
    pins = getattr(keys, "pins", None) if pins is None else pins
    extra, foot_points = _feet_points(skeleton, feet, 2 * len(skeleton))
    model = ControlForward(rig, skeleton, channels, pins, extra, reference=values,
                           stretch=getattr(keys, "stretch", None))
    return plan_keys(channels, clip.frames, values, model, tolerance, clip.fps, marks, contacts, foot_points,
                     contact_speed)


__all__ = ["Contact", "plan_clip_keys", "plan_control_keys", "plan_keys", "validate_tolerance"]
