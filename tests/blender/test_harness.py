"""The test helpers themselves read Blender correctly on every version: keys written through
Blender's own API come back from ``fcurves_of``/``keyframes``, and ``evaluated_pose`` returns the
pose Blender evaluates (independent of the add-on)."""

from __future__ import annotations

import math

import bpy
import harness
import numpy as np


def _one_bone_armature(name="HarnessRig"):
    """An armature object with one 1 m bone 'b' at the origin pointing up +Z, in object mode."""
    arm_data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm_data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm_data.edit_bones.new("b")
    bone.head = (0.0, 0.0, 0.0)
    bone.tail = (0.0, 0.0, 1.0)
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def test_fcurves_of_reads_keys_written_by_blender():
    obj = bpy.data.objects.new("Keyed", None)
    bpy.context.scene.collection.objects.link(obj)
    for frame, x in ((1, 0.0), (11, 2.0), (21, -1.0)):
        obj.location.x = x
        obj.keyframe_insert("location", index=0, frame=frame)
    action = obj.animation_data.action
    curves = harness.fcurve_map(action, obj)
    assert set(curves) == {("location", 0)}
    keys = harness.keyframes(curves[("location", 0)])
    np.testing.assert_allclose(keys, [[1, 0.0], [11, 2.0], [21, -1.0]])


def test_fcurves_of_is_empty_for_an_object_that_does_not_play_the_action():
    keyed = bpy.data.objects.new("Keyed", None)
    bpy.context.scene.collection.objects.link(keyed)
    keyed.keyframe_insert("location", frame=1)
    other = bpy.data.objects.new("Other", None)
    bpy.context.scene.collection.objects.link(other)
    action = keyed.animation_data.action
    assert len(harness.fcurves_of(action, keyed)) == 3
    if bpy.app.version >= (4, 4, 0):
        # With slotted actions the curves belong to a slot; another object sees none of them.
        assert harness.fcurves_of(action, other) == []


def test_evaluated_pose_follows_keys_in_armature_and_world_space():
    obj = _one_bone_armature()
    obj.location = (1.0, 2.0, 3.0)
    pose_bone = obj.pose.bones["b"]
    pose_bone.rotation_mode = "XYZ"
    for frame, angle in ((1, 0.0), (11, math.pi / 2)):
        pose_bone.rotation_euler = (angle, 0.0, 0.0)
        pose_bone.keyframe_insert("rotation_euler", index=0, frame=frame)

    rest = harness.evaluated_pose(obj, 1)["b"]
    np.testing.assert_allclose(rest[:3, 1], [0.0, 0.0, 1.0], atol=1e-6)  # bone Y axis points up

    turned = harness.evaluated_pose(obj, 11)["b"]
    # Rotating +90 deg about the bone's local X swings its Y axis (up, +Z) to its Z axis:
    # the rest Z axis of a bone pointing +Z (roll 0) is -Y, so the bone now points along -Y.
    tail = turned[:3, :3] @ np.array([0.0, 1.0, 0.0])
    np.testing.assert_allclose(tail, [0.0, -1.0, 0.0], atol=1e-6)

    world = harness.evaluated_pose(obj, 11, space="WORLD")["b"]
    np.testing.assert_allclose(world[:3, 3], [1.0, 2.0, 3.0], atol=1e-6)
    np.testing.assert_allclose(world[:3, :3], turned[:3, :3], atol=1e-6)
