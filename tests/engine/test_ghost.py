"""The live preview's ghost (procanim_addon/ghost.py): for every generator its bones are the pose a
bake of the same Clip gives, checked against a plain per-bone, per-frame forward kinematics written
here (Blender's pose-bone rules); the foot plants, the pelvis path, the handshake's grip points.

The Blender side of the same check (the ghost equals ``pose_bone.matrix`` evaluated after
Generate) is tests/blender/test_preview.py."""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon import duck, ghost, motions, registry
from procanim_addon.clip import Clip
from procanim_addon.fix_feet import FixFeetParams
from procanim_addon.fix_feet.footskate import Footskate, add_footskate
from procanim_addon.ground import FlatGround
from procanim_addon.handshake import HandshakeParams, generate_handshake
from procanim_addon.rigs import duck_skeleton, human_skeleton
from procanim_addon.terrain.adapt import adapt_to_terrain
from procanim_addon.terrain.shapes import body_heights, zigzag
from procanim_addon.walk import PathWalkParams, generate_path_walk

TOL = 1e-5  # m
QUICK = dict(neutral_frames=3, dummy_frames=6, response_frames=3, approach_frames=10, shake_frames=12,
             secondary_shakes=1, secondary_frames=8, retreat_frames=10, hold_frames=2)


def placed(x, y, z, yaw_deg, scale=1.0):
    a = np.radians(yaw_deg)
    m = np.eye(4)
    m[:3, :3] = scale * np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    m[:3, 3] = (x, y, z)
    return m


# ----------------------------------------------------------------------------- a reference FK


def quat_matrix(q):
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def trs(loc, quat, scale=(1.0, 1.0, 1.0)):
    m = np.eye(4)
    m[:3, :3] = quat_matrix(quat) @ np.diag(scale)
    m[:3, 3] = loc
    return m


def reference_bones(skeleton, clip, k, world):
    """World heads and tails ``{name: (head, tail)}`` at key ``k``: pose = pose(parent) @
    matrix_local(parent)⁻¹ @ matrix_local @ basis, one bone and one frame at a time."""
    poses, out = {}, {}
    names = list(clip.bone_names)
    for i, name in enumerate(skeleton.names):
        loc, quat = np.zeros(3), (1.0, 0.0, 0.0, 0.0)
        if name in names:
            j = names.index(name)
            loc, quat = clip.locations[k, j], clip.rotations[k, j]
        if skeleton.connected[i]:
            loc = np.zeros(3)
        basis = trs(loc, quat)
        p = skeleton.parents[i]
        rest = skeleton.matrix_local[i] if p < 0 else np.linalg.inv(skeleton.matrix_local[p]) @ skeleton.matrix_local[i]
        poses[i] = (rest if p < 0 else poses[p] @ rest) @ basis
        m = world @ poses[i]
        out[name] = (m[:3, 3], m[:3, 3] + m[:3, 1] * skeleton.lengths[i])
    return out


# ----------------------------------------------------------------------------- one scene per generator


def duck_scene():
    sk, rm = duck_skeleton()
    clip = duck.generate_duck_walk(sk, rm, duck.DuckParams(frame_end=48))
    return [clip], [ghost.Body("Duck", sk, rm, placed(1.0, 2.0, 0.5, 30.0, 1.3))]


def path_walk_scene(root_motion="BONE"):
    sk, rm = human_skeleton()
    points = np.array([[0.0, 0.0, 0.0], [0.0, -2.0, 0.0], [1.0, -3.0, 0.0]])
    clip = generate_path_walk(sk, rm, points, FlatGround(0.0), PathWalkParams(root_motion=root_motion))
    world = placed(-1.0, 0.5, 0.0, -20.0)
    return [clip], [ghost.Body("Hiker", sk, rm, world, parent_world=world, object_scale=np.ones(3))]


def handshake_scene():
    (s1, r1), (s2, r2) = human_skeleton(), human_skeleton()
    a, b = (s1, r1, placed(0, 0, 0, 0)), (s2, r2, placed(0, -1.0, 0, 180))
    ci, cp, report = generate_handshake(a, b, HandshakeParams(solver_initiator="DLS", solver_partner="DLS", **QUICK))
    bodies = [ghost.Body("Ann", s1, r1, a[2]), ghost.Body("Bob", s2, r2, b[2])]
    return [ci, cp], bodies, report


def source_scene():
    sk, rm = human_skeleton()
    clip = motions.generate(sk, rm, motions.SourceMotionParams(kind="WALK", steps=2))
    return [clip], [ghost.Body("Human", sk, rm, placed(0.0, 0.0, 0.0, 90.0))]


def terrain_scene():
    sk, rm = human_skeleton()
    source = motions.walk(sk, rm, motions.WalkParams(steps=2))
    terrain = zigzag(body_heights(sk, rm)["ankle"], start_xy=(0.0, -0.3), direction_xy=(0.0, -1.0),
                     cell_length=0.8, ground_z=0.03)
    clip = adapt_to_terrain(sk, rm, source, None, terrain)
    return [clip], [ghost.Body("Human", sk, rm, placed(2.0, 0.0, 0.0, 0.0))]


def fix_feet_scene():
    sk, rm = human_skeleton()
    source = add_footskate(sk, rm, motions.walk(sk, rm, motions.WalkParams(steps=2)), Footskate(seed=2))
    clip = registry.get("fix_feet").call(sk, rm, source, FlatGround(0.0), None, FixFeetParams(), {})[0]
    return [clip], [ghost.Body("Human", sk, rm, placed(0.5, -1.0, 0.0, 45.0))]


SCENES = {
    "duck_walk": duck_scene,
    "handshake": lambda: handshake_scene()[:2],
    "path_walk": path_walk_scene,
    "adapt_terrain": terrain_scene,
    "source_motion": source_scene,
    "fix_feet": fix_feet_scene,
}


def test_every_generator_is_covered():
    # the crowd has no preview of its own: its walkers are path walks, covered above
    assert set(SCENES) == {g.id for g in registry.GENERATORS} - {"crowd_walk"}


@pytest.mark.parametrize("generator", list(SCENES))
def test_ghost_bones_are_the_baked_pose_on_every_key(generator):
    clips, bodies = SCENES[generator]()
    ghosts = ghost.build_ghosts(clips, bodies, registry.get(generator).overlays)
    for clip, body, g in zip(clips, bodies, ghosts):
        assert g.frames[0] == clip.frames[0] and g.frames[-1] == clip.frames[-1]
        assert np.all(np.diff(g.frames) == 1.0)
        for k in range(0, clip.frame_count, max(1, clip.frame_count // 12)):
            want = reference_bones(body.skeleton, clip, k, body.world)
            heads, tails = g.bones_at(clip.frames[k])
            for name, head, tail in zip(g.bone_names, heads, tails):
                assert np.linalg.norm(head - want[name][0]) < TOL, (generator, k, name)
                assert np.linalg.norm(tail - want[name][1]) < TOL, (generator, k, name)
            hips = body.rigmap.get("hips")
            assert np.linalg.norm(g.pelvis[g.index(clip.frames[k])] - want[hips][0]) < TOL


def test_object_root_motion_places_the_ghost_with_the_object_channels():
    clips, bodies = path_walk_scene("OBJECT")
    clip, body = clips[0], bodies[0]
    assert clip.object_locations is not None
    body.parent_world = placed(0.5, 0.0, 0.0, 10.0)  # a parent's transform (object at its origin)
    body.object_scale = np.full(3, 1.2)
    body.world = body.parent_world @ np.diag([1.2, 1.2, 1.2, 1.0])
    g = ghost.build_ghost(clip, body)
    for k in range(0, clip.frame_count, 40):
        world = body.parent_world @ trs(clip.object_locations[k], clip.object_rotations[k], body.object_scale)
        want = reference_bones(body.skeleton, clip, k, world)
        heads, _ = g.bones_at(clip.frames[k])
        for name, head in zip(g.bone_names, heads):
            assert np.linalg.norm(head - want[name][0]) < TOL, (k, name)
    # the object walks the path: the pelvis ends far from where it started
    assert np.linalg.norm(g.pelvis[-1][:2] - g.pelvis[0][:2]) > 2.0


def test_between_keys_the_ghost_moves_smoothly_from_key_to_key():
    sk, rm = duck_skeleton()
    clip = duck.generate_duck_walk(sk, rm, duck.DuckParams(frame_end=48, key_interval=3))
    assert np.all(np.diff(clip.frames) == 3.0)
    g = ghost.build_ghost(clip, ghost.Body("Duck", sk, rm, np.eye(4)))
    assert len(g.frames) == 49
    step = np.linalg.norm(np.diff(g.heads, axis=0), axis=-1).max(axis=1)  # largest bone move per frame
    key_step = np.linalg.norm(np.diff(g.heads[::3], axis=0), axis=-1).max(axis=1)
    assert step.max() <= key_step.max()  # no overshoot beyond a whole key step in one frame
    # the in-between pose is neither key's: interpolation, not a hold
    assert not np.allclose(g.heads[1], g.heads[0]) and not np.allclose(g.heads[1], g.heads[3])


def test_outside_the_clip_the_first_and_last_poses_hold():
    clips, bodies = duck_scene()
    g = ghost.build_ghost(clips[0], bodies[0])
    assert np.array_equal(g.bones_at(-100)[0], g.heads[0]) and np.array_equal(g.bones_at(1e6)[0], g.heads[-1])


def test_only_the_drawn_bones_are_kept():
    clips, bodies = duck_scene()
    bodies[0].drawn = ("thigh.L", "shin.L", "nope")
    g = ghost.build_ghost(clips[0], bodies[0])
    assert g.bone_names == ["thigh.L", "shin.L"] and g.heads.shape[1:] == (2, 3)


# ----------------------------------------------------------------------------- plants, grips


def test_foot_plants_are_the_slow_stretches():
    frames = np.arange(30, dtype=float)
    # creeping at 0.027 m/s (planted: slower than 0.1 m/s), moving at 1.2 m/s, resting
    x = np.concatenate((np.linspace(0.0, 0.01, 10), np.linspace(0.06, 0.51, 10), np.full(10, 0.56)))
    ball = np.column_stack((x, np.zeros(30), np.zeros(30)))
    plants = ghost.foot_plants(ball - [0.1, 0, 0], ball, ball + [0.05, 0, 0], frames, fps=24.0, limit=0.1, side="L")
    assert [(p.first, p.last, p.side) for p in plants] == [(0.0, 9.0, "L"), (20.0, 29.0, "L")]
    assert np.allclose(plants[0].ball, [0.005, 0, 0]) and np.allclose(plants[0].heel, [-0.095, 0, 0])
    assert np.allclose(plants[1].tip, [0.61, 0, 0])
    slower = ghost.foot_plants(ball, ball, ball, frames, fps=24.0, limit=0.01)  # the creep is too fast now
    assert [(p.first, p.last) for p in slower] == [(20.0, 29.0)]


def test_duck_plants_alternate_and_the_feet_rest_on_them():
    clips, bodies = duck_scene()
    g = ghost.build_ghost(clips[0], bodies[0])
    sides = [p.side for p in g.plants]
    assert len(g.plants) >= 4 and set(sides) == {"L", "R"}  # two cycles
    assert all(a != b for a, b in zip(sides[1:-1], sides[2:-1]))  # L, R, L … once walking
    foot = g.bone_names.index(bodies[0].rigmap.get("foot.L"))
    for p in g.plants:
        if p.side != "L":
            continue
        rows = [g.index(f) for f in np.arange(p.first, p.last + 1)]
        balls = g.tails[rows, foot]
        assert np.linalg.norm(balls - p.ball, axis=1).max() < 0.01  # it stays put (1 cm on a 0.5 m duck)


def test_handshake_grip_points_meet_in_the_shake():
    clips, bodies, report = handshake_scene()
    gi, gp = ghost.build_ghosts(clips, bodies, registry.get("handshake").overlays)
    shake = np.asarray(report["curves"]["frames_in_shake"])
    assert gi.grip is not None and gp.grip is not None and shake.any()
    apart = np.linalg.norm(gi.grip - gp.grip, axis=1)
    assert apart[shake].max() < 1e-3 and apart[0] > 0.2  # together in the shake, apart at rest
    # the point of contact: the middle of the grips over the shake
    assert np.linalg.norm(gi.meeting - gi.grip[shake].mean(axis=0)) < 1e-3 and gi.meeting is gp.meeting


def test_fix_feet_plants_are_the_held_contacts_where_the_fixed_feet_stand():
    """The ghost draws the contacts Fix Feet held (its overlay), not the ones it would find from
    the feet's speed: one plant per held contact, in world space, the fixed heel on it while held."""
    clips, bodies = fix_feet_scene()
    clip, body = clips[0], bodies[0]
    g = ghost.build_ghost(clip, body, registry.get("fix_feet").overlays)
    held = clip.metrics["held_contacts"]
    assert len(g.plants) == len(held) == clip.metrics["contacts"] > 0
    world = body.world
    sk = body.skeleton
    for plant, row in zip(g.plants, held):
        assert (plant.side, plant.first, plant.last) == (row["foot"], row["first"], row["last"])
        assert np.allclose(plant.heel, world[:3, :3] @ row["heel"] + world[:3, 3])
        foot = sk.names.index(body.rigmap.get(f"foot.{plant.side}"))
        mid = g.index(0.5 * (plant.first + plant.last))
        ankle = g.heads[mid, g.bone_names.index(sk.names[foot])]
        assert np.linalg.norm((ankle - plant.heel)[:2]) < 0.05  # the heel is under the ankle
    clip.metrics["held_contacts"] = held[1:]  # the ghost draws what Fix Feet held, not what it finds itself
    assert len(ghost.build_ghost(clip, body, registry.get("fix_feet").overlays).plants) == len(held) - 1
    assert len(ghost.build_ghost(clip, body).plants) >= len(held) - 1  # without the overlay: found by speed


def test_a_clip_for_another_rig_keeps_the_missing_bones_at_rest():
    sk, rm = duck_skeleton()
    clip = Clip.rest(["not_a_bone", sk.names[0]], np.arange(3.0), 24.0)
    clip.locations[:, 1, 2] = 0.5  # the root bone moves 0.5 m along its own Z; the rest follows it
    g = ghost.build_ghost(clip, ghost.Body("Duck", sk, rm, np.eye(4)))
    shift = sk.matrix_local[0][:3, :3] @ [0.0, 0.0, 0.5]
    assert g.bone_names == sk.names
    assert np.allclose(g.heads[1], sk.heads + shift) and np.allclose(g.tails[2], sk.tails + shift)
