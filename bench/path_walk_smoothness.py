"""How smooth the path walk's legs are at the scale of a frame, beside what the walk guarantees — no
Blender needed:

    <venv>/bin/python bench/path_walk_smoothness.py [--keys] [--styles]

For ProcAnim's human (1.75 m, 100 steps/min, 24 fps) on a straight 14 m line, the demo's S-curve
(10 m, ±1.5 m) and the engine bench's staircase (5 treads up, a landing, 5 down), measured on the FK
of the clip:

* roughness: how far a bone's tail strays from the least-squares cubic through the 7 frames around
  it (mm; median, 90th percentile, largest over both legs and every frame) — the knee (thigh tail),
  the ankle (shin tail), the toe tip (toe tail), and the hips (head) for scale;
* the knee nearest full extension: the least knee flexion over the frames each foot bears weight and
  over the whole walk (degrees; 0 = straight);
* the toe tip's first frame off the ground after each lift-off: how far it rises (mm) against how far
  it moves forward (mm), median over the steps (a scrape: a tip that slides on at ground level);
* the walk's own metrics: skate (cm/s, mean), penetration (cm, max), the largest frame-to-frame bone
  rotation (max_joint_jump_deg);
* with ``--keys``: the editable bake's keys at the default tolerance (1 mm) as a share of the dense
  bake (``procanim_addon.keys``, as ``bench/key_reduction.py`` plans them);
* with ``--styles``: the straight line again with each of the style presets (``walk/style.py``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from path_walk_engine import cases_stairs, s_curve  # noqa: E402

from procanim_addon import keys  # noqa: E402
from procanim_addon.ground import FlatGround  # noqa: E402
from procanim_addon.rigs import human_skeleton  # noqa: E402
from procanim_addon.walk import PathWalkParams, generate_path_walk  # noqa: E402
from procanim_addon.walk.character import read_character  # noqa: E402
from procanim_addon.walk.metrics import sole_points  # noqa: E402
from procanim_addon.walk.style import EMOTIONS  # noqa: E402

CONTACT_M = 0.003  # a sole point this close to the ground bears weight (the walk's metric)
_T = np.arange(-3, 4)
CUBIC_7 = (np.vander(_T, 4) @ np.linalg.pinv(np.vander(_T, 4)))[3]  # the centre of a cubic fit over 7 frames


def off_cubic(p: np.ndarray) -> np.ndarray:
    """(F − 6, …) distance (m) of each frame's point (F, …, 3) from the cubic fitted to the 7 frames
    around it."""
    w = np.lib.stride_tricks.sliding_window_view(p, 7, axis=0)
    return np.linalg.norm(w[..., 3] - w @ CUBIC_7, axis=-1)


def knee_flexion(pose, sk, char, side) -> np.ndarray:
    """(F,) knee flexion (degrees, 0 = straight) from the posed hip, knee and ankle."""
    hip, knee, ankle = (pose[:, i, :3, 3] for i in (char.thigh[side], char.shin[side], char.foot[side]))
    u, v = knee - hip, ankle - knee
    c = np.sum(u * v, axis=-1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
    return np.degrees(np.arccos(np.clip(c, -1.0, 1.0)))


def measure(sk, rm, clip, ground, with_keys: bool) -> dict:
    char = read_character(sk, rm)
    pose = sk.fk(clip.locations, clip.rotations)
    tails = sk.tails_of(pose)
    out = {}
    for name, pts in (("knee", tails[:, [char.thigh[s] for s in "LR"]]),
                      ("ankle", tails[:, [char.shin[s] for s in "LR"]]),
                      ("toe", tails[:, [char.toe[s] if char.toe[s] is not None else char.foot[s] for s in "LR"]]),
                      ("hips", pose[:, char.hips:char.hips + 1, :3, 3])):
        d = off_cubic(pts).ravel() * 1000
        out[name] = (float(np.median(d)), float(np.percentile(d, 90)), float(d.max()))
    least_planted, least, rise, fwd = np.inf, np.inf, [], []
    for s in "LR":
        soles = sole_points(sk, pose, char, s)
        gz, _, _ = ground.height(soles.reshape(-1, 3)[:, :2])
        gap = soles[..., 2] - np.asarray(gz).reshape(soles.shape[:2])
        down = gap < CONTACT_M
        flex = knee_flexion(pose, sk, char, s)
        least_planted = min(least_planted, float(flex[down.any(axis=1)].min()))
        least = min(least, float(flex.min()))
        tip_down = down[:, 2]
        for f in np.flatnonzero(tip_down[:-1] & ~tip_down[1:]):  # the tip's last frame down, then up
            if f + 1 < len(gap) and not down[f + 1].any():
                rise.append(gap[f + 1, 2] - gap[f, 2])
                heading = soles[f, 2, :2] - soles[f, 0, :2]
                heading /= np.linalg.norm(heading)
                fwd.append(float(np.dot(soles[f + 1, 2, :2] - soles[f, 2, :2], heading)))
    out["knee_least_planted"], out["knee_least"] = least_planted, least
    out["tip_rise_mm"] = float(np.median(rise)) * 1000 if rise else np.nan
    out["tip_fwd_mm"] = float(np.median(fwd)) * 1000 if fwd else np.nan
    m = clip.metrics
    out["skate"], out["pen"], out["jump"] = m["skate_mean_cm_s"], m["penetration_max_cm"], m["max_joint_jump_deg"]
    if with_keys:
        feet = keys.feet(sk, rm)
        contacts, marks = keys.walk_contacts(sk, clip, feet, ground)
        keyed = keys.plan_clip_keys(clip, sk, keys.DEFAULT_TOLERANCE_M, marks=marks, contacts=contacts, feet=feet)
        out["keys"] = keyed.metrics()["keys_percent_of_dense"]
    return out


def cases(styles: bool) -> dict:
    line = np.array([[0.0, 0.0, 0.0], [0.0, -14.0, 0.0]])
    out = {"straight": (line, FlatGround(), {}), "S-curve": (s_curve(), FlatGround(), {}),
           "stairs": (np.array([[0.0, 0.0, 0.0], [0.0, -7.0, 0.0]]), cases_stairs(), {})}
    if styles:
        for name, (a, w, d) in EMOTIONS.items():
            if name != "CUSTOM":
                out[f"straight, {name}"] = (line, FlatGround(), {"style_amplitude": a, "style_weight": w,
                                                                 "style_direction": d})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", action="store_true", help="plan the editable bake's keys too (slower)")
    ap.add_argument("--styles", action="store_true", help="the style presets on the straight line too")
    args = ap.parse_args()
    sk, rm = human_skeleton()
    print("path walk smoothness — ProcAnim human 1.75 m, 100 steps/min, 24 fps; roughness = mm off a cubic "
          "over 7 frames (median / p90 / max, both legs)")
    head = (f"{'case':26s} {'frames':>6s} {'knee':>18s} {'ankle':>18s} {'toe tip':>18s} {'hips':>15s} "
            f"{'flex min':>9s} {'tip up/fwd':>11s} {'skate':>6s} {'pen':>5s} {'jump':>5s}"
            + (f" {'keys %':>6s}" if args.keys else ""))
    print(head)
    for name, (pts, ground, style) in cases(args.styles).items():
        clip = generate_path_walk(sk, rm, pts, ground, PathWalkParams(**style))
        m = measure(sk, rm, clip, ground, args.keys)
        trio = lambda k, m=m: "{:5.2f} {:5.2f} {:6.2f}".format(*m[k])  # noqa: E731
        print(f"{name:26s} {clip.frame_count:6d} {trio('knee'):>18s} {trio('ankle'):>18s} {trio('toe'):>18s} "
              f"{'{:4.2f} {:4.2f} {:5.2f}'.format(*m['hips']):>15s} "
              f"{m['knee_least_planted']:4.1f}/{m['knee_least']:4.1f} {m['tip_rise_mm']:4.1f}/{m['tip_fwd_mm']:5.1f} "
              f"{m['skate']:6.3f} {m['pen']:5.2f} {m['jump']:5.1f}" + (f" {m['keys']:6.1f}" if args.keys else ""))
    print("flex min: the least knee flexion (deg) while the foot bears weight / over the whole walk; tip up/fwd: "
          "the toe tip's first frame off the ground, rise / forward travel (mm, median over the lift-offs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
