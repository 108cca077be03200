"""Control rigs on the Blender side: read one, write a conversion's keys onto its controls, and
let Blender evaluate a few frames to check them.

* :func:`read_control_rig` reads an armature once — rest matrices, parents, inheritance flags,
  rotation modes, locks, every enabled constraint with its evaluated influence (drivers applied),
  custom-property switches and which constraint influences they drive — into
  :class:`procanim_addon.controls.ControlRig`.
* :func:`probe_ik_stretch` measures, once per rig and settings, what Blender's IK solver does to
  each stretchy IK chain (the IK control moved where the engine's :class:`ProbePlan` says, the
  chain's lengths read back), so that the engine can cancel the stretch
  (:mod:`procanim_addon.controls.stretch`).
* :func:`convert_onto_controls` reads all that with the switches in the bake's mode and has the
  engine convert the Clip (:func:`procanim_addon.controls.convert`); :func:`plan_control_bake` has
  the key planner reduce the controls' keys within the key tolerance, the error measured on the
  deform skeleton the controls drive (:func:`procanim_addon.keys.plan_control_keys`);
  :func:`write_onto_controls` writes the keys (:mod:`.keys`) and verifies the bake: Blender
  evaluates a handful of frames — with reduced keys, frames between keys too — of what was written
  (:func:`sample_matrices`: ``scene.frame_set`` on the samples only, never per frame) and the engine
  compares the deform bones with the pose it intended (:func:`procanim_addon.controls.residual.verify`).
* :func:`read_deform_clip` reads the deform pose Blender evaluates for the current action
  (whatever drives it: keys on controls, constraints, drivers) as a Clip of the deform skeleton,
  the source motion of a terrain adaptation on a control rig.

Nothing here computes motion: the engine does, from what is read here.
"""

from __future__ import annotations

import time
from copy import copy
from dataclasses import dataclass, field, replace
from typing import Any

import bpy
import numpy as np
from mathutils import Matrix

from ..procanim_addon import keys as planner
from ..procanim_addon.clip import Clip
from ..procanim_addon.controls import ControlKeys, convert, deform_skeleton
from ..procanim_addon.controls.constraints import Unsupported
from ..procanim_addon.controls.deform import deform_clip
from ..procanim_addon.controls.intended import IntendedPose, intended_for
from ..procanim_addon.controls.maps import ControlMap, MapError, rigify_map
from ..procanim_addon.controls.residual import VERIFY_FRAMES, deform_checks, verification_samples, verify
from ..procanim_addon.controls.rig import Constraint, ControlRig, Mapping
from ..procanim_addon.controls.stretch import ProbePlan, StretchResponse, chain_lengths, stretchy_chain
from ..procanim_addon.controls.structure import find_limbs
from ..procanim_addon.curve_keys import CurveKeys
from ..procanim_addon.errors import InputError
from ..procanim_addon.key_marks import KeyMarks
from ..procanim_addon.registry import figure_keys
from ..procanim_addon.skeleton import Skeleton
from ..procanim_addon.verification import finish
from .control_maps import bone_rules, map_for
from .keys import BakeKeys, bone_path, open_bake, property_path, set_action_aside

_SPACES = ("owner_space", "target_space")


def _drivers(obj) -> dict[str, tuple[str, str]]:
    """data path → (bone, property) for drivers that read one custom property of a pose bone."""
    out: dict[str, tuple[str, str]] = {}
    ad = obj.animation_data
    if ad is None:
        return out
    for fc in ad.drivers:
        variables = fc.driver.variables
        if len(variables) != 1 or variables[0].type != "SINGLE_PROP":
            continue
        path = variables[0].targets[0].data_path
        if path.startswith('pose.bones["') and '"]["' in path:
            bone, prop = path[len('pose.bones["') : -2].split('"]["', 1)
            out[fc.data_path] = (bone, prop)
    return out


def _constraint(con, index, drivers, owner: str) -> Constraint:
    """A pose-bone constraint's settings as plain data (influence and mute are read per bake)."""
    kind = con.type
    sub = getattr(con, "subtarget", "")
    same = getattr(con, "target", None) is not None and con.target.data == con.id_data.data
    c = Constraint(kind=kind, name=con.name)
    c.target = index.get(sub, -1) if sub and same else -1
    for attr in _SPACES:
        if hasattr(con, attr):
            setattr(c, attr, getattr(con, attr))
    c.head_tail = float(getattr(con, "head_tail", 0.0))
    if hasattr(con, "mix_mode"):
        c.mix = con.mix_mode
    if kind in ("COPY_LOCATION", "COPY_ROTATION", "COPY_SCALE"):
        c.axes = (con.use_x, con.use_y, con.use_z)
        if hasattr(con, "invert_x"):
            c.invert = (con.invert_x, con.invert_y, con.invert_z)
        c.use_offset = bool(getattr(con, "use_offset", False))
        c.euler_order = getattr(con, "euler_order", "AUTO")
    if kind == "ARMATURE":
        c.targets = tuple(
            (index.get(t.subtarget, -1), float(t.weight))
            for t in con.targets
            if t.target is not None and t.subtarget in index
        )
    elif kind == "STRETCH_TO":
        c.bulge, c.volume, c.keep_axis = float(con.bulge), con.volume, con.keep_axis
        if con.use_bulge_min or con.use_bulge_max:
            c.bulge_limits = (con.use_bulge_min, float(con.bulge_min), con.use_bulge_max, float(con.bulge_max),
                              float(con.bulge_smooth))
    elif kind == "DAMPED_TRACK":
        c.track_axis = con.track_axis
    elif kind == "LIMIT_DISTANCE":
        c.limit_mode = con.limit_mode
    elif kind == "LIMIT_ROTATION":
        c.limits = tuple(
            (getattr(con, f"use_limit_{a}"), getattr(con, f"min_{a}"), getattr(con, f"max_{a}")) for a in "xyz"
        )
    elif kind == "LIMIT_SCALE":
        c.scale_limits = tuple(
            (getattr(con, f"use_min_{a}"), getattr(con, f"min_{a}"), getattr(con, f"use_max_{a}"),
             getattr(con, f"max_{a}"))
            for a in "xyz"
        )
    elif kind == "TRANSFORM":
        c.mapping = _mapping(con)
    elif kind == "IK":
        c.chain_count, c.use_tail, c.use_stretch = con.chain_count, con.use_tail, con.use_stretch
        c.pole = index.get(con.pole_subtarget, -1) if con.pole_subtarget else -1
        c.pole_angle = float(con.pole_angle)
    c.driver = drivers.get(f'pose.bones["{owner}"].constraints["{con.name}"].influence')
    return c


_MAPPED = {"LOCATION": "", "ROTATION": "_rot", "SCALE": "_scale"}
_MIX = {"LOCATION": "mix_mode", "ROTATION": "mix_mode_rot", "SCALE": "mix_mode_scale"}


def _mapping(con) -> Mapping:
    """A Transformation constraint's mapping as plain data."""
    src, dst = _MAPPED[con.map_from], _MAPPED[con.map_to]
    return Mapping(
        source=con.map_from,
        dest=con.map_to,
        axes=tuple("XYZ".index(getattr(con, f"map_to_{a}_from")) for a in "xyz"),
        from_min=tuple(float(getattr(con, f"from_min_{a}{src}")) for a in "xyz"),
        from_max=tuple(float(getattr(con, f"from_max_{a}{src}")) for a in "xyz"),
        to_min=tuple(float(getattr(con, f"to_min_{a}{dst}")) for a in "xyz"),
        to_max=tuple(float(getattr(con, f"to_max_{a}{dst}")) for a in "xyz"),
        extrapolate=bool(con.use_motion_extrapolate),
        mix=getattr(con, _MIX[con.map_to]),
        from_rotation_mode=con.from_rotation_mode,
        to_euler_order=con.to_euler_order,
    )


def _properties(pb) -> dict[str, float]:
    out = {}
    for key in pb.keys():
        value = pb[key]
        if isinstance(value, (bool, int, float)) and not key.startswith("_"):
            out[key] = float(value)
    return out


_STATIC: dict[int, list] = {}  # armature data pointer → its cache entry (see _settings)
_TRUSTED: set[int] = set()  # armature data whose entry was checked in the bake running now


def _fingerprint(obj, rest: np.ndarray, cmap: ControlMap | None) -> tuple:
    """What the cached settings depend on: rest matrices, names, parents' count of constraints, the
    rig's control map."""
    counts = tuple(len(pb.constraints) for pb in obj.pose.bones)
    rig_id = str(obj.data.get("rig_id", ""))
    return (rest.tobytes(), tuple(obj.data.bones.keys()), counts, rig_id, len(_drivers(obj)), cmap)


def _read_settings(obj, rest_flat: np.ndarray, cmap: ControlMap | None) -> tuple[ControlRig, list[int], list[int]]:
    """Everything of the rig that a bake does not change (cached per armature). Without a control
    map (a plain rig whose evaluated pose is read: Fix Feet, a terrain source) no bone is a control."""
    bones = obj.data.bones
    names = list(bones.keys())
    n = len(names)
    order = _parents_first(bones)
    index = {name: i for i, name in enumerate(order)}
    perm = np.array([names.index(name) for name in order]) if order != names else np.arange(n)
    mats = rest_flat.reshape(n, 4, 4).transpose(0, 2, 1)[perm].astype(float)
    flags = {}
    for attr in ("length", "use_inherit_rotation", "use_local_location", "use_connect"):
        arr = np.empty(n, dtype=float if attr == "length" else bool)
        bones.foreach_get(attr, arr)
        flags[attr] = arr[perm]
    locks = {}
    for attr in ("lock_location", "lock_rotation"):
        arr = np.empty(n * 3, dtype=bool)
        obj.pose.bones.foreach_get(attr, arr)
        locks[attr] = arr.reshape(n, 3)[perm]
    drivers = _drivers(obj)
    cons, constrained, with_props = [], [], []
    for i, name in enumerate(order):
        pb = obj.pose.bones[name]
        cons.append([_constraint(con, index, drivers, name) for con in pb.constraints])
        if cons[-1]:
            constrained.append(i)
        if len(pb.keys()):
            with_props.append(i)
    controls, skeleton = bone_rules(obj, cmap, order) if cmap is not None else (np.zeros(n, dtype=bool), ())
    rig = ControlRig(
        names=order,
        parents=np.array([index[bones[name].parent.name] if bones[name].parent else -1 for name in order]),
        matrix_local=mats,
        lengths=flags["length"],
        inherit_rotation=list(flags["use_inherit_rotation"]),
        inherit_scale=[bones[name].inherit_scale for name in order],
        local_location=list(flags["use_local_location"]),
        connected=list(flags["use_connect"]),
        rotation_modes=[obj.pose.bones[name].rotation_mode for name in order],
        lock_location=locks["lock_location"],
        lock_rotation=locks["lock_rotation"],
        constraints=cons,
        rig_id=str(obj.data.get("rig_id", "")),
        family=cmap if cmap is not None else rigify_map(),  # a plain rig: no control is in it
        control_mask=controls,
        skeleton_names=skeleton,
    )
    return rig, constrained, with_props


def _settings(obj) -> list:
    """The cache entry of ``obj``: [fingerprint, settings, constrained bones, bones with
    properties, deform skeleton or None, IK stretch responses by what they depend on]."""
    if obj.data.as_pointer() in _TRUSTED:
        return _STATIC[obj.data.as_pointer()]
    n = len(obj.data.bones)
    rest = np.empty(n * 16, dtype=np.float32)
    obj.data.bones.foreach_get("matrix_local", rest)
    cmap = _map_of(obj)
    key = _fingerprint(obj, rest, cmap)
    cached = _STATIC.get(obj.data.as_pointer())
    if cached is None or cached[0] != key:
        cached = [key, *_read_settings(obj, rest, cmap), None, {}]
        _STATIC.clear()
        _STATIC[obj.data.as_pointer()] = cached
    return cached


def read_control_rig(obj, depsgraph=None) -> ControlRig:
    """The armature ``obj`` as a :class:`ControlRig` (armature space; constraint influences, mutes
    and parent-switch weights as Blender evaluates them now, with drivers applied).

    The settings that a bake does not change (rest pose, inheritance, constraint settings) are read
    once per armature and kept while its rest pose, bone names and constraint counts stay the same;
    what the switches change is read every time.
    """
    depsgraph = depsgraph or bpy.context.evaluated_depsgraph_get()
    settings, constrained, with_props = _settings(obj)[1:4]
    evaluated = obj.evaluated_get(depsgraph).pose.bones
    constraints: list[list[Constraint]] = [[] for _ in settings.names]
    for i in constrained:
        name = settings.names[i]
        for c, ce in zip(settings.constraints[i], evaluated[name].constraints):
            if ce.mute or not getattr(ce, "enabled", True):
                continue
            c = copy(c)
            c.influence = float(ce.influence)
            if c.kind == "ARMATURE":
                c.targets = tuple((j, float(t.weight)) for (j, _), t in zip(c.targets, ce.targets))
            elif c.kind == "STRETCH_TO":
                c.rest_length = float(ce.rest_length)
            elif c.kind == "LIMIT_DISTANCE":
                c.distance = float(ce.distance)
            constraints[i].append(c)
    properties = {}
    for i in with_props:
        p = _properties(obj.pose.bones[settings.names[i]])
        if p:
            properties[settings.names[i]] = p
    stretch = np.empty(len(settings.names), dtype=np.float32)
    obj.pose.bones.foreach_get("ik_stretch", stretch)
    by_name = dict(zip(obj.pose.bones.keys(), stretch.astype(float)))
    ik_stretch = np.array([by_name[n] for n in settings.names])
    return replace(settings, constraints=constraints, properties=properties, ik_stretch=ik_stretch)


def _parents_first(bones) -> list[str]:
    order: list[str] = []
    stack = [b for b in bones if b.parent is None][::-1]
    while stack:
        b = stack.pop()
        order.append(b.name)
        stack.extend(list(b.children)[::-1])
    return order


# ----------------------------------------------------------------------------- baking onto controls


def _map_of(obj) -> ControlMap | None:
    """``obj``'s control map (None: a plain rig); InputError when a stored map cannot be read."""
    try:
        cmap = map_for(obj)
    except MapError as err:
        raise InputError(f"{err}. Load a valid map in Character ▸ Control Map, or clear it.") from err
    return cmap


def is_control_rig(obj) -> bool:
    """A control rig ProcAnim knows: one whose family has a control map — generated by Rigify (its
    ``rig_id``, a ``root`` bone and ``ORG-`` bones) or CloudRig (``is_generated_cloudrig``), or any
    rig whose map the Character panel stored or saved (:mod:`.control_maps`)."""
    try:
        return map_for(obj) is not None
    except MapError:
        return True  # it has a map of its own, which a bake reports as unreadable


def control_mode(obj, key_target: str) -> str | None:
    """``'IK'``/``'FK'`` for a bake onto controls, None for a bake onto the clip's own bones."""
    if key_target == "DEFORM":
        return None
    known = is_control_rig(obj)
    if key_target == "AUTO":
        return "IK" if known else None
    if not known:
        raise InputError(
            f"'{obj.name}' is not a control rig ProcAnim knows (generated by Rigify or CloudRig, or mapped in "
            "Character ▸ Control Map); bake with Key Target 'Deform Bones', or map its controls (docs/rigs.md)."
        )
    return "IK" if key_target == "IK_CONTROLS" else "FK"


def read_deform_skeleton(obj) -> Skeleton:
    """The deform skeleton of a control rig (Rigify's ``root`` + ``ORG-`` bones, CloudRig's
    ``root`` + Original Bones: the map's, see :mod:`procanim_addon.controls.deform`). It depends on
    the rig's settings only, never on its switches, so the generator and the bake see the same
    skeleton."""
    entry = _settings(obj)
    if entry[4] is None:
        rig = entry[1]
        if not rig.skeleton_names or not rig.has(rig.root_name):
            raise InputError(
                f"The control map of '{obj.name}' ({rig.family.label}) finds no deform skeleton on it "
                f"(its root '{rig.root_name}' or its bones are missing); check the map (docs/rigs.md)."
            )
        entry[4] = deform_skeleton(rig)
    return entry[4]


def deform_parents(obj) -> dict[str, str | None]:
    """Bone → parent as the engine should see it: the deform hierarchy for the ``ORG-`` bones of a
    generated rig, the armature's own parents for every other bone."""
    parents = {b.name: (b.parent.name if b.parent else None) for b in obj.data.bones}
    if is_control_rig(obj):
        sk = read_deform_skeleton(obj)
        parents.update({n: (sk.names[p] if p >= 0 else None) for n, p in zip(sk.names, sk.parents)})
    return parents


def _set_switches(obj, mode: str) -> dict[tuple[str, str], float]:
    """Put every IK/FK switch of the rig's map in ``mode`` (so that the rig is read as it will
    play); returns the values they had, by ``(bone, property)``."""
    cmap = _settings(obj)[1].family
    saved, changed = {}, False
    for switch in cmap.all_switches:
        value = switch.value(mode)
        holders = [obj.pose.bones.get(switch.bone)] if switch.bone else list(obj.pose.bones)
        for pb in holders:
            if pb is None or switch.prop not in pb.keys():
                continue
            bone = pb.name
            saved[(bone, switch.prop)] = float(pb[switch.prop])
            if saved[(bone, switch.prop)] != value:
                pb[switch.prop] = type(pb[switch.prop])(value)
                changed = True
    if changed:
        obj.update_tag()
    bpy.context.view_layer.update()  # evaluates only what changed (the switches, or edits before the bake)
    return saved


def _restore_switches(obj, saved: dict[tuple[str, str], float]) -> None:
    for (bone, prop), value in saved.items():
        obj.pose.bones[bone][prop] = type(obj.pose.bones[bone][prop])(value)
    obj.update_tag()


_CHANNELS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")


def probe_ik_stretch(obj, rig: ControlRig) -> dict[int, StretchResponse]:
    """What Blender's IK solver does to each stretchy IK chain of ``obj``, by the rig index of its IK
    constraint's owner (:mod:`procanim_addon.controls.stretch`).

    With the chain's first control at scale 1, the IK control is moved so that the IK target lies at
    each distance of the :class:`ProbePlan` from the chain's root (on the line it is on now); Blender
    evaluates the rig once per step (every limb at once, a depsgraph update, no frame change) and
    the distance reached and the two bones' scales are read. The controls' channels are put back as
    they were.

    The response depends on the rig's settings, not on the motion: it is kept with the rig's
    cached settings, for the IK stretch values, switches and IK constraints it was measured with.
    """
    limbs = [limb for limb in find_limbs(rig) if limb.ik_control >= 0 and stretchy_chain(rig, limb)]
    if not limbs:
        return {}
    cache = _settings(obj)[5]
    key = (
        rig.ik_stretch.tobytes(),
        repr(sorted(rig.properties.items())),
        repr([(c.influence, c.use_stretch, c.pole) for limb in limbs for c in rig.constraints[limb.ik_owner]]),
    )
    if key not in cache:
        cache.clear()
        cache[key] = _probe(obj, rig, ProbePlan(rig, limbs))
    return cache[key]


def _probe(obj, rig: ControlRig, plan: ProbePlan) -> dict[int, StretchResponse]:
    pbs, layer = obj.pose.bones, bpy.context.view_layer
    limbs = plan.limbs
    names = {rig.names[i] for limb in limbs for i in (limb.ik_control, limb.chain[0])}
    saved = {n: {c: tuple(getattr(pbs[n], c)) for c in _CHANNELS} for n in names}
    measured: list[list[tuple[int, tuple[float, float, float, float]]]] = [[] for _ in limbs]
    try:
        for limb in limbs:
            if tuple(pbs[rig.names[limb.chain[0]]].scale) != (1.0, 1.0, 1.0):
                pbs[rig.names[limb.chain[0]]].scale = (1.0, 1.0, 1.0)
        layer.update()  # nothing to evaluate when no scale changed
        start = plan.start(_evaluated_matrices(obj, rig))
        for step in range(plan.steps):
            evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
            moving = plan.at(step)
            for j, k in moving:
                name = rig.names[limbs[j].ik_control]
                local = evaluated.convert_space(
                    pose_bone=evaluated.pose.bones[name],
                    matrix=Matrix(plan.placement(start, j, k).tolist()),
                    from_space="POSE",
                    to_space="LOCAL",
                )
                pbs[name].location = local.translation
            layer.update()
            now = _evaluated_matrices(obj, rig)
            for j, k in moving:
                measured[j].append((k, chain_lengths(now, rig, limbs[j])))
    finally:
        for n, channels in saved.items():
            for c, value in channels.items():
                setattr(pbs[n], c, value)
        obj.update_tag()  # evaluated again when next needed (the verification's first frame)
    return plan.responses(measured)


def _evaluated_matrices(obj, rig: ControlRig):
    """Rig index → evaluated armature-space matrix (4, 4) of ``obj``'s pose bones, all read at once."""
    bones = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones
    flat = np.empty(len(bones) * 16, dtype=np.float32)
    bones.foreach_get("matrix", flat)
    mats = flat.reshape(-1, 4, 4).transpose(0, 2, 1)  # float32, as np.array(pose_bone.matrix) gives
    index = {name: i for i, name in enumerate(bones.keys())}
    order = [index[name] for name in rig.names]
    return lambda i: mats[order[i]]


@dataclass
class ControlConversion:
    """A conversion onto a rig's controls, not yet written (:func:`convert_onto_controls`)."""

    obj: Any
    clip: Clip
    mode: str
    rig: ControlRig
    keys: ControlKeys
    intended: IntendedPose
    skeleton: Skeleton
    timings: dict  # ms: control_read_ms (the probe included), control_probe_ms, control_convert_ms
    keyed: planner.KeyedAction | None = None  # the controls' reduced keys (None: every frame keyed)
    markers: list = field(default_factory=list)  # the action's pose markers (frame, name)
    key_notes: list = field(default_factory=list)  # sentences for the user about the keys


def convert_onto_controls(obj, clip: Clip, mode: str) -> ControlConversion:
    """Convert ``clip`` (the deform skeleton's pose) into control channels of ``obj``; ``obj`` is
    left as it was (its action, its switches). Raises :class:`InputError` when the rig cannot be
    converted — before anything is written, so that a bake of several characters can check them all
    first (:func:`operators.bake.prepare_bake`)."""
    t0 = time.perf_counter()
    # The current action is set aside while the rig is read (it would override the switches and the
    # probe) and put back untouched.
    put_back = set_action_aside(obj)
    try:
        saved = _set_switches(obj, mode)  # reads the rig's settings: checked once, the bake changes nothing of them
    except InputError:
        put_back()
        raise
    _TRUSTED.add(obj.data.as_pointer())
    try:
        rig = read_control_rig(obj)
        tp = time.perf_counter()
        stretch = probe_ik_stretch(obj, rig) if mode == "IK" else {}
        probe_ms = (time.perf_counter() - tp) * 1000.0
        skeleton = read_deform_skeleton(obj)
        intended = intended_for(rig, skeleton, clip)
        t1 = time.perf_counter()
        keys = convert(rig, skeleton, intended, mode, stretch=stretch)
        t2 = time.perf_counter()
        if not keys.is_finite():
            raise ValueError("invalid (NaN) control values")
    except (InputError, Unsupported, ValueError) as err:
        what = f"the rig has {err}, which the conversion does not model" if isinstance(err, Unsupported) else err
        raise InputError(
            f"Could not convert the motion onto the controls of '{obj.name}' ({what}); nothing was changed. "
            "Bake with Key Target 'Deform Bones', or see docs/rigs.md."
        ) from err
    finally:
        _TRUSTED.discard(obj.data.as_pointer())
        _restore_switches(obj, saved)
        put_back()
    timings = {
        "control_read_ms": (t1 - t0) * 1000.0,  # the probe included
        "control_probe_ms": probe_ms,
        "control_convert_ms": (t2 - t1) * 1000.0,
    }
    return ControlConversion(obj, clip, mode, rig, keys, intended, skeleton, timings)


def plan_control_bake(converted: ControlConversion, tolerance: float, marks: KeyMarks) -> None:
    """The controls' reduced keys within ``tolerance`` (m) of the converted motion, measured on the
    deform skeleton they drive (:func:`procanim_addon.keys.plan_control_keys`), with the key types and
    pose markers of ``marks``; kept on ``converted`` for :func:`write_onto_controls`. ``tolerance`` 0,
    or controls the planner cannot measure yet: every frame keyed (with a note saying why)."""
    converted.markers = marks.markers()
    if tolerance == 0.0:
        return
    t0 = time.perf_counter()
    try:
        converted.keyed = planner.plan_control_keys(converted.rig, converted.skeleton, converted.keys, converted.clip,
                                                    tolerance, marks.marks, marks.contacts, marks.feet)
    except ValueError as err:
        converted.key_notes.append(f"{converted.obj.name}: every frame keyed — the key tolerance cannot be "
                                   f"measured on these controls yet ({err}).")
    converted.timings["control_plan_ms"] = (time.perf_counter() - t0) * 1000.0


def write_onto_controls(converted: ControlConversion, notes: list | None = None, bake_to: str = "ACTION",
                        blend_type: str = "COMBINE"):
    """Write a conversion's keys into a new action of its armature, in the place ``bake_to`` and
    ``blend_type`` say (:func:`keys.open_bake`), and verify a sample of frames in Blender; returns
    the action."""
    obj, clip, keys = converted.obj, converted.clip, converted.keys
    t2 = time.perf_counter()
    bake = open_bake(obj, clip.generator, notes, bake_to, blend_type)
    for (bone, prop), value in keys.switches.items():  # the keyed limbs' switches as their keys set them
        pb = obj.pose.bones[bone]
        pb[prop] = type(pb[prop])(value)
    _write_control_keys(bake, converted)
    bake.markers(converted.markers)
    t3 = time.perf_counter()
    metrics = dict(clip.metrics)
    with bake.playing():
        metrics.update(_verify(converted))
    metrics.update(bake.figures(converted.keyed))
    if notes is not None:
        notes.extend(converted.key_notes)
        if converted.keyed is not None:
            notes.extend(f"{obj.name}: {note}" for note in converted.keyed.notes)
    t4 = time.perf_counter()
    timings = converted.timings
    metrics.update(
        {
            "key_target": f"{converted.mode}_CONTROLS",
            "fcurves": bake.curves,
            "controls_keyed": len(keys.basis),
            "control_notes": " ".join(keys.notes),
            **timings,
            "control_write_ms": (t3 - t2) * 1000.0,
            "control_verify_ms": (t4 - t3) * 1000.0,
            "control_bake_ms": timings["control_read_ms"] + timings["control_convert_ms"]
            + timings.get("control_plan_ms", 0.0) + (t4 - t2) * 1000.0,
        }
    )
    return bake.finish(clip, finish(metrics, figure_keys(clip.generator)))


def _write_control_keys(bake: BakeKeys, converted: ControlConversion) -> None:
    """The controls' channels (the planned keys, or a key on every clip frame), their switches (a
    key at each end) and the clip's object-level motion."""
    keys, clip = converted.keys, converted.clip
    frames = clip.frames.astype(np.float32)
    if converted.keyed is not None:
        for curve in converted.keyed.curves:
            bake.planned(curve)
    else:
        _write_dense_controls(bake, converted, frames)
    ends = np.array([frames[0], frames[-1]], dtype=np.float32)
    for (bone, prop), value in keys.switches.items():
        bake.curve(bone, property_path(bone, prop), 0, CurveKeys(ends, np.full(2, value)))
    bake.object_channels(clip, frames)


def _write_dense_controls(bake: BakeKeys, converted: ControlConversion, frames: np.ndarray) -> None:
    """A key on every clip frame of every keyed control channel (the dense bake)."""
    rig, keys, pose_bones = converted.rig, converted.keys, converted.obj.pose.bones
    for c in keys.basis:
        name = rig.names[c]
        base = bone_path(name)
        loc, rot = keys.channels(c)
        if keys.key_location[c]:
            bake.location(name, base, loc, frames)
        if keys.key_rotation[c]:
            bake.rotation(name, base, pose_bones[name].rotation_mode, rot, frames)
        if c in keys.scale:
            bake.channel(name, base + "scale", frames, keys.scale[c])


def _verify(converted: ControlConversion) -> dict:
    """Blender evaluates a sample of frames of what was written; the deform bones are compared with
    the intended pose. Reduced keys are verified on as many frames as a dense bake, about half of them
    spread over the clip and the other half between keys, where the curves are interpolated
    (:func:`between_keys`)."""
    obj, rig, keys, clip = converted.obj, converted.rig, converted.keys, converted.clip
    scene = bpy.context.scene
    if obj.name not in scene.objects:
        return {"control_verify_frames": 0}
    if converted.keyed is None:
        samples = verification_samples(clip.frame_count)
    else:
        samples = verification_samples(clip.frame_count, VERIFY_FRAMES // 2 + 1)
        samples = np.union1d(samples, between_keys(clip.frames, converted.keyed.curves, samples))
    checks = deform_checks(rig, list(keys.checked))
    world: list = []
    evaluated = sample_matrices(obj, scene, clip.frames[samples], [rig.names[d] for d, _ in checks], world)
    return verify(rig, converted.skeleton, keys, converted.intended, checks, samples, evaluated, np.stack(world))


def between_keys(frames: np.ndarray, curves, samples: np.ndarray) -> np.ndarray:
    """Frame indices (into ``frames``) between keys: after each of ``samples``, up to the next, the
    frame fewest ``curves`` (planned curves) have a key on — where the curves are interpolated."""
    keyed = np.zeros(len(frames), dtype=int)
    for curve in curves:  # a key between two clip frames (a clip keyed every N frames) counts on the next
        keyed[np.minimum(np.searchsorted(frames, curve.frames.astype(float)), len(frames) - 1)] += 1
    ends = np.append(samples[1:], len(frames))
    return np.array([a + 1 + int(np.argmin(keyed[a + 1 : b])) for a, b in zip(samples, ends) if b > a + 1], dtype=int)


def sample_matrices(obj, scene, frames, names: list[str], world: list | None = None) -> np.ndarray:
    """Armature-space matrices ``(S, N, 4, 4)`` of the named pose bones as Blender evaluates them on
    each of ``frames`` (``frame_set`` on these frames only); the current frame is put back. With
    ``world`` (a list), the object's evaluated world matrix of each frame is put in it, in order."""
    current = (scene.frame_current, scene.frame_subframe)
    index = {pb.name: i for i, pb in enumerate(obj.pose.bones)}
    wanted = [index[n] for n in names]
    out = np.empty((len(frames), len(names), 4, 4))
    flat = np.empty(len(index) * 16, dtype=np.float32)
    settings = [(int(np.floor(f)), float(f - np.floor(f))) for f in frames]
    # the current frame, when sampled, is evaluated last: putting it back then costs nothing
    order = sorted(range(len(frames)), key=lambda k: settings[k] == current)
    worlds: list = [None] * len(frames)
    done = None
    try:
        for k in order:
            scene.frame_set(settings[k][0], subframe=settings[k][1])
            evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
            evaluated.pose.bones.foreach_get("matrix", flat)
            out[k] = flat.reshape(-1, 4, 4)[wanted].transpose(0, 2, 1)
            if world is not None:
                worlds[k] = np.array(evaluated.matrix_world, dtype=float)
            done = settings[k]
    finally:
        if done != current:
            scene.frame_set(current[0], subframe=current[1])
    if world is not None:
        world.extend(worlds)
    return out


# ----------------------------------------------------------------------------- reading a control rig's motion


def read_deform_clip(obj, skeleton: Skeleton, frames) -> Clip:
    """The deform pose Blender evaluates for ``obj``'s current animation, as a Clip of ``skeleton``
    (its deform skeleton, :func:`read_deform_skeleton`), one frame per entry of ``frames``
    (:func:`procanim_addon.controls.deform.deform_clip`).

    Whatever drives the deform bones is included — keys on controls, IK, constraints, drivers — so
    this is how the source motion of a terrain adaptation is read on a control rig. Blender
    evaluates each frame (``frame_set``; reading a motion, not baking one); the current frame is
    put back.
    """
    rig = read_control_rig(obj)
    frames = np.asarray(frames, dtype=float)
    scene = bpy.context.scene
    matrices = sample_matrices(obj, scene, frames, list(skeleton.names))
    return deform_clip(rig, skeleton, matrices, frames, _fps(scene))


def _fps(scene) -> float:
    return float(scene.render.fps) / float(scene.render.fps_base or 1.0)
