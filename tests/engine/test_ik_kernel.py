"""The plain-float chain kinematics every solver runs on agrees with the chain's numpy FK."""

import numpy as np
import pytest

from procanim_addon.frames import character_frame
from procanim_addon.ik.chain import Chain
from procanim_addon.ik.kernel import euler_xyz, xyz_angles
from procanim_addon.ik.limits import arm_limits
from procanim_addon.rigs import human_skeleton


@pytest.fixture(scope="module")
def arm():
    sk, rm = human_skeleton(1.75)
    cf = character_frame(sk, rm)
    bones = [rm.index(sk, f"{r}.R") for r in ("clavicle", "upper_arm", "forearm", "hand")]
    chain = Chain(sk, bones, arm_limits(sk, bones, cf.forward, cf.left, "R"), effector_local=[0.01, 0.05, 0.02])
    base = sk.fk()[0][chain.base_parent].copy()
    base[:3, 3] += [0.1, -0.2, 0.05]
    return chain, base


def random_angles(chain, seed):
    rng = np.random.default_rng(seed)
    return chain.lower + (chain.upper - chain.lower) * rng.uniform(0.1, 0.9, chain.lower.shape)


@pytest.mark.parametrize("seed", range(5))
def test_heads_axes_effector_and_matrices_match_the_numpy_chain(arm, seed):
    chain, base = arm
    th = random_angles(chain, seed)
    kern = chain.kernel()
    g, h = kern.start(base)
    for count in (chain.n - 1, chain.n):
        mats, heads, waxes = chain.fk_detail(base, th, count)
        p, k_heads, k_axes = kern.detail(g, h, th.ravel().tolist(), count)
        np.testing.assert_allclose(k_heads, heads, atol=1e-12)
        np.testing.assert_allclose(np.reshape(k_axes, (count, 3, 3)), waxes, atol=1e-12)
        want = chain.effector(mats) if count == chain.n else mats[-1, :3, :3] @ chain.head_offset(count - 1) + \
            mats[-1, :3, 3]
        np.testing.assert_allclose(p, want, atol=1e-12)
        np.testing.assert_allclose(kern.point(g, h, th.ravel().tolist(), count)[0], want, atol=1e-12)
    np.testing.assert_allclose(kern.matrices(g, h, th.ravel().tolist()), chain.fk(base, th), atol=1e-12)


def test_euler_angles_round_trip_and_agree_with_the_chain(arm):
    chain, _ = arm
    rng = np.random.default_rng(7)
    for a in rng.uniform(-1.4, 1.4, (20, 3)):
        assert xyz_angles(euler_xyz(*a)) == pytest.approx(tuple(a), abs=1e-12)
        local = chain.local_matrices(np.array([[a[0], a[1], a[2]]] * chain.n))[1]
        np.testing.assert_allclose(chain.angles_of(1, local), a, atol=1e-12)
