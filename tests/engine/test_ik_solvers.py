"""IK solvers on a human right arm (clavicle → upper arm → forearm → hand): reach, fail gracefully,
keep human joint limits, warm-start, swivel the elbow toward the pole."""

import numpy as np
import pytest

from procanim_addon.frames import character_frame
from procanim_addon.ik.chain import Chain, JointLimit
from procanim_addon.ik.limits import arm_limits
from procanim_addon.ik.solve import SOLVERS, IKSettings, fuzzy_joints_for, solve_frame, solve_path
from procanim_addon.rigs import human_skeleton
from procanim_addon.skeleton import Skeleton

ITERATIVE = ["JACOBIAN_TRANSPOSE", "CCD", "FABRIK", "DLS"]


def arm(side="R", height=1.75):
    sk, rm = human_skeleton(height)
    cf = character_frame(sk, rm)
    bones = [rm.index(sk, f"{r}.{side}") for r in ("clavicle", "upper_arm", "forearm", "hand")]
    chain = Chain(sk, bones, arm_limits(sk, bones, cf.forward, cf.left, side))
    base = sk.fk()[0][chain.base_parent]
    return sk, cf, chain, base


def reachable_targets(chain, base, n, seed=3):
    """Targets made by posing the arm at random angles inside its limits (so a solution exists)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        lo, hi = chain.lower, chain.upper
        th = lo + (hi - lo) * rng.uniform(0.2, 0.8, lo.shape)
        out.append(chain.effector(chain.fk(base, th)))
    return out


@pytest.mark.parametrize("method", ITERATIVE)
def test_each_iterative_solver_reaches_reachable_targets(method):
    _, _, chain, base = arm()
    for target in reachable_targets(chain, base, 4):
        sol = solve_frame(method, chain, base, target, None, None, IKSettings(tolerance_m=1e-5))
        assert np.linalg.norm(sol.effector - target) < 1e-4, method
        # the reported effector is the chain's real FK, not the solver's belief
        assert np.allclose(sol.effector, chain.effector(chain.fk(base, sol.angles)))


def test_fuzzy_controllers_converge_on_a_static_target_without_a_path():
    _, _, chain, base = arm()
    target = reachable_targets(chain, base, 1, seed=5)[0]
    settings = IKSettings(fuzzy=fuzzy_joints_for(chain, True))
    start = np.linalg.norm(chain.effector(chain.fk(base, chain.zero_angles())) - target)
    res = solve_path("FUZZY", chain, base, np.repeat(target[None], 24, 0), settings=settings)
    err = np.linalg.norm(res.effectors - target, axis=1)
    assert start > 0.1
    assert err[-1] < 0.002  # within 2 mm after 1 s
    assert err[0] > 0.5 * start  # … but not at once: speed × frame time, not a jump


@pytest.mark.parametrize("method", SOLVERS)
def test_unreachable_target_stretches_toward_it_without_nan(method):
    _, _, chain, base = arm()
    root = base @ chain.rest_rel[0]
    shoulder = root[:3, 3]
    target = shoulder + np.array([-1.5, -1.5, 0.3])
    settings = IKSettings(max_iterations=300)
    res = solve_path(method, chain, base, np.repeat(target[None], 24 if method == "FUZZY" else 1, 0),
                     settings=settings)
    eff = res.effectors[-1]
    assert np.all(np.isfinite(res.angles)) and np.all(np.isfinite(res.rotations))
    to_t, to_e = target - shoulder, eff - shoulder
    cos = to_t @ to_e / np.linalg.norm(to_t) / np.linalg.norm(to_e)
    assert cos > np.cos(np.radians(25))  # pointing at the target
    rest_eff = chain.effector(chain.fk(base, chain.zero_angles()))
    assert np.linalg.norm(eff - target) < np.linalg.norm(rest_eff - target) - 0.2  # moved well toward it
    assert np.all(res.angles >= chain.lower - 1e-9) and np.all(res.angles <= chain.upper + 1e-9)


@pytest.mark.parametrize("method", SOLVERS)
def test_joint_limits_hold_for_every_solver(method):
    _, _, chain, base = arm()
    rng = np.random.default_rng(11)
    shoulder = (base @ chain.rest_rel[1])[:3, 3]
    targets = shoulder + rng.normal(0, 0.4, (6, 3))  # anywhere, reachable or not
    res = solve_path(method, chain, base, targets, settings=IKSettings(max_iterations=200))
    assert np.all(res.angles >= chain.lower - 1e-9) and np.all(res.angles <= chain.upper + 1e-9)
    elbow = res.angles[:, 2]
    assert np.all(elbow[:, 0] >= 0.0)  # no hyperextension
    assert np.allclose(elbow[:, 1], 0.0)  # a hinge: no sideways bend


@pytest.mark.parametrize("side", ["L", "R"])
def test_positive_elbow_flexion_brings_the_hand_forward_and_up(side):
    _, cf, chain, base = arm(side)
    th = chain.zero_angles()
    hand0 = chain.effector(chain.fk(base, th))
    th[2, 0] = np.radians(60)
    hand1 = chain.effector(chain.fk(base, th))
    move = hand1 - hand0
    assert move @ cf.forward > 0.05
    assert move[2] > 0.05


def test_warm_start_needs_no_iterations_for_the_same_target():
    _, _, chain, base = arm()
    target = reachable_targets(chain, base, 1)[0]
    first = solve_frame("DLS", chain, base, target)
    again = solve_frame("DLS", chain, base, target, None, first.angles)
    assert first.iterations > 0 and again.iterations == 0


def test_pole_puts_the_elbow_on_the_pole_side():
    _, cf, chain, base = arm()
    target = reachable_targets(chain, base, 1, seed=8)[0]
    for pole in (np.array([0, 0, -1.0]), np.array([0, 0, 1.0])):
        sol = solve_frame("DLS", chain, base, target, None, None, IKSettings(pole=pole, pole_joint=1))
        mats = chain.fk(base, sol.angles)
        shoulder, elbow, eff = mats[1, :3, 3], mats[2, :3, 3], sol.effector
        axis = (eff - shoulder) / np.linalg.norm(eff - shoulder)
        off = (elbow - shoulder) - axis * (axis @ (elbow - shoulder))
        assert off @ pole > 0
        assert np.linalg.norm(eff - target) < 1e-4


@pytest.mark.parametrize("method", SOLVERS)
def test_orientation_goal_turns_the_hand_and_keeps_the_grip_point(method):
    _, _, chain, base = arm()
    rng = np.random.default_rng(2)
    lo, hi = chain.lower, chain.upper
    th = lo + (hi - lo) * rng.uniform(0.3, 0.7, lo.shape)
    mats = chain.fk(base, th)
    target, rot = chain.effector(mats), mats[-1, :3, :3]
    frames = 24 if method == "FUZZY" else 1
    res = solve_path(method, chain, base, np.repeat(target[None], frames, 0), np.repeat(rot[None], frames, 0))
    got = chain.fk(base, res.angles[-1])[-1, :3, :3]
    angle = np.degrees(np.arccos(np.clip((np.trace(got.T @ rot) - 1) / 2, -1, 1)))
    assert angle < 0.5
    assert np.linalg.norm(res.effectors[-1] - target) < (0.005 if method == "FUZZY" else 1e-4)


def test_a_chain_of_any_length_works():
    """A hand-made five-bone tentacle along +Z, free joints."""
    bones = []
    for i in range(5):
        m = np.eye(4)
        m[:3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]  # bone +Y along world +Z
        m[2, 3] = 0.2 * i
        bones.append({"name": f"b{i}", "parent": f"b{i - 1}" if i else None, "matrix_local": m, "length": 0.2})
    sk = Skeleton.from_bones(bones)
    chain = Chain(sk, list(range(5)), [JointLimit.free() for _ in range(5)])
    target = np.array([0.3, 0.2, 0.6])
    for method in ITERATIVE:
        sol = solve_frame(method, chain, np.eye(4), target)
        assert np.linalg.norm(sol.effector - target) < 1e-4, method
    res = solve_path("FUZZY", chain, np.eye(4), np.repeat(target[None], 24, 0))
    assert np.linalg.norm(res.effectors[-1] - target) < 0.005


def test_unknown_solver_name_is_a_clear_input_error():
    from procanim_addon.errors import InputError

    _, _, chain, base = arm()
    with pytest.raises(InputError, match="Unknown IK solver 'NEWTON'"):
        solve_frame("NEWTON", chain, base, np.zeros(3))


def test_fuzzy_arm_lags_behind_a_moving_target():
    _, _, chain, base = arm()
    start = chain.effector(chain.fk(base, chain.zero_angles())) + np.array([0.0, -0.25, 0.25])
    first = solve_frame("DLS", chain, base, start)
    t = np.arange(12) / 24
    # a 12 cm circle twice a second (1.5 m/s): faster than the controllers' slow speeds
    path = start + 0.12 * np.stack([np.cos(4 * np.pi * t) - 1, np.zeros_like(t), np.sin(4 * np.pi * t)], 1)
    res = solve_path("FUZZY", chain, base, path, angles0=first.angles,
                     settings=IKSettings(fuzzy=fuzzy_joints_for(chain, True)))
    heading = np.gradient(path, axis=0)
    heading /= np.linalg.norm(heading, axis=1, keepdims=True)
    behind = np.einsum("ij,ij->i", path - res.effectors, heading)
    assert np.all(behind[2:7] > 0.002)  # the hand trails the target …
    err = np.linalg.norm(res.effectors - path, axis=1)
    assert np.all(err < 0.25) and np.all(np.isfinite(err))  # … but follows it
