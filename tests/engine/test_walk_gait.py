"""The path walk end to end, measured on the FK of the generated clip (not on the plan).

Contact is judged from the posed sole alone: a sole point within 3 mm of the ground bears weight.
"""

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.errors import InputError, MissingRoles
from procanim_addon.ground import FlatGround, StairsGround
from procanim_addon.rig_roles import RigMap
from procanim_addon.rigs import human_skeleton
from procanim_addon.skeleton import Skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk
from procanim_addon.walk.character import read_character
from procanim_addon.walk.metrics import sole_points
from procanim_addon.walk.path import deviation_from_polyline

S_CURVE = np.stack([1.5 * np.sin(np.linspace(0, 2 * np.pi, 200)), np.linspace(0, -10, 200), np.zeros(200)], -1)
STAIRS = StairsGround(start=1.5, tread=0.30, riser=0.16, steps_up=5, landing=1.0, steps_down=5)
STRAIGHT = np.array([[0.0, 0.0, 0.0], [0.0, -7.0, 0.0]])


@pytest.fixture(scope="module")
def human():
    return human_skeleton()


@pytest.fixture(scope="module")
def walks(human):
    sk, rm = human
    return {
        "s_curve": (generate_path_walk(sk, rm, S_CURVE, FlatGround(), PathWalkParams()), FlatGround(), S_CURVE),
        "stairs": (generate_path_walk(sk, rm, STRAIGHT, STAIRS, PathWalkParams()), STAIRS, STRAIGHT),
    }


def _soles(human, clip):
    sk, rm = human
    char = read_character(sk, rm)
    pose = sk.fk(clip.locations, clip.rotations)
    return pose, char, {s: sole_points(sk, pose, char, s) for s in "LR"}


@pytest.mark.parametrize("name", ["s_curve", "stairs"])
def test_clip_is_well_formed(walks, human, name):
    clip = walks[name][0]
    sk, _ = human
    assert clip.is_finite()
    assert clip.rotations.shape == (clip.frame_count, len(sk), 4)
    assert np.allclose(np.linalg.norm(clip.rotations, axis=-1), 1.0)
    assert clip.frames[0] == 1 and np.all(np.diff(clip.frames) == 1)
    assert clip.key_location[sk.index("root")] and clip.key_rotation[sk.index("thigh.L")]


@pytest.mark.parametrize("name", ["s_curve", "stairs"])
def test_stance_foot_does_not_slide(walks, human, name):
    clip, ground, _ = walks[name]
    _, _, soles = _soles(human, clip)
    speeds = []
    for pts in soles.values():
        z, _, _ = ground.height(pts.reshape(-1, 3)[:, :2])
        on = np.abs(pts[..., 2] - z.reshape(pts.shape[:2])) < 0.003  # (F, 3) sole point touching
        both = on[1:] & on[:-1]
        v = np.linalg.norm(np.diff(pts[..., :2], axis=0), axis=-1) * clip.fps
        speeds.append(v[both])
    v = np.concatenate(speeds) * 100  # cm/s
    assert v.size > 100
    assert v.mean() < 1.0 and np.percentile(v, 95) < 5.0


@pytest.mark.parametrize("name", ["s_curve", "stairs"])
def test_no_foot_below_the_ground(walks, human, name):
    clip, ground, _ = walks[name]
    _, _, soles = _soles(human, clip)
    for pts in soles.values():
        z, _, _ = ground.height(pts.reshape(-1, 3)[:, :2])
        assert np.max(z - pts.reshape(-1, 3)[:, 2]) < 0.005


def test_every_footstep_on_stairs_lies_on_one_tread(walks, human):
    clip, ground, _ = walks["stairs"]
    _, _, soles = _soles(human, clip)
    for pts in soles.values():
        z, _, _ = ground.height(pts.reshape(-1, 3)[:, :2])
        flat = np.all(np.abs(pts[..., 2] - z.reshape(pts.shape[:2])) < 0.003, axis=1)  # whole sole down
        assert flat.sum() > 20
        s_heel = ground.distance(pts[flat, 0, :2])
        s_tip = ground.distance(pts[flat, 2, :2])
        for a, b in zip(s_heel, s_tip):
            lo, hi = min(a, b), max(a, b)
            assert not np.any((ground.edges > lo) & (ground.edges < hi)), "a foot straddles a stair edge"
    # the walker went up and came down: the pelvis rose by the flight's height on the landing
    sk, _ = human
    pose = sk.fk(clip.locations, clip.rotations)
    hips_z = pose[:, sk.index("hips"), 2, 3]
    assert hips_z.max() - hips_z[0] > 5 * 0.16 - 0.15
    assert abs(hips_z[-1] - hips_z[0]) < 0.01


@pytest.mark.parametrize("name", ["s_curve", "stairs"])
def test_character_follows_the_path(walks, human, name):
    clip, _, pts = walks[name]
    sk, _ = human
    pose = sk.fk(clip.locations, clip.rotations)
    hips = pose[:, sk.index("hips"), :3, 3]
    dev = deviation_from_polyline(hips, pts)
    assert dev.mean() < 0.05 and dev.max() < 0.10
    # it starts at the path's start and ends at its end
    assert np.linalg.norm(hips[0, :2] - pts[0, :2]) < 0.05
    assert np.linalg.norm(hips[-1, :2] - pts[-1, :2]) < 0.05


def test_heading_follows_the_path_tangent(walks, human):
    clip, _, pts = walks["s_curve"]
    sk, rm = human
    char = read_character(sk, rm)
    pose = sk.fk(clip.locations, clip.rotations)
    hi = sk.index("hips")
    fwd = np.einsum("fij,j->fi", pose[:, hi, :3, :3] @ sk.matrix_local[hi][:3, :3].T, char.forward)
    hips = pose[:, hi, :3, 3]
    seg = np.diff(pts[:, :2], axis=0)
    errs = []
    for f in range(0, clip.frame_count, 3):
        j = int(np.argmin(np.linalg.norm(pts[:-1, :2] - hips[f, :2], axis=-1)))
        t = seg[j] / np.linalg.norm(seg[j])
        errs.append(np.degrees(abs(np.arctan2(t[0] * fwd[f, 1] - t[1] * fwd[f, 0], t @ fwd[f, :2]))))
    errs = np.array(errs)
    assert np.mean(errs) < 8.0 and np.max(errs) < 25.0


@pytest.mark.parametrize("name", ["s_curve", "stairs"])
def test_no_frame_to_frame_pops(walks, name):
    """A pop is one frame whose rotation step stands out from both neighbours."""
    clip = walks[name][0]
    q = clip.rotations
    d = np.degrees(2 * np.arccos(np.clip(np.abs(np.sum(q[1:] * q[:-1], axis=-1)), 0, 1)))  # (F-1, B)
    assert d.max() < 40.0
    spike = d[1:-1] - np.maximum(d[:-2], d[2:])
    assert spike.max() < 15.0


def test_com_travels_a_few_centimetres_vertically_on_flat_ground(walks):
    m = walks["s_curve"][0].metrics
    assert 2.0 <= m["com_vertical_travel_cm"] <= 6.0


def test_metrics_are_reported(walks):
    m = walks["stairs"][0].metrics
    for key in ("skate_mean_cm_s", "skate_p95_cm_s", "penetration_max_cm", "pelvis_deviation_mean_cm",
                "step_count", "cadence_spm", "com_vertical_travel_cm"):
        assert key in m
    # on stairs a step lasts long enough for the swinging foot to lift, travel and set down at a
    # walking foot's speed: slower than the cadence asked for, never faster
    assert 80.0 < m["cadence_spm"] < 100.0
    assert walks["s_curve"][0].metrics["cadence_spm"] == pytest.approx(100.0, rel=1e-6)
    assert m["step_count"] >= 14


def test_faster_cadence_makes_a_shorter_clip(human):
    sk, rm = human
    slow = generate_path_walk(sk, rm, STRAIGHT, FlatGround(), PathWalkParams(cadence_spm=90))
    fast = generate_path_walk(sk, rm, STRAIGHT, FlatGround(), PathWalkParams(cadence_spm=120))
    assert fast.frame_count < slow.frame_count
    assert fast.metrics["cadence_spm"] == pytest.approx(120.0)


def test_object_root_motion_moves_the_object_and_keeps_the_bones_near_home(human):
    sk, rm = human
    clip = generate_path_walk(sk, rm, STRAIGHT, FlatGround(), PathWalkParams(root_motion="OBJECT"))
    assert clip.object_locations is not None and clip.object_rotations is not None
    assert clip.object_locations[-1, 1] < -6.5  # the object walked the path (−y)
    pose = sk.fk(clip.locations, clip.rotations)
    assert np.abs(pose[:, sk.index("hips"), 1, 3]).max() < 0.2
    assert clip.metrics["skate_mean_cm_s"] < 1.0


def _rig_without_root(sk):
    keep = [i for i, n in enumerate(sk.names) if n != "root"]
    bones = []
    for i in keep:
        p = sk.parents[i]
        bones.append({"name": sk.names[i], "parent": sk.names[p] if p >= 0 and sk.names[p] != "root" else None,
                      "matrix_local": sk.matrix_local[i], "length": sk.lengths[i]})
    return Skeleton.from_bones(bones)


def test_a_rig_without_root_walks_with_its_hips(human):
    sk, rm = human
    sk2 = _rig_without_root(sk)
    rm2 = RigMap({k: v for k, v in rm.roles.items() if k != "root"}, spine_bones=list(rm.spine))
    clip = generate_path_walk(sk2, rm2, STRAIGHT, FlatGround(), PathWalkParams())
    pose = sk2.fk(clip.locations, clip.rotations)
    assert pose[-1, sk2.index("hips"), 1, 3] < -6.5
    assert clip.metrics["skate_mean_cm_s"] < 1.0


def test_bad_input_is_refused_with_a_message(human):
    sk, rm = human
    with pytest.raises(InputError, match="no horizontal length"):
        generate_path_walk(sk, rm, np.array([[0, 0, 0], [0, 0, 1.0]]), None, PathWalkParams())
    with pytest.raises(InputError, match="too steep"):
        generate_path_walk(sk, rm, np.array([[0, 0, 0], [0, -1, 0], [0, -1.3, 3], [0, -3, 3]]), None, PathWalkParams())
    with pytest.raises(InputError, match="(?i)cadence"):
        generate_path_walk(sk, rm, STRAIGHT, None, PathWalkParams(cadence_spm=5))
    with pytest.raises(InputError, match="leaves the ground"):
        from procanim_addon.ground import HeightFieldGround
        generate_path_walk(sk, rm, STRAIGHT, HeightFieldGround((-1, -2), 0.5, np.zeros((5, 5))), PathWalkParams())
    with pytest.raises(InputError, match="too long for this character"):
        generate_path_walk(sk, rm, STRAIGHT, None, PathWalkParams(stride_m=1.5))
    legless = RigMap({k: v for k, v in rm.roles.items() if not k.startswith("shin")})
    with pytest.raises(MissingRoles, match="shin"):
        generate_path_walk(sk, legless, STRAIGHT, None, PathWalkParams())


def test_walk_without_a_ground_uses_the_curve_height(human):
    sk, rm = human
    raised = STRAIGHT + np.array([0.0, 0.0, 2.0])
    clip = generate_path_walk(sk, rm, raised, None, PathWalkParams())
    pose = sk.fk(clip.locations, clip.rotations)
    assert pose[0, sk.index("hips"), 2, 3] == pytest.approx(2.0 + 0.92, abs=0.03)
    assert clip.metrics["penetration_max_cm"] < 0.5


def test_quaternions_are_continuous(walks):
    q = walks["s_curve"][0].rotations
    assert np.all(np.sum(q[1:] * q[:-1], axis=-1) > 0)
    assert tf.quat_normalize(q).shape == q.shape


def _rigify_like():
    """A Rigify-metarig-like human: Rigify names, the hips bone ('spine') pointing up, straight
    legs in the rest pose, soles at z = 0 and bone rolls unlike ProcAnim's own rig."""
    from procanim_addon.rig_roles import detect
    from procanim_addon.rigs import BoneSpec, RigTemplate, _mirror

    up, fwd, side = (0, 0, 1.0), (0, -1.0, 0), (1.0, 0, 0)
    bones = [
        BoneSpec("spine", None, (0, 0.03, 1.0), (0, 0.02, 1.12), (0, 0.3, 1.0)),
        BoneSpec("spine.001", "spine", (0, 0.02, 1.12), (0, 0.03, 1.25), fwd),
        BoneSpec("spine.002", "spine.001", (0, 0.03, 1.25), (0, 0.04, 1.37), side),
        BoneSpec("spine.003", "spine.002", (0, 0.04, 1.37), (0, 0.03, 1.52), fwd),
        BoneSpec("spine.004", "spine.003", (0, 0.03, 1.52), (0, 0.01, 1.6), fwd),
        BoneSpec("spine.006", "spine.004", (0, 0.01, 1.6), (0, 0.01, 1.8), fwd),
        BoneSpec("shoulder.L", "spine.003", (0.02, 0.0, 1.5), (0.17, 0.05, 1.48), up),
        BoneSpec("upper_arm.L", "shoulder.L", (0.18, 0.05, 1.47), (0.3, 0.07, 1.2), (0.3, 1.0, 0.0)),
        BoneSpec("forearm.L", "upper_arm.L", (0.3, 0.07, 1.2), (0.4, 0.02, 0.96), (0.0, 1.0, 0.3)),
        BoneSpec("hand.L", "forearm.L", (0.4, 0.02, 0.96), (0.43, 0.0, 0.88), fwd),
        BoneSpec("thigh.L", "spine", (0.1, 0.01, 0.98), (0.1, 0.0, 0.53), (0.2, -1.0, 0.0)),
        BoneSpec("shin.L", "thigh.L", (0.1, 0.0, 0.53), (0.1, 0.03, 0.09), (-0.3, -1.0, 0.0)),
        BoneSpec("foot.L", "shin.L", (0.1, 0.03, 0.09), (0.1, -0.1, 0.0), up),
        BoneSpec("toe.L", "foot.L", (0.1, -0.1, 0.0), (0.1, -0.17, 0.0), (0.2, 0.0, 1.0)),
    ]
    t = RigTemplate("metarig", tuple(_mirror(bones)), {})
    sk = t.skeleton()
    return sk, detect(sk.names, {b.name: b.parent for b in t.bones}, rig_name="metarig")


def test_a_rigify_like_rig_walks_the_s_curve_with_planted_feet():
    sk, rm = _rigify_like()
    assert rm.get("hips") == "spine" and rm.get("root") is None
    clip = generate_path_walk(sk, rm, S_CURVE, FlatGround(), PathWalkParams())
    pose, char, soles = _soles((sk, rm), clip)
    speeds = []
    for pts in soles.values():
        on = np.abs(pts[..., 2]) < 0.003
        both = on[1:] & on[:-1]
        speeds.append(np.linalg.norm(np.diff(pts[..., :2], axis=0), axis=-1)[both] * clip.fps)
        assert pts[..., 2].min() > -0.005
    v = np.concatenate(speeds) * 100
    assert v.size > 100 and v.mean() < 1.0
    # the knees bend forward (the knee ahead of the hip-ankle line, along the walking direction)
    hip = pose[:, sk.index("thigh.L"), :3, 3]
    knee = pose[:, sk.index("shin.L"), :3, 3]
    ankle = pose[:, sk.index("foot.L"), :3, 3]
    foot = sk.index("foot.L")
    fwd = np.einsum("fij,j->fi", pose[:, foot, :3, :3] @ sk.matrix_local[foot][:3, :3].T, char.forward)
    mid = 0.5 * (hip + ankle)
    bend = np.sum((knee - mid) * fwd, axis=-1)
    assert np.percentile(bend, 5) > -0.005
    dev = deviation_from_polyline(pose[:, sk.index("spine"), :3, 3], S_CURVE)
    assert dev.mean() < 0.05


def _ramp():
    from procanim_addon.ground import HeightFieldGround

    def z(x, y):  # flat, 12 % up, a plateau, 12 % down, flat (along −y)
        return np.clip(0.12 * (-y - 1.0), 0, 0.36) - np.clip(0.12 * (-y - 5.0), 0, 0.36)

    return HeightFieldGround.from_function(z, (-3, 3), (-11, 1), 0.05)


def test_on_a_ramp_the_soles_lie_on_the_slope_and_do_not_slide(human):
    sk, rm = human
    ramp = _ramp()
    clip = generate_path_walk(sk, rm, np.array([[0, 0, 0], [0, -9.5, 0.0]]), ramp, PathWalkParams())
    _, _, soles = _soles(human, clip)
    flat_frames = 0
    for pts in soles.values():
        z, _, _ = ramp.height(pts.reshape(-1, 3)[:, :2])
        gap = pts[..., 2] - z.reshape(pts.shape[:2])
        assert gap.min() > -0.005
        # when heel and toe tip are both down on the slope, the ball is down too: the foot lies on it
        both = (np.abs(gap[:, 0]) < 0.003) & (np.abs(gap[:, 2]) < 0.003)
        on_slope = both & (np.abs(pts[:, 0, 2] - pts[:, 2, 2]) > 0.01)
        flat_frames += int(on_slope.sum())
        assert np.all(np.abs(gap[on_slope, 1]) < 0.005)
    assert flat_frames > 20
    assert clip.metrics["skate_mean_cm_s"] < 1.0


@pytest.mark.parametrize("kw", [{"cadence_spm": 60}, {"cadence_spm": 130}, {"speed_mps": 1.4}, {"fps": 30},
                                {"fps": 60}])
def test_no_pops_at_other_cadences_speeds_and_frame_rates(human, kw):
    sk, rm = human
    clip = generate_path_walk(sk, rm, S_CURVE[:120], FlatGround(), PathWalkParams(**kw))
    q = clip.rotations
    d = np.degrees(2 * np.arccos(np.clip(np.abs(np.sum(q[1:] * q[:-1], axis=-1)), 0, 1)))
    spike = d[1:-1] - np.maximum(d[:-2], d[2:])
    per_24 = 24.0 / clip.fps  # the same angular speed is a smaller step at a higher frame rate
    assert spike.max() < 15.0 * per_24 and d.max() < 40.0 * per_24
    assert clip.metrics["skate_mean_cm_s"] < 1.0 and clip.metrics["penetration_max_cm"] < 0.5


def test_arms_swing_opposite_to_the_legs_about_30_forward_and_9_back(walks, human):
    clip = walks["s_curve"][0]
    sk, rm = human
    char = read_character(sk, rm)
    pose = sk.fk(clip.locations, clip.rotations)
    hips = sk.index("hips")
    rot = pose[:, hips, :3, :3] @ sk.matrix_local[hips][:3, :3].T
    fwd = np.einsum("fij,j->fi", rot, char.forward)  # the body's forward, per frame
    walking = slice(int(2.0 * clip.fps), int(-2.0 * clip.fps))
    angle, lead = {}, {}
    for s in "LR":
        ua = sk.index(f"upper_arm.{s}")
        d = sk.tails_of(pose)[:, ua] - pose[:, ua, :3, 3]
        # upper-arm flexion in the sagittal plane: forward component against the downward one
        angle[s] = np.degrees(np.arctan2(np.sum(d * fwd, axis=-1), -d[:, 2]))[walking]
        foot = pose[:, sk.index(f"foot.{s}"), :3, 3] - pose[:, hips, :3, 3]
        lead[s] = np.sum(foot * fwd, axis=-1)[walking]
    for s, o in (("L", "R"), ("R", "L")):
        # the arm is forward when the other side's foot is forward
        assert np.corrcoef(angle[s], lead[o])[0, 1] > 0.7
        assert 22 < angle[s].max() < 38
        assert -14 < angle[s].min() < -4


def test_head_stays_steady(walks, human):
    clip = walks["s_curve"][0]
    sk, _ = human
    pose = sk.fk(clip.locations, clip.rotations)
    h = sk.index("head")
    up = pose[:, h, :3, :3] @ sk.matrix_local[h][:3, :3].T @ np.array([0.0, 0.0, 1.0])
    tilt = np.degrees(np.arccos(np.clip(up[:, 2], -1, 1)))
    assert tilt.max() < 3.0  # no nodding or rolling
    q = clip.rotations[:, h]
    # the head turns smoothly with the path (its frame-to-frame rotation stays small)
    pose_q = np.array([np.degrees(np.arccos(np.clip(np.trace(a.T @ b) * 0.5 - 0.5, -1, 1)))
                       for a, b in zip(pose[:-1, h, :3, :3], pose[1:, h, :3, :3])])
    assert pose_q.max() < 3.0 and q.shape[0] == clip.frame_count


def test_contact_quality_sees_a_sliding_or_sunken_walk(walks, human):
    """The measure the clip reports, applied to the pose alone: a pose dragged sideways at 0.3 m/s
    skates at about 30 cm/s; one sunk by 2 cm penetrates by 2 cm."""
    from procanim_addon.walk.metrics import contact_quality

    sk, rm = human
    clip, ground, _ = walks["s_curve"]
    pose = sk.fk(clip.locations, clip.rotations)
    ok = contact_quality(sk, rm, pose, ground, clip.fps)
    assert ok["skate_mean_cm_s"] < 1.0 and ok["penetration_max_cm"] < 0.5
    dragged = pose.copy()
    dragged[:, :, 0, 3] += 0.3 * np.arange(len(pose))[:, None] / clip.fps
    bad = contact_quality(sk, rm, dragged, ground, clip.fps)
    assert bad["skate_mean_cm_s"] == pytest.approx(30.0, rel=0.05)
    sunk = pose.copy()
    sunk[:, :, 2, 3] -= 0.02
    assert contact_quality(sk, rm, sunk, ground, clip.fps)["penetration_max_cm"] == pytest.approx(2.0, abs=0.3)


def test_a_rig_facing_another_way_walks_the_same_path(human, walks):
    """Forward comes from the rest pose (feet → toes): a rig built facing +X walks the S-curve
    exactly as well, heading along the path."""
    sk, rm = human
    turn = np.eye(4)
    turn[:3, :3] = tf.quat_to_mat3(tf.quat_from_axis_angle(np.array([0, 0, 1.0]), np.radians(90)))
    bones = [{"name": n, "parent": sk.names[p] if p >= 0 else None, "matrix_local": turn @ sk.matrix_local[i],
              "length": sk.lengths[i]} for i, (n, p) in enumerate(zip(sk.names, sk.parents))]
    sk2 = Skeleton.from_bones(bones)
    clip = generate_path_walk(sk2, rm, S_CURVE, FlatGround(), PathWalkParams())
    ref = walks["s_curve"][0].metrics
    m = clip.metrics
    assert m["skate_mean_cm_s"] < 1.0 and m["penetration_max_cm"] < 0.5
    assert m["heading_error_mean_deg"] == pytest.approx(ref["heading_error_mean_deg"], abs=0.5)
    assert m["pelvis_deviation_mean_cm"] == pytest.approx(ref["pelvis_deviation_mean_cm"], abs=0.3)


def test_the_stairs_as_a_triangle_mesh_give_the_same_walk(walks, human):
    """The operator hands the engine a TerrainMesh read from the scene; the staircase as triangles
    must walk like the analytic one."""
    from procanim_addon.terrain.mesh import TerrainMesh

    sk, rm = human
    verts, quads = STAIRS.mesh(width=2.0, after=3.0)
    tris = np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])
    clip = generate_path_walk(sk, rm, STRAIGHT, TerrainMesh(verts, tris), PathWalkParams())
    ref = walks["stairs"][0]
    assert clip.frame_count == ref.frame_count
    assert clip.metrics["step_count"] == ref.metrics["step_count"]
    assert clip.metrics["skate_mean_cm_s"] < 1.0 and clip.metrics["penetration_max_cm"] < 0.5
    pose, pose_ref = sk.fk(clip.locations, clip.rotations), sk.fk(ref.locations, ref.rotations)
    # footstep positions within millimetres (the mesh's edges are found by bisection); step times
    # follow the footsteps on stairs, so the poses agree to a few centimetres in mid-swing
    assert np.abs(pose[:, :, :3, 3] - pose_ref[:, :, :3, 3]).max() < 0.03
    assert np.median(np.abs(pose[:, :, :3, 3] - pose_ref[:, :, :3, 3])) < 0.001
