"""The damped update (Eq. 3), bone lengths (Eq. 4), the multi-resolution solve and the way back
from joint positions to bone channels."""

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.curves import catmull_rom
from procanim_addon.rigs import human_skeleton
from procanim_addon.terrain.joints import channels_from_positions, joint_set
from procanim_addon.terrain.solve import SolveStats, UpdateRule, damped_solve, multires_solve


def chain_restore(lengths):
    """Eq. 4 for a chain of points 0-1-2-…: each point pulled to its rest distance from the previous."""

    def restore(p):
        p = p.copy()
        for j, length in enumerate(lengths, start=1):
            v = p[..., j, :] - p[..., j - 1, :]
            p[..., j, :] = p[..., j - 1, :] + length * v / np.linalg.norm(v, axis=-1, keepdims=True)
        return p

    return restore


def test_damped_update_reaches_a_reachable_target_and_keeps_lengths():
    src = np.array([[[0.0, 0, 0], [0, 0, 1], [0, 0, 2]]])
    target = src + [0.3, 0.0, 0.5]  # the same chain moved: reachable with lengths kept
    stats = SolveStats()
    out = damped_solve(src, target, chain_restore([1.0, 1.0]), UpdateRule(tolerance_m=1e-9), stats=stats)
    assert out == pytest.approx(target, abs=1e-8)
    assert 1 < stats.iterations < 100


def test_damped_update_with_k_9_moves_one_eighteenth_of_the_way_first():
    src = np.zeros((1, 1, 3))
    target = np.ones((1, 1, 3))
    first = damped_solve(src, target, lambda p: p, UpdateRule(k0=9.0, max_iterations=1))
    assert first == pytest.approx(np.full((1, 1, 3), 0.5 / 9.0))  # ½·(p_est − p)/k


def test_an_unreachable_target_ends_with_the_bone_lengths_of_the_chain():
    src = np.array([[[0.0, 0, 0], [0, 0, 1], [0, 0, 2]]])
    target = np.array([[[0.0, 0, 0], [0, 0, 1.5], [0, 0, 3.0]]])  # stretched by half
    out = damped_solve(src, target, chain_restore([1.0, 1.0]))
    assert np.linalg.norm(np.diff(out[0], axis=0), axis=1) == pytest.approx([1.0, 1.0], abs=1e-12)


def test_catmull_rom_passes_through_its_keys_and_is_exact_on_a_line():
    t = np.array([0.0, 3.0, 5.0, 9.0])
    v = 2.0 * t[:, None] + 1.0
    x = np.linspace(0, 9, 37)
    assert catmull_rom(t, v, t) == pytest.approx(v)
    assert catmull_rom(t, v, x)[:, 0] == pytest.approx(2.0 * x + 1.0)


def test_multires_solves_few_frames_on_smooth_motion_and_refines_at_a_jump():
    frames = 65

    def smooth(idx):
        return np.sin(idx / 20.0)[:, None, None] * np.ones((1, 2, 3))

    stats = SolveStats()
    out = multires_solve(frames, smooth, key_interval=8, tolerance_m=1e-3, stats=stats)
    assert stats.frames_solved < frames / 2
    assert np.abs(out - smooth(np.arange(frames))).max() < 2e-3

    def step(idx):  # a displacement that jumps by 0.5 m between frames 40 and 41
        return np.where(idx > 40, 0.5, 0.0)[:, None, None] * np.ones((1, 2, 3))

    stats = SolveStats()
    out = multires_solve(frames, step, key_interval=8, tolerance_m=1e-3, stats=stats)
    assert out[40] == pytest.approx(step(np.array([40]))[0]) and out[41] == pytest.approx(step(np.array([41]))[0])
    assert stats.levels > 2  # refined around the jump


def test_positions_back_to_channels_keep_the_source_twist():
    sk, rm = human_skeleton()
    js = joint_set(sk, rm)
    f, b = 1, len(sk)
    loc = np.zeros((f, b, 3))
    rot = tf.quat_identity((f, b))
    shin = sk.index("shin.L")
    rot[:, shin] = tf.quat_from_axis_angle([0.0, 1.0, 0.0], [0.4])  # twist about the shin's own axis
    pose = sk.fk(loc, rot)
    p = js.positions(sk, pose)
    # ask for the same joints: nothing changes, twist included
    _, new_rot, new_pose = channels_from_positions(sk, js, loc, rot, p)
    assert np.abs(new_pose - pose).max() < 1e-12
    # swing the shin forward: its twist about its own axis is kept (the swing is the shortest arc)
    k = js.bones.index(shin)
    knee, ankle = p[0, js.head_joint[k]], p[0, js.tail_joint[k]]
    turn = tf.quat_from_axis_angle([1.0, 0.0, 0.0], 0.5)
    moved = p.copy()
    moved[0, js.tail_joint[k]] = knee + tf.quat_rotate(turn, ankle - knee)
    _, new_rot, new_pose = channels_from_positions(sk, js, loc, rot, moved)
    want = tf.quat_to_mat3(tf.rotation_between(pose[0, shin, :3, 1], new_pose[0, shin, :3, 1])) @ pose[0, shin, :3, :3]
    assert new_pose[0, shin, :3, :3] == pytest.approx(want, abs=1e-12)
    assert sk.tails_of(new_pose)[0, shin] == pytest.approx(moved[0, js.tail_joint[k]], abs=1e-12)
