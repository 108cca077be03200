"""Quaternions to Blender's axis-angle channels (what the bake writes for an AXIS_ANGLE bone)."""

import numpy as np
import pytest

from procanim_addon import transforms as tf


def test_a_known_rotation_gives_its_angle_and_axis():
    q = tf.quat_from_axis_angle([0.0, 0.0, 2.0], np.radians(90.0))
    np.testing.assert_allclose(tf.quat_to_axis_angle(q), [np.pi / 2, 0.0, 0.0, 1.0], atol=1e-12)


def test_the_negated_quaternion_gives_the_same_channels_with_an_angle_up_to_pi():
    rng = np.random.default_rng(3)
    q = tf.quat_normalize(rng.normal(size=(200, 4)))
    a, b = tf.quat_to_axis_angle(q), tf.quat_to_axis_angle(-q)
    np.testing.assert_allclose(a, b, atol=1e-12)
    assert np.all((a[:, 0] >= 0) & (a[:, 0] <= np.pi))
    np.testing.assert_allclose(np.linalg.norm(a[:, 1:], axis=-1), 1.0, atol=1e-9)


def test_channels_round_trip_to_the_same_rotation():
    rng = np.random.default_rng(4)
    q = tf.quat_normalize(rng.normal(size=(7, 5, 4)))  # broadcasts over leading axes
    aa = tf.quat_to_axis_angle(q)
    back = tf.quat_from_axis_angle(aa[..., 1:], aa[..., 0])
    np.testing.assert_allclose(tf.quat_angle(back, q), 0.0, atol=1e-6)


@pytest.mark.parametrize("q", [[1.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]])
def test_no_rotation_has_blenders_default_axis(q):
    np.testing.assert_allclose(tf.quat_to_axis_angle(np.array(q)), [0.0, 0.0, 1.0, 0.0])


def test_half_a_turn_keeps_its_axis():
    q = tf.quat_from_axis_angle([1.0, 0.0, 0.0], np.pi)
    np.testing.assert_allclose(tf.quat_to_axis_angle(q), [np.pi, 1.0, 0.0, 0.0], atol=1e-12)
