"""Crowd engine bench: a plaza crossed by 100 walkers for about 1,000 frames, with avoidance beside
today's crowd (each walker's path walk alone, ``one path walk per walker``), and how the cost grows with the
number of walkers.

    <venv>/bin/python bench/crowd_engine.py                      (no Blender needed)
    <venv>/bin/python bench/crowd_engine.py --sizes 25,50        (the growth table only for these)
    <venv>/bin/python bench/crowd_engine.py --walkers 100 --sizes "" --no-scenes   (the plaza only)

First the acceptance scenes of ``tests/engine/test_crowd.py`` (20 walkers crossing a 6 m circle,
with and without variation; two head-on; two meeting), measured as the tests measure them: the
closest two pelvises on any frame (cm), the largest mean foot skate in contact of a walker (cm/s),
the largest distance of a walker's last pelvis from its curve's end (cm), the crowd's frames over
the slowest walker's alone, and for the meeting the largest distance between the two right hands'
grip points in the shake (cm).

The plaza: ProcAnim's 1.75 m human, walkers starting on a circle of 24 m radius (evenly spaced,
jittered at seeded random), each walking a straight curve to a point of the circle about opposite
(±35°; no two starting or ending within 0.7 m of each other: there they would stand closer than
the radii allow), flat ground,
24 fps, ``variation`` 0.5 (seed 1; start delays up to half a second); about 46 m and 1,000 frames
each. With avoidance: personal radius 0.3 m (``procanim_addon.crowd.generate_crowd``). Today's
crowd: the same walkers' path walks, one after the other, as ``procanim.crowd_walk`` bakes them
(``one path walk per walker``). Times are this process's CPU time (one BLAS thread, as the extension sets) and
wall time; "per 1k" is seconds per 1,000 character-frames (the frames of all walkers' clips).
Printed beside them: the stages of the avoiding crowd (plan, walks, repair rounds), the closest
two pelvises come on any frame (FK), how many walkers gave way and the last frame; in the growth
table, how many pairs of walkers come closer than twice the radius less 5 cm ("too close").

The growth table runs the same plaza (same size, so denser) with 25, 50, 100 and 200 walkers; the
exponent k of time ∝ walkers^k (least squares, log–log) says how the cost grows: the walks grow
with the walkers (k = 1), the plan with their neighbours (a grid, ``crowd.grid``). The figures are
printed only (no ``BENCH`` records): ``tools/bench.sh`` takes this bench in when the crowd's
operator is registered.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from procanim_addon.crowd import CrowdParams, Walker, generate_crowd  # noqa: E402
from procanim_addon.crowd.variation import vary  # noqa: E402
from procanim_addon.ground import FlatGround  # noqa: E402
from procanim_addon.rigs import human_skeleton  # noqa: E402
from procanim_addon.threads import limit_blas_threads  # noqa: E402
from procanim_addon.walk import PathWalkParams  # noqa: E402
from procanim_addon.walk.spec import bake_call as path_walk_call  # noqa: E402

RADIUS_M = 24.0
SPREAD_DEG = 35.0
APART_M = 0.7  # no two walkers start or end closer than this (m)
VARIATION, SEED = 0.5, 1


def plaza(n: int, seed: int = 0) -> list[Walker]:
    """``n`` walkers crossing the plaza (module docstring): starts and ends in ``n`` slots evenly
    spaced round the circle (jittered while they stay :data:`APART_M` apart), each walker's end the
    slot that ranks as its wanted end (opposite its start, ±``SPREAD_DEG``) does among all wanted."""
    rng = np.random.default_rng(seed)
    sk, rm = human_skeleton(1.75)
    gap = 2 * np.pi / n
    jitter = max(0.0, (gap * RADIUS_M - APART_M) / 2) / RADIUS_M
    starts = np.arange(n) * gap + rng.uniform(-jitter, jitter, n)
    wanted = starts + np.pi + np.radians(rng.uniform(-SPREAD_DEG, SPREAD_DEG, n))
    slots = np.arange(n) * gap + rng.uniform(-jitter, jitter, n) + np.pi
    order = np.argsort(wanted, kind="stable")
    ends = np.empty(n)
    ends[order] = np.sort(slots)
    out = []
    for i, (a, b) in enumerate(zip(starts, ends)):
        pts = RADIUS_M * np.array([[np.cos(a), np.sin(a), 0.0], [np.cos(b), np.sin(b), 0.0]])
        out.append(Walker(f"W{i:03d}", sk, rm, pts, FlatGround(0.0), PathWalkParams()))
    return out


def today(walkers: list[Walker]):
    """Today's crowd of the same walkers: each its path walk, with the settings the variation gives it."""
    clips = []
    for i, w in enumerate(walkers):
        params, _ = vary(w.params, VARIATION, SEED, i)
        clips += path_walk_call(w.skeleton, w.rigmap, w.points, w.ground, params, np.eye(4), 1.0)
    return clips


def timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def first_table(n: int) -> None:
    walkers = plaza(n)
    clips, cpu0, wall0 = timed(lambda: today(walkers))
    frames0 = sum(c.frame_count for c in clips)
    result, cpu1, wall1 = timed(lambda: generate_crowd(walkers, CrowdParams(variation=VARIATION, seed=SEED)))
    frames1 = sum(c.frame_count for c in result.clips)
    rep = result.report
    print(f"\n{n} walkers crossing a {2 * RADIUS_M:.0f} m plaza, flat ground, 24 fps, variation {VARIATION}")
    print(f"{'crowd':<34} {'char-frames':>11} {'CPU s':>7} {'per 1k':>7} {'wall s':>7} {'per 1k':>7}")
    for name, frames, cpu, wall in (("today's (one path walk per walker, no avoidance)", frames0, cpu0, wall0),
                                    ("avoiding (crowd.generate_crowd)", frames1, cpu1, wall1)):
        print(f"{name:<34} {frames:>11,} {cpu:>7.1f} {1000 * cpu / frames:>7.3f} {wall:>7.1f} "
              f"{1000 * wall / frames:>7.3f}")
    print(f"stages (CPU s): plan {rep['cpu_plan_s']:.2f}, walks {rep['cpu_walks_s']:.2f}, repair "
          f"{rep['cpu_repair_s']:.2f} ({rep['repair_rounds']} rounds, {rep['replanned']} walkers again), "
          f"prepare {rep['cpu_prepare_s']:.2f}, measure {rep['cpu_measure_s']:.2f}")
    print(f"closest pelvises {100 * rep['closest_pelvis_m']:.1f} cm (at least {100 * (2 * 0.3 - 0.05):.0f}), "
          f"{rep['moved']} of {n} gave way, largest end gap {100 * rep['largest_end_gap_m']:.1f} cm, "
          f"last frame {rep['last_frame']:.0f} (alone: {max(c.frames[-1] for c in clips):.0f})")


def growth_table(sizes: list[int]) -> None:
    rows = []
    print(f"\nCost with the number of walkers (the same {2 * RADIUS_M:.0f} m plaza: denser as they grow)")
    print(f"{'walkers':>7} {'char-frames':>11} {'CPU s':>7} {'per 1k':>7} {'plan s':>7} {'walks s':>7} "
          f"{'repair s':>8} {'closest cm':>10} {'too close':>9} {'last frame':>10}")
    for n in sizes:
        walkers = plaza(n)
        result, cpu, _ = timed(lambda w=walkers: generate_crowd(w, CrowdParams(variation=VARIATION, seed=SEED)))
        rep = result.report
        frames = sum(c.frame_count for c in result.clips)
        rows.append((n, cpu, rep["cpu_plan_s"]))
        print(f"{n:>7} {frames:>11,} {cpu:>7.1f} {1000 * cpu / frames:>7.3f} {rep['cpu_plan_s']:>7.2f} "
              f"{rep['cpu_walks_s']:>7.1f} {rep['cpu_repair_s']:>8.1f} {100 * rep['closest_pelvis_m']:>10.1f} "
              f"{pairs_too_close(walkers, result):>9} {rep['last_frame']:>10.0f}")
    if len(rows) > 1:
        n, cpu, plan = (np.log(np.array(x, float)) for x in zip(*rows))
        print(f"growth exponent k (time ∝ walkers^k): all {np.polyfit(n, cpu, 1)[0]:.2f}, "
              f"plan {np.polyfit(n, plan, 1)[0]:.2f}")


def pairs_too_close(walkers: list[Walker], result, radius: float = 0.3) -> int:
    """How many pairs of walkers come closer than twice the personal radius less 5 cm on some
    frame (pelvises by FK of the clips, after the bake: not timed)."""
    from procanim_addon.crowd.measure import close_pairs, on_frames, pelvis_world

    tracks = [pelvis_world(w.skeleton, w.rigmap, c, w.world) for w, c in zip(walkers, result.clips)]
    _, xyz = on_frames(tracks, result.clips)
    _, i, j, _ = close_pairs(xyz[..., :2], 2 * radius - 0.05)
    return len(set(zip(i.tolist(), j.tolist())))


def scenes_table() -> None:
    """The acceptance scenes of the engine tests, measured the same way (FK of the clips)."""
    from procanim_addon.walk import generate_path_walk
    from procanim_addon.walk.metrics import contact_quality

    sk, rm = human_skeleton(1.75)
    hips = rm.index(sk, "hips")

    def walker(name, a, b):
        return Walker(name, sk, rm, np.array([[a[0], a[1], 0.0], [b[0], b[1], 0.0]]), FlatGround(0.0), PathWalkParams())

    ring = [walker(f"C{i}", (6 * np.cos(x), 6 * np.sin(x)), (-6 * np.cos(x), -6 * np.sin(x)))
            for i, x in enumerate(2 * np.pi * np.arange(20) / 20)]
    scenes = [("20 crossing a 6 m circle", ring, CrowdParams()),
              ("20 crossing, variation 1 (seed 1)", ring, CrowdParams(variation=1.0, seed=1)),
              ("2 head-on on one line", [walker("A", (0, 0), (10, 0)), walker("B", (10, 0), (0, 0))], CrowdParams()),
              ("2 meeting (ends 1.2 m apart)", [walker("A", (-5, 0.3), (-0.6, 0)), walker("B", (5, -0.2), (0.6, 0))],
               CrowdParams(greet=True))]
    print("\nAcceptance scenes (engine tests), measured by FK of the clips; personal radius 0.3 m")
    print(f"{'scene':<34} {'closest cm':>10} {'skate cm/s':>10} {'end gap cm':>10} {'time/alone':>10} "
          f"{'grip cm':>8} {'CPU s':>6}")
    for name, walkers, p in scenes:
        result, cpu, _ = timed(lambda w=walkers, p=p: generate_crowd(w, p))
        pel = [sk.fk(c.locations, c.rotations)[:, hips, :3, 3] for c in result.clips]
        lo, hi = min(c.frames[0] for c in result.clips), max(c.frames[-1] for c in result.clips)
        frames = np.arange(lo, hi + 1)
        xy = np.stack([q[np.clip((frames - c.frames[0]).astype(int), 0, len(q) - 1), :2]
                       for c, q in zip(result.clips, pel)], axis=1)
        d = np.linalg.norm(xy[:, :, None] - xy[:, None], axis=-1)
        d[:, np.arange(len(pel)), np.arange(len(pel))] = np.inf
        if p.greet:
            d[:] = np.inf  # the two meeting come as close as the handshake needs
        skate = max(contact_quality(sk, rm, sk.fk(c.locations, c.rotations), FlatGround(0.0), 24.0)["skate_mean_cm_s"]
                    for c in result.clips)
        gap = max(np.linalg.norm(q[-1, :2] - w.points[-1, :2]) for q, w in zip(pel, walkers))
        alone = max(generate_path_walk(w.skeleton, w.rigmap, w.points, w.ground, w.params).frame_count for w in walkers)
        grip = grip_error_cm(result, sk, rm) if result.handshakes else float("nan")
        closest = "–" if p.greet else f"{100 * d.min():.1f}"
        print(f"{name:<34} {closest:>10} {skate:>10.2f} {100 * gap:>10.1f} {(hi - lo + 1) / alone:>10.2f} "
              f"{grip:>8.4f} {cpu:>6.1f}")


def grip_error_cm(result, sk, rm) -> float:
    """The largest distance between the two right hands' grip points in the shake (cm): each
    character's grip point as the handshake defines it on the pose it stands in when it begins."""
    from procanim_addon.handshake import HandshakeParams
    from procanim_addon.handshake.character import prepare_character
    from procanim_addon.skeleton import Skeleton

    hs = result.handshakes[0]
    k0 = int(hs["frame_start"] - result.clips[0].frames[0])
    both = (np.array(list(hs["phase_initiator"])) == "S") & (np.array(list(hs["phase_partner"])) == "S")
    shake = np.flatnonzero(both) + k0
    grips = []
    for c in result.clips:
        stood = sk.fk(c.locations[k0 - 1:k0], c.rotations[k0 - 1:k0])[0]
        ch = prepare_character("c", Skeleton(sk.names, sk.parents, stood, sk.lengths), rm, np.eye(4), "DLS",
                               HandshakeParams())
        grips.append(ch.grip_world(sk.fk(c.locations[shake], c.rotations[shake])))
    return 100 * float(np.linalg.norm(grips[0] - grips[1], axis=1).max())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--walkers", type=int, default=100)
    ap.add_argument("--sizes", default="25,50,100,200")
    ap.add_argument("--no-scenes", action="store_true", help="leave out the acceptance scenes")
    args = ap.parse_args()
    limit_blas_threads()
    if not args.no_scenes:
        scenes_table()
    first_table(args.walkers)
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    if sizes:
        growth_table(sizes)


if __name__ == "__main__":
    main()
