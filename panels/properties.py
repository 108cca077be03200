"""Property groups: the sidebar's settings (scene), role maps (armature data), bake info (action).

Each generator's settings group is made from the registry (:func:`.generator.settings_class`) and
hangs under ``scene.procanim.<settings_name>``.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, CollectionProperty, PointerProperty, StringProperty

from ..preview import notify_preview


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
    fingerprint: StringProperty(
        name="Fingerprint", description="What the bake wrote: a re-run replaces the action only while it matches"
    )


def scene_settings_class(generator_settings: dict) -> type:
    """``scene.procanim``: the picked armature, the roles toggle and one group per generator
    (``generator_settings``: settings name → (label, PropertyGroup type))."""
    annotations = {
        "armature": notify_preview(PointerProperty(
            name="Armature", description="Character to bake onto", type=bpy.types.Object, poll=_is_armature
        )),
        "show_roles": BoolProperty(name="Show Roles", description="List every role and its bone", default=False),
    }
    for name, (label, group) in generator_settings.items():
        annotations[name] = PointerProperty(name=label, description=f"{label} settings", type=group)
    return type("ProcAnimSettings", (bpy.types.PropertyGroup,), {"__annotations__": annotations})


def register_properties(scene_settings: type):
    bpy.types.Scene.procanim = PointerProperty(
        name="ProcAnim", description="ProcAnim sidebar settings", type=scene_settings
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
