"""Jo & Choi's Table 2 with ProcAnim's engine: walk, jump, tumble × zigzag raised to ankle, knee, waist.

    python bench/terrain_engine.py            # the table (and a robustness sweep over zigzag offsets)
    python bench/terrain_engine.py --quick    # the table only
    python bench/terrain_engine.py --progress # how often a long adaptation reports progress (Esc)
    python bench/terrain_engine.py --against REV   # this tree's engine against git revision REV

``--against`` adapts walks of 6 and 20 steps over ankle- and knee-high blocks (the speed rows of
bench/terrain_blender.py, engine alone) with this tree and with ``REV`` (``git archive`` into a
temporary folder), alternating in separate processes, CPU time best of 3 rounds.

For each motion and height: "src", the collisions of the source motion with its own flat ground (a
roll presses its back, arms and legs on the floor), then the adapted motion's collisions (frames
where a limb's box intersects the terrain: legs, and arms, which the paper counts for tumbling),
bone-length error (max %), contact error (feet and hands that touched the reference, cm), and solve
speed (frames per second of the whole adaptation, and "fps1-4" of its descriptor part alone:
sampling, Eq. 1-4 and the multi-resolution solve, without the final contact and collision fix).
"refused" says what the engine answers by default when the terrain exceeds what the motion can step
(AdaptParams.refuse_infeasible); the figures on that row are from adapting anyway. The zigzag is
four 0.8 m cells across the direction of travel, 1st and 3rd raised, starting 0.3 m ahead of the
character. The sweep moves the zigzag's start to other offsets, because where a footprint lands
relative to an edge decides how hard a step is.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

GENERATORS = ("adapt_terrain", "source_motion")  # the generators this bench measures
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from procanim_addon import motions  # noqa: E402
from procanim_addon.errors import InputError  # noqa: E402
from procanim_addon.rigs import human_skeleton  # noqa: E402
from procanim_addon.terrain.adapt import AdaptParams, adapt_to_terrain  # noqa: E402
from procanim_addon.terrain.shapes import LEVELS, body_heights, zigzag  # noqa: E402

PAPER = {  # Table 2 of the paper: (collisions, error %) for High (waist), Medium (knee), Low (ankle)
    ("walk", "waist"): (5, 4.6), ("walk", "knee"): (2, 3.9), ("walk", "ankle"): (0, 2.3),
    ("jump", "waist"): (3, 3.2), ("jump", "knee"): (2, 2.9), ("jump", "ankle"): (0, 2.6),
    ("tumble", "waist"): (7, 5.3), ("tumble", "knee"): (3, 3.2), ("tumble", "ankle"): (2, 1.7),
}
SOLE_Z = 0.03  # the demo human's rest sole height


def run(sk, rm, clip, height, start):
    terrain = zigzag(height, start_xy=(0.0, -start), direction_xy=(0.0, -1.0), cell_length=0.8, ground_z=SOLE_Z)
    try:
        adapt_to_terrain(sk, rm, clip, None, terrain)
        refused = ""
    except InputError as err:
        refused = str(err).split(";")[0]
    t0 = time.perf_counter()
    out = adapt_to_terrain(sk, rm, clip, None, terrain, AdaptParams(refuse_infeasible=False))
    wall = time.perf_counter() - t0
    out.metrics["fps_descriptors"] = clip.frame_count / max(out.metrics["descriptor_solve_time_s"], 1e-9)
    return out.metrics, clip.frame_count / wall, refused


def progress_gaps(sk, rm, steps: int = 30) -> None:
    """A walk of ``steps`` steps (several hundred frames) over knee-high blocks: progress reports,
    the longest time between two (a cancel waits at most that long), monotonicity."""
    import numpy as np

    clip = motions.walk(sk, rm, motions.WalkParams(steps=steps))
    terrain = zigzag(body_heights(sk, rm)["knee"], start_xy=(0.0, -0.3), direction_xy=(0.0, -1.0), cell_length=0.8,
                     cells=4 * max(1, steps // 6), ground_z=SOLE_Z)
    times, fractions = [], []

    def report(f):
        times.append(time.perf_counter())
        fractions.append(f)

    t0 = time.perf_counter()
    adapt_to_terrain(sk, rm, clip, None, terrain, AdaptParams(refuse_infeasible=False), progress=report)
    t1 = time.perf_counter()
    gaps = np.diff([t0, *times, t1])
    print(f"progress: {clip.frame_count} frames in {t1 - t0:.2f} s, {len(times)} reports, longest gap "
          f"{gaps.max() * 1000:.0f} ms, never decreasing: {bool(np.all(np.diff(fractions) >= 0))}, "
          f"last {fractions[-1]:g}")


AB_CODE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from procanim_addon import motions
from procanim_addon.rigs import human_skeleton
from procanim_addon.terrain.adapt import AdaptParams, adapt_to_terrain
from procanim_addon.terrain.shapes import body_heights, zigzag
sk, rm = human_skeleton()
out = {}
for steps in (6, 20):
    clip = motions.walk(sk, rm, motions.WalkParams(steps=steps))
    for level in ("ankle", "knee"):
        terrain = zigzag(body_heights(sk, rm)[level], start_xy=(0.0, -0.3), direction_xy=(0.0, -1.0),
                         cell_length=0.8 * max(1, steps // 6), ground_z=0.03)
        t0 = time.process_time()
        adapt_to_terrain(sk, rm, clip, None, terrain, AdaptParams(refuse_infeasible=False))
        out[f"{steps} steps, {level}"] = [time.process_time() - t0, clip.frame_count]
print(json.dumps(out))
"""


def against(rev: str) -> int:
    """This tree's engine against ``rev``'s, alternating in one run."""
    import json
    import os
    import subprocess
    import tempfile

    root = Path(__file__).resolve().parents[1]
    old = tempfile.mkdtemp(prefix="terrain-ab-")
    archive = subprocess.run(["git", "-C", str(root), "archive", rev, "procanim_addon"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", old], input=archive, check=True)
    best: dict = {}
    for _ in range(3):
        for label, tree in ((rev, old), ("this tree", str(root))):
            run = subprocess.run([sys.executable, "-c", AB_CODE, tree], check=True, capture_output=True, text=True,
                                 env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
            for case, (cpu, frames) in json.loads(run.stdout).items():
                best[(case, label)] = (min(best.get((case, label), (float("inf"),))[0], cpu), frames)
    print(f"adapt_to_terrain, walks over the zigzag, CPU s (best of 3 rounds), {rev} against this tree")
    for case in ("6 steps, ankle", "6 steps, knee", "20 steps, ankle", "20 steps, knee"):
        (a, n), (b, _) = best[(case, rev)], best[(case, "this tree")]
        print(f"  {case:16s} {n:4d} frames: {a:.3f} s -> {b:.3f} s ({a / b:.1f}x; "
              f"{n / a:4.0f} -> {n / b:4.0f} frames/s)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the table only, no offset sweep")
    ap.add_argument("--progress", action="store_true", help="only the progress-report check on a long walk")
    ap.add_argument("--against", metavar="REV", help="time this tree's engine against git revision REV")
    args = ap.parse_args()
    if args.against:
        return against(args.against)
    sk, rm = human_skeleton()
    if args.progress:
        progress_gaps(sk, rm)
        return 0
    heights = body_heights(sk, rm)
    clips = {"walk": motions.walk(sk, rm), "jump": motions.jump(sk, rm), "tumble": motions.tumble(sk, rm)}
    print("ProcAnim human 1.75 m; zigzag heights (m): " + ", ".join(f"{k} {v:.2f}" for k, v in heights.items()))
    head = (f"{'motion':7s} {'height':6s} {'frames':>6s} {'src':>4s} {'coll':>5s} {'legs':>5s} {'arms':>5s} "
            f"{'len err %':>10s} {'contact cm':>10s} {'fps':>6s} {'fps1-4':>6s} {'paper coll/err%':>16s}"
            "  refused by default")
    print(head)
    print("-" * len(head))
    for name, clip in clips.items():
        for level in reversed(LEVELS):
            m, fps, refused = run(sk, rm, clip, heights[level], 0.3)
            pc, pe = PAPER[(name, level)]
            print(f"{name:7s} {level:6s} {clip.frame_count:6d} {m['source_collisions']:4d} {m['collisions']:5d} "
                  f"{m['collisions_legs']:5d} "
                  f"{m['collisions_arms']:5d} {m['bone_length_error_pct']:10.2e} {m['contact_error_cm_max']:10.2f} "
                  f"{fps:6.0f} {m['fps_descriptors']:6.0f} {pc:>9d} / {pe:.1f}  {refused or '-'}")
    if args.quick:
        return 0
    offsets = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    print(f"\nsweep: zigzag start at {offsets} m ahead; collision frames per offset (contact error max cm)")
    for name, clip in clips.items():
        for level in ("ankle", "knee"):
            cells = []
            for off in offsets:
                m, _, _ = run(sk, rm, clip, heights[level], off)
                cells.append(f"{m['collisions']:2d} ({m['contact_error_cm_max']:.1f})")
            print(f"{name:7s} {level:6s} " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
