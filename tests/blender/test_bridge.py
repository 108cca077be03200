"""Reading the scene into engine inputs: curves, meshes and actions, in the armature's space."""

from __future__ import annotations

import importlib

import bpy
import harness
import numpy as np
import pytest


@pytest.fixture
def bridge(procanim_extension):
    return importlib.import_module(f"{procanim_extension.module}.operators.bridge")


@pytest.fixture
def errors(procanim_extension):
    return importlib.import_module(f"{procanim_extension.module}.procanim_addon.errors")


def _armature_at(location):
    bpy.ops.procanim.add_human(name="Walker", location=location)
    return bpy.data.objects["Walker"]


def test_curve_polyline_in_armature_space_in_path_order(bridge):
    arm = _armature_at((1.0, 2.0, 0.0))
    bpy.ops.curve.primitive_bezier_curve_add(location=(0, 0, 0))
    curve = bpy.context.object
    curve.location = (3.0, 0.0, 0.5)
    pts = bridge.read_curve_polyline(curve, arm, bpy.context.evaluated_depsgraph_get())
    spline = curve.data.splines[0]
    first = np.array(spline.bezier_points[0].co) + [3.0, 0.0, 0.5] - [1.0, 2.0, 0.0]
    last = np.array(spline.bezier_points[-1].co) + [3.0, 0.0, 0.5] - [1.0, 2.0, 0.0]
    np.testing.assert_allclose(pts[0], first, atol=1e-5)
    np.testing.assert_allclose(pts[-1], last, atol=1e-5)
    steps = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    assert steps.max() < 0.5 and steps.min() > 0, "ordered, no jumps back and forth"


def test_non_curve_and_empty_curve_are_refused(bridge, errors):
    arm = _armature_at((0, 0, 0))
    dg = bpy.context.evaluated_depsgraph_get()
    with pytest.raises(errors.InputError, match="must be a curve"):
        bridge.read_curve_polyline(arm, arm, dg)
    empty = bpy.data.objects.new("Empty curve", bpy.data.curves.new("Empty curve", "CURVE"))
    bpy.context.collection.objects.link(empty)
    with pytest.raises(errors.InputError, match="no length"):
        bridge.read_curve_polyline(empty, arm, bpy.context.evaluated_depsgraph_get())


def test_mesh_triangles_in_armature_space_and_faceless_mesh_refused(bridge, errors):
    arm = _armature_at((0.0, 0.0, 1.0))
    bpy.ops.mesh.primitive_plane_add(size=2.0, location=(0, 0, 0.25))
    plane = bpy.context.object
    verts, tris = bridge.read_mesh_triangles(plane, arm, bpy.context.evaluated_depsgraph_get())
    assert tris.shape == (2, 3)
    np.testing.assert_allclose(verts[:, 2], -0.75, atol=1e-6)
    me = bpy.data.meshes.new("points")
    me.from_pydata([(0, 0, 0), (1, 0, 0)], [(0, 1)], [])
    ob = bpy.data.objects.new("points", me)
    bpy.context.collection.objects.link(ob)
    with pytest.raises(errors.InputError, match="no faces"):
        bridge.read_mesh_triangles(ob, arm, bpy.context.evaluated_depsgraph_get())


def test_action_clip_reproduces_the_evaluated_pose(bridge, procanim_extension):
    bpy.ops.procanim.add_duck(name="Duck")
    duck = bpy.data.objects["Duck"]
    duck.pose.bones["hips"].rotation_mode = "ZXY"
    assert bpy.ops.procanim.duck_walk(armature="Duck", direction=8.0, frame_end=40) == {"FINISHED"}
    sk = bridge.read_skeleton(duck)
    clip = bridge.read_action_clip(duck, sk, 0, 40)
    pose = sk.fk(clip.locations, clip.rotations)
    for f in (0, 7, 23, 40):
        evaluated = harness.evaluated_pose(duck, f)
        for i, name in enumerate(sk.names):
            np.testing.assert_allclose(pose[f, i], evaluated[name], atol=1e-5)


def test_action_range_and_missing_action_are_refused(bridge, errors):
    bpy.ops.procanim.add_duck(name="Duck")
    duck = bpy.data.objects["Duck"]
    sk = bridge.read_skeleton(duck)
    with pytest.raises(errors.InputError, match="no action"):
        bridge.read_action_clip(duck, sk, 0, 10)
    bpy.ops.procanim.duck_walk(armature="Duck", frame_end=30)
    with pytest.raises(errors.InputError, match="outside the action"):
        bridge.read_action_clip(duck, sk, 0, 90)


def test_a_bevelled_curve_is_read_along_its_centre_line_and_keeps_its_bevel(bridge):
    arm = _armature_at((0, 0, 0))
    bpy.ops.curve.primitive_bezier_curve_add(location=(0, 0, 0))
    curve = bpy.context.object
    plain = bridge.read_curve_polyline(curve, arm, bpy.context.evaluated_depsgraph_get())
    curve.data.bevel_depth = 0.2
    curve.data.extrude = 0.1
    bevelled = bridge.read_curve_polyline(curve, arm, bpy.context.evaluated_depsgraph_get())
    np.testing.assert_allclose(bevelled, plain, atol=1e-6)
    assert curve.data.bevel_depth == pytest.approx(0.2) and curve.data.extrude == pytest.approx(0.1)


def test_characters_sharing_armature_data_share_one_read_and_an_edit_is_seen(bridge):
    """A crowd of linked duplicates (one armature's data) reads the rig once; editing the bones
    gives a new Skeleton, never a stale one."""
    assert bpy.ops.procanim.add_human(name="A") == {"FINISHED"}
    a = bpy.data.objects["A"]
    b = bpy.data.objects.new("B", a.data)  # Alt+D: the same armature data
    bpy.context.collection.objects.link(b)
    first = bridge.read_skeleton(a)
    assert bridge.read_skeleton(b) is first and bridge.read_skeleton(a) is first
    bpy.context.view_layer.objects.active = a
    bpy.ops.object.mode_set(mode="EDIT")
    a.data.edit_bones["hips"].head.z += 0.05
    bpy.ops.object.mode_set(mode="OBJECT")
    moved = bridge.read_skeleton(b)
    assert moved is not first
    hips = moved.index("hips")
    assert moved.heads[hips, 2] == pytest.approx(first.heads[first.index("hips"), 2] + 0.05, abs=1e-6)


def test_a_y_up_rig_under_a_turned_scaled_object_is_read_upright_in_world_units(bridge, procanim_extension):
    """Its rest pose, a curve and a mesh come in its upright frame: the scene's up on +Z, metres,
    the object's turn about the vertical left in the frame's world matrix; read with
    ``upright=False`` the skeleton is the armature's own."""
    from mathutils import Matrix

    upright = importlib.import_module(f"{procanim_extension.module}.procanim_addon.upright")
    arm = _armature_at((0.0, 0.0, 0.0))
    arm.data.transform(Matrix.Rotation(-np.pi / 2, 4, "X") @ Matrix.Scale(100.0, 4))  # Y-up, centimetres
    arm.matrix_world = Matrix.Translation((1.0, 2.0, 0.0)) @ Matrix.Rotation(np.pi / 6, 4, "Z") \
        @ Matrix.Rotation(np.pi / 2, 4, "X") @ Matrix.Scale(0.01, 4)
    bpy.context.view_layer.update()
    sk = bridge.read_skeleton(arm)
    assert bridge.read_skeleton(arm) is sk  # kept
    to_world = upright.world_of_frame(arm.matrix_world, sk)
    heads_world = np.array([arm.matrix_world @ b.head_local for b in arm.data.bones])
    order = [sk.index(b.name) for b in arm.data.bones]
    np.testing.assert_allclose(sk.heads[order] @ to_world[:3, :3].T + to_world[:3, 3], heads_world, atol=1e-5)
    assert sk.heads[sk.index("head"), 2] > 1.5 and sk.lengths[sk.index("thigh.L")] == pytest.approx(0.42, abs=1e-3)
    own = bridge.read_skeleton(arm, upright=False)
    np.testing.assert_allclose(own.heads[own.index("hips")], arm.data.bones["hips"].head_local, atol=1e-4)
    bpy.ops.curve.primitive_bezier_curve_add(location=(3.0, 0.0, 0.5))
    curve = bpy.context.object
    pts = bridge.read_curve_polyline(curve, arm, bpy.context.evaluated_depsgraph_get())
    first = np.array(curve.matrix_world @ curve.data.splines[0].bezier_points[0].co)
    np.testing.assert_allclose(to_world[:3, :3] @ pts[0] + to_world[:3, 3], first, atol=1e-5)
    bpy.ops.mesh.primitive_plane_add(size=2.0, location=(0, 0, 0.25))
    verts, _ = bridge.read_mesh_triangles(bpy.context.object, arm, bpy.context.evaluated_depsgraph_get())
    np.testing.assert_allclose(verts[:, 2], 0.25, atol=1e-5)  # level in the world, level in the frame
