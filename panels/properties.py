"""Property groups: the sidebar's settings (scene), role maps (armature data), bake info (action)."""

from __future__ import annotations

import bpy
from bpy.props import CollectionProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty, StringProperty

from ..procanim_addon.duck import DuckParams
from .path_walk import ProcAnimPathWalkSettings

_D = DuckParams()

GAITS = [
    ("PLANTED", "Planted", "Feet stay where they land (no foot sliding); the master moves by the stance sweep"),
    (
        "ARTICLE",
        "Article",
        "The article's channels verbatim: constant master speed s·a/q_a every 3 frames (feet slide)",
    ),
]


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
    frame_start: IntProperty(name="Start Frame", description="First frame of the walk", default=_D.frame_start)
    frame_end: IntProperty(name="End Frame", description="Last frame of the walk", default=_D.frame_end)
    fps: FloatProperty(
        name="FPS", description="Frames per second the cycle is timed for", default=_D.fps, min=1.0, soft_max=120.0
    )
    key_interval: IntProperty(
        name="Key Every",
        description="A key every N frames on every control (the article: 3)",
        default=_D.key_interval,
        min=1,
        soft_max=12,
    )
    amplitude: FloatProperty(
        name="Amplitude", description="Stride length (0–10); 0 stands still", default=_D.amplitude, min=0.0, max=10.0
    )
    speed: FloatProperty(
        name="Speed",
        description="Cycles per second: Speed 5 is one step cycle per second",
        default=_D.speed,
        min=0.0,
        max=10.0,
    )
    weight: FloatProperty(
        name="Weight",
        description="Laban weight: light (0) bounces, heavy (10) sits low",
        default=_D.weight,
        min=0.0,
        max=10.0,
    )
    direction: FloatProperty(
        name="Direction",
        description="Laban space: direct (0) walks straight, indirect (10) weaves and turns",
        default=_D.direction,
        min=0.0,
        max=10.0,
    )
    gait: EnumProperty(name="Gait", description="How the feet meet the ground", items=GAITS, default="PLANTED")


class ProcAnimSettings(bpy.types.PropertyGroup):
    armature: PointerProperty(
        name="Armature", description="Character to bake onto", type=bpy.types.Object, poll=_is_armature
    )
    duck: PointerProperty(name="Duck Walk", description="Duck walk settings", type=ProcAnimDuckSettings)
    path_walk: PointerProperty(name="Path Walk", description="Path walk settings", type=ProcAnimPathWalkSettings)
    show_roles: bpy.props.BoolProperty(name="Show Roles", description="List every role and its bone", default=False)


# Property-group types are registered before the pointer properties that use them.
classes = (ProcAnimRole, ProcAnimActionInfo, ProcAnimDuckSettings, ProcAnimPathWalkSettings, ProcAnimSettings)


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
