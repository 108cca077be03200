"""Walk loops (issue 24, item 1): the path walk and the duck walk as seamless cycles, in place or with
root motion, measured here as Blender will play them — the Clip's keys repeated by a Cycles modifier
(REPEAT on every channel, REPEAT_OFFSET on the travel bone's location channels the Clip names), posed
by the skeleton's FK — on ProcAnim's human and duck, Rigify's human metarig (no root bone: the hips
carry the travel), the deform skeleton of a generated Rigify human (``root`` + ``ORG-`` bones) and
Rigify's bird metarig, with every style preset.

Acceptance (issue 24): the pose one loop after the first equals the first within 1 mm (root motion:
after the travel of stride × cycles); every joint's velocity across the seam within 10 % of its
velocity at the same point of the gait elsewhere (the path walk: in the straight walk the loop is
cut from, uncut there; the duck: one cycle on; joints slower than 0.1 m/s: within 1 cm/s); a foot in
contact slides < 1 cm/s across the seam; in place the pelvis travels ≤ 1 cm per cycle; with root
motion the root travels stride × cycles and the pelvis drifts ≤ 1 cm from it.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import duck, duck_cycle, rigs
from procanim_addon import transforms as tf
from procanim_addon.errors import InputError
from procanim_addon.loop import CycleInfo, cycle_of
from procanim_addon.rig_roles import detect
from procanim_addon.skeleton import Skeleton
from procanim_addon.walk import PathWalkParams, cycle, generate_path_walk
from procanim_addon.walk.character import read_character
from procanim_addon.walk.gait import effective_settings
from procanim_addon.walk.style import EMOTIONS, effects

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import rig_samples  # noqa: E402
from progress_probe import ProgressProbe  # noqa: E402

SEAM_MM = 1.0
VELOCITY_RATIO = 0.10
SLOW_M_S = 0.1  # below this a joint's velocity is compared to within 10 % of it: 1 cm/s
SKATE_CM_S = 1.0
DRIFT_CM = 1.0
CONTACT_M = 0.003  # a sole point this close to the ground bears weight
GROUND_Z = 0.0  # every human here stands on z = 0
MODES = ("IN_PLACE", "ROOT_MOTION")


# ----------------------------------------------------------------------------- rigs


def _sample(name):
    bones, _ = getattr(rig_samples, name)()
    sk = Skeleton.from_bones(rig_samples.bone_dicts(bones))
    return sk, detect(sk.names, {b["name"]: b["parent"] for b in bones}, skeleton=sk)


HUMANS = {"procanim": rigs.human_skeleton, "metarig": lambda: _sample("rigify_metarig"),
          "rigify": lambda: _sample("rigify_deform")}
RIG_PRESETS = [(rig, preset) for rig in HUMANS for preset in EMOTIONS]
BIRDS = {"procanim": rigs.duck_skeleton, "bird_metarig": lambda: _sample("rigify_bird")}


@functools.cache
def human(name):
    return HUMANS[name]()


@functools.cache
def bird(name):
    return BIRDS[name]()


def motion_cycles(preset):
    """Gait cycles in one period of a path walk of ``preset``: a weaving walk repeats every sway of two."""
    return 2 if EMOTIONS[preset][2] > 0 else 1


@functools.cache
def walk_loop(rig="procanim", preset="NEUTRAL", mode="IN_PLACE", cycles=1, **kw):
    sk, rm = human(rig)
    a, w, d = EMOTIONS[preset]
    params = PathWalkParams(style_amplitude=a, style_weight=w, style_direction=d, loop=mode, loop_cycles=cycles, **kw)
    return generate_path_walk(sk, rm, None, None, params)


@functools.cache
def duck_loop(rig="procanim", preset="NEUTRAL", mode="IN_PLACE", cycles=1, **kw):
    sk, rm = bird(rig)
    a, s, w, d = duck.PRESETS[preset][1]
    settings = {"amplitude": a, "speed": s, "weight": w, "direction": d, **kw}
    return duck.generate_duck_walk(sk, rm, duck.DuckParams(loop=mode, loop_cycles=cycles, **settings))


# ----------------------------------------------------------------------------- playing a loop


@dataclasses.dataclass
class Played:
    """A loop played ``loops`` times plus the first key of the next, as a Cycles modifier plays it:
    frames (F,), armature-space poses (F, B, 4, 4) with the object's motion, the same in the walker's
    frame (in place: carried along by the travel), the loop's CycleInfo and key count."""

    frames: np.ndarray
    pose: np.ndarray
    walker: np.ndarray
    info: CycleInfo
    keys: int


def play(sk, clip, loops=2) -> Played:
    info = cycle_of(clip)
    K = clip.frame_count
    index = np.append(np.tile(np.arange(K), loops), 0)
    turn = np.append(np.repeat(np.arange(loops), K), loops)
    locs, rots = clip.locations[index].copy(), clip.rotations[index].copy()
    offset = np.array(info.travel_offset)
    if info.travel_bone:  # REPEAT_OFFSET: each repetition starts where the last ended
        locs[:, clip.index(info.travel_bone)] += turn[:, None] * offset
    pose = sk.fk(locs, rots)
    if clip.object_locations is not None:
        obj_loc = clip.object_locations[index] + (turn[:, None] * offset if info.travel_role == "object" else 0.0)
        pose = tf.compose(obj_loc, clip.object_rotations[index])[:, None] @ pose
    frames = clip.frames[index] + turn * info.period_frames
    walker = pose.copy()
    if info.mode == "IN_PLACE":
        walker[:, :, :3, 3] += np.outer((frames - info.frame_start) / info.period_frames * info.travel_m,
                                        info.forward)[:, None]
    return Played(frames, pose, walker, info, K)


def joints(sk, pose, bones=None):
    """Heads and tails (F, 2B, 3) of ``bones`` (all by default)."""
    bones = np.arange(len(sk)) if bones is None else np.asarray(bones)
    return np.concatenate([pose[:, bones][:, :, :3, 3], sk.tails_of(pose)[:, bones]], axis=1)


def moving_bones(sk, clip, info):
    """Every bone but the root bone the loop keeps at rest or carries uniformly."""
    skip = {clip.index(info.travel_bone)} if info.travel_role == "root" else set()
    if info.mode == "IN_PLACE" and sk.has("root"):
        skip.add(sk.index("root"))
    return [b for b in range(len(sk)) if b not in skip]


def sole_points(sk, rm, pose):
    """(F, 6, 3) heel, ball and tip of both feet: points on the ground the rigs stand on (z = 0) under
    the ankle a third of the way back to the ball (carried by the foot bone), under the toe's head and
    under its tail (carried by the toe bone) — the test's own soles."""
    out = []
    for side in "LR":
        foot = sk.index(rm.get(f"foot.{side}"))
        toe = sk.index(rm.get(f"toe.{side}"))
        ankle, ball, tip = sk.heads[foot], sk.heads[toe], sk.tails[toe]
        heel = ankle - (ball - ankle) / 3
        for bone, point in ((foot, heel), (toe, ball), (toe, tip)):
            local = np.linalg.inv(sk.matrix_local[bone]) @ np.array([point[0], point[1], GROUND_Z, 1.0])
            out.append(np.einsum("fij,j->fi", pose[:, bone], local)[:, :3])
    return np.stack(out, axis=1)


def seam_skate(points, touching, frames, fps, K, steps=(-2, -1, 0, 1)):
    """Fastest horizontal slide (cm/s) of a point in contact at both ends of the key steps around the
    seam (key K is the next loop's first), and how many such samples there were."""
    fastest, samples = 0.0, 0
    for d in steps:
        i = K + d
        both = touching[i] & touching[i + 1]
        if np.any(both):
            step = (frames[i + 1] - frames[i]) / fps
            v = np.linalg.norm(points[i + 1, both, :2] - points[i, both, :2], axis=-1) / step
            fastest, samples = max(fastest, float(v.max()) * 100), samples + int(both.sum())
    return fastest, samples


def velocity_ratio(v, v_ref):
    """|v − v_ref| / max(|v_ref|, 0.1 m/s), per joint."""
    return np.linalg.norm(v - v_ref, axis=-1) / np.maximum(np.linalg.norm(v_ref, axis=-1), SLOW_M_S)


# ----------------------------------------------------------------------------- the path walk


@pytest.mark.parametrize("preset", list(EMOTIONS))
@pytest.mark.parametrize("mode", MODES)
def test_the_pose_one_loop_on_is_the_first_within_a_millimetre(preset, mode):
    sk, _ = human("procanim")
    clip = walk_loop("procanim", preset, mode)
    p = play(sk, clip, 1)
    travel = np.array(p.info.forward) * p.info.travel_m if mode == "ROOT_MOTION" else 0.0
    miss = joints(sk, p.pose[-1:]) - travel - joints(sk, p.pose[:1])
    assert np.linalg.norm(miss, axis=-1).max() * 1000 < SEAM_MM
    assert p.frames[-1] == p.info.frame_start + p.info.period_frames  # one key step after the last key


@functools.cache
def straight_walk(rig, preset):
    """The straight walk a loop of ``preset`` on ``rig`` is cut from (the plain path walk, uncut)."""
    sk, rm = human(rig)
    a, w, d = EMOTIONS[preset]
    p = PathWalkParams(style_amplitude=a, style_weight=w, style_direction=d, loop="IN_PLACE")
    char = read_character(sk, rm)
    settings, stride, style = effective_settings(p, char.leg_length)
    line = cycle.line_walk(char, p, settings, stride, style)
    return generate_path_walk(sk, rm, line.points, line.ground, line.params)


def uncut(sk, rig, preset, played, bones):
    """Heads and tails of ``bones`` in the uncut straight walk (F, J, 3) and the frame of it where the
    loop's first pose is (the same pose up to where it stands)."""
    walk = straight_walk(rig, preset)
    src = joints(sk, sk.fk(walk.locations, walk.rotations), bones)
    first = joints(sk, played.walker[:1], bones)[0]
    moved = src - src[:, :1] - (first - first[:1])  # relative to the first joint: where it stands taken off
    j = int(np.argmin(np.abs(moved).max(axis=(1, 2))))
    assert np.abs(moved[j]).max() < 1e-3  # the loop is a stretch of this walk
    return src, j


@pytest.mark.parametrize(("rig", "preset"), RIG_PRESETS)
@pytest.mark.parametrize("mode", MODES)
def test_velocity_across_the_seam_is_the_walks_velocity_there(rig, preset, mode):
    """Every joint's velocity over the key step into the seam and the one out of it is within 10 % of
    the velocity the straight walk the loop is cut from has there, uncut: its steps into and out of
    the frame one loop after the loop's first."""
    sk, _ = human(rig)
    clip = walk_loop(rig, preset, mode)
    p = play(sk, clip)
    bones = moving_bones(sk, clip, p.info)
    src, j = uncut(sk, rig, preset, p, bones)
    J = joints(sk, p.walker, bones)
    v, v_walk = np.diff(J, axis=0) * clip.fps, np.diff(src, axis=0) * clip.fps
    P = p.keys
    for seam, walk in ((P - 1, j + P - 1), (P, j + P)):
        assert velocity_ratio(v[seam], v_walk[walk]).max() < VELOCITY_RATIO


@pytest.mark.parametrize("preset", list(EMOTIONS))
@pytest.mark.parametrize("mode", MODES)
def test_the_motion_reaches_the_first_pose_one_loop_on_within_a_millimetre(preset, mode):
    """Under a Cycles modifier the key one loop on *is* the first pose (the test above); that the
    motion arrives there: the pose one loop on lies within 1 mm of the midpoint of the keys on either
    side of the seam, bent as the uncut walk bends there."""
    sk, _ = human("procanim")
    clip = walk_loop("procanim", preset, mode)
    p = play(sk, clip)
    bones = moving_bones(sk, clip, p.info)
    src, j = uncut(sk, "procanim", preset, p, bones)
    J, K = joints(sk, p.walker, bones), p.keys
    bend = src[j + K + 1] - 2 * src[j + K] + src[j + K - 1]
    assert np.linalg.norm(J[K] - (J[K - 1] + J[K + 1] - bend) / 2, axis=-1).max() * 1000 < SEAM_MM


@pytest.mark.parametrize("mode", MODES)
def test_more_cycles_are_the_cycle_repeated(mode):
    """A loop of three gait cycles is the one-cycle loop played three times (a steady walk's cycles
    are alike): the same keys each cycle, the travel three times the stride."""
    sk, _ = human("procanim")
    one, three = walk_loop("procanim", "NEUTRAL", mode), walk_loop("procanim", "NEUTRAL", mode, 3)
    a, b = cycle_of(one), cycle_of(three)
    assert (b.cycles, b.period_frames, b.frame_start) == (3, 3 * a.period_frames, a.frame_start)
    assert b.travel_m == pytest.approx(3 * a.travel_m) and b.cycle_stride_m == a.cycle_stride_m
    K = one.frame_count
    for k in range(3):
        np.testing.assert_allclose(np.abs(three.rotations[k * K:(k + 1) * K]), np.abs(one.rotations), atol=1e-12)
    p1, p3 = play(sk, one, 3), play(sk, three, 1)
    np.testing.assert_allclose(p3.walker[..., :3, 3], p1.walker[..., :3, 3], atol=1e-9)


@pytest.mark.parametrize(("rig", "preset"), RIG_PRESETS)
@pytest.mark.parametrize("mode", MODES)
def test_feet_in_contact_do_not_slide_across_the_seam(rig, preset, mode):
    sk, rm = human(rig)
    clip = walk_loop(rig, preset, mode)
    p = play(sk, clip)
    points = sole_points(sk, rm, p.walker)
    touching = np.abs(points[..., 2] - GROUND_Z) < CONTACT_M
    fastest, samples = seam_skate(points, touching, p.frames, clip.fps, p.keys)
    assert samples >= 6 and fastest < SKATE_CM_S
    # and the whole loop walks on planted feet in the walker's frame (the reported travel is the walk's)
    both = touching[1:] & touching[:-1]
    v = np.linalg.norm(np.diff(points[..., :2], axis=0), axis=-1)[both] * clip.fps * 100
    assert v.mean() < 1.0 and np.percentile(v, 95) < 3.0


def _left_footprints(sk, rm, played, fps):
    """Forward positions (m) of the left heel at each of its plants (mean over the plant's frames)."""
    heel = sole_points(sk, rm, played.walker)[:, 0]
    planted = np.abs(heel[:, 2] - GROUND_Z) < CONTACT_M
    planted[1:] &= np.linalg.norm(np.diff(heel[:, :2], axis=0), axis=-1) * fps < 0.01
    edges = np.flatnonzero(np.diff(planted.astype(int)) != 0) + 1
    runs = np.split(np.arange(len(heel)), edges)
    forward = np.array(played.info.forward)
    return [float(np.mean(heel[r] @ forward)) for r in runs if planted[r[0]] and len(r) >= 3]


@pytest.mark.parametrize(("rig", "preset"), RIG_PRESETS)
def test_root_motion_travels_stride_times_cycles_with_the_pelvis_about_the_root(rig, preset):
    sk, rm = human(rig)
    per_period = motion_cycles(preset)
    clip = walk_loop(rig, preset, "ROOT_MOTION", 2 * per_period)
    p = play(sk, clip, 1)
    info = p.info
    prints = _left_footprints(sk, rm, p, clip.fps)
    # the left foot's advance per gait cycle, inside the loop (over a whole sway for a weaving walk,
    # whose footprints turn with the sway)
    stride = (prints[per_period] - prints[0]) / per_period
    assert info.cycle_stride_m == pytest.approx(stride, abs=0.002)
    carrier = sk.index(info.travel_bone)
    carried = p.pose[:, carrier, :3, 3]
    assert np.linalg.norm(carried[-1] - carried[0] - np.array(info.forward) * stride * info.cycles) < 0.01
    hips = sk.index(rm.get("hips"))
    if carrier == hips:  # no root bone: the pelvis carries the travel, and the metrics say so
        assert info.travel_role == "hips" and clip.metrics["loop_travel_role"] == "hips"
        relative = p.pose[:, hips, :3, 3] - np.outer((p.frames - info.frame_start) / info.period_frames,
                                                     np.array(info.forward) * info.travel_m)
    else:
        assert info.travel_role == "root"
        relative = p.pose[:, hips, :3, 3] - carried
    at_periods = np.isin(p.frames, info.frame_start + info.cycle_frames * per_period * np.arange(3))
    assert at_periods.sum() == 3
    drift = relative[at_periods, :2] - relative[0, :2]
    assert np.linalg.norm(drift, axis=-1).max() * 100 < DRIFT_CM


def test_the_travel_bone_is_the_root_or_else_the_hips():
    assert cycle_of(walk_loop("procanim", "NEUTRAL", "ROOT_MOTION")).travel_bone == "root"
    assert cycle_of(walk_loop("rigify", "NEUTRAL", "ROOT_MOTION")).travel_bone == "root"
    info = cycle_of(walk_loop("metarig", "NEUTRAL", "ROOT_MOTION"))
    assert (info.travel_bone, info.travel_role) == ("spine", "hips")
    assert len(info.travel_channels) == 2  # the metarig's pelvis points up and back: two channels advance
    assert cycle_of(walk_loop("procanim", "NEUTRAL", "IN_PLACE")).travel_bone == ""


@pytest.mark.parametrize(("rig", "preset"), RIG_PRESETS)
def test_in_place_the_pelvis_stays_within_a_centimetre_over_a_cycle(rig, preset):
    sk, rm = human(rig)
    per_period = motion_cycles(preset)
    clip = walk_loop(rig, preset, "IN_PLACE", 2 * per_period)
    p = play(sk, clip, 1)
    hips = p.pose[:, sk.index(rm.get("hips")), :3, 3]
    at_cycles = np.isin(p.frames, p.info.frame_start + p.info.cycle_frames * per_period * np.arange(3))
    assert at_cycles.sum() == 3
    assert np.linalg.norm(hips[at_cycles, :2] - hips[0, :2], axis=-1).max() * 100 < DRIFT_CM
    # in place means in place: the pelvis keeps within 5 cm of its rest place, and the weave's sway
    rest = sk.heads[sk.index(rm.get("hips"))]
    sway = effects(*EMOTIONS[preset]).weave_legs * (rest[2] - GROUND_Z)
    assert np.linalg.norm(hips[:, :2] - rest[:2], axis=-1).max() < 0.05 + sway
    if sk.has("root") and rm.get("root"):
        root = p.pose[:, sk.index("root")]
        np.testing.assert_allclose(root, np.broadcast_to(sk.matrix_local[sk.index("root")], root.shape), atol=1e-9)


def test_in_place_and_root_motion_are_one_motion_in_the_walkers_frame():
    sk, _ = human("procanim")
    a, b = (play(sk, walk_loop("procanim", "JOY", mode)) for mode in MODES)
    bones = [i for i in range(len(sk)) if sk.names[i] != "root"]
    np.testing.assert_allclose(joints(sk, a.walker, bones), joints(sk, b.walker, bones), atol=1e-6)


def test_a_loop_is_whole_frames_of_whole_cycles_at_the_walks_pace():
    sk, rm = human("procanim")
    for fps in (24.0, 25.0, 30.0):
        clip = walk_loop("procanim", "NEUTRAL", "IN_PLACE", 3, fps=fps)
        info = cycle_of(clip)
        assert float(info.cycle_frames).is_integer() and info.period_frames == 3 * info.cycle_frames
        assert clip.frame_count == info.period_frames and np.all(np.diff(clip.frames) == 1)
        assert (info.frame_start, info.frame_end) == (1.0, info.frame_start + info.period_frames - 1)
        assert info.frame_range == (1.0, 1.0 + info.period_frames)
        # 100 steps/min: a cycle of 1.2 s, rounded to whole frames (at most half a frame off)
        assert abs(info.cycle_frames - 1.2 * fps) <= 0.5
        assert clip.metrics["cadence_spm"] == pytest.approx(120 * fps / info.cycle_frames)


def test_a_weaving_walk_loops_over_whole_sways():
    clip = walk_loop("procanim", "HAPPY_WANDERING", "IN_PLACE", 1)
    assert cycle_of(clip).cycles == 2 and clip.metrics["loop_cycles"] == 2
    sk, rm = human("procanim")
    p = play(sk, clip, 1)
    hips = p.pose[:, sk.index(rm.get("hips")), 0, 3]
    assert np.ptp(hips) > 0.08  # it still weaves (0.12 × 0.5 × 1.4 leg lengths each way)


def test_root_motion_on_the_object_keeps_the_bones_in_place():
    sk, _ = human("procanim")
    clip = walk_loop("procanim", "NEUTRAL", "ROOT_MOTION", root_motion="OBJECT")
    info = cycle_of(clip)
    assert info.travel_role == "object" and info.travel_bone == ""
    np.testing.assert_allclose(clip.object_locations[-1] - clip.object_locations[0],
                               np.array(info.forward) * info.travel_m * (1 - 1 / info.period_frames), atol=1e-9)
    same = walk_loop("procanim", "NEUTRAL", "IN_PLACE")
    np.testing.assert_allclose(clip.rotations, same.rotations, atol=1e-12)
    p, q = play(sk, clip), play(sk, same)
    np.testing.assert_allclose(p.pose[..., :3, 3], q.walker[..., :3, 3], atol=1e-9)


@pytest.mark.parametrize("mode", MODES)
def test_the_next_key_of_every_bone_turns_the_short_way(mode):
    """The closing key (the first key one loop on) lies in the same quaternion hemisphere as the last
    key, so that Blender's interpolation between them turns the short way."""
    for preset in EMOTIONS:
        for clip in (walk_loop("procanim", preset, mode), duck_loop("procanim", preset, mode)):
            assert np.all(np.sum(clip.rotations[-1] * clip.rotations[0], axis=-1) > 0)


def test_loop_none_is_the_path_walk():
    sk, rm = human("procanim")
    line = np.array([[0.0, 0.0, 0.0], [0.0, -3.0, 0.0]])
    plain = generate_path_walk(sk, rm, line, None, PathWalkParams())
    none = generate_path_walk(sk, rm, line, None, PathWalkParams(loop="NONE", loop_cycles=5))
    np.testing.assert_array_equal(plain.rotations, none.rotations)
    assert cycle_of(plain) is None and not any(k.startswith("loop_") for k in plain.metrics)


@pytest.mark.parametrize("kw, words", [({"loop": "PING_PONG"}, "loop must be one of"),
                                        ({"loop": "IN_PLACE", "loop_cycles": 0}, "Loop cycles"),
                                        ({"loop": "IN_PLACE", "loop_cycles": 1.5}, "whole number"),
                                        ({"loop": "IN_PLACE", "fps": 2.0}, "too short to loop")])
def test_bad_loop_settings_are_refused(kw, words):
    sk, rm = human("procanim")
    with pytest.raises(InputError, match=words):
        generate_path_walk(sk, rm, None, None, PathWalkParams(**kw))
    with pytest.raises(InputError, match=words):
        duck.generate_duck_walk(*bird("procanim"), duck.DuckParams(**kw))


def test_a_loop_reports_its_progress():
    probe = ProgressProbe()
    sk, rm = human("procanim")
    generate_path_walk(sk, rm, None, None, PathWalkParams(loop="IN_PLACE"), progress=probe)
    probe.assert_reported_a_whole_bake()
    probe = ProgressProbe()
    duck.generate_duck_walk(*bird("procanim"), duck.DuckParams(loop="ROOT_MOTION"), progress=probe)
    probe.assert_reported_a_whole_bake()


def test_the_metrics_say_what_the_loop_is():
    clip = walk_loop("procanim", "SAD", "ROOT_MOTION", 2)
    info = cycle_of(clip)
    assert CycleInfo.from_metrics(dict(clip.metrics)) == info
    m = clip.metrics
    assert m["loop_seam_position_mm"] < SEAM_MM and m["loop_seam_velocity_ratio"] < VELOCITY_RATIO
    assert m["loop_seam_skate_cm_s"] < SKATE_CM_S and m["loop_pelvis_drift_cm"] < DRIFT_CM
    assert 0 < m["loop_source_mismatch_mm"] < 5  # what the closing spread over the loop
    assert m["cycle_stride_m"] * 2 == pytest.approx(m["loop_travel_m"])
    assert all(isinstance(v, (int, float, str)) for v in m.values())


# ----------------------------------------------------------------------------- the duck walk


def _ankles(sk, rm, pose):
    """(F, 2, 3) both ankles (the foot bones' heads): the points the duck walk plants. With Direction
    above 0 the article turns the whole duck with its master's yaw, planted feet included: they turn
    about the planted ankle, so the toes sweep — the gait's, with or without a loop."""
    return np.stack([pose[:, sk.index(rm.get(f"foot.{s}")), :3, 3] for s in "LR"], axis=1)


@pytest.mark.parametrize("rig", list(BIRDS))
@pytest.mark.parametrize("preset", list(duck.PRESETS))
@pytest.mark.parametrize("mode", MODES)
def test_duck_loops_are_seamless(rig, preset, mode):
    """The duck's loop of two cycles is generated whole: its inner boundary is the uncut walk."""
    sk, rm = bird(rig)
    clip = duck_loop(rig, preset, mode, 2)
    p = play(sk, clip)
    info, K = p.info, p.keys
    travel = np.array(info.forward) * info.travel_m
    J = joints(sk, p.walker, moving_bones(sk, clip, info))
    assert np.linalg.norm(J[K] - J[0] - travel, axis=-1).max() * 1000 < SEAM_MM
    inner = int(np.flatnonzero(p.frames == info.frame_start + info.cycle_frames)[0])
    v = np.diff(J, axis=0) / np.diff(p.frames)[:, None, None] * clip.fps
    for seam, uncut in ((K - 1, inner - 1), (K, inner)):
        assert velocity_ratio(v[seam], v[uncut]).max() < VELOCITY_RATIO
    bend = J[inner + 1] - 2 * J[inner] + J[inner - 1]  # the walk's own curvature there, uncut
    assert np.linalg.norm(J[K] - (J[K - 1] + J[K + 1] - bend) / 2, axis=-1).max() * 1000 < SEAM_MM
    points = _ankles(sk, rm, p.walker)
    rest = np.array([sk.heads[sk.index(rm.get(f"foot.{s}"))][2] for s in "LR"])
    touching = np.abs(points[..., 2] - rest) < 1e-3
    fastest, samples = seam_skate(points, touching, p.frames, clip.fps, K)
    assert samples > 0 and fastest < SKATE_CM_S
    hips = sk.index(rm.get("hips"))
    at_cycles = np.isin(p.frames[:K + 1], info.frame_start + info.cycle_frames * np.arange(3))
    if mode == "IN_PLACE":
        pelvis = p.pose[:K + 1, hips, :3, 3]
    else:
        carried = p.pose[:K + 1, sk.index(info.travel_bone), :3, 3]
        pelvis = p.pose[:K + 1, hips, :3, 3] - (carried if info.travel_role == "root" else
                                                 np.outer((p.frames[:K + 1] - info.frame_start)
                                                          / info.period_frames, travel))
        assert np.linalg.norm(p.pose[K, sk.index(info.travel_bone), :3, 3]
                              - p.pose[0, sk.index(info.travel_bone), :3, 3] - travel) < 1e-9
    assert np.linalg.norm(pelvis[at_cycles, :2] - pelvis[0, :2], axis=-1).max() * 100 < DRIFT_CM


@pytest.mark.parametrize("preset", list(duck.PRESETS))
def test_a_duck_loop_travels_its_stride_per_cycle(preset):
    sk, rm = bird("procanim")
    clip = duck_loop("procanim", preset, "ROOT_MOTION", 2, key_interval=1)
    p = play(sk, clip, 1)
    ankle = p.pose[:, sk.index(rm.get("foot.L")), :3, 3]
    cf = int(p.info.cycle_frames)
    # the loop starts where the left foot lands (θ = 0): it stands still there and one cycle on
    assert np.abs(np.diff(ankle[[0, 1, cf, cf + 1]], axis=0)[[0, 2]]).max() < 1e-9
    stride = float((ankle[cf] - ankle[0]) @ np.array(p.info.forward))
    assert p.info.cycle_stride_m == pytest.approx(stride, abs=1e-6)
    assert p.info.cycle_stride_m == pytest.approx(clip.metrics["stride_m"], rel=1e-6)
    assert p.info.travel_bone == "root" and p.info.travel_channels == (1,)  # the duck's root points along +Y


def test_a_duck_cycle_is_a_whole_number_of_frames_and_keeps_the_key_interval():
    clip = duck_loop("procanim", "NEUTRAL", "IN_PLACE", 1, speed=7.0, key_interval=3)
    info = cycle_of(clip)
    assert info.cycle_frames == 17 and clip.metrics["loop_speed"] == pytest.approx(5 * 24 / 17)
    np.testing.assert_array_equal(clip.frames, np.arange(0, 17, 3))  # the bake adds the key at 17
    assert info.frame_range == (0.0, 17.0)
    with pytest.raises(InputError, match="Speed must be above 0"):
        duck.generate_duck_walk(*bird("procanim"), duck.DuckParams(loop="IN_PLACE", speed=0.0))


def test_the_closing_takes_a_steady_drift_out(monkeypatch):
    """A walk that drifts steadily (here 5 mm per loop, added to the hips' location) misses its first
    pose by that much one loop on; the closing spreads the miss over the loop, which takes a steady
    drift out entirely: the loop is the one the walk makes without it, up to where it stands."""
    sk, rm = bird("procanim")
    params = duck.DuckParams(loop="ROOT_MOTION", key_interval=1)
    clean = duck.generate_duck_walk(sk, rm, params)
    original = duck_cycle.cut_loop

    def drifting(skeleton, dense, frames, spec, contacts):
        f0, period = frames.keys[0], frames.keys[-2] - frames.keys[0]
        dense = dataclasses.replace(dense, locations=dense.locations.copy())
        dense.locations[:, skeleton.index("hips"), 0] += 0.005 * (dense.frames - f0) / period
        return original(skeleton, dense, frames, spec, contacts)

    monkeypatch.setattr(duck_cycle, "cut_loop", drifting)
    drifted = duck.generate_duck_walk(sk, rm, params)
    assert drifted.metrics["loop_source_mismatch_mm"] == pytest.approx(5.0, abs=0.01)
    a, b = (joints(sk, play(sk, c).pose) for c in (clean, drifted))
    apart = b - a
    assert np.abs(apart - apart[:1]).max() < 1e-9


def test_a_bird_without_a_root_bone_carries_the_travel_on_its_hips():
    clip = duck_loop("bird_metarig", "JOY", "ROOT_MOTION", 1)
    info = cycle_of(clip)
    assert (info.travel_bone, info.travel_role) == ("spine.003", "hips")
    assert clip.metrics["loop_travel_bone"] == "spine.003"


def test_root_motion_on_a_turned_object_advances_the_object_channels_along_its_heading():
    """Root motion OBJECT on an armature object turned 90° about z (and scaled 2×): the per-loop offset
    the bake's REPEAT_OFFSET takes is the object's location channels' (the travel composed with the
    object's transform, as the channels are), so the loop repeated goes on along the heading."""
    from procanim_addon.walk.spec import bake_call

    sk, rm = human("procanim")
    params = PathWalkParams(loop="ROOT_MOTION", loop_cycles=1, root_motion="OBJECT")
    turn = np.eye(4)
    turn[:3, :3] = 2.0 * np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    turn[:3, 3] = (3.0, -1.0, 0.5)
    clip = bake_call(sk, rm, None, None, params, turn, 2.0)[0]
    info = cycle_of(clip)
    channels = clip.object_locations
    step = channels[1] - channels[0]  # one key step of the object's channels
    offset = np.array(info.travel_offset)
    assert np.linalg.norm(offset) == pytest.approx(2.0 * info.travel_m, rel=1e-9)
    np.testing.assert_allclose(offset / np.linalg.norm(offset), step / np.linalg.norm(step), atol=1e-9)
    # the closing key continues the channels' uniform advance
    np.testing.assert_allclose(channels[0] + offset - channels[-1], step, atol=1e-9)
