"""Duck walk engine (the "Le Quack Walker" article), checked against the article's formulas written out here."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import duck, rigs
from procanim_addon.errors import InputError, MissingRoles
from procanim_addon.progress import Cancelled
from procanim_addon.rig_roles import RigMap

sys.path.insert(0, str(Path(__file__).resolve().parent))
from progress_probe import ProgressProbe  # noqa: E402


@pytest.fixture(scope="module")
def rig():
    return rigs.duck_skeleton()


def walk(rig, **kw):
    sk, rm = rig
    params = duck.DuckParams(**kw)
    clip = duck.generate_duck_walk(sk, rm, params)
    return sk, clip, sk.fk(clip.locations, clip.rotations)


def test_lift_divisor_follows_weight():
    assert [duck.DuckParams(weight=w).q_a for w in (0, 2.4, 2.5, 7.4, 7.5, 10)] == [1, 1, 2, 2, 3, 3]


def test_article_channels_match_the_formulas_at_sample_phases():
    p = duck.DuckParams(amplitude=7, weight=3, direction=4)
    a, w, d = 1.4, 0.3, 0.4
    for th in (0.0, 0.7, 2.0, 4.4):
        c = duck.article_channels(p, np.array([th]))
        assert c["foot_lift_L"][0] == pytest.approx(max(0.0, -a * math.sin(th) / 2))
        assert c["foot_lift_R"][0] == pytest.approx(max(0.0, -a * math.sin(th + math.pi) / 2))
        assert c["foot_fore_L"][0] == pytest.approx(a * math.cos(th) / 0.9)
        assert c["body_height"][0] == pytest.approx(math.cos(w * math.pi) / 2 + (1 - w) * math.sin(2 * th) / 2)
        assert c["body_yaw"][0] == pytest.approx(-w * 20 * a * math.cos(th))
        assert c["master_yaw"][0] == pytest.approx(20 * a * d * a * math.sin(th))
        assert c["neck_lateral"][0] == pytest.approx(w * 20 * a * math.cos(th) / 40)


def test_right_foot_is_a_true_half_cycle_behind_at_any_speed():
    for speed in (2.0, 5.0, 8.0):
        p = duck.DuckParams(speed=speed)
        th = np.linspace(0, 4 * np.pi, 97)
        c = duck.article_channels(p, th)
        half = duck.article_channels(p, th + np.pi)
        np.testing.assert_allclose(c["foot_lift_R"], half["foot_lift_L"], atol=1e-12)


def test_stance_foot_does_not_slide_in_the_planted_gait(rig):
    for direction in (0.0, 10.0):
        sk, clip, pose = walk(rig, key_interval=1, direction=direction)
        assert clip.metrics["skate_mean_cm_s"] < 0.01
        assert clip.metrics["penetration_max_cm"] < 0.01


def test_article_gait_skates_and_planted_does_not(rig):
    _, art, _ = walk(rig, gait="ARTICLE", key_interval=1)
    _, planted, _ = walk(rig, gait="PLANTED", key_interval=1)
    assert art.metrics["skate_mean_cm_s"] > 1.0 > planted.metrics["skate_mean_cm_s"]


def test_amplitude_5_strides_about_one_leg_length(rig):
    _, clip, _ = walk(rig)
    assert clip.metrics["stride_m"] == pytest.approx(clip.metrics["leg_length_m"], rel=0.05)


def test_same_sliders_look_alike_on_any_duck_size():
    small = duck.generate_duck_walk(*rigs.duck_skeleton(0.3), duck.DuckParams())
    big = duck.generate_duck_walk(*rigs.duck_skeleton(1.2), duck.DuckParams())
    np.testing.assert_allclose(big.rotations, small.rotations, atol=1e-9)
    np.testing.assert_allclose(big.locations, small.locations * 4.0, atol=1e-9)


def test_weight_1_sits_higher_and_bounces_more_than_weight_9(rig):
    sk = rig[0]
    hips = sk.index("hips")
    z = {w: walk(rig, weight=w, key_interval=1)[2][:, hips, 2, 3] for w in (1.0, 9.0)}
    assert z[1.0].mean() > z[9.0].mean()
    assert np.ptp(z[1.0]) > np.ptp(z[9.0])


def test_speed_0_stands_still(rig):
    sk, clip, pose = walk(rig, speed=0.0)
    assert np.ptp(pose[:, sk.index("root"), :3, 3], axis=0).max() < 1e-12


def test_every_value_is_finite_at_slider_extremes(rig):
    for a in (0.0, 10.0):
        for s in (0.0, 10.0):
            for w in (0.0, 10.0):
                for d in (0.0, 10.0):
                    _, clip, _ = walk(rig, amplitude=a, speed=s, weight=w, direction=d)
                    assert clip.is_finite()


def test_a_rotation_gain_of_0_turns_nothing_and_stays_finite(rig):
    """g = 0 is within its limits; the neck's sway (neck yaw / 2g) is then the gain-free w·a·cos θ / 2."""
    sk, clip, pose = walk(rig, rotation_gain_deg=0.0, direction=10.0)
    assert clip.is_finite()
    rest_yaw = np.arctan2(sk.matrix_local[sk.index("hips"), 1, 0], sk.matrix_local[sk.index("hips"), 0, 0])
    yaw = np.arctan2(pose[:, sk.index("hips"), 1, 0], pose[:, sk.index("hips"), 0, 0])
    assert np.abs(yaw - rest_yaw).max() < 1e-9


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"frame_end": 0}, "End frame"),
        ({"fps": 0}, "Frames per second"),
        ({"key_interval": 0}, "Key interval"),
        ({"speed": 11}, "Speed"),
        ({"direction": -1}, "Direction"),
        ({"gait": "MOONWALK"}, "Gait"),
    ],
)
def test_bad_parameters_raise_a_readable_error(rig, kw, words):
    with pytest.raises(InputError, match=words):
        duck.generate_duck_walk(*rig, duck.DuckParams(**kw))


def test_missing_leg_roles_are_named(rig):
    sk, rm = rig
    partial = RigMap({k: v for k, v in rm.roles.items() if not k.endswith(".R")}, rig_name="Duck")
    with pytest.raises(MissingRoles, match=r"thigh\.R.*shin\.R.*foot\.R"):
        duck.generate_duck_walk(sk, partial, duck.DuckParams())


# ---- the generator contract: progress and Esc


def test_a_bake_reports_its_progress_at_least_twenty_times_up_to_one(rig):
    probe = ProgressProbe()
    duck.generate_duck_walk(*rig, duck.DuckParams(), progress=probe)
    probe.assert_reported_a_whole_bake()


def test_a_long_bake_reports_once_per_step_of_every_chunk_of_keys(rig):
    probe = ProgressProbe()
    params = duck.DuckParams(frame_end=9000, key_interval=1)
    duck.generate_duck_walk(*rig, params, progress=probe)
    chunks = -(-len(params.key_frames()) // duck.CHUNK_KEYS)
    assert chunks >= 4 and len(probe.seen) >= chunks * len(duck.STEPS)
    probe.assert_reported_a_whole_bake()


@pytest.mark.parametrize("k", [1, 9, 19])
def test_esc_during_report_k_cancels_at_report_k_plus_one(rig, k):
    probe = ProgressProbe(cancel_at=k)
    with pytest.raises(Cancelled):
        duck.generate_duck_walk(*rig, duck.DuckParams(), progress=probe)
    assert probe.calls == k + 1
