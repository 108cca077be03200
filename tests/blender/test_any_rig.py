"""Rigs ProcAnim did not make, as users bring them, measured on Blender's evaluated pose.

* glTF round trips: ProcAnim's human and a generated Rigify human exported with Blender's glTF
  exporter (in a Blender process of its own) and imported back (the Rigify rig comes back without
  its controls: a plain skeleton of 706 bones whose mesh would follow the ``DEF-`` bones), and a
  human whose armature axes are Y-up under a rotated, scaled empty, round-tripped the same way;
* a human built with its armature axes Y-up (lengths in centimetres) under a rotated object scaled
  by 0.01, and the same under a rotated, scaled empty, as glTF and FBX importers leave them;
* a game-style rig whose feet hang from the root bone (IK feet), not from the shins;
* a BVH skeleton without toe joints, written here and imported with Blender's BVH importer.

On each: Detect Roles finds every role, the path walk's planted sole points do not skate, the
handshake's hands meet, terrain adaptation lifts the motion from the floor onto a raised one. Sole points are
measured as ``test_path_walk.py`` measures them: points under the ankle, the ball and the toe tip
on the floor, carried by the foot and toe bones; a point touches the floor within ``CONTACT_M``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import bpy
import harness
import mathutils
import numpy as np
import pytest
from rigify_rigs import add_rigify

FPS = 24
CONTACT_M = 0.003  # a sole point this close to the floor touches it (test_path_walk.py's measure)
SKATE_MAX_CM_S = 1.0
GRIP_FRACTION, HALF_PALM = 0.5, 0.15  # the handshake's documented grip point (test_handshake.py)
IK_TOL_CM = 0.05  # grips meet as test_handshake.py asks of the IK solvers
QUICK_SHAKE = dict(neutral_frames=4, dummy_frames=8, response_frames=4, approach_frames=12, shake_frames=12,
                   secondary_shakes=0, retreat_frames=12, hold_frames=3)
LEGS = [f"{r}.{s}" for s in "LR" for r in ("thigh", "shin", "foot")]
ARMS = [f"{r}.{s}" for s in "LR" for r in ("upper_arm", "forearm", "hand")]
COMPLETE = LEGS + ARMS + ["hips", "spine", "chest", "neck", "head"]
Y_UP = mathutils.Matrix.Rotation(math.radians(90.0), 4, "X")  # armature +Y → world +Z


# ----------------------------------------------------------------------------- rigs


def add_human(name: str):
    assert bpy.ops.procanim.add_human(name=name) == {"FINISHED"}
    return bpy.data.objects[name]


def _place(obj, location=(0.0, 0.0, 0.0), turn_deg=0.0):
    """Move and turn a rig about the world's Z: its topmost parent carries the transform."""
    top = obj
    while top.parent is not None:
        top = top.parent
    top.matrix_world = mathutils.Matrix.Translation(location) @ mathutils.Matrix.Rotation(
        math.radians(turn_deg), 4, "Z") @ top.matrix_world
    bpy.context.view_layer.update()
    return obj


def tilted_human(name: str, under_empty: bool):
    """ProcAnim's human whose armature (and mesh) data stand up +Y in centimetres, under a rotated
    object scaled by 0.01 (``under_empty``: the armature object is unrotated and unscaled, under an
    empty that carries both): in the world it stands as the plain human does."""
    obj = add_human(name)
    to_data = Y_UP.inverted() @ mathutils.Matrix.Scale(100.0, 4)
    obj.data.transform(to_data)
    for child in obj.children:
        child.data.transform(to_data)
    world = Y_UP @ mathutils.Matrix.Scale(0.01, 4)
    if under_empty:
        empty = bpy.data.objects.new(f"{name}.root", None)
        bpy.context.scene.collection.objects.link(empty)
        empty.matrix_world = world
        obj.parent = empty
    else:
        obj.matrix_world = world
    bpy.context.view_layer.update()
    return obj


def import_gltf(path: Path, name: str):
    """The armature (with its meshes and parents) that Blender's glTF importer made of a file,
    appended from the .blend the round trip saved (:func:`round_trip_gltf`), named ``name``."""
    with bpy.data.libraries.load(str(path), link=False) as (src, dst):
        dst.objects = src.objects
    for obj in dst.objects:
        bpy.context.scene.collection.objects.link(obj)
    arm = next(o for o in dst.objects if o.type == "ARMATURE")
    arm.name = name
    bpy.context.view_layer.update()
    return arm


# Blender's glTF exporter and importer, run in a Blender of their own on the rig saved by the test
# session, the import saved as a .blend the tests append: the 4.2 exporter sets
# ``context.window.scene``, which crashes the bpy 4.2 wheel at a later call, and Debian's Blender 4.3
# crashes in the importer's view-layer update inside a long test session.
ROUND_TRIP = """
import os, sys, bpy
blend, glb, imported = sys.argv[-3:]
bpy.ops.wm.read_homefile(use_empty=True)
with bpy.data.libraries.load(blend) as (src, dst):
    dst.objects = src.objects
for obj in dst.objects:
    bpy.context.scene.collection.objects.link(obj)
    obj.select_set(True)
assert bpy.ops.export_scene.gltf(filepath=glb, use_selection=True) == {"FINISHED"}
bpy.ops.wm.read_homefile(use_empty=True)
assert bpy.ops.import_scene.gltf(filepath=glb) == {"FINISHED"}
bpy.data.libraries.write(imported, set(bpy.context.scene.objects), fake_user=True)
os._exit(0)  # the bpy wheels do not always shut down cleanly (conftest.py)
"""


def round_trip_gltf(obj, folder: Path, kind: str) -> Path:
    """``obj`` with its children and parents exported with Blender's glTF exporter to ``kind``.glb
    and imported back with its importer, in a Blender of their own; returns the .blend holding
    what the importer made."""
    family = {obj, *obj.children_recursive}
    top = obj
    while top.parent is not None:
        top = top.parent
        family.add(top)
    blend, glb, imported = folder / f"{kind}.blend", folder / f"{kind}.glb", folder / f"{kind}.imported.blend"
    bpy.data.libraries.write(str(blend), family, fake_user=True)
    blender = [bpy.app.binary_path, "-b", "--factory-startup", "--python-expr"] if bpy.app.binary_path else \
        [sys.executable, "-c"]
    subprocess.run([*blender, ROUND_TRIP, "--", str(blend), str(glb), str(imported)], check=True,
                   capture_output=True, timeout=600)
    assert imported.is_file(), f"the glTF round trip of {kind} saved nothing"
    return imported


@pytest.fixture(scope="session")
def gltf_files(procanim_extension, rigify_library, tmp_path_factory) -> dict[str, Path]:
    """ProcAnim's human, a generated Rigify human and a Y-up human under a turned, scaled empty,
    each exported with Blender's glTF exporter and imported back once per session."""
    folder = tmp_path_factory.mktemp("gltf")
    builds = {"gltf_human": lambda: add_human("Rig"), "gltf_rigify": lambda: add_rigify(rigify_library, "human", "Rig"),
              "gltf_tilted": lambda: tilted_human("Rig", under_empty=True)}
    files = {}
    for kind, build in builds.items():
        harness.reset_scene()
        files[kind] = round_trip_gltf(build(), folder, kind)
    harness.reset_scene()
    return files


def game_rig(name: str) -> tuple:
    """ProcAnim's human with its feet parented to the root bone (IK feet, as game exports have) and
    every bone renamed ``joint_##`` (names no convention knows: the structure alone decides);
    returns the armature and the old name → new name map."""
    obj = add_human(name)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    for side in "LR":
        obj.data.edit_bones[f"foot.{side}"].parent = obj.data.edit_bones["root"]
    bpy.ops.object.mode_set(mode="OBJECT")
    new = {}
    for k, bone in enumerate(sorted(obj.data.bones, key=lambda b: b.name)):
        new[bone.name] = f"joint_{k:02d}"
    for old_name, new_name in new.items():
        obj.data.bones[old_name].name = new_name
    return obj, new


def make_rig(kind: str, name: str, gltf_files: dict[str, Path]):
    """A rig of ``kind`` named ``name``: a glTF file imported, or a Y-up human built here."""
    if kind in gltf_files:
        return import_gltf(gltf_files[kind], name)
    if kind == "tilted_object":
        return tilted_human(name, under_empty=False)
    if kind == "tilted_empty":
        return tilted_human(name, under_empty=True)
    raise ValueError(kind)


KINDS = ["gltf_human", "gltf_rigify", "gltf_tilted", "tilted_object", "tilted_empty"]


@pytest.fixture
def rig_kind(request, gltf_files):
    """(kind, build(name)) for the parametrised kind."""
    kind = request.param
    return kind, lambda name: make_rig(kind, name, gltf_files)


# ----------------------------------------------------------------------------- measuring


def roles(obj) -> dict[str, str]:
    return {item.role: item.bone for item in obj.data.procanim_roles if item.bone}


def metrics(obj) -> dict:
    return json.loads(obj.animation_data.action.procanim.metrics_json)


def baked_frames(obj) -> np.ndarray:
    m = metrics(obj)
    return np.arange(int(m["frame_start"]), int(m["frame_end"]) + 1)


def world_rest(obj, bone: str) -> np.ndarray:
    """The bone's rest matrix in the world (4, 4)."""
    return np.array(obj.matrix_world, dtype=float) @ np.array(obj.data.bones[bone].matrix_local, dtype=float)


def world_tail(obj, bone: str) -> np.ndarray:
    return np.array(obj.matrix_world @ obj.data.bones[bone].tail_local, dtype=float)


def carried(obj, frames, points: list[tuple[str, np.ndarray]]) -> np.ndarray:
    """World positions ``(F, P, 3)`` on the evaluated pose of rest world ``points`` rigidly carried
    by their bones ``(bone, rest world point)``."""
    local = [(bone, np.linalg.inv(world_rest(obj, bone)) @ np.append(p, 1.0)) for bone, p in points]
    out = []
    for f in frames:
        pose = harness.evaluated_pose(obj, int(f), "WORLD")
        out.append([(pose[bone] @ q)[:3] for bone, q in local])
    return np.array(out)


def sole_points(obj, floor_z=0.0) -> list[tuple[str, np.ndarray]]:
    """Points on the floor under each foot's ankle, ball and toe tip, carried by the foot and toe
    bones (the toe's tip by the foot where the rig has no toe bone)."""
    r = roles(obj)
    points = []
    for side in "LR":
        foot, toe = r[f"foot.{side}"], r.get(f"toe.{side}")
        ankle = world_rest(obj, foot)[:3, 3]
        ball = world_rest(obj, toe)[:3, 3] if toe else world_tail(obj, foot)
        tip = world_tail(obj, toe or foot)
        flat = lambda p: np.array([p[0], p[1], floor_z])  # noqa: E731
        points += [(foot, flat(ankle)), (toe or foot, flat(ball)), (toe or foot, flat(tip))]
    return points


def skate_cm_s(track: np.ndarray, floor_z=0.0, contact=CONTACT_M, rest_height=0.0) -> tuple[float, int]:
    """Mean horizontal speed (cm/s) of points ``(F, P, 3)`` over consecutive frames on which both
    touch the floor (within ``contact`` of their rest height above it), and how many such pairs."""
    on = np.abs(track[..., 2] - floor_z - rest_height) < contact
    both = on[1:] & on[:-1]
    v = np.linalg.norm(np.diff(track[..., :2], axis=0), axis=-1) * FPS
    return (float(v[both].mean() * 100) if both.any() else float("nan")), int(both.sum())


def add_line(name: str, start, end):
    cu = bpy.data.curves.new(name, "CURVE")
    sp = cu.splines.new("POLY")
    sp.points.add(1)
    sp.points[0].co, sp.points[1].co = (*start, 1.0), (*end, 1.0)
    obj = bpy.data.objects.new(name, cu)
    bpy.context.collection.objects.link(obj)
    return obj


def add_flat(name: str, z: float, size=40.0):
    h = size / 2
    me = bpy.data.meshes.new(name)
    me.from_pydata([(-h, -h, z), (h, -h, z), (h, h, z), (-h, h, z)], [], [(0, 1, 2, 3)])
    obj = bpy.data.objects.new(name, me)
    bpy.context.collection.objects.link(obj)
    return obj


def walk_along_y(obj, length=3.0, root_motion="BONE") -> dict:
    """A path walk along −Y (the rigs' forward) from under the rig; returns the stored metrics."""
    x, y = np.array(obj.matrix_world @ obj.data.bones[roles(obj)["hips"]].head_local)[:2]
    add_line(f"{obj.name}.path", (x, y, 0.0), (x, y - length, 0.0))
    done = bpy.ops.procanim.path_walk(armature=obj.name, path=f"{obj.name}.path", root_motion=root_motion)
    assert done == {"FINISHED"}
    return metrics(obj)


def detect(obj) -> dict[str, str]:
    assert bpy.ops.procanim.detect_rig(armature=obj.name) == {"FINISHED"}
    found = roles(obj)
    assert not [r for r in COMPLETE if r not in found], f"missing: {[r for r in COMPLETE if r not in found]}"
    return found


# ----------------------------------------------------------------------------- glTF and turned rigs


@pytest.mark.parametrize("rig_kind", KINDS, indirect=True)
def test_roles_are_complete_and_the_path_walk_plants_its_feet(rig_kind):
    kind, build = rig_kind
    obj = build("Walker")
    found = detect(obj)
    if kind == "gltf_rigify":  # no controls came back: the bones the mesh follows are the DEF- bones
        assert all(found[r].startswith("DEF-") for r in COMPLETE), found
    hips0 = world_rest(obj, found["hips"])[:3, 3]
    walk_along_y(obj)
    frames = baked_frames(obj)
    soles = carried(obj, frames, sole_points(obj))
    skate, pairs = skate_cm_s(soles)
    print(f"\nany-rig {kind}: path walk sole skate {skate:.3f} cm/s over {pairs} pairs (panel "
          f"{metrics(obj)['skate_mean_cm_s']:.3f})")
    assert pairs > 100, f"only {pairs} frame pairs with a sole point on the floor"
    assert skate < SKATE_MAX_CM_S, f"{kind}: planted sole points skate {skate:.2f} cm/s"
    assert soles[..., 2].min() > -0.01, f"{kind}: a sole point {-100 * soles[..., 2].min():.1f} cm under the floor"
    hips = carried(obj, frames[[0, -1]], [(found["hips"], hips0)])[:, 0]
    travel = hips[1] - hips[0]
    assert travel[1] < -2.5 and abs(travel[0]) < 0.1, f"{kind}: the hips went {np.round(travel, 2)} (3 m along −Y)"


@pytest.mark.parametrize("kind", ["gltf_rigify", "gltf_human"])
def test_an_imported_rig_bakes_the_fewest_keys_within_the_tolerance(gltf_files, kind):
    """glTF imports: a Rigify rig exported without its controls (its DEF- bones hang from helper
    bones, and Blender poses each under another bone than the engine's tree) and ProcAnim's human.
    At the default tolerance (1 mm) every deform bone stays within it of the dense bake of the same
    walk, on Blender's evaluation of every frame, with at most a quarter of the keys, no skate added,
    and a contact marker at every step."""
    obj = make_rig(kind, "Walker", gltf_files)
    detect(obj)
    x, y = np.array(obj.matrix_world @ obj.data.bones[roles(obj)["hips"]].head_local)[:2]
    add_line("Walk", (x, y, 0.0), (x, y - 3.0, 0.0))
    baked = {}
    for tolerance in (0.0, 0.001):
        assert bpy.ops.procanim.path_walk(armature=obj.name, path="Walk", key_tolerance=tolerance) == {"FINISHED"}
        baked[tolerance] = (harness.deform_points(obj, baked_frames(obj)), metrics(obj)["keys_written"])
    (dense, dense_keys), (reduced, keys) = baked[0.0], baked[0.001]
    deviation = float(np.linalg.norm(reduced - dense, axis=-1).max())
    share = keys / dense_keys
    feet = harness.foot_columns(obj, "DEF-" if kind == "gltf_rigify" else "")  # the bones the mesh follows
    still = np.linalg.norm(np.diff(dense[:, feet], axis=0), axis=-1) * FPS < 0.1  # planted in the dense bake
    skate = [harness.held_skate_cm_s(p[:, feet], still, FPS) for p in (dense, reduced)]
    contacts = [m.frame for m in obj.animation_data.action.pose_markers if m.name in ("L contact", "R contact")]
    print(f"\n{kind}: {keys} of {dense_keys} keys ({100 * share:.1f} %), largest deviation {1000 * deviation:.3f} mm "
          f"over {dense.shape[1] // 2} deform bones, feet held on {int(still.sum())} frame pairs skate "
          f"{skate[0]:.3f} -> {skate[1]:.3f} cm/s, {len(contacts)} contact markers, {metrics(obj)['step_count']} steps")
    assert deviation <= 0.0011, f"a deform bone {1000 * deviation:.3f} mm from the dense bake"
    assert share <= 0.25, f"{100 * share:.1f} % of the dense bake's keys"
    assert still.sum() > 100 and abs(skate[1] - skate[0]) <= 0.1
    assert len(contacts) >= metrics(obj)["step_count"], "a contact marker at each step"


@pytest.mark.parametrize("rig_kind", ["tilted_object", "tilted_empty"], indirect=True)
def test_a_turned_scaled_rig_walks_moving_its_object(rig_kind):
    """Root motion OBJECT: the armature object (under its empty, or turned and scaled itself) walks
    the path; its scale and its armature's Y-up axes stay as they were."""
    kind, build = rig_kind
    obj = build("Walker")
    found = detect(obj)
    scale0 = np.array(obj.matrix_world.to_scale())
    hips0 = world_rest(obj, found["hips"])[:3, 3]
    walk_along_y(obj, root_motion="OBJECT")
    frames = baked_frames(obj)
    skate, pairs = skate_cm_s(carried(obj, frames, sole_points(obj)))
    assert pairs > 100 and skate < SKATE_MAX_CM_S, f"{kind}: planted sole points skate {skate:.2f} cm/s"
    hips = carried(obj, frames[[0, -1]], [(found["hips"], hips0)])[:, 0]
    assert hips[1, 1] - hips[0, 1] < -2.5, f"{kind}: the hips went {np.round(hips[1] - hips[0], 2)}"
    harness.evaluated_pose(obj, int(frames[-1]))
    np.testing.assert_allclose(np.array(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world
                                        .to_scale()), scale0, rtol=1e-4)


def grip_points(obj, frames) -> np.ndarray:
    """The right hand's documented grip point (test_handshake.py), world ``(F, 3)``: half along the
    hand bone, 0.15 hand lengths toward the body's midline (horizontal, made ⊥ to the bone)."""
    r = roles(obj)
    hand = r["hand.R"]
    rest = world_rest(obj, hand)
    length = float(np.linalg.norm(world_tail(obj, hand) - rest[:3, 3]))
    axis = rest[:3, 1] / np.linalg.norm(rest[:3, 1])
    medial = world_rest(obj, r["hand.L"])[:3, 3] - rest[:3, 3]
    medial[2] = 0.0
    medial -= (medial @ axis) * axis
    point = rest[:3, 3] + GRIP_FRACTION * length * axis + HALF_PALM * length * medial / np.linalg.norm(medial)
    return carried(obj, frames, [(hand, point)])[:, 0]


@pytest.mark.parametrize("rig_kind", KINDS, indirect=True)
def test_the_handshake_hands_meet(rig_kind):
    kind, build = rig_kind
    a = _place(build("Ann"))
    b = _place(build("Bob"), (0.0, -0.9, 0.0), 180.0)
    detect(a)
    detect(b)
    # the generator's own motion (every key, as test_handshake): at 1 mm each hand may be 1 mm off it
    assert bpy.ops.procanim.handshake(initiator=a.name, partner=b.name, frame_start=1, key_tolerance=0.0,
                                      **QUICK_SHAKE) == {"FINISHED"}
    m = metrics(a)
    frames = baked_frames(a)
    shaking = frames[np.array(list(m["phase_initiator"])) == "S"]
    assert len(shaking) >= 10
    gap_cm = 100 * np.linalg.norm(grip_points(a, shaking) - grip_points(b, shaking), axis=1)
    print(f"\nany-rig {kind}: grip to grip {gap_cm.mean():.5f} cm mean, {gap_cm.max():.5f} max")
    assert gap_cm.max() < IK_TOL_CM, f"{kind}: grip to grip {gap_cm.mean():.4f} cm mean, {gap_cm.max():.4f} max"
    rest_gap = np.linalg.norm(grip_points(a, frames[:1]) - grip_points(b, frames[:1]))
    assert rest_gap > 0.3, "the hands start apart"


@pytest.mark.parametrize("rig_kind", KINDS, indirect=True)
def test_terrain_adaptation_lifts_the_motion_onto_a_raised_floor(rig_kind):
    kind, build = rig_kind
    obj = build("Walker")
    found = detect(obj)
    assert bpy.ops.procanim.source_motion(armature=obj.name, kind="WALK", steps=2) == {"FINISHED"}
    frames = baked_frames(obj)
    watched = sole_points(obj) + [(found["hips"], world_rest(obj, found["hips"])[:3, 3])]
    before = carried(obj, frames, watched)
    floor, raised = add_flat("Floor", 0.0), add_flat("Raised", 0.15)
    assert bpy.ops.procanim.adapt_terrain(armature=obj.name, terrain=raised.name, reference=floor.name) == {"FINISHED"}
    after = carried(obj, frames, watched)
    lift = after - before
    assert np.abs(lift[..., :2]).max() < 0.01, f"{kind}: moved sideways by {100 * np.abs(lift[..., :2]).max():.1f} cm"
    rise, aside = lift[..., 2], np.abs(lift[..., :2]).max()
    print(f"\nany-rig {kind}: terrain lift {rise.min():.4f}–{rise.max():.4f} m, aside {aside:.4f} m")
    assert np.abs(rise - 0.15).max() < 0.01, f"{kind}: lifted by {rise.min():.3f}–{rise.max():.3f} m"


@pytest.mark.parametrize("rig_kind", ["gltf_rigify", "tilted_object"], indirect=True)
def test_the_preview_draws_such_a_rigs_motion_where_blender_poses_it(rig_kind, procanim_extension):
    """The live preview's ghost of a baked walk (its Clip read back from the action) lies on the
    evaluated bones: the ghost poses what the engine's Clips pose, the armature's own channels."""
    kind, build = rig_kind
    obj = build("Walker")
    detect(obj)
    walk_along_y(obj, length=1.5)
    bridge = harness.addon_module(procanim_extension, "operators.bridge")
    session = harness.addon_module(procanim_extension, "preview.session")
    ghosts = harness.addon_module(procanim_extension, "procanim_addon.ghost")
    frames = baked_frames(obj)
    clip = bridge.read_action_clip(obj, bridge.read_skeleton(obj, upright=False), int(frames[0]), int(frames[-1]))
    ghost = ghosts.build_ghost(clip, session.read_body(obj))
    worst = 0.0
    for frame in frames[:: max(1, len(frames) // 12)]:
        pose = harness.evaluated_pose(obj, int(frame), "WORLD")
        heads, _ = ghost.bones_at(frame)
        worst = max(worst, max(np.linalg.norm(h - pose[n][:3, 3]) for n, h in zip(ghost.bone_names, heads)))
    assert worst < 1e-4, f"{kind}: the ghost is {100 * worst:.2f} cm off the evaluated bones"


# ----------------------------------------------------------------------------- game rig: IK feet


def test_a_game_rig_whose_feet_hang_from_the_root_walks_on_both_feet():
    obj, new = game_rig("Game")
    found = detect(obj)
    truth = {f"{r}.{s}": new[f"{r}.{s}"] for r in ("thigh", "shin", "foot", "toe", "upper_arm", "hand") for s in "LR"}
    assert {r: found.get(r) for r in truth} == truth
    assert found["hips"] == new["hips"] and found["root"] == new["root"] and found["head"] == new["head"]
    assert obj.data.bones[new["foot.L"]].parent.name == new["root"]
    hips0 = world_rest(obj, new["hips"])[:3, 3]
    walk_along_y(obj)
    keyed = {fc.data_path for fc in harness.fcurves_of(obj.animation_data.action, obj)}
    assert {f'pose.bones["{new["foot.L"]}"].location', f'pose.bones["{new["foot.R"]}"].rotation_quaternion'} <= keyed
    frames = baked_frames(obj)
    hips = carried(obj, frames[[0, -1]], [(new["hips"], hips0)])[:, 0]
    assert hips[1, 1] - hips[0, 1] < -2.5, "the walk travels the 3 m path"
    soles = carried(obj, frames, sole_points(obj))
    for side, cols in (("L", slice(0, 3)), ("R", slice(3, 6))):
        on = np.min(np.abs(soles[:, cols, 2]), axis=1) < CONTACT_M
        plants = int(np.sum(np.diff(on.astype(int)) == 1))
        skate, pairs = skate_cm_s(soles[:, cols])
        print(f"\nany-rig game rig foot.{side}: {plants} plants, skate {skate:.3f} cm/s over {pairs} pairs")
        assert plants >= 2 and pairs > 50, f"foot.{side}: {plants} plants, {pairs} frame pairs on the floor"
        assert skate < SKATE_MAX_CM_S, f"foot.{side} skates {skate:.2f} cm/s"
    foot, shin = new["foot.L"], new["shin.L"]
    ankle = carried(obj, frames, [(foot, world_rest(obj, foot)[:3, 3]), (shin, world_tail(obj, shin))])
    gap = np.linalg.norm(ankle[:, 0] - ankle[:, 1], axis=1)
    assert gap.max() < 0.005, f"the foot leaves the shin's end by {100 * gap.max():.1f} cm"


# ----------------------------------------------------------------------------- BVH without toe joints

# joints (Z-up, facing −Y, +X left; metres) of a mocap skeleton whose legs end at the ankle: the
# foot's end site is the toe tip, 2 cm above the floor
TOELESS = [("Hips", None, (0, 0, 0.95)), ("Spine", "Hips", (0, 0, 1.07)), ("Chest", "Spine", (0, 0.01, 1.25)),
           ("Neck", "Chest", (0, 0, 1.45)), ("Head", "Neck", (0, -0.01, 1.55)), ("~Head", "Head", (0, -0.01, 1.75))]
for _side, _x in (("Left", 1.0), ("Right", -1.0)):
    TOELESS += [(f"{_side}Shoulder", "Chest", (0.02 * _x, -0.01, 1.42)),
                (f"{_side}Arm", f"{_side}Shoulder", (0.18 * _x, 0.01, 1.43)),
                (f"{_side}ForeArm", f"{_side}Arm", (0.39 * _x, 0.03, 1.22)),
                (f"{_side}Hand", f"{_side}ForeArm", (0.56 * _x, -0.02, 1.02)),
                (f"~{_side}Hand", f"{_side}Hand", (0.62 * _x, -0.04, 0.94)),
                (f"{_side}UpLeg", "Hips", (0.10 * _x, 0.0, 0.93)),
                (f"{_side}Leg", f"{_side}UpLeg", (0.10 * _x, -0.015, 0.51)),
                (f"{_side}Foot", f"{_side}Leg", (0.10 * _x, 0.0, 0.09)),
                (f"~{_side}Foot", f"{_side}Foot", (0.10 * _x, -0.17, 0.02))]


def toeless_bvh() -> str:
    """The skeleton above as BVH text (Y up, facing +Z, metres), one frame at rest."""
    bvh = {n: np.array([p[0], p[2], -p[1]]) for n, _, p in TOELESS}
    parent = {n: par for n, par, _ in TOELESS}
    kids: dict = {}
    for n, par, _ in TOELESS:
        kids.setdefault(par, []).append(n)
    lines, channels = ["HIERARCHY"], []

    def emit(name, depth):
        pad = "  " * depth
        off = bvh[name] - (bvh[parent[name]] if parent[name] else 0.0)
        offset = f"{pad}  OFFSET {off[0]:.5f} {off[1]:.5f} {off[2]:.5f}"
        if name.startswith("~"):
            lines.extend([f"{pad}End Site", f"{pad}{{", offset, f"{pad}}}"])
            return
        lines.extend([f"{pad}{'ROOT' if parent[name] is None else 'JOINT'} {name}", f"{pad}{{", offset])
        n = 6 if parent[name] is None else 3
        lines.append(f"{pad}  CHANNELS {n} " + ("Xposition Yposition Zposition " if n == 6 else "")
                     + "Zrotation Xrotation Yrotation")
        channels.append(n)
        for kid in kids.get(name, []):
            emit(kid, depth + 1)
        lines.append(f"{pad}}}")

    emit("Hips", 0)
    frame = [*bvh["Hips"], *[0.0] * (sum(channels) - 3)]
    lines += ["MOTION", "Frames: 1", "Frame Time: 0.041667", " ".join(f"{v:.5f}" for v in frame)]
    return "\n".join(lines) + "\n"


def test_a_skeleton_without_toes_rolls_over_its_toe_tip_and_the_panel_measures_it(tmp_path):
    path = tmp_path / "toeless.bvh"
    path.write_text(toeless_bvh())
    assert bpy.ops.import_anim.bvh(filepath=str(path)) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    found = detect(obj)
    assert found["foot.L"] == "LeftFoot" and "toe.L" not in found
    obj.animation_data_clear()  # walk from the rest pose, not the imported frame
    m = walk_along_y(obj)
    frames = baked_frames(obj)
    tips = carried(obj, frames, [(f"{s}Foot", world_tail(obj, f"{s}Foot")) for s in ("Left", "Right")])
    rest_tip = float(world_tail(obj, "LeftFoot")[2])
    # the toe tip (the foot bone's tail) touches the floor within CONTACT_M of its rest height
    skate, pairs = skate_cm_s(tips, rest_height=rest_tip)
    assert pairs > 100 and skate < SKATE_MAX_CM_S, f"the toe tip skates {skate:.2f} cm/s over {pairs} frame pairs"
    # no scraping: never two frames in a row on the floor sliding faster than 5 cm/s
    low = np.abs(tips[..., 2] - rest_tip) < CONTACT_M
    fast = (np.linalg.norm(np.diff(tips[..., :2], axis=0), axis=-1) * FPS > 0.05) & low[1:] & low[:-1]
    scrape = fast[1:] & fast[:-1]
    assert not scrape.any(), f"the toe tip scrapes the floor on frames {frames[1:-1][scrape.any(axis=1)].tolist()}"
    # the panel's figure, its points measured here (docs/rigs.md): the heel on the floor behind the
    # ankle by 0.3 of the ankle → toe tip distance along the floor, and the toe tip; its contact
    heels = []
    for s in ("Left", "Right"):
        ankle, tip = world_rest(obj, f"{s}Foot")[:3, 3], world_tail(obj, f"{s}Foot")
        ahead = (tip - ankle) * [1, 1, 0]
        heels.append((f"{s}Foot", (ankle - 0.3 * ahead) * [1, 1, 0]))
    heels = carried(obj, frames, heels)
    on = np.concatenate([np.abs(heels[..., 2]) < CONTACT_M, np.abs(tips[..., 2] - rest_tip) < CONTACT_M], axis=1)
    points = np.concatenate([heels, tips], axis=1)
    both = on[1:] & on[:-1]
    speed = np.linalg.norm(np.diff(points[..., :2], axis=0), axis=-1) * FPS
    measured = float(speed[both].mean() * 100)
    print(f"\nany-rig toeless: toe tip skate {skate:.3f} cm/s over {pairs} pairs; panel "
          f"{m['skate_mean_cm_s']:.3f}, measured on its points {measured:.3f} cm/s")
    assert abs(m["skate_mean_cm_s"] - measured) < 0.2, f"panel {m['skate_mean_cm_s']:.2f} cm/s, measured {measured:.2f}"


def test_a_scaled_control_rig_is_adapted_to_the_terrain_on_its_controls(rigify_library):
    """A generated Rigify human (controls) scaled by 2: its source motion is read from Blender's
    evaluated deform bones in the armature's own space, adapted in its upright frame (metres), and
    its deform bones rise onto the raised floor."""
    rig = add_rigify(rigify_library, "human", "Big")
    rig.scale = (2.0, 2.0, 2.0)
    bpy.context.view_layer.update()
    assert bpy.ops.procanim.source_motion(armature=rig.name, kind="WALK", steps=2) == {"FINISHED"}
    frames = baked_frames(rig)
    watched = [(n, world_rest(rig, n)[:3, 3]) for n in ("DEF-spine", "DEF-foot.L", "DEF-toe.R")]
    before = carried(rig, frames, watched)
    floor, raised = add_flat("Floor", 0.0), add_flat("Raised", 0.15)
    assert bpy.ops.procanim.adapt_terrain(armature=rig.name, terrain=raised.name, reference=floor.name) == {"FINISHED"}
    lift = carried(rig, frames, watched) - before
    rise, aside = lift[..., 2], np.abs(lift[..., :2]).max()
    assert aside < 0.01 and np.abs(rise - 0.15).max() < 0.01, f"lifted by {rise.min():.3f}–{rise.max():.3f} m, " \
                                                               f"{100 * aside:.1f} cm aside"
