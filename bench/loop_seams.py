"""The seams of the walk loops, per rig, style preset and loop mode (engine only; no Blender needed):

    python bench/loop_seams.py [--cycles 1] [--fps 24]

For the path walk on ProcAnim's 1.75 m human, Rigify's human metarig (no root bone: the hips carry
the travel) and a generated Rigify human's deform skeleton (``root`` + ``ORG-`` bones), and for the
duck walk on ProcAnim's duck and Rigify's bird metarig, every style preset, ``IN_PLACE`` and
``ROOT_MOTION``, it makes the loop and prints what ``procanim_addon/loop.py`` measures on its FK, as a
Cycles modifier plays it (docs/path_walk.md, "Loops"):

* cycle: frames per gait cycle (whole; the cadence or Speed rounded to it) and the loop's cycles;
* stride: one gait cycle's travel (m) — the root's travel per loop is stride × cycles;
* closing: how far the walk's stretch missed its first pose one loop on (mm), spread over the loop;
* seam: the pose one loop on against the first moved by the travel (mm); the velocity of every
  bone's head and tail over the two key steps at the seam against the uncut walk's there (largest
  |v − v_walk| / max(|v_walk|, 0.1 m/s), %); the fastest slide of a foot point in contact across the
  seam (cm/s);
* drift: the pelvis' horizontal move between keys whole motion periods apart, the travel taken off (cm;
  a loop of more cycles repeats one period of the motion, so this and the seam position are the
  construction's, shown to catch a regression);
* travel on: the bone whose location carries the travel with root motion.

Prints only (no BENCH records: tools/bench.sh does not run it yet).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import rig_samples  # noqa: E402

from procanim_addon import duck, rigs  # noqa: E402
from procanim_addon.rig_roles import detect  # noqa: E402
from procanim_addon.skeleton import Skeleton  # noqa: E402
from procanim_addon.walk import PathWalkParams, generate_path_walk  # noqa: E402
from procanim_addon.walk.style import EMOTIONS  # noqa: E402

MODES = ("IN_PLACE", "ROOT_MOTION")
COLUMNS = ("generator", "rig", "preset", "mode", "cycles", "cycle fr", "stride m", "closing mm", "seam mm",
           "seam vel %", "seam skate cm/s", "drift cm", "travel on", "ms")


def sample(name: str):
    bones, _ = getattr(rig_samples, name)()
    sk = Skeleton.from_bones(rig_samples.bone_dicts(bones))
    return sk, detect(sk.names, {b["name"]: b["parent"] for b in bones}, skeleton=sk)


def humans():
    return {"ProcAnim human": rigs.human_skeleton(), "Rigify metarig": sample("rigify_metarig"),
            "Rigify deform": sample("rigify_deform")}


def birds():
    return {"ProcAnim duck": rigs.duck_skeleton(), "Rigify bird": sample("rigify_bird")}


def row(generator: str, rig: str, preset: str, mode: str, clip, seconds: float) -> tuple:
    m = clip.metrics
    return (generator, rig, preset, mode, m["loop_cycles"], f"{m['cycle_frames']:g}", f"{m['cycle_stride_m']:.3f}",
            f"{m['loop_source_mismatch_mm']:.3f}", f"{m['loop_seam_position_mm']:.1e}",
            f"{100 * m['loop_seam_velocity_ratio']:.1f}", f"{m['loop_seam_skate_cm_s']:.3f}",
            f"{m['loop_pelvis_drift_cm']:.3f}", m["loop_travel_bone"] or "–", f"{1000 * seconds:.0f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, nargs="+", default=[1], help="gait cycles per loop (one or more counts)")
    ap.add_argument("--fps", type=float, default=24.0, help="frames per second")
    args = ap.parse_args(argv)
    rows = [COLUMNS]
    for cycles in args.cycles:
        for rig, (sk, rm) in humans().items():
            for preset, (a, w, d) in EMOTIONS.items():
                for mode in MODES:
                    params = PathWalkParams(fps=args.fps, style_amplitude=a, style_weight=w, style_direction=d,
                                            loop=mode, loop_cycles=cycles)
                    t = time.perf_counter()
                    clip = generate_path_walk(sk, rm, None, None, params)
                    rows.append(row("path walk", rig, preset, mode, clip, time.perf_counter() - t))
        for rig, (sk, rm) in birds().items():
            for preset, (_label, (a, s, w, d), _why) in duck.PRESETS.items():
                for mode in MODES:
                    params = duck.DuckParams(fps=args.fps, amplitude=a, speed=s, weight=w, direction=d, loop=mode,
                                             loop_cycles=cycles)
                    t = time.perf_counter()
                    clip = duck.generate_duck_walk(sk, rm, params)
                    rows.append(row("duck walk", rig, preset, mode, clip, time.perf_counter() - t))
    widths = [max(len(str(r[k])) for r in rows) for k in range(len(COLUMNS))]
    for r in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))


if __name__ == "__main__":
    main()
