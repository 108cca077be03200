"""The path walk's gait statistics beside published norms, from slow to brisk walking:

    python bench/path_walk_gait_stats.py [--height 1.75]        (engine only; no Blender needed)

ProcAnim's human walks a straight 14 m line at 80, 100, 115 and 130 steps/min (24 fps, default
settings). The figures are measured on the FK of the clip (``procanim_addon/walk/gait_stats.py``,
the same code the Blender test runs on the evaluated pose): step length per leg length (hip height
above the sole), peak knee flexion in early stance (the first 20 % of the gait cycle after heel
strike), the upper arm's sagittal swing range. Each is printed next to its reference and the ratio.

References (the numbers ProcAnim compares with, and where they come from):

* step length — the walk ratio (step length / cadence) is constant over ordinary speeds, about
  0.0064 m per step/min for adults (Sekiya, Nagasaki, Ito, Furuna 1997, J. Orthop. Sports Phys. Ther.
  26:266–272; Sekiya and Nagasaki 1998, Gait Posture 7:225–227); below about 98 steps/min it rises
  (PMC5430280, J. Phys. Ther. Sci. 2017). With a leg of 0.53 × stature (Winter 2009, Biomechanics and
  Motor Control of Human Movement, segment lengths) and the adults' 1.70 m: 0.0071 leg lengths per
  step/min.
* knee flexion in early stance (loading response) — 15–20° at free speed (Perry and Burnfield 2010,
  Gait Analysis, 2nd ed., ch. 4; Kadaba, Ramakrishnan, Wootten 1990, J. Orthop. Res. 8:383–392);
  it grows with speed (Lelas et al. 2003, Gait Posture 17:106–112). Reference: 17.5°.
* arm swing — "about 30° forward and 9° back in ordinary walking" (Tsutsuguchi et al. 2000, after
  Rose and Gamble's Human Walking): 39° at the paper's 100 steps/min; larger when faster (Murray,
  Sepic, Barnard 1967, Phys. Ther. 47:272–284) — the reference here grows with the walk ratio's step.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from procanim_addon.ground import FlatGround  # noqa: E402
from procanim_addon.rigs import human_skeleton  # noqa: E402
from procanim_addon.walk import PathWalkParams, generate_path_walk  # noqa: E402
from procanim_addon.walk.character import read_character  # noqa: E402
from procanim_addon.walk.gait_stats import gait_statistics  # noqa: E402

CADENCES = (80, 100, 115, 130)
WALK_RATIO_LEGS = 0.0064 / (0.53 * 1.70)  # leg lengths per step/min
KNEE_EARLY_STANCE_DEG = 17.5
ARM_SWING_100_DEG = 39.0


def references(cadence: float) -> dict:
    """The reference of each figure at ``cadence`` (steps/min)."""
    step = WALK_RATIO_LEGS * cadence
    return {"step_length_per_leg": step, "knee_early_stance_deg": KNEE_EARLY_STANCE_DEG,
            "arm_swing_deg": ARM_SWING_100_DEG * step / (WALK_RATIO_LEGS * 100.0)}


def measure(height: float = 1.75) -> dict:
    """{cadence: gait statistics} of ProcAnim's human of ``height`` m."""
    sk, rm = human_skeleton(height)
    char = read_character(sk, rm)
    out = {}
    for cadence in CADENCES:
        clip = generate_path_walk(sk, rm, np.array([[0.0, 0.0, 0.0], [0.0, -14.0, 0.0]]), FlatGround(),
                                  PathWalkParams(cadence_spm=cadence))
        pose = sk.fk(clip.locations, clip.rotations)
        out[cadence] = gait_statistics(sk, rm, pose, char, FlatGround(), clip.fps)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--height", type=float, default=1.75)
    args = ap.parse_args(argv)
    stats = measure(args.height)
    print(f"path walk gait statistics — ProcAnim human {args.height:g} m, straight 14 m, 24 fps")
    head = f"{'steps/min':>9s}  {'figure':28s} {'ProcAnim':>9s} {'reference':>10s} {'ratio':>6s}"
    print(head)
    print("-" * len(head))
    for cadence, st in stats.items():
        for key, ref in references(cadence).items():
            print(f"{cadence:9d}  {key:28s} {st[key]:9.3f} {ref:10.3f} {st[key] / ref:6.2f}")
    print("(within ±10 % when the ratio is 0.90–1.10; sources in this script's docstring and docs/path_walk.md)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
