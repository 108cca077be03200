"""A crowd of ProcAnim humans walking parallel curves in one Blender process (issue 12's crowd row):

    <venv-bpy-5.0.1>/bin/python bench/path_walk_crowd_blender.py [--characters 100] [--frames 1000]

Each character (``procanim.add_human``, body mesh included) gets its own S-curve, the curves side by
side 1.2 m apart. Baked from the same state each time (no action on any character), every frame keyed
(``key_tolerance=0``, the goal's measure): all at once by ``bpy.ops.procanim.crowd_walk`` (one call,
the crowd's way), then one ``bpy.ops.procanim.path_walk`` per character, as a script calling the
single-character operator would; and ``crowd_walk`` at the default key tolerance (1 mm: the fewest
keys, planned per character), what a user baking with the defaults waits. Printed: seconds per 1,000
character-frames (wall and CPU; goal ≤ 0.3 s, i.e. 100 × 1,000 in < 30 s) and where they go — the
same characters' engine calls alone (``generate_path_walk`` on the inputs the operator reads) and, by
difference, reading the scene, baking, and (per-character calls) Blender's dependency-graph rebuild
after each call that gives an armature a new action.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import bpy

GENERATORS = ("crowd_walk",)  # the generators this bench measures
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))
import path_walk_blender as pwb  # noqa: E402
from benchlog import emit  # noqa: E402
from blender_install import install_extension  # noqa: E402

FPS = 24
SPACING_M = 1.2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--characters", type=int, default=100)
    ap.add_argument("--frames", type=int, default=1000, help="about how many frames each walk lasts")
    args = ap.parse_args(argv)
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    pwb.MODULE = module = install_extension("crowd")
    walk = importlib.import_module(module + ".procanim_addon.walk")
    bridge = importlib.import_module(module + ".operators.bridge")
    FlatGround = importlib.import_module(module + ".procanim_addon.ground").FlatGround
    bpy.context.scene.render.fps = FPS
    params = walk.PathWalkParams(fps=FPS)
    humans, curves = [], []
    for i in range(args.characters):
        assert bpy.ops.procanim.add_human(name=f"Walker.{i:03d}", location=(SPACING_M * i, 0.0, 0.0)) == {"FINISHED"}
        humans.append(bpy.data.objects[f"Walker.{i:03d}"])
    sk, rm = bridge.read_skeleton(humans[0]), bridge.read_rigmap(humans[0])
    shape = pwb.curve_for_frames(walk, sk, rm, params, args.frames, FlatGround(0.0))
    for i in range(args.characters):
        curves.append(pwb.add_curve(f"Path.{i:03d}", shape + [SPACING_M * i, 0.0, 0.0]))
    bpy.context.view_layer.update()
    def clear() -> None:  # back to the state before: no action anywhere
        for human in humans:
            action = human.animation_data.action
            human.animation_data_clear()
            bpy.data.actions.remove(action)
        bpy.context.view_layer.update()

    with pwb.Clock() as one_call:  # every frame keyed (the goal's)
        assert bpy.ops.procanim.crowd_walk(armatures=",".join(h.name for h in humans), key_tolerance=0.0,
                                           paths=",".join(c.name for c in curves)) == {"FINISHED"}
    clear()
    with pwb.Clock() as reduced:  # the default key tolerance: the fewest keys within 1 mm
        assert bpy.ops.procanim.crowd_walk(armatures=",".join(h.name for h in humans),
                                           paths=",".join(c.name for c in curves)) == {"FINISHED"}
    clear()
    with pwb.Clock() as crowd:
        for human, curve in zip(humans, curves):
            assert bpy.ops.procanim.path_walk(armature=human.name, path=curve.name, key_tolerance=0.0) == {"FINISHED"}
    frames = 0
    for human in humans:
        lo, hi = human.animation_data.action.frame_range
        frames += int(hi - lo + 1)
    inputs = [(bridge.read_skeleton(h), bridge.read_rigmap(h), bridge.read_curve_polyline(c, h))
              for h, c in zip(humans, curves)]
    with pwb.Clock() as engine:
        for skeleton, rigmap, points in inputs:
            walk.generate_path_walk(skeleton, rigmap, points, FlatGround(0.0), params)
    per = 1000.0 / frames
    print(f"\nBlender {bpy.app.version_string}; {args.characters} ProcAnim humans ({len(sk)} bones), parallel "
          f"S-curves, {frames} character-frames in all, {FPS} fps, one process")
    print(f"{'':40s} {'wall s':>8s} {'CPU s':>8s} {'wall s/1000 ch-fr':>18s} {'CPU s/1000 ch-fr':>17s}")
    rows = (("procanim.crowd_walk, one call", one_call), ("procanim.path_walk per character", crowd),
            ("engine alone (same inputs)", engine), ("procanim.crowd_walk at 1 mm (default)", reduced))
    for name, c in rows:
        print(f"{name:40s} {c.wall:8.2f} {c.cpu:8.2f} {c.wall * per:18.3f} {c.cpu * per:17.3f}")
    for name, c in rows[:2]:
        rest_wall, rest_cpu = c.wall - engine.wall, c.cpu - engine.cpu
        label = "  " + name.split(",")[0].split(" per")[0] + " beyond the engine"
        print(f"{label:40s} {rest_wall:8.2f} {rest_cpu:8.2f} {rest_wall * per:18.3f} "
              f"{rest_cpu * per:17.3f}")
    for row, c in (("crowd operator", one_call), ("humans", crowd), ("crowd operator, 1 mm", reduced)):
        emit("crowd", row, characters=args.characters, bones=len(sk), character_frames=frames,
             operators_wall_s=c.wall, operators_cpu_s=c.cpu, engine_wall_s=engine.wall, engine_cpu_s=engine.cpu,
             per_1000_wall_s=c.wall * per, per_1000_cpu_s=c.cpu * per, engine_per_1000_wall_s=engine.wall * per,
             engine_per_1000_cpu_s=engine.cpu * per)
    print(f"goal: <= 0.3 s per 1,000 character-frames, every frame keyed; 100 x 1,000 frames take "
          f"{one_call.wall * per * 100:.1f} s wall in one crowd_walk call, {crowd.wall * per * 100:.1f} s with one "
          f"path_walk call per character, {reduced.wall * per * 100:.1f} s in one crowd_walk call at 1 mm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
