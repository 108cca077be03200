"""The duck walk baked in Blender: channels, frame range, the article's formulas (the "Le Quack Walker" article)
on the evaluated pose, planted feet, presets that read differently, and bad input refused.

Expected values are computed here from the article's formulas, not taken from the engine.
"""

from __future__ import annotations

import math

import bpy
import harness
import numpy as np
import pytest

UNIT_PER_LEG = 0.225  # documented scale: u = 0.225 × leg length (README, "Duck walk")


def add_duck(name="Duck"):
    assert bpy.ops.procanim.add_duck(name=name) == {"FINISHED"}
    return bpy.data.objects[name]


def leg_length(obj) -> float:
    """Rest hip height above the soles, measured on the Blender bones."""
    b = obj.data.bones
    hip_z = 0.5 * (b["thigh.L"].head_local.z + b["thigh.R"].head_local.z)
    sole_z = min(b[n].tail_local.z for n in ("toe.L", "toe.R", "foot.L", "foot.R"))
    return hip_z - sole_z


def head(pose, name):
    return pose[name][:3, 3]


def yaw_deg(matrix, rest_matrix):
    """Rotation about Z between a rest and a posed bone matrix (degrees)."""
    r = matrix[:3, :3] @ rest_matrix[:3, :3].T
    return math.degrees(math.atan2(r[1, 0], r[0, 0]))


def article(theta, a, w, q_a):
    """The article's channels (its own units) at phase θ."""
    return {
        "lift_L": max(0.0, -a * math.sin(theta) / q_a),
        "lift_R": max(0.0, -a * math.sin(theta + math.pi) / q_a),
        "body_height": math.cos(w * math.pi) / 2 + (1 - w) * math.sin(2 * theta) / q_a,
        "body_yaw": -w * 20.0 * a * math.cos(theta),
    }


def test_channels_frame_range_and_key_interval():
    duck = add_duck()
    assert bpy.ops.procanim.duck_walk(armature=duck.name, frame_start=10, frame_end=58, key_interval=4) == {"FINISHED"}
    action = duck.animation_data.action
    fcurves = harness.fcurve_map(action, duck)
    keyed_bones = {path.split('"')[1] for path, _ in fcurves}
    assert {"root", "hips", "tail", "neck", "thigh.L", "shin.L", "foot.L", "toe.L", "thigh.R", "foot.R"} <= keyed_bones
    assert "head" not in keyed_bones  # the article keys no head control
    assert ('pose.bones["hips"].location', 2) in fcurves
    assert ('pose.bones["thigh.L"].rotation_quaternion', 0) in fcurves
    for fc in fcurves.values():
        frames = harness.keyframes(fc)[:, 0]
        np.testing.assert_array_equal(frames, np.arange(10, 59, 4))
    assert action.procanim.generator == "duck_walk"
    metrics = __import__("json").loads(action.procanim.metrics_json)
    assert metrics["keys"] == 13 and metrics["frame_start"] == 10 and metrics["frame_end"] == 58


def test_article_formulas_on_the_evaluated_pose():
    """Gait ARTICLE: master speed, body bounce, body yaw and foot lift equal the article's formulas."""
    duck = add_duck()
    amplitude, speed, weight = 5.0, 5.0, 5.0
    a, s, w, q_a = amplitude / 5, speed / 5, weight / 10, 2.0
    assert bpy.ops.procanim.duck_walk(
        armature=duck.name,
        gait="ARTICLE",
        amplitude=amplitude,
        speed=speed,
        weight=weight,
        direction=0.0,
        key_interval=3,
    ) == {"FINISHED"}
    u = UNIT_PER_LEG * leg_length(duck)
    rest = {b.name: np.array(b.matrix_local) for b in duck.data.bones}
    for frame in (0, 6, 15, 27, 42, 60):
        theta = frame * s * 2 * math.pi / 24.0
        exp = article(theta, a, w, q_a)
        pose = harness.evaluated_pose(duck, frame)
        forward = frame / 3.0 * s * a / q_a * u  # master: s·a/q_a per 3 frames, toward −Y
        np.testing.assert_allclose(head(pose, "root"), rest["root"][:3, 3] + [0, -forward, 0], atol=1e-5)
        hips_rise = head(pose, "hips")[2] - rest["hips"][2, 3]
        assert hips_rise == pytest.approx(exp["body_height"] * u, abs=1e-5)
        assert yaw_deg(pose["hips"], rest["hips"]) == pytest.approx(exp["body_yaw"], abs=1e-3)
        for side in "LR":
            lift = head(pose, f"foot.{side}")[2] - rest[f"foot.{side}"][2, 3]
            assert lift == pytest.approx(exp[f"lift_{side}"] * u, abs=1e-4), (frame, side)


def test_feet_on_the_ground_in_stance_lifted_in_swing_and_planted():
    duck = add_duck()
    assert bpy.ops.procanim.duck_walk(armature=duck.name, key_interval=1, frame_end=72) == {"FINISHED"}
    rest_z = duck.data.bones["foot.L"].head_local.z
    track = np.array([head(harness.evaluated_pose(duck, f), "foot.L") for f in range(0, 73)])
    theta = np.arange(0, 73) * 2 * math.pi / 24.0
    stance = np.sin(theta) >= 0
    assert np.all(np.abs(track[stance, 2] - rest_z) < 1e-4), "stance foot must stay on the ground"
    u = UNIT_PER_LEG * leg_length(duck)
    assert np.max(track[~stance, 2] - rest_z) == pytest.approx(0.5 * u, rel=0.02), "swing foot lifts a·u/q_a"
    # planted: within one stance interval the foot does not slide (< 1 mm)
    first = np.nonzero(stance[:13])[0]
    spread = np.ptp(track[first, :2], axis=0)
    assert np.all(spread < 1e-3), spread
    assert track[-1, 1] < track[0, 1] - 0.3, "the duck walks forward (−Y)"


def test_weight_1_bounces_higher_and_sits_higher_than_weight_9():
    results = {}
    for weight in (1.0, 9.0):
        harness.reset_scene()
        duck = add_duck()
        assert bpy.ops.procanim.duck_walk(armature=duck.name, weight=weight, key_interval=1, frame_end=48) == {
            "FINISHED"
        }
        z = np.array([head(harness.evaluated_pose(duck, f), "hips")[2] for f in range(0, 48)])
        results[weight] = (z.mean(), np.ptp(z))
    assert results[1.0][0] > results[9.0][0]
    assert results[1.0][1] > results[9.0][1]


def test_direction_0_gives_no_yaw_and_direction_10_does():
    duck = add_duck()
    assert bpy.ops.procanim.duck_walk(armature=duck.name, direction=0.0) == {"FINISHED"}
    rest = np.array(duck.data.bones["root"].matrix_local)
    yaws = [yaw_deg(harness.evaluated_pose(duck, f)["root"], rest) for f in range(0, 25, 3)]
    assert max(abs(y) for y in yaws) < 1e-6
    assert bpy.ops.procanim.duck_walk(armature=duck.name, direction=10.0) == {"FINISHED"}
    yaws = [yaw_deg(harness.evaluated_pose(duck, f)["root"], rest) for f in range(0, 25, 3)]
    assert max(abs(y) for y in yaws) > 5.0


def test_rerun_replaces_its_bake_and_keeps_the_users_action():
    duck = add_duck()
    mine = bpy.data.actions.new("MyHandKeys")
    duck.animation_data_create().action = mine
    assert bpy.ops.procanim.duck_walk(armature=duck.name) == {"FINISHED"}
    baked = duck.animation_data.action
    assert baked != mine and mine.use_fake_user and baked.procanim.previous_action == "MyHandKeys"
    n_before = len(harness.fcurves_of(baked, duck))
    assert bpy.ops.procanim.duck_walk(armature=duck.name, weight=9.0) == {"FINISHED"}
    assert duck.animation_data.action == baked, "a re-run rewrites its own bake"
    assert len(harness.fcurves_of(baked, duck)) == n_before, "and does not stack F-curves"
    assert len([a for a in bpy.data.actions if a.procanim.generator == "duck_walk"]) == 1


def test_euler_rotation_mode_is_respected():
    duck = add_duck()
    assert bpy.ops.procanim.duck_walk(armature=duck.name, direction=10.0) == {"FINISHED"}
    quat_pose = {f: harness.evaluated_pose(duck, f) for f in (0, 9, 30)}
    for pb in duck.pose.bones:
        pb.rotation_mode = "YZX"
    assert bpy.ops.procanim.duck_walk(armature=duck.name, direction=10.0) == {"FINISHED"}
    paths = {path for path, _ in harness.fcurve_map(duck.animation_data.action, duck)}
    assert 'pose.bones["hips"].rotation_euler' in paths
    assert not any("rotation_quaternion" in p for p in paths)
    for f, expected in quat_pose.items():
        pose = harness.evaluated_pose(duck, f)
        for name in ("hips", "thigh.L", "foot.R", "neck"):
            np.testing.assert_allclose(pose[name], expected[name], atol=1e-4)


def test_works_on_rigify_bird_metarig():
    import addon_utils

    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_bird_metarig_add()
    bird = bpy.context.object
    assert bpy.ops.procanim.detect_rig(armature=bird.name) == {"FINISHED"}
    assert bpy.ops.procanim.duck_walk(armature=bird.name, key_interval=1, frame_end=48) == {"FINISHED"}
    rest_z = bird.data.bones["foot.L"].head_local.z
    z = np.array([head(harness.evaluated_pose(bird, f), "foot.L")[2] for f in range(0, 48)])
    assert np.min(z) > rest_z - 1e-4 and np.max(z) > rest_z + 0.003
    y = head(harness.evaluated_pose(bird, 47), "spine.003")[1]
    assert y < bird.data.bones["spine.003"].head_local.y - 0.02, "the bird walks forward"


def test_presets_override_the_sliders():
    duck = add_duck()
    assert bpy.ops.procanim.duck_walk(armature=duck.name, preset="SAD", weight=1.0) == {"FINISHED"}
    sad = harness.evaluated_pose(duck, 30)["hips"][2, 3]
    assert bpy.ops.procanim.duck_walk(armature=duck.name, preset="JOY", weight=9.0) == {"FINISHED"}
    joy = harness.evaluated_pose(duck, 30)["hips"][2, 3]
    assert joy > sad


# ------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"frame_start": 50, "frame_end": 50}, "End frame"),
        ({"fps": 0.0}, "Frames per second"),
        ({"key_interval": 0}, "Key interval"),
        ({"amplitude": 50.0}, "Amplitude"),
        ({"weight": float("nan")}, "Weight"),
    ],
)
def test_bad_settings_cancel_with_a_message_and_change_nothing(kwargs, message):
    duck = add_duck()
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.procanim.duck_walk(armature=duck.name, **kwargs)
    assert duck.animation_data is None or duck.animation_data.action is None
    assert not bpy.data.actions


def test_non_armature_and_missing_roles_are_refused():
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.object
    with pytest.raises(RuntimeError, match="not an armature"):
        bpy.ops.procanim.duck_walk(armature=cube.name)
    with pytest.raises(RuntimeError, match="no object named"):
        bpy.ops.procanim.duck_walk(armature="NoSuchThing")
    arm = bpy.data.objects.new("Stick", bpy.data.armatures.new("Stick"))
    bpy.context.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    for name, z in (("hips", 1.0), ("thigh.L", 0.9)):
        eb = arm.data.edit_bones.new(name)
        eb.head, eb.tail = (0, 0, z), (0, 0, z - 0.4)
    bpy.ops.object.mode_set(mode="OBJECT")
    with pytest.raises(RuntimeError, match=r"Missing bone roles.*thigh\.R"):
        bpy.ops.procanim.duck_walk(armature=arm.name)
    assert not bpy.data.actions


def test_linked_armature_is_refused(tmp_path):
    add_duck("LibDuck")
    lib = tmp_path / "lib.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(lib))
    harness.reset_scene()
    with bpy.data.libraries.load(str(lib), link=True) as (src, dst):
        dst.objects = ["LibDuck"]
    obj = dst.objects[0]
    bpy.context.collection.objects.link(obj)
    with pytest.raises(RuntimeError, match="linked from a library"):
        bpy.ops.procanim.duck_walk(armature=obj.name)


def test_user_presets_save_and_restore_the_settings():
    import os

    duck_settings = bpy.context.scene.procanim.duck
    duck_settings.amplitude, duck_settings.weight, duck_settings.key_interval = 8.5, 2.0, 2
    name = "procanim test preset"
    assert bpy.ops.procanim.duck_walk_preset_add(name=name) == {"FINISHED"}
    folder = bpy.utils.user_resource("SCRIPTS", path=os.path.join("presets", "procanim", "duck_walk"))
    path = os.path.join(folder, "procanim_test_preset.py")
    try:
        assert os.path.isfile(path)
        duck_settings.amplitude, duck_settings.weight, duck_settings.key_interval = 1.0, 9.0, 5
        assert bpy.ops.script.execute_preset(filepath=path, menu_idname="PROCANIM_MT_duck_walk_presets") == {"FINISHED"}
        assert (duck_settings.amplitude, duck_settings.weight, duck_settings.key_interval) == (8.5, 2.0, 2)
    finally:
        if os.path.isfile(path):
            os.remove(path)


def test_emotion_buttons_set_the_article_values():
    assert bpy.ops.procanim.duck_emotion(preset="HAPPY_WANDERING") == {"FINISHED"}
    s = bpy.context.scene.procanim.duck
    assert (s.amplitude, s.speed, s.weight, s.direction) == (7.0, 5.0, 1.0, 5.0)


def test_keyed_bones_driven_by_constraints_are_named(capfd):
    duck = add_duck()
    con = duck.pose.bones["shin.L"].constraints.new("COPY_ROTATION")
    con.target = duck
    con.subtarget = "hips"
    capfd.readouterr()
    assert bpy.ops.procanim.duck_walk(armature=duck.name) == {"FINISHED"}
    out = capfd.readouterr().out  # Blender prints operator reports in background mode
    assert "driven by constraints" in out and "shin.L" in out
    assert "shin.R" not in out.split("driven by constraints")[1]


# ----------------------------------------------------------------------------- a generated Rigify bird


def foot_tracks(obj, foot, toe, frames):
    """World heights (m) per frame of the ankle (``foot``'s head) and the toe tip (``toe``'s tail), and
    the ankle's horizontal position, from the evaluated pose."""
    length = obj.data.bones[toe].length
    ankle, tip, xy = [], [], []
    for f in frames:
        pose = harness.evaluated_pose(obj, f, space="WORLD")
        ankle.append(pose[foot][2, 3])
        xy.append(pose[foot][:2, 3])
        tip.append((pose[toe][:3, 3] + pose[toe][:3, 1] * length)[2])
    return np.array(ankle), np.array(tip), np.array(xy)


@pytest.mark.parametrize("key_target", ["IK_CONTROLS", "FK_CONTROLS"])
def test_a_generated_rigify_bird_lifts_its_toes_like_its_metarig(rigify_library, key_target):
    """Issue 26 item 1: the article's foot pitch and toe curl pushed the bird's long toes 2–6 mm into
    the ground in every swing (on the metarig too), while the ankle lifted 8 mm: the toes dragged.
    Keys on every frame (the article's 3-frame keys add the interpolation of FK rotations between
    keys, which overshoots on the metarig and not on IK controls). Measured on ``DEF-foot.L``'s head
    and ``DEF-toe.L``'s tail of the generated bird against ``foot.L``/``toe.L`` of the metarig:
    ankle and toe-tip lift within 10 %, the toe tip above its stance height through every swing and
    rising at least a quarter of the ankle's lift, no skate while planted."""
    import rigify_rigs

    frames = range(1, 73)
    rigify_rigs.enable_rigify()
    bpy.ops.object.armature_bird_metarig_add()
    meta = bpy.context.object
    assert bpy.ops.procanim.detect_rig(armature=meta.name) == {"FINISHED"}
    assert bpy.ops.procanim.duck_walk(armature=meta.name, frame_start=1, frame_end=72, key_interval=1) == {"FINISHED"}
    want_ankle, want_tip, _xy = foot_tracks(meta, "foot.L", "toe.L", frames)
    bird = rigify_rigs.add_rigify(rigify_library, "bird", "Bird", location=(1.0, 0.0, 0.0))
    assert bpy.ops.procanim.duck_walk(armature=bird.name, frame_start=1, frame_end=72, key_interval=1,
                                      key_target=key_target) == {"FINISHED"}
    ankle, tip, xy = foot_tracks(bird, "DEF-foot.L", "DEF-toe.L", frames)

    for name, got, want in (("ankle", ankle, want_ankle), ("toe tip", tip, want_tip)):
        assert np.ptp(got) == pytest.approx(np.ptp(want), rel=0.1), f"{name} lift {np.ptp(got) * 100:.2f} cm"
    stance_ankle, stance_tip = ankle.min(), tip[ankle < ankle.min() + 1e-4].mean()
    swing = ankle > stance_ankle + 1e-3
    starts = np.nonzero(swing[1:] & ~swing[:-1])[0] + 1
    assert len(starts) >= 2, "the bird takes at least two steps with its left foot"
    for a in starts:
        b = a + int(np.argmax(~swing[a:])) if not swing[a:].all() else len(swing)
        lift, rise = ankle[a:b] - stance_ankle, tip[a:b] - stance_tip
        assert rise.min() > -1e-4, f"the toe tip goes {-rise.min() * 1000:.1f} mm under its stance at frame {a + 1}"
        assert rise.max() > 0.25 * lift.max(), f"the toes hardly clear the ground in the swing from frame {a + 1}"
    planted = ~swing
    both = planted[1:] & planted[:-1]
    skate = np.linalg.norm(np.diff(xy, axis=0), axis=-1)[both] * bpy.context.scene.render.fps
    assert skate.mean() < 0.01, f"the planted foot skates {skate.mean() * 100:.2f} cm/s"


def test_the_toes_stay_above_the_ground_through_the_swing():
    """The article's toe curl and foot pitch pushed the toe tips of ProcAnim's own duck 7.6 mm under
    the ground in every swing; now the toe tip rises at least half as much as the ankle."""
    duck = add_duck()
    assert bpy.ops.procanim.duck_walk(armature=duck.name, key_interval=1, frame_end=72) == {"FINISHED"}
    bones = duck.data.bones
    for side in "LR":
        ankle, tip, _xy = foot_tracks(duck, f"foot.{side}", f"toe.{side}", range(0, 73))
        lift = ankle - bones[f"foot.{side}"].head_local.z
        rise = tip - bones[f"toe.{side}"].tail_local.z
        swing = lift > 1e-3
        assert np.all(rise[swing] >= 0.5 * lift[swing] - 1e-4), (side, float((rise - 0.5 * lift)[swing].min()))
