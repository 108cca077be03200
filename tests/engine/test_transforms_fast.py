"""The rotation helpers of ``procanim_addon.transforms`` are written component by component for whole
clips (the conversion onto controls, the path walk, the terrain fix and FK all call them). Here each
is checked against a plain formulation — numpy's general functions, or one matrix / quaternion at a
time in Python floats — to the last bit where the operations are the same, and by its meaning where
they are not (angles, inverses, round trips)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from procanim_addon import transforms as tf


def _random_rotations(rng, n):
    return tf.quat_to_mat3(rng.normal(size=(n, 4)))


def _half_turns():
    """Rotations by nearly π about x, y and z, and exactly π about x: Shepperd's branches 1, 2, 3."""
    axes = np.array([[1.0, 0.05, 0.0], [0.02, 1.0, 0.03], [0.0, 0.04, 1.0], [1.0, 0.0, 0.0]])
    return tf.quat_to_mat3(tf.quat_from_axis_angle(axes, [3.1, 3.0, 3.12, math.pi]))


def _shepperd_one(m) -> list[float]:
    """One matrix (nested lists) to a quaternion, in Python floats: the branch of the first largest of
    (trace, m00, m11, m22), normalised, w >= 0."""
    tr = m[0][0] + m[1][1] + m[2][2]
    cand = [tr, m[0][0], m[1][1], m[2][2]]
    k = cand.index(max(cand))
    if k == 0:
        r = math.sqrt(max(1.0 + tr, 1e-300)) * 2
        q = [0.25 * r, (m[2][1] - m[1][2]) / r, (m[0][2] - m[2][0]) / r, (m[1][0] - m[0][1]) / r]
    elif k == 1:
        r = math.sqrt(max(1.0 + m[0][0] - m[1][1] - m[2][2], 1e-300)) * 2
        q = [(m[2][1] - m[1][2]) / r, 0.25 * r, (m[0][1] + m[1][0]) / r, (m[0][2] + m[2][0]) / r]
    elif k == 2:
        r = math.sqrt(max(1.0 + m[1][1] - m[0][0] - m[2][2], 1e-300)) * 2
        q = [(m[0][2] - m[2][0]) / r, (m[0][1] + m[1][0]) / r, 0.25 * r, (m[1][2] + m[2][1]) / r]
    else:
        r = math.sqrt(max(1.0 + m[2][2] - m[0][0] - m[1][1], 1e-300)) * 2
        q = [(m[1][0] - m[0][1]) / r, (m[0][2] + m[2][0]) / r, (m[1][2] + m[2][1]) / r, 0.25 * r]
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    sign = -1.0 if q[0] / n < 0 else 1.0
    return [c / n * sign for c in q]


def _matrix_one(q) -> list[list[float]]:
    """One quaternion (normalised here) to its matrix, in Python floats."""
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    w, x, y, z = (c / n for c in q)
    return [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]


@pytest.mark.parametrize("n", [1, 5, 40, 1000])
def test_lengths_are_numpys_norms_bit_for_bit(n):
    rng = np.random.default_rng(n)
    for size in (3, 4, 7):
        v = rng.normal(size=(n, size)) * rng.choice([1e-3, 1.0, 1e3], size=(n, 1))
        np.testing.assert_array_equal(tf.norms(v), np.linalg.norm(v, axis=-1))
        np.testing.assert_array_equal(tf.normalize(v), v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12))
    m = rng.normal(size=(n, 4, 4))
    np.testing.assert_array_equal(tf.column_scale(m), np.linalg.norm(m[:, :3, :3], axis=-2))
    np.testing.assert_array_equal(tf.norms(m, axis=-2), np.linalg.norm(m, axis=-2))
    q = rng.normal(size=(n, 4))
    np.testing.assert_array_equal(tf.quat_normalize(q), q / np.linalg.norm(q, axis=-1, keepdims=True))


def test_cross_is_numpys_cross_bit_for_bit_with_broadcasting():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(2, 60, 3))
    np.testing.assert_array_equal(tf.cross(a, b), np.cross(a, b))
    np.testing.assert_array_equal(tf.cross(a, b[0]), np.cross(a, b[0]))
    np.testing.assert_array_equal(tf.cross(a[0], b[1]), np.cross(a[0], b[1]))


@pytest.mark.parametrize("kind", ["under half a turn", "mixed branches"])
def test_matrix_to_quaternion_is_shepperds_method_matrix_by_matrix(kind):
    rng = np.random.default_rng(2)
    if kind == "under half a turn":  # every matrix takes the trace branch: the shortcut
        axis = rng.normal(size=(300, 3))
        m = tf.quat_to_mat3(tf.quat_from_axis_angle(axis, rng.uniform(-2.5, 2.5, 300)))
    else:
        m = np.concatenate((_random_rotations(rng, 300), _half_turns(), -np.eye(3)[None] * [1, 1, -1]))
    got = tf.mat3_to_quat(m)
    want = np.array([_shepperd_one(x) for x in m.tolist()])
    np.testing.assert_array_equal(got, want)
    if kind == "mixed branches":
        traces = np.trace(m, axis1=-2, axis2=-1)
        assert len({int(np.argmax([t, *np.diagonal(x)])) for t, x in zip(traces, m)}) == 4
    assert np.all(got[:, 0] >= 0)
    np.testing.assert_allclose(tf.quat_to_mat3(got), m, rtol=0, atol=1e-14)
    # any leading shape; one matrix alone; a part of a stack alone (its own branch choice)
    np.testing.assert_array_equal(tf.mat3_to_quat(m[:300].reshape(20, 15, 3, 3)), got[:300].reshape(20, 15, 4))
    np.testing.assert_array_equal(tf.mat3_to_quat(m[7]), got[7])
    np.testing.assert_array_equal(tf.mat3_to_quat(m[10:30]), got[10:30])


def test_quaternion_to_matrix_is_the_formula_quaternion_by_quaternion():
    q = np.random.default_rng(3).normal(size=(200, 4))
    want = np.array([_matrix_one(x) for x in q.tolist()])
    np.testing.assert_array_equal(tf.quat_to_mat3(q), want)
    np.testing.assert_array_equal(tf.quat_to_mat3(q[5]), want[5])
    np.testing.assert_array_equal(tf.quat_to_mat3(q.reshape(10, 20, 4)), want.reshape(10, 20, 3, 3))


def test_the_angle_of_one_quaternion_is_its_angle_from_the_identity():
    rng = np.random.default_rng(4)
    angles = rng.uniform(-3.0, 3.0, 100)
    q = tf.quat_from_axis_angle(rng.normal(size=(100, 3)), angles) * rng.uniform(0.5, 2.0, (100, 1))
    q[::3] *= -1.0  # the other sign: the same rotation
    np.testing.assert_array_equal(tf.quat_angle(q), tf.quat_angle(tf.quat_identity((100,)), q))
    np.testing.assert_allclose(tf.quat_angle(q), np.abs(angles), rtol=0, atol=1e-7)
    r = tf.quat_normalize(rng.normal(size=(100, 4)))
    np.testing.assert_allclose(tf.quat_angle(q, tf.quat_mul(r, q)), tf.quat_angle(r), rtol=0, atol=1e-7)


def test_slerp_follows_the_shorter_arc_and_takes_a_number_or_an_array():
    rng = np.random.default_rng(5)
    a, b = tf.quat_normalize(rng.normal(size=(2, 50, 4)))
    np.testing.assert_allclose(tf.quat_slerp(a, b, 0.0), a, rtol=0, atol=1e-15)
    end = tf.quat_slerp(a, b, 1.0)
    np.testing.assert_allclose(np.abs(np.sum(end * b, axis=-1)), 1.0, rtol=0, atol=1e-12)
    for t in (0.3, 1.7):  # past the end too (the conversion's damping takes a change w times)
        got = tf.quat_slerp(a, b, t)
        turned = t * tf.quat_angle(a, b)  # past a half turn, the same rotation is the other way round
        np.testing.assert_allclose(tf.quat_angle(a, got), np.minimum(turned, 2 * np.pi - turned), rtol=0, atol=1e-9)
        np.testing.assert_array_equal(tf.quat_slerp(a, b, np.full(50, t)), got)
        np.testing.assert_array_equal(tf.quat_slerp(a[4], b[4], t), got[4])
    t = rng.uniform(0, 1, 50)
    per_row = np.array([tf.quat_slerp(x, y, s) for x, y, s in zip(a, b, t)])
    np.testing.assert_array_equal(tf.quat_slerp(a, b, t), per_row)
    np.testing.assert_array_equal(tf.quat_slerp(a[0], b[0], t), np.array([tf.quat_slerp(a[0], b[0], s) for s in t]))


def test_rotation_between_turns_a_onto_b_including_opposite_directions():
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(2, 40, 3))
    general = tf.rotation_between(a, b)
    b[:4] = -a[:4] * rng.uniform(0.5, 2.0, (4, 1))  # opposite: a half turn about an axis ⊥ a
    a[4], b[4] = [2.0, 0.0, 0.0], [-1.0, 0.0, 0.0]  # ⊥ x taken from y
    q = tf.rotation_between(a, b)
    np.testing.assert_array_equal(q[5:], general[5:])  # the other rows as without opposite ones
    np.testing.assert_allclose(tf.quat_rotate(q, tf.normalize(a)), tf.normalize(b), rtol=0, atol=1e-12)
    np.testing.assert_allclose(tf.quat_angle(q[:5]), math.pi, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.sum(q[:5, 1:] * a[:5], axis=-1), 0.0, rtol=0, atol=1e-12)


def test_decompose_inverts_compose_and_finds_a_mirror_by_the_determinants_sign():
    rng = np.random.default_rng(7)
    loc, q, scale = rng.normal(size=(40, 3)), tf.quat_normalize(rng.normal(size=(40, 4))), rng.uniform(0.2, 3, (40, 3))
    scale[::2, 0] *= -1.0
    m = tf.compose(loc, q, scale)
    np.testing.assert_array_equal(np.sign(tf.det3(m)), np.sign(np.linalg.det(m[:, :3, :3])))
    got_loc, got_q, got_scale = tf.decompose(m)
    np.testing.assert_array_equal(got_loc, loc)
    np.testing.assert_allclose(got_scale, scale, rtol=1e-14, atol=0)
    np.testing.assert_allclose(np.abs(np.sum(got_q * q, axis=-1)), 1.0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(tf.compose(got_loc, got_q, got_scale), m, rtol=0, atol=1e-13)
    # compose broadcasts its parts: one location for a stack of rotations
    np.testing.assert_array_equal(tf.compose(loc[0], q)[:, :3, 3], np.broadcast_to(loc[0], (40, 3)))


def test_affine_inverse_inverts_scaled_and_sheared_matrices():
    rng = np.random.default_rng(8)
    m = np.tile(np.eye(4), (30, 1, 1))
    m[:, :3, :3] = rng.normal(size=(30, 3, 3))
    m[:, :3, 3] = rng.normal(size=(30, 3))
    np.testing.assert_allclose(tf.affine_inverse(m) @ m, np.tile(np.eye(4), (30, 1, 1)), rtol=0, atol=1e-10)
    np.testing.assert_allclose(tf.affine_inverse(m[3]), np.linalg.inv(m[3]), rtol=1e-10, atol=1e-12)


def _frame_by_frame(m, order):
    """The rule in Python floats, frame after frame, on the principal triples of the whole stack (one
    matrix alone may round its arcsin / arctan2 otherwise than a stack does): of the triple and its
    equivalent (a + π, π − b, c + π), each angle moved by whole turns toward the previous frame's,
    the one nearer to it (sum of absolute differences; the principal one on a tie)."""
    i, j, k = ("XYZ".index(c) for c in order)
    turn = 2 * math.pi
    seq = []
    for principal in tf.mat3_to_euler(m, order).tolist():
        other = list(principal)
        other[i], other[j], other[k] = principal[i] + math.pi, math.pi - principal[j], principal[k] + math.pi
        if not seq:
            seq.append(principal)
            continue
        prev = seq[-1]
        moved = [[x + turn * round((p - x) / turn) for x, p in zip(c, prev)] for c in (principal, other)]
        d = [sum(abs(x - p) for x, p in zip(c, prev)) for c in moved]
        seq.append(moved[1] if d[1] < d[0] else moved[0])
    return np.array(seq)


def _axis_matrix(axis: int, angle: float) -> list[list[float]]:
    """The right-handed rotation by ``angle`` about coordinate axis ``axis`` (0, 1, 2), in Python floats."""
    c, s = math.cos(angle), math.sin(angle)
    m = [[1.0 if r == k else 0.0 for k in range(3)] for r in range(3)]
    a, b = (axis + 1) % 3, (axis + 2) % 3
    m[a][a], m[a][b], m[b][a], m[b][b] = c, -s, s, c
    return m


def _product(a, b) -> list[list[float]]:
    return [[sum(a[r][k] * b[k][c] for k in range(3)) for c in range(3)] for r in range(3)]


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_euler_to_matrix_applies_the_orders_first_axis_first(order):
    """Blender's Euler order names the axes in the order they turn a vector: ``R = R₃ R₂ R₁``. The
    closed form (Blender's ``eulO_to_mat3``, angles negated for the odd orders) against that
    product, one triple at a time, over angles past ±π."""
    rng = np.random.default_rng(11)
    angles = rng.uniform(-7.0, 7.0, size=(200, 3))
    got = tf.euler_to_mat3(angles, order)
    axes = ["XYZ".index(c) for c in order]
    for e, m in zip(angles, got):
        want = _axis_matrix(axes[0], e[axes[0]])
        for a in axes[1:]:
            want = _product(_axis_matrix(a, e[a]), want)
        np.testing.assert_allclose(m, want, rtol=0, atol=1e-14)


@pytest.mark.parametrize("order", ["XYZ", "ZXY"])
@pytest.mark.parametrize("path", ["chained", "frame loop"])
def test_euler_sequence_is_the_frame_by_frame_rule(order, path, monkeypatch):
    if path == "frame loop":  # what answers where the chained shortcut's check fails
        monkeypatch.setattr(tf, "_chained_sequence", lambda out, alt: None)
    rng = np.random.default_rng(9)
    angles = np.cumsum(rng.normal(scale=0.3, size=(300, 3)), axis=0)  # turning past ±π many times
    angles[100:110, 1] += np.pi  # and frames half a turn apart
    m = tf.euler_to_mat3(angles, order)
    got = tf.euler_sequence_from_mat3(m, order)
    np.testing.assert_array_equal(got, _frame_by_frame(m, order))
    np.testing.assert_allclose(tf.euler_to_mat3(got, order), m, rtol=0, atol=1e-12)
    assert np.max(np.abs(got)) > 2 * np.pi  # continued past whole turns, not wrapped


def test_euler_angles_of_the_same_matrices_are_the_same_on_every_call():
    """numpy's arctan2 on strided views took libm's or its SIMD loop from call to call (the last bit
    of a third of the angles changed): a re-bake must key the same Euler values."""
    rng = np.random.default_rng(10)
    m = tf.euler_to_mat3(np.cumsum(rng.normal(scale=0.3, size=(300, 3)), axis=0), "XYZ")
    first = tf.mat3_to_euler(m, "XYZ")
    held = []
    for _ in range(100):
        held.append(np.empty(int(rng.integers(1, 3000))))  # other allocations between the calls
        np.testing.assert_array_equal(tf.mat3_to_euler(m, "XYZ"), first)
