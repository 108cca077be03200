"""The path walk's gait statistics beside published norms, from slow to brisk walking:

    python bench/path_walk_gait_stats.py [--height 1.75]        (engine only; no Blender needed)

ProcAnim's human walks a straight 14 m line at 80, 100, 115 and 130 steps/min (24 fps, default
settings). The figures are measured on the FK of the clip (``procanim_addon/walk/gait_stats.py``,
the same code the Blender test runs on the evaluated pose): step length per leg length (hip height
above the sole); the knee's flexion at initial contact, its peak in loading response (the first
20 % of the gait cycle after heel strike), its least in mid and late stance (20–50 %), its mean in
terminal stance (30–45 %), at toe off and its peak in swing; the upper arm's sagittal swing range.
Each is printed next to its reference, the ratio and whether it is within the documented tolerance
(docs/path_walk.md: ±10 % of the reference, or the band given for the nearly straight knee).

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
ARM_SWING_100_DEG = 39.0
# knee figures: (reference, tolerance) — ("rel", 0.1) ±10 % of the reference; ("abs", a, b) within [a, b]
KNEE = {
    "knee_contact_deg": (5.0, ("abs", 0.0, 8.0)),
    "knee_early_stance_deg": (17.5, ("rel", 0.10)),
    "knee_stance_min_deg": (5.0, ("abs", 0.0, 10.0)),
    "knee_terminal_stance_deg": (5.0, ("abs", 0.0, 15.0)),
    "knee_toe_off_deg": (37.5, ("rel", 0.10)),
    "knee_swing_peak_deg": (62.5, ("rel", 0.10)),
}


def references(cadence: float) -> dict:
    """{figure: (reference, tolerance)} at ``cadence`` (steps/min)."""
    step = WALK_RATIO_LEGS * cadence
    out = {"step_length_per_leg": (step, ("rel", 0.10))}
    out.update(KNEE)
    out["arm_swing_deg"] = (ARM_SWING_100_DEG * step / (WALK_RATIO_LEGS * 100.0), ("rel", 0.10))
    return out


def within(value: float, ref: float, tol) -> bool:
    """Whether ``value`` is within tolerance ``tol`` of ``ref`` (see :data:`KNEE`)."""
    if tol[0] == "rel":
        return abs(value / ref - 1.0) <= tol[1]
    return tol[1] <= value <= tol[2]


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
    head = f"{'steps/min':>9s}  {'figure':28s} {'ProcAnim':>9s} {'reference':>10s} {'ratio':>6s}  tolerance"
    print(head)
    print("-" * len(head))
    for cadence, st in stats.items():
        for key, (ref, tol) in references(cadence).items():
            band = f"±{tol[1] * 100:.0f} %" if tol[0] == "rel" else f"{tol[1]:g}–{tol[2]:g}"
            ok = "ok" if within(st[key], ref, tol) else "OUT"
            print(f"{cadence:9d}  {key:28s} {st[key]:9.3f} {ref:10.3f} {st[key] / ref:6.2f}  {band:8s} {ok}")
    print("(sources in this script's docstring and docs/path_walk.md)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
