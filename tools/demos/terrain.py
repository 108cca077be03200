"""A walk and a jump made on flat ground, adapted to the paper's zigzag terrain (blocks at knee height)."""

import bpy

NAME = "terrain"
ORDER = 30
SHEET_FRAMES = (1, 12, 23, 34, 45, 56, 67, 78)
BLOCK_M = 0.45  # about the human's knee height (1.75 m human)


def add_zigzag(name, height, y0=-0.3, cell=0.8, width=3.2, margin=6.0):
    """Ground at z = 0 with blocks of ``height`` on the 1st and 3rd of four cells along −Y."""
    y_end = y0 - 4 * cell
    verts = [(-margin, y0 + margin, 0.0), (margin, y0 + margin, 0.0), (margin, y_end - margin, 0.0)]
    verts.append((-margin, y_end - margin, 0.0))
    faces = [(0, 3, 2, 1)]
    for k in (0, 2):
        ya, yb = y0 - k * cell, y0 - (k + 1) * cell
        base = len(verts)
        for z in (0.0, height):
            verts += [(-width / 2, ya, z), (-width / 2, yb, z), (width / 2, yb, z), (width / 2, ya, z)]
        faces.append((base + 4, base + 5, base + 6, base + 7))
        faces += [(base + a, base + (a + 1) % 4, base + 4 + (a + 1) % 4, base + 4 + a) for a in range(4)]
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    mat = bpy.data.materials.new(f"{name}.stone")
    mat.diffuse_color = (0.55, 0.5, 0.45, 1.0)
    me.materials.append(mat)
    obj = bpy.data.objects.new(name, me)
    bpy.context.collection.objects.link(obj)
    return obj


def build(scene):
    figures = {}
    terrain = add_zigzag(f"{scene.name}.zigzag", BLOCK_M)
    for name, kind, x in (("Hiker", "WALK", 0.6), ("Jumper", "JUMP", -0.6)):
        bpy.ops.procanim.add_human(name=name, location=(x, 0.0, 0.0))
        assert bpy.ops.procanim.source_motion(armature=name, kind=kind) == {"FINISHED"}
        result = bpy.ops.procanim.adapt_terrain(armature=name, terrain=terrain.name)
        assert result == {"FINISHED"}, f"{name}: {result}"
        figures[name] = bpy.data.objects[name].animation_data.action.procanim.metrics_json
    scene.frame_start, scene.frame_end = 1, 80
    bpy.ops.object.empty_add(location=(0.0, -1.6, 0.3))
    aim = bpy.context.object
    aim.name = f"{scene.name}.camera_target"
    bpy.ops.object.camera_add(location=(4.5, 2.0, 3.0))
    cam = bpy.context.object
    cam.constraints.new("TRACK_TO").target = aim
    cam.data.lens = 26
    scene.camera = cam
    bpy.ops.object.light_add(type="SUN", location=(2, -2, 4))
    scene.procanim.armature = bpy.data.objects["Hiker"]
    scene.procanim.terrain.terrain = terrain
    return figures
