"""Feet and hands on the ground: contact points, contact frames and the final two-bone IK fix.

An *effector* is a limb's end: a leg (thigh → shin → foot, its contact points the heel, the ball
and the toe tip) or an arm (upper arm → forearm → hand, its points the wrist and the hand's tip).
Its *gap* on a surface is the lowest of (point height − surface height under the point); a frame
of the source is a contact frame when the gap on the reference is under a threshold.

The fix moves the end bone straight up or down by Δz keeping its armature-space orientation; the
two bones above it follow by analytic two-bone IK in their current bend plane (the knee or elbow
keeps its side), each turned by the shortest arc so the source's twist is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from ..curves import smoothstep
from ..ik.two_bone import solve_two_bone
from .rotations import affine_inverse, turn_matrices

UP = np.array([0.0, 0.0, 1.0])
# A bend plane more than 135° away from the side the limb bends to (cos 135° = -0.707) is a joint
# bent backward: mirrored onto that side (see move_end).
BEHIND_COS = float(np.cos(np.radians(45.0)))


@dataclass
class Effector:
    """name ('leg.L'…); upper, lower, end: skeleton indices; tip: the toe bone (legs) or −1;
    heel_local: heel point in the end bone's rest frame (legs) or None."""

    name: str
    upper: int
    lower: int
    end: int
    tip: int
    heel_local: np.ndarray | None

    @property
    def is_leg(self) -> bool:
        return self.name.startswith("leg")

    def points(self, skeleton, pose: np.ndarray) -> np.ndarray:
        """Contact points ``(F, P, 3)``: heel, ball, toe tip for a leg; wrist and hand tip for an arm."""
        tails = skeleton.tails_of(pose)
        end = pose[:, self.end]
        pts = [end[:, :3, 3], tails[:, self.end]]
        if self.heel_local is not None:
            pts.insert(0, tf.transform_points(end, self.heel_local))
        if self.tip >= 0:
            pts.append(tails[:, self.tip])
        return np.stack(pts, axis=1)


def effectors(skeleton, rigmap, hands: bool = True) -> list[Effector]:
    """The legs (and arms) of a rig that have all three bones."""
    out = []
    for side in "LR":
        kinds = [("leg", "thigh", "shin", "foot", "toe")]
        if hands:
            kinds.append(("arm", "upper_arm", "forearm", "hand", None))
        for kind, a, b, c, d in kinds:
            names = [rigmap.get(f"{r}.{side}") for r in (a, b, c)]
            if not all(n and skeleton.has(n) for n in names):
                continue
            ia, ib, ic = (skeleton.index(n) for n in names)
            tip_name = rigmap.get(f"{d}.{side}") if d else None
            tip = skeleton.index(tip_name) if tip_name and skeleton.has(tip_name) else -1
            heel = heel_local(skeleton, ic, tip) if kind == "leg" else None
            out.append(Effector(f"{kind}.{side}", ia, ib, ic, tip, heel))
    return out


def heel_local(skeleton, foot: int, toe: int) -> np.ndarray:
    """The heel point in the rest frame of bone ``foot`` ``(3,)``: under the ankle (the foot's
    head), at the height of the sole in the rest pose (the lowest of the foot's tail and the toe
    bone ``toe``'s head and tail; −1: no toe)."""
    heads, tails = skeleton.heads, skeleton.tails
    low = [tails[foot, 2]] + ([heads[toe, 2], tails[toe, 2]] if toe >= 0 else [])
    heel_world = np.array([heads[foot, 0], heads[foot, 1], min(low)])
    return tf.transform_points(np.linalg.inv(skeleton.matrix_local[foot]), heel_world)


def gaps(points: np.ndarray, surface, below: bool = False):
    """Lowest (point height − surface height under it) over the points: ``(F,)`` m, and ``(F,)``
    whether every point had a surface under it. ``below``: the surface at or below each point
    (the source on its reference); otherwise the top surface (what a foot must stand on)."""
    f, n = points.shape[:2]
    flat = points.reshape(-1, 3)
    z, _, hit = surface.ray_down(flat, normals=False) if below else surface.height(flat[:, :2], normals=False)
    if below:  # a point under the reference (penetrating): measure to the top instead
        z, hit = _top_where_missed(surface, flat, z, hit)
    g = (flat[:, 2] - z).reshape(f, n)
    ok = hit.reshape(f, n)
    return np.where(ok, g, np.inf).min(axis=1), ok.all(axis=1)


def point_gaps(points: np.ndarray, surface, below: bool) -> np.ndarray:
    """Height of each point above the surface under it, same shape as ``points[..., 0]`` (m; inf
    where no surface is under the point). ``below`` as in :func:`gaps`."""
    flat = points.reshape(-1, 3)
    if below:
        z, _, hit = surface.ray_down(flat, normals=False)
        z, hit = _top_where_missed(surface, flat, z, hit)
    else:
        z, _, hit = surface.height(flat[:, :2], normals=False)
    return np.where(hit, flat[:, 2] - z, np.inf).reshape(points.shape[:-1])


def _top_where_missed(surface, flat, z, hit):
    """``z, hit`` of a downward ray cast from points ``flat (N, 3)``, with the top surface's height
    where it missed (a point under the surface); the top is queried there only."""
    miss = np.nonzero(~hit)[0]
    if miss.size:
        z, hit = z.copy(), hit.copy()
        z[miss], _, hit[miss] = surface.height(flat[miss, :2], normals=False)
    return z, hit


def ramp_envelope(values: np.ndarray, half_width: int) -> np.ndarray:
    """Smallest-effort smooth cover of ``values (F,)`` ≥ 0: each value spreads to its neighbours
    with a smoothstep fall-off over ``half_width`` frames, and the result is the maximum (never less
    than the input), so lifts and drops start before they are needed and end after."""
    v = np.maximum(np.asarray(values, float), 0.0)
    if half_width <= 0 or not np.any(v > 0):
        return v
    out = v.copy()
    for s in range(1, half_width + 1):
        fall = 1.0 - float(smoothstep(s / (half_width + 1)))
        out[s:] = np.maximum(out[s:], v[:-s] * fall)
        out[:-s] = np.maximum(out[:-s], v[s:] * fall)
    return out


def set_world(skeleton, loc, rot, pose, i: int, matrix: np.ndarray, mask: np.ndarray,
              with_location: bool = False) -> None:
    """Give bone ``i`` the armature-space ``matrix`` (F, 4, 4) on frames ``mask``; children follow.
    Only ``with_location`` writes the location channel (the bone's head moves); otherwise the head
    stays where its parent puts it and only the rotation changes."""
    mask = np.asarray(mask, bool)
    if np.any(mask):
        idx = np.nonzero(mask)[0]
        set_rows(skeleton, loc, rot, pose, i, idx, matrix[idx], with_location)


def set_rows(skeleton, loc, rot, pose, i: int, idx: np.ndarray, matrix: np.ndarray,
             with_location: bool = False) -> None:
    """:func:`set_world` on frame indices ``idx`` with their matrices ``(len(idx), 4, 4)``.

    The fix works on poses: bone ``i`` takes the matrix (without ``with_location`` its head stays
    where its parent puts it), its descendants are carried by its change ``new · old⁻¹`` in one
    product (a true inverse: rest matrices read from Blender are orthonormal only to float32
    precision), and its channels are marked stale (NaN) — :func:`resolve_channels` works them out
    from the pose once, when the fix is done, instead of a quaternion round trip per move."""
    new = np.array(matrix, dtype=float)
    if not with_location:
        new[:, :3, 3] = pose[idx, i, :3, 3]
    below = _descendants(skeleton, i)
    if below.size:
        change = new @ affine_inverse(pose[idx, i])
        rows = idx[:, None]
        pose[rows, below] = change[:, None] @ pose[rows, below]
    pose[idx, i] = new
    rot[idx, i] = np.nan
    if with_location:
        loc[idx, i] = np.nan


def resolve_channels(skeleton, loc, rot, pose) -> None:
    """The stale channels :func:`set_rows` left (NaN), from the pose (in place): bone ``i``'s
    basis is ``(pose[parent] · rest_rel_i)⁻¹ · pose_i`` (a rigid inverse, as the channels were
    always read here), its rotation the basis's quaternion, its location the basis's translation
    where that was stale."""
    stale_rot = np.isnan(rot[..., 0])
    stale_loc = np.isnan(loc[..., 0])
    f, b = np.nonzero(stale_rot | stale_loc)
    if f.size == 0:
        return
    par = skeleton.parents[b]
    ref = np.broadcast_to(skeleton.rest_rel[b], (f.size, 4, 4)).copy()
    has = par >= 0
    ref[has] = pose[f[has], par[has]] @ skeleton.rest_rel[b[has]]
    new_loc, new_rot, _ = tf.decompose(tf.rigid_inverse(ref) @ pose[f, b])
    r, lo = stale_rot[f, b], stale_loc[f, b]
    rot[f[r], b[r]] = new_rot[r]
    loc[f[lo], b[lo]] = new_loc[lo]


_DESCENDANTS: dict = {}


def _descendants(skeleton, i: int) -> np.ndarray:
    """Indices of the bones below ``i`` (cached per skeleton and bone)."""
    key = (id(skeleton), i)
    hit = _DESCENDANTS.get(key)
    if hit is None or hit[0] is not skeleton:
        hit = (skeleton, np.array(skeleton.descendants(i), dtype=np.int64))
        _DESCENDANTS[key] = hit
    return hit[1]


def move_end(skeleton, loc, rot, pose, eff: Effector, offset: np.ndarray, mask: np.ndarray, bend_hint=None,
             swivel=None, side=None) -> None:
    """Move the effector's end bone by ``offset`` — ``(F,)`` m straight up, or ``(F, 3)`` m — on
    ``mask`` frames keeping its orientation, re-solving the two bones above it by two-bone IK in
    their current bend plane. ``bend_hint`` (3,): the side the joint bends to when the limb is
    nearly straight (knees forward, elbows back). ``side`` (F, 3): per frame, the side the joint
    must bend to (the source's own bend): a bend plane found on the other side is mirrored onto it,
    so a knee the solve left bent backward is not driven further backward (more than 135° from
    that side: a knee the fix turned out, up to 120°, stays turned out). ``swivel`` (F,) rad
    turns the bend plane about the root→end axis (a knee turned out)."""
    idx = np.nonzero(np.asarray(mask, bool))[0]
    if idx.size == 0:
        return
    offset = np.asarray(offset, float)[idx]
    if offset.ndim == 1:
        offset = offset[:, None] * UP
    end_before = pose[idx, eff.end]
    root = pose[idx, eff.upper, :3, 3]
    mid = pose[idx, eff.lower, :3, 3]
    target = end_before[:, :3, 3] + offset
    axis = tf.normalize(end_before[:, :3, 3] - root)
    pole = mid - root - np.sum((mid - root) * axis, axis=-1, keepdims=True) * axis
    if bend_hint is not None:  # a nearly straight limb has no reliable bend plane of its own
        pole = pole + 0.01 * skeleton.lengths[eff.upper] * np.asarray(bend_hint, float)
    if side is not None:
        s = np.asarray(side, float)[idx]
        s = s - np.sum(s * axis, axis=-1, keepdims=True) * axis
        s2 = np.sum(s * s, axis=-1, keepdims=True)
        c = np.sum(pole * s, axis=-1, keepdims=True)
        behind = c < -BEHIND_COS * np.sqrt(np.sum(pole * pole, axis=-1, keepdims=True) * s2)
        pole = np.where(behind & (s2 > 1e-12), pole - 2 * c * s / np.maximum(s2, 1e-12), pole)
    if swivel is not None:
        axis_t = tf.normalize(target - root)
        pole = tf.quat_rotate(tf.quat_from_axis_angle(axis_t, np.asarray(swivel, float)[idx]), pole)
    la, lb = skeleton.lengths[eff.upper], skeleton.lengths[eff.lower]
    new_mid, new_end = solve_two_bone(root, target, pole, la, lb)
    for bone, head, tail in ((eff.upper, root, new_mid), (eff.lower, None, new_end)):
        m = pose[idx, bone]
        h = m[:, :3, 3] if head is None else head
        turn = turn_matrices(m[:, :3, 1], tail - h)
        m[:, :3, :3] = turn @ m[:, :3, :3]
        set_rows(skeleton, loc, rot, pose, bone, idx, m)
    end_before[:, :3, 3] = pose[idx, eff.end, :3, 3]  # where the chain put it; orientation as before
    set_rows(skeleton, loc, rot, pose, eff.end, idx, end_before)


def intervals(mask: np.ndarray) -> list[tuple[int, int]]:
    """Runs of true frames as ``(first, last + 1)``."""
    m = np.concatenate(([False], np.asarray(mask, bool), [False]))
    d = np.diff(m.astype(int))
    return list(zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]))


def footing_shifts(points: np.ndarray, ref_spread: np.ndarray, terrain, direction, max_shift_m: float = 0.3,
                   step_m: float = 0.01, level_m: float = 0.01, margin_m: float = 0.06):
    """Shifts (m, along ``direction``) of a planted end's points ``(n, P, 3)`` (heel … toe) after
    which the terrain under them is as level as the reference was (spread of heights under the
    points ≤ ``ref_spread (n,)`` + ``level_m`` on every frame): a foot that would straddle a step
    moves onto one side of it. Returns ``(backward, forward)``: the smallest shift each way within
    ``max_shift_m`` (≤ 0 and ≥ 0), None where none helps; ``(0, 0)`` when already level. The
    footprint reaches ``margin_m`` beyond its first and last point (heel and toe)."""
    ends = points[:, -1, :2] - points[:, 0, :2]
    ends = ends / np.maximum(np.linalg.norm(ends, axis=-1, keepdims=True), 1e-9)
    extra = np.stack((points[:, 0, :2] - margin_m * ends, points[:, -1, :2] + margin_m * ends), axis=1)
    points = np.concatenate((points[..., :2], extra), axis=1)
    steps = np.arange(0.0, max_shift_m + 1e-9, step_m)
    d = np.asarray(direction, float)[:2]

    def level(shifts):
        xy = points[None] + shifts[:, None, None, None] * d  # (S, n, P, 2)
        z, _, hit = terrain.height(xy.reshape(-1, 2), normals=False)
        z = np.where(hit, z, np.nan).reshape(xy.shape[:-1])
        spread = np.nanmax(z, axis=-1) - np.nanmin(z, axis=-1)
        return np.all((spread <= ref_spread[None] + level_m) & np.all(hit.reshape(xy.shape[:-1]), axis=-1), axis=1)

    if level(steps[:1])[0]:  # already level: no other shift needs measuring
        return 0.0, 0.0
    shifts = np.concatenate((-steps, steps[1:]))
    ok = level(shifts)
    back = np.nonzero(ok[: len(steps)])[0]
    fwd = np.nonzero(ok[len(steps):])[0]
    return (float(shifts[back[0]]) if back.size else None,
            float(shifts[len(steps) + fwd[0]]) if fwd.size else None)
