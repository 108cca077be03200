"""Terrain adaptation, the paper's Table 2 (Jo & Choi 2019) reproduced in Blender, one command:

    <venv-bpy-5.0.1>/bin/python bench/terrain_blender.py [--plot docs/terrain_collisions.png]
    <venv-bpy-5.0.1>/bin/python bench/terrain_blender.py --speed    # the speed table only (issue 12)

Walk, jump and tumble (``procanim.source_motion`` on ProcAnim's human) × the zigzag terrain (four
0.8 m cells across the direction of travel, the 1st and 3rd raised) at ankle, knee and waist height,
adapted with ``procanim.adapt_terrain`` (infeasible terrains adapted anyway, as the paper did).
Measured on the EVALUATED Blender pose (``frame_set``) against the terrain mesh with a BVH tree:

* collisions — frames where a limb (legs; arms too) goes more than 2 mm under the terrain surface,
  the limbs taken as their bone axes plus a 4 cm thick tube for thighs, shins, upper arms, forearms;
  the source motion's count on the same terrain is printed beside it; the engine's own OBB count
  (boxes 0.12 × bone length thick, the paper's measure) is printed too;
* bone-length error — max change of a bone's length or of its head's distance to the parent head (%);
* contact error — feet that touched the source's ground: |gap to the terrain − source gap| (cm, max);
* fps — frames adapted per second of the operator's wall time (read, solve, bake); desc fps — per
  second of the engine's descriptor part alone (descriptors, damped solve, multi-resolution, channels).

``--speed``: the operator end to end (read the action and meshes, adapt, bake) on walks of 6 and 20
steps over ankle- and knee-high blocks, in CPU seconds of all threads (``time.process_time``: the
machine is shared), beside its peer in the same run — Blender's own Bake Action (``nla.bake``, visual
keying) of the same armature over the same frames, the cost of Blender merely re-keying that motion
— as a ratio, and as a multiple of real time (24 frames/s).

Every bake here keys every frame (``key_tolerance=0``): Table 2 measures the adaptation's own motion, and
Bake Action keys every frame too; the key planner's cost is benched by ``bench/control_rig_bake.py``
and ``bench/path_walk_blender.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import bpy
import numpy as np
from mathutils import Vector
from mathutils.bvhtree import BVHTree

GENERATORS = ("adapt_terrain", "source_motion")  # the generators this bench measures
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from benchlog import emit  # noqa: E402
from blender_install import install_extension  # noqa: E402

PAPER = {  # Table 2: collisions / bone-length error %, High (waist) / Medium (knee) / Low (ankle)
    ("walk", "waist"): (5, 4.6), ("walk", "knee"): (2, 3.9), ("walk", "ankle"): (0, 2.3),
    ("jump", "waist"): (3, 3.2), ("jump", "knee"): (2, 2.9), ("jump", "ankle"): (0, 2.6),
    ("tumble", "waist"): (7, 5.3), ("tumble", "knee"): (3, 3.2), ("tumble", "ankle"): (2, 1.7),
}  # fmt: skip
LIMBS = [f"{r}.{s}" for s in "LR" for r in ("thigh", "shin", "foot", "toe", "upper_arm", "forearm", "hand")]
THICK = {"thigh", "shin", "upper_arm", "forearm"}


def add_zigzag(name, height, y0=-0.3, cell=0.8, width=3.0, margin=10.0):
    y_end = y0 - 4 * cell
    verts = [(-margin, y0 + margin, 0.0), (margin, y0 + margin, 0.0), (margin, y_end - margin, 0.0)]
    verts.append((-margin, y_end - margin, 0.0))
    faces = [(0, 3, 2, 1)]
    for k in (0, 2):
        ya, yb = y0 - k * cell, y0 - (k + 1) * cell
        base = len(verts)
        for z in (0.0, height):
            verts += [(-width / 2, ya, z), (-width / 2, yb, z), (width / 2, yb, z), (width / 2, ya, z)]
        faces.append((base + 4, base + 5, base + 6, base + 7))
        faces += [(base + a, base + (a + 1) % 4, base + 4 + (a + 1) % 4, base + 4 + a) for a in range(4)]
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    obj = bpy.data.objects.new(name, me)
    bpy.context.collection.objects.link(obj)
    return obj


def heights(obj):
    b = obj.data.bones
    sole = min(min(b[n].head_local.z, b[n].tail_local.z) for n in ("foot.L", "foot.R", "toe.L", "toe.R"))

    def mean(n):
        return 0.5 * (b[f"{n}.L"].head_local.z + b[f"{n}.R"].head_local.z)

    return sole, {"ankle": mean("foot") - sole, "knee": mean("shin") - sole, "waist": b["hips"].tail_local.z - sole}


def poses(obj, frames):
    out = []
    scene = bpy.context.scene
    for f in frames:
        scene.frame_set(f)
        mw = np.array(obj.matrix_world)
        out.append({pb.name: mw @ np.array(pb.matrix) for pb in obj.pose.bones})
    return out


class Surface:
    def __init__(self, obj):
        self.tree = BVHTree.FromPolygons(
            [v.co.copy() for v in obj.data.vertices], [p.vertices for p in obj.data.polygons]
        )

    def height(self, p):
        hit = self.tree.ray_cast(Vector((p[0], p[1], 100.0)), Vector((0.0, 0.0, -1.0)))
        return hit[0].z if hit[0] is not None else -math.inf


def collision_frames(obj, frames_poses, surface, tol=0.002):
    lengths = {b.name: b.length for b in obj.data.bones}
    count = 0
    t = np.linspace(0.0, 1.0, 11)[:, None]
    for pose in frames_poses:
        hit = False
        for name in LIMBS:
            m = pose[name]
            offs = [np.zeros(3)]
            if name.split(".")[0] in THICK:
                offs += [s * 0.02 * m[:3, a] for a in (0, 2) for s in (-1, 1)]
            for o in offs:
                for p in m[:3, 3] + o + t * lengths[name] * m[:3, 1]:
                    if surface.height(p) - p[2] > tol:
                        hit = True
                        break
                if hit:
                    break
            if hit:
                break
        count += hit
    return count


def length_error_pct(obj, frames_poses):
    worst = 0.0
    for pose in frames_poses:
        for b in obj.data.bones:
            m = pose[b.name]
            worst = max(worst, abs(np.linalg.norm(m[:3, 1]) - 1.0))
            if b.parent is not None and b.parent.name != "root" and b.name != "hips":
                rest = (b.head_local - b.parent.head_local).length
                if rest > 1e-6:
                    worst = max(worst, abs(np.linalg.norm(m[:3, 3] - pose[b.parent.name][:3, 3]) - rest) / rest)
    return 100.0 * worst


def sole_gap(obj, pose, side, surface=None, ground=0.0):
    gaps = []
    for name in (f"foot.{side}", f"toe.{side}"):
        m = pose[name]
        p = m[:3, 3] + m[:3, 1] * obj.data.bones[name].length
        gaps.append(p[2] - (surface.height(p) if surface else ground))
    return min(gaps)


def run_case(kind, level):
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    bpy.ops.procanim.add_human(name="Human")
    human = bpy.data.objects["Human"]
    bpy.ops.procanim.source_motion(armature="Human", kind=kind.upper(), key_tolerance=0.0)
    source = human.animation_data.action
    lo, hi = source.frame_range
    frames = list(range(int(lo), int(hi) + 1))
    sole, h = heights(human)
    terrain = add_zigzag("Zigzag", h[level])
    surface = Surface(terrain)
    before = poses(human, frames)
    src_collisions = collision_frames(human, before, surface)
    t0 = time.perf_counter()
    result = bpy.ops.procanim.adapt_terrain(armature="Human", terrain="Zigzag", key_tolerance=0.0,
                                                refuse_infeasible=False)
    wall = time.perf_counter() - t0
    assert result == {"FINISHED"}, result
    metrics = json.loads(human.animation_data.action.procanim.metrics_json)
    after = poses(human, frames)
    contact_err = 0.0
    for b, a in zip(before, after):
        for side in "LR":
            g0 = sole_gap(human, b, side, ground=sole)
            if g0 < 0.005:
                contact_err = max(contact_err, abs(sole_gap(human, a, side, surface) - g0))
    human.animation_data.action = source
    return {
        "refused": refused_by_default(),
        "frames": len(frames),
        "height_m": h[level],
        "src_collisions": src_collisions,
        "collisions": collision_frames(human, after, surface),
        "obb_collisions": metrics["collisions"],
        "length_err_pct": length_error_pct(human, after),
        "contact_err_cm": 100 * contact_err,
        "fps": len(frames) / wall,
        "desc_fps": len(frames) / max(metrics.get("descriptor_solve_time_s", float("nan")), 1e-9),
    }


def refused_by_default() -> str:
    """What the operator answers with its default settings (refuse_infeasible on): "" when it adapts
    the active action, else the first sentence of its refusal."""
    try:
        result = bpy.ops.procanim.adapt_terrain(armature="Human", terrain="Zigzag", key_tolerance=0.0)
    except RuntimeError as err:  # the operator's error report, raised by bpy.ops from a script
        return str(err).strip().removeprefix("Error:").strip().split(";")[0]
    return "" if result == {"FINISHED"} else str(result)


def nla_bake_cpu(obj, frame_start, frame_end) -> float:
    """CPU seconds of Blender's Bake Action (visual keying, pose) of ``obj`` over the frames."""
    for o in bpy.context.view_layer.objects:
        o.select_set(o == obj)
    bpy.context.view_layer.objects.active = obj
    t0 = time.process_time()
    bpy.ops.nla.bake(frame_start=frame_start, frame_end=frame_end, only_selected=False, visual_keying=True,
                     use_current_action=False, bake_types={"POSE"})
    return time.process_time() - t0


def speed_case(steps, level, reps=3):
    """(frames, best operator CPU s, best nla.bake CPU s, the engine's share of that run) for a walk of
    ``steps`` steps over the zigzag at ``level`` (best of ``reps``, alternating)."""
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    bpy.ops.procanim.add_human(name="Human")
    human = bpy.data.objects["Human"]
    bpy.ops.procanim.source_motion(armature="Human", kind="WALK", steps=steps, key_tolerance=0.0)
    source = human.animation_data.action
    lo, hi = (int(round(v)) for v in source.frame_range)
    _, h = heights(human)
    add_zigzag("Zigzag", h[level], cell=0.8 * max(1, steps // 6))
    ours, peer, engine = [], [], []
    for _ in range(reps):
        human.animation_data.action = source
        t0, w0 = time.process_time(), time.perf_counter()
        result = bpy.ops.procanim.adapt_terrain(armature="Human", terrain="Zigzag", key_tolerance=0.0,
                                                refuse_infeasible=False)
        ours.append(time.process_time() - t0)
        assert result == {"FINISHED"}, result
        solve_s = json.loads(human.animation_data.action.procanim.metrics_json).get("solve_time_s", math.nan)
        engine.append(solve_s / (time.perf_counter() - w0))  # wall-time share of the engine
        human.animation_data.action = source
        peer.append(nla_bake_cpu(human, lo, hi))
    k = int(np.argmin(ours))
    return hi - lo + 1, ours[k], min(peer), engine[k]


def speed_table() -> None:
    print("Terrain adaptation of a walk over blocks, operator end to end (read, adapt, bake), CPU time of all threads;")
    print("peer: Blender's Bake Action (nla.bake, visual keying) of the same armature over the same frames")
    head = (f"{'walk':<9} {'blocks':<6} {'frames':>6} {'ProcAnim s':>10} {'frames/s':>9} {'x real time':>11} "
            f"{'nla.bake s':>10} {'frames/s':>9} {'ProcAnim / nla.bake':>20} {'engine share':>12}")
    print(head)
    for steps in (6, 20):
        for level in ("ankle", "knee"):
            n, t, tp, te = speed_case(steps, level)
            print(f"{steps:>2} steps  {level:<6} {n:>6} {t:>10.3f} {n / t:>9.0f} {n / t / 24:>11.1f} {tp:>10.3f} "
                  f"{n / tp:>9.0f} {t / tp:>19.2f}x {te:>12.0%}", flush=True)
            emit("terrain_speed", f"{steps} steps, {level}-high", steps=steps, level=level, frames=n, procanim_cpu_s=t,
                 fps=n / t, real_time=n / t / 24, peer_cpu_s=tp, peer_fps=n / tp, ratio=t / tp, engine_share=te)


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(10, 3.2), sharey=True)
    levels = ["ankle", "knee", "waist"]
    for ax, kind in zip(axes, ("walk", "jump", "tumble")):
        x = np.arange(3)
        ax.bar(x - 0.27, [rows[kind, lv]["src_collisions"] for lv in levels], 0.27, label="source on flat ground")
        ax.bar(x, [PAPER[kind, lv][0] for lv in levels], 0.27, label="paper (Table 2)")
        ax.bar(x + 0.27, [rows[kind, lv]["collisions"] for lv in levels], 0.27, label="ProcAnim adapted")
        ax.set_xticks(x, ["Low (ankle)", "Medium (knee)", "High (waist)"], fontsize=8)
        ax.set_title(kind)
    axes[0].set_ylabel("frames with a collision")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"saved {path}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--plot", default="", help="write a PNG of collisions per height here")
    ap.add_argument("--speed", action="store_true", help="only the speed table: walks over blocks vs nla.bake")
    args = ap.parse_args(argv)
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    install_extension("bench")
    if args.speed:
        print(f"Blender {bpy.app.version_string}")
        speed_table()
        return 0
    print(f"Blender {bpy.app.version_string} — terrain adaptation on the zigzag (evaluated pose)")
    head = (
        f"{'motion':<7} {'level':<6} {'height m':>8} {'frames':>6} {'src coll':>8} {'coll':>5} {'OBB':>4} "
        f"{'paper':>5} {'len err %':>10} {'paper %':>7} {'contact cm':>10} {'fps':>6} {'desc fps':>8}"
    )
    print(head)
    rows = {}
    for kind in ("walk", "jump", "tumble"):
        for level in ("ankle", "knee", "waist"):
            r = run_case(kind, level)
            rows[kind, level] = r
            pc, pe = PAPER[kind, level]
            print(
                f"{kind:<7} {level:<6} {r['height_m']:>8.3f} {r['frames']:>6} {r['src_collisions']:>8} "
                f"{r['collisions']:>5} {r['obb_collisions']:>4} {pc:>5} {r['length_err_pct']:>10.5f} {pe:>7.1f} "
                f"{r['contact_err_cm']:>10.3f} {r['fps']:>6.1f} {r['desc_fps']:>8.1f}",
                flush=True,
            )
            if r["refused"]:
                print(f"        refused by default: {r['refused']}")
            emit("terrain_table2", f"{kind}, {level}", kind=kind, level=level, paper_collisions=pc,
                 paper_length_err_pct=pe, **r)
    if args.plot:
        plot(rows, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
