"""The engine's F-curve evaluation (procanim_addon/keys/bezier.py, handles.py) equals Blender's.

Reduced keys are written straight into F-curves the way a writer does — ``keyframe_points.add`` and
``foreach_set`` of ``co``, both handles, both handle types, ``interpolation`` and ``type``, then
``FCurve.update()`` — on an action assigned to the armature (operators/compat.py, read-only). Then,
on every frame:

* ``FCurve.evaluate(frame)`` equals :meth:`CurveKeys.evaluate` (the engine's copy of Blender's
  arithmetic) within 1e-5;
* after ``frame_set`` the pose bones' channels equal the engine's values and their evaluated heads
  and tails (``pose_bone.matrix``) equal the engine's forward model of those values within 1e-5 m
  — quaternion curves evaluated one by one and normalised by the pose, Euler curves in their order;
* the engine's reduced curves keep every head and tail within the tolerance of the dense bake, as
  Blender plays both;
* a key moved 5 cm with its handles (as the Graph Editor moves it) changes the evaluated pose only
  between its neighbouring keys (the handles ProcAnim writes are not recomputed from neighbours).

And on random curves of every handle type (free, aligned, vector, auto, auto clamped with the curve's
smoothing ``NONE``; linear and constant segments; keys off whole frames), the handles Blender holds
after ``update()`` equal :meth:`CurveKeys.blender_keys` and ``evaluate`` agrees at fractional frames.
"""

from __future__ import annotations

import bpy
import harness
import numpy as np
import pytest

TOLERANCE = 1e-5
KEY_TOLERANCE_M = 0.001


def _write(fcurves, groups, curve) -> object:
    """One F-curve from the engine's :class:`CurveKeys`, as the writer writes it."""
    fc = fcurves.new(curve.data_path, index=curve.index)
    fc.group = groups.get(curve.group) or groups.new(curve.group)
    points = fc.keyframe_points
    points.add(len(curve))
    for prop, values in curve.arrays().items():
        points.foreach_set(prop, values)
    fc.auto_smoothing = curve.smoothing
    fc.update()
    return fc


def _walker(ext):
    """ProcAnim's human added to the scene (``Walker``, active), its skeleton and role map, and a
    short path walk the engine generates for it."""
    assert bpy.ops.procanim.add_human(name="Walker") == {"FINISHED"}
    obj = bpy.context.view_layer.objects.active
    bridge = harness.addon_module(ext, "operators.bridge")
    walk = harness.addon_module(ext, "procanim_addon.walk")
    ground = harness.addon_module(ext, "procanim_addon.ground")
    sk = bridge.read_skeleton(obj)
    rm = bridge.read_rigmap(obj, sk)
    path = np.array([[0.0, 0.0, 0.0], [0.0, -2.5, 0.0], [1.0, -4.5, 0.0]])
    clip = walk.generate_path_walk(sk, rm, path, ground.FlatGround(), walk.PathWalkParams())
    return obj, sk, rm, clip


def _pose_channels(obj, channels, frame) -> np.ndarray:
    """The evaluated pose channels of ``channels`` after ``frame_set(frame)`` ``(C,)``."""
    bpy.context.scene.frame_set(frame)
    out = np.empty(len(channels))
    for c, ch in enumerate(channels):
        out[c] = getattr(obj.pose.bones[ch.bone], ch.prop)[ch.index]
    return out


def _points(obj, skeleton) -> np.ndarray:
    """Heads and tails ``(2B, 3)`` of the evaluated pose (the engine's point order)."""
    out = np.empty((2 * len(skeleton), 3))
    for b, name in enumerate(skeleton.names):
        m = np.array(obj.pose.bones[name].matrix, dtype=float)
        out[2 * b] = m[:3, 3]
        out[2 * b + 1] = m[:3, 3] + m[:3, 1] * skeleton.lengths[b]
    return out


def test_reduced_walk_plays_in_blender_as_the_engine_evaluates_it(procanim_extension):
    ext = procanim_extension
    keys = harness.addon_module(ext, "procanim_addon.keys")
    compat = harness.addon_module(ext, "operators.compat")
    obj, sk, rm, clip = _walker(ext)
    modes = {"spine": "XYZ", "chest": "YZX", "upper_arm.L": "ZXY"}  # Euler bones beside quaternion ones
    for name, mode in modes.items():
        obj.pose.bones[name].rotation_mode = mode
    feet = keys.feet(sk, rm)
    ground = harness.addon_module(ext, "procanim_addon.ground").FlatGround()
    contacts, marks = keys.marks.walk_contacts(sk, clip, feet, ground)
    keyed = keys.plan_clip_keys(clip, sk, KEY_TOLERANCE_M, modes, marks=marks, contacts=contacts, feet=feet)
    assert keyed.keys_written < keyed.keys_dense
    action = bpy.data.actions.new("reduced")
    fcurves, groups = compat.assign_action(obj, action)
    written = [_write(fcurves, groups, curve) for curve in keyed.curves]
    channels, dense = keys.clip_channels(clip, modes)
    model = keys.DeformForward(sk, channels)
    frames = np.arange(int(clip.frames[0]), int(clip.frames[-1]) + 1)
    engine = np.stack([curve.evaluate(frames) for curve in keyed.curves], axis=1).astype(float)
    blender = np.array([[fc.evaluate(float(f)) for fc in written] for f in frames])
    assert np.abs(blender - engine).max() < TOLERANCE, np.abs(blender - engine).max()
    engine_points = model(engine)
    dense_points = model(dense)
    worst_channel = worst_point = worst_error = 0.0
    for i, f in enumerate(frames):
        posed = _pose_channels(obj, channels, int(f))
        worst_channel = max(worst_channel, float(np.abs(posed - engine[i]).max()))
        points = _points(obj, sk)
        worst_point = max(worst_point, float(np.abs(points - engine_points[i]).max()))
        worst_error = max(worst_error, float(np.linalg.norm(points - dense_points[i], axis=-1).max()))
    print(f"{len(frames)} frames, {keyed.keys_written}/{keyed.keys_dense} keys: channels {worst_channel:.1e}, "
          f"points {worst_point:.1e} m; deform error in Blender {worst_error * 1000:.3f} mm "
          f"(engine: {keyed.max_error_m * 1000:.3f} mm)")
    assert worst_channel < TOLERANCE
    assert worst_point < TOLERANCE
    assert worst_error <= KEY_TOLERANCE_M + 1e-5
    types = {name for curve in keyed.curves for name in curve.names("type")}
    assert {"EXTREME", "KEYFRAME"} <= types
    stored = np.empty(len(written[0].keyframe_points), dtype=np.int32)
    written[0].keyframe_points.foreach_get("type", stored)
    assert np.array_equal(stored, keyed.curves[0].key_type)


def test_moving_one_key_in_blender_changes_the_pose_only_between_its_neighbours(procanim_extension):
    ext = procanim_extension
    keys = harness.addon_module(ext, "procanim_addon.keys")
    compat = harness.addon_module(ext, "operators.compat")
    obj, sk, rm, clip = _walker(ext)
    keyed = keys.plan_clip_keys(clip, sk, KEY_TOLERANCE_M)
    fcurves, groups = compat.assign_action(obj, bpy.data.actions.new("reduced"))
    written = {(c.data_path, c.index): _write(fcurves, groups, c) for c in keyed.curves}
    fc = written[('pose.bones["hips"].location', 1)]
    frames = np.arange(int(clip.frames[0]), int(clip.frames[-1]) + 1)
    before = np.array([_points(obj, sk) for _ in frames if bpy.context.scene.frame_set(int(_)) is None])
    points = fc.keyframe_points
    k = len(points) // 2
    lo, at, hi = (float(points[i].co.x) for i in (k - 1, k, k + 1))
    key = points[k]
    key.co.y += 0.05  # a key moved up 5 cm with its handles, as the Graph Editor's G does
    key.handle_left.y += 0.05
    key.handle_right.y += 0.05
    fc.update()
    after = np.array([_points(obj, sk) for _ in frames if bpy.context.scene.frame_set(int(_)) is None])
    moved = np.abs(after - before).max(axis=(1, 2))
    changed = frames[moved > 1e-6]
    print(f"key {k} at frame {at:g} moved: pose changed on frames {changed.min()}–{changed.max()} "
          f"(neighbouring keys {lo:g}, {hi:g}), by up to {moved.max() * 100:.2f} cm")
    assert changed.min() > lo and changed.max() < hi
    assert moved.max() == pytest.approx(0.05, rel=1e-3)


def _random_curve(keys_mod, rng, n: int, kinds: list[str]):
    """A curve of ``n`` keys at uneven, partly fractional frames with random handles of ``kinds``."""
    frames = np.cumsum(rng.uniform(0.6, 7.0, n)) + rng.uniform(-3, 3)
    values = rng.normal(0.0, 2.0, n)
    lengths = rng.uniform(0.1, 1.2, (n, 2)) * np.concatenate([[3.0], np.diff(frames)])[:, None]
    slopes = rng.normal(0.0, 1.5, (n, 2))
    left = np.stack([frames - lengths[:, 0], values - slopes[:, 0] * lengths[:, 0]], axis=-1)
    right = np.stack([frames + lengths[:, 1], values + slopes[:, 1] * lengths[:, 1]], axis=-1)
    code = [keys_mod.HANDLE[k] for k in kinds]
    lt = rng.choice(code, n)
    rt = np.where(np.isin(lt, [keys_mod.HANDLE["AUTO"], keys_mod.HANDLE["AUTO_CLAMPED"]]), lt, rng.choice(code, n))
    rt = np.where(lt == keys_mod.HANDLE["ALIGNED"], lt, rt)
    ipo = rng.choice([keys_mod.INTERPOLATION[k] for k in ("BEZIER", "BEZIER", "BEZIER", "LINEAR", "CONSTANT")], n)
    co = np.stack([frames, values], axis=-1)
    return keys_mod.CurveKeys("location", 0, "Test", co, left, right, lt, rt, ipo, np.zeros(n), smoothing="NONE")


def test_random_curves_of_every_handle_type(procanim_extension):
    ext = procanim_extension
    keys = harness.addon_module(ext, "procanim_addon.keys")
    compat = harness.addon_module(ext, "operators.compat")
    rng = np.random.default_rng(23)
    kinds = ["FREE", "ALIGNED", "VECTOR", "AUTO", "AUTO_CLAMPED"]
    worst_handle = worst_value = 0.0
    for trial in range(24):
        bpy.ops.object.empty_add()
        obj = bpy.context.view_layer.objects.active
        action = bpy.data.actions.new(f"random{trial}")
        fcurves, groups = compat.assign_action(obj, action)
        curve = _random_curve(keys, rng, int(rng.integers(2, 14)), kinds)
        fc = fcurves.new(f'["prop{trial}"]', index=0)
        points = fc.keyframe_points
        points.add(len(curve))
        for prop, values in curve.arrays().items():
            points.foreach_set(prop, values)
        fc.auto_smoothing = "NONE"
        fc.update()
        held = curve.blender_keys()
        for prop, mine in (("handle_left", held.handle_left), ("handle_right", held.handle_right)):
            got = np.empty(2 * len(curve), dtype=np.float32)
            points.foreach_get(prop, got)
            scale = 1.0 + np.abs(mine).max()
            worst_handle = max(worst_handle, float(np.abs(got.reshape(-1, 2) - mine).max() / scale))
        t = np.linspace(curve.frames[0] - 2.0, curve.frames[-1] + 2.0, 301)
        engine = curve.evaluate(t).astype(float)
        blender = np.array([fc.evaluate(float(x)) for x in t])
        scale = 1.0 + np.abs(curve.values).max()
        worst_value = max(worst_value, float(np.abs(blender - engine).max() / scale))
        bpy.data.objects.remove(obj)
    print(f"random curves: handles within {worst_handle:.1e}, values within {worst_value:.1e} (relative)")
    assert worst_handle < TOLERANCE
    assert worst_value < TOLERANCE
