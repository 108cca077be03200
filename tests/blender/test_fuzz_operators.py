"""No traceback on any input, nothing lost: property-based tests over every ProcAnim operator and
every argument it has (Hypothesis, a fixed seed).

Each example opens the same prepared file — ProcAnim's human with a hand-keyed action of the user's,
a second human facing it, a duck, and objects of every kind a script may name by mistake: every
object type Blender has, armatures without bones and with one bone, non-uniform and negative
scales, linked library data, curves of zero length and of a single point, a mesh without faces, an
object in another scene — then calls one operator with drawn arguments (any value its RNA type can
hold: extremes, NaN, infinities, missing names). Every call must end FINISHED, or CANCELLED with a
message (never a Python traceback); after CANCELLED nothing in the file has changed (actions and
their users, poses, object transforms); after FINISHED no F-curve holds NaN or inf and the user's
action still exists.

``PROCANIM_FUZZ_EXAMPLES`` (default 12 per operator) sets how many draws each operator gets.
"""

from __future__ import annotations

import math
import os
import sys
from collections import Counter

import bpy
import harness
import numpy as np
import pytest
from harness import REPO_ROOT, addon_module, fcurves_of, keyframes

hypothesis = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")

EXAMPLES = int(os.environ.get("PROCANIM_FUZZ_EXAMPLES", "12"))
OUTCOMES: Counter = Counter()  # (operator, outcome) -> draws: printed at the end (pytest -s)
USER_ACTION = "UserAction"
OBJECT_ARGUMENTS = {"armature", "path", "ground", "terrain", "reference", "initiator", "partner"}
OBJECT_LISTS = {"armatures", "paths"}  # comma-separated names (procanim.crowd_walk)
COLLECTION_ARGUMENTS = {"obstacles"}  # a collection's name (procanim.crowd_walk)
MISSING = "NoSuchObject"
# file arguments stay beside the prepared file (``//``: relative to it) or are empty
FILE_PATHS = ["", "//fuzz_export", "//fuzz dir/x.glb", "//x.gltf", "//.."]
# the sidebar's helpers: a figure's tooltip, emotion buttons, presets (no scene data in their arguments)
INTERNAL_OPERATORS = {"metric_info", "duck_emotion", "path_walk_style", "duck_walk_preset_add",
                      "path_walk_preset_add"}
INT32 = (-(2**31), 2**31 - 1)
FLOAT32_MAX = 3.4e38


# ------------------------------------------------------------------------------- the prepared file


def _link(obj, scene=None):
    (scene or bpy.context.scene).collection.objects.link(obj)
    return obj


def _curve(name, points):
    cu = bpy.data.curves.new(name, "CURVE")
    cu.dimensions = "3D"
    spline = cu.splines.new("POLY")
    spline.points.add(len(points) - 1)
    for p, co in zip(spline.points, points):
        p.co = (*co, 1.0)
    return _link(bpy.data.objects.new(name, cu))


def _armature(name, bones):
    arm = bpy.data.armatures.new(name)
    obj = _link(bpy.data.objects.new(name, arm))
    if bones:
        bpy.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode="EDIT")
        for k in range(bones):
            eb = arm.edit_bones.new(f"Bone.{k:03d}")
            eb.head, eb.tail = (0.0, 0.0, k * 0.5), (0.0, 0.0, k * 0.5 + 0.5)
        bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def _every_object_type():
    """One object of each data type Blender has (those this version can make)."""
    made = {"Empty": None}
    makers = {
        "Camera": lambda: bpy.data.cameras.new("Camera"),
        "Light": lambda: bpy.data.lights.new("Light", "POINT"),
        "Lattice": lambda: bpy.data.lattices.new("Lattice"),
        "Meta": lambda: bpy.data.metaballs.new("Meta"),
        "Text": lambda: bpy.data.curves.new("Text", "FONT"),
        "Surface": lambda: bpy.data.curves.new("Surface", "SURFACE"),
        "Speaker": lambda: bpy.data.speakers.new("Speaker"),
        "Probe": lambda: bpy.data.lightprobes.new("Probe", "SPHERE" if bpy.app.version >= (4, 1) else "CUBE"),
        "Volume": lambda: bpy.data.volumes.new("Volume"),
        "Points": lambda: bpy.data.pointclouds.new("Points"),
        "Hair": lambda: bpy.data.hair_curves.new("Hair"),
    }
    for name, make in makers.items():
        try:
            made[name] = make()
        except (AttributeError, TypeError, RuntimeError):  # a type this Blender does not have
            continue
    for name, data in made.items():
        _link(bpy.data.objects.new(name, data))
    grease = getattr(bpy.data, "grease_pencils_v3", None) or getattr(bpy.data, "grease_pencils", None)
    if grease is not None:
        try:
            _link(bpy.data.objects.new("Pencil", grease.new("Pencil")))
        except (TypeError, RuntimeError):
            pass


def _library_armature(tmp_dir):
    """An armature linked from another file (cannot be animated here)."""
    bpy.ops.procanim.add_human(name="LibHuman")
    path = str(tmp_dir / "library.blend")
    bpy.data.libraries.write(path, {bpy.data.objects["LibHuman"]})
    for obj in [o for o in bpy.data.objects if o.name.startswith("LibHuman")]:
        bpy.data.objects.remove(obj)
    with bpy.data.libraries.load(path, link=True) as (src, dst):
        dst.objects = ["LibHuman"]
    _link(dst.objects[0])


def build_file(tmp_dir) -> str:
    """The scene every example starts from; returns the saved .blend."""
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    scene = bpy.context.scene
    assert bpy.ops.procanim.add_human(name="Human") == {"FINISHED"}
    assert bpy.ops.procanim.add_human(name="Guest", location=(0.0, -0.9, 0.0)) == {"FINISHED"}
    bpy.data.objects["Guest"].rotation_euler[2] = math.pi
    assert bpy.ops.procanim.add_duck(name="Duck", location=(2.0, 0.0, 0.0)) == {"FINISHED"}
    human = bpy.data.objects["Human"]
    human.animation_data_create()
    action = bpy.data.actions.new(USER_ACTION)
    human.animation_data.action = action
    for frame, z in ((1, 0.0), (24, 0.1)):
        human.pose.bones["hips"].location = (0.0, 0.0, z)
        human.pose.bones["hips"].keyframe_insert("location", frame=frame)  # the user's own keys (a test)
    human.pose.bones["hips"].location = (0.0, 0.0, 0.0)
    _curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
    _curve("ZeroCurve", [(1.0, 1.0, 0.0), (1.0, 1.0, 0.0)])
    _curve("OnePoint", [(1.0, 2.0, 0.0)])
    bpy.ops.mesh.primitive_plane_add(size=20.0)
    bpy.context.object.name = "Floor"
    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0.0, -1.5, 0.25))
    bpy.context.object.name = "Block"
    dots = bpy.data.meshes.new("NoFaces")
    dots.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1)], [])
    _link(bpy.data.objects.new("NoFaces", dots))
    _armature("NoBones", 0)
    _armature("OneBone", 1)
    for name, scale in (("Squashed", (1.0, 1.0, 0.5)), ("Mirrored", (-1.0, 1.0, 1.0))):
        assert bpy.ops.procanim.add_human(name=name, location=(4.0, 0.0, 0.0)) == {"FINISHED"}
        bpy.data.objects[name].scale = scale
    _every_object_type()
    for name, members in (("Obstacles", ("Block", "NoFaces")), ("NoMeshes", ("Empty",))):
        coll = bpy.data.collections.new(name)
        scene.collection.children.link(coll)
        for member in members:
            coll.objects.link(bpy.data.objects[member])
    _library_armature(tmp_dir)
    other = bpy.data.scenes.new("Elsewhere")
    _link(bpy.data.objects.new("ElsewhereArm", bpy.data.armatures.new("ElsewhereArm")), other)
    scene.procanim.armature = human
    path = str(tmp_dir / "fuzz.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    return path


@pytest.fixture(scope="module")
def prepared(procanim_extension, tmp_path_factory):
    return build_file(tmp_path_factory.mktemp("fuzz"))


# ------------------------------------------------------------------------------- what must hold


def snapshot() -> dict:
    """What a cancelled call must leave untouched: actions (users, fake users, keys), objects'
    transforms and pose channels, and how many objects and data-blocks there are."""
    state = {"counts": tuple(len(c) for c in (bpy.data.objects, bpy.data.actions, bpy.data.meshes,
                                              bpy.data.curves, bpy.data.armatures))}
    for action in bpy.data.actions:
        keys = [keyframes(fc).round(6).tobytes() for fc in _fcurves(action)]
        state[f"action:{action.name}"] = (action.users, action.use_fake_user, tuple(keys))
    for obj in bpy.data.objects:
        state[f"object:{obj.name}"] = np.array(obj.matrix_basis).round(6).tobytes()
        if obj.type == "ARMATURE" and obj.pose is not None:
            channels = [(*pb.location, *pb.rotation_quaternion, *pb.rotation_euler, *pb.scale) for pb in obj.pose.bones]
            state[f"pose:{obj.name}"] = np.array(channels).round(6).tobytes()
        anim = obj.animation_data
        state[f"active:{obj.name}"] = anim.action.name if anim is not None and anim.action is not None else None
    return state


def _fcurves(action):
    if bpy.app.version < (4, 4, 0):
        return list(action.fcurves)
    return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags for fc in bag.fcurves]


def assert_outcome(call, kwargs):
    before = snapshot()
    try:
        result = call(**kwargs)
    except RuntimeError as err:  # an ERROR report cancels the operator and raises with its message
        text = str(err)
        assert "Traceback" not in text, f"{call.idname_py()}({kwargs}) raised:\n{text}"
        assert text.strip().startswith("Error:") and len(text) > 12, text
        result = {"CANCELLED"}
    else:
        assert result == {"FINISHED"}, f"{call.idname_py()}({kwargs}) returned {result} without a message"
    OUTCOMES[call.idname_py(), "cancelled" if result == {"CANCELLED"} else "finished"] += 1
    if result == {"CANCELLED"}:
        after = snapshot()
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        assert not changed, f"{call.idname_py()}({kwargs}) was cancelled but changed {changed}"
        return
    assert USER_ACTION in bpy.data.actions, "the user's action is gone"
    for action in bpy.data.actions:
        for fc in _fcurves(action):
            assert np.all(np.isfinite(keyframes(fc))), f"{action.name}: {fc.data_path} holds NaN/inf"


# ------------------------------------------------------------------------------- strategies


def object_names() -> list[str]:
    return sorted(o.name for o in bpy.data.objects) + ["", MISSING]


def argument_strategy(prop, names):
    """Values the RNA property can hold, extremes and the interesting boundaries first."""
    if prop.identifier in OBJECT_ARGUMENTS:
        return st.sampled_from(names)
    if prop.identifier in OBJECT_LISTS:
        return st.lists(st.sampled_from(names), max_size=3).map(",".join)
    if prop.identifier in COLLECTION_ARGUMENTS:
        return st.sampled_from(sorted(c.name for c in bpy.data.collections) + ["", MISSING, "Human"])
    if prop.identifier == "filepath":
        return st.sampled_from(FILE_PATHS)
    kind = prop.type
    if kind == "BOOLEAN":
        return st.booleans()
    if kind == "ENUM":
        return st.sampled_from([item.identifier for item in prop.enum_items])
    if kind == "STRING":
        return st.text(max_size=12)
    if kind == "INT":
        edges = [prop.hard_min, prop.hard_max, prop.soft_min, prop.soft_max, 0, 1, -1, prop.default]
        one = st.one_of(st.sampled_from(edges), st.integers(*INT32))
    else:
        edges = [prop.soft_min, prop.soft_max, 0.0, -1.0, math.nan, math.inf, -math.inf, FLOAT32_MAX, -FLOAT32_MAX]
        one = st.one_of(st.sampled_from(edges), st.floats(width=32, allow_nan=True, allow_infinity=True))
    if getattr(prop, "is_array", False) and prop.array_length > 0:
        return st.tuples(*[one] * prop.array_length)
    return one


def operator_strategy(idname: str):
    props = [p for p in getattr(bpy.ops.procanim, idname).get_rna_type().properties if p.identifier != "rna_type"]
    names = object_names()
    # each argument is given or left out (its default), so defaults meet extremes too
    return st.fixed_dictionaries({}, optional={p.identifier: argument_strategy(p, names) for p in props})


OTHER_OPERATORS = ["add_human", "add_duck", "detect_rig", "add_zigzag", "export", "save_control_map",
                   "load_control_map", "clear_control_map"]


def fuzzed_operators(registry) -> list[str]:
    """The operators fuzzed: every generator of ``registry`` (a generator registered at run time
    included), then the others."""
    return [g.id for g in registry.GENERATORS] + OTHER_OPERATORS


def _shipped_registry():
    """The repository's registry (plain Python), for the test ids before Blender is up."""
    sys.path.insert(0, str(REPO_ROOT))
    from procanim_addon import registry

    return registry


OPERATORS = fuzzed_operators(_shipped_registry())


def fuzz(idname: str, prepared: str, examples: int = EXAMPLES) -> None:
    """``examples`` calls of ``procanim.<idname>`` with drawn arguments, each on the prepared file."""
    call = getattr(bpy.ops.procanim, idname)
    bpy.ops.wm.open_mainfile(filepath=prepared)
    strategy = operator_strategy(idname)

    @hypothesis.settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck), print_blob=True)
    @hypothesis.given(kwargs=strategy)
    def check(kwargs):
        bpy.ops.wm.open_mainfile(filepath=prepared)
        assert_outcome(call, kwargs)

    check()


@pytest.mark.parametrize("idname", OPERATORS)
def test_every_argument_of_every_operator(prepared, idname):
    fuzz(idname, prepared)


def test_the_generators_are_all_fuzzed(procanim_extension):
    print("fuzz outcomes:", dict(sorted(OUTCOMES.items())))
    registry = addon_module(procanim_extension, "procanim_addon.registry")
    assert fuzzed_operators(registry) == OPERATORS
    assert set(OPERATORS) == set(harness.procanim_operator_names()) - INTERNAL_OPERATORS


# ------------------------------------------------------------------------------- the reported calls


REGRESSIONS = [
    ("source_motion", dict(kind="TUMBLE", fps=3.4e38, steps=2147483647)),
    ("source_motion", dict(kind="JUMP", fps=3.4e38, steps=2147483647)),
    ("source_motion", dict(kind="WALK", frame_start=2147483647)),
    ("duck_walk", dict(frame_start=-2147483648, frame_end=-7836, fps=7922.99, key_interval=2964, speed=0,
                       weight=5440.35, direction=3.4e38, preset="JOY")),
]


@pytest.mark.parametrize("idname, kwargs", REGRESSIONS)
def test_the_calls_that_used_to_end_in_a_traceback(prepared, idname, kwargs):
    bpy.ops.wm.open_mainfile(filepath=prepared)
    armature = "Duck" if idname == "duck_walk" else "Human"
    before = snapshot()
    with pytest.raises(RuntimeError) as err:
        getattr(bpy.ops.procanim, idname)(armature=armature, **kwargs)
    assert "Traceback" not in str(err.value) and "must be between" in str(err.value), str(err.value)
    assert snapshot() == before


def test_a_preset_overrides_the_sliders_but_not_the_validation(prepared):
    bpy.ops.wm.open_mainfile(filepath=prepared)
    with pytest.raises(RuntimeError, match="Frames per second must be between 1 and 1000"):
        bpy.ops.procanim.duck_walk(armature="Duck", fps=5000.0, preset="SAD")
    assert bpy.ops.procanim.duck_walk(armature="Duck", weight=1000.0, preset="SAD") == {"FINISHED"}
    duck = bpy.data.objects["Duck"]
    assert fcurves_of(duck.animation_data.action, duck)



def _new_armature_object(where: str):
    """A new object on the human's armature data (its pose not built until a depsgraph evaluates
    it): in no scene, in another scene, in an excluded collection, or in this scene."""
    obj = bpy.data.objects.new(f"Human{where}", bpy.data.objects["Human"].data)
    if where == "InAnotherScene":
        bpy.data.scenes["Elsewhere"].collection.objects.link(obj)
    elif where == "Excluded":
        col = bpy.data.collections.new("Excluded")
        bpy.context.scene.collection.children.link(col)
        col.objects.link(obj)
        bpy.context.view_layer.layer_collection.children["Excluded"].exclude = True
    elif where == "JustLinked":
        bpy.context.scene.collection.objects.link(obj)
    return obj.name


GENERATOR_CALLS = {
    "duck_walk": lambda name: dict(armature=name),
    "path_walk": lambda name: dict(armature=name, path="Line"),
    "source_motion": lambda name: dict(armature=name),
    "handshake": lambda name: dict(initiator=name, partner="Guest"),
}


@pytest.mark.parametrize("where", ["InNoScene", "InAnotherScene", "Excluded"])
@pytest.mark.parametrize("idname", sorted(GENERATOR_CALLS))
def test_an_armature_no_depsgraph_has_evaluated_is_refused_with_a_message(prepared, idname, where):
    """Found: duck_walk(armature=<a new object in no scene>) ended in a traceback (its pose is None)
    after assigning a new, empty action to it."""
    bpy.ops.wm.open_mainfile(filepath=prepared)
    name = _new_armature_object(where)
    before = snapshot()
    with pytest.raises(RuntimeError) as err:
        getattr(bpy.ops.procanim, idname)(**GENERATOR_CALLS[idname](name))
    assert "Traceback" not in str(err.value) and "view layer" in str(err.value), str(err.value)
    assert snapshot() == before


@pytest.mark.parametrize("idname", sorted(GENERATOR_CALLS))
def test_an_armature_just_linked_into_the_scene_is_baked(prepared, idname):
    bpy.ops.wm.open_mainfile(filepath=prepared)
    name = _new_armature_object("JustLinked")
    bpy.data.objects["Human"].location.x = 30.0  # out of the way of the new one
    assert getattr(bpy.ops.procanim, idname)(**GENERATOR_CALLS[idname](name)) == {"FINISHED"}


EDIT_MODE_CALLS = dict(GENERATOR_CALLS, adapt_terrain=lambda name: dict(armature=name, terrain="Floor"),
                       handshake_partner=lambda name: dict(initiator="Guest", partner=name))


@pytest.mark.parametrize("idname", sorted(EDIT_MODE_CALLS))
def test_an_armature_in_edit_mode_is_refused_with_a_message(prepared, idname):
    """Found: every generator baked an armature left in Edit Mode from its last saved bones (edits
    made in Edit Mode are not in them yet): on a generated Rigify human the path walk's deform
    bones ended 386 cm off. The user is told to leave Edit Mode; nothing changes."""
    bpy.ops.wm.open_mainfile(filepath=prepared)
    human = bpy.data.objects["Human"]
    bpy.context.view_layer.objects.active = human
    assert bpy.ops.object.mode_set(mode="EDIT") == {"FINISHED"}
    before = snapshot()
    with pytest.raises(RuntimeError) as err:
        getattr(bpy.ops.procanim, idname.split("_partner")[0])(**EDIT_MODE_CALLS[idname]("Human"))
    assert "Traceback" not in str(err.value) and "Edit Mode" in str(err.value), str(err.value)
    assert snapshot() == before and human.mode == "EDIT"
