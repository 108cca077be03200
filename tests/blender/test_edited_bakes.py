"""Nothing of the animator's is lost: a re-run replaces its own bake only while that bake is
untouched; an edited bake is kept (``<name>.edited``, fake user) and survives a save and reload."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from harness import addon_module, fcurve_map, fcurves_of, keyframes
from scenes import SCENE_SETUP

MOVE = 0.123  # how far the animator drags one key (value units of its channel)


def generate(generator):
    assert getattr(bpy.ops.procanim, generator)() == {"FINISHED"}  # the sidebar's picks and settings


def baked_object(generator):
    scene = bpy.context.scene
    return scene.procanim.handshake.initiator if generator == "handshake" else scene.procanim.armature


@pytest.mark.parametrize("generator", list(SCENE_SETUP))
def test_an_edited_bake_is_kept_through_a_rerun_and_a_reload(generator, tmp_path):
    SCENE_SETUP[generator](bpy.context.scene)
    generate(generator)
    obj = baked_object(generator)
    baked = obj.animation_data.action
    name = baked.name
    # untouched: a re-run rewrites the same action
    generate(generator)
    assert obj.animation_data.action == baked and baked.name == name
    # the animator moves one key in the Graph Editor
    fc = next(f for f in fcurves_of(baked, obj) if len(f.keyframe_points) > 2)
    path, index = fc.data_path, fc.array_index
    point = fc.keyframe_points[1]
    point.co.y += MOVE
    fc.update()
    edited_value = float(point.co.y)
    generate(generator)
    fresh = obj.animation_data.action
    assert fresh != baked and baked.name.startswith(f"{name}.edited") and baked.use_fake_user
    assert fresh.procanim.previous_action == baked.procanim.previous_action or generator == "adapt_terrain"
    kept_name, obj_name = baked.name, obj.name
    blend = tmp_path / "edited.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    kept = bpy.data.actions[kept_name]
    obj = bpy.data.objects[obj_name]
    curves = {(f.data_path, f.array_index): f for f in _all_fcurves(kept)}
    assert keyframes(curves[path, index])[1, 1] == pytest.approx(edited_value, abs=1e-6)
    # and the fresh bake is still a ProcAnim bake that a further re-run replaces in place
    fresh = obj.animation_data.action
    generate(generator)
    assert obj.animation_data.action == fresh


def _all_fcurves(action):
    """Every F-curve of an action, whichever object or slot it was made for."""
    if bpy.app.version < (4, 4, 0):
        return list(action.fcurves)
    return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags for fc in bag.fcurves]


def test_a_terrain_readaptation_after_an_edit_still_adapts_the_source(procanim_extension):
    SCENE_SETUP["adapt_terrain"](bpy.context.scene)
    human = bpy.context.scene.procanim.armature
    source = human.animation_data.action
    generate("adapt_terrain")
    adapted = human.animation_data.action
    fc = fcurves_of(adapted, human)[0]
    fc.keyframe_points[0].co.y += MOVE
    fc.update()
    generate("adapt_terrain")
    again = human.animation_data.action
    assert again.procanim.previous_action == source.name
    assert adapted.name.endswith(".edited") and adapted.use_fake_user and source.use_fake_user


# ----------------------------------------------------------------------------- the keys writer


def _read(fc, attr: str, width: int = 2) -> np.ndarray:
    n = len(fc.keyframe_points)
    out = np.empty(width * n, dtype=np.float32)
    fc.keyframe_points.foreach_get(attr, out)
    return out.reshape(n, width).astype(np.float64) if width > 1 else out.astype(np.float64)


def _bezier(p0, p1, p2, p3, t):
    s = 1.0 - t
    return s**3 * p0 + 3 * s * s * t * p1 + 3 * s * t * t * p2 + t**3 * p3


def test_keys_are_written_with_their_handles_interpolation_and_key_types(procanim_extension):
    """The writer issue 23's sparse bakes need: per key a frame, a value, Bezier handles with their
    types, the interpolation to the next key and a key type; read back from Blender as written, and
    Blender evaluates the curve between keys from those handles."""
    keys_mod = addon_module(procanim_extension, "operators.keys")
    curve_keys = addon_module(procanim_extension, "procanim_addon.curve_keys")
    clip_mod = addon_module(procanim_extension, "procanim_addon.clip")
    assert bpy.ops.procanim.add_human(name="Ann") == {"FINISHED"}
    ann = bpy.data.objects["Ann"]
    frames = np.array([1.0, 13.0, 25.0, 40.0, 52.0])
    values = np.array([0.0, 0.30, -0.10, -0.10, 0.25])
    # handles a third of the way to the neighbouring keys (the frame then runs linearly along each
    # segment); the third key's pair is collinear, as Blender keeps an aligned pair
    third = np.diff(frames) / 3.0
    left = np.stack([frames - np.r_[third[0], third], values + np.array([0.0, -0.05, 0.02, 0.0, -0.1])], -1)
    right = np.stack([frames + np.r_[third, third[-1]], values + np.array([0.12, 0.05, -0.025, 0.0, 0.1])], -1)
    written = curve_keys.CurveKeys(
        frames,
        values,
        handle_left=left,
        handle_right=right,
        handle_left_type=("FREE", "FREE", "ALIGNED", "FREE", "FREE"),
        handle_right_type=("FREE", "FREE", "ALIGNED", "FREE", "FREE"),
        interpolation=("BEZIER", "BEZIER", "CONSTANT", "LINEAR", "BEZIER"),
        key_type=("EXTREME", "BREAKDOWN", "KEYFRAME", "JITTER", "EXTREME"),
    )
    dense = curve_keys.CurveKeys(frames, values)  # Blender's defaults: auto-clamped Bezier keyframes
    bake = keys_mod.open_bake(ann, "keys_test")
    path = keys_mod.bone_path("hips") + "location"
    bake.curve("hips", path, 0, written)
    bake.curve("hips", path, 1, dense)
    clip = clip_mod.Clip(["hips"], frames, 24.0, np.zeros((5, 1, 3)), np.tile([1.0, 0, 0, 0], (5, 1, 1)),
                         generator="keys_test")
    action = bake.finish(clip, {"keys": 5})
    assert ann.animation_data.action == action and keys_mod.read_metrics(action)["keys"] == 5
    curves = fcurve_map(action, ann)
    fc, auto = curves[path, 0], curves[path, 1]
    assert fc.group.name == "hips"
    np.testing.assert_allclose(keyframes(fc), np.stack([frames, values], -1), atol=1e-6)
    np.testing.assert_allclose(_read(fc, "handle_left"), left, atol=1e-6)
    np.testing.assert_allclose(_read(fc, "handle_right"), right, atol=1e-6)
    points = fc.keyframe_points
    assert [p.handle_left_type for p in points] == list(written.handle_left_type)
    assert [p.handle_right_type for p in points] == list(written.handle_right_type)
    assert [p.interpolation for p in points] == list(written.interpolation)
    assert [p.type for p in points] == list(written.key_type)
    assert {(p.handle_left_type, p.interpolation, p.type) for p in auto.keyframe_points} == {
        ("AUTO_CLAMPED", "BEZIER", "KEYFRAME")
    }
    # Blender evaluates the curve from the handles as written
    t = np.linspace(0.0, 1.0, 7)
    for i, interpolation in enumerate(written.interpolation[:-1]):
        f = frames[i] + t * (frames[i + 1] - frames[i])
        got = np.array([fc.evaluate(x) for x in f[:-1]])
        if interpolation == "BEZIER":
            want = _bezier(values[i], right[i, 1], left[i + 1, 1], values[i + 1], t[:-1])
        elif interpolation == "LINEAR":
            want = values[i] + t[:-1] * (values[i + 1] - values[i])
        else:
            want = np.full(len(t) - 1, values[i])
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=f"segment {i} ({interpolation})")
    # the fingerprint taken from the arrays written is the keys' as Blender holds them
    fingerprint = addon_module(procanim_extension, "operators.fingerprint")
    assert fingerprint.untouched(action, ann)
    with pytest.raises(ValueError, match="bake_to"):
        keys_mod.open_bake(ann, "keys_test", bake_to="SOMEWHERE")
