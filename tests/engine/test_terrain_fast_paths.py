"""The terrain engine's fast paths give what the plain ones give (issue 12: faster, same results):
each is checked against a straightforward version written here."""

import numpy as np
import pytest

from procanim_addon.rigs import human_skeleton
from procanim_addon.terrain.contact import affine_inverse
from procanim_addon.terrain.fix import _first_that_works
from procanim_addon.terrain.joints import joint_set
from procanim_addon.terrain.mesh import TerrainMesh
from procanim_addon.terrain.shapes import zigzag
from procanim_addon.terrain.ticker import Ticker
from procanim_addon.transforms import quat_continuity


def continuity_loop(q, axis=0):
    q = np.moveaxis(np.array(q, float, copy=True), axis, 0)
    for i in range(1, q.shape[0]):
        dot = np.sum(q[i] * q[i - 1], axis=-1, keepdims=True)
        q[i] *= np.where(dot < 0, -1.0, 1.0)
    return np.moveaxis(q, 0, axis)


@pytest.mark.parametrize("shape, axis", [((57, 4), 0), ((33, 6, 4), 0), ((3, 41, 4), 1), ((1, 4), 0)])
def test_quaternion_continuity_without_a_loop_is_the_loop(shape, axis):
    rng = np.random.default_rng(len(shape) * 7 + shape[0])
    q = rng.normal(size=shape)
    if q.shape[0] > 4:  # zero quaternions make zero dots: the flip starts again from +1 there
        q[np.unravel_index(rng.integers(0, q[..., 0].size, 6), q.shape[:-1])] = 0.0
    np.testing.assert_array_equal(quat_continuity(q, axis), continuity_loop(q, axis))


def test_quaternion_continuity_flips_back_a_run_of_negated_frames():
    q = np.tile([1.0, 0.0, 0.0, 0.0], (8, 1))
    q[2:5] *= -1
    assert np.all(quat_continuity(q)[:, 0] == 1.0)


def test_point_queries_through_the_table_equal_the_bin_lists():
    rng = np.random.default_rng(3)
    # a bumpy grid terrain (many small triangles, shared edges and vertices) and the zigzag's blocks
    n = 12
    x, y = np.meshgrid(np.linspace(-2, 2, n), np.linspace(-3, 1, n))
    z = 0.1 * np.sin(3 * x) * np.cos(2 * y)
    verts = np.column_stack((x.ravel(), y.ravel(), z.ravel()))
    quads = [(i * n + j, i * n + j + 1, (i + 1) * n + j + 1, (i + 1) * n + j)
             for i in range(n - 1) for j in range(n - 1)]
    tris = [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]
    for mesh in (TerrainMesh(verts, tris), zigzag(0.45, start_xy=(0, -0.3), cell_length=0.7)):
        assert mesh._ray_table is not None
        m = 3000
        pts = np.column_stack((rng.uniform(-2.5, 2.5, m), rng.uniform(-3.5, 1.5, m), rng.uniform(-0.3, 0.8, m)))
        pts[:40, :2] = verts[rng.integers(0, len(verts), 40), :2]  # exactly on vertices: ties
        fast = mesh.ray_down(pts)
        table, mesh._ray_table = mesh._ray_table, None  # the bin lists
        plain = mesh.ray_down(pts)
        mesh._ray_table = table
        np.testing.assert_allclose(fast[0], plain[0], rtol=0, atol=1e-12)  # heights
        np.testing.assert_array_equal(fast[2], plain[2])  # hits
        # normals: on a vertex several faces meet at one height (either normal is right)
        np.testing.assert_allclose(fast[1][40:], plain[1][40:], rtol=0, atol=1e-12)
        # bins with one surface on top answer with its plane: the same as testing every triangle
        assert np.mean(mesh._single >= 0) > 0.1
        single = mesh._single
        for name, arg in (("ray_down", pts), ("height", pts[:, :2])):
            mesh._single = np.full_like(single, -1)
            every = getattr(mesh, name)(arg)
            mesh._single = single
            one = getattr(mesh, name)(arg)
            np.testing.assert_allclose(one[0], every[0], rtol=0, atol=1e-12)
            np.testing.assert_array_equal(one[2], every[2])
            np.testing.assert_allclose(one[1][40:], every[1][40:], rtol=0, atol=1e-12)
        mesh._single = single


def test_affine_inverse_is_the_inverse_of_non_orthonormal_matrices():
    rng = np.random.default_rng(5)
    m = np.tile(np.eye(4), (20, 1, 1))
    m[:, :3, :3] += 1e-3 * rng.normal(size=(20, 3, 3))  # like float32 rest matrices, a little off
    m[:, :3, 3] = rng.normal(size=(20, 3))
    np.testing.assert_allclose(affine_inverse(m) @ m, np.tile(np.eye(4), (20, 1, 1)), atol=1e-12)


def test_lengths_restored_a_depth_at_a_time_equal_joint_by_joint():
    sk, rm = human_skeleton()
    js = joint_set(sk, rm)
    rng = np.random.default_rng(2)
    p = rng.normal(size=(5, js.count, 3))
    want = p.copy()
    for j in range(js.count):  # Eq. 4, parents first
        k = js.parent[j]
        if k >= 0:
            v = want[:, j] - want[:, k]
            want[:, j] = want[:, k] + js.rest_length[j] * v / np.linalg.norm(v, axis=-1, keepdims=True)
    np.testing.assert_array_equal(js.restore_lengths(p), want)


def test_batched_search_answers_like_trying_candidates_one_by_one():
    rng = np.random.default_rng(4)
    frames = np.array([0, 3, 4, 9, 11])
    values = np.arange(1, 21) * 0.03
    threshold = dict(zip(frames, [0.1, 0.0, 0.45, 9.0, 0.3]))  # frame 9: nothing works
    calls = []

    def works(rows, vals):
        calls.append(len(rows))
        return np.array([v >= threshold[r] for r, v in zip(rows, vals)]) & (rng.random(len(rows)) < 2)

    got = _first_that_works(frames, values, works, Ticker())
    want = [next((v for v in values if v >= threshold[f]), 0.0) for f in frames]
    np.testing.assert_array_equal(got, want)
    assert len(calls) == 1  # 5 frames × 20 candidates fit one batch


def test_batched_search_keeps_every_call_small_however_many_frames():
    """Each call of the search (one progress report before it) holds at most SEARCH_ROWS rows, so
    a cancel is heard between calls even when hundreds of frames need searching."""
    from procanim_addon.terrain.fix import SEARCH_ROWS

    frames = np.arange(3 * SEARCH_ROWS + 7)
    values = np.arange(1, 11, dtype=float)
    need = (frames * 7919) % 13  # 11 and 12: nothing works
    calls = []

    def works(rows, vals):
        calls.append(len(rows))
        return vals >= need[rows]

    got = _first_that_works(frames, values, works, Ticker())
    np.testing.assert_array_equal(got, [next((v for v in values if v >= n), 0.0) for n in need])
    assert max(calls) <= SEARCH_ROWS


def test_component_cross_and_turn_matrices_equal_the_general_helpers():
    from procanim_addon import transforms as tf
    from procanim_addon.terrain.rotations import cross, turn_matrices

    rng = np.random.default_rng(8)
    a, b = rng.normal(size=(2, 50, 3))
    np.testing.assert_array_equal(cross(a, b), np.cross(a, b))
    b[:5] = -a[:5] * rng.uniform(0.5, 2.0, (5, 1))  # opposite: a half turn
    b[5:8] = a[5:8]  # the same direction: no turn
    b[8, :] = [-1.0, 0.0, 0.0]  # opposite to the x axis: the half turn's axis comes from y
    a[8, :] = [2.0, 0.0, 0.0]
    want = tf.quat_to_mat3(tf.rotation_between(a, b))
    np.testing.assert_allclose(turn_matrices(a, b), want, rtol=0, atol=1e-15)


def sat_per_axis(e, v, tolerance):
    """The 13-axis separating test one axis at a time (the terrain's implementation before issue 12)."""
    sep = np.zeros(len(e), bool)

    def separated_on(a):
        norm = np.linalg.norm(a, axis=-1)
        ok = norm > 1e-9
        a = a / np.where(ok, norm, 1.0)[:, None]
        proj = np.einsum("mk,mck->mc", a, v)
        r = np.sum(e * np.abs(a), axis=-1)
        return ok & (np.minimum(r - proj.min(axis=1), proj.max(axis=1) + r) <= tolerance)

    eye = np.eye(3)
    for i in range(3):
        sep |= separated_on(np.broadcast_to(eye[i], (len(e), 3)))
    edges = np.stack((v[:, 1] - v[:, 0], v[:, 2] - v[:, 1], v[:, 0] - v[:, 2]), axis=1)
    sep |= separated_on(np.cross(edges[:, 0], edges[:, 1]))
    for i in range(3):
        for j in range(3):
            sep |= separated_on(np.cross(eye[i], edges[:, j]))
    return ~sep


def test_box_triangle_test_with_the_axes_batched_equals_one_axis_at_a_time():
    from procanim_addon.terrain.mesh import _aabb_triangle_overlap

    rng = np.random.default_rng(9)
    m = 4000
    e = rng.uniform(0.0, 0.3, (m, 3))
    e[:100, 0] = 0.0  # flat boxes (hands)
    v = rng.normal(scale=0.4, size=(m, 3, 3))
    v[100:200, :, 2] = 0.05  # horizontal triangles just above / through the box's face
    v[200:220, 1] = v[200:220, 0]  # degenerate triangles
    for tol in (0.0, 0.002):
        got = _aabb_triangle_overlap(e, v, tol)
        np.testing.assert_array_equal(got, sat_per_axis(e, v, tol))
        assert 0.1 < got.mean() < 0.9  # both answers are exercised


def test_heights_without_normals_are_the_heights_with_normals():
    rng = np.random.default_rng(10)
    mesh = zigzag(0.45, start_xy=(0, -0.3), cell_length=0.7)
    pts = np.column_stack((rng.uniform(-3, 3, 500), rng.uniform(-4, 2, 500), rng.uniform(-0.3, 0.8, 500)))
    pts[:20, :2] += 1e3  # off the grid: misses
    for with_n, without in ((mesh.ray_down(pts), mesh.ray_down(pts, normals=False)),
                            (mesh.height(pts[:, :2]), mesh.height(pts[:, :2], normals=False))):
        np.testing.assert_array_equal(with_n[0], without[0])
        np.testing.assert_array_equal(with_n[2], without[2])
        assert without[1] is None and not np.any(with_n[2][:20])


def test_moves_on_the_pose_then_channels_once_equal_channels_after_every_move():
    """set_rows keeps the pose and marks the bone's channels stale; resolve_channels works them out
    at the end. The channels and the pose equal those of re-posing every bone from its channels after
    each move (the fix before issue 12), on a rig with exact (float64) rest matrices."""
    from procanim_addon import transforms as tf
    from procanim_addon.terrain.contact import resolve_channels, set_rows

    sk, rm = human_skeleton()
    rng = np.random.default_rng(11)
    f = 7
    loc = np.zeros((f, len(sk), 3))
    rot = tf.quat_normalize(np.array([1.0, 0, 0, 0]) + 0.2 * rng.normal(size=(f, len(sk), 4)))
    pose = sk.fk(loc, rot)
    loc_ref, rot_ref = loc.copy(), rot.copy()
    moves = [(rm.index(sk, "hips"), True), (rm.index(sk, "thigh.L"), False), (rm.index(sk, "foot.L"), False),
             (rm.index(sk, "shin.L"), False), (rm.index(sk, "hips"), True)]
    for i, with_location in moves:
        idx = np.sort(rng.choice(f, 4, replace=False))
        m = pose[idx, i].copy()
        m[:, :3, :3] = tf.quat_to_mat3(tf.quat_from_axis_angle(rng.normal(size=(4, 3)), np.full(4, 0.3))) @ m[:, :3, :3]
        m[:, :3, 3] += 0.05 * rng.normal(size=(4, 3))
        set_rows(sk, loc, rot, pose, i, idx, m, with_location)
        # the channels' way: bone i's basis under its parent, its channels, then FK
        p = sk.parents[i]
        ref = sk.rest_rel[i] if p < 0 else sk.fk(loc_ref, rot_ref)[idx, p] @ sk.rest_rel[i]
        new_loc, new_rot, _ = tf.decompose(tf.rigid_inverse(ref) @ m)
        rot_ref[idx, i] = new_rot
        if with_location:
            loc_ref[idx, i] = new_loc
    assert np.isnan(rot).any()
    resolve_channels(sk, loc, rot, pose)
    np.testing.assert_allclose(rot, rot_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(loc, loc_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(pose, sk.fk(loc_ref, rot_ref), rtol=0, atol=1e-12)


def surface_frames_vectors(normals, forward):
    """Descriptor frames with whole-vector operations (the terrain's implementation before issue 12)."""
    from procanim_addon.transforms import normalize

    n = normalize(normals)
    f = np.broadcast_to(np.asarray(forward, float), n.shape)
    t = f - np.sum(f * n, axis=-1, keepdims=True) * n
    bad = np.linalg.norm(t, axis=-1) < 1e-6
    if np.any(bad):
        up = np.array([0.0, 0.0, 1.0])
        t = np.where(bad[..., None], up - np.sum(up * n, axis=-1, keepdims=True) * n, t)
    t = normalize(t)
    return np.stack((n, t, np.cross(n, t)), axis=-2)


def test_descriptor_frames_per_component_equal_the_vector_version():
    from procanim_addon.terrain.descriptors import surface_frames

    rng = np.random.default_rng(12)
    n = rng.normal(size=(300, 12, 3))
    n[:20] = [0.0, 1.0, 0.0]  # walls facing the forward direction: the up axis
    n[20:40] = [0.0, 0.0, 1.0]
    n[40:45] = [0.0, -2.0, 0.0]
    for forward in ([0.0, -1.0, 0.0], np.array([0.3, -0.9, 0.1])):
        np.testing.assert_array_equal(surface_frames(n, forward), surface_frames_vectors(n, forward))
