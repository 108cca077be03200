"""Analytic two-bone IK (thigh–shin, upper arm–forearm), batched over frames.

Given the root joint position r, a target t, a pole direction p and the two lengths a, b: the
mid joint lies in the plane of (t − r, p) on the side of p, at the distance from the root that the
law of cosines gives. Unreachable targets are met by the straight limb pointing at them (the end
stops short), never by NaN.
"""

from __future__ import annotations

import numpy as np

from ..transforms import normalize


def solve_two_bone(root_pos, target, pole_dir, len_a: float, len_b: float, max_stretch: float = 0.9999):
    """Mid-joint positions ``(F, 3)`` and reached end positions ``(F, 3)``.

    root_pos, target, pole_dir: ``(F, 3)`` (or broadcastable), metres / unit-free direction.
    ``max_stretch`` keeps the limb from locking fully straight (a straight knee has no bend
    direction and pops).
    """
    r = np.asarray(root_pos, float)
    t = np.asarray(target, float)
    d = t - r
    dist = np.linalg.norm(d, axis=-1)
    u = normalize(d)
    reach_max = (len_a + len_b) * max_stretch
    reach_min = abs(len_a - len_b) * 1.0001 + 1e-9
    c = np.clip(dist, reach_min, reach_max)
    # law of cosines: distance along u of the mid joint and its offset toward the pole
    along = (c**2 + len_a**2 - len_b**2) / (2.0 * c)
    off = np.sqrt(np.maximum(len_a**2 - along**2, 0.0))
    p = np.asarray(pole_dir, float)
    p = p - np.sum(p * u, axis=-1, keepdims=True) * u
    p = normalize(p)
    mid = r + u * along[..., None] + p * off[..., None]
    end = r + u * c[..., None]
    return mid, end
