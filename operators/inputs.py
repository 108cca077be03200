"""The key of a generator's inputs: what its ``prepare`` reads, as one comparable value.

Two calls with equal keys make the same Clip (the engines are pure functions of their inputs), so
the key decides when the live preview regenerates and when Generate may bake the preview's Clip
instead of computing it again (:mod:`.previewed`). It holds:

* the generator's arguments (object arguments and where and how the keys go — ``key_target``,
  ``key_tolerance``, ``bake_to``, ``blend_type`` — aside), each with whether the caller set it — an
  argument the caller did not set stands for "the generator decides" (the terrain's frame range with
  Whole Action on), so only its being unset counts;
* the scene's frame rate and unit scale;
* per object argument (and per object the generator lists besides), the object it resolves to:
  name, type, world and basis matrices, and its content: an armature's bones, role map, (for
  generators that read one) source action with its pose markers, and NLA strips;
  a curve's or mesh's evaluated geometry;
* what else the generator reads from the scene (``Generator.scene_values``).

Digests of geometry, rest bones and actions can be served from a cache that the preview invalidates
from Blender's depsgraph updates (:func:`note_update`); ``fresh=True`` recomputes them (Generate does).
"""

from __future__ import annotations

import hashlib

import numpy as np

from .bridge import rest_arrays
from .compat import action_fcurves
from .generator import Generator
from .objects import argument_given

IGNORED = ("key_target", "key_tolerance", "bake_to", "blend_type")  # arguments that change the bake, not the Clip
# (but those of a generator's ``clip_common``)

_argument_names: dict[str, list[str]] = {}  # generator id → its argument names (made once)
_serials: dict[str, int] = {}  # "OB:<name>" / "AC:<name>" → depsgraph updates seen
_digests: dict[str, tuple[int, str]] = {}  # same keys → (serial when computed, digest)


def note_update(kind: str, name: str) -> None:
    """The depsgraph reported an update of ``kind`` ("OB" geometry, "AC" action) ``name``."""
    key = f"{kind}:{name}"
    _serials[key] = _serials.get(key, 0) + 1


def forget() -> None:
    """Drop every cached digest (the preview stopped)."""
    _serials.clear()
    _digests.clear()


def _cached(key: str, fresh: bool, compute) -> str:
    serial = _serials.get(key, 0)
    hit = _digests.get(key)
    if hit is not None and hit[0] == serial and not fresh:
        return hit[1]
    digest = compute()
    _digests[key] = (serial, digest)
    return digest


def _digest(*arrays) -> str:
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _matrix(m) -> bytes:
    return np.array(m, dtype=np.float64).tobytes()


# ----------------------------------------------------------------------------- object contents


def _geometry(obj, context) -> str:
    """Digest of the evaluated geometry of a curve or mesh object (its vertices and face count)."""
    evaluated = obj.evaluated_get(context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    try:
        if mesh is None:
            return "empty"
        co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
        edges = np.empty(len(mesh.edges) * 2, dtype=np.int32)
        mesh.edges.foreach_get("vertices", edges)
        return _digest(co, edges, np.array([len(mesh.polygons)]))
    finally:
        evaluated.to_mesh_clear()


def _bones(obj) -> str:
    """Digest of an armature's rest bones (matrices, lengths, parents, inheritance, deform flags),
    its role map and its rotation modes."""
    bones = obj.data.bones
    mats, lengths = rest_arrays(bones)
    flags = [
        (b.name, b.parent.name if b.parent else "", b.use_connect, b.use_deform, b.use_inherit_rotation,
         b.inherit_scale, b.use_local_location)
        for b in bones
    ]
    roles = [(r.role, r.bone) for r in getattr(obj.data, "procanim_roles", ())]
    modes = [obj.rotation_mode] + [pb.rotation_mode for pb in obj.pose.bones]  # how the ghost interpolates
    return _digest(mats, lengths, np.frombuffer(repr((flags, roles, modes)).encode(), dtype=np.uint8))


def _action(action) -> str:
    """Digest of an action's F-curves (paths and keys) and pose markers (the user's contacts)."""
    markers = repr(sorted((m.name, m.frame) for m in action.pose_markers))
    parts: list[np.ndarray] = [np.frombuffer((action.name + markers).encode(), dtype=np.uint8)]
    for fc in action_fcurves(action):
        co = np.empty(len(fc.keyframe_points) * 2, dtype=np.float32)
        fc.keyframe_points.foreach_get("co", co)
        parts += [np.frombuffer(f"{fc.data_path}[{fc.array_index}]".encode(), dtype=np.uint8), co]
    return _digest(*parts)


def _nla(obj) -> str:
    """Digest of an armature's NLA strips (what plays, where, how) and of their actions: the
    motion Blender evaluates beside the active action."""
    tracks = obj.animation_data.nla_tracks
    layout = [(t.name, t.mute, t.is_solo, [(s.name, s.mute, s.frame_start, s.frame_end, s.action_frame_start,
                                             s.action_frame_end, s.scale, s.repeat, s.influence, s.blend_type,
                                             s.extrapolation, s.action.name if s.action else "") for s in t.strips])
              for t in tracks]
    actions = {s.action.name: s.action for t in tracks for s in t.strips if s.action is not None}
    return _digest(np.frombuffer(repr(layout).encode(), dtype=np.uint8),
                   np.frombuffer("".join(_action(a) for _, a in sorted(actions.items())).encode(), dtype=np.uint8))


def object_state(obj, generator: Generator, context, fresh: bool = False) -> tuple:
    """What of ``obj`` a generator's ``prepare`` may read, as a comparable value."""
    state = [obj.name, obj.type, _matrix(obj.matrix_world), _matrix(obj.matrix_basis)]
    if obj.type == "ARMATURE":
        state.append(_cached(f"OB:{obj.name}", fresh, lambda: _bones(obj)))
        try:
            action = generator.source_action(obj)  # generators that adapt the held action
        except Exception as err:  # an InputError: the key says so, prepare will report it
            state.append(f"no action: {err}")
        else:
            if action is not None:
                state.append(_cached(f"AC:{action.name}", fresh, lambda: _action(action)))
        if obj.animation_data is not None and len(obj.animation_data.nla_tracks):
            state.append(_nla(obj))
    elif obj.type in ("CURVE", "MESH"):
        state.append(_cached(f"OB:{obj.name}", fresh, lambda: _geometry(obj, context)))
    return tuple(state)


# ----------------------------------------------------------------------------- the key


def _plain(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "name"):
        return value.name
    try:
        return tuple(value)
    except TypeError:
        return repr(value)


def argument_values(generator: Generator, args) -> tuple:
    """``(name, value or None when not set)`` for every non-object argument the Clip depends on."""
    names = _argument_names.get(generator.id)
    if names is None:  # building the properties takes a while: once per generator
        objects = {arg.name for arg in generator.objects}
        names = [n for n in generator.operator_arguments()
                 if n not in objects and (n not in IGNORED or n in generator.clip_common)]
        _argument_names[generator.id] = names
    out = []
    for name in names:
        given = argument_given(args, name)
        out.append((name, _plain(getattr(args, name, None)) if given else None))
    return tuple(out)


def resolved_objects(generator: Generator, args, context) -> list:
    """The objects the arguments resolve to, in ``generator.objects`` order (None for an empty
    optional one), then those the generator lists (:meth:`~.generator.Generator.listed_objects`);
    raises the generator's InputError when one cannot be resolved."""
    named = [arg.resolve(args, context, generator.settings_name) for arg in generator.objects]
    return named + generator.listed_objects(args, context)


def inputs_key(generator: Generator, args, context, fresh: bool = False, objects: list | None = None) -> tuple:
    """The key of what ``generator.prepare(args, context)`` would read (see the module docstring);
    ``objects``: the arguments' objects when already resolved (:func:`resolved_objects`).

    Raises the generator's InputError when an object argument cannot be resolved.
    """
    scene = context.scene
    if objects is None:
        objects = resolved_objects(generator, args, context)
    return (
        generator.id,
        argument_values(generator, args),
        (scene.render.fps, scene.render.fps_base, scene.unit_settings.scale_length),
        tuple(None if obj is None else object_state(obj, generator, context, fresh) for obj in objects),
        generator.scene_values(args, context),
    )
