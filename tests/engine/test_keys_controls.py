"""Editable bakes onto a control rig (issue 23), engine side: the keys go on the controls, the error
is measured on the deform skeleton they drive (procanim_addon/keys/control_forward.py).

The rig is test_controls.py's hand-made copy of how Rigify builds a body and a leg (torso over an FK
spine, ORG bones copying FK/IK bones behind an IK/FK switch, a tail pointing at the body); the motion
a smooth walk-like sway of every deform bone while the body travels and turns. The check is the
rig's own evaluation (:class:`RigPose`, tested against Blender in tests/blender/test_control_rigs.py)
of the written curves as Blender plays them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.clip import Clip
from procanim_addon.controls import convert
from procanim_addon.controls.deform import deform_skeleton, rig_pose
from procanim_addon.controls.evaluate import RigPose
from procanim_addon.keys import ControlForward, control_channels, plan_control_keys

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_controls import mini_rig  # noqa: E402

FRAMES = 120
TOLERANCE_M = 0.001


def swaying(rig, frames=FRAMES, seed=2):
    """A smooth deform motion: each bone sways about its own axis, the body walks and turns."""
    sk = deform_skeleton(rig)
    rng = np.random.default_rng(seed)
    t = np.arange(frames)
    loc, rot = np.zeros((frames, len(sk), 3)), tf.quat_identity((frames, len(sk)))
    for k, name in enumerate(sk.names):
        if name not in ("root", "ORG-spine"):  # ORG-spine is carried rigidly with the hips on this rig
            angle = 0.3 * np.sin(2 * np.pi * t / 48 + rng.uniform(0, 6))
            rot[:, k] = tf.quat_from_axis_angle(np.broadcast_to(rng.normal(size=3), (frames, 3)), angle)
    r = sk.index("root")
    loc[:, r, 1] = -0.04 * t
    rot[:, r] = tf.quat_from_axis_angle(np.broadcast_to([0, 0, 1.0], (frames, 3)), 0.3 * np.sin(t / 30))
    return sk, sk.fk(loc, rot)


@pytest.fixture(scope="module")
def fk_bake():
    rig = mini_rig("FK")
    sk, intended = swaying(rig)
    keys = convert(rig, sk, intended, "FK")
    clip = Clip.rest(sk.names, np.arange(1.0, FRAMES + 1), 24.0)  # the frames and rate the keys are on
    return rig, sk, intended, keys, plan_control_keys(rig, sk, keys, clip, TOLERANCE_M)


def deform_points(rig, sk, channels, values):
    """Heads and tails ``(N, 2B, 3)`` of the deform bones when the controls take ``values``."""
    state = RigPose(rig, len(values))
    model = ControlForward(rig, sk, channels)
    for control in model.columns:
        state.set_basis(control, model._basis(control, values))
    out = []
    for name in sk.names:
        b = rig.index(name)
        pose = state.pose(b)
        out += [pose[:, :3, 3], pose[:, :3, 3] + pose[:, :3, 1] * rig.lengths[b]]
    return np.stack(out, axis=1)


def test_the_model_gives_the_pose_the_conversion_meant(fk_bake):
    rig, sk, intended, keys, _ = fk_bake
    channels, values = control_channels(rig, keys)
    assert {c.bone for c in channels} <= {rig.names[c] for c in keys.basis}
    points = ControlForward(rig, sk, channels)(values)
    goal = rig_pose(rig, sk, intended)
    assert np.abs(points[:, 0::2] - goal[..., :3, 3]).max() < 1e-5  # float32 keys


def test_a_controls_error_map_bounds_how_far_its_change_moves_the_deform_bones(fk_bake):
    """The bound the key placement keeps per group: a small change of one FK control's channels moves
    no deform point further than its error map says (the rig carries the points rigidly)."""
    rig, sk, _, keys, _ = fk_bake
    channels, values = control_channels(rig, keys)
    model = ControlForward(rig, sk, channels)
    direct = model.top_down(values)
    targets, maps = direct.targets(0, values)
    rng = np.random.default_rng(4)
    base = model(values)
    for g in range(len(model.groups)):
        cols = model.groups[g]
        change = rng.normal(0, 1e-4, (len(values), len(cols)))
        moved = values.copy()
        moved[:, cols] += change
        actual = np.linalg.norm(model(moved) - base, axis=-1).max(axis=1)
        bound = np.linalg.norm(np.einsum("sij,sj->si", maps[g], change), axis=-1)
        assert np.all(actual <= bound * 1.01 + 1e-9), model.channels[cols[0]]


def test_reduced_controls_keep_the_deform_skeleton_within_the_tolerance(fk_bake):
    rig, sk, _, keys, keyed = fk_bake
    channels, dense = control_channels(rig, keys)
    frames = np.arange(1.0, FRAMES + 1)
    played = np.stack([c.evaluate(frames) for c in keyed.curves], axis=1).astype(float)
    error = np.linalg.norm(deform_points(rig, sk, channels, played) - deform_points(rig, sk, channels, dense), axis=-1)
    print(f"controls: {keyed.keys_written}/{keyed.keys_dense} keys, largest deform error {error.max() * 1000:.3f} mm")
    assert error.max() <= TOLERANCE_M + 1e-6
    assert keyed.keys_written < 0.5 * keyed.keys_dense
    assert all(c.data_path.startswith('pose.bones["') for c in keyed.curves)
    assert {c.data_path.split('"')[1] for c in keyed.curves} <= {rig.names[c] for c in keys.basis}


def test_an_ik_chain_the_model_cannot_solve_is_refused_with_its_name():
    rig = mini_rig("IK")
    sk, intended = swaying(rig, frames=8)
    keys = convert(rig, sk, intended, "IK")
    channels, _ = control_channels(rig, keys)
    with pytest.raises(ValueError, match="IK chain"):
        ControlForward(rig, sk, channels)
