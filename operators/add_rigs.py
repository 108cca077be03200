"""procanim.add_human / procanim.add_duck — ProcAnim's demo characters, with a body mesh."""

from __future__ import annotations

import math

import bpy
import numpy as np
from bpy.props import FloatProperty, FloatVectorProperty, StringProperty
from mathutils import Matrix

from ..procanim_addon.rigs import body_mesh, duck_template, human_template
from .bridge import store_rigmap

MIN_HEIGHT_M, MAX_HEIGHT_M = 0.05, 50.0  # a mouse to a giant: outside this a rig is a typo
MAX_LOCATION_M = 1e5  # 100 km from the origin: beyond it float precision ruins the rig


def build_character(context, template, name: str, location) -> bpy.types.Object:
    """Armature from a template (each bone's full rest matrix set in edit mode) plus a skinned mesh."""
    if context.object is not None and context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    context.collection.objects.link(obj)
    obj.location = location
    arm.display_type = "STICK"
    for o in context.view_layer.objects:
        o.select_set(False)
    context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    for spec in template.bones:
        eb = arm.edit_bones.new(spec.name)
        eb.head, eb.tail = spec.head, spec.tail
        eb.matrix = Matrix([list(row) for row in spec.matrix()])
    for spec in template.bones:
        if spec.parent:
            arm.edit_bones[spec.name].parent = arm.edit_bones[spec.parent]
    bpy.ops.object.mode_set(mode="OBJECT")

    verts, faces, groups, face_mats = body_mesh(template)
    me = bpy.data.meshes.new(f"{name}.body")
    me.from_pydata([tuple(v) for v in verts], [], faces)
    mat_names = list(template.materials)
    for mname in mat_names:
        full = f"ProcAnim.{template.name}.{mname}"  # per template: a Human must not recolour the Ducks
        mat = bpy.data.materials.get(full) or bpy.data.materials.new(full)
        mat.diffuse_color = template.materials[mname]
        me.materials.append(mat)
    me.polygons.foreach_set("material_index", np.array([mat_names.index(m) for m in face_mats], dtype=np.int32))
    me.polygons.foreach_set("use_smooth", np.ones(len(faces), dtype=bool))
    me.update()
    body = bpy.data.objects.new(f"{name}.body", me)
    context.collection.objects.link(body)
    body.parent = obj
    groups = np.asarray(groups)
    for bone in dict.fromkeys(groups):
        vg = body.vertex_groups.new(name=bone)
        vg.add([int(i) for i in np.nonzero(groups == bone)[0]], 1.0, "REPLACE")
    mod = body.modifiers.new("Armature", "ARMATURE")
    assert isinstance(mod, bpy.types.ArmatureModifier)
    mod.object = obj
    store_rigmap(obj, template.rigmap())
    if context.scene.procanim.armature is None:
        context.scene.procanim.armature = obj
    return obj


class _AddCharacter:
    bl_options = {"REGISTER", "UNDO"}

    name: StringProperty(name="Name", description="Name of the new armature object", default="")
    location: FloatVectorProperty(
        name="Location",
        description="Where the character stands (m)",
        subtype="TRANSLATION",
        size=3,
        min=-MAX_LOCATION_M,
        max=MAX_LOCATION_M,
    )

    def execute(self, context):
        if not (MIN_HEIGHT_M <= self.height <= MAX_HEIGHT_M):
            limits = f"{MIN_HEIGHT_M} and {MAX_HEIGHT_M:g} m"
            self.report({"ERROR"}, f"Height must be between {limits} (got {self.height:g}).")
            return {"CANCELLED"}
        if not all(math.isfinite(v) for v in self.location):
            self.report({"ERROR"}, f"Location must be finite numbers (got {tuple(self.location)}).")
            return {"CANCELLED"}
        template = self.template(self.height)
        obj = build_character(context, template, self.name or template.name, self.location)
        context.scene.procanim.armature = obj
        self.report({"INFO"}, f"Added {obj.name} ({self.height:.2f} m, {len(template.bones)} bones)")
        return {"FINISHED"}


class PROCANIM_OT_add_human(_AddCharacter, bpy.types.Operator):
    """Add ProcAnim's human: a 1.75 m armature with roles for walking and handshakes, and a body"""

    bl_idname = "procanim.add_human"
    bl_label = "Add ProcAnim Human"
    height: FloatProperty(
        name="Height", description="Standing height (m)", default=1.75, min=MIN_HEIGHT_M, max=MAX_HEIGHT_M,
        soft_max=3.0, unit="LENGTH",
    )
    template = staticmethod(human_template)


class PROCANIM_OT_add_duck(_AddCharacter, bpy.types.Operator):
    """Add ProcAnim's duck: a bird armature (legs, feet, toes, body, neck, head, tail) and a body"""

    bl_idname = "procanim.add_duck"
    bl_label = "Add ProcAnim Duck"
    height: FloatProperty(
        name="Height", description="Standing height (m)", default=0.5, min=MIN_HEIGHT_M, max=MAX_HEIGHT_M,
        soft_max=3.0, unit="LENGTH",
    )
    template = staticmethod(duck_template)


classes = (PROCANIM_OT_add_human, PROCANIM_OT_add_duck)
