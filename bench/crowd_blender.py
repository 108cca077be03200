"""The crowd end to end in Blender (issue 27 item 5): ``procanim.crowd_walk`` on the plaza of
``bench/crowd_engine.py`` — walkers crossing a 48 m circle, about 1,000 frames each — with
avoidance, beside today's crowd (the same call with ``personal_radius`` 0 and ``variation`` 0: each
walker's path walk alone) in the same run:

    <venv-bpy-5.0.1>/bin/python bench/crowd_blender.py [--walkers 100]

One Blender process: the walkers are ProcAnim humans (``procanim.add_human``, body mesh included),
each with a straight curve; each call is timed from the operator's start to its end (reading the
scene, the engine, writing every key), wall and CPU time of the whole process. "per 1k" is seconds
per 1,000 character-frames (the frames of all walkers' actions; goal ≤ 0.3 s with avoidance).
Printed beside: the crowd's own figures from the actions' metrics (closest pelvises on any frame,
walkers that gave way, repair rounds, the last frame). The figures are printed only (no ``BENCH``
records: ``tools/bench.sh`` does not run it; docs/performance.md holds a run).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import bpy

GENERATORS = ("crowd_walk",)  # the generators this bench measures
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import crowd_engine  # noqa: E402
from blender_install import install_extension  # noqa: E402
from path_walk_blender import Clock  # noqa: E402

FPS = 24


def _clear(humans) -> None:
    """Back to the state before a bake: no action anywhere."""
    for human in humans:
        action = human.animation_data.action
        human.animation_data_clear()
        bpy.data.actions.remove(action)
    bpy.context.view_layer.update()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--walkers", type=int, default=100)
    args = ap.parse_args(argv)
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    install_extension("crowd")
    bpy.context.scene.render.fps = FPS
    humans, curves = [], []
    for i, w in enumerate(crowd_engine.plaza(args.walkers)):
        a, b = w.points[0], w.points[-1]
        assert bpy.ops.procanim.add_human(name=f"W{i:03d}", location=(a[0], a[1], 0.0)) == {"FINISHED"}
        humans.append(bpy.data.objects[f"W{i:03d}"])
        cu = bpy.data.curves.new(f"Lane{i:03d}", "CURVE")
        sp = cu.splines.new("POLY")
        sp.points.add(1)
        sp.points[0].co, sp.points[1].co = (a[0], a[1], 0.0, 1.0), (b[0], b[1], 0.0, 1.0)
        curves.append(bpy.data.objects.new(cu.name, cu))
        bpy.context.collection.objects.link(curves[-1])
    bpy.context.view_layer.update()
    names = dict(armatures=",".join(h.name for h in humans), paths=",".join(c.name for c in curves))
    runs = (("today's crowd (personal_radius 0, variation 0)", dict(personal_radius=0.0, variation=0.0)),
            ("avoiding (personal_radius 0.3, variation 0.5)",
             dict(personal_radius=0.3, variation=crowd_engine.VARIATION, seed=crowd_engine.SEED)))
    print(f"\nBlender {bpy.app.version_string}; {args.walkers} ProcAnim humans crossing a "
          f"{2 * crowd_engine.RADIUS_M:.0f} m plaza, {FPS} fps, one process, one procanim.crowd_walk call each")
    print(f"{'':48s} {'char-frames':>11s} {'wall s':>7s} {'CPU s':>7s} {'wall/1k':>8s} {'CPU/1k':>7s}")
    for k, (label, kw) in enumerate(runs):
        if k:
            _clear(humans)
        with Clock() as c:
            assert bpy.ops.procanim.crowd_walk(**names, **kw) == {"FINISHED"}
        frames = sum(int(h.animation_data.action.frame_range[1] - h.animation_data.action.frame_range[0] + 1)
                     for h in humans)
        m = json.loads(humans[0].animation_data.action.procanim.metrics_json)
        print(f"{label:48s} {frames:>11,} {c.wall:7.1f} {c.cpu:7.1f} {1000 * c.wall / frames:8.3f} "
              f"{1000 * c.cpu / frames:7.3f}")
        print(f"{'':48s} closest pelvises {100 * m['crowd_closest_pelvis_m']:.1f} cm, {m['crowd_moved']} gave way, "
              f"{m.get('crowd_repair_rounds', 0)} repair rounds, last frame {m['crowd_last_frame']:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
