"""Reading the scene into engine inputs: armature → Skeleton and RigMap, curve → polyline, mesh →
triangles, action → Clip. No motion is computed here.

Everything of one armature is read in its upright frame (:mod:`procanim_addon.upright`): its own
space turned so that the scene's up is +Z, in world units — the armature's space itself for a rig
that stands up its +Z at scale 1. The engine calls hand their Clips back in the armature's terms."""

from __future__ import annotations

import hashlib

import bpy
import numpy as np

from ..procanim_addon import transforms as tf
from ..procanim_addon.clip import Clip
from ..procanim_addon.controls.roles import mapped_rigmap
from ..procanim_addon.deform_tree import as_posed, rebuilt
from ..procanim_addon.errors import InputError
from ..procanim_addon.frames import uniform_scale
from ..procanim_addon.rig_roles import ROLES, RigMap, chain_between, detect
from ..procanim_addon.skeleton import Skeleton
from ..procanim_addon.upright import points_to_frame, upright_matrix, upright_skeleton
from .compat import action_fcurves
from .control_maps import map_for
from .control_rig import deform_parents, is_control_rig, read_deform_skeleton


def resolve_armature(name: str, context) -> bpy.types.Object:
    """The armature named ``name`` (empty: the sidebar's armature, else the active object).

    Raises :class:`InputError` with a user-facing message when it is missing, not an armature, not
    editable (linked from a library), in Edit Mode or not in this view layer.
    """
    obj = None
    if name:
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise InputError(f"There is no object named '{name}'.")
    else:
        settings = getattr(context.scene, "procanim", None)
        obj = settings.armature if settings is not None and settings.armature else context.active_object
        if obj is None:
            raise InputError("Pick an armature in the ProcAnim sidebar or make one active.")
    if obj.type != "ARMATURE":
        raise InputError(f"'{obj.name}' is {article(obj.type.lower())}, not an armature.")
    if obj.library is not None or obj.data.library is not None:
        raise InputError(
            f"'{obj.name}' is linked from a library and cannot be animated here; "
            "make it local or use a library override."
        )
    if obj.mode == "EDIT":
        raise InputError(
            f"'{obj.name}' is in Edit Mode, where bone edits are not applied to the armature yet; "
            "switch it to Object or Pose Mode (Tab) first."
        )
    if obj.pose is None:  # no depsgraph has evaluated it yet: in no scene, or not in this view layer
        context.view_layer.update()
        if obj.pose is None:
            raise InputError(
                f"'{obj.name}' is not in this scene's view layer (no scene, another scene or an excluded "
                "collection), so it has no pose to animate; link it into this scene first."
            )
    return obj


def require_uniform_scale(obj) -> float:
    """The object's uniform scale (metres per armature unit); InputError naming the object when it
    is scaled unevenly, mirrored or to nothing (the engine's one check: ``frames.uniform_scale``)."""
    return uniform_scale(np.array(obj.matrix_world, dtype=float), f"'{obj.name}'")[0]


def article(noun: str) -> str:
    """``noun`` with "a" or "an" (for messages: "an armature", "a mesh")."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def resolve_object(name: str, kinds: tuple, what: str):
    """An object of one of ``kinds`` by name, or an InputError naming what was wrong."""
    obj = bpy.data.objects.get(name) if name else None
    kinds_text = " or ".join(article(k.lower()) for k in kinds)
    if obj is None:
        if not name:
            raise InputError(f"Pick {article(what)} ({kinds_text} object).")
        raise InputError(f"There is no object named '{name}' for the {what}.")
    if obj.type not in kinds:
        raise InputError(f"'{obj.name}' is {article(obj.type.lower())}; the {what} must be {kinds_text}.")
    return obj


def rest_arrays(bones) -> tuple[np.ndarray, np.ndarray]:
    """Every bone's rest matrix in armature space (``matrix_local``, flat float32 ``(n·16,)`` in
    Blender's order) and length (armature units, float32 ``(n,)``) of ``bones`` (an armature's
    ``data.bones``), read in bulk."""
    matrices = np.empty(len(bones) * 16, dtype=np.float32)
    bones.foreach_get("matrix_local", matrices)
    lengths = np.empty(len(bones), dtype=np.float32)
    bones.foreach_get("length", lengths)
    return matrices, lengths


def _bone_table(obj) -> tuple:
    """What a Skeleton is made of, read in bulk: names, parent names, inheritance flags (tuples) and
    rest matrices, lengths (arrays)."""
    bones = obj.data.bones
    matrices, lengths = rest_arrays(bones)
    names = tuple(b.name for b in bones)
    parents = tuple(b.parent.name if b.parent else None for b in bones)
    flags = tuple((b.use_inherit_rotation, b.inherit_scale, b.use_local_location, b.use_connect) for b in bones)
    return names, parents, flags, matrices, lengths


# Skeletons already built, by armature data: a crowd of characters sharing one armature's data
# reads it once. The key is the rest data itself (read in bulk, far cheaper than building the
# Skeleton), so an edited rig is never served stale. The engine never changes a Skeleton.
_SKELETONS: dict[int, tuple[str, Skeleton]] = {}
_SKELETON_CACHE_SIZE = 64
# ... and in their upright frames, by armature data and frame (the armature-space Skeleton it came from)
_UPRIGHT: dict[tuple[int, bytes], tuple[Skeleton, Skeleton]] = {}


def upright_frame(obj) -> np.ndarray | None:
    """The similarity from ``obj``'s armature space into its upright frame (None: the same space)."""
    return upright_matrix(np.array(obj.matrix_world, dtype=float))


def read_skeleton(obj, upright: bool = True) -> Skeleton:
    """The armature's rest pose as a Skeleton: in its upright frame (what the engine reads), or in
    armature space (``upright=False``: what Blender's pose channels and the engine's returned Clips
    pose). On a control rig ProcAnim knows (generated by Rigify or CloudRig, or mapped) this is its
    deform skeleton: ``root`` and the bones its control map names (Rigify's ``ORG-`` bones) in the
    hierarchy they move in (``control_rig.read_deform_skeleton``); on a Rigify rig exported without
    its controls, its ``DEF-`` bones rebuilt into one tree (``deform_tree``; armature space: each
    under the bone Blender poses it under)."""
    skeleton = _armature_skeleton(obj)
    if not upright:
        return as_posed(skeleton)
    frame = upright_frame(obj)
    if frame is None:
        return skeleton
    key = (obj.data.session_uid, frame.tobytes())
    kept = _UPRIGHT.get(key)
    if kept is None or kept[0] is not skeleton:
        if len(_UPRIGHT) >= _SKELETON_CACHE_SIZE:
            _UPRIGHT.clear()
        kept = _UPRIGHT[key] = (skeleton, upright_skeleton(skeleton, frame))
    return kept[1]


def _armature_skeleton(obj) -> Skeleton:
    if len(obj.data.bones) and is_control_rig(obj):
        return read_deform_skeleton(obj)
    if not len(obj.data.bones):
        raise InputError(f"'{obj.name}' has no bones.")
    names, parents, flags, matrices, lengths = _bone_table(obj)
    digest = hashlib.sha1(repr((names, parents, flags)).encode() + matrices.tobytes() + lengths.tobytes()).hexdigest()
    cached = _SKELETONS.get(obj.data.session_uid)
    if cached is not None and cached[0] == digest:
        return cached[1]
    bones = [
        {
            "name": b.name,
            "parent": parent,
            "matrix_local": np.array(b.matrix_local, dtype=float),
            "length": b.length,
            "inherit_rotation": flag[0],
            "inherit_scale": flag[1],
            "local_location": flag[2],
            "connected": flag[3],
        }
        for b, parent, flag in zip(obj.data.bones, parents, flags)
    ]
    skeleton = Skeleton.from_bones(bones)
    skeleton = rebuilt(skeleton) or skeleton  # an exported Rigify rig: its DEF- bones as one tree
    if len(_SKELETONS) >= _SKELETON_CACHE_SIZE:
        _SKELETONS.clear()
    _SKELETONS[obj.data.session_uid] = (digest, skeleton)
    return skeleton


def read_rigmap(obj, skeleton: Skeleton | None = None) -> RigMap:
    """The role map stored on the armature (ProcAnim > Character); detected from the rig's structure
    when none is stored (``skeleton``: the armature's upright one, when the caller has read it)."""
    stored = getattr(obj.data, "procanim_roles", None)
    roles = {item.role: item.bone for item in stored if item.bone} if stored is not None else {}
    if not roles:
        return detect_roles(obj, skeleton)
    parents = _engine_parents(obj, skeleton or read_skeleton(obj))
    rm = RigMap(roles, family="stored", rig_name=obj.name)
    if rm.get("hips") and rm.get("chest"):
        rm.spine_bones = chain_between(parents, rm.roles["hips"], rm.roles["chest"])
    return rm


def detect_roles(obj, skeleton: Skeleton | None = None) -> RigMap:
    """The roles found on the armature (its upright ``skeleton`` when already read), whatever is
    stored: by its control map's roles (a mapped family other than Rigify, whose generated rigs
    :func:`procanim_addon.rig_roles.detect` knows by name), else by structure and names."""
    skeleton = skeleton or read_skeleton(obj)
    parents = _engine_parents(obj, skeleton)
    cmap = map_for(obj)
    if cmap is not None and cmap.id != "rigify":
        own = {n: parents.get(n) for n in skeleton.names}
        return mapped_rigmap(cmap, skeleton, own, rig_name=obj.name)
    return detect(list(parents), parents, rig_name=obj.name, skeleton=skeleton)


def _engine_parents(obj, skeleton: Skeleton) -> dict[str, str | None]:
    """Bone → parent name as the engine sees the rig: a rebuilt tree's (``deform_tree``), else a
    control rig's deform bones in the hierarchy they move in and its other bones as they are."""
    if skeleton.armature_parents is not None:
        return {n: (skeleton.names[p] if p >= 0 else None) for n, p in zip(skeleton.names, skeleton.parents)}
    return deform_parents(obj)


def read_rig(obj) -> tuple[Skeleton, RigMap]:
    """The armature's Skeleton and role map; InputError when no role could be found."""
    skeleton = read_skeleton(obj)
    rigmap = read_rigmap(obj, skeleton)
    if not rigmap.roles:
        raise InputError(
            f"No bone roles could be found on '{obj.name}'; use Detect Roles or assign them in the Character panel."
        )
    return skeleton, rigmap


def constrained_bones(obj, names) -> list[str]:
    """Those of ``names`` whose pose bone has an enabled constraint (its keys may be overridden)."""
    out = []
    for name in names:
        pb = obj.pose.bones.get(name)
        if pb is not None and any(c.enabled and c.influence > 0 for c in pb.constraints):
            out.append(name)
    return out


def store_rigmap(obj, rigmap: RigMap) -> None:
    """Write the role map onto the armature data, where the Character panel edits it."""
    coll = obj.data.procanim_roles
    coll.clear()
    for role in ROLES:
        item = coll.add()
        item.role = role
        item.bone = rigmap.get(role) or ""


# ----------------------------------------------------------------------------- other scene inputs


def _into_frame(armature, world_to_points: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points given in an object's space → the armature's upright frame (:func:`upright_frame`)."""
    world = np.array(armature.matrix_world, dtype=float)
    if not abs(np.linalg.det(world[:3, :3])) > 1e-12:
        scale = ", ".join(f"{v:g}" for v in armature.matrix_world.to_scale())
        raise InputError(
            f"'{armature.name}' is scaled to nothing (scale {scale}): paths and meshes are read in its space. "
            "Give it a non-zero scale (N ▸ Item ▸ Scale)."
        )
    m = np.linalg.inv(world) @ world_to_points
    return points_to_frame(upright_frame(armature), points @ m[:3, :3].T + m[:3, 3])


def read_curve_polyline(curve_obj, armature, depsgraph=None) -> np.ndarray:
    """The evaluated curve's centre line (modifiers, world transform) as a polyline ``(N, 3)`` in
    the armature's upright frame.

    The first spline is used; its points are in path order. A bevel or an extrusion would turn the
    curve into a tube or ribbon whose edges do not follow the centre line, so they are switched off
    while the curve is read and put back at once. Raises InputError for a non-curve or a curve with
    no length. ``depsgraph`` defaults to the context's.
    """
    if curve_obj.type != "CURVE":
        raise InputError(f"'{curve_obj.name}' is a {curve_obj.type.lower()}; the path must be a curve object.")
    data = curve_obj.data
    saved = None
    if data.bevel_depth > 0 or data.extrude > 0 or data.bevel_object is not None:
        saved = (data.bevel_depth, data.extrude, data.bevel_object)
        data.bevel_depth, data.extrude, data.bevel_object = 0.0, 0.0, None
        depsgraph = None  # re-evaluate without the bevel
    try:
        depsgraph = depsgraph or bpy.context.evaluated_depsgraph_get()
        points, world = _curve_mesh_points(curve_obj, depsgraph)
    finally:
        if saved is not None:
            data.bevel_depth, data.extrude, data.bevel_object = saved
            bpy.context.view_layer.update()
    points = _into_frame(armature, world, points)
    if np.sum(np.linalg.norm(np.diff(points, axis=0), axis=1)) < 1e-6:
        raise InputError(f"The curve '{curve_obj.name}' has no length.")
    return points


def _curve_mesh_points(curve_obj, depsgraph):
    """Points of the evaluated curve's first chain of edges (object space) and its world matrix."""
    evaluated = curve_obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        n = len(mesh.vertices) if mesh is not None else 0
        if n < 2 or len(mesh.edges) == 0:
            raise InputError(f"The curve '{curve_obj.name}' has no length.")
        co = np.empty(n * 3)
        mesh.vertices.foreach_get("co", co)
        edges = np.empty(len(mesh.edges) * 2, dtype=np.int32)
        mesh.edges.foreach_get("vertices", edges)
        order = _walk_first_chain(n, edges.reshape(-1, 2))
        return co.reshape(n, 3)[order], np.array(evaluated.matrix_world, dtype=float)
    finally:
        evaluated.to_mesh_clear()


def _walk_first_chain(n: int, edges: np.ndarray) -> list[int]:
    """Vertex indices along the connected chain that holds vertex 0 (from an end if it has one)."""
    adjacent: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        adjacent[a].append(int(b))
        adjacent[b].append(int(a))
    component, stack = set(), [0]
    while stack:
        v = stack.pop()
        if v not in component:
            component.add(v)
            stack.extend(adjacent[v])
    ends = sorted(v for v in component if len(adjacent[v]) == 1)
    start = ends[0] if ends else min(component)
    order, seen, cur = [start], {start}, start
    while True:
        nxt = [v for v in adjacent[cur] if v not in seen]
        if not nxt:
            break
        cur = nxt[0]
        order.append(cur)
        seen.add(cur)
    return order


def read_mesh_triangles(mesh_obj, armature, depsgraph, what: str = "ground"):
    """The evaluated mesh as ``(vertices (V, 3), triangles (T, 3))`` in the armature's upright frame.

    Raises InputError for a non-mesh or a mesh with no faces.
    """
    if mesh_obj.type != "MESH":
        raise InputError(f"'{mesh_obj.name}' is a {mesh_obj.type.lower()}; the {what} must be a mesh object.")
    evaluated = mesh_obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        mesh.calc_loop_triangles()
        nt = len(mesh.loop_triangles)
        if nt == 0:
            raise InputError(f"The {what} '{mesh_obj.name}' has no faces.")
        co = np.empty(len(mesh.vertices) * 3)
        mesh.vertices.foreach_get("co", co)
        tris = np.empty(nt * 3, dtype=np.int32)
        mesh.loop_triangles.foreach_get("vertices", tris)
        world = np.array(evaluated.matrix_world, dtype=float)
    finally:
        evaluated.to_mesh_clear()
    verts = _into_frame(armature, world, co.reshape(-1, 3))
    if not np.all(np.isfinite(verts)):
        raise InputError(f"The {what} '{mesh_obj.name}' has invalid vertex coordinates.")
    return verts, tris.reshape(-1, 3)


def read_action_clip(obj, skeleton: Skeleton, frame_start: int, frame_end: int) -> Clip:
    """Sample the armature's active action into a Clip (one frame per integer frame) of the bones of
    ``skeleton``: the armature's own channels (``jobs`` takes them into the skeleton's frame).

    F-curves are evaluated directly (``fcurve.evaluate``), never through ``frame_set``; each bone's
    rotation mode is converted to quaternions; channels with no F-curve keep the pose bone's value.
    """
    ad = obj.animation_data
    action = ad.action if ad else None
    if action is None:
        raise InputError(f"'{obj.name}' has no action to adapt.")
    fcurves = {(fc.data_path, fc.array_index): fc for fc in action_fcurves(action, obj)}
    if not fcurves:
        raise InputError(f"The action '{action.name}' on '{obj.name}' has no keys.")
    lo, hi = action.frame_range
    if frame_end <= frame_start or frame_start < lo - 1e-6 or frame_end > hi + 1e-6:
        raise InputError(f"Frames {frame_start}–{frame_end} are outside the action '{action.name}' ({lo:g}–{hi:g}).")
    frames = np.arange(frame_start, frame_end + 1, dtype=float)
    nf, nb = len(frames), len(skeleton)
    locations = np.zeros((nf, nb, 3))
    rotations = np.zeros((nf, nb, 4))
    for i, name in enumerate(skeleton.names):
        pb = obj.pose.bones[name]
        base = f'pose.bones["{name}"].'

        def channel(path, count, current, base=base):
            out = np.empty((nf, count))
            for k in range(count):
                fc = fcurves.get((base + path, k))
                out[:, k] = [fc.evaluate(f) for f in frames] if fc is not None else current[k]
            return out

        locations[:, i] = channel("location", 3, pb.location)
        mode = pb.rotation_mode
        if mode == "QUATERNION":
            rotations[:, i] = tf.quat_normalize(channel("rotation_quaternion", 4, pb.rotation_quaternion))
        elif mode == "AXIS_ANGLE":
            aa = channel("rotation_axis_angle", 4, pb.rotation_axis_angle)
            rotations[:, i] = tf.quat_from_axis_angle(aa[:, 1:], aa[:, 0])
        else:
            eul = channel("rotation_euler", 3, pb.rotation_euler)
            rotations[:, i] = tf.mat3_to_quat(tf.euler_to_mat3(eul, mode))
    return Clip(list(skeleton.names), frames, obj_fps(obj), locations, rotations, generator="source")


def obj_fps(obj) -> float:
    """Frames per second of the scene the object is in (the first one)."""
    scenes = getattr(obj, "users_scene", ()) or (bpy.context.scene,)
    r = scenes[0].render
    return float(r.fps) / float(r.fps_base or 1.0)
