"""procanim.add_zigzag — the zigzag terrain of Jo & Choi 2019 (four cells across the direction of
travel, the 1st and 3rd raised to the character's ankle, knee or waist) as a mesh in front of the
character, sized and oriented from its rest pose."""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, FloatProperty, StringProperty
from mathutils import Matrix

from ..procanim_addon.errors import InputError
from ..procanim_addon.frames import character_frame
from ..procanim_addon.terrain.shapes import body_heights, zigzag
from ..procanim_addon.upright import world_of_frame
from .bridge import read_rigmap, read_skeleton, resolve_armature

LEVELS = [
    ("ANKLE", "Ankle", "Blocks as high as the ankles (the paper's Low)"),
    ("KNEE", "Knee", "Blocks as high as the knees (the paper's Medium)"),
    ("WAIST", "Waist", "Blocks as high as the waist (the paper's High)"),
]


class PROCANIM_OT_add_zigzag(bpy.types.Operator):
    """Add the paper's zigzag terrain in front of the armature: 1st and 3rd cells raised to ankle, knee or waist"""

    bl_idname = "procanim.add_zigzag"
    bl_label = "Add Zigzag Terrain"
    bl_options = {"REGISTER", "UNDO"}

    armature: StringProperty(
        name="Armature", description="Armature whose size and facing set the terrain (empty: the sidebar's)"
    )
    name: StringProperty(name="Name", description="Name of the new mesh object", default="Zigzag")
    level: EnumProperty(name="Height", description="How high the raised cells are", items=LEVELS, default="KNEE")
    cell_length: FloatProperty(
        name="Cell Length",
        description="Length of each cell along the direction of travel",
        default=0.8,
        min=0.05,
        max=100.0,
        subtype="DISTANCE",
        unit="LENGTH",
    )
    width: FloatProperty(
        name="Width",
        description="Width of the cells across the direction of travel",
        default=3.0,
        min=0.1,
        max=1000.0,
        subtype="DISTANCE",
        unit="LENGTH",
    )
    start: FloatProperty(
        name="Start",
        description="Distance ahead of the character where the first cell begins",
        default=0.3,
        min=-1000.0,
        max=1000.0,
        subtype="DISTANCE",
        unit="LENGTH",
    )

    def execute(self, context):
        try:
            obj = resolve_armature(self.armature, context)
            skeleton = read_skeleton(obj)
            rigmap = read_rigmap(obj, skeleton)
            cf = character_frame(skeleton, rigmap)
            height = body_heights(skeleton, rigmap)[self.level.lower()]
            hip_xy = skeleton.heads[rigmap.index(skeleton, "hips"), :2]  # the upright frame: world units
            mesh = zigzag(
                height,
                start_xy=hip_xy + self.start * cf.forward[:2],
                direction_xy=cf.forward[:2],
                cell_length=self.cell_length,
                width=self.width,
                margin=10.0,
                ground_z=cf.ground_z,
                name=self.name,
            )
        except InputError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        me = bpy.data.meshes.new(self.name)
        me.from_pydata([tuple(v) for v in mesh.vertices.tolist()], [], [tuple(t) for t in mesh.triangles.tolist()])
        me.update()
        terrain = bpy.data.objects.new(self.name, me)
        context.collection.objects.link(terrain)
        terrain.matrix_world = Matrix(world_of_frame(obj.matrix_world, skeleton).tolist())  # built in its frame
        settings = getattr(context.scene, "procanim", None)
        if settings is not None:
            settings.terrain.terrain = terrain  # the Terrain panel's pick (scene.procanim.terrain)
        self.report({"INFO"}, f"Added '{terrain.name}': {self.level.lower()}-high blocks ({height:.2f} m)")
        return {"FINISHED"}


classes = (PROCANIM_OT_add_zigzag,)
