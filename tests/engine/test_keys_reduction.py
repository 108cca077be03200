"""Editable bakes (issue 23), engine side: the reduced keys of real generator clips keep every deform
head and tail within the tolerance of the dense bake on every frame, as Blender plays both.

The clips are the stored engine calls of tests/golden (a path walk over a terrain mesh, the duck's
walk keyed every 3 frames, both characters of a handshake, a walk adapted to a terrain). The error is
measured independently of the reduction's own model: the written curves evaluated by Blender's
arithmetic (:meth:`CurveKeys.evaluate`, equal to ``FCurve.evaluate`` — tests/blender/
test_key_reduction_eval.py), turned into a pose by :meth:`Skeleton.fk`, against the dense bake's
curves played the same way (between the duck's keys: :mod:`procanim_addon.fcurves`, Blender's
automatic handles).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import fcurves
from procanim_addon import transforms as tf
from procanim_addon.ground import FlatGround
from procanim_addon.keys import (
    HANDLE,
    KEY_TYPE,
    clip_channels,
    feet,
    handshake_marks,
    plan_clip_keys,
    validate_tolerance,
    walk_contacts,
)
from procanim_addon.rigs import human_skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk
from procanim_addon.walk.character import read_character
from procanim_addon.walk.metrics import contact_quality, sole_points

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from golden_io import GOLDEN_DIR, load_case  # noqa: E402

TOLERANCE_M = 0.001
CASES = {
    "path_walk": "demo_path_walk_1",
    "duck_walk": "demo_duck_walk_1",
    "handshake_initiator": "demo_handshake_1",
    "handshake_partner": "demo_handshake_1",
    "terrain_walk": "engine_terrain_walk_knee",
}


def _case(kind: str):
    """(skeleton, rigmap, clip, ground or None, phase starts or None) of a stored engine call."""
    generator, args, _, result = load_case(GOLDEN_DIR / f"{CASES[kind]}.npz")
    if generator == "handshake":
        who = 0 if kind.endswith("initiator") else 1
        (sk, rm, _), clip = args[who], result[who]
        return sk, rm, clip, None, result[2][f"phase_starts_{('initiator', 'partner')[who]}"]
    ground = args[3] if generator == "path_walk" else args[4] if generator == "adapt_terrain" else FlatGround()
    return args[0], args[1], result, ground, None


@pytest.fixture(scope="module")
def baked():
    """Per case: its inputs, the marks and contacts, and the reduced keys at 1 mm."""
    out = {}
    for kind in CASES:
        sk, rm, clip, ground, phases = _case(kind)
        contacts, marks, foot_list = [], [], None
        if ground is not None:
            foot_list = feet(sk, rm)
            contacts, marks = walk_contacts(sk, clip, foot_list, ground)
        else:
            marks = handshake_marks(phases, clip.frames)
        keyed = plan_clip_keys(clip, sk, TOLERANCE_M, marks=marks, contacts=contacts, feet=foot_list)
        out[kind] = (sk, rm, clip, ground, contacts, marks, keyed)
    return out


def played(sk, clip, values: np.ndarray) -> np.ndarray:
    """Armature-space pose ``(N, B, 4, 4)`` of the clip's keyed channels taking ``values`` (N, C)."""
    channels, _ = clip_channels(clip)
    loc = np.zeros((len(values), len(sk), 3))
    rot = tf.quat_identity((len(values), len(sk)))
    for c, ch in enumerate(channels):
        b = sk.index(ch.bone)
        if ch.prop == "location":
            loc[:, b, ch.index] = values[:, c]
        else:
            rot[:, b, ch.index] = values[:, c]
    return sk.fk(loc, rot)


def points(sk, pose: np.ndarray) -> np.ndarray:
    return np.concatenate([pose[..., :3, 3], sk.tails_of(pose)], axis=1)


def every_frame(clip) -> np.ndarray:
    return np.arange(clip.frames[0], clip.frames[-1] + 1)


def dense_played(clip) -> np.ndarray:
    """The dense bake's channel values on every frame (its keys; between keys Blender's handles)."""
    _, values = clip_channels(clip)
    return fcurves.evaluate(clip.frames, values, every_frame(clip))


def reduced_played(keyed, clip) -> np.ndarray:
    return np.stack([c.evaluate(every_frame(clip)) for c in keyed.curves], axis=1).astype(float)


@pytest.mark.parametrize("kind", list(CASES))
def test_every_head_and_tail_stays_within_the_tolerance_on_every_frame(baked, kind):
    sk, _, clip, *_, keyed = baked[kind]
    dense = points(sk, played(sk, clip, dense_played(clip)))
    reduced = points(sk, played(sk, clip, reduced_played(keyed, clip)))
    error = np.linalg.norm(reduced - dense, axis=-1).max()
    ratio = keyed.keys_written / keyed.keys_dense
    print(f"{kind}: {keyed.keys_written}/{keyed.keys_dense} keys ({100 * ratio:.1f} %), "
          f"largest error {error * 1000:.3f} mm (engine's figure {keyed.max_error_m * 1000:.3f} mm)")
    assert error <= TOLERANCE_M + 1e-6
    assert error <= keyed.max_error_m + 2e-6  # the engine's figure also counts the feet's sole points
    assert keyed.keys_written < keyed.keys_dense


# The issue's floors. The duck's dense bake keys every curve every 3 frames, 8 keys per gait cycle, so
# its 25 % is 2 keys per cycle per curve: fewer than its motion turns (the article's bounce rises twice
# a cycle, the legs step through it), even for each curve alone with the fewest keys any placement
# allows (bench/duck_keys.py).
@pytest.mark.parametrize(
    "kind, floor",
    [
        ("path_walk", 0.25),
        pytest.param("duck_walk", 0.25, marks=pytest.mark.xfail(strict=True, reason="2 keys per gait cycle")),
        ("handshake_initiator", 0.25),
        ("handshake_partner", 0.25),
        ("terrain_walk", 0.40),
    ],
)
def test_keys_written_within_the_issue_floor(baked, kind, floor):
    keyed = baked[kind][-1]
    assert keyed.keys_written <= floor * keyed.keys_dense


def _leg_curves(keyed, side: str):
    bones = [f"{role}.{side}" for role in ("thigh", "shin", "foot", "toe")]
    return [c for c in keyed.curves if any(f'["{b}"]' in c.data_path for b in bones)]


def _foot_curves(keyed, side: str):
    """The foot's own curves: the foot and toe bones carry its sole points."""
    return [c for c in keyed.curves if any(f'["{role}.{side}"]' in c.data_path for role in ("foot", "toe"))]


@pytest.mark.parametrize("kind", ["path_walk", "duck_walk", "terrain_walk"])
def test_contact_start_and_end_are_keys_of_the_foot(baked, kind):
    *_, contacts, _, keyed = baked[kind]
    assert contacts
    for c in contacts:
        curves = _foot_curves(keyed, c.foot.side)
        assert curves
        for curve in curves:
            assert np.isin([c.start, c.end], curve.frames).all(), (curve.data_path, c.start, c.end)
    assert keyed.contacts_exact


def skate_cm_s(sk, rm, clip, pose, contacts) -> float:
    """Mean horizontal speed (cm/s) of the sole points (the walk's skate metric's points) over the
    frame pairs inside the feet's contact spans; ``pose`` holds every frame of the clip's range."""
    char = read_character(sk, rm)
    speeds = []
    for c in contacts:
        pts = sole_points(sk, pose, char, c.foot.side)
        a, b = (int(round(f - clip.frames[0])) for f in (c.start, c.end))
        speeds.append(np.linalg.norm(np.diff(pts[a : b + 1, :, :2], axis=0), axis=-1).ravel() * clip.fps)
    return float(np.concatenate(speeds).mean() * 100)


@pytest.mark.parametrize("kind", ["path_walk", "duck_walk", "terrain_walk"])
def test_planted_feet_do_not_skate_more(baked, kind):
    sk, rm, clip, ground, contacts, _, keyed = baked[kind]
    dense_pose, reduced_pose = (played(sk, clip, v) for v in (dense_played(clip), reduced_played(keyed, clip)))
    dense, reduced = (skate_cm_s(sk, rm, clip, pose, contacts) for pose in (dense_pose, reduced_pose))
    band = [contact_quality(sk, rm, pose, ground, clip.fps)["skate_mean_cm_s"] for pose in (dense_pose, reduced_pose)]
    print(f"{kind}: skate in contact {dense:.3f} -> {reduced:.3f} cm/s (sole points within 3 mm: "
          f"{band[0]:.3f} -> {band[1]:.3f})")
    assert abs(reduced - dense) < 0.1
    assert keyed.skate_added_m_s * 100 < 0.1


def test_keys_at_contacts_and_passing_positions_say_what_they_are(baked):
    *_, contacts, marks, keyed = baked["path_walk"]
    names = {name for _, name in keyed.markers}
    assert {"L contact", "L lift", "R contact", "R lift"} <= names
    strikes = {m.frame for m in marks if m.name.endswith("contact")}
    passing = {m.frame for m in marks if m.key_type == "BREAKDOWN"} - strikes
    assert passing
    for curve in _leg_curves(keyed, "L"):
        types = dict(zip(curve.frames.tolist(), curve.key_type.tolist()))
        assert all(types[f] == KEY_TYPE["EXTREME"] for f in strikes if f in types)
        assert all(types[f] == KEY_TYPE["BREAKDOWN"] for f in passing if f in types)
        assert any(types[f] == KEY_TYPE["KEYFRAME"] for f in types)


def test_handshake_phase_boundaries_are_extreme_keys_on_every_curve(baked):
    *_, marks, keyed = baked["handshake_initiator"]
    assert {"dummy", "approach", "shake", "retreat"} <= {name for _, name in keyed.markers}
    for m in marks:
        for curve in keyed.curves:
            at = np.nonzero(curve.frames == np.float32(m.frame))[0]
            assert len(at) == 1 and curve.key_type[at[0]] == KEY_TYPE["EXTREME"], (curve.data_path, m.frame)


def test_moving_one_key_changes_the_pose_only_between_its_neighbours(baked):
    sk, _, clip, *_, keyed = baked["path_walk"]
    frames = every_frame(clip)
    before = reduced_played(keyed, clip)
    c = next(i for i, cv in enumerate(keyed.curves) if cv.data_path == 'pose.bones["hips"].location' and cv.index == 1)
    curve = keyed.curves[c]
    k = len(curve) // 2
    moved = type(curve)(**{f: getattr(curve, f) for f in curve.__dataclass_fields__})
    for array in (moved.co, moved.handle_left, moved.handle_right):  # a key moved with its handles, as G does
        array[k, 1] += 0.05
    after = before.copy()
    after[:, c] = moved.evaluate(frames)
    changed_curve = frames[np.abs(after[:, c] - before[:, c]) > 1e-7]
    lo, hi = curve.frames[k - 1], curve.frames[k + 1]
    assert len(changed_curve) and changed_curve.min() > lo and changed_curve.max() < hi
    pose_change = np.abs(points(sk, played(sk, clip, after)) - points(sk, played(sk, clip, before))).max(axis=(1, 2))
    changed = frames[pose_change > 1e-7]
    assert changed.min() > lo and changed.max() < hi
    assert pose_change.max() == pytest.approx(0.05, rel=0.01)


@pytest.mark.parametrize("kind", ["path_walk", "duck_walk", "handshake_partner"])
def test_tolerance_zero_is_the_dense_bake(kind):
    sk, rm, clip, *_ = _case(kind)
    keyed = plan_clip_keys(clip, sk, 0.0)
    assert keyed.keys_written == keyed.keys_dense and keyed.max_error_m == 0.0
    keyed_bones = [i for i in range(len(sk)) if clip.key_location[i] or clip.key_rotation[i]]
    by_path = {(c.data_path, c.index): c for c in keyed.curves}
    for i in keyed_bones:
        name = clip.bone_names[i]
        if clip.key_location[i]:
            for k in range(3):
                c = by_path[(f'pose.bones["{name}"].location', k)]
                assert np.array_equal(c.co[:, 0], clip.frames.astype(np.float32))
                assert np.array_equal(c.co[:, 1], clip.locations[:, i, k].astype(np.float32))
        if clip.key_rotation[i]:
            q = tf.quat_continuity(clip.rotations[:, i], axis=0)  # what the baker writes
            for k in range(4):
                c = by_path[(f'pose.bones["{name}"].rotation_quaternion', k)]
                assert np.array_equal(c.co[:, 1], q[:, k].astype(np.float32))
    auto = HANDLE["AUTO_CLAMPED"]
    for c in keyed.curves:
        assert (c.handle_left_type == auto).all() and (c.handle_right_type == auto).all()


def test_a_tighter_tolerance_keeps_more_keys_and_its_bound():
    sk, _, clip, *_ = _case("handshake_partner")
    loose, tight = (plan_clip_keys(clip, sk, t) for t in (0.004, 0.0005))
    assert tight.keys_written > loose.keys_written
    assert tight.max_error_m <= 0.0005 and loose.max_error_m <= 0.004


@pytest.mark.parametrize("bad", [-0.001, float("nan"), 1.0])
def test_a_tolerance_out_of_range_is_refused_with_a_message(bad):
    with pytest.raises(ValueError, match="Key tolerance"):
        validate_tolerance(bad)


def test_root_motion_on_the_object_is_keyed_and_measured_in_world_space():
    sk, rm = human_skeleton()
    path = np.array([[0.0, 0.0, 0.0], [0.0, -2.0, 0.0], [1.5, -3.5, 0.0]])
    clip = generate_path_walk(sk, rm, path, FlatGround(), PathWalkParams(root_motion="OBJECT"))
    assert clip.object_locations is not None and clip.object_rotations is not None
    keyed = plan_clip_keys(clip, sk, TOLERANCE_M)
    paths = {c.data_path for c in keyed.curves}
    assert {"location", "rotation_euler"} <= paths
    # world space: the object's transform carries the armature-space pose of the keyed channels
    frames = every_frame(clip)
    channels, dense = clip_channels(clip)
    played_values = reduced_played(keyed, clip)

    def world(values):
        bone_cols = [c for c, ch in enumerate(channels) if ch.bone]
        sub = type(clip)(clip.bone_names, frames, clip.fps, clip.locations, clip.rotations,
                         key_location=clip.key_location, key_rotation=clip.key_rotation)
        pose = played(sk, sub, values[:, bone_cols])
        obj = {ch.prop + str(ch.index): values[:, c] for c, ch in enumerate(channels) if not ch.bone}
        rot = tf.euler_to_mat3(np.stack([obj[f"rotation_euler{k}"] for k in range(3)], -1), "XYZ")
        loc = np.stack([obj[f"location{k}"] for k in range(3)], -1)
        pts = points(sk, pose)
        return np.einsum("fij,fpj->fpi", rot, pts) + loc[:, None, :]

    error = np.linalg.norm(world(played_values) - world(dense), axis=-1).max()
    assert error <= TOLERANCE_M + 1e-6
    assert keyed.keys_written < keyed.keys_dense


def test_a_motion_with_nan_is_refused():
    sk, _, clip, *_ = _case("handshake_partner")
    clip.rotations[3, int(np.argmax(clip.key_rotation)), 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        plan_clip_keys(clip, sk, TOLERANCE_M)


def test_a_compensated_refinement_pass_fits_again_only_what_changed_as_a_whole_pass_would():
    """A later pass of the top-down reduction fits again only the groups placed again and the bones
    whose frames they move: its curves and the bones' reduced frames are those of a pass over every
    group from the same keys and bounds."""
    from procanim_addon.keys.forward import DeformForward
    from procanim_addon.keys.layout import clip_channels, key_groups
    from procanim_addon.keys.reduce import Problem, _Fitting

    sk, _, clip, *_ = _case("path_walk")
    channels, values = clip_channels(clip)
    groups = key_groups(channels)
    model = DeformForward(sk, channels)
    runs = []
    for follow in (False, True):
        problem = Problem(np.asarray(clip.frames, float), values, groups, model)
        top_down = model.top_down(values)
        state = _Fitting(problem, TOLERANCE_M)
        state.fit(top_down, place=set(range(len(groups))))
        spine = [g for g, cols in enumerate(groups) if channels[cols[0]].bone == "spine"]
        state.bound[spine, 100:160] *= 0.3  # a round tightens the spine over a stretch
        place = state.below(set(spine))
        assert len(place) < len(groups)  # (the legs are not below the spine)
        state.fit(top_down, place=place, follow=follow)
        runs.append((state, top_down))
    (whole, td_whole), (followed, td_followed) = runs
    assert all(np.array_equal(a, b) for a, b in zip(whole.keys, followed.keys))
    np.testing.assert_allclose(followed.values, whole.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(td_followed.lin, td_whole.lin, rtol=0, atol=1e-12)
    np.testing.assert_allclose(td_followed.org, td_whole.org, rtol=0, atol=1e-12)
