"""F-curve keys as plain data (no bpy): what :class:`CurveKeys` accepts and refuses, and the channel
values of each rotation mode. That Blender reads the keys back as written is tested in
``tests/blender/test_edited_bakes.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.curve_keys import CurveKeys, rotation_channels


def _handles(frames, values, dx=1.0):
    frames, values = np.asarray(frames, float), np.asarray(values, float)
    return np.stack([frames - dx, values], -1), np.stack([frames + dx, values], -1)


def test_keys_with_handles_types_interpolation_and_key_types():
    left, right = _handles([0, 10, 20], [0.0, 1.0, 0.0])
    keys = CurveKeys(
        np.array([0.0, 10.0, 20.0]),
        np.array([0.0, 1.0, 0.0]),
        handle_left=left,
        handle_right=right,
        handle_left_type="FREE",
        handle_right_type=("ALIGNED", "FREE", "ALIGNED"),
        interpolation=["BEZIER", "LINEAR", "CONSTANT"],
        key_type=("EXTREME", "BREAKDOWN", "KEYFRAME"),
    )
    assert len(keys) == 3
    assert keys.names("handle_left_type") == ("FREE",) * 3
    assert keys.names("handle_right_type") == ("ALIGNED", "FREE", "ALIGNED")
    assert keys.names("interpolation") == ("BEZIER", "LINEAR", "CONSTANT")
    assert keys.names("key_type") == ("EXTREME", "BREAKDOWN", "KEYFRAME")
    dense = CurveKeys(np.arange(4.0), np.zeros(4))
    assert dense.names("key_type") is None and dense.handle_left is None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"frames": [0.0, 2.0, 1.0]}, "increasing"),
        ({"values": [0.0, math.nan, 1.0]}, "finite"),
        ({"frames": [0.0, 1.0, math.inf]}, "finite"),
        ({"values": [0.0, 1.0]}, r"\(n,\)"),
        ({"key_type": "EXTREMELY"}, "unknown"),
        ({"interpolation": ["BEZIER", "LINEAR"]}, "2 names for 3 keys"),
        ({"handle_left": np.zeros((3, 2))}, "both handles"),
        ({"handle_left": np.zeros((3, 2)), "handle_right": np.zeros((3, 2))}, "handle types"),
        (
            {"handle_left": np.zeros((3, 2)), "handle_right": np.zeros((3, 2)), "handle_left_type": "FREE",
             "handle_right_type": "AUTO_CLAMPED"},
            "handle types",
        ),
        (
            {"handle_left": np.zeros((2, 2)), "handle_right": np.zeros((3, 2)), "handle_left_type": "FREE",
             "handle_right_type": "FREE"},
            r"\(n, 2\)",
        ),
    ],
)
def test_bad_keys_are_refused(kwargs, message):
    args = {"frames": [0.0, 1.0, 2.0], "values": [0.0, 1.0, 0.0], **kwargs}
    with pytest.raises(ValueError, match=message):
        CurveKeys(np.asarray(args.pop("frames")), np.asarray(args.pop("values")), **args)


def test_two_keys_on_one_frame_are_kept_in_order():
    assert len(CurveKeys(np.array([5.0, 5.0]), np.array([0.0, 1.0]))) == 2


def _turning(n=40):
    """Rotations about a tilted axis, two full turns: Euler angles must wind past ±π."""
    axis = np.broadcast_to(tf.quat_normalize(np.array([0.0, 0.3, 0.2, 1.0]))[1:], (n, 3))
    return tf.quat_from_axis_angle(axis / np.linalg.norm(axis, axis=-1, keepdims=True), np.linspace(0, 4 * np.pi, n))


def test_quaternion_channels_keep_the_rotation_and_never_flip_sign():
    q = _turning()
    flipped = q * np.where(np.arange(len(q)) % 3 == 0, -1.0, 1.0)[:, None]
    path, values = rotation_channels("QUATERNION", flipped)
    assert path == "rotation_quaternion" and values.shape == (len(q), 4)
    assert np.all(np.sum(values[1:] * values[:-1], axis=-1) > 0.0)
    np.testing.assert_allclose(np.abs(np.sum(values * q, axis=-1)), 1.0, atol=1e-12)


@pytest.mark.parametrize("order", tf.EULER_ORDERS)
def test_euler_channels_give_the_rotation_and_wind_without_jumps(order):
    q = _turning()
    path, values = rotation_channels(order, q)
    assert path == "rotation_euler" and values.shape == (len(q), 3)
    np.testing.assert_allclose(tf.euler_to_mat3(values, order), tf.quat_to_mat3(q), atol=1e-9)
    # each frame's triple is the one nearest the frame before: no angle a whole turn away, and the
    # equivalent triple (a + π, π − b, c + π), moved by whole turns toward it, no nearer
    prev, cur = values[:-1], values[1:]
    assert np.abs(cur - prev).max() <= np.pi + 1e-9
    other = cur + np.array([np.pi, 0.0, np.pi])
    other[:, 1] = np.pi - cur[:, 1]
    other += 2 * np.pi * np.round((prev - other) / (2 * np.pi))
    assert np.all(np.abs(cur - prev).sum(-1) <= np.abs(other - prev).sum(-1) + 1e-9)
    assert np.ptp(values) > 2 * np.pi  # the angles wound on past a turn


def test_axis_angle_channels_are_angle_then_axis():
    q = _turning()
    path, values = rotation_channels("AXIS_ANGLE", q)
    assert path == "rotation_axis_angle" and values.shape == (len(q), 4)
    back = tf.quat_from_axis_angle(values[:, 1:], values[:, 0])
    np.testing.assert_allclose(np.abs(np.sum(back * q, axis=-1)), 1.0, atol=1e-9)
