"""Fix Feet engine bench: frames fixed per second on a 31-bone clip, and the quality table.

    <venv>/bin/python bench/fix_feet_engine.py                 (no Blender needed)
    <venv>/bin/python bench/fix_feet_engine.py --plots docs/   (and the figures of docs/fix_feet.md)
    <venv>/bin/python bench/fix_feet_engine.py --quick         (speed only)

Speed: ProcAnim's source walk (``motions.walk``, 80 steps, 24 fps: 1,046 frames) on CMU's BVH
skeleton (31 bones, ``tests/rig_samples.py``) and on ProcAnim's human (22 bones), with skate added
(``fix_feet.footskate``: planted feet drifting 5–15 cm/s, 1 cm of jitter per axis, floating 3 cm),
fixed over a flat ground; best of 3, frames per second of wall time and of process CPU time (the
goal: ≥ 500 frames/s for the 31-bone clip).

The speed rows are also printed as ``BENCH`` records (table ``fix_feet_engine``): ``tools/bench.sh``
runs this bench and ``tools/bench_readme.py`` puts the 31-bone row in the README's Speed table.

Quality: the same skate added to the 6-step walk at 24, 30 and 60 fps, 5 seeds each, fixed over a
flat ground; measured by forward kinematics against the truth of the clean walk's contacts (where
its feet stand still): skate of heel and ball in contact (mean, p95, cm/s), float (cm), contact F1,
the largest pelvis drop (cm); a clean walk fixed (largest joint change, mm); the walk over an
ankle-high block (deepest heel, ball or toe tip below the ground in contact, cm).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import rig_samples  # noqa: E402
from benchlog import emit  # noqa: E402

from procanim_addon import motions  # noqa: E402
from procanim_addon.fix_feet import fix_feet  # noqa: E402
from procanim_addon.fix_feet.feet import read_feet  # noqa: E402
from procanim_addon.fix_feet.footskate import Footskate, add_footskate, planted  # noqa: E402
from procanim_addon.ground import FlatGround  # noqa: E402
from procanim_addon.rig_roles import detect  # noqa: E402
from procanim_addon.rigs import human_skeleton  # noqa: E402
from procanim_addon.skeleton import Skeleton  # noqa: E402
from procanim_addon.terrain.mesh import TerrainMesh  # noqa: E402

GENERATORS = ("fix_feet",)  # the generators this bench measures
SPEED_STEPS = 80
SEEDS = range(5)


def cmu_skeleton():
    bones, _ = rig_samples.cmu("A")
    sk = Skeleton.from_bones(rig_samples.bone_dicts(bones))
    return sk, detect(sk.names, {b["name"]: b["parent"] for b in bones}, skeleton=sk)


def pose_of(sk, clip):
    return sk.fk(clip.locations, clip.rotations)


def truth_of(sk, rm, clean):
    pose = pose_of(sk, clean)
    return np.stack([planted(pose[:, sk.index(rm.bone(f"foot.{s}")), :3, 3]) for s in "LR"], axis=1)


def quality(sk, rm, clean, fixed, truth):
    """Skate (mean, p95 cm/s) of heel and ball over the truth's contacts, float (cm)."""
    feet = read_feet(sk, rm)
    pts = feet.points(sk, pose_of(sk, fixed))  # (F, 2, 2, 3)
    both = truth[1:] & truth[:-1]
    v = np.linalg.norm(np.diff(pts[..., :2], axis=0), axis=-1) * fixed.fps * 100  # (F-1, 2, 2)
    v = v[np.repeat(both[..., None], 2, axis=-1)]
    low = (pts[..., 2] - feet.sole).min(axis=-1)
    return float(np.mean(v)), float(np.percentile(v, 95)), float(np.mean(np.maximum(low[truth], 0)) * 100)


def f1(truth, found):
    tp = np.sum(truth & found)
    return 2 * tp / (2 * tp + np.sum(~truth & found) + np.sum(truth & ~found))


def speed_rows():
    rows = []
    for name, (sk, rm) in (("CMU BVH, 31 bones", cmu_skeleton()), ("ProcAnim human, 22 bones", human_skeleton())):
        clean = motions.walk(sk, rm, motions.WalkParams(steps=SPEED_STEPS))
        bad = add_footskate(sk, rm, clean)
        fix_feet(sk, rm, bad, FlatGround(0.0))  # warm up
        wall, cpu = [], []
        for _ in range(3):
            w0, c0 = time.perf_counter(), time.process_time()
            fixed = fix_feet(sk, rm, bad, FlatGround(0.0))
            wall.append(time.perf_counter() - w0)
            cpu.append(time.process_time() - c0)
        n = clean.frame_count
        row = {"frames": n, "bones": len(sk), "fps_wall": n / min(wall), "fps_cpu": n / min(cpu),
               "contacts": fixed.clip.metrics["contacts"]}
        rows.append((name, row))
    print(f"\n{'clip':28s} {'frames':>7s} {'bones':>6s} {'fr/s wall':>10s} {'fr/s CPU':>9s}")
    for name, r in rows:
        print(f"{name:28s} {r['frames']:7d} {r['bones']:6d} {r['fps_wall']:10.0f} {r['fps_cpu']:9.0f}")
    for name, r in rows:
        emit("fix_feet_engine", name, **r)
    return rows


def quality_rows():
    sk, rm = human_skeleton()
    print(f"\n{'walk':10s} {'skate before':>13s} {'skate after':>12s} {'p95 after':>10s} {'float bef/aft':>14s} "
          f"{'F1 min':>7s} {'drop max':>9s} {'clean max':>10s}")
    for fps in (24, 30, 60):
        clean = motions.walk(sk, rm, motions.WalkParams(fps=fps))
        truth = truth_of(sk, rm, clean)
        per = []
        for seed in SEEDS:
            bad = add_footskate(sk, rm, clean, Footskate(seed=seed))
            fixed = fix_feet(sk, rm, bad, FlatGround(0.0))
            before, after = quality(sk, rm, clean, bad, truth), quality(sk, rm, clean, fixed.clip, truth)
            per.append((*before, *after, f1(truth, fixed.contact.any(axis=-1)),
                        fixed.clip.metrics["pelvis_drop_max_cm"]))
        per = np.array(per)
        clean_fix = fix_feet(sk, rm, clean, FlatGround(0.0)).clip.metrics["max_joint_change_cm"] * 10
        row = {"skate_before_cm_s": per[:, 0].mean(), "skate_after_cm_s": per[:, 3].max(),
               "skate_after_p95_cm_s": per[:, 4].max(), "float_before_cm": per[:, 2].mean(),
               "float_after_cm": per[:, 5].max(), "f1_min": per[:, 6].min(), "pelvis_drop_max_cm": per[:, 7].max(),
               "clean_change_mm": clean_fix}
        print(f"{fps:3d} fps    {row['skate_before_cm_s']:13.2f} {row['skate_after_cm_s']:12.3f} "
              f"{row['skate_after_p95_cm_s']:10.3f} {row['float_before_cm']:6.2f} / {row['float_after_cm']:5.2f} "
              f"{row['f1_min']:7.3f} {row['pelvis_drop_max_cm']:9.2f} {row['clean_change_mm']:8.2f} mm")
    block = [(-1.0, -1.9), (1.0, -1.9), (1.0, -1.0), (-1.0, -1.0)]
    ground = TerrainMesh.from_boxes(0.0, (-2.0, -5.0), (2.0, 2.0), [(block, 0.09)])
    clean = motions.walk(sk, rm)
    for label, src in (("clean", clean), ("skated", add_footskate(sk, rm, clean))):
        m = fix_feet(sk, rm, src, ground).clip.metrics
        print(f"ankle-high block, {label} walk: below ground in contact {m['penetration_before_cm']:.2f} → "
              f"{m['penetration_cm']:.3f} cm, float after {m['float_cm']:.3f} cm, {m['contacts']} contacts")


def plots(out: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sk, rm = human_skeleton()
    clean = motions.walk(sk, rm, motions.WalkParams(steps=8))
    bad = add_footskate(sk, rm, clean, Footskate(seed=0))
    fixed = fix_feet(sk, rm, bad, FlatGround(0.0))
    feet = read_feet(sk, rm)
    t = clean.frames
    fig, axes = plt.subplots(3, 1, figsize=(9, 7.5), sharex=True)
    heel = {name: feet.points(sk, pose_of(sk, c))[:, 0, 0] for name, c in
            (("clean", clean), ("skated", bad), ("fixed", fixed.clip))}
    for name in ("skated", "fixed"):
        off = np.linalg.norm((heel[name] - heel["clean"])[:, :2], axis=1) * 100
        axes[0].plot(t, off, label=name, color="C1" if name == "skated" else "C2", lw=1.6 if name == "fixed" else 1.0)
    axes[0].set_ylabel("left heel off the clean\nwalk's, horizontal (cm)")
    for name, style, color in (("clean", ":", "C0"), ("skated", "-", "C1"), ("fixed", "-", "C2")):
        axes[1].plot(t, heel[name][:, 2], style, color=color, label=name, lw=1.6 if name == "fixed" else 1.0)
    axes[1].set_ylabel("left heel height (m)")
    left = fixed.contact[:, 0].any(-1)
    for ax in axes:
        ax.fill_between(t, 0, 1, where=left, color="0.9", transform=ax.get_xaxis_transform(), label="_contact")
    axes[0].legend(loc="upper left")
    axes[1].legend(loc="upper left")
    axes[2].plot(t, fixed.pelvis_offset * 100, color="C3")
    axes[2].set_ylabel("pelvis moved (cm)")
    axes[2].set_xlabel("frame (grey: left foot held)")
    fig.suptitle("Fix Feet on ProcAnim's walk with skate added (drift, 1 cm jitter, 3 cm float)")
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "fix_feet_heel.png"
    fig.savefig(path, dpi=90)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="speed only")
    parser.add_argument("--plots", type=Path, help="write the figures of docs/fix_feet.md into this folder")
    args = parser.parse_args()
    speed_rows()
    if not args.quick:
        quality_rows()
    if args.plots:
        plots(args.plots)


if __name__ == "__main__":
    main()
