"""Limb boxes and the collision measure of Jo & Choi's Table 2.

Every limb bone gets an oriented box along it (the paper: a cube-shaped OBB per leg bone, and arm
bones for tumbling): centred half-way from head to tail, its axes the posed bone's axes, half
extents ``(r, length/2, r)``. The thickness r is ``radius_ratio × length`` clamped to
``[min_radius_m, max_radius_m]``; for feet and toes it is also no more than the bone's rest height
above the soles, so the rest pose standing on its own ground does not collide, and hands are flat
(r = 0): they touch the ground along their axis, where their contact points are.

With ``soles`` (the terrain adaptation's model) each leg also has its sole: a flat box from the
heel (under the ankle, at the rest sole height) to the ball, carried by the foot bone, so a heel
that sinks into a block is seen. And a leg's boxes end at its sole where the sole touches the
ground: a box thicker than its bone's lower end stands above the soles in the rest pose (a shin's
box on a captured skeleton whose ankle joint sits low) would reach below a sole standing on its
floor; on a frame where the leg's lowest sole point (heel, ball, toe tip) is on the terrain, such a
box is raised by as much as that extra thickness reaches below the sole. A sole standing on its
floor is contact, not collision; the rest of the box, and every frame the foot is off the ground,
counts as before.

A collision is a frame where a limb's box, shrunk by ``tolerance_m`` (and raised by the frame's
``sink`` allowance, if any), intersects the terrain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from .contact import heel_local

LIMBS = {
    "leg.L": ("thigh.L", "shin.L", "foot.L", "toe.L"),
    "leg.R": ("thigh.R", "shin.R", "foot.R", "toe.R"),
    "arm.L": ("upper_arm.L", "forearm.L", "hand.L"),
    "arm.R": ("upper_arm.R", "forearm.R", "hand.R"),
}
_GROUNDED = ("foot", "toe")
# RECON: a sole (its lowest point: heel, ball or toe tip) this close to the terrain under it (m)
# touches it: the leg's boxes end at the sole on that frame.
SOLE_TOUCH_M = 0.01


@dataclass
class LimbBoxes:
    """limbs: limb names; bones ``(M,)`` skeleton indices (the bone each box moves with); limb
    ``(M,)`` index into ``limbs``; radius ``(M,)`` m. With soles: foot, toe ``(M,)`` the foot and toe
    bone of the box's leg (−1: not a leg's box, or no toe); heel ``(M, 3)`` the leg's heel in its foot
    bone's rest frame; sole ``(M,)`` true for the sole boxes (heel → ball, on the foot bone); excess
    ``(M,)`` m: how much thicker the box is than its bone's lower end stands above the soles in the
    rest pose (a shin's box on a rig whose ankle is low)."""

    limbs: list[str]
    bones: np.ndarray
    limb: np.ndarray
    radius: np.ndarray
    foot: np.ndarray | None = None
    toe: np.ndarray | None = None
    heel: np.ndarray | None = None
    sole: np.ndarray | None = None
    excess: np.ndarray | None = None

    def __post_init__(self):
        m = len(self.bones)
        self.foot = np.full(m, -1) if self.foot is None else np.asarray(self.foot, int)
        self.toe = np.full(m, -1) if self.toe is None else np.asarray(self.toe, int)
        self.heel = np.zeros((m, 3)) if self.heel is None else np.asarray(self.heel, float)
        self.sole = np.zeros(m, bool) if self.sole is None else np.asarray(self.sole, bool)
        self.excess = np.zeros(m) if self.excess is None else np.asarray(self.excess, float)

    def subset(self, keep: np.ndarray) -> LimbBoxes:
        """The boxes where ``keep (M,)`` is true (same limb names)."""
        keep = np.asarray(keep, bool)
        return LimbBoxes(self.limbs, self.bones[keep], self.limb[keep], self.radius[keep], self.foot[keep],
                         self.toe[keep], self.heel[keep], self.sole[keep], self.excess[keep])

    def boxes(self, skeleton, pose: np.ndarray):
        """centers ``(F, M, 3)``, axes ``(F, M, 3, 3)`` (columns), half extents ``(M, 3)`` (m)."""
        m = pose[:, self.bones]
        length = skeleton.lengths[self.bones]
        axes = m[..., :3, :3]
        centers = m[..., :3, 3] + axes[..., :, 1] * (length / 2)[:, None]
        half = np.column_stack((self.radius, length / 2, self.radius))
        if np.any(self.sole):
            r = np.nonzero(self.sole)[0]
            pts = self.sole_points(skeleton, pose, r)
            a, b = pts[..., 0, :], pts[..., 1, :]  # heel, ball
            y = tf.normalize(b - a)
            x = axes[:, r][..., 0]
            x = tf.normalize(x - np.sum(x * y, axis=-1, keepdims=True) * y)
            centers, axes, half = centers.copy(), axes.copy(), half.copy()
            centers[:, r] = 0.5 * (a + b)
            axes[:, r] = np.stack((x, y, np.cross(x, y)), axis=-1)
            heel_rest = tf.transform_points(skeleton.matrix_local[self.bones[r]], self.heel[r])
            half[r] = 0.0
            half[r, 1] = 0.5 * np.linalg.norm(skeleton.tails[self.bones[r]] - heel_rest, axis=-1)
        return centers, axes, half

    def sole_points(self, skeleton, pose: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Heel, ball and toe tip of the leg of each box ``rows`` ``(F, R, 3, 3)`` (the ball again
        where the leg has no toe)."""
        foot, toe = self.foot[rows], self.toe[rows]
        fm = pose[:, foot]
        heel = tf.transform_points(fm, self.heel[rows])
        ball = fm[..., :3, 3] + fm[..., :3, 1] * skeleton.lengths[foot][:, None]
        tip = ball.copy()
        has = toe >= 0
        if np.any(has):
            tm = pose[:, toe[has]]
            tip[:, has] = tm[..., :3, 3] + tm[..., :3, 1] * skeleton.lengths[toe[has]][:, None]
        return np.stack((heel, ball, tip), axis=-2)

    def rise_to_soles(self, skeleton, pose: np.ndarray, centers, axes, half, terrain) -> np.ndarray:
        """``(F, M)`` m: on frames where a leg's sole touches the terrain (its lowest point within
        ``SOLE_TOUCH_M``), how far each of its boxes reaches below that point — at most what its
        ``excess`` thickness reaches down; 0 elsewhere (the module docstring)."""
        out = np.zeros(centers.shape[:2])
        rows = np.nonzero((self.foot >= 0) & (self.excess > 0))[0]
        if rows.size == 0:
            return out
        pts = self.sole_points(skeleton, pose, rows)  # (F, R, 3, 3)
        z, _, hit = terrain.height(pts[..., :2].reshape(-1, 2), normals=False)
        gap = np.where(hit, pts[..., 2].ravel() - z, np.inf).reshape(pts.shape[:-1]).min(axis=-1)
        up = np.abs(axes[:, rows, 2, :])  # z of each box axis (F, R, 3)
        box_low = centers[:, rows, 2] - np.einsum("fmj,mj->fm", up, half[rows])
        excess_reach = (up[..., 0] + up[..., 2]) * self.excess[rows]
        below = np.clip(pts[..., 2].min(axis=-1) - box_low, 0.0, excess_reach)
        out[:, rows] = np.where(gap <= SOLE_TOUCH_M, below, 0.0)
        return out

    def sample_points(self, skeleton, pose: np.ndarray) -> np.ndarray:
        """Points on each box ``(F, M, 20, 3)``: 8 corners and 3 points along each long edge."""
        centers, axes, half = self.boxes(skeleton, pose)
        sx = np.array([-1, 1, 1, -1])
        sz = np.array([-1, -1, 1, 1])
        along = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
        local = np.array([[sx[e] * 1.0, a, sz[e] * 1.0] for e in range(4) for a in along])  # (20, 3) unit box
        offs = local[None, :, :] * half[:, None, :]  # (M, 20, 3)
        return centers[:, :, None, :] + np.einsum("fmij,mpj->fmpi", axes, offs)


def limb_boxes(skeleton, rigmap, radius_ratio: float = 0.12, min_radius_m: float = 0.01,
               max_radius_m: float = 0.06, arms: bool = True, soles: bool = False) -> LimbBoxes:
    """Boxes for the legs (and arms) of a rig; bones missing from the rig are left out. ``soles``: the
    legs' sole boxes too, and leg boxes that end at their sole (the module docstring)."""
    heads, tails = skeleton.heads, skeleton.tails
    sole = []
    for s in "LR":
        for r in _GROUNDED:
            n = rigmap.get(f"{r}.{s}")
            if n and skeleton.has(n):
                i = skeleton.index(n)
                sole += [heads[i, 2], tails[i, 2]]
    sole_z = min(sole) if sole else -np.inf
    limbs, bones, limb, radius = [], [], [], []
    foot, toe, heel, is_sole, excess = [], [], [], [], []
    for name, roles in LIMBS.items():
        if name.startswith("arm") and not arms:
            continue
        found = False
        leg = _leg_bones(skeleton, rigmap, roles) if soles and name.startswith("leg") else None
        for role in roles:
            n = rigmap.get(role)
            if not n or not skeleton.has(n):
                continue
            i = skeleton.index(n)
            r = float(np.clip(radius_ratio * skeleton.lengths[i], min_radius_m, max_radius_m))
            kind = role.split(".")[0]
            above = min(heads[i, 2], tails[i, 2]) - sole_z  # the bone's rest height above the soles
            if kind in _GROUNDED:
                r = min(r, max(0.0, above))
            elif kind == "hand":
                r = 0.0  # a hand touches the ground along its axis (wrist → tip), like the toes
            excess.append(max(0.0, r - above) if leg else 0.0)
            bones.append(i)
            limb.append(len(limbs))
            radius.append(r)
            foot.append(leg[0] if leg else -1)
            toe.append(leg[1] if leg else -1)
            heel.append(leg[2] if leg else np.zeros(3))
            is_sole.append(False)
            found = True
        if leg:  # the sole: heel → ball, flat, on the foot bone
            bones.append(leg[0])
            limb.append(len(limbs))
            radius.append(0.0)
            foot.append(leg[0])
            toe.append(leg[1])
            heel.append(leg[2])
            is_sole.append(True)
            excess.append(0.0)
        if found:
            limbs.append(name)
    return LimbBoxes(limbs, np.array(bones, int), np.array(limb, int), np.array(radius), np.array(foot, int),
                     np.array(toe, int), np.array(heel, float).reshape(-1, 3), np.array(is_sole, bool),
                     np.array(excess))


def _leg_bones(skeleton, rigmap, roles):
    """``(foot, toe, heel)`` of a leg (toe −1 when the rig has none), or None without a foot."""
    def index(role):
        n = rigmap.get(role)
        return skeleton.index(n) if n and skeleton.has(n) else -1

    foot, toe = index(roles[2]), index(roles[3])
    return None if foot < 0 else (foot, toe, heel_local(skeleton, foot, toe))


def colliding(skeleton, lb: LimbBoxes, pose: np.ndarray, terrain, tolerance_m: float = 0.002,
              sink: np.ndarray | None = None) -> np.ndarray:
    """Per frame and box, does the box (shrunk by ``tolerance_m``) intersect the terrain? ``(F, M)``.
    Leg boxes end at a sole that touches the terrain (:meth:`LimbBoxes.rise_to_soles`); ``sink``
    ``(F, M)`` m: how deep each box may reach into the terrain on each frame (the box is raised by
    that much before the test; see :func:`contact_allowance`)."""
    centers, axes, half = lb.boxes(skeleton, pose)
    rise = lb.rise_to_soles(skeleton, pose, centers, axes, half, terrain)
    if sink is not None:
        rise = rise + sink
    if np.any(rise != 0.0):
        centers = centers.copy()
        centers[..., 2] += rise
    f, m = centers.shape[:2]
    hit = terrain.boxes_intersect(centers.reshape(-1, 3), axes.reshape(-1, 3, 3),
                                  np.broadcast_to(half, (f, m, 3)).reshape(-1, 3), tolerance_m)
    return hit.reshape(f, m)


def contact_allowance(lb: LimbBoxes, source_gap: dict, contact: dict, depth_m: float) -> np.ndarray:
    """``(F, M)`` m: on each contact frame of a limb, how far its end was inside its own ground in
    the source (``-source_gap``, at most ``depth_m``): its boxes may reach that deep into the
    terrain there — the source touching its floor is contact, not collision. Limbs without an
    effector of their name, and frames without contact, get 0."""
    frames = len(next(iter(source_gap.values()))) if source_gap else 0
    out = np.zeros((frames, len(lb.bones)))
    for k, name in enumerate(lb.limbs):
        if name not in source_gap:
            continue
        g = np.asarray(source_gap[name], float)
        depth = np.where(np.asarray(contact[name], bool) & np.isfinite(g), np.clip(-g, 0.0, depth_m), 0.0)
        out[:, lb.limb == k] = depth[:, None]
    return out


def collision_metrics(lb: LimbBoxes, hits: np.ndarray) -> dict:
    """Frames with a collision, per limb (``collisions_leg_L`` …), for legs, arms and in all."""
    out = {}
    per_limb = np.zeros((hits.shape[0], len(lb.limbs)), bool)
    for k, name in enumerate(lb.limbs):
        per_limb[:, k] = np.any(hits[:, lb.limb == k], axis=1)
        out["collisions_" + name.replace(".", "_")] = int(per_limb[:, k].sum())
    legs = [k for k, n in enumerate(lb.limbs) if n.startswith("leg")]
    arms = [k for k, n in enumerate(lb.limbs) if n.startswith("arm")]
    out["collisions_legs"] = int(np.any(per_limb[:, legs], axis=1).sum()) if legs else 0
    out["collisions_arms"] = int(np.any(per_limb[:, arms], axis=1).sum()) if arms else 0
    out["collisions"] = int(np.any(per_limb, axis=1).sum())
    return out
