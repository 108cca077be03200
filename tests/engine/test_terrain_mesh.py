"""TerrainMesh queries: vertical ray casts, closest points and oriented boxes on known shapes."""

import numpy as np
import pytest

from procanim_addon.errors import InputError
from procanim_addon.terrain.mesh import TerrainMesh
from procanim_addon.terrain.shapes import zigzag


def block():
    """Flat ground at z=0 with one 1 m × 1 m block, 0.5 m tall, over x,y ∈ [0, 1]."""
    return TerrainMesh.from_boxes(0.0, (-5, -5), (5, 5), [([(0, 0), (1, 0), (1, 1), (0, 1)], 0.5)])


def test_height_sees_the_top_of_a_block_and_the_ground_beside_it():
    t = block()
    z, n, hit = t.height([[0.5, 0.5], [2.0, 0.5], [-1.0, -1.0], [50.0, 0.0]])
    assert z[:3] == pytest.approx([0.5, 0.0, 0.0])
    assert np.allclose(n[:3], [0, 0, 1])
    assert list(hit) == [True, True, True, False]


def test_ray_down_finds_the_ground_under_a_point_below_the_block_top():
    z, _, hit = block().ray_down([[0.5, 0.5, 0.3], [0.5, 0.5, 2.0]])
    assert z == pytest.approx([0.0, 0.5]) and hit.all()


def test_slope_height_and_normal():
    # plane z = 0.5 x over a square
    v = np.array([[0, 0, 0], [2, 0, 1], [2, 2, 1], [0, 2, 0]], float)
    t = TerrainMesh(v, [[0, 1, 2], [0, 2, 3]])
    z, n, _ = t.height([[1.0, 1.0], [0.4, 1.7]])
    assert z == pytest.approx([0.5, 0.2])
    assert np.allclose(n, np.array([-0.5, 0, 1]) / np.sqrt(1.25))


def test_closest_point_on_a_wall_and_on_the_top():
    t = block()
    p, n, d, hit = t.closest_point([[-0.2, 0.5, 0.25], [0.5, 0.5, 0.9], [0.5, 0.5, 9.0]], max_distance=1.0)
    assert p[0] == pytest.approx([0.0, 0.5, 0.25]) and d[0] == pytest.approx(0.2)
    assert abs(n[0, 0]) == pytest.approx(1.0)  # the wall faces along x
    assert p[1] == pytest.approx([0.5, 0.5, 0.5]) and d[1] == pytest.approx(0.4)
    assert not hit[2] and np.isinf(d[2])


def test_boxes_against_a_block():
    t = block()
    eye = np.tile(np.eye(3), (4, 1, 1))
    centers = [[0.5, 0.5, 0.7], [0.5, 0.5, 0.45], [-0.15, 0.5, 0.3], [-0.05, 0.5, 0.3]]
    half = [[0.1, 0.1, 0.1]] * 4
    hits = t.boxes_intersect(centers, eye, half, tolerance=0.001)
    # above the top; sunk into the top; beside the wall; poking through the wall
    assert list(hits) == [False, True, False, True]


def test_a_tilted_box_is_tested_by_its_true_shape():
    t = block()
    # a long thin box over the block's top edge (x=0, z=0.5), centre at (-0.1, 0.5, 0.6); its long
    # axis at 45°: leaning down toward the block its end sinks into the top, leaning up it clears
    # the edge although its axis-aligned bounding box overlaps the block in both cases
    c = np.sqrt(0.5)

    def axes(long_axis):
        long_axis = np.asarray(long_axis, float)
        side = np.cross([0.0, 1.0, 0.0], long_axis)
        return np.column_stack((side, [0.0, 1.0, 0.0], long_axis))[None]

    half = [[0.02, 0.02, 0.2]]
    down = t.boxes_intersect([[-0.1, 0.5, 0.6]], axes([c, 0, -c]), half)
    up = t.boxes_intersect([[-0.1, 0.5, 0.6]], axes([c, 0, c]), half)
    assert down[0] and not up[0]


def test_resting_box_is_not_a_collision_but_a_sunken_one_is():
    t = TerrainMesh.flat(0.0)
    eye = np.eye(3)[None]
    assert not t.boxes_intersect([[0, 0, 0.1]], eye, [[0.1, 0.1, 0.1]], tolerance=1e-4)[0]
    assert t.boxes_intersect([[0, 0, 0.09]], eye, [[0.1, 0.1, 0.1]], tolerance=1e-4)[0]


def test_zigzag_raises_first_and_third_cells():
    t = zigzag(0.4, start_xy=(0, 0), direction_xy=(0, -1), cell_length=1.0, width=2.0)
    y = -np.array([0.5, 1.5, 2.5, 3.5, 4.5])
    z, _, _ = t.height(np.column_stack((np.zeros(5), y)))
    assert z == pytest.approx([0.4, 0.0, 0.4, 0.0, 0.0])


def test_grid_queries_agree_with_brute_force_on_a_bumpy_mesh():
    rng = np.random.default_rng(3)
    n = 20
    xs, ys = np.meshgrid(np.linspace(0, 4, n), np.linspace(0, 4, n))
    zs = 0.2 * np.sin(2 * xs) * np.cos(3 * ys)
    v = np.column_stack((xs.ravel(), ys.ravel(), zs.ravel()))
    tris = []
    for i in range(n - 1):
        for j in range(n - 1):
            a = i * n + j
            tris += [(a, a + 1, a + n + 1), (a, a + n + 1, a + n)]
    t = TerrainMesh(v, tris, cell_size=0.3)
    pts = rng.uniform([0.2, 0.2, -0.3], [3.8, 3.8, 0.5], size=(200, 3))
    p, _, d, hit = t.closest_point(pts, max_distance=0.6)
    # brute force over all triangles
    from procanim_addon.terrain.mesh import _closest_on_triangles
    allc = _closest_on_triangles(np.repeat(pts, len(t.corners), 0), np.tile(t.corners, (len(pts), 1, 1)))
    dd = np.linalg.norm(allc - np.repeat(pts, len(t.corners), 0), axis=1).reshape(len(pts), -1).min(axis=1)
    near = dd <= 0.6
    assert np.array_equal(hit, near)
    assert d[near] == pytest.approx(dd[near], abs=1e-12)


def test_bad_meshes_are_refused_with_a_message():
    with pytest.raises(InputError, match="no faces"):
        TerrainMesh(np.zeros((3, 3)), np.zeros((0, 3), int), name="Plane")
    with pytest.raises(InputError, match="missing vertices"):
        TerrainMesh(np.zeros((3, 3)), [[0, 1, 5]])
