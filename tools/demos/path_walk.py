"""Path walk: one human walks an S-curve over the floor, another climbs a staircase and comes down."""

import bpy

from .duck import add_ground_camera_light

NAME = "path_walk"
GENERATORS = ("path_walk",)
ORDER = 20
SHEET_FRAMES = (1, 40, 80, 120, 160, 200, 240, 280)

S_X, STAIRS_X = -1.6, 1.6
TREAD, RISER, N_STEPS, LANDING, START = 0.30, 0.16, 5, 1.2, 1.5


def s_curve_points(x0=S_X, length=9.0, amp=1.0, n=121):
    import math

    return [(x0 + amp * math.sin(2 * math.pi * k / (n - 1)), -length * k / (n - 1), 0.0) for k in range(n)]


def add_poly_curve(name, points):
    cu = bpy.data.curves.new(name, "CURVE")
    cu.dimensions = "3D"
    cu.bevel_depth = 0.01  # visible in renders
    sp = cu.splines.new("POLY")
    sp.points.add(len(points) - 1)
    for p, co in zip(sp.points, points):
        p.co = (*co, 1.0)
    ob = bpy.data.objects.new(name, cu)
    bpy.context.collection.objects.link(ob)
    return ob


def add_staircase(name, x0=STAIRS_X, half_width=0.5):
    """Up N treads, a landing, down N treads along −Y: treads, risers and side walls (the floor is the plane)."""
    verts, faces = [], []
    s, z = START, 0.0
    levels = []
    for k in range(N_STEPS):
        levels.append((s, z, z + RISER))
        z += RISER
        s += LANDING if k == N_STEPS - 1 else TREAD
    for _ in range(N_STEPS):
        levels.append((s, z, z - RISER))
        z -= RISER
        s += TREAD
    for k, (edge, z_before, z_after) in enumerate(levels):
        b = len(verts)  # riser
        verts += [(x0 - half_width, -edge, z_before), (x0 + half_width, -edge, z_before)]
        verts += [(x0 + half_width, -edge, z_after), (x0 - half_width, -edge, z_after)]
        faces.append((b, b + 1, b + 2, b + 3))
        if z_after > 1e-6 and k + 1 < len(levels):  # tread up to the next riser
            nxt = levels[k + 1][0]
            b = len(verts)
            verts += [(x0 - half_width, -edge, z_after), (x0 + half_width, -edge, z_after)]
            verts += [(x0 + half_width, -nxt, z_after), (x0 - half_width, -nxt, z_after)]
            faces.append((b, b + 1, b + 2, b + 3))
            for x in (x0 - half_width, x0 + half_width):  # side walls, so the flight looks solid
                b = len(verts)
                verts += [(x, -edge, 0.0), (x, -nxt, 0.0), (x, -nxt, z_after), (x, -edge, z_after)]
                faces.append((b, b + 1, b + 2, b + 3))
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    ob = bpy.data.objects.new(name, me)
    bpy.context.collection.objects.link(ob)
    return ob, s


def build(scene):
    add_ground_camera_light(scene, target=(0.0, -1.0, 0.7), camera=(8.5, -3.5, 2.6), lens=45)
    floor = bpy.data.objects[f"{scene.name}.ground"]
    stairs_only, end = add_staircase(f"{scene.name}.stairs")
    # the climber's ground: the floor plane and the staircase joined in one mesh object
    ground = floor.copy()
    ground.data = floor.data.copy()
    ground.name = f"{scene.name}.stairs_ground"
    scene.collection.objects.link(ground)
    with bpy.context.temp_override(
        active_object=ground, selected_editable_objects=[ground, stairs_only], selected_objects=[ground, stairs_only]
    ):
        bpy.ops.object.join()
    ground.location.z = 0.0005  # above the floor plane, so the two do not flicker in renders
    s_path = add_poly_curve("S-curve", s_curve_points())
    line = add_poly_curve("Stairs path", [(STAIRS_X, 0.0, 0.0), (STAIRS_X, -(end + 1.5), 0.0)])
    bpy.ops.procanim.add_human(name="Walker", location=(S_X, 0.0, 0.0))
    bpy.ops.procanim.add_human(name="Climber", location=(STAIRS_X, 0.0, 0.0))
    figures = {}
    for name, path, gnd in (("Walker", s_path, floor), ("Climber", line, ground)):
        result = bpy.ops.procanim.path_walk(armature=name, path=path.name, ground=gnd.name, frame_start=1)
        assert result == {"FINISHED"}, f"{name}: {result}"
        figures[name] = bpy.data.objects[name].animation_data.action.procanim.metrics_json
    frames = [int(__import__("json").loads(v)["frame_end"]) for v in figures.values()]
    scene.frame_start, scene.frame_end = 1, max(frames)
    # the camera rides along with the climber (its target copies the hips' Y)
    aim = bpy.data.objects[f"{scene.name}.camera_target"]
    follow = aim.constraints.new("COPY_LOCATION")
    follow.target, follow.subtarget = bpy.data.objects["Climber"], "hips"
    follow.use_x = follow.use_z = False
    follow.use_offset = True
    cam = scene.camera
    cam.parent = aim
    cam.location = (7.0, 0.0, 2.6)
    settings = scene.procanim
    settings.armature = bpy.data.objects["Walker"]
    settings.path_walk.path = s_path
    settings.path_walk.ground = floor
    return figures


def ANIMATION_FRAMES(scene):  # noqa: N802 - the demo's attribute name, here a function of the scene
    """The climb, whatever its timing: from half a metre before the first riser until the climber's
    hips are 0.3 m past the last one (a journey, not a cycle: the animation restarts at the foot)."""
    first, last = -(START - 0.5), -(last_riser() + 0.3)
    climber = bpy.data.objects["Climber"]
    frames = range(scene.frame_start, scene.frame_end + 1, 2)
    ys = []
    with bpy.context.temp_override(scene=scene, view_layer=scene.view_layers[0]):
        for frame in frames:
            scene.frame_set(frame)
            evaluated = climber.evaluated_get(bpy.context.evaluated_depsgraph_get())
            ys.append((evaluated.matrix_world @ evaluated.pose.bones["hips"].head).y)
    start = next(f for f, y in zip(frames, ys) if y < first)
    end = next(f for f, y in zip(frames, ys) if y < last)
    return start, end, 2


def last_riser() -> float:
    """Where the staircase's last riser (down to the floor) stands, m along −Y (:func:`add_staircase`)."""
    return START + 2 * (N_STEPS - 1) * TREAD + LANDING
