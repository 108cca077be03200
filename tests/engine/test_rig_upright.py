"""The upright frame (``procanim_addon/upright.py``): an armature whose own axes are not Z-up at
scale 1 (a glTF import: Y-up, under a rotated object scaled by 0.01) is read Z-up in world units,
and what the engine makes there poses the armature exactly as it meant, once handed back."""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon import rigs
from procanim_addon import transforms as tf
from procanim_addon.clip import Clip
from procanim_addon.loop import cycle_of, repeated
from procanim_addon.rig_roles import detect
from procanim_addon.skeleton import Skeleton
from procanim_addon.upright import (
    clip_to_armature,
    clip_to_frame,
    upright_matrix,
    upright_skeleton,
    world_of_frame,
)
from procanim_addon.walk import PathWalkParams, generate_path_walk
from procanim_addon.walk import spec as walk_spec


def rot_x(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    m = np.eye(4)
    m[1:3, 1:3] = [[c, -s], [s, c]]
    return m


def rot_z(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    m = np.eye(4)
    m[:2, :2] = [[c, -s], [s, c]]
    return m


def scale(s: float) -> np.ndarray:
    return np.diag([s, s, s, 1.0])


def translate(x, y, z) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = x, y, z
    return m


# the armature's data stands up +Y in centimetres; its object stands it up in the world (metres)
Y_UP_CM = rot_x(-90.0) @ scale(100.0)
WORLD = translate(1.0, 2.0, 0.0) @ rot_z(30.0) @ rot_x(90.0) @ scale(0.01)


def armature_skeleton(to_data: np.ndarray) -> Skeleton:
    """ProcAnim's human with its rest matrices taken into an armature space by ``to_data``."""
    sk = rigs.human_skeleton()[0]
    s = float(np.linalg.norm(to_data[:3, 0]))
    ml = np.einsum("ij,bjk->bik", to_data, sk.matrix_local)
    ml[:, :3, :3] /= s
    return Skeleton(sk.names, sk.parents, ml, sk.lengths * s)


def random_clip(names, frames=5, seed=0, objects=False) -> Clip:
    rng = np.random.default_rng(seed)
    q = tf.quat_normalize(rng.normal(size=(frames, len(names), 4)))
    clip = Clip(list(names), np.arange(frames), 24.0, rng.normal(size=(frames, len(names), 3)) * 0.1, q)
    if objects:
        clip.object_locations = rng.normal(size=(frames, 3))
        clip.object_rotations = tf.quat_normalize(rng.normal(size=(frames, 4)))
    return clip


@pytest.mark.parametrize("world", [np.eye(4), translate(3, -1, 0.5) @ rot_z(123.0), rot_z(90.0) @ scale(1.0 + 1e-8)],
                         ids=["identity", "turned-about-z", "unit-scale-rounding"])
def test_an_armature_upright_at_scale_one_has_no_frame_and_nothing_is_converted(world):
    assert upright_matrix(world) is None
    sk = armature_skeleton(np.eye(4))
    assert upright_skeleton(sk, None) is sk
    clip = random_clip(sk.names, objects=True)
    assert clip_to_armature(clip, sk) is clip and clip_to_frame(clip, sk) is clip


@pytest.mark.parametrize("world", [np.diag([1.0, 1.0, 2.0, 1.0]), np.diag([-1.0, 1.0, 1.0, 1.0]), np.zeros((4, 4))],
                         ids=["uneven", "mirrored", "flat"])
def test_a_world_matrix_that_is_no_similarity_gets_no_frame(world):
    assert upright_matrix(world) is None  # the generators' own checks refuse it, naming the object


def test_the_frame_puts_the_scenes_up_on_z_in_world_units_and_turns_nothing_else():
    m = upright_matrix(WORLD)
    assert m is not None
    world_up = np.linalg.inv(WORLD[:3, :3]) @ [0.0, 0.0, 1.0]  # the scene's up, in armature space
    np.testing.assert_allclose(m[:3, :3] @ world_up / np.linalg.norm(m[:3, :3] @ world_up), [0, 0, 1], atol=1e-12)
    assert np.linalg.norm(m[:3, 0]) == pytest.approx(0.01)
    engine_to_world = world_of_frame(WORLD, Skeleton(["b"], [-1], np.eye(4)[None], [1.0], from_armature=m))
    np.testing.assert_allclose(engine_to_world[:3, :3].T @ engine_to_world[:3, :3], np.eye(3), atol=1e-12)  # rigid
    np.testing.assert_allclose(engine_to_world[:3, :3] @ [0, 0, 1.0], [0, 0, 1.0], atol=1e-12)  # up stays up


def test_the_rig_read_upright_is_the_human_as_it_stands_in_the_world():
    sk = upright_skeleton(armature_skeleton(Y_UP_CM), upright_matrix(WORLD))
    human = rigs.human_skeleton()[0]  # the object's turn about the vertical stays in its world matrix
    np.testing.assert_allclose(sk.heads, human.heads, atol=1e-9)
    np.testing.assert_allclose(sk.lengths, human.lengths, atol=1e-12)
    rm = detect(sk.names, dict(zip(sk.names, [sk.names[p] if p >= 0 else None for p in sk.parents])), skeleton=sk)
    assert rm.confidence == 1.0 and rm.bone("foot.L") == "foot.L"


def test_channels_made_upright_pose_the_armature_as_the_engine_meant():
    arm = armature_skeleton(Y_UP_CM)
    m = upright_matrix(WORLD)
    sk = upright_skeleton(arm, m)
    clip = random_clip(sk.names, objects=True)
    back = clip_to_armature(clip, sk)
    engine = sk.fk(clip.locations, clip.rotations)
    blender = arm.fk(back.locations, back.rotations)  # what Blender poses with the armature's channels
    s_inv = np.diag([100.0, 100.0, 100.0, 1.0])  # pose_e = M · pose_a · S⁻¹ (S = s·I, s = 0.01)
    np.testing.assert_allclose(m @ blender @ s_inv, engine, atol=1e-9)
    # the object's motion: D_e in the frame is M · D_a · M⁻¹
    d_e = tf.compose(clip.object_locations, clip.object_rotations)
    d_a = tf.compose(back.object_locations, back.object_rotations)
    np.testing.assert_allclose(m @ d_a @ np.linalg.inv(m), d_e, atol=1e-9)
    again = clip_to_frame(back, sk)
    np.testing.assert_allclose(again.locations, clip.locations, atol=1e-12)
    turns = [tf.quat_to_mat3(c.object_rotations) for c in (again, clip)]
    np.testing.assert_allclose(*turns, atol=1e-12)


def test_a_path_walk_on_a_y_up_centimetre_rig_is_the_upright_rigs_walk():
    """The walk read upright is the plain human's walk (same metres, same Z-up), so its metrics are
    the same; handed back, its locations are in the armature's centimetres."""
    world = rot_x(90.0) @ scale(0.01)
    sk = upright_skeleton(armature_skeleton(Y_UP_CM), upright_matrix(world))
    human, rigmap = rigs.human_skeleton()
    path = np.array([[0.0, 0.0, 0.0], [0.0, -2.0, 0.0]])
    params = PathWalkParams(stand_s=0.2)
    plain = generate_path_walk(human, rigmap, path, params=params)
    clip = walk_spec.bake_call(sk, rigmap, path, None, params, np.eye(4), 1.0)[0]
    assert clip.metrics["skate_mean_cm_s"] == pytest.approx(plain.metrics["skate_mean_cm_s"], abs=1e-6)
    np.testing.assert_allclose(clip.locations, 100.0 * plain.locations, atol=1e-6)
    np.testing.assert_allclose(np.abs(np.sum(clip.rotations * plain.rotations, axis=-1)), 1.0, atol=1e-9)


def _loop_walk(sk, rigmap, basis: np.ndarray, **kw) -> Clip:
    params = PathWalkParams(loop="ROOT_MOTION", loop_cycles=1, **kw)
    return walk_spec.bake_call(sk, rigmap, None, None, params, basis, float(np.linalg.norm(basis[:3, 0])))[0]


def test_a_loop_handed_back_repeats_in_the_armatures_channels():
    """Root motion on the root bone of a Y-up centimetre rig: the per-loop offset of the root's
    location channels is handed back in the armature's units, so the closing key continues the
    channels' advance; the direction of travel is the armature's, the stride in metres."""
    world = rot_x(90.0) @ scale(0.01)
    m = upright_matrix(world)
    sk = upright_skeleton(armature_skeleton(Y_UP_CM), m)
    human, rigmap = rigs.human_skeleton()
    plain = cycle_of(_loop_walk(human, rigmap, np.eye(4)))
    clip = _loop_walk(sk, rigmap, np.eye(4))
    info = cycle_of(clip)
    assert info.travel_bone == plain.travel_bone == "root"
    assert info.cycle_stride_m == pytest.approx(plain.cycle_stride_m, rel=1e-9)
    closed = repeated(clip).locations[:, clip.index("root")]
    np.testing.assert_allclose(closed[-1] - closed[-2], closed[1] - closed[0], atol=1e-6)  # cm
    np.testing.assert_allclose(np.array(info.travel_offset), 100.0 * np.array(plain.travel_offset), atol=1e-6)
    np.testing.assert_allclose(m[:3, :3] @ info.forward / 0.01, plain.forward, atol=1e-9)


def test_a_loop_on_the_object_of_a_turned_scaled_rig_repeats_along_its_heading():
    """Root motion on the object, turned 90° about z and scaled ×1.2 (its rig read upright at that
    scale, as the bridge reads it): the per-loop offset is the object's channels' — the closing key
    continues their advance — and it is the travel in metres."""
    basis = translate(2.0, 1.0, 0.0) @ rot_z(90.0) @ scale(1.2)
    human, rigmap = rigs.human_skeleton()
    sk = upright_skeleton(human, upright_matrix(basis))
    clip = _loop_walk(sk, rigmap, basis, root_motion="OBJECT")
    info = cycle_of(clip)
    channels = repeated(clip).object_locations
    np.testing.assert_allclose(channels[-1] - channels[-2], channels[1] - channels[0], atol=1e-6)
    assert np.linalg.norm(info.travel_offset) == pytest.approx(info.travel_m, rel=1e-9)
