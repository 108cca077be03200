"""The pieces that made the path walk fast compute what the slow ones did: windowed COM integrals
equal whole-grid cumulative sums, the vectorised quaternion continuity equals the frame-by-frame
rule, the row-wise envelope equals the 1-D one, the stance of many footsteps at once equals one
footstep at a time (and both feet's footsteps in one model as each foot's own), products of a
stack with one matrix equal matmul, and bones the walk does not pose keep identity channels."""

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.curves import envelope
from procanim_addon.ground import FlatGround, StairsGround
from procanim_addon.rigs import human_skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk
from procanim_addon.walk.com import Bases, cumtrapz0
from procanim_addon.walk.gait import plan_walk
from procanim_addon.walk.pose import mat_const, vec_const
from procanim_addon.walk.support import solve_support


def _frame_by_frame(q, axis=0):
    q = np.moveaxis(np.array(q, float, copy=True), axis, 0)
    for i in range(1, q.shape[0]):
        q[i] *= np.where(np.sum(q[i] * q[i - 1], axis=-1, keepdims=True) < 0, -1.0, 1.0)
    return np.moveaxis(q, 0, axis)


@pytest.mark.parametrize("shape, axis", [((300, 6, 4), 0), ((5, 240, 4), 1), ((1, 4), 0), ((2, 4), 0)])
def test_quaternion_continuity_is_the_frame_by_frame_rule(shape, axis):
    q = tf.quat_normalize(np.random.default_rng(7).normal(size=shape))
    np.testing.assert_array_equal(tf.quat_continuity(q, axis=axis), _frame_by_frame(q, axis))
    assert np.all(np.sum(np.moveaxis(tf.quat_continuity(q, axis=axis), axis, 0)[1:]
                         * np.moveaxis(tf.quat_continuity(q, axis=axis), axis, 0)[:-1], axis=-1) >= 0)


def test_quaternion_continuity_restarts_after_an_exactly_orthogonal_pair():
    q = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [-0.6, 0.8, 0, 0], [0.6, -0.8, 0, 0], [0, 0, 1.0, 0]])
    np.testing.assert_array_equal(tf.quat_continuity(q), _frame_by_frame(q))


def test_envelope_of_rows_equals_the_envelope_of_each_row():
    x = np.maximum(np.random.default_rng(3).normal(size=(12, 97)), 0.0) * 0.02
    rows = np.stack([envelope(r, 6) for r in x])
    np.testing.assert_allclose(envelope(x, 6), rows, rtol=0, atol=1e-15)
    assert np.all(envelope(x, 6) >= x)


def test_windowed_integrals_equal_cumulative_sums_over_the_whole_grid():
    rng = np.random.default_rng(5)
    N, dt = 500, 1 / 120
    start = np.array([0, 40, 37, 300, 430])
    length = np.array([60, 1, 90, 120, 70])  # the last one runs to the end of the grid
    values = np.zeros((5, 120))
    for j in range(5):
        values[j, :length[j]] = rng.normal(size=length[j])
    bases = Bases(start, length, values, N)
    dense = np.zeros((N, 5))
    for j in range(5):
        dense[start[j]:start[j] + length[j], j] = values[j, :length[j]]
    vel, pos = cumtrapz0(dense, dt), cumtrapz0(cumtrapz0(dense, dt), dt)
    idx = np.array([0, 1, 39, 40, 41, 100, 299, 300, 499])
    v, p = bases.integrals(np.arange(5)[None, :], idx[:, None], dt)
    np.testing.assert_allclose(v, vel[idx], rtol=0, atol=1e-12)
    np.testing.assert_allclose(p, pos[idx], rtol=0, atol=1e-12)
    c = rng.normal(size=5)
    np.testing.assert_allclose(bases.combine(c), dense @ c, rtol=0, atol=1e-12)


@pytest.mark.parametrize("scene", ["curve", "stairs"])
def test_stance_of_many_footsteps_at_once_equals_one_at_a_time(scene):
    sk, rm = human_skeleton(1.66)
    if scene == "curve":
        pts, ground = np.stack([np.sin(np.linspace(0, 3, 40)), np.linspace(0, -5, 40), np.zeros(40)], -1), FlatGround()
    else:
        pts, ground = np.array([[0, 0, 0], [0, -5.2, 0]]), StairsGround(start=1.3, tread=0.31, riser=0.15,
                                                                       steps_up=3, landing=0.9, steps_down=2)
    p = PathWalkParams().validate()
    plan = plan_walk(sk, rm, pts, ground, p)
    _, feet = solve_support(plan.char, plan.path, plan.ground, plan.steps, plan.tl, p, plan.psi)
    for foot in feet.values():
        ks = foot.ks[1:-1]
        tl = plan.tl
        t = np.concatenate([np.linspace(tl.land[k], tl.lift[k], 9, endpoint=False) for k in ks])
        k_of = np.repeat(ks, 9)
        together = foot.stance_at(k_of, t)
        for k in ks:
            alone = foot.stance(k, t[k_of == k])
            for a, b in zip(alone, together):
                np.testing.assert_allclose(a, b[k_of == k], rtol=0, atol=1e-12)
    # both feet in one model: each footstep as its own foot's model gives it, to the bit
    both = feet["L"].both(feet["R"])
    ks = np.flatnonzero(np.isfinite(plan.tl.land) & np.isfinite(plan.tl.lift))
    t = plan.tl.land[ks] + 0.5 * (plan.tl.lift[ks] - plan.tl.land[ks])
    got = both.stance_at(ks, t, ankle_only=True)[0]
    for side, sign in (("L", 1), ("R", -1)):
        m = plan.steps.side[ks] == sign
        assert m.any()
        np.testing.assert_array_equal(got[m], feet[side].stance_at(ks[m], t[m], ankle_only=True)[0])
        np.testing.assert_array_equal(both.landing_ankle(ks[m]), feet[side].landing_ankle(ks[m]))


def test_products_with_one_matrix_equal_matmul():
    rng = np.random.default_rng(5)
    for n in (7, 30_000):
        A = rng.normal(size=(n, 3, 3))
        B, v = rng.normal(size=(3, 3)), rng.normal(size=3)
        np.testing.assert_allclose(mat_const(A, B), A @ B, rtol=0, atol=1e-14)
        np.testing.assert_allclose(vec_const(A, v), A @ v, rtol=0, atol=1e-14)


def test_bones_the_walk_does_not_pose_keep_their_rest_pose():
    sk, rm = human_skeleton(1.8)
    clip = generate_path_walk(sk, rm, np.array([[0, 0, 0], [0, -3.0, 0]]), FlatGround(), PathWalkParams())
    idle = [sk.index(b) for b in ("hand.L", "hand.R", "clavicle.L", "clavicle.R")]  # no role in the walk
    assert not np.any(clip.key_rotation[idle]) and not np.any(clip.key_location[idle])
    np.testing.assert_array_equal(clip.rotations[:, idle], tf.quat_identity((clip.frame_count, len(idle))))
    assert clip.key_rotation[sk.index("forearm.L")] and clip.key_rotation[sk.index("toe.R")]
