"""procanim.export — a baked character to FBX or glTF, as Unreal, Unity and Godot take it.

:func:`export_character` writes the armature, its meshes and one bake (its action only, whether it
is the active action or plays in an NLA strip) with Blender's own exporters
(``export_scene.fbx``, ``export_scene.gltf``) and explicit arguments (:data:`FBX_ARGUMENTS`,
:data:`GLTF_ARGUMENTS`); docs/export.md says what each choice is for. While it runs the armature
plays that action alone (:class:`_Solo`: NLA off, the scene's range the action's) and, for FBX, its
object is named ``Armature`` (Unreal drops the node of that name, so that the rig's ``root`` bone is
the skeleton's root and carries the root motion); everything is put back afterwards, also when the
exporter fails. The batch command exports through the same function (``batch/shot.py``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import bpy
from bpy.props import EnumProperty, StringProperty

from ..procanim_addon.errors import InputError
from .bridge import resolve_armature
from .compat import action_fcurves
from .keys import read_metrics
from .objects import last_bake
from .strips import PlayingAlone

FORMATS = [
    ("FBX", "FBX", "Autodesk FBX (.fbx) for Unreal and Unity"),
    ("GLB", "glTF Binary", "glTF 2.0 in one binary file (.glb) for Godot, and Unity or Unreal through their glTF "
     "importers"),
    ("GLTF", "glTF Separate", "glTF 2.0 as .gltf (JSON) with a .bin beside it"),
]
SUFFIX = {"FBX": ".fbx", "GLB": ".glb", "GLTF": ".gltf"}
#: The FBX node name Unreal drops on import (so that the rig's own top bone is the skeleton's root).
UNREAL_ARMATURE_NODE = "Armature"

FBX_ARGUMENTS: dict[str, Any] = {
    "object_types": {"ARMATURE", "MESH"},
    "use_mesh_modifiers": True,
    "mesh_smooth_type": "FACE",
    "add_leaf_bones": False,
    "primary_bone_axis": "Y",
    "secondary_bone_axis": "X",
    "use_armature_deform_only": False,
    "armature_nodetype": "NULL",
    "bake_anim": True,
    "bake_anim_use_all_bones": True,
    "bake_anim_use_nla_strips": False,
    "bake_anim_use_all_actions": False,
    "bake_anim_force_startend_keying": True,
    "bake_anim_step": 1.0,
    "bake_anim_simplify_factor": 0.0,
    "axis_forward": "-Z",
    "axis_up": "Y",
    "global_scale": 1.0,
    "apply_unit_scale": True,
    "apply_scale_options": "FBX_SCALE_UNITS",
    "use_space_transform": True,
    "bake_space_transform": False,
    "use_custom_props": False,
    "batch_mode": "OFF",
}
GLTF_ARGUMENTS: dict[str, Any] = {
    "export_yup": True,
    "export_apply": False,
    "export_animations": True,
    "export_animation_mode": "ACTIVE_ACTIONS",
    "export_frame_range": False,
    "export_force_sampling": True,
    "export_frame_step": 1,
    "export_anim_slide_to_zero": True,
    "export_optimize_animation_size": False,
    "export_def_bones": False,
    "export_leaf_bone": False,
    "export_skins": True,
    "export_morph": True,
    "export_cameras": False,
    "export_lights": False,
    "export_anim_single_armature": True,
    "export_reset_pose_bones": True,
    "export_current_frame": False,
    "export_rest_position_armature": True,
    "export_hierarchy_flatten_bones": False,
    "export_armature_object_remove": False,
}


def character_parts(obj) -> list:
    """The armature ``obj`` and its meshes: meshes parented under it or deformed by it (an Armature
    modifier pointing at it), in the view layer."""
    layer = bpy.context.view_layer.objects
    parts = [obj]
    for other in bpy.context.scene.objects:
        if other.type != "MESH" or other.name not in layer:
            continue
        deformed = any(m.type == "ARMATURE" and m.object == obj for m in other.modifiers)
        if deformed or obj in _ancestors(other):
            parts.append(other)
    return parts


def _ancestors(obj) -> list:
    out = []
    while obj.parent is not None:
        obj = obj.parent
        out.append(obj)
    return out


def baked_action(obj, generator: str = ""):
    """The bake to export: ``generator``'s last bake on ``obj`` (its active action, else its own NLA
    strip); with no generator named, the active action when it is a ProcAnim bake, else the topmost
    NLA strip holding one of the object's bakes. Raises :class:`InputError` when there is none."""
    if generator:
        action = last_bake(obj, generator, strips=True)
    else:
        ad = obj.animation_data
        action = ad.action if ad is not None and ad.action is not None and ad.action.procanim.generator else None
        if action is None and ad is not None:
            owned = [s.action for t in reversed(ad.nla_tracks) for s in t.strips
                     if s.action is not None and s.action.procanim.generator and s.action.procanim.owner == obj.name]
            action = owned[0] if owned else None
    if action is None:
        what = f"{generator.replace('_', ' ')} bake" if generator else "ProcAnim bake"
        raise InputError(f"'{obj.name}' has no {what} to export; Generate first.")
    return action


class _Solo(PlayingAlone):
    """While inside: ``obj`` plays ``action`` alone (:class:`.strips.PlayingAlone`) and the scene's
    frame range is the action's; everything is put back on leaving."""

    def __enter__(self):
        scene = bpy.context.scene
        self.frames = (scene.frame_start, scene.frame_end, scene.frame_current)
        super().__enter__()
        lo, hi = self.action.frame_range
        scene.frame_start, scene.frame_end = int(round(lo)), int(round(hi))
        return self

    def __exit__(self, *exc):
        super().__exit__(*exc)
        scene = bpy.context.scene
        scene.frame_start, scene.frame_end = self.frames[:2]
        scene.frame_current = self.frames[2]  # the exporters evaluate the frame they found; no re-evaluation here
        return False


class _Renamed:
    """While inside: ``obj`` is named ``name`` (an object holding that name lends it meanwhile)."""

    def __init__(self, obj, name: str):
        self.obj, self.name = obj, name

    def __enter__(self):
        self.old = self.obj.name
        self.other = bpy.data.objects.get(self.name)
        if self.other is self.obj:
            self.other = None
            return self
        if self.other is not None:
            self.other.name = f"{self.name}.procanim-export"
        self.obj.name = self.name
        return self

    def __exit__(self, *_exc):
        if self.obj.name != self.old:
            self.obj.name = self.old
        if self.other is not None:
            self.other.name = self.name
        return False


class _Selected:
    """While inside: exactly ``objects`` are selected, the first one active."""

    def __init__(self, objects):
        self.objects = objects

    def __enter__(self):
        layer = bpy.context.view_layer
        self.saved = ([o for o in layer.objects if o.select_get()], layer.objects.active)
        for o in layer.objects:
            o.select_set(False)
        for o in self.objects:
            o.select_set(True)
        layer.objects.active = self.objects[0]
        return self

    def __exit__(self, *_exc):
        layer = bpy.context.view_layer
        for o in layer.objects:
            o.select_set(o in self.saved[0])
        layer.objects.active = self.saved[1]
        return False


def export_character(obj, filepath: str | os.PathLike, fmt: str = "FBX", generator: str = "") -> dict:
    """Write armature ``obj``, its meshes and its bake (:func:`baked_action`) to ``filepath`` as
    ``fmt`` (``FBX``, ``GLB``, ``GLTF``); returns what was written (file, action, frames).

    Raises :class:`InputError` for an unknown format or a character with no bake; the exporter's
    own errors propagate (the scene is put back first)."""
    if fmt not in SUFFIX:
        raise InputError(f"Unknown export format '{fmt}'; use one of {', '.join(SUFFIX)}.")
    action = baked_action(obj, generator)
    path = Path(filepath)
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = character_parts(obj)
    if bpy.context.object is not None and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    with _Solo(obj, action), _Selected(parts):
        if fmt == "FBX":
            with _Renamed(obj, UNREAL_ARMATURE_NODE):
                bpy.ops.export_scene.fbx(filepath=str(path), check_existing=False, use_selection=True,
                                         **FBX_ARGUMENTS)
        else:
            bpy.ops.export_scene.gltf(filepath=str(path), check_existing=False, use_selection=True,
                                      export_format="GLB" if fmt == "GLB" else "GLTF_SEPARATE", **GLTF_ARGUMENTS)
    lo, hi = action.frame_range
    return {"file": str(path), "format": fmt, "action": action.name, "frame_start": lo, "frame_end": hi,
            "objects": [o.name for o in parts]}


def export_warning(obj, action) -> str:
    """A sentence when the bake's travel is not on a bone (root motion on the object), which a game
    engine's root motion does not read the same way ('' otherwise)."""
    m = read_metrics(action)
    if m.get("loop_travel_role") == "object" or _object_keyed(action):
        return (f"{obj.name}: the bake moves the object itself (Root Motion 'Object'); Unity and Godot read that "
                "travel on the armature node, Unreal drops it. For root motion on the root bone, bake with "
                "Root Motion 'Root Bone'.")
    return ""


def _object_keyed(action) -> bool:
    return any(fc.data_path in ("location", "rotation_euler", "rotation_quaternion") for fc in action_fcurves(action))


class PROCANIM_OT_export(bpy.types.Operator):
    """Export a baked character (armature, meshes, the bake's action only) to FBX or glTF for a game engine"""

    bl_idname = "procanim.export"
    bl_label = "Export Baked Character"
    bl_options = {"REGISTER"}

    armature: StringProperty(name="Armature", description="Armature whose bake is exported (object name; empty: "
                             "the sidebar's armature, else the active object)")
    generator: StringProperty(name="Generator", description="Generator whose bake is exported (empty: the active "
                              "action when it is a ProcAnim bake, else the newest ProcAnim NLA strip)")
    filepath: StringProperty(name="File Path", description="File to write (its suffix follows the format)",
                             subtype="FILE_PATH")
    format: EnumProperty(name="Format", description="File format", items=FORMATS, default="FBX")
    filter_glob: StringProperty(name="Filter", default="*.fbx;*.glb;*.gltf", options={"HIDDEN"},
                                description="File browser filter")

    def invoke(self, context, _event):
        if context.window is None:
            return self.execute(context)
        if not self.filepath:
            obj = context.scene.objects.get(self.armature) or context.active_object
            stem = f"{obj.name if obj is not None else 'character'}_{self.generator or 'bake'}"
            folder = bpy.path.abspath("//") if bpy.data.filepath else ""
            self.filepath = os.path.join(folder, stem + SUFFIX[self.format])
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        try:
            obj = resolve_armature(self.armature or _sidebar_armature(context), context)
            if not self.filepath:
                raise InputError("Give a file path to export to.")
            path = Path(bpy.path.abspath(self.filepath))
            path = path.with_suffix(SUFFIX[self.format])
            done = export_character(obj, path, self.format, self.generator)
        except InputError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        except (OSError, RuntimeError) as err:  # the exporter's own failure (a folder it cannot write …)
            self.report({"ERROR"}, f"Could not export '{self.armature or 'the armature'}' to {self.filepath}: {err}")
            return {"CANCELLED"}
        warning = export_warning(obj, bpy.data.actions[done["action"]])
        if warning:
            self.report({"WARNING"}, warning)
        self.report({"INFO"}, f"Exported '{obj.name}' ({done['action']}, frames {done['frame_start']:.0f}–"
                              f"{done['frame_end']:.0f}) to {done['file']}")
        return {"FINISHED"}


def _sidebar_armature(context) -> str:
    settings = getattr(context.scene, "procanim", None)
    picked = getattr(settings, "armature", None) if settings is not None else None
    return picked.name if picked is not None else ""


classes = (PROCANIM_OT_export,)
