"""Blender's menus: Add ▸ Armature ▸ ProcAnim Human / Duck (Shift+A), and Object ▸ Animation ▸
ProcAnim listing every generator of the registry (each runs with the sidebar's picks and settings
and can be adjusted in its redo panel). Menu entries are also what F3 search finds."""

from __future__ import annotations

import bpy

from ..procanim_addon import registry


class PROCANIM_MT_generators(bpy.types.Menu):
    """ProcAnim's generators, baked onto the active or picked armature"""

    bl_idname = "PROCANIM_MT_generators"
    bl_label = "ProcAnim"

    def draw(self, _context):
        layout = self.layout
        for spec in registry.GENERATORS:
            layout.operator(spec.operator, text=spec.label, icon="ARMATURE_DATA")
        layout.separator()
        layout.operator("procanim.detect_rig", icon="VIEWZOOM")
        layout.operator("procanim.add_zigzag", icon="MESH_GRID")


def draw_add_armature(self, _context):
    layout = self.layout
    layout.separator()
    layout.operator("procanim.add_human", text="ProcAnim Human", icon="OUTLINER_OB_ARMATURE")
    layout.operator("procanim.add_duck", text="ProcAnim Duck", icon="OUTLINER_OB_ARMATURE")


def draw_object_animation(self, _context):
    self.layout.separator()
    self.layout.menu(PROCANIM_MT_generators.bl_idname, icon="ARMATURE_DATA")


MENU_HOOKS = (
    ("VIEW3D_MT_armature_add", draw_add_armature),
    ("VIEW3D_MT_object_animation", draw_object_animation),
)

classes = (PROCANIM_MT_generators,)


def register():
    for menu, hook in MENU_HOOKS:
        getattr(bpy.types, menu).append(hook)


def unregister():
    for menu, hook in MENU_HOOKS:
        getattr(bpy.types, menu).remove(hook)
