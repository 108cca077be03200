"""Where the key planner's time goes on a bake onto a generated Rigify human's controls — one command:

    <venv-bpy-5.0.1>/bin/python bench/control_rig_plan.py [--frames 1000] [--key-target IK_CONTROLS]

The walk of ``bench/control_rig_bake.py`` is baked onto the rig at the default key tolerance (1 mm),
and the planner's inputs (the conversion's control keys, the marks) are kept. Then, on those inputs,
in the same process (wall seconds, best of ``--repeats``):

* the planner (``plan_control_keys``) as the bake runs it;
* one evaluation of the rig over the clip by its forward model, with the *followers* (bones that
  move rigidly with a measured bone above them, carried by its matrices) and without
  (``ControlForward(followers=False)``: every measured bone evaluated through the rig);
* the leads docs/keys.md (Limits) weighs for issue 23's speed: the planner measured on the bones
  that follow no other only, and on those plus the followers extreme in one of 400 directions
  (vertices of each anchor's followers' convex hull) — what measuring only the hulls would save.

The last two change what is measured (a subset of the deform bones): they are figures for a lead,
not a bake — printed only (no ``BENCH`` line: no README table, not in ``tools/bench.sh``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))
import bpy  # noqa: E402
from control_rig_bake import walk_scene  # noqa: E402

GENERATORS = ("path_walk",)  # the generators this bench measures
DIRECTIONS = 400  # directions in which the followers' extreme points are found (the hull lead)


def best(repeats: int, work) -> tuple[float, object]:
    """The shortest wall time (s) of ``repeats`` calls of ``work()``, and its result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - t0)
    return min(times), out


def without(skeleton_type, sk, drop: set[str]):
    """``sk`` without the bones ``drop`` (each kept bone under its nearest kept ancestor)."""
    keep = [i for i, n in enumerate(sk.names) if n not in drop]
    new = {old: i for i, old in enumerate(keep)}

    def parent(i: int) -> int:
        p = int(sk.parents[i])
        while p >= 0 and p not in new:
            p = int(sk.parents[p])
        return new.get(p, -1)

    return skeleton_type([sk.names[i] for i in keep], [parent(i) for i in keep], sk.matrix_local[keep],
                         sk.lengths[keep], [sk.inherit_rotation[i] for i in keep], [sk.inherit_scale[i] for i in keep],
                         [sk.local_location[i] for i in keep], [False] * len(keep))


def hull_followers(model) -> set[int]:
    """The followers (rig indices) with a head or tail extreme, among their anchor's followers, in one
    of :data:`DIRECTIONS` directions (vertices of the convex hull of those points)."""
    rng = np.random.default_rng(0)
    directions = rng.normal(size=(DIRECTIONS, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    by_anchor: dict[int, list] = {}
    for bone, (anchor, local) in model.follow.items():
        by_anchor.setdefault(anchor, []).append((bone, local))
    out: set[int] = set()
    for followers in by_anchor.values():
        points = np.concatenate([local for _, local in followers])
        owners = np.repeat([bone for bone, _ in followers], 2)
        out |= {int(owners[i]) for i in np.unique(np.argmax(points @ directions.T, axis=0))}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=1000)
    ap.add_argument("--key-target", default="IK_CONTROLS", choices=("IK_CONTROLS", "FK_CONTROLS"))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    module, rig, path = walk_scene(args.frames)
    control_rig = importlib.import_module(module + ".operators.control_rig")
    planner = control_rig.planner
    forward = importlib.import_module(module + ".procanim_addon.keys.control_forward")
    skeleton_type = importlib.import_module(module + ".procanim_addon.skeleton").Skeleton
    kept: dict = {}
    plan = planner.plan_control_keys

    def keeping(*a, **k):  # the bake's planner, its inputs kept
        kept["args"], kept["kwargs"] = a, k
        return plan(*a, **k)

    control_rig.planner.plan_control_keys = keeping
    try:
        assert bpy.ops.procanim.path_walk(armature=rig.name, path=path.name, key_target=args.key_target) == {"FINISHED"}
    finally:
        control_rig.planner.plan_control_keys = plan
    a, k = kept["args"], kept["kwargs"]
    rig_model, sk, keys = a[0], a[1], a[2]
    channels, values = forward.control_channels(rig_model, keys)

    def evaluation(followers: bool) -> tuple[float, object]:
        times = []
        for _ in range(args.repeats):
            model = forward.ControlForward(rig_model, sk, channels, keys.pins, reference=values,
                                           stretch=keys.stretch, followers=followers)
            t0 = time.perf_counter()
            model(values)  # the first call: the rig over every frame
            times.append(time.perf_counter() - t0)
        return min(times), model

    plan_s, keyed = best(args.repeats, lambda: plan(*a, **k))
    with_s, model = evaluation(True)
    without_s, _ = evaluation(False)
    names = {rig_model.index(n): n for n in sk.names}
    followers = {names[b] for b in model.follow}
    hull = {names[b] for b in hull_followers(model)}
    core_s, core = best(args.repeats, lambda: plan(rig_model, without(skeleton_type, sk, followers), *a[2:], **k))
    hull_s, hulled = best(args.repeats, lambda: plan(rig_model, without(skeleton_type, sk, followers - hull), *a[2:],
                                                     **k))
    n = len(values)
    print(f"\nBlender {bpy.app.version_string}; Rigify human, {n} frames, {args.key_target}, key tolerance 1 mm; "
          f"{len(sk)} deform bones measured, {len(followers)} of them followers; wall s, best of {args.repeats}")
    rows = [
        ("planner (plan_control_keys), as the bake runs it", plan_s, keyed.keys_written),
        ("one evaluation of the rig over the clip, with followers", with_s, None),
        ("one evaluation of the rig over the clip, every bone through the rig", without_s, None),
        (f"lead: planner on the {len(sk) - len(followers)} bones that follow no other", core_s, core.keys_written),
        (f"lead: ... and the {len(hull)} followers extreme in one of {DIRECTIONS} directions", hull_s,
         hulled.keys_written),
    ]
    for label, seconds, written in rows:
        print(f"{label:72s} {seconds:7.3f}" + (f"  {written:,} keys" if written is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]))
