"""Character panel: which armature, its role map (missing roles named), Detect."""

from __future__ import annotations

import bpy

from ..procanim_addon.rig_roles import LEG_ROLES, ROLES


class ProcAnimPanel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "ProcAnim"


def active_armature(context):
    settings = context.scene.procanim
    obj = settings.armature
    if obj is None and context.active_object is not None and context.active_object.type == "ARMATURE":
        obj = context.active_object
    return obj


class PROCANIM_PT_character(ProcAnimPanel, bpy.types.Panel):
    bl_label = "Character"
    bl_idname = "PROCANIM_PT_character"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.procanim
        layout.prop(settings, "armature")
        row = layout.row(align=True)
        row.operator("procanim.add_human", text="Human", icon="ARMATURE_DATA")
        row.operator("procanim.add_duck", text="Duck", icon="ARMATURE_DATA")
        obj = active_armature(context)
        if obj is None:
            layout.label(text="Pick an armature or add one.", icon="INFO")
            return
        roles = {item.role: item.bone for item in obj.data.procanim_roles}
        found = [r for r in ROLES if roles.get(r)]
        missing_legs = [r for r in LEG_ROLES if not roles.get(r)]
        box = layout.box()
        if not roles:
            box.label(text="Roles not detected yet", icon="QUESTION")
        elif missing_legs:
            box.label(text=f"{len(found)} roles; missing:", icon="ERROR")
            box.label(text=", ".join(missing_legs))
        else:
            box.label(text=f"{len(found)} roles assigned", icon="CHECKMARK")
        op = box.operator("procanim.detect_rig", icon="VIEWZOOM")
        op.armature = obj.name
        box.prop(settings, "show_roles", toggle=True)
        if settings.show_roles:
            col = box.column(align=True)
            for item in obj.data.procanim_roles:
                col.prop_search(item, "bone", obj.data, "bones", text=item.role)


classes = (PROCANIM_PT_character,)
