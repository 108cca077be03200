"""Style on the human walk (the duck article's presets carried over, walk/style.py), measured on the
FK of the clip: Sad walks with a lower head, shorter steps, a lower cadence and less arm swing than
Neutral; Joy bounces more and swings its arms more; Happy-wandering weaves."""

import dataclasses

import numpy as np
import pytest

from procanim_addon.errors import InputError
from procanim_addon.ground import FlatGround
from procanim_addon.rigs import human_skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk
from procanim_addon.walk.character import read_character
from procanim_addon.walk.gait_stats import gait_statistics
from procanim_addon.walk.style import EMOTIONS, effects

LINE = np.array([[0.0, 0.0, 0.0], [0.0, -11.0, 0.0]])


@pytest.fixture(scope="module")
def walks():
    sk, rm = human_skeleton(1.7)
    char = read_character(sk, rm)
    out = {}
    for name, (a, w, d) in EMOTIONS.items():
        clip = generate_path_walk(sk, rm, LINE, FlatGround(),
                                  PathWalkParams(style_amplitude=a, style_weight=w, style_direction=d))
        pose = sk.fk(clip.locations, clip.rotations)
        stats = gait_statistics(sk, rm, pose, char, FlatGround(), clip.fps)
        head = pose[:, sk.index("head")]
        walking = slice(len(pose) // 4, 3 * len(pose) // 4)
        stats["head_z"] = float(np.mean(head[walking, 2, 3]))
        # the head's forward axis below the horizon (degrees, + = looking down)
        fwd = np.einsum("fij,j->fi", head[walking, :3, :3] @ np.linalg.inv(sk.matrix_local[sk.index("head")][:3, :3]),
                        char.forward)
        stats["head_down_deg"] = float(np.degrees(np.mean(np.arcsin(-fwd[:, 2]))))
        stats["bounce_cm"] = clip.metrics["com_vertical_travel_cm"]
        stats["sway_cm"] = clip.metrics["pelvis_deviation_mean_cm"]
        out[name] = stats
    return out


def test_the_presets_are_the_articles():
    assert EMOTIONS == {"NEUTRAL": (5.0, 5.0, 0.0), "JOY": (5.0, 1.0, 0.0), "HAPPY_WANDERING": (7.0, 1.0, 5.0),
                        "SAD": (3.0, 9.0, 0.0)}


def test_neutral_is_the_plain_walk():
    fx = effects(*EMOTIONS["NEUTRAL"])
    assert (fx.stride, fx.cadence, fx.arm_swing, fx.bounce) == pytest.approx((1.0, 1.0, 1.0, 1.0))
    assert (fx.sit_legs, fx.head_pitch_deg, fx.chest_pitch_deg, fx.weave_legs) == (0.0, 0.0, 0.0, 0.0)
    sk, rm = human_skeleton()
    plain = generate_path_walk(sk, rm, LINE, FlatGround(), PathWalkParams())
    styled = generate_path_walk(sk, rm, LINE, FlatGround(), PathWalkParams(style_amplitude=5, style_weight=5))
    np.testing.assert_array_equal(plain.rotations, styled.rotations)


def test_sad_walks_with_a_lower_head_shorter_steps_a_lower_cadence_and_less_arm_swing(walks):
    sad, neutral = walks["SAD"], walks["NEUTRAL"]
    assert sad["head_z"] < neutral["head_z"] - 0.01
    assert sad["head_down_deg"] > neutral["head_down_deg"] + 10
    assert sad["step_length_per_leg"] < 0.93 * neutral["step_length_per_leg"]
    assert sad["cadence_spm"] < 0.97 * neutral["cadence_spm"]
    assert sad["arm_swing_deg"] < 0.7 * neutral["arm_swing_deg"]


def test_joy_bounces_more_and_swings_its_arms_more(walks):
    joy, neutral = walks["JOY"], walks["NEUTRAL"]
    assert joy["bounce_cm"] > 1.2 * neutral["bounce_cm"]
    assert joy["arm_swing_deg"] > 1.2 * neutral["arm_swing_deg"]
    assert joy["head_down_deg"] <= neutral["head_down_deg"]


def test_happy_wandering_weaves_about_the_path(walks):
    assert walks["HAPPY_WANDERING"]["sway_cm"] > walks["JOY"]["sway_cm"] + 1.0


def test_style_sliders_out_of_range_are_refused():
    for name in ("style_amplitude", "style_weight", "style_direction"):
        with pytest.raises(InputError):
            dataclasses.replace(PathWalkParams(), **{name: 11.0}).validate()
