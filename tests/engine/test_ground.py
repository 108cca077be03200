"""Grounds answer 'where is the floor under (x, y)?' like a vertical ray cast from high up."""

import numpy as np
import pytest

from procanim_addon.ground import FlatGround, HeightFieldGround, StairsGround, ground_points


def test_flat_ground_is_level_everywhere():
    z, n, hit = FlatGround(0.3).height(np.array([[0.0, 0.0], [5.0, -2.0], [-100.0, 40.0]]))
    assert np.allclose(z, 0.3)
    assert np.allclose(n, [0, 0, 1])
    assert hit.all()


def test_height_field_reproduces_a_ramp_and_its_normal():
    # a 20 % ramp rising along +x: z = 0.2 x
    g = HeightFieldGround.from_function(lambda x, y: 0.2 * x, (-1, 3), (-1, 1), cell=0.1)
    xy = np.array([[0.0, 0.0], [1.23, 0.4], [2.5, -0.7]])
    z, n, hit = g.height(xy)
    assert hit.all()
    assert np.allclose(z, 0.2 * xy[:, 0], atol=1e-9)
    expected = np.array([-0.2, 0.0, 1.0]) / np.sqrt(1.04)
    assert np.allclose(n, expected, atol=1e-9)


def test_height_field_misses_outside_its_grid():
    g = HeightFieldGround((0.0, 0.0), 0.5, np.zeros((3, 3)))
    _, _, hit = g.height(np.array([[0.5, 0.5], [1.2, 0.5], [-0.1, 0.0]]))
    assert hit.tolist() == [True, False, False]


def test_stairs_go_up_across_a_landing_and_down_again():
    g = StairsGround(origin=(0, 0), direction=(0, -1), start=1.0, tread=0.3, riser=0.16, steps_up=3, landing=1.0,
                     steps_down=3)
    # along −y: flat, 3 risers up (the third tread is the landing), 3 down
    s = np.array([0.5, 1.1, 1.45, 1.7, 2.5, 2.75, 3.05, 3.35, 4.0])
    z, n, _ = g.height(np.stack([np.zeros_like(s), -s], axis=-1))
    assert np.allclose(z, [0.0, 0.16, 0.32, 0.48, 0.48, 0.32, 0.16, 0.0, 0.0])
    assert np.allclose(n, [0, 0, 1])
    treads = g.treads()
    assert [round(b - a, 3) for a, b, _ in treads] == [0.3, 0.3, 1.0, 0.3, 0.3]


def test_ground_points_keeps_the_leading_shape():
    z, n, hit = ground_points(FlatGround(1.0), np.zeros((4, 3, 2)))
    assert z.shape == (4, 3) and n.shape == (4, 3, 3) and hit.shape == (4, 3)


@pytest.mark.parametrize("direction", [(1, 0), (0.6, 0.8)])
def test_stairs_follow_their_direction(direction):
    g = StairsGround(direction=direction, start=0.0, tread=0.25, riser=0.1, steps_up=2, landing=0.5, steps_down=0)
    d = np.asarray(direction, float) / np.linalg.norm(direction)
    z, _, _ = g.height(np.array([d * 0.1, d * 0.3, -d * 0.1]))
    assert np.allclose(z, [0.1, 0.2, 0.0])


def _mesh_height(verts, quads, xy):
    """Highest quad top under each xy (quads here are axis-aligned-ish: test by barycentric split)."""
    out = np.full(len(xy), -np.inf)
    for q in quads:
        for tri in ((q[0], q[1], q[2]), (q[0], q[2], q[3])):
            a, b, c = verts[list(tri)]
            m = np.array([[b[0] - a[0], c[0] - a[0]], [b[1] - a[1], c[1] - a[1]]])
            if abs(np.linalg.det(m)) < 1e-12:
                continue  # a vertical riser: a downward ray never hits it
            uv = np.linalg.solve(m, (xy - a[:2]).T).T
            inside = (uv >= -1e-9).all(axis=1) & (uv.sum(axis=1) <= 1 + 1e-9)
            z = a[2] + uv[:, 0] * (b[2] - a[2]) + uv[:, 1] * (c[2] - a[2])
            out = np.where(inside, np.maximum(out, z), out)
    return out


def test_stairs_mesh_has_the_heights_of_the_analytic_stairs():
    g = StairsGround(direction=(0.6, -0.8), start=1.0, tread=0.3, riser=0.15, steps_up=3, landing=0.8, steps_down=2)
    verts, quads = g.mesh(width=1.0)
    s = np.linspace(0.05, g.edges[-1] + 1.5, 60)
    xy = g.origin + np.outer(s, g.direction)
    z_mesh = _mesh_height(verts, quads, xy)
    z, _, _ = g.height(xy)
    away_from_edges = np.min(np.abs(s[:, None] - g.edges[None, :]), axis=1) > 1e-3
    assert np.allclose(z_mesh[away_from_edges], z[away_from_edges])


def test_height_field_mesh_matches_the_field():
    g = HeightFieldGround.from_function(lambda x, y: 0.1 * x + 0.05 * y, (0, 2), (0, 1), cell=0.25)
    verts, quads = g.mesh()
    xy = np.array([[0.3, 0.4], [1.7, 0.9], [1.0, 0.1]])
    assert np.allclose(_mesh_height(verts, quads, xy), g.height(xy)[0])
