"""The crowd plan's parts: ORCA's half-planes and linear programs (van den Berg et al. 2011), the
grid of nearby pairs, obstacle footprints — each against a brute-force answer."""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon.crowd.grid import near_pairs
from procanim_addon.crowd.obstacles import convex_hull, footprint, nearest, obstacle_lines
from procanim_addon.crowd.orca import agent_halfplanes, solve_velocity, violation

RNG = np.random.default_rng(11)


def _grid(v_max, n=301):
    g = np.linspace(-v_max, v_max, n)
    pts = np.stack(np.meshgrid(g, g), axis=-1).reshape(-1, 2)
    return pts[np.linalg.norm(pts, axis=1) <= v_max]


def _violations(lines, pts):
    return np.max([np.maximum(-((pts[:, 0] - qx) * nx + (pts[:, 1] - qy) * ny), 0.0) for qx, qy, nx, ny in lines],
                  axis=0)


def test_linear_program_finds_the_nearest_allowed_velocity_or_the_least_violation():
    for _ in range(200):
        lines = []
        for _ in range(RNG.integers(1, 7)):
            a = RNG.uniform(0, 2 * np.pi)
            q = RNG.uniform(-1.5, 1.5, 2)
            lines.append((q[0], q[1], np.cos(a), np.sin(a)))
        pref = tuple(RNG.uniform(-2, 2, 2))
        v_max = 1.5
        v = solve_velocity(lines, 0, pref, v_max)
        assert np.hypot(*v) <= v_max + 1e-9
        pts = _grid(v_max)
        viol = _violations(lines, pts)
        if np.any(viol == 0):  # feasible: inside every half-plane, no farther from pref than the grid's best
            assert violation(lines, v) < 1e-9
            best = np.linalg.norm(pts[viol == 0] - pref, axis=1).min()
            assert np.hypot(v[0] - pref[0], v[1] - pref[1]) <= best + 0.02
        else:  # infeasible: the largest violation as small as the grid's
            assert violation(lines, v) <= viol.min() + 0.02


def test_static_obstacle_lines_are_kept_when_the_others_cannot_be():
    hard = [(0.0, 0.0, 1.0, 0.0)]  # v_x ≥ 0
    soft = [(-0.5, 0.0, -1.0, 0.0)]  # v_x ≤ −0.5: cannot hold with the hard one
    v = solve_velocity(hard + soft, 1, (-1.0, 0.0), 1.5)
    assert v[0] >= -1e-9


def test_reciprocal_half_planes_avoid_collision_within_the_horizon():
    """ORCA's guarantee (van den Berg et al. 2011, §4): two agents that each pick a velocity within
    their own half-plane do not come closer than r_A + r_B within τ."""
    tau, dt, checked = 3.0, 0.1, 0
    for _ in range(400):
        pa, pb = RNG.uniform(-3, 3, 2), RNG.uniform(-3, 3, 2)
        r = 0.6
        if np.linalg.norm(pa - pb) <= r:
            continue
        va, vb = RNG.uniform(-1.5, 1.5, 2), RNG.uniform(-1.5, 1.5, 2)
        ua, na = agent_halfplanes((pb - pa)[None], (va - vb)[None], np.array([r]), np.array([0.5]), tau, dt)
        ub, nb = agent_halfplanes((pa - pb)[None], (vb - va)[None], np.array([r]), np.array([0.5]), tau, dt)
        qa, qb = va + 0.5 * ua[0], vb + 0.5 * ub[0]
        for _ in range(5):
            wa, wb = RNG.uniform(-3, 3, 2), RNG.uniform(-3, 3, 2)
            wa = wa - min((wa - qa) @ na[0], 0.0) * na[0]  # projected into each one's half-plane
            wb = wb - min((wb - qb) @ nb[0], 0.0) * nb[0]
            t = np.linspace(0, tau, 301)
            gap = np.linalg.norm((pa - pb)[None] + t[:, None] * (wa - wb)[None], axis=1)
            assert gap.min() >= r - 1e-6
            checked += 1
    assert checked > 1000


def test_head_on_the_half_plane_turns_the_velocity_aside():
    u, n = agent_halfplanes(np.array([[3.0, 0.0]]), np.array([[2.4, 0.0]]), np.array([0.6]), np.array([0.5]), 2.0, 0.1)
    assert abs(n[0, 1]) > 0.1  # not only "slow down": the boundary is a leg of the cone


@pytest.mark.parametrize("groups", [False, True])
def test_grid_finds_every_near_pair_and_no_other(groups):
    xy = RNG.uniform(-10, 10, (400, 2))
    g = RNG.integers(0, 3, 400) if groups else None
    i, j = near_pairs(xy, 1.5, g)
    d = np.linalg.norm(xy[:, None] - xy[None], axis=-1)
    want = (d < 1.5) & ~np.eye(400, dtype=bool)
    if groups:
        want &= g[:, None] == g[None]
    assert set(zip(i.tolist(), j.tolist())) == set(zip(*np.nonzero(want)))
    assert np.all(np.diff(i) >= 0)
    same = i[1:] == i[:-1]
    assert np.all(d[i[1:], j[1:]][same] >= d[i[:-1], j[:-1]][same])  # nearest first


def test_footprints_are_convex_hulls_and_distances_signed():
    hull = convex_hull(np.array([[0, 0], [2, 0], [2, 1], [0, 1], [1, 0.5], [1, 0]]))
    assert len(hull) == 4
    box = footprint("Box", [[0, 0, 0], [2, 0, 0], [2, 1, 0], [0, 1, 3]])
    d, n = nearest(box, np.array([[3.0, 0.5], [1.0, 0.5], [1.0, -2.0]]))
    assert d == pytest.approx([1.0, -0.5, 2.0])
    assert n[0] == pytest.approx([1, 0]) and n[2] == pytest.approx([0, -1])
    assert n[1] @ np.array([0.0, 1.0]) == pytest.approx(1.0) or n[1] @ np.array([0.0, -1.0]) == pytest.approx(1.0)
    post = footprint("Post", [[5, 5, 0]])
    assert nearest(post, np.array([[5.0, 7.0]]))[0] == pytest.approx([2.0])


def test_obstacle_lines_keep_a_walker_out_of_the_footprint():
    box = footprint("Box", [[0, 0, 0], [2, 0, 0], [2, 1, 0], [0, 1, 0]])
    xy = np.array([[1.0, -0.8]])
    lines = obstacle_lines([box], xy, np.array([0.3]), 5.0, 1.0, 0.1)[0]
    assert len(lines) == 1
    v = solve_velocity(lines, 1, (0.0, 2.0), 2.0)  # straight at the box
    assert v[1] <= (0.8 - 0.3) / 1.0 + 1e-9
