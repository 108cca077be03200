"""The engine's FK equals Blender's evaluated pose (pose_bone.matrix) to 1e-5 m on every bone,
under random poses, for both demo rigs and Rigify's human and bird metarigs."""

from __future__ import annotations

import importlib

import addon_utils
import bpy
import numpy as np
import pytest

TOLERANCE_M = 1e-5


def _engine(procanim_extension, name):
    return importlib.import_module(f"{procanim_extension.module}.{name}")


def _rig(kind):
    if kind == "human":
        bpy.ops.procanim.add_human(name="Rig")
    elif kind == "duck":
        bpy.ops.procanim.add_duck(name="Rig")
    else:
        addon_utils.enable("rigify", default_set=True)
        getattr(
            bpy.ops.object, "armature_human_metarig_add" if kind == "human_metarig" else "armature_bird_metarig_add"
        )()
    return bpy.context.view_layer.objects.active


@pytest.mark.parametrize("kind", ["human", "duck", "human_rigify", "bird"])
def test_engine_fk_matches_blender_under_random_poses(procanim_extension, kind):
    obj = _rig({"human": "human", "duck": "duck", "human_rigify": "human_metarig", "bird": "bird"}[kind])
    bridge = _engine(procanim_extension, "operators.bridge")
    tf = _engine(procanim_extension, "procanim_addon.transforms")
    sk = bridge.read_skeleton(obj)
    rng = np.random.default_rng(7)
    worst = 0.0
    for _trial in range(3):
        rot = tf.quat_normalize(rng.normal(size=(1, len(sk), 4)))
        loc = rng.normal(scale=0.05, size=(1, len(sk), 3))
        for i, name in enumerate(sk.names):
            pb = obj.pose.bones[name]
            pb.rotation_mode = "QUATERNION"
            pb.rotation_quaternion = rot[0, i]
            pb.location = loc[0, i]
        bpy.context.view_layer.update()
        pose = sk.fk(loc, rot)[0]
        for i, name in enumerate(sk.names):
            blender = np.array(obj.pose.bones[name].matrix, dtype=float)
            worst = max(
                worst,
                float(np.abs(blender[:3, 3] - pose[i, :3, 3]).max()),
                float(np.abs(blender[:3, :3] - pose[i, :3, :3]).max()) * max(sk.lengths[i], 1e-3),
            )
    print(f"FK vs Blender ({kind}, {len(sk)} bones): max error {worst:.2e} m")
    assert worst < TOLERANCE_M
