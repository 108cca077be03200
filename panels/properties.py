"""Property groups: the sidebar's settings (scene), role maps (armature data), bake info (action)."""

from __future__ import annotations

import bpy
from bpy.props import CollectionProperty, PointerProperty, StringProperty

from ..operators.duck_walk import duck_walk_properties
from .path_walk import ProcAnimPathWalkSettings
from .terrain import ProcAnimTerrainSettings


def _is_armature(_self, obj):
    return obj.type == "ARMATURE"


class ProcAnimRole(bpy.types.PropertyGroup):
    role: StringProperty(name="Role", description="ProcAnim role, e.g. thigh.L")
    bone: StringProperty(name="Bone", description="Bone of this armature that plays the role (empty: none)")


class ProcAnimActionInfo(bpy.types.PropertyGroup):
    generator: StringProperty(name="Generator", description="ProcAnim generator that baked this action")
    owner: StringProperty(name="Owner", description="Armature object this action was baked for")
    metrics_json: StringProperty(name="Metrics", description="Quality figures of the bake, as a JSON object")
    previous_action: StringProperty(
        name="Previous Action", description="Action the armature had before this bake (kept with a fake user)"
    )


class ProcAnimDuckSettings(bpy.types.PropertyGroup):
    __annotations__ = duck_walk_properties(ui=True)


class ProcAnimSettings(bpy.types.PropertyGroup):
    armature: PointerProperty(
        name="Armature", description="Character to bake onto", type=bpy.types.Object, poll=_is_armature
    )
    duck: PointerProperty(name="Duck Walk", description="Duck walk settings", type=ProcAnimDuckSettings)
    path_walk: PointerProperty(name="Path Walk", description="Path walk settings", type=ProcAnimPathWalkSettings)
    terrain: PointerProperty(name="Terrain", description="Terrain adaptation settings", type=ProcAnimTerrainSettings)
    show_roles: bpy.props.BoolProperty(name="Show Roles", description="List every role and its bone", default=False)


# Property-group types are registered before the pointer properties that use them.
classes = (
    ProcAnimRole,
    ProcAnimActionInfo,
    ProcAnimDuckSettings,
    ProcAnimPathWalkSettings,
    ProcAnimTerrainSettings,
    ProcAnimSettings,
)


def register_properties():
    bpy.types.Scene.procanim = PointerProperty(
        name="ProcAnim", description="ProcAnim sidebar settings", type=ProcAnimSettings
    )
    bpy.types.Armature.procanim_roles = CollectionProperty(
        name="Roles", description="ProcAnim role → bone map", type=ProcAnimRole
    )
    bpy.types.Action.procanim = PointerProperty(
        name="ProcAnim", description="ProcAnim bake information", type=ProcAnimActionInfo
    )


def unregister_properties():
    del bpy.types.Action.procanim
    del bpy.types.Armature.procanim_roles
    del bpy.types.Scene.procanim
