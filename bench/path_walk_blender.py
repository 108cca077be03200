"""Path walk in Blender, end to end, against what a user would otherwise do — one command, one run:

    <venv-bpy-5.0.1>/bin/python bench/path_walk_blender.py [--frames 985] [--sections speed,follow]

**speed** (issue 12): Rigify's human metarig (159 bones) walks an S-curve sized to ``--frames``
frames (100 steps/min, 24 fps) with ``bpy.ops.procanim.path_walk``, end to end (read, generate,
bake), timed in wall and CPU seconds; the same run times the operator's parts (reading the rig and
the curve, the engine, the baker and within it the edit fingerprint) by calling them one by one.
The peer: the same metarig with IK constraints on its legs and arms (chain 2, targets keyed on every
frame), baked with Bake Action (``bpy.ops.nla.bake``, visual keying, every bone) over the same
frames. Printed as ratios (Bake Action time / ProcAnim time); the goal is ≥ 20×, for the operator
keying every frame as Bake Action does (``key_tolerance=0``); the same walk at the default key
tolerance (1 mm: the fewest keys, planned on the deform bones) is timed beside it, with the planner
among the parts.

**follow** (quality): ProcAnim's human walks a long S-curve (sized to give about ``--frames``
frames at 96 steps/min, 24 fps) three ways, and every result is measured the same way, on the
evaluated pose (frame_set):

1. **ProcAnim** — ``bpy.ops.procanim.path_walk`` (read the scene, generate, bake with foreach_set).
   Also the engine alone (``generate_path_walk``), as frames generated per second.
2. **Follow Path + cycle, baked** — the usual manual set-up: an in-place walk cycle (two steps cut
   from ProcAnim's own straight walk, root motion removed, Cycles modifiers) on an armature that a
   Follow Path constraint carries along the same curve at the cycle's speed (offset factor keyed
   0 → 1), then Bake Action (``bpy.ops.nla.bake``, visual keying, constraints cleared).
3. **IK feet, baked** — the same in-place cycle and Follow Path, plus IK constraints on the shins
   aiming at the feet's world positions of the ProcAnim walk (targets keyed on every frame, as a
   user would key foot controls) and baked the same way: the IK set-up's bake cost.

Columns: wall time of the bake step (the user's click), frames per second of it, foot skate of
contact points (mean / p95, cm/s), deepest penetration (cm), pelvis distance to the curve (mean, cm).
Contact: a sole point (under the ankle, the ball, the toe tip; at the rest sole height) within
3 mm of the floor on two consecutive frames.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

import bpy
import numpy as np

GENERATORS = ("path_walk",)  # the generators this bench measures
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from benchlog import emit  # noqa: E402
from blender_install import install_extension  # noqa: E402

FPS = 24
CADENCE = 96.0  # 2 steps = 30 frames at 24 fps: the in-place cycle loops on whole frames
CONTACT_M = 0.003


# ----------------------------------------------------------------------------- scene


def s_curve(length: float, amp: float = 1.5, wavelength: float = 10.0, n_per_m: int = 20) -> np.ndarray:
    n = int(length * n_per_m) + 1
    y = np.linspace(0.0, -length, n)
    return np.stack([amp * np.sin(2 * np.pi * (-y) / wavelength), y, np.zeros(n)], -1)


def add_curve(name: str, points: np.ndarray):
    cu = bpy.data.curves.new(name, "CURVE")
    cu.dimensions = "3D"
    sp = cu.splines.new("POLY")
    sp.points.add(len(points) - 1)
    for p, co in zip(sp.points, points):
        p.co = (*co, 1.0)
    ob = bpy.data.objects.new(name, cu)
    bpy.context.collection.objects.link(ob)
    return ob


def add_human(name: str):
    assert bpy.ops.procanim.add_human(name=name) == {"FINISHED"}
    obj = bpy.data.objects[name]
    for child in obj.children:  # the body mesh only slows frame_set down; it is not measured
        bpy.data.objects.remove(child)
    return obj


def select_only(obj) -> None:
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj


# ----------------------------------------------------------------------------- measure


def measure(obj, frames, curve_pts) -> dict:
    """Skate, penetration and pelvis deviation on the evaluated pose (world space), over ``frames``."""
    bones = obj.data.bones
    rest = {b.name: np.array(b.matrix_local) for b in bones}
    sole_z = 0.0  # ProcAnim's human stands on z = 0 (its body mesh's soles)
    carried = []
    for s in "LR":
        ankle, ball = rest[f"foot.{s}"][:3, 3], rest[f"toe.{s}"][:3, 3]
        tip = np.array(bones[f"toe.{s}"].tail_local)
        for bone, p in ((f"foot.{s}", ankle), (f"toe.{s}", ball), (f"toe.{s}", tip)):
            carried.append((bone, np.linalg.inv(rest[bone]) @ np.array([p[0], p[1], sole_z, 1.0])))
    pts = np.empty((len(frames), len(carried), 3))
    hips = np.empty((len(frames), 3))
    scene = bpy.context.scene
    for i, f in enumerate(frames):
        scene.frame_set(int(f))
        mw = np.array(obj.matrix_world)
        for j, (bone, local) in enumerate(carried):
            pts[i, j] = (mw @ np.array(obj.pose.bones[bone].matrix) @ local)[:3]
        hips[i] = (mw @ np.array(obj.pose.bones["hips"].matrix))[:3, 3]
    on = pts[..., 2] < CONTACT_M
    both = on[1:] & on[:-1]
    v = np.linalg.norm(np.diff(pts[..., :2], axis=0), axis=-1)[both] * FPS * 100
    a, b = curve_pts[:-1, :2], curve_pts[1:, :2]
    ab = b - a
    dev = []
    for h in hips[:, :2]:
        t = np.clip(np.einsum("ki,ki->k", h - a, ab) / np.einsum("ki,ki->k", ab, ab), 0, 1)
        dev.append(np.min(np.linalg.norm(h - (a + t[:, None] * ab), axis=-1)))
    return {
        "skate_mean": float(v.mean()) if v.size else float("nan"),
        "skate_p95": float(np.percentile(v, 95)) if v.size else float("nan"),
        "contact_samples": int(v.size),
        "penetration": float(max(0.0, -pts[..., 2].min()) * 100),
        "deviation": float(np.mean(dev) * 100),
    }


# ----------------------------------------------------------------------------- the user's way


def in_place_cycle(walker, period: int, target, name: str = "Cycle"):
    """Two steps of ``walker``'s baked straight walk as a looping in-place action (root drift
    removed), made the active action of ``target``."""
    src = walker.animation_data.action
    compat = importlib.import_module(MODULE + ".operators.compat")
    curves = compat.action_fcurves(src, walker)
    lo, hi = src.frame_range
    a = int(round((lo + hi) / 2))
    frames = np.arange(a, a + period + 1)
    cycle = bpy.data.actions.new(name)
    fcurves, _groups = compat.assign_action(target, cycle)
    for fc in curves:
        if not fc.data_path.startswith("pose.bones"):
            continue
        values = np.array([fc.evaluate(float(f)) for f in frames])
        if fc.data_path == 'pose.bones["root"].location':  # in place: the root stays home
            values -= values[0] + (values[-1] - values[0]) * np.linspace(0.0, 1.0, len(values))
        new = fcurves.new(fc.data_path, index=fc.array_index)
        new.keyframe_points.add(len(frames))
        co = np.empty(2 * len(frames), dtype=np.float32)
        co[0::2] = np.arange(len(frames)) + 1
        co[1::2] = values
        new.keyframe_points.foreach_set("co", co)
        new.modifiers.new("CYCLES")
        new.update()
    return cycle


def follow_path_rig(name, walker, period, curve, length_m, speed_mps):
    obj = add_human(name)
    in_place_cycle(walker, period, obj, name=f"{name}.cycle")
    compat = importlib.import_module(MODULE + ".operators.compat")
    con = obj.constraints.new("FOLLOW_PATH")
    con.target = curve
    con.use_curve_follow = True
    con.use_fixed_location = True
    con.forward_axis = "TRACK_NEGATIVE_Y"  # the human faces −Y
    con.up_axis = "UP_Z"
    curve.data.use_path = True  # (re)setting it makes the depsgraph build the path the constraint reads
    stand = 0.4 * FPS  # ProcAnim's default standing time before the first step
    walk_frames = length_m / speed_mps * FPS
    con.offset_factor = 0.0
    con.keyframe_insert("offset_factor", frame=1 + stand)
    con.offset_factor = 1.0
    con.keyframe_insert("offset_factor", frame=1 + stand + walk_frames)
    for fc in compat.action_fcurves(obj.animation_data.action, obj):
        if fc.data_path.startswith("constraints"):
            for kp in fc.keyframe_points:
                kp.interpolation = "LINEAR"
    obj["walk_frames"] = (1 + stand, 1 + stand + walk_frames)
    return obj


def add_ik_feet(obj, walker, frames):
    """IK on the shins toward empties keyed on every frame at ``walker``'s (evaluated) ankles."""
    scene = bpy.context.scene
    empties = {}
    for s in "LR":
        e = bpy.data.objects.new(f"ik_target.{s}", None)
        bpy.context.collection.objects.link(e)
        empties[s] = e
    for f in frames:  # what keying foot controls amounts to: one target position per frame
        scene.frame_set(int(f))
        mw = np.array(walker.matrix_world)
        for s in "LR":
            e = empties[s]
            e.location = (mw @ np.array(walker.pose.bones[f"foot.{s}"].matrix))[:3, 3]
            e.keyframe_insert("location", frame=int(f))
    for s in "LR":
        ik = obj.pose.bones[f"shin.{s}"].constraints.new("IK")
        ik.target = empties[s]
        ik.chain_count = 2
        obj.pose.bones[f"foot.{s}"].constraints.new("COPY_ROTATION").target = walker
        obj.pose.bones[f"foot.{s}"].constraints[-1].subtarget = f"foot.{s}"
    return empties


def cycle_speed(walker, period: int) -> float:
    """Walking speed (m/s) of the steady cycle: the hips' travel over one period mid-walk."""
    src = walker.animation_data.action
    lo, hi = src.frame_range
    a = int(round((lo + hi) / 2))
    scene = bpy.context.scene
    pos = []
    for f in (a, a + period):
        scene.frame_set(f)
        pos.append(np.array(walker.matrix_world @ walker.pose.bones["hips"].head))
    return float(np.linalg.norm(pos[1][:2] - pos[0][:2]) / period * FPS)


def nla_bake(obj, n_frames) -> float:
    select_only(obj)
    t0 = time.perf_counter()
    bpy.ops.nla.bake(
        frame_start=1,
        frame_end=n_frames,
        only_selected=False,
        visual_keying=True,
        clear_constraints=True,
        use_current_action=False,
        bake_types={"POSE", "OBJECT"},
    )
    return time.perf_counter() - t0


# ----------------------------------------------------------------------------- main

MODULE = ""


# ----------------------------------------------------------------------------- speed (issue 12)


def metarig(name: str):
    """Rigify's human metarig (159 bones), in object mode."""
    import addon_utils

    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    rig = bpy.context.object
    rig.name = name
    bpy.ops.object.mode_set(mode="OBJECT")
    return rig


class Clock:
    """Wall and CPU seconds of a block (CPU: all threads of this process)."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def curve_for_frames(walk, skeleton, rigmap, params, frames: int, ground) -> np.ndarray:
    """An S-curve whose walk lasts about ``frames`` frames (probe walks give the speed)."""
    stand = 2 * params.stand_s * params.fps
    length = 10.0
    for _ in range(3):
        clip = walk.generate_path_walk(skeleton, rigmap, s_curve(length), ground, params)
        length *= (frames - stand) / (clip.frame_count - stand)
    return s_curve(length)


def ik_peer(rig, frames: int) -> None:
    """IK constraints (chain 2) on the metarig's shins and forearms, their targets keyed on every
    frame (a sway the legs and arms follow), as a user's IK set-up to be baked."""
    compat = importlib.import_module(MODULE + ".operators.compat")
    for k_bone, bone in enumerate(("shin.L", "shin.R", "forearm.L", "forearm.R")):
        target = bpy.data.objects.new(f"IK.{bone}", None)
        bpy.context.collection.objects.link(target)
        fcurves, _ = compat.assign_action(target, bpy.data.actions.new(f"IK.{bone}"))
        head = np.array(rig.pose.bones[bone].tail)
        for k in range(3):
            fc = fcurves.new("location", index=k)
            fc.keyframe_points.add(frames)
            co = np.empty(2 * frames, np.float32)
            co[0::2] = np.arange(1, frames + 1)
            co[1::2] = head[k] + 0.15 * np.sin(np.arange(frames) * 2 * np.pi / 30.0 + k_bone + k)
            fc.keyframe_points.foreach_set("co", co)
            fc.update()
        con = rig.pose.bones[bone].constraints.new("IK")
        con.target, con.chain_count = target, 2


def speed_section(args) -> dict:
    """ProcAnim's operator end to end on the metarig against Bake Action of the same rig with IK."""
    walk = importlib.import_module(MODULE + ".procanim_addon.walk")
    bridge = importlib.import_module(MODULE + ".operators.bridge")
    bake = importlib.import_module(MODULE + ".operators.bake")
    fingerprint = importlib.import_module(MODULE + ".operators.fingerprint")
    FlatGround = importlib.import_module(MODULE + ".procanim_addon.ground").FlatGround
    bpy.context.scene.render.fps = FPS
    rig = metarig("Walker")
    skeleton, rigmap = bridge.read_skeleton(rig), bridge.read_rigmap(rig)
    params = walk.PathWalkParams(fps=FPS)
    curve = add_curve("S", curve_for_frames(walk, skeleton, rigmap, params, args.frames, FlatGround(0.0)))
    with Clock() as reduced:  # the default: the fewest keys within 1 mm
        assert bpy.ops.procanim.path_walk(armature=rig.name, path=curve.name) == {"FINISHED"}
    with Clock() as op:  # every frame keyed, as Bake Action does
        assert bpy.ops.procanim.path_walk(armature=rig.name, path=curve.name, key_tolerance=0.0) == {"FINISHED"}
    lo, hi = rig.animation_data.action.frame_range
    frames = int(hi - lo + 1)
    parts = {}
    with Clock() as c:
        skeleton = bridge.read_skeleton(rig)
    parts["read skeleton"] = c
    with Clock() as c:
        rigmap = bridge.read_rigmap(rig)
    parts["read role map"] = c
    with Clock() as c:
        points = bridge.read_curve_polyline(curve, rig)
    parts["read curve"] = c
    with Clock() as c:
        clip = walk.generate_path_walk(skeleton, rigmap, points, FlatGround(0.0), params)
    parts["engine (generate_path_walk)"] = c
    with Clock() as c:
        bake.bake_clip(rig, clip)
    parts["bake (bake_clip)"] = c
    with Clock() as c:
        fingerprint.fingerprint(rig.animation_data.action, rig)
    parts["  of which one edit fingerprint"] = c
    marks = importlib.import_module(MODULE + ".procanim_addon.key_marks")
    tolerance = importlib.import_module(MODULE + ".procanim_addon.bake_settings").DEFAULT_TOLERANCE_M
    with Clock() as c:  # what the default tolerance adds: the contacts found, the keys planned
        found = marks.contact_marks(skeleton, rigmap, clip, FlatGround(0.0))
        bake.plan_bone_keys(rig, clip, tolerance, found)
    parts["plan the keys (at 1 mm only)"] = c
    peer = metarig("Peer")
    ik_peer(peer, frames)
    select_only(peer)
    with Clock() as nla:
        bpy.ops.nla.bake(frame_start=1, frame_end=frames, only_selected=False, visual_keying=True,
                         clear_constraints=True, use_current_action=False, bake_types={"POSE"})
    print(f"\nBlender {bpy.app.version_string}; Rigify human metarig ({len(skeleton)} bones), {frames} frames, "
          f"100 steps/min, {FPS} fps")
    print(f"{'':44s} {'wall s':>8s} {'ms/frame':>9s} {'CPU s':>8s}")
    rows = {"ProcAnim path_walk operator, end to end": op, **{f"  {k}": v for k, v in parts.items()},
            "ProcAnim path_walk, key tolerance 1 mm (default)": reduced,
            "Bake Action (nla.bake, visual keying), IK legs+arms": nla}
    for name, c in rows.items():
        print(f"{name:44s} {c.wall:8.3f} {1000 * c.wall / frames:9.3f} {c.cpu:8.3f}")
    print(f"ratio Bake Action / ProcAnim: {nla.wall / op.wall:.1f}x wall, {nla.cpu / op.cpu:.1f}x CPU (goal >= 20x); "
          f"at 1 mm: {nla.wall / reduced.wall:.1f}x wall")
    emit("path_walk_speed", "metarig", frames=frames, bones=len(skeleton), procanim_wall_s=op.wall,
         procanim_cpu_s=op.cpu, peer_wall_s=nla.wall, peer_cpu_s=nla.cpu, ratio_wall=nla.wall / op.wall,
         ratio_cpu=nla.cpu / op.cpu, parts_wall_s={k.strip(): v.wall for k, v in parts.items()},
         reduced_wall_s=reduced.wall, reduced_cpu_s=reduced.cpu, ratio_reduced_wall=nla.wall / reduced.wall)
    return {"frames": frames, "bones": len(skeleton), "ratio_wall": nla.wall / op.wall, "ratio_cpu": nla.cpu / op.cpu,
            "rows": {k.strip(): {"wall_s": v.wall, "cpu_s": v.cpu} for k, v in rows.items()}}


def follow_section(args) -> dict:
    """ProcAnim's walk against Follow Path + a baked cycle (with and without IK feet): quality and time."""
    walk = importlib.import_module(MODULE + ".procanim_addon.walk")
    bridge = importlib.import_module(MODULE + ".operators.bridge")
    FlatGround = importlib.import_module(MODULE + ".procanim_addon.ground").FlatGround
    scene = bpy.context.scene
    scene.render.fps = FPS

    # size the S-curve for about --frames frames: probe walks give the speed (twice: start and stop cost)
    probe = add_human("Probe")
    sk, rm = bridge.read_skeleton(probe), bridge.read_rigmap(probe)
    params = walk.PathWalkParams(cadence_spm=CADENCE, fps=FPS)
    stand = 2 * params.stand_s * FPS
    length = 10.0
    for _ in range(2):
        clip = walk.generate_path_walk(sk, rm, s_curve(length), FlatGround(0.0), params)
        length *= (args.frames - stand) / (clip.frame_count - stand)
    bpy.data.objects.remove(probe)
    pts = s_curve(length)
    curve = add_curve("S", pts)

    # 1. ProcAnim
    human = add_human("ProcAnim")
    sk, rm = bridge.read_skeleton(human), bridge.read_rigmap(human)
    points = bridge.read_curve_polyline(curve, human, bpy.context.evaluated_depsgraph_get())
    t0 = time.perf_counter()
    clip = walk.generate_path_walk(sk, rm, points, FlatGround(0.0), params)  # what the operator passes
    t_engine = time.perf_counter() - t0
    t0 = time.perf_counter()
    assert bpy.ops.procanim.path_walk(armature=human.name, path=curve.name, cadence=CADENCE) == {"FINISHED"}
    t_op = time.perf_counter() - t0
    metrics = json.loads(human.animation_data.action.procanim.metrics_json)
    n = n_walk = int(metrics["frame_end"] - metrics["frame_start"] + 1)
    frames = np.arange(1, n + 1)
    rows = {}

    # 2. the user's way: straight ProcAnim walk → in-place cycle → Follow Path → Bake Action
    line = add_curve("Line", np.array([[3.0, 0.0, 0.0], [3.0, -12.0, 0.0]]))
    straight = add_human("Straight")
    straight.location.x = 3.0
    assert bpy.ops.procanim.path_walk(armature=straight.name, path=line.name, cadence=CADENCE) == {"FINISHED"}
    period = int(round(2 * 60.0 / CADENCE * FPS))
    speed = cycle_speed(straight, period)
    length_m = float(np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1)))
    fp = follow_path_rig("FollowPath", straight, period, curve, length_m, speed)
    lo, hi = fp["walk_frames"]
    n = max(n, int(np.ceil(hi)) + 1)  # bake every method until the Follow Path rig has arrived
    frames = np.arange(1, n + 1)
    t_fp = nla_bake(fp, n)
    # every method is measured over the frames where the Follow Path rig travels (not the standing ends)
    window = np.arange(int(np.ceil(lo)), int(np.floor(hi)) + 1)
    rows["ProcAnim path_walk (operator)"] = (t_op, n_walk, measure(human, window, pts))
    rows["Follow Path + cycle, nla.bake"] = (t_fp, n, measure(fp, window, pts))

    # 3. the same with IK feet keyed to the ProcAnim footsteps, baked
    ik = follow_path_rig("IKFeet", straight, period, curve, length_m, speed)
    add_ik_feet(ik, human, frames)
    t_ik = nla_bake(ik, n)
    rows["Follow Path + IK feet, nla.bake"] = (t_ik, n, measure(ik, window, pts))

    print(
        f"Blender {bpy.app.version_string}; ProcAnim human along a {length_m:.1f} m S-curve, "
        f"{CADENCE:g} steps/min, {FPS} fps, {n_walk} frames"
    )
    print(
        f"engine alone: generate_path_walk {t_engine:.2f} s = {n_walk / t_engine:.0f} frames/s "
        f"(operator's own generate_ms: {metrics['generate_ms'] / 1000:.2f} s)"
    )
    head = f"{'method':34s} {'bake s':>7s} {'fr/s':>6s} {'skate':>7s} {'p95':>7s} {'pen cm':>7s} {'dev cm':>7s}"
    print(head)
    print("-" * len(head))
    out = {"frames": n_walk, "length_m": length_m, "engine_s": t_engine, "rows": {}}
    for name, (t, count, m) in rows.items():
        print(
            f"{name:34s} {t:7.2f} {count / t:6.0f} {m['skate_mean']:7.2f} {m['skate_p95']:7.2f} "
            f"{m['penetration']:7.2f} {m['deviation']:7.2f}"
        )
        out["rows"][name] = {"seconds": t, "frames": count, **m}
        emit("path_walk_follow", name, seconds=t, frames=count, fps=count / t, length_m=length_m, **m)
    print(
        f"(measured on frames {window[0]}–{window[-1]}, while the Follow Path rig travels; skate: cm/s of sole "
        "points in contact; bake s: the operator end to end for ProcAnim, bpy.ops.nla.bake alone for the others "
        "— their set-up is not timed)"
    )
    return out


def main(argv=None) -> int:
    global MODULE
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=985, help="about how many frames the walks should last")
    ap.add_argument("--sections", default="speed,follow", help="speed (vs Bake Action), follow (vs Follow Path)")
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    MODULE = install_extension("bench")
    out = {}
    for name in args.sections.split(","):
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
        out[name] = {"speed": speed_section, "follow": follow_section}[name](args)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
