"""Terrain adaptation of real motion capture, measured on Blender's evaluated pose (issue 15):

    <venv-bpy-5.0.1>/bin/python bench/terrain_mocap.py

The clip: ``test_freebvh.bvh`` shipped in the source package of ``bvhtoolbox`` 0.1.3 on PyPI (MIT
licence; a Mixamo-skeleton capture, 69 frames at 30 fps: four steps forward, four back, the swing
feet 2–5 cm above the floor). It is fetched here with pip into ~/.cache/procanim/mocap (not kept in
the repository). No package reachable from this project ships a captured hop; the engine tests use
walks built to skim the floor like this one instead (tests/engine/test_terrain_adapt.py).

For ankle- and knee-high zigzags (two raised 0.5 m cells across the path, starting 0.1, 0.3 and
0.5 m ahead of the character), the clip is imported (``import_anim.bvh``, scale 0.01), its roles
detected, adapted by ``procanim.adapt_terrain`` (infeasible terrains adapted anyway), and measured
with a BVH tree of the terrain: frames where a leg point (11 along each leg bone's axis) is more than
2 mm under the surface, the deepest (cm), beside the engine's own count (limb boxes), the frames it
reports as not cleared, and the contact error (cm: planted feet lifted off a block's edge).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import bpy
import numpy as np
from mathutils import Vector
from mathutils.bvhtree import BVHTree

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from blender_install import install_extension  # noqa: E402

CACHE = Path.home() / ".cache" / "procanim" / "mocap"
PACKAGE = "bvhtoolbox==0.1.3"
MEMBER = "bvhtoolbox-0.1.3/tests/example_files/test_freebvh.bvh"
TOLERANCE = 0.002


def fetch() -> Path:
    """The BVH file, downloaded once with pip (the ordinary client) and extracted from the sdist."""
    out = CACHE / Path(MEMBER).name
    if out.exists():
        return out
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q", "-d",
                    str(CACHE), PACKAGE], check=True)
    with tarfile.open(next(CACHE.glob("bvhtoolbox-0.1.3.tar.gz"))) as tar:
        out.write_bytes(tar.extractfile(MEMBER).read())
    return out


def world_poses(arm, frames):
    scene = bpy.context.scene
    out = {}
    for f in frames:
        scene.frame_set(f)
        mw = np.array(arm.matrix_world)
        out[f] = {pb.name: mw @ np.array(pb.matrix) for pb in arm.pose.bones}
    return out


def add_zigzag(origin, direction, height, ground, cell=0.5, width=3.0, size=20.0):
    side = np.array([-direction[1], direction[0]])
    verts = [tuple(np.r_[origin + a * size * direction + b * size * side, ground])
             for a, b in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
    faces = [(0, 1, 2, 3)]
    for k in (0, 2):
        a, b = origin + k * cell * direction, origin + (k + 1) * cell * direction
        base = len(verts)
        for z in (ground, ground + height):
            verts += [tuple(np.r_[p, z]) for p in (a - width / 2 * side, b - width / 2 * side,
                                                   b + width / 2 * side, a + width / 2 * side)]
        faces.append((base + 4, base + 5, base + 6, base + 7))
        faces += [(base + i, base + (i + 1) % 4, base + 4 + (i + 1) % 4, base + 4 + i) for i in range(4)]
    me = bpy.data.meshes.new("Zigzag")
    me.from_pydata(verts, [], faces)
    me.update()
    obj = bpy.data.objects.new("Zigzag", me)
    bpy.context.collection.objects.link(obj)
    return obj, BVHTree.FromPolygons([Vector(v) for v in verts], faces)


def depths(poses, legs, lengths, tree):
    """{frame: deepest leg point under the surface (m)}."""
    out = {}
    for f, pose in poses.items():
        worst = -1.0
        for n in legs:
            m = pose[n]
            for t in np.linspace(0.0, 1.0, 11):
                q = m[:3, 3] + t * lengths[n] * m[:3, 1]
                hit = tree.ray_cast(Vector((q[0], q[1], 100.0)), Vector((0.0, 0.0, -1.0)))
                if hit[0] is not None:
                    worst = max(worst, hit[0].z - q[2])
        out[f] = worst
    return out


def run(path, level, start):
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    bpy.ops.import_anim.bvh(filepath=str(path), global_scale=0.01, rotate_mode="NATIVE")
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert bpy.ops.procanim.detect_rig(armature=arm.name) == {"FINISHED"}
    lo, hi = (int(round(v)) for v in arm.animation_data.action.frame_range)
    frames = range(lo, hi + 1)
    before = world_poses(arm, frames)
    names = [b.name for b in arm.data.bones]
    legs = [n for n in names if any(k in n for k in ("UpLeg", "Leg", "Foot", "ToeBase"))]
    lengths = {b.name: b.length * arm.matrix_world.to_scale()[0] for b in arm.data.bones}
    sole = min(min(p[n][2, 3], (p[n][:3, 3] + p[n][:3, 1] * lengths[n])[2]) for p in before.values() for n in legs)
    first = before[lo]
    height = {"ankle": np.mean([first[n][2, 3] for n in names if n.endswith("Foot")]) - sole,
              "knee": np.mean([first[n][2, 3] for n in names if n.endswith(("LeftLeg", "RightLeg"))]) - sole}[level]
    hips = np.array([before[f][names[0]][:3, 3] for f in frames])
    d = hips[len(hips) // 2, :2] - hips[0, :2]
    d /= np.linalg.norm(d)
    _, tree = add_zigzag(hips[0, :2] + start * d, d, height, sole)
    src = depths(before, legs, lengths, tree)
    assert bpy.ops.procanim.adapt_terrain(armature=arm.name, terrain="Zigzag", refuse_infeasible=False) == {"FINISHED"}
    m = json.loads(arm.animation_data.action.procanim.metrics_json)
    after = depths(world_poses(arm, frames), legs, lengths, tree)
    bad = [v for v in after.values() if v > TOLERANCE]
    return height, sum(v > TOLERANCE for v in src.values()), len(bad), max(bad, default=0.0), m


def main() -> int:
    path = fetch()
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    install_extension("bench")
    print(f"Blender {bpy.app.version_string}; {path.name} from {PACKAGE} (PyPI sdist), evaluated pose")
    print(f"{'blocks':<6} {'height m':>8} {'start m':>7} {'source coll':>11} {'adapted coll':>12} {'deepest cm':>10} "
          f"{'engine coll':>11} {'contact err cm':>14}  reported not cleared")
    for level in ("ankle", "knee"):
        for start in (0.1, 0.3, 0.5):
            h, src, n, deepest, m = run(path, level, start)
            print(f"{level:<6} {h:>8.3f} {start:>7.1f} {src:>11} {n:>12} {deepest * 100:>10.1f} {m['collisions']:>11} "
                  f"{m['contact_error_cm_max']:>14.1f}  {m.get('unfixed_frames', '-')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
