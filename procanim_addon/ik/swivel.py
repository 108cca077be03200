"""Swivel (pole): turn the arm about the shoulder→wrist axis so the elbow sits toward a pole.

For joint ``s`` (the upper arm) with head ``h``, effector ``p`` and elbow ``e`` (head of joint
``s + 1``), the axis is ``n = (p − h)/|p − h|``; the swivel angle φ is the signed angle about ``n``
from the elbow's offset ``e − h`` to the pole direction, both projected on the plane ⊥ ``n``.
Turning the upper arm's world rotation by ``Rot(n, weight · φ)`` about its head leaves the
effector where it is (the joints below keep their local angles) — unless a limit clamps it, in
which case the caller re-solves.
"""

from __future__ import annotations

import numpy as np

from ._effector import effector_of
from .chain import rodrigues


def swivel_angle(chain, base, angles, count, eff_local, pole, joint) -> float:
    """φ (rad) that would put the elbow on the pole side."""
    mats, heads, _ = chain.fk_detail(base, angles, count)
    p = effector_of(mats, eff_local)
    h, e = heads[joint], heads[joint + 1]
    n = p - h
    if np.linalg.norm(n) < 1e-9:
        return 0.0
    n /= np.linalg.norm(n)
    u = (e - h) - n * (n @ (e - h))
    v = np.asarray(pole, float) - n * (n @ pole)
    if u @ u < 1e-12 or v @ v < 1e-12:
        return 0.0
    return float(np.arctan2(n @ np.cross(u, v), u @ v))


def apply_swivel(chain, base, angles, count, eff_local, pole, joint, weight=1.0) -> np.ndarray:
    """Angles with joint ``joint`` swivelled toward ``pole`` (armature-space direction)."""
    if joint is None or joint < 0 or joint + 1 >= count:
        return angles
    phi = weight * swivel_angle(chain, base, angles, count, eff_local, pole, joint)
    if abs(phi) < 1e-12:
        return angles
    mats, heads, _ = chain.fk_detail(base, angles, count)
    p = effector_of(mats, eff_local)
    n = (p - heads[joint]) / np.linalg.norm(p - heads[joint])
    parent = np.asarray(base, float) if joint == 0 else mats[joint - 1]
    pre = (parent @ chain.rest_rel[joint])[:3, :3]
    world = mats[joint, :3, :3]
    new_local = pre.T @ rodrigues(n, np.float64(phi)) @ world
    out = np.array(angles, float)
    out[joint] = chain.clamp_joint(joint, chain.angles_of(joint, new_local))
    return out
