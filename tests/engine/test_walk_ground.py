"""The path walk's feet on sloping ground: a ramp mesh with sharp folds, and a climbing curve with no
ground object (the path's own heights). Measured on the FK of the generated clip: the sole points
(heel, ball, toe tip) against the ramp's exact height."""

import numpy as np
import pytest

from procanim_addon.rigs import human_skeleton
from procanim_addon.terrain.mesh import TerrainMesh
from procanim_addon.walk import PathWalkParams, generate_path_walk
from procanim_addon.walk.character import read_character
from procanim_addon.walk.metrics import sole_points
from procanim_addon.walk.path import PathHeightGround, build_path

RAMP_Y, RAMP_Z = [0.0, -2.0, -5.0, -7.5], [0.0, 0.0, 0.3, 0.3]  # level, 10 % up, level (walking along −y)
DEPTH_M = 0.001  # no sole point deeper than this inside the ramp


def ramp_height(xy):
    return np.interp(-np.asarray(xy)[..., 1], [-y for y in RAMP_Y], RAMP_Z)


def ramp_mesh() -> TerrainMesh:
    verts = [(x, y, z) for y, z in zip(RAMP_Y, RAMP_Z) for x in (-1.0, 1.0)]
    quads = [(2 * k, 2 * k + 1, 2 * k + 3, 2 * k + 2) for k in range(len(RAMP_Y) - 1)]
    return TerrainMesh(verts, [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])


def _walk(with_mesh: bool):
    sk, rm = human_skeleton()
    if with_mesh:
        clip = generate_path_walk(sk, rm, np.array([[0.0, RAMP_Y[0], 0.0], [0.0, RAMP_Y[-1], 0.0]]), ramp_mesh(),
                                  PathWalkParams())
    else:
        clip = generate_path_walk(sk, rm, np.stack([np.zeros(4), RAMP_Y, RAMP_Z], -1), None, PathWalkParams())
    pose = sk.fk(clip.locations, clip.rotations)
    char = read_character(sk, rm)
    return clip, {s: sole_points(sk, pose, char, s) for s in "LR"}


@pytest.mark.parametrize("with_mesh", [True, False], ids=["ramp mesh", "no ground object"])
def test_the_soles_stay_out_of_a_ramp_and_lie_on_its_slope(with_mesh):
    """A foot planted where the ramp starts rests on the level and the slope (its toe tip no longer
    overhangs into the slope), and with no ground object the feet tilt with the curve's own slope
    (they stayed level: toe tips ~2 cm into the ramp)."""
    clip, soles = _walk(with_mesh)
    on_slope = 0
    for pts in soles.values():
        gap = pts[..., 2] - ramp_height(pts[..., :2])
        assert gap.min() > -DEPTH_M, f"a sole point {-gap.min() * 100:.2f} cm inside the ramp"
        down = (np.abs(gap[:, 0]) < 0.003) & (np.abs(gap[:, 2]) < 0.003)
        tilted = down & (pts[:, 2, 2] - pts[:, 0, 2] > 0.015)  # heel and toe tip down, the tip higher
        on_slope += int(tilted.sum())
    assert on_slope > 20  # planted feet lie along the slope
    assert clip.metrics["skate_mean_cm_s"] < 1.0 and clip.metrics["penetration_max_cm"] < 0.1


def test_the_path_height_ground_tilts_with_the_path_and_keeps_treads_level():
    """Its normal is the path's slope normal at the nearest sample; beside a riser (a vertical
    segment of the curve) the tread is level."""
    ramp = build_path(np.stack([np.zeros(4), RAMP_Y, RAMP_Z], -1), None)
    z, n, hit = PathHeightGround(ramp).height(np.array([[0.0, -1.0], [0.1, -3.5], [0.0, -6.0]]))
    slope = np.array([0.0, 0.1, 1.0]) / np.sqrt(1.01)  # z rises along −y: the normal leans toward +y
    np.testing.assert_allclose(n, [[0, 0, 1], slope, [0, 0, 1]], atol=1e-9)
    assert hit.all() and z[1] == pytest.approx(0.15, abs=0.002)
    stairs = build_path(np.array([[0, 0, 0], [0, -1.0, 0], [0, -1.0, 0.16], [0, -2.0, 0.16]], float), None)
    _, n, _ = PathHeightGround(stairs).height(np.array([[0.0, -0.99], [0.0, -1.01], [0.0, -1.5]]))
    np.testing.assert_allclose(n, np.tile([0.0, 0.0, 1.0], (3, 1)), atol=1e-12)
