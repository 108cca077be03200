"""Blender's bone constraints, evaluated on whole clips at once (numpy, armature space).

Each function takes the owner's matrices ``(F, 4, 4)`` as they stand before the constraint (in the
constraint's owner space) and the target's (in its target space) and returns the owner's new
matrices, following Blender's ``constraint.cc`` for the settings control rigs use. Influence is
applied by the caller (:func:`blend`): Blender interpolates the owner's matrix before and after the
constraint in world space (``interp_m4_m4m4``: location lerp, rotation slerp, scale lerp).

Supported: COPY_TRANSFORMS, COPY_LOCATION, COPY_ROTATION, COPY_SCALE, ARMATURE, DAMPED_TRACK,
STRETCH_TO, LIMIT_DISTANCE, LIMIT_ROTATION, LIMIT_SCALE, TRANSFORM (Transformation: CloudRig's
foot roll). IK is solved by the conversion itself (the chain is
posed where the solver must put it), never here. Anything else raises :class:`Unsupported`, which
the conversion turns into a message naming the bone.
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..transforms import norms
from .rig import Constraint


class Unsupported(Exception):
    """A constraint the conversion does not model is on the path it must evaluate."""


def _scale(m: np.ndarray) -> np.ndarray:
    return tf.column_scale(m)


def _rotation_scale(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 3×3 part of ``m`` with unit columns, and the column lengths (floored at 1e-12 to divide)."""
    scale = _scale(m)
    return m[..., :3, :3] / np.maximum(scale, 1e-12)[..., None, :], scale


def _rotation(m: np.ndarray) -> np.ndarray:
    return _rotation_scale(m)[0]


def _with_rotation(m: np.ndarray, rot: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    out = m.copy()
    out[..., :3, :3] = rot * (_scale(m) if scale is None else scale)[..., None, :]
    return out


def blend(before: np.ndarray, after: np.ndarray, influence: float) -> np.ndarray:
    """Blender's ``interp_m4_m4m4``: lerp location, slerp rotation, lerp scale."""
    if influence >= 1.0:
        return after
    if influence <= 0.0 or float(np.max(np.abs(before - after))) < 1e-12:
        return before  # e.g. a half copy of a control left at rest changes nothing
    out = before.copy()
    out[..., :3, 3] = (1 - influence) * before[..., :3, 3] + influence * after[..., :3, 3]
    (ra, sa), (rb, sb) = _rotation_scale(before), _rotation_scale(after)
    qa, qb = tf.mat3_to_quat(ra), tf.mat3_to_quat(rb)
    rot = tf.quat_to_mat3(tf.quat_slerp(qa, qb, influence))
    scale = (1 - influence) * sa + influence * sb
    out[..., :3, :3] = rot * scale[..., None, :]
    return out


def target_point(target: np.ndarray, length: float, head_tail: float) -> np.ndarray:
    """The point a constraint reads on a target bone: head, or along it by ``head_tail`` (F, 3)."""
    if head_tail == 0.0:
        return target[..., :3, 3]
    return target[..., :3, 3] + target[..., :3, 1] * (length * head_tail)


def copy_transforms(c: Constraint, owner: np.ndarray, target: np.ndarray) -> np.ndarray:
    if c.mix == "REPLACE":
        return np.array(target, copy=True)
    if c.mix == "BEFORE_FULL":
        return target @ owner
    if c.mix == "AFTER_FULL":
        return owner @ target
    raise Unsupported(f"Copy Transforms mix mode {c.mix}")


def copy_location(c: Constraint, owner: np.ndarray, point: np.ndarray) -> np.ndarray:
    out = owner.copy()
    for k in range(3):
        if c.axes[k]:
            v = -point[..., k] if c.invert[k] else point[..., k]
            out[..., k, 3] = owner[..., k, 3] + v if c.use_offset else v
    return out


def _euler_order(order: str, owner_mode: str) -> str:
    """A constraint's Euler order: its own, or with 'AUTO' the owner's (XYZ for a bone that rotates
    by quaternion or axis-angle, as Blender's ``cob->rotOrder``)."""
    if order in tf.EULER_ORDERS:
        return order
    return owner_mode if owner_mode in tf.EULER_ORDERS else "XYZ"


def copy_rotation(c: Constraint, owner: np.ndarray, target: np.ndarray, owner_mode: str) -> np.ndarray:
    """Blender's Copy Rotation (Euler-based per-axis copy; mix Replace/Add/Before/After/Offset)."""
    old = _rotation(owner)
    tgt = _rotation(target)
    if c.mix == "REPLACE" and all(c.axes) and not any(c.invert):
        return _with_rotation(owner, tgt)
    if c.mix not in ("REPLACE", "ADD", "BEFORE", "AFTER", "OFFSET"):
        raise Unsupported(f"Copy Rotation mix mode {c.mix}")
    order = _euler_order(c.euler_order, owner_mode)
    owner_eul = tf.mat3_to_euler(old, order)
    eul = tf.mat3_to_euler(tgt, order, compat=owner_eul)
    default = owner_eul if c.mix == "REPLACE" else np.zeros_like(eul)
    for k in range(3):
        if not c.axes[k]:
            eul[..., k] = default[..., k]
        elif c.invert[k]:
            eul[..., k] = -eul[..., k]
    new = tf.euler_to_mat3(eul, order)
    if c.mix == "BEFORE":
        new = new @ old
    elif c.mix == "AFTER":
        new = old @ new
    elif c.mix in ("ADD", "OFFSET"):  # Euler angles added to the owner's
        new = tf.euler_to_mat3(eul + owner_eul, order)
    return _with_rotation(owner, new)


def copy_scale(c: Constraint, owner: np.ndarray, target: np.ndarray) -> np.ndarray:
    size = _scale(owner)
    tsize = _scale(target)
    new = size.copy()
    for k in range(3):
        if c.axes[k]:
            new[..., k] = size[..., k] * tsize[..., k] if c.use_offset else tsize[..., k]
    return _with_rotation(owner, _rotation(owner), new)


def armature(c: Constraint, owner: np.ndarray, deforms: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """Armature constraint on bones: the owner is carried by the weighted sum of each target's
    ``pose @ rest⁻¹`` (its deformation), weights normalised by their total."""
    total = sum(w for _, w in deforms)
    if total <= 1e-4:
        return owner
    acc = sum(w * d for d, w in deforms) / total
    return acc @ owner


_TRACK_AXES = {
    "TRACK_X": (0, 1.0),
    "TRACK_Y": (1, 1.0),
    "TRACK_Z": (2, 1.0),
    "TRACK_NEGATIVE_X": (0, -1.0),
    "TRACK_NEGATIVE_Y": (1, -1.0),
    "TRACK_NEGATIVE_Z": (2, -1.0),
}


def _rotate_about_own_origin(owner: np.ndarray, rot: np.ndarray) -> np.ndarray:
    out = owner.copy()
    out[..., :3, :3] = rot @ owner[..., :3, :3]
    return out


def damped_track(c: Constraint, owner: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Turn the owner by the smallest rotation that points its track axis at ``point``."""
    axis, sign = _TRACK_AXES[c.track_axis]
    current = tf.normalize(owner[..., :3, axis] * sign)
    wanted = point - owner[..., :3, 3]
    q = tf.rotation_between(current, wanted)
    degenerate = norms(wanted) < 1e-12
    q[degenerate] = (1.0, 0.0, 0.0, 0.0)
    return _rotate_about_own_origin(owner, tf.quat_to_mat3(q))


def _bulge_limited(bulge: np.ndarray, limits: tuple) -> np.ndarray:
    """Blender's Stretch To volume limits (``use_bulge_min/max``, soft by ``bulge_smooth``)."""
    use_min, lo, use_max, hi, smooth = limits
    out = bulge
    if use_max:
        hi = max(hi, 1.0)
        rng = hi - 1.0
        soft = 1.0 + rng * np.arctan((bulge - 1.0) * (1.0 / rng if rng > 0 else 0.0)) / (np.pi / 2)
        out = np.where(bulge > 1.0, smooth * soft + (1.0 - smooth) * np.minimum(bulge, hi), out)
    if use_min:
        lo = min(max(lo, 0.0), 1.0)
        rng = 1.0 - lo
        soft = 1.0 - rng * np.arctan((1.0 - bulge) * (1.0 / rng if rng > 0 else 0.0)) / (np.pi / 2)
        out = np.where(bulge < 1.0, smooth * soft + (1.0 - smooth) * np.maximum(bulge, lo), out)
    return out


def stretch_to(c: Constraint, owner: np.ndarray, point: np.ndarray, rest_length: float) -> np.ndarray:
    """Point the owner's Y at ``point`` and scale it to reach it, keeping volume (Blender's
    Stretch To: ``scale_y = dist / rest_length``, ``bulge = (rest_length / dist) ** bulge``, within
    its volume limits)."""
    old, size = _rotation_scale(owner)
    vec = point - owner[..., :3, 3]
    dist = norms(vec)
    y = vec / np.maximum(dist, 1e-12)[..., None]
    dist = dist / np.maximum(size[..., 1], 1e-12)
    sy = dist / rest_length
    bulge = (rest_length / np.maximum(dist, 1e-12)) ** c.bulge
    if c.bulge_limits:
        bulge = _bulge_limited(bulge, c.bulge_limits)
    if c.volume == "VOLUME_XZX":
        sx = sz = np.sqrt(bulge)
    else:
        ones = np.ones_like(bulge)
        sx, sz = {"VOLUME_X": (bulge, ones), "VOLUME_Z": (ones, bulge), "NO_VOLUME": (ones, ones)}[c.volume]
    if c.keep_axis == "PLANE_Z":
        x = tf.normalize(tf.cross(y, old[..., :, 2]))
        z = tf.cross(x, y)
    elif c.keep_axis == "SWING_Y":
        rot = tf.quat_to_mat3(tf.rotation_between(old[..., :, 1], y)) @ old
        x, z = rot[..., :, 0], rot[..., :, 2]
    else:  # PLANE_X
        z = tf.normalize(tf.cross(old[..., :, 0], y))
        x = tf.cross(y, z)
    out = owner.copy()
    out[..., :3, 0] = x * (size[..., 0] * sx)[..., None]
    out[..., :3, 1] = y * (size[..., 1] * sy)[..., None]
    out[..., :3, 2] = z * (size[..., 2] * sz)[..., None]
    return out


def limit_distance(c: Constraint, owner: np.ndarray, point: np.ndarray) -> np.ndarray:
    offset = owner[..., :3, 3] - point
    dist = norms(offset)
    limit = c.distance
    if c.limit_mode == "LIMITDIST_INSIDE":
        factor = np.where(dist > limit, limit / np.maximum(dist, 1e-12), 1.0)
    elif c.limit_mode == "LIMITDIST_OUTSIDE":
        factor = np.where(dist < limit, limit / np.maximum(dist, 1e-12), 1.0)
    else:  # ON_SURFACE
        factor = limit / np.maximum(dist, 1e-12)
    out = owner.copy()
    out[..., :3, 3] = point + offset * factor[..., None]
    return out


def limit_rotation(c: Constraint, owner: np.ndarray, owner_mode: str) -> np.ndarray:
    """Clamp the Euler angles of the owner's rotation (in the owner's Euler order) to the limits."""
    order = owner_mode if owner_mode in tf.EULER_ORDERS else "XYZ"
    eul = tf.mat3_to_euler(_rotation(owner), order)
    changed = False
    for k, (use, lo, hi) in enumerate(c.limits):
        if use:
            clipped = np.clip(eul[..., k], lo, hi)
            changed = changed or bool(np.any(clipped != eul[..., k]))
            eul[..., k] = clipped
    if not changed:
        return owner
    return _with_rotation(owner, tf.euler_to_mat3(eul, order))


def limit_scale(c: Constraint, owner: np.ndarray) -> np.ndarray:
    """Clamp the owner's scale along each axis to the limits (Blender's Limit Scale)."""
    rot, size = _rotation_scale(owner)
    new = size.copy()
    for k, (use_min, lo, use_max, hi) in enumerate(c.scale_limits):
        if use_min:
            new[..., k] = np.maximum(new[..., k], lo)
        if use_max:
            new[..., k] = np.minimum(new[..., k], hi)
    if np.array_equal(new, size):
        return owner
    return _with_rotation(owner, rot, new)


def _mapping_source(c: Constraint, target: np.ndarray, owner_mode: str) -> np.ndarray:
    m = c.mapping
    assert m is not None
    if m.source == "SCALE":
        size = _scale(target)
        return np.where((tf.det3(target[..., :3, :3]) < 0)[..., None], -size, size)
    if m.source == "ROTATION":
        if m.from_rotation_mode not in ("AUTO", *tf.EULER_ORDERS):
            raise Unsupported(f"Transformation from rotation mode {m.from_rotation_mode}")
        return tf.mat3_to_euler(_rotation(target), _euler_order(m.from_rotation_mode, owner_mode))
    return target[..., :3, 3]


def transform(c: Constraint, owner: np.ndarray, target: np.ndarray, owner_mode: str) -> np.ndarray:
    """Blender's Transformation constraint: a component of the target (location, Euler rotation or
    scale), clamped to its source range unless extrapolated, mapped linearly onto the destination
    range of the owner's location, rotation or scale, then mixed with the owner's."""
    m = c.mapping
    assert m is not None
    value = _mapping_source(c, target, owner_mode)
    lo, hi = np.asarray(m.from_min, float), np.asarray(m.from_max, float)
    if not m.extrapolate:
        value = np.where(value < lo, lo, np.where(value > hi, hi, value))  # Blender's CLAMP, in its order
    span = hi - lo
    sval = np.where(span != 0.0, (value - lo) / np.where(span != 0.0, span, 1.0), 0.0)
    to_lo, to_hi = np.asarray(m.to_min, float), np.asarray(m.to_max, float)
    new = to_lo + sval[..., list(m.axes)] * (to_hi - to_lo)
    rot, size = _rotation_scale(owner)
    out = owner.copy()
    if m.dest == "SCALE":
        return _with_rotation(owner, rot, size * new if m.mix == "MULTIPLY" else new)
    if m.dest == "ROTATION":
        order = _euler_order(m.to_euler_order, owner_mode)
        if m.mix == "REPLACE":
            rot = tf.euler_to_mat3(new, order)
        elif m.mix == "BEFORE":
            rot = tf.euler_to_mat3(new, order) @ rot
        elif m.mix == "AFTER":
            rot = rot @ tf.euler_to_mat3(new, order)
        else:  # ADD
            rot = tf.euler_to_mat3(tf.mat3_to_euler(rot, order) + new, order)
        return _with_rotation(owner, rot, size)
    out[..., :3, 3] = new if m.mix == "REPLACE" else owner[..., :3, 3] + new
    return out
