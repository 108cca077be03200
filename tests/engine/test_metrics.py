"""The shared quality measures see what they are meant to see."""

import numpy as np

from procanim_addon import metrics, rigs
from procanim_addon import transforms as tf


def test_bone_length_error_is_zero_for_rotations_and_sees_a_stretch():
    sk, _ = rigs.human_skeleton()
    rng = np.random.default_rng(3)
    rot = tf.quat_normalize(rng.normal(size=(5, len(sk), 4)))
    pose = sk.fk(None, rot)
    assert metrics.bone_length_error(sk, pose) < 1e-9
    loc = np.zeros((5, len(sk), 3))
    shin = sk.index("shin.L")
    thigh = sk.parents[shin]
    loc[2, shin] = [0.0, 0.1 * sk.lengths[thigh], 0.0]  # move the knee along the shin, in its rest frame
    moved = sk.matrix_local[shin, :3, :3] @ loc[2, shin]
    rest_vec = sk.heads[shin] - sk.heads[thigh]
    expected = (np.linalg.norm(rest_vec + moved) / np.linalg.norm(rest_vec) - 1.0) * 100
    pose = sk.fk(loc, None)
    assert expected > 9.0
    assert abs(metrics.bone_length_error(sk, pose) - expected) < 1e-6


def test_foot_skate_counts_only_contact_steps():
    fps = 24.0
    x = np.arange(48) * 0.01  # 0.24 m/s
    points = np.column_stack((x, np.zeros(48), np.zeros(48)))
    contact = np.zeros(48, bool)
    contact[10:20] = True
    m = metrics.foot_skate(points, contact, fps)
    assert abs(m["skate_mean_cm_s"] - 24.0) < 1e-9 and m["contact_steps"] == 9
    assert metrics.foot_skate(points, np.zeros(48, bool), fps)["skate_mean_cm_s"] == 0.0


def test_penetration_and_target_error_in_cm():
    p = metrics.penetration(np.array([-0.02, 0.0, 0.005, 0.02]))
    assert abs(p["penetration_max_cm"] - 2.0) < 1e-9 and p["penetration_frac_1cm"] == 0.25
    e = metrics.target_error(np.zeros((2, 3)), np.array([[0, 0, 0.01], [0, 0, 0.03]]))
    assert abs(e["mean_cm"] - 2.0) < 1e-9 and abs(e["max_cm"] - 3.0) < 1e-9
