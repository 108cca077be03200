"""CCD, JT and FABRIK jump ahead to the limit of their own iterations (ik/extrapolate.py): the same
poses as the plain iterations — as close to where they converge as the plain iterations stopped at
the tolerance — in a fraction of the iterations."""

import copy

import numpy as np
import pytest

from procanim_addon.handshake import HandshakeParams
from procanim_addon.handshake.character import prepare_character
from procanim_addon.ik.extrapolate import _least_squares
from procanim_addon.ik.solve import solve_frame
from procanim_addon.rigs import human_skeleton

METHODS = ["CCD", "JACOBIAN_TRANSPOSE", "FABRIK"]


def grip_path(ch, frames=20):
    """A handshake-like reach from the rest pose: the grip point 25 cm forward, 8 cm in and 12 cm up
    along a smoothstep over ``frames`` frames (1–2 cm per frame), the hand's rest rotation held."""
    chain, base = ch.chain, ch.chain.base_from_pose(ch.rest_pose)
    mats = chain.fk(base, chain.zero_angles())
    start, rot = chain.effector(mats), mats[-1, :3, :3]
    move = 0.25 * ch.frame.forward + 0.08 * ch.frame.left + np.array([0.0, 0.0, 0.12])
    return [(start + (3 * s * s - 2 * s**3) * move, rot) for s in np.linspace(0.0, 1.0, frames)]


def joints(chain, base, angles):
    mats = chain.fk(base, angles)
    return np.vstack((mats[:, :3, 3], chain.effector(mats)))


@pytest.mark.parametrize("method", METHODS)
def test_jumps_land_where_the_iterations_converge_in_fewer_iterations(method):
    sk, rm = human_skeleton(1.75)
    ch = prepare_character("initiator", sk, rm, np.eye(4), method, HandshakeParams().validate())
    chain, base = ch.chain, ch.chain.base_from_pose(ch.rest_pose)
    fast = ch.settings
    plain = copy.copy(fast)
    plain.extrapolate = False
    limit = copy.copy(plain)
    limit.tolerance_m, limit.max_iterations = 1e-12, 20000
    angles = chain.zero_angles()
    iters = {"fast": 0, "plain": 0}
    off = {"fast": [], "plain": []}
    for target, rot in grip_path(ch):
        lim = solve_frame(method, chain, base, target, rot, angles, limit)
        for name, s in (("fast", fast), ("plain", plain)):
            sol = solve_frame(method, chain, base, target, rot, angles, s)
            assert np.linalg.norm(sol.effector - target) < s.tolerance_m
            iters[name] += sol.iterations
            off[name].append(np.abs(joints(chain, base, sol.angles) - joints(chain, base, lim.angles)).max())
        angles = lim.angles  # every frame from the same start for both
    assert iters["fast"] < 0.5 * iters["plain"]  # measured: CCD 1840 -> 561, JT 2666 -> 560, FABRIK 684 -> 222
    # as close to the method's own converged pose as the plain iterations stopped at the tolerance
    assert np.mean(off["fast"]) <= np.mean(off["plain"])
    assert max(off["fast"]) <= max(off["plain"])


def test_least_squares_of_the_steps_solves_two_and_three_columns():
    rng = np.random.default_rng(0)
    for k in (2, 3):
        a = [tuple(rng.normal(size=3)) for _ in range(k)]
        c = rng.normal(size=k)
        e = tuple(np.sum([ci * np.array(ai) for ci, ai in zip(c, a)], axis=0))
        np.testing.assert_allclose(_least_squares(a, e), c, rtol=1e-9)
    assert _least_squares([(1.0, 0.0, 0.0), (2.0, 0.0, 0.0)], (1.0, 0.0, 0.0)) is not None  # ridge: no crash
    assert _least_squares([(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)], (1.0, 0.0, 0.0)) is None
