"""Relationship descriptors (Eq. 1, 2): sampling, local frames, weights, estimates."""

import numpy as np
import pytest

from procanim_addon.terrain import descriptors as rd
from procanim_addon.terrain.mesh import TerrainMesh

FORWARD = np.array([0.0, -1.0, 0.0])


def slope(angle_deg, size=10.0):
    """A plane through the origin tilted about the x axis: z = tan(a)·y."""
    s = np.tan(np.radians(angle_deg)) * size
    v = np.array([[-size, -size, -s], [size, -size, -s], [size, size, s], [-size, size, s]])
    return TerrainMesh(v, [[0, 1, 2], [0, 2, 3]])


def test_descriptors_lie_on_the_surface_below_each_joint_and_spread_with_height():
    ground = TerrainMesh.flat(0.0)
    joints = np.array([[0.0, 0.0, 0.05], [1.0, 0.0, 1.0]])
    d = rd.sample(ground, joints, FORWARD, count=12)
    assert d.points.shape == (2, 12, 3) and d.valid.all()
    assert np.allclose(d.points[..., 2], 0.0)
    centre = d.points[..., :2].mean(axis=1)
    assert np.allclose(centre, joints[:, :2], atol=0.05)  # around the vertical projection
    spread = np.linalg.norm(d.points[..., :2] - joints[:, None, :2], axis=-1).max(axis=1)
    assert spread[1] > 2 * spread[0]  # the higher joint's descriptors are sparser
    # sampling density ∝ 1/distance: points per area  count/(πρ²)  with ρ² = ρ0² + c·h
    rho = np.sqrt(0.05**2 + 0.3 * joints[:, 2])
    assert spread == pytest.approx(rho * np.sqrt(11.5 / 12), rel=1e-9)


def test_local_frames_are_orthonormal_with_the_surface_normal_first():
    s = slope(20.0)
    d = rd.sample(s, np.array([[0.3, 0.2, 1.0]]), FORWARD, count=10)
    f = d.frames[0]  # rows n, t, b per descriptor
    assert np.allclose(f @ np.swapaxes(f, -1, -2), np.eye(3), atol=1e-12)
    assert np.allclose(np.linalg.det(f), 1.0)
    n_expected = np.array([0.0, -np.sin(np.radians(20)), np.cos(np.radians(20))])
    assert np.allclose(f[:, 0], n_expected)
    # the tangent is the forward direction laid on the slope: in the y-z plane, pointing −Y
    assert np.allclose(f[:, 1, 0], 0.0) and np.all(f[:, 1, 1] < 0)


def test_encode_then_estimate_on_the_same_surface_gives_the_joint_back():
    s = slope(15.0)
    p = np.array([[0.1, -0.4, 0.8], [0.5, 0.5, 0.2]])
    d = rd.sample(s, p, FORWARD, count=16)
    r = rd.encode(p, d)
    w = rd.weights(p, d)
    assert np.allclose(rd.estimate(rd.carry(d, s, FORWARD), r, w), p, atol=1e-12)


def test_weights_fall_with_distance_vanish_past_the_cutoff_and_sum_to_one():
    ground = TerrainMesh.flat(0.0)
    p = np.array([[0.0, 0.0, 0.02]])
    d = rd.sample(ground, p, FORWARD, count=20, radius0_m=0.3, spread_m=0.0)
    w = rd.weights(p, d, cutoff_ratio=3.0)[0]
    dist = np.linalg.norm(d.points[0] - p[0], axis=-1)
    assert w.sum() == pytest.approx(1.0)
    order = np.argsort(dist)
    assert np.all(np.diff(w[order]) <= 1e-15)  # nearer → heavier
    assert np.all(w[dist >= 3.0 * dist.min()] == 0.0) and np.any(dist >= 3.0 * dist.min())
    assert np.count_nonzero(w) >= 3


def test_a_tilted_terrain_turns_the_stored_offset_with_the_normal():
    flat = TerrainMesh.flat(0.0)
    tilted = slope(30.0)
    p = np.array([[0.0, 0.0, 0.5]])
    d = rd.sample(flat, p, FORWARD, count=12, radius0_m=1e-3, spread_m=1e-6)  # all under the joint
    est = rd.estimate(rd.carry(d, tilted, FORWARD), rd.encode(p, d), rd.weights(p, d))
    # 0.5 m along the tilted normal from (almost) the origin
    n = np.array([0.0, -np.sin(np.radians(30)), np.cos(np.radians(30))])
    assert est[0] == pytest.approx(0.5 * n, abs=2e-3)


def test_descriptors_off_the_terrain_get_no_weight():
    small = TerrainMesh.flat(0.0, size=1.0)
    p = np.array([[0.45, 0.0, 1.0]])  # near the edge: part of the spiral falls outside
    d = rd.sample(small, p, FORWARD, count=12)
    assert 0 < d.valid.sum() < 12
    w = rd.weights(p, d)
    assert np.all(w[~d.valid] == 0) and w.sum() == pytest.approx(1.0)
