"""Nothing of the animator's is lost: a re-run replaces its own bake only while that bake is
untouched; an edited bake is kept (``<name>.edited``, fake user) and survives a save and reload."""

from __future__ import annotations

import bpy
import pytest
from harness import fcurves_of, keyframes
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
