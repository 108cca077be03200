"""Limb boxes and the collision measure of Jo & Choi's Table 2.

Every limb bone gets an oriented box along it (the paper: a cube-shaped OBB per leg bone, and arm
bones for tumbling): centred half-way from head to tail, its axes the posed bone's axes, half
extents ``(r, length/2, r)``. The thickness r is ``radius_ratio × length`` clamped to
``[min_radius_m, max_radius_m]``; for feet and toes it is also no more than the bone's rest height
above the soles, so the rest pose standing on its own ground does not collide, and hands are flat
(r = 0): they touch the ground along their axis, where their contact points are.

A collision is a frame where a limb's box, shrunk by ``tolerance_m``, intersects the terrain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LIMBS = {
    "leg.L": ("thigh.L", "shin.L", "foot.L", "toe.L"),
    "leg.R": ("thigh.R", "shin.R", "foot.R", "toe.R"),
    "arm.L": ("upper_arm.L", "forearm.L", "hand.L"),
    "arm.R": ("upper_arm.R", "forearm.R", "hand.R"),
}
_GROUNDED = ("foot", "toe")


@dataclass
class LimbBoxes:
    """limbs: limb names; bones ``(M,)`` skeleton indices; limb ``(M,)`` index into ``limbs``;
    radius ``(M,)`` m."""

    limbs: list[str]
    bones: np.ndarray
    limb: np.ndarray
    radius: np.ndarray

    def subset(self, keep: np.ndarray) -> LimbBoxes:
        """The boxes where ``keep (M,)`` is true (same limb names)."""
        keep = np.asarray(keep, bool)
        return LimbBoxes(self.limbs, self.bones[keep], self.limb[keep], self.radius[keep])

    def boxes(self, skeleton, pose: np.ndarray):
        """centers ``(F, M, 3)``, axes ``(F, M, 3, 3)`` (columns), half extents ``(M, 3)`` (m)."""
        m = pose[:, self.bones]
        length = skeleton.lengths[self.bones]
        axes = m[..., :3, :3]
        centers = m[..., :3, 3] + axes[..., :, 1] * (length / 2)[:, None]
        half = np.column_stack((self.radius, length / 2, self.radius))
        return centers, axes, half

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
               max_radius_m: float = 0.06, arms: bool = True) -> LimbBoxes:
    """Boxes for the legs (and arms) of a rig; bones missing from the rig are left out."""
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
    for name, roles in LIMBS.items():
        if name.startswith("arm") and not arms:
            continue
        found = False
        for role in roles:
            n = rigmap.get(role)
            if not n or not skeleton.has(n):
                continue
            i = skeleton.index(n)
            r = float(np.clip(radius_ratio * skeleton.lengths[i], min_radius_m, max_radius_m))
            kind = role.split(".")[0]
            if kind in _GROUNDED:
                r = min(r, max(0.0, min(heads[i, 2], tails[i, 2]) - sole_z))
            elif kind == "hand":
                r = 0.0  # a hand touches the ground along its axis (wrist → tip), like the toes
            bones.append(i)
            limb.append(len(limbs))
            radius.append(r)
            found = True
        if found:
            limbs.append(name)
    return LimbBoxes(limbs, np.array(bones, int), np.array(limb, int), np.array(radius))


def colliding(skeleton, lb: LimbBoxes, pose: np.ndarray, terrain, tolerance_m: float = 0.002) -> np.ndarray:
    """Per frame and box, does the box (shrunk by ``tolerance_m``) intersect the terrain? ``(F, M)``."""
    centers, axes, half = lb.boxes(skeleton, pose)
    f, m = centers.shape[:2]
    hit = terrain.boxes_intersect(centers.reshape(-1, 3), axes.reshape(-1, 3, 3),
                                  np.broadcast_to(half, (f, m, 3)).reshape(-1, 3), tolerance_m)
    return hit.reshape(f, m)


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
