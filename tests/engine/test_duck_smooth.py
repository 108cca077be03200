"""The planted duck walk is as smooth as the article's channels: what ProcAnim adds to them (the body
lowered where a leg could not reach, the foot gesture scaled down where the toes would touch the
ground) is decided once for the whole walk, so it puts no kink or jump into the motion.

Measured on the posed skeleton (``Skeleton.fk``) of walks baked on every frame at 240 fps — ten
frames per phase step of a 24 fps bake — on ProcAnim's duck and on Rigify's bird metarig, whose legs
are short for the article's light bounce. Expected values come from the article's formulas written
out here (the bounce a·sin 2θ, the foot pitch max(0, −g·a·sin θ/2)), not from the engine.
"""

from __future__ import annotations

import functools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import duck, rigs
from procanim_addon import transforms as tf
from procanim_addon.rig_roles import detect
from procanim_addon.skeleton import Skeleton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import rig_samples  # noqa: E402

FPS = 240.0
FRAMES = 480  # two gait cycles at Speed 5
LIGHT = ("JOY", "HAPPY_WANDERING")


def _bird_metarig():
    bones, _ = rig_samples.rigify_bird()
    sk = Skeleton.from_bones(rig_samples.bone_dicts(bones))
    return sk, detect(sk.names, {b["name"]: b["parent"] for b in bones}, skeleton=sk)


BIRDS = {"procanim": rigs.duck_skeleton, "bird_metarig": _bird_metarig}


@functools.cache
def bird(name):
    return BIRDS[name]()


@functools.cache
def fine_walk(rig: str, preset: str, gait: str = "PLANTED"):
    """(skeleton, rigmap, params, clip, pose) of a preset's walk keyed on every frame at 240 fps."""
    sk, rm = bird(rig)
    a, s, w, d = duck.PRESETS[preset][1]
    params = duck.DuckParams(amplitude=a, speed=s, weight=w, direction=d, gait=gait, fps=FPS,
                             frame_end=FRAMES, key_interval=1)
    clip = duck.generate_duck_walk(sk, rm, params)
    return sk, rm, params, clip, sk.fk(clip.locations, clip.rotations)


def phase(params, clip) -> np.ndarray:
    return (clip.frames - params.frame_start) * params.s * 2.0 * math.pi / params.fps


@pytest.mark.parametrize("rig", list(BIRDS))
@pytest.mark.parametrize("preset", LIGHT)
def test_a_light_ducks_body_never_moves_faster_than_the_articles_bounce(rig, preset):
    """The body comes down for the legs' reach the same way on every frame: not on the frames a
    planted leg is short only, nor up again the frame its foot lifts."""
    sk, rm, p, clip, pose = fine_walk(rig, preset)
    u = p.unit_per_leg * clip.metrics["leg_length_m"]
    bounce = (1.0 - p.w) / p.q_a * u  # the article's bounce: (1 − w)·sin 2θ / q_a units
    fastest = bounce * 2.0 * np.max(np.abs(np.diff(phase(p, clip))))  # its largest change in one frame
    z = pose[:, sk.index(rm.get("hips")), 2, 3]
    assert np.abs(np.diff(z)).max() <= fastest * 1.0001 + 1e-9, (
        f"the body moves {np.abs(np.diff(z)).max() * 1000:.2f} mm in a frame; the bounce {fastest * 1000:.2f} mm")


@pytest.mark.parametrize("rig", list(BIRDS))
@pytest.mark.parametrize("preset", LIGHT)
def test_a_light_ducks_bounce_keeps_the_articles_shape(rig, preset):
    """The body's height is still a sine of twice the phase in phase with the article's (only its top
    is lower), so a key every 3 frames describes it as well as the article's own bounce."""
    sk, rm, p, clip, pose = fine_walk(rig, preset)
    theta = phase(p, clip)
    z = pose[:, sk.index(rm.get("hips")), 2, 3]
    basis = np.stack([np.ones_like(theta), np.sin(2 * theta), np.cos(2 * theta)], axis=1)
    coef, *_ = np.linalg.lstsq(basis, z, rcond=None)
    assert np.abs(basis @ coef - z).max() < 1e-7
    assert coef[1] >= 0.0 and abs(coef[2]) < 1e-7


@pytest.mark.parametrize("rig", list(BIRDS))
@pytest.mark.parametrize("preset", list(duck.PRESETS))
def test_both_legs_reach_their_ankle_targets_on_every_frame(rig, preset):
    """Stance and swing: the ankle is where the gait puts it (held in stance, the article's lift in the
    swing), with each hip–ankle distance within the reach margin of the leg."""
    sk, rm, p, clip, pose = fine_walk(rig, preset)
    u = p.unit_per_leg * clip.metrics["leg_length_m"]
    channels = duck.article_channels(p, phase(p, clip))
    for side in "LR":
        thigh, shin, foot = (sk.index(rm.get(f"{r}.{side}")) for r in ("thigh", "shin", "foot"))
        ankle = pose[:, foot, :3, 3]
        lift = ankle[:, 2] - sk.heads[foot, 2]
        np.testing.assert_allclose(lift, channels[f"foot_lift_{side}"] * u, atol=1e-7)
        reach = np.linalg.norm(ankle - pose[:, thigh, :3, 3], axis=-1) / (sk.lengths[thigh] + sk.lengths[shin])
        assert reach.max() <= duck.REACH_MARGIN + 1e-4, (side, reach.max())


def _foot_pitch_deg(sk, rm, p, clip, pose, side):
    """The foot's pitch (deg) about the character's left as the master turns it, from the posed foot."""
    foot = sk.index(rm.get(f"foot.{side}"))
    master = duck.article_channels(p, phase(p, clip))["master_yaw"]
    m_rot = tf.quat_from_axis_angle(np.broadcast_to([0.0, 0.0, 1.0], (len(master), 3)), np.radians(master))
    rest = tf.mat3_to_quat(sk.matrix_local[foot, :3, :3])
    unpitched = tf.quat_mul(m_rot, np.broadcast_to(rest, m_rot.shape))
    q = tf.quat_mul(tf.mat3_to_quat(pose[:, foot, :3, :3]), tf.quat_conj(unpitched))
    return np.degrees(2.0 * np.arctan2(np.linalg.norm(q[:, 1:], axis=-1), np.abs(q[:, 0])))


@pytest.mark.parametrize("rig", list(BIRDS))
@pytest.mark.parametrize("preset", list(duck.PRESETS))
def test_the_foot_pitch_is_the_articles_scaled_by_one_factor_for_the_walk(rig, preset):
    """The toes' clearance scales the article's foot pitch (and toe curl) down by one factor for the
    whole walk: a factor found frame by frame changes within a swing, and bends the foot's curve."""
    sk, rm, p, clip, pose = fine_walk(rig, preset)
    article = duck.article_channels(p, phase(p, clip))
    ratios = []
    for side in "LR":
        pitch = _foot_pitch_deg(sk, rm, p, clip, pose, side)
        want = article[f"foot_pitch_{side}"]
        swing = want > 0.05 * want.max()
        ratios.append(pitch[swing] / want[swing])
    ratios = np.concatenate(ratios)
    assert 0.0 < ratios.min() and np.ptp(ratios) < 1e-6, (ratios.min(), ratios.max())


@pytest.mark.parametrize("rig", list(BIRDS))
@pytest.mark.parametrize("preset", list(duck.PRESETS))
def test_the_toes_clear_the_ground_on_every_frame_of_the_swing(rig, preset):
    """Issue 26: the toe tip (and the foot's tail) rises at least TOE_CLEARANCE of the ankle's lift."""
    sk, rm, p, clip, pose = fine_walk(rig, preset)
    for side in "LR":
        foot, toe = sk.index(rm.get(f"foot.{side}")), sk.index(rm.get(f"toe.{side}"))
        lift = pose[:, foot, 2, 3] - sk.heads[foot, 2]
        lowest = np.min([pose[:, b, 2, 3] + pose[:, b, 2, 1] * sk.lengths[b] - sk.tails[b, 2] for b in (foot, toe)],
                        axis=0)
        swing = lift > 1e-9
        assert np.all(lowest[swing] >= duck.TOE_CLEARANCE * lift[swing] - 1e-7), (
            side, float((lowest - duck.TOE_CLEARANCE * lift)[swing].min()))


@pytest.mark.parametrize("preset", list(duck.PRESETS))
def test_the_article_gait_is_left_as_it_was(preset):
    """Gait ARTICLE keeps its frame-by-frame checks (its channels are the article's, verbatim)."""
    sk, rm, p, clip, pose = fine_walk("procanim", preset, "ARTICLE")
    z = pose[:, sk.index(rm.get("hips")), 2, 3]
    u = p.unit_per_leg * clip.metrics["leg_length_m"]
    article = sk.heads[sk.index(rm.get("hips")), 2] + duck.article_channels(p, phase(p, clip))["body_height"] * u
    lowered = z < article - 1e-9
    assert np.all(z <= article + 1e-9) and clip.metrics["reach_clamped_frames"] == int(lowered.sum())


@pytest.mark.parametrize("rig", list(BIRDS))
def test_a_key_gets_the_same_pose_whichever_frames_are_keys(rig):
    """The whole-walk choices come from the gait cycle, not from the keys: a walk keyed on every frame
    (as a loop is before it is cut) and one keyed every 3 frames agree on their common frames."""
    sk, rm = bird(rig)
    a, s, w, d = duck.PRESETS["HAPPY_WANDERING"][1]
    every, third = (duck.generate_duck_walk(sk, rm, duck.DuckParams(amplitude=a, speed=s, weight=w, direction=d,
                                                                      frame_end=48, key_interval=k)) for k in (1, 3))
    rows = np.searchsorted(every.frames, third.frames)
    np.testing.assert_allclose(every.locations[rows], third.locations, atol=1e-12)
    np.testing.assert_allclose(every.rotations[rows], third.rotations, atol=1e-12)


@pytest.mark.parametrize("rig", list(BIRDS))
def test_the_figures_say_how_far_the_body_came_down(rig):
    sk, rm, p, clip, pose = fine_walk(rig, "JOY")
    u = p.unit_per_leg * clip.metrics["leg_length_m"]
    hips = sk.index(rm.get("hips"))
    article = sk.heads[hips, 2] + duck.article_channels(p, phase(p, clip))["body_height"] * u
    lowered = article - pose[:, hips, 2, 3]
    assert clip.metrics["bounce_lowered_cm"] == pytest.approx(lowered.max() * 100, abs=1e-9)
    assert clip.metrics["reach_clamped_frames"] == int(np.sum(lowered > 1e-9)) > 0
    assert fine_walk(rig, "SAD")[3].metrics["bounce_lowered_cm"] == 0.0
