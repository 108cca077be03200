"""Small scenes for the Blender tests: what each generator's Generate needs, picked in the sidebar."""

from __future__ import annotations

import math

import bpy


def add_human(name="Human", **kw):
    assert bpy.ops.procanim.add_human(name=name, **kw) == {"FINISHED"}
    return bpy.data.objects[name]


def add_curve(name, points, bevel=0.0):
    cu = bpy.data.curves.new(name, "CURVE")
    cu.bevel_depth = bevel
    sp = cu.splines.new("POLY")
    sp.points.add(len(points) - 1)
    for p, co in zip(sp.points, points):
        p.co = (*co, 1.0)
    obj = bpy.data.objects.new(name, cu)
    bpy.context.collection.objects.link(obj)
    return obj


def pick_duck(scene):
    assert bpy.ops.procanim.add_duck(name="Duck") == {"FINISHED"}
    scene.procanim.armature = bpy.data.objects["Duck"]


def pick_pair(scene):
    a, b = add_human("Ann"), add_human("Bob", location=(0.0, -0.9, 0.0))
    b.rotation_euler[2] = math.pi
    bpy.context.view_layer.update()
    scene.procanim.handshake.initiator, scene.procanim.handshake.partner = a, b


def pick_walker(scene, length=3.0):
    scene.procanim.armature = add_human()
    scene.procanim.path_walk.path = add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -length, 0.0)])


def pick_adapt(scene):
    human = add_human()
    scene.procanim.armature = human
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=2) == {"FINISHED"}
    assert bpy.ops.procanim.add_zigzag(armature=human.name, level="ANKLE") == {"FINISHED"}


def pick_source(scene):
    scene.procanim.armature = add_human()


def pick_fixer(scene):
    """A human with a walk of its own (the motion Fix Feet reads)."""
    human = add_human()
    scene.procanim.armature = human
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=2) == {"FINISHED"}


def select_only(objs):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in objs)


def pick_crowd(scene, length=2.0):
    """Two humans side by side, each selected with a straight curve from its feet (the crowd's
    Generate walks the selection)."""
    humans = [add_human(f"Walker.{i}", location=(1.5 * i, 0.0, 0.0)) for i in range(2)]
    curves = [add_curve(f"Lane.{i}", [(1.5 * i, 0.0, 0.0), (1.5 * i, -length, 0.0)]) for i in range(2)]
    bpy.context.view_layer.update()
    select_only(humans + curves)
    scene.procanim.armature = humans[0]


SCENE_SETUP = {"duck_walk": pick_duck, "handshake": pick_pair, "path_walk": pick_walker, "adapt_terrain": pick_adapt,
               "source_motion": pick_source, "fix_feet": pick_fixer, "crowd_walk": pick_crowd}
