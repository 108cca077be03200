"""Bake speed: ProcAnim's baker (keyframe_points.add + foreach_set) against keying the same Clip
with keyframe_insert, measured side by side in one run on the duck walk.

    bash tools/bench.sh            (or: <venv-bpy-5.0.1>/bin/python bench/bake_speed.py)

Prints, for 1,000 and 10,000 frames (a key on every frame): the engine's generate time, ProcAnim's
bake time, the keyframe_insert time for the same values, and the ratio. keyframe_insert is only
run for 1,000 frames by default (10,000 takes minutes); pass --insert-10k to measure it too.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import bpy

GENERATORS = ("duck_walk",)  # the generators this bench measures
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from benchlog import emit  # noqa: E402
from blender_install import install_extension  # noqa: E402


def keyframe_insert_bake(obj, clip):
    """What a naive add-on does: set the channels and keyframe_insert, frame by frame."""
    for f, frame in enumerate(clip.frames):
        for i, name in enumerate(clip.bone_names):
            pb = obj.pose.bones[name]
            if clip.key_location[i]:
                pb.location = clip.locations[f, i]
                pb.keyframe_insert("location", frame=float(frame), group=name)
            if clip.key_rotation[i]:
                pb.rotation_quaternion = clip.rotations[f, i]
                pb.keyframe_insert("rotation_quaternion", frame=float(frame), group=name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--insert-10k", action="store_true", help="also time keyframe_insert for 10,000 frames")
    args = ap.parse_args(argv)
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    mod = install_extension("bench")
    duck = importlib.import_module(mod + ".procanim_addon.duck")
    bridge = importlib.import_module(mod + ".operators.bridge")
    bake = importlib.import_module(mod + ".operators.bake")
    print(f"Blender {bpy.app.version_string}")
    print(f"{'frames':>7} {'generate s':>11} {'bake s':>8} {'keyframe_insert s':>18} {'ratio':>7}")
    for n in (1_000, 10_000):
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
        bpy.ops.procanim.add_duck(name="Duck")
        obj = bpy.data.objects["Duck"]
        sk, rm = bridge.read_skeleton(obj), bridge.read_rigmap(obj)
        t0 = time.perf_counter()
        clip = duck.generate_duck_walk(sk, rm, duck.DuckParams(frame_end=n - 1, key_interval=1))
        t1 = time.perf_counter()
        bake.bake_clip(obj, clip)
        t2 = time.perf_counter()
        ins = float("nan")
        if n <= 1_000 or args.insert_10k:
            other = bpy.data.objects.new("Other", obj.data)
            bpy.context.collection.objects.link(other)
            bpy.context.view_layer.update()  # builds other.pose
            t3 = time.perf_counter()
            keyframe_insert_bake(other, clip)
            ins = time.perf_counter() - t3
        ratio = ins / (t2 - t1) if ins == ins else float("nan")
        print(f"{n:>7} {t1 - t0:>11.3f} {t2 - t1:>8.3f} {ins:>18.3f} {ratio:>6.0f}x")
        emit("bake_speed", f"{n} frames", frames=n, generate_s=t1 - t0, bake_s=t2 - t1, keyframe_insert_s=ins,
             ratio=ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]))
