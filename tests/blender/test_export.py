"""Export to FBX and glTF (issue 24, item 3): ``procanim.export`` writes the armature, its meshes and
the bake's action only, with no leaf bones; imported back with Blender's own importers into an
empty scene, the armature plays the same motion — every deform bone's head, world space, within
1 cm on every 5th frame (the importers undo the files' axis and unit conversions) — and the root
bone's travel is the exported one. The glTF file passes the Khronos glTF validator when it is
installed (``tools/setup_env.sh`` puts it in the cache) and a structural check with pygltflib when
that is importable."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import bpy
import harness
import numpy as np
import pytest
from scenes import add_curve, add_human

JOINT_M = 0.01
EVERY = 5
CACHE = Path(os.environ.get("PROCANIM_CACHE", Path.home() / ".cache" / "procanim"))
VALIDATOR = CACHE / "gltf-validator" / "node_modules" / "gltf-validator"
FORMATS = {"FBX": ".fbx", "GLB": ".glb", "GLTF": ".gltf"}
# The bpy 4.2 wheel (Blender as a Python module, no binary) can segfault in its glTF exporter's
# closing frame_set late in a long test session (CI, once in four runs); the glTF export is tested on
# the 4.5 and 5.0 wheels and in Debian's Blender 4.3.2 binary.
GLTF_CRASHES_HERE = bpy.app.version < (4, 3, 0) and not bpy.app.binary_path
skip_gltf_on_42_wheel = pytest.mark.skipif(GLTF_CRASHES_HERE, reason="bpy 4.2 wheel: glTF exporter crash")


def heads(obj, frames, names) -> np.ndarray:
    """World heads (F, N, 3) of the pose bones ``names`` as Blender evaluates them."""
    scene, out = bpy.context.scene, np.empty((len(frames), len(names), 3))
    for k, f in enumerate(frames):
        scene.frame_set(int(f))
        ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        world = np.array(ev.matrix_world)
        out[k] = [world[:3, :3] @ np.array(ev.pose.bones[n].head) + world[:3, 3] for n in names]
    return out


def baked_walker(loop: str = "ROOT_MOTION", bake_to: str = "ACTION"):
    """ProcAnim's human (its body mesh skinned to it) with a walk loop baked, and another action of
    the animator's on an NLA track (which no export may carry)."""
    human = add_human("Walker")
    other = bpy.data.actions.new("Other")
    human.animation_data_create()
    track = human.animation_data.nla_tracks.new()
    track.name = "Other"
    human["sway"] = 0.0
    human.keyframe_insert('["sway"]', frame=1)
    sway = human.animation_data.action
    track.strips.new("Sway", 1, sway)
    human.animation_data.action = None
    other.use_fake_user = True
    assert bpy.ops.procanim.path_walk(armature="Walker", loop=loop, loop_cycles=2, bake_to=bake_to) == {"FINISHED"}
    return human


def reference(extension, obj):
    """What the export should carry: the bake's frames (every 5th), deform bones, their world heads."""
    action = harness.addon_module(extension, "operators.export").baked_action(obj)
    lo, hi = (int(round(v)) for v in action.frame_range)
    frames = np.arange(lo, hi + 1, EVERY)
    names = [b.name for b in obj.data.bones if b.use_deform]
    return action, frames, names, heads(obj, frames, names)


def import_back(path: Path, fmt: str):
    """An empty scene with ``path`` imported by Blender's importer; returns the armature."""
    harness.reset_scene()
    if fmt == "FBX":
        assert bpy.ops.import_scene.fbx(filepath=str(path)) == {"FINISHED"}
    else:
        assert bpy.ops.import_scene.gltf(filepath=str(path)) == {"FINISHED"}
    armatures = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    assert len(armatures) == 1
    return armatures[0]


def imported_actions(arm) -> list:
    """The actions the importer made for the armature (one per animation the file holds)."""
    return [a for a in bpy.data.actions if a.users or a.use_fake_user]


@pytest.mark.parametrize("fmt", [f if f == "FBX" else pytest.param(f, marks=skip_gltf_on_42_wheel) for f in FORMATS])
def test_an_export_imported_back_plays_the_same_motion(procanim_extension, fmt, tmp_path):
    human = baked_walker()
    action, frames, names, want = reference(procanim_extension, human)
    bones = len(human.data.bones)
    root_travel = want[-1, names.index("root")] - want[0, names.index("root")] if "root" in names else None
    path = tmp_path / f"walker{FORMATS[fmt]}"
    assert bpy.ops.procanim.export(armature="Walker", filepath=str(path), format=fmt) == {"FINISHED"}
    assert path.is_file() and path.stat().st_size > 1000
    assert bpy.data.objects["Walker"].animation_data.action == action  # the scene is as it was
    assert [t.name for t in human.animation_data.nla_tracks] == ["Other"] and human.animation_data.use_nla
    if fmt != "FBX":
        check_gltf(path)
    arm = import_back(path, fmt)
    assert len(arm.data.bones) == bones, "leaf bones (or fewer bones) in the file"
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    assert meshes and any(m.type == "ARMATURE" and m.object == arm for o in meshes for m in o.modifiers)
    assert len(imported_actions(arm)) == 1, [a.name for a in bpy.data.actions]
    first = int(round(arm.animation_data.action.frame_range[0]))
    got = heads(arm, frames - frames[0] + first, names)
    err = np.linalg.norm(got - want, axis=-1)
    print(f"[export {fmt}] {len(frames)} frames, {len(names)} deform joints: {100 * err.max():.3f} cm at most")
    assert err.max() <= JOINT_M, f"joint {names[int(err.max(axis=0).argmax())]} {100 * err.max():.2f} cm off"
    if root_travel is not None:
        moved = got[-1, names.index("root")] - got[0, names.index("root")]
        assert np.linalg.norm(root_travel[:2]) > 1.0  # root motion on the root bone ...
        np.testing.assert_allclose(moved, root_travel, atol=JOINT_M)  # ... travels as exported


@skip_gltf_on_42_wheel
def test_a_strip_bake_exports_alone_and_the_scene_is_left_as_it_was(procanim_extension, tmp_path):
    human = baked_walker(loop="IN_PLACE", bake_to="NLA_STRIP")
    assert human.animation_data.action is None
    tracks = [(t.name, t.mute) for t in human.animation_data.nla_tracks]
    action, frames, names, _ = reference(procanim_extension, human)
    # what the strip's action plays alone: the reference (the NLA also plays the Other strip, which
    # keys no bone)
    path = tmp_path / "walker.glb"
    assert bpy.ops.procanim.export(armature="Walker", filepath=str(path), format="GLB",
                                   generator="path_walk") == {"FINISHED"}
    assert human.animation_data.action is None and [(t.name, t.mute) for t in human.animation_data.nla_tracks] == tracks
    want = heads(human, frames, names)
    arm = import_back(path, "GLB")
    first = int(round(arm.animation_data.action.frame_range[0]))
    got = heads(arm, frames - frames[0] + first, names)
    assert np.linalg.norm(got - want, axis=-1).max() <= JOINT_M


def test_export_refuses_a_character_with_no_bake_and_an_empty_path(tmp_path):
    add_human("Walker")
    with pytest.raises(RuntimeError, match="no ProcAnim bake"):
        bpy.ops.procanim.export(armature="Walker", filepath=str(tmp_path / "x.fbx"))
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -2.0, 0.0)])
    assert bpy.ops.procanim.path_walk(armature="Walker", path="Line") == {"FINISHED"}
    with pytest.raises(RuntimeError, match="file path"):
        bpy.ops.procanim.export(armature="Walker")
    assert not list(tmp_path.iterdir())


def check_gltf(path: Path) -> None:
    """The Khronos validator's verdict (when installed) and a structural check (pygltflib): one
    skin, one animation whose channels target the skin's joints, samplers whose times start at 0."""
    node = shutil.which("node")
    if node and VALIDATOR.is_dir():
        here = Path(__file__).with_name("gltf_validate.js")
        run = subprocess.run([node, str(here), str(VALIDATOR), str(path)], capture_output=True, text=True, timeout=120)
        print(f"[gltf-validator] {run.stdout.strip()[:400]}")
        assert run.returncode == 0, run.stdout + run.stderr
    else:
        print("[gltf-validator] not installed (tools/setup_env.sh installs it)")
    try:
        import pygltflib
    except ImportError:
        return
    gltf = pygltflib.GLTF2().load(str(path))
    assert gltf.asset.version == "2.0" and len(gltf.skins) == 1 and len(gltf.animations) == 1
    joints = set(gltf.skins[0].joints)
    animation = gltf.animations[0]
    assert {c.target.node for c in animation.channels} <= joints | {gltf.skins[0].skeleton}
    times = gltf.accessors[animation.samplers[0].input]
    assert times.min[0] == pytest.approx(0.0, abs=1e-6)  # slid to zero: the clip starts at its first pose
    names = {n.name for n in gltf.nodes}
    assert not any(n.endswith("_end") for n in names)
