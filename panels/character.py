"""Character panel: which armature, what detection recognised (family, confidence, notes), its role
map with the missing roles named, Detect, and which bones a bake will key."""

from __future__ import annotations

import textwrap

import bpy

from ..operators.control_map_ops import map_status
from ..operators.detect_rig import missing_roles, read_detection
from ..operators.objects import active_armature
from ..procanim_addon.rig_roles import ARM_ROLES, ROLES


class ProcAnimPanel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "ProcAnim"


def _lines(layout, text: str, width: int = 44, icon: str = "NONE") -> None:
    """``text`` as labels of at most ``width`` characters (the sidebar does not wrap)."""
    for k, line in enumerate(textwrap.wrap(text, width) or [""]):
        layout.label(text=line, icon=icon if k == 0 else "BLANK1" if icon != "NONE" else "NONE")


def _draw_detection(box, obj, roles: dict[str, str]) -> None:
    """Family and confidence, a hand-edited map, missing roles, detection notes."""
    detection = read_detection(obj)
    if detection is not None:
        sure = detection["confidence"] >= 0.75
        box.label(text=f"{detection['family']} — confidence {detection['confidence']:.0%}",
                  icon="CHECKMARK" if sure else "QUESTION")
        if detection["roles"] != {r: b for r, b in roles.items() if b}:
            box.label(text="Map edited by hand since detection", icon="GREASEPENCIL")
    legs, others = missing_roles(roles)
    found = len([r for r in ROLES if roles.get(r)])
    if legs:
        _lines(box, f"{found} roles; missing leg roles: {', '.join(legs)}", icon="ERROR")
    else:
        box.label(text=f"{found} roles assigned", icon="CHECKMARK")
    if set(ARM_ROLES) <= set(others):  # a rig without arms (a bird): say so, not six role names
        others = [r for r in others if r not in ARM_ROLES]
        box.label(text="No arms (the handshake needs them)", icon="INFO")
    if others:
        _lines(box, f"Missing: {', '.join(others)}", icon="INFO")
    for note in (detection or {}).get("notes", [])[:3]:
        _lines(box, note)


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
        box = layout.box()
        if not any(roles.values()) and read_detection(obj) is None:
            box.label(text="Roles not detected yet", icon="QUESTION")
        else:
            _draw_detection(box, obj, roles)
        op = box.operator("procanim.detect_rig", icon="VIEWZOOM")
        op.armature = obj.name
        box.prop(settings, "show_roles", toggle=True)
        if settings.show_roles:
            col = box.column(align=True)
            for item in obj.data.procanim_roles:
                col.prop_search(item, "bone", obj.data, "bones", text=item.role)
        _draw_control_map(layout.box(), obj)


def _draw_control_map(box, obj) -> None:
    """Which control map the rig follows (its controls, switches), and Save / Load / Clear."""
    box.label(text="Control Map")
    title, icon, detail = map_status(obj)
    box.label(text=title, icon=icon)
    _lines(box, detail, width=34)
    row = box.row(align=True)
    row.operator("procanim.save_control_map", text="Save…", icon="EXPORT").armature = obj.name
    row.operator("procanim.load_control_map", text="Load…", icon="IMPORT").armature = obj.name
    if "procanim_control_map" in obj.data:
        row.operator("procanim.clear_control_map", text="", icon="X").armature = obj.name


classes = (PROCANIM_PT_character,)
