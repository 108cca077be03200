"""Key handles: the ones ProcAnim writes, and the ones Blender recomputes when a curve is updated.

**Written handles** (:func:`aligned`): every key of a reduced bake gets a slope (value per frame)
on each side, and its handles reach a third of the way to the neighbouring keys along that slope::

    left  = (x − h₋/3, y − m₋ h₋/3)        right = (x + h₊/3, y + m₊ h₊/3)

(h₋, h₊ the key intervals). With handles at thirds the frame is linear in the curve parameter, so
each segment is the cubic Hermite curve through its two keys with those end slopes
(:func:`hermite_values`), which the reduction evaluates directly. Equal slopes make the two handles
collinear: handle type ``ALIGNED``; different ones (a corner) ``FREE``. Neither type is recomputed
from the neighbouring keys, so moving a key changes the curve between its neighbours only.

**Blender's recomputation** (:func:`recalc`): ``FCurve.update()`` runs
``BKE_fcurve_handles_recalc`` (``fcurve.cc``), which calls ``calchandleNurb_intern`` (``curve.cc``)
on every key with its neighbouring keys:

* ``AUTO`` / ``AUTO_CLAMPED``: the handle direction is the sum of the unit-x directions to the
  previous and next key, ``tvec = (P − P₋)/Δx₋ + (P₊ − P)/Δx₊``; with the curve's smoothing
  ``NONE`` each handle reaches ``Δx/2.5614`` in time (lengths limited to 5× each other), with
  ``CONT_ACCEL`` a third of the interval. ``AUTO_CLAMPED`` keeps a handle flat at a local extreme
  (a key not strictly between its neighbours) and never beyond a neighbour's value (the other handle
  then follows to stay aligned). The first and last key of a curve with constant extrapolation get
  flat handles when both are automatic. A missing neighbour is mirrored (``2P − P₊``).
* ``VECTOR``: a third of the way toward the neighbouring key.
* ``ALIGNED`` (both sides): the right handle is put on the line through the key and the left one,
  keeping its length, then the left on the line through the new right one (new keys are selected
  with their handles: ``keyframe_points.add`` sets ``SELECT``; the left handle leads). On handles
  that are already collinear this changes only float32 roundings.
* ``FREE``: kept as written.

With ``CONT_ACCEL`` smoothing (Blender's default for new curves) a second pass re-solves automatic
handles for a continuous second derivative over whole runs of automatic keys; that pass is modelled
by :func:`procanim_addon.fcurves.slopes` (measured within 2e-6 of a curve's range, docs/preview.md),
not repeated bit for bit. It never touches ``ALIGNED`` or ``FREE`` handles.
"""

from __future__ import annotations

import numpy as np

from ..curves import hermite
from ..fcurves import slopes as cont_accel_slopes
from .bezier import HANDLE

F32 = np.float32
_AUTO = (HANDLE["AUTO"], HANDLE["AUTO_CLAMPED"])


def aligned(frames, values, slope_left, slope_right) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Handles ``(K, 2)`` left and right at a third of each key interval along the slopes
    ``slope_left``/``slope_right`` ``(K,)`` (value per frame), and their types (``ALIGNED`` where the
    slopes agree, else ``FREE``). The first key's left and the last key's right handle take the
    length of their only neighbouring interval. Values and slopes ``(K, n)`` (the curves of a key
    group, on the same frames) give handles ``(K, n, 2)`` and types ``(K, n)``."""
    x = np.asarray(frames, float)
    y = np.asarray(values, float)
    ml, mr = np.asarray(slope_left, float), np.asarray(slope_right, float)
    h = np.diff(x)
    h = h if len(h) else np.ones(1)
    across = (-1,) + (1,) * (y.ndim - 1)  # the key axis first, broadcast over the curves
    hl = (np.concatenate([h[:1], h]) / 3.0).reshape(across)
    hr = (np.concatenate([h, h[-1:]]) / 3.0).reshape(across)
    xs = x.reshape(across)
    left = np.stack([np.broadcast_to(xs - hl, y.shape), y - ml * hl], axis=-1)
    right = np.stack([np.broadcast_to(xs + hr, y.shape), y + mr * hr], axis=-1)
    kind = np.where(ml == mr, HANDLE["ALIGNED"], HANDLE["FREE"]).astype(np.int32)
    return left, right, kind, kind.copy()


def hermite_values(key_x, key_y, slope_left, slope_right, x) -> np.ndarray:
    """Values at frames ``x`` ``(N,)`` of the curves through keys at ``key_x`` ``(K,)`` with values
    ``key_y`` ``(K, C)`` and handles at thirds along ``slope_left``/``slope_right`` ``(K, C)``: the
    Hermite segments, held constant outside the keys. ``(N, C)``."""
    key_x = np.asarray(key_x, float)
    key_y = np.asarray(key_y, float)
    x = np.clip(np.asarray(x, float), key_x[0], key_x[-1])
    if len(key_x) == 1:
        return np.repeat(key_y[:1], len(x), axis=0)
    seg = np.clip(np.searchsorted(key_x, x, side="right") - 1, 0, len(key_x) - 2)
    h = (key_x[seg + 1] - key_x[seg])[:, None]
    u = (x - key_x[seg])[:, None] / h
    return hermite(key_y[seg], h * slope_right[seg], key_y[seg + 1], h * slope_left[seg + 1], u)


def recalc(frames, values, left, right, left_type, right_type, smoothing: str = "CONT_ACCEL") -> tuple:
    """Handles ``(K, 2)`` after Blender's ``BKE_fcurve_handles_recalc`` of a curve with constant
    extrapolation (see the module docstring); returns ``(left, right)`` float32."""
    x = np.asarray(frames, F32)
    y = np.asarray(values, F32)
    hl = np.array(left, F32).reshape(-1, 2)
    hr = np.array(right, F32).reshape(-1, 2)
    t1 = np.asarray(left_type, np.int32)
    t2 = np.asarray(right_type, np.int32)
    n = len(x)
    if n < 2:
        return hl, hr
    hl[:, 0] = np.minimum(hl[:, 0], x)  # handles on their own side of the key in time
    hr[:, 0] = np.maximum(hr[:, 0], x)
    p = np.stack([x, y], axis=-1)
    prev = np.concatenate([2 * p[:1] - p[1:2], p[:-1]])  # a missing neighbour is mirrored
    nxt = np.concatenate([p[1:], 2 * p[-1:] - p[-2:-1]])
    da, db = p - prev, nxt - p
    len_a = np.where(da[:, 0] == 0, F32(1), da[:, 0])
    len_b = np.where(db[:, 0] == 0, F32(1), db[:, 0])
    auto_l, auto_r = np.isin(t1, _AUTO), np.isin(t2, _AUTO)
    any_auto = auto_l | auto_r
    if np.any(any_auto):
        _auto(p, prev, nxt, da, db, len_a, len_b, (hl, hr), (t1, t2), smoothing)
    vec_l, vec_r = t1 == HANDLE["VECTOR"], t2 == HANDLE["VECTOR"]
    hl[vec_l] = p[vec_l] + da[vec_l] * F32(-1.0 / 3.0)
    hr[vec_r] = p[vec_r] + db[vec_r] * F32(1.0 / 3.0)
    _align(p, hl, hr, t1, t2)
    both_auto = auto_l & auto_r
    for k in (0, n - 1):  # constant extrapolation: automatic end keys get flat handles
        if both_auto[k]:
            hl[k, 1] = hr[k, 1] = y[k]
    if smoothing != "NONE":
        _smooth(x, y, hl, hr, both_auto)
    return hl, hr


def recalc_many(curves: list) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`recalc` of several curves ``[(frames, values, left, right, left_type, right_type,
    smoothing), …]``: at once when no key has an automatic or vector handle — each key's handles are
    then recalculated on their own (kept on their side of the key, aligned) — else one by one."""
    if not curves:
        return []
    types = np.concatenate([np.concatenate([np.asarray(c[4]), np.asarray(c[5])]) for c in curves])
    if np.isin(types, (*_AUTO, HANDLE["VECTOR"])).any() or any(len(c[0]) < 2 for c in curves):
        return [recalc(*c) for c in curves]
    x = np.concatenate([np.asarray(c[0], F32) for c in curves])
    y = np.concatenate([np.asarray(c[1], F32) for c in curves])
    hl = np.concatenate([np.array(c[2], F32).reshape(-1, 2) for c in curves])
    hr = np.concatenate([np.array(c[3], F32).reshape(-1, 2) for c in curves])
    t1 = np.concatenate([np.asarray(c[4], np.int32) for c in curves])
    t2 = np.concatenate([np.asarray(c[5], np.int32) for c in curves])
    recalc_unautomatic(x, y, hl, hr, t1, t2)
    ends = np.cumsum([len(c[0]) for c in curves])[:-1]
    return list(zip(np.split(hl, ends), np.split(hr, ends)))


def recalc_unautomatic(x, y, hl, hr, t1, t2) -> None:
    """:func:`recalc` of keys none of whose handles is automatic or vector (float32 frames ``x``,
    values ``y`` ``(K,)``, handles ``hl``, ``hr`` ``(K, 2)`` changed in place, their types ``t1``, ``t2``):
    each key's handles on their own — kept on their side of the key in time, then aligned — so keys
    of several curves (of two keys at least each) may be laid end to end."""
    hl[:, 0] = np.minimum(hl[:, 0], x)
    hr[:, 0] = np.maximum(hr[:, 0], x)
    _align(np.stack([x, y], axis=-1), hl, hr, t1, t2)


def _auto(p, prev, nxt, da, db, len_a, len_b, handles, types, smoothing):
    """``AUTO``/``AUTO_CLAMPED`` handles of ``calchandleNurb_intern`` (F-curve mode), in place."""
    hl, hr = handles
    t1, t2 = types
    n = len(p)
    tvec = db / len_b[:, None] + da / len_a[:, None]
    size = np.full(n, F32(6.0 / 2.5614)) if smoothing != "NONE" else tvec[:, 0]
    size = (size * F32(2.5614)).astype(F32)
    la, lb = len_a.copy(), len_b.copy()
    if smoothing == "NONE":
        la = np.where(la > F32(5) * lb, F32(5) * lb, la)
        lb = np.where(lb > F32(5) * la, F32(5) * la, lb)
    ok = size != 0
    inner = np.zeros(n, dtype=bool)
    inner[1:-1] = True  # keys with both neighbours (the clamping needs them)
    ydiff1 = prev[:, 1] - p[:, 1]
    ydiff2 = nxt[:, 1] - p[:, 1]
    extreme = ((ydiff1 <= 0) & (ydiff2 <= 0)) | ((ydiff1 >= 0) & (ydiff2 >= 0))
    left_violate = np.zeros(n, dtype=bool)
    right_violate = np.zeros(n, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        sel = ok & np.isin(t1, _AUTO)
        a = (la / size)[:, None]
        hl[sel] = (p - tvec * a)[sel]
        clamp = sel & (t1 == HANDLE["AUTO_CLAMPED"]) & inner
        hl[clamp & extreme, 1] = p[clamp & extreme, 1]
        beyond = np.where(ydiff1 <= 0, prev[:, 1] > hl[:, 1], prev[:, 1] < hl[:, 1])
        fix = clamp & ~extreme & beyond
        hl[fix, 1] = prev[fix, 1]
        left_violate |= fix
        sel = ok & np.isin(t2, _AUTO)
        b = (lb / size)[:, None]
        hr[sel] = (p + tvec * b)[sel]
        clamp = sel & (t2 == HANDLE["AUTO_CLAMPED"]) & inner
        hr[clamp & extreme, 1] = p[clamp & extreme, 1]
        beyond = np.where(ydiff1 <= 0, nxt[:, 1] < hr[:, 1], nxt[:, 1] > hr[:, 1])
        fix = clamp & ~extreme & beyond
        hr[fix, 1] = nxt[fix, 1]
        right_violate |= fix
        h1_x = hl[:, 0] - p[:, 0]
        h2_x = p[:, 0] - hr[:, 0]
        follow_r = left_violate
        follow_l = right_violate & ~left_violate
        hr[follow_r, 1] = (p[:, 1] + ((p[:, 1] - hl[:, 1]) / h1_x) * h2_x)[follow_r]
        hl[follow_l, 1] = (p[:, 1] + ((p[:, 1] - hr[:, 1]) / h2_x) * h1_x)[follow_l]


def _length(v: np.ndarray) -> np.ndarray:
    """``len_v3v3`` of 2-D offsets (the third coordinate of an F-curve key is 0), float32."""
    return np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1]).astype(F32)


def _align(p, hl, hr, t1, t2):
    """The ``ALIGNED`` step of ``calchandleNurb_intern`` for selected left handles, in place."""
    al, ar = t1 == HANDLE["ALIGNED"], t2 == HANDLE["ALIGNED"]
    run = (al | ar) & ~((t1 == HANDLE["FREE"]) | (t2 == HANDLE["FREE"]))
    if not np.any(run):
        return
    eps = F32(1e-5)
    len_a = _length(p - hl)
    len_b = _length(p - hr)
    len_a = np.where(len_a == 0, F32(1), len_a)
    len_b = np.where(len_b == 0, F32(1), len_b)
    ratio = (len_a / len_b).astype(F32)
    do = run & ar & (len_a > eps)
    scale = (F32(1) / ratio)[:, None]
    hr[do] = (p + scale * (p - hl))[do]
    do = run & al & (len_b > eps)
    hl[do] = (p + ratio[:, None] * (p - hr))[do]


def _smooth(x, y, hl, hr, auto):
    """Blender's continuous-acceleration pass over runs of automatic keys, as the engine models it:
    handle values from :func:`procanim_addon.fcurves.slopes` at thirds of the intervals."""
    if not np.any(auto):
        return
    m = cont_accel_slopes(x.astype(float), y.astype(float)[:, None])[:, 0]
    h = np.diff(x.astype(float))
    hl_len = np.concatenate([h[:1], h]) / 3.0
    hr_len = np.concatenate([h, h[-1:]]) / 3.0
    hl[auto, 1] = (y - m * hl_len)[auto]
    hr[auto, 1] = (y + m * hr_len)[auto]
