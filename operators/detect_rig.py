"""procanim.detect_rig — guess the bone roles of an armature and store them on it."""

from __future__ import annotations

import bpy
from bpy.props import StringProperty

from ..procanim_addon.errors import InputError
from ..procanim_addon.rig_roles import LEG_ROLES, ROLES, detect
from .bridge import resolve_armature, store_rigmap


class PROCANIM_OT_detect_rig(bpy.types.Operator):
    """Detect which bone plays each role (hips, thigh.L …) from the bone names"""

    bl_idname = "procanim.detect_rig"
    bl_label = "Detect Roles"
    bl_options = {"REGISTER", "UNDO"}

    armature: StringProperty(
        name="Armature", description="Armature object name (empty: the sidebar's or the active one)"
    )

    def execute(self, context):
        try:
            obj = resolve_armature(self.armature, context)
        except InputError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        parents = {b.name: (b.parent.name if b.parent else None) for b in obj.data.bones}
        rigmap = detect(list(parents), parents, rig_name=obj.name)
        store_rigmap(obj, rigmap)
        found = len([r for r in ROLES if rigmap.get(r)])
        missing = rigmap.missing(LEG_ROLES)
        if missing:
            self.report(
                {"WARNING"},
                f"{obj.name}: {found} roles found ({rigmap.family or 'unknown rig'}); "
                f"missing leg roles: {', '.join(missing)}",
            )
        else:
            self.report({"INFO"}, f"{obj.name}: {found} roles found ({rigmap.family})")
        return {"FINISHED"}


classes = (PROCANIM_OT_detect_rig,)
