"""Analytic terrains for tests and the bench: the paper's zigzag and heights taken from the body.

The experiment of Jo & Choi (2019), Table 2: a strip of four cells across the direction of
travel, the 1st and 3rd raised, the 2nd and 4th left flat, raised to the character's ankle
(Low), knee (Medium) or waist (High) height.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .mesh import TerrainMesh

LEVELS = ("ankle", "knee", "waist")


def body_heights(skeleton, rigmap) -> dict[str, float]:
    """Rest heights (m) above the soles: ``ankle`` (foot head), ``knee`` (shin head) and
    ``waist`` (the hips bone's tail, where the spine starts), averaged over both sides."""
    heads, tails = skeleton.heads, skeleton.tails
    soles = []
    for side in "LR":
        for role in (f"foot.{side}", f"toe.{side}"):
            name = rigmap.get(role)
            if name and skeleton.has(name):
                i = skeleton.index(name)
                soles += [heads[i, 2], tails[i, 2]]
    if not soles:
        raise InputError("The rig has no feet (roles foot.L/foot.R): cannot tell ankle, knee and waist heights.")
    ground = min(soles)

    def mean_head(role):
        return float(np.mean([heads[rigmap.index(skeleton, f"{role}.{s}"), 2] for s in "LR"]))

    hips = rigmap.index(skeleton, "hips")
    return {
        "ankle": mean_head("foot") - ground,
        "knee": mean_head("shin") - ground,
        "waist": float(tails[hips, 2]) - ground,
    }


def zigzag(height: float, start_xy=(0.0, 0.0), direction_xy=(0.0, -1.0), cell_length: float = 1.0,
           width: float = 3.0, cells: int = 4, ground_z: float = 0.0, margin: float = 10.0,
           name: str = "zigzag") -> TerrainMesh:
    """Flat ground at ``ground_z`` with ``cells`` cells of ``cell_length`` (m) laid along
    ``direction_xy`` from ``start_xy``; cells 1, 3, … (odd, counting from 1) are raised by
    ``height`` (m), the others stay flat. ``width`` is the cells' size across the direction (m);
    the ground extends ``margin`` (m) beyond the cells on every side."""
    if height <= 0:
        raise InputError(f"Zigzag height must be positive (got {height:g} m).")
    d = np.asarray(direction_xy, float)
    d = d / np.linalg.norm(d)
    side = np.array([-d[1], d[0]])  # d rotated +90°: (d, side) is counter-clockwise
    s = np.asarray(start_xy, float)
    blocks = []
    for k in range(0, cells, 2):
        a = s + d * (k * cell_length)
        b = s + d * ((k + 1) * cell_length)
        quad = [a - side * width / 2, b - side * width / 2, b + side * width / 2, a + side * width / 2]
        blocks.append((quad, ground_z + height))
    end = s + d * (cells * cell_length)
    lo = np.minimum(s, end) - margin
    hi = np.maximum(s, end) + margin
    return TerrainMesh.from_boxes(ground_z, lo, hi, blocks, name=name)

