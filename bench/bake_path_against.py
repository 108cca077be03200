"""The bake path end to end in Blender, this tree against other revisions, in one run, alternating.

    <venv-bpy-5.0.1>/bin/python bench/bake_path_against.py --against REV [REV ...] [--rounds 3]

Each tree — this one, and each ``REV`` (``git archive`` into a temporary folder) — is built and
installed into a Blender process of its own (the ``bpy`` wheel), as Install from Disk does, and the
processes alternate: round ``r`` starts with the ``r``-th tree. In each process the same scenes are
made with the same operators and each generator operator runs end to end, as a script or the
batch command runs it (read the scene, generate, write the keys), best of 3 calls:

* ``duck walk``        — ProcAnim's duck, 1,000 frames (``procanim.duck_walk``);
* ``path walk``        — ProcAnim's human along a ~1,000-frame S-curve, keys on its bones;
* ``onto controls``    — the same walk on a generated Rigify human, keys on its IK controls (the
                         conversion and Blender's check of 10 frames; the IK-stretch probe, which
                         runs once per rig and settings, is in the first call only);
* ``handshake``        — two humans 1 m apart, default settings (both characters baked);
* ``terrain``          — a 20-step source walk adapted to the knee-high zigzag
                         (``procanim.adapt_terrain``, the source action put back before each call);
* ``bake 1k``, ``bake 10k`` — the bake alone (``operators/bake.py:bake_clip``): a duck walk's Clip
                         of 1,000 and 10,000 frames with a key on every frame (made once by the
                         tree's own engine), written onto the duck's bones (as ``bench/bake_speed.py``).

CPU time of the whole process (every thread: OpenBLAS's idle threads spinning included) and wall
time per call; ``generate`` is the operator's own ``generate_ms`` (wall: the scene read and the
engine call), the rest of the wall time is the bake. Each tree's extension sets what its own
``register()`` sets (the BLAS thread limit where it has one).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATORS = ("duck_walk", "path_walk", "handshake", "adapt_terrain", "source_motion")  # measured here
CASES = ("duck walk", "path walk", "onto controls", "handshake", "terrain", "bake 1k", "bake 10k")
FRAMES = 1000


def child(tree: Path) -> dict:
    """Inside one Blender process: install ``tree``'s extension, make the scenes, time each case."""
    import math
    import time

    import bpy

    sys.path.insert(0, str(tree / "tools"))
    from blender_install import install_extension  # the tree's own: it builds that tree's zip

    sys.path.insert(0, str(ROOT / "bench"))
    from control_rig_bake import STEP_M, rigify_human
    from path_walk_blender import add_curve, s_curve

    module = install_extension("ab")
    out: dict = {}

    def timed(case: str, obj_name: str, call, before=lambda: None, calls: int = 3, frames: int = 0) -> None:
        best = [math.inf, math.inf, math.inf]  # CPU s, wall s, generate s
        first_cpu = math.nan
        for k in range(calls):
            before()
            c0, w0 = time.process_time(), time.perf_counter()
            assert call() == {"FINISHED"}, case
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            metrics = json.loads(bpy.data.objects[obj_name].animation_data.action.procanim.metrics_json or "{}")
            first_cpu = cpu if k == 0 else first_cpu
            if cpu < best[0]:
                best = [cpu, wall, metrics.get("generate_ms", math.nan) / 1000.0]
        if not frames and "frame_end" in metrics:
            frames = int(metrics["frame_end"] - metrics["frame_start"] + 1)
        out[case] = {"cpu_s": best[0], "wall_s": best[1], "generate_s": best[2], "first_cpu_s": first_cpu,
                     "frames": frames}

    def fresh() -> None:
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)

    fresh()
    bpy.ops.procanim.add_duck(name="Duck")
    timed("duck walk", "Duck", lambda: bpy.ops.procanim.duck_walk(armature="Duck", frame_end=FRAMES))

    fresh()
    bpy.ops.procanim.add_human(name="Human")
    add_curve("Path", s_curve(FRAMES * STEP_M))
    bpy.context.view_layer.update()
    timed("path walk", "Human", lambda: bpy.ops.procanim.path_walk(armature="Human", path="Path"))

    fresh()
    rig = rigify_human()
    add_curve("Path", s_curve(FRAMES * STEP_M))
    bpy.context.view_layer.update()
    timed("onto controls", rig.name,
          lambda: bpy.ops.procanim.path_walk(armature=rig.name, path="Path", key_target="IK_CONTROLS"))

    fresh()
    bpy.ops.procanim.add_human(name="Host")
    bpy.ops.procanim.add_human(name="Guest")
    guest = bpy.data.objects["Guest"]
    guest.location = (0.0, -1.0, 0.0)
    guest.rotation_euler = (0.0, 0.0, math.pi)  # facing the host
    bpy.context.view_layer.update()
    timed("handshake", "Host", lambda: bpy.ops.procanim.handshake(initiator="Host", partner="Guest"))

    fresh()
    bpy.ops.procanim.add_human(name="Walker")
    walker = bpy.data.objects["Walker"]
    assert bpy.ops.procanim.source_motion(armature="Walker", kind="WALK", steps=20) == {"FINISHED"}
    source = walker.animation_data.action
    assert bpy.ops.procanim.add_zigzag(armature="Walker", level="KNEE") == {"FINISHED"}
    zigzag = next(o for o in bpy.data.objects if o.type == "MESH" and o.name.startswith("Zigzag"))

    def source_back() -> None:
        walker.animation_data.action = source

    timed("terrain", "Walker", lambda: bpy.ops.procanim.adapt_terrain(armature="Walker", terrain=zigzag.name,
                                                                     refuse_infeasible=False), before=source_back)
    import importlib

    duck = importlib.import_module(module + ".procanim_addon.duck")
    bridge = importlib.import_module(module + ".operators.bridge")
    bake = importlib.import_module(module + ".operators.bake")
    for n, case in ((1_000, "bake 1k"), (10_000, "bake 10k")):
        fresh()
        bpy.ops.procanim.add_duck(name="Duck")
        obj = bpy.data.objects["Duck"]
        sk, rm = bridge.read_skeleton(obj), bridge.read_rigmap(obj)
        clip = duck.generate_duck_walk(sk, rm, duck.DuckParams(frame_end=n - 1, key_interval=1))
        timed(case, "Duck", lambda obj=obj, clip=clip: bake.bake_clip(obj, clip) and {"FINISHED"}, frames=n)
    out["blender"] = bpy.app.version_string
    return out


def against(revs: list[str], rounds: int) -> int:
    trees = [("this tree", ROOT)]
    for rev in revs:
        folder = Path(tempfile.mkdtemp(prefix=f"bake-path-{rev}-"))
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        trees.append((rev, folder))
    best: dict = {}
    runs: list[dict] = []
    for r in range(rounds):
        order = trees[r % len(trees):] + trees[: r % len(trees)]
        for label, tree in order:
            load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
            proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(tree)],
                                  capture_output=True, text=True, check=False)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("AB ")), None)
            if proc.returncode != 0 or line is None:
                print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"{label}: the child process failed (exit status {proc.returncode})")
            got = json.loads(line[3:])
            runs.append({"round": r, "tree": label, "load": load, **got})
            print(f"round {r + 1}/{rounds}, {label}: load {load}; "
                  + ", ".join(f"{c} {1000 * got[c]['cpu_s']:.0f} ms" for c in CASES), flush=True)
            for case in CASES:
                b = best.setdefault((case, label), dict(got[case]))
                if got[case]["cpu_s"] < b["cpu_s"]:
                    best[(case, label)] = dict(got[case])
    labels = [label for label, _tree in trees][1:] + ["this tree"]
    print(f"\nBlender {runs[0]['blender']}; operator end to end, best of 3 calls x {rounds} alternating processes "
          "per tree; CPU = all threads of the process; ms")
    head = f"{'case':14s} {'frames':>6s} " + " ".join(f"{lb + ' CPU':>18s}" for lb in labels)
    head += f" {'ratio':>7s}  " + " ".join(f"{lb + ' wall (generate)':>28s}" for lb in labels)
    print(head)
    print("-" * len(head))
    for case in CASES:
        figures = [best[(case, lb)] for lb in labels]
        cells = " ".join(f"{1000 * f['cpu_s']:18.0f}" for f in figures)
        walls = " ".join(f"{1000 * f['wall_s']:20.0f} ({1000 * f['generate_s']:5.0f})" for f in figures)
        ratio = figures[0]["cpu_s"] / figures[-1]["cpu_s"]
        print(f"{case:14s} {figures[-1]['frames']:6d} {cells} {ratio:6.2f}x  {walls}")
    print(f"ratio: {labels[0]} CPU / this tree's CPU (above 1: this tree is faster)")
    print("RUNS " + json.dumps(runs))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", nargs="+", metavar="REV", help="git revisions to compare this tree with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        print("AB " + json.dumps(child(args.child)), flush=True)
        sys.stdout.flush()
        import os

        os._exit(0)  # some bpy wheels hang or crash in their own shutdown; everything is printed
    if not args.against:
        ap.error("give --against REV")
    return against(args.against, args.rounds)


if __name__ == "__main__":
    raise SystemExit(main())
