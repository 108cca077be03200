"""Path walk engine bench: frames generated per second for a 1,000-frame walk, and a metrics table.

    <venv>/bin/python bench/path_walk_engine.py [--plots out/]      (no Blender needed)
    <venv>/bin/python bench/path_walk_engine.py --against REV [--rounds N]   (this tree against REV)

``--against`` times ``generate_path_walk`` of this tree and of the engine at ``REV`` (``git archive``
into a temporary folder) in one run, N processes each (default 3) alternating, best of 3 calls:
the live preview's ~236-frame walk (a new walk per change: cadences 104, 108, 96, 100), and a
~1,200-frame S-curve on ProcAnim's human and on a Rigify-metarig-like rig of 159 bones (the test
rig plus a bare hand and face of 130 bones). Each tree runs as the extension runs it: with the BLAS
thread limit its register() sets (``procanim_addon/threads.py``) where the tree has one, else with
OpenBLAS's default threads. CPU time counts every thread; the CPU that OpenBLAS's worker threads
took during a call is printed apart (they spin after a threaded LAPACK/BLAS call).

Walks ProcAnim's human (1.75 m) at 100 steps/min, 24 fps, along:

* ``long S-curve``  — a sinuous path sized to give ~1,000 frames (timed, best of 3; fr/s is
  frames per CPU second, which a busy machine disturbs less than wall time);
* ``S-curve``       — the demo's S (10 m, ±1.5 m);
* ``stairs``        — 5 treads up (16 cm × 30 cm), a 1 m landing, 5 down;
* ``ramp``          — a 10 % slope up and down (a height field);
* ``corner``        — a right-angle corner (rounded by the path's corner radius).

Then the naive alternative measured the same way: the straight walk's in-place cycle carried along
the S-curve by its root (what Follow Path + a baked cycle gives) — its feet slide on the curve.
Quality columns are the engine's metrics, measured on the FK of the clip: skate in contact (cm/s),
penetration (cm), pelvis path deviation (cm), COM vertical travel (cm), largest per-frame joint
rotation (deg).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from procanim_addon import transforms as tf  # noqa: E402
from procanim_addon.ground import FlatGround, HeightFieldGround, StairsGround  # noqa: E402
from procanim_addon.rigs import human_skeleton  # noqa: E402
from procanim_addon.walk import PathWalkParams, generate_path_walk  # noqa: E402
from procanim_addon.walk.character import read_character  # noqa: E402
from procanim_addon.walk.metrics import sole_points  # noqa: E402
from procanim_addon.walk.path import build_path  # noqa: E402


def s_curve(length=10.0, amp=1.5, waves=1.0, n=400):
    y = np.linspace(0, -length, n)
    return np.stack([amp * np.sin(2 * np.pi * waves * (-y) / length), y, np.zeros(n)], -1)


def naive_follow_path(sk, rm, straight_clip, curve, ground):
    """Skate (cm/s) of an in-place cycle carried along ``curve`` by its root at the same speed."""
    char = read_character(sk, rm)
    ri = sk.index("root")
    pose = sk.fk(straight_clip.locations, straight_clip.rotations)
    root_w = pose[:, ri]                                     # root carries the walk on the straight path
    local = np.linalg.inv(root_w)[:, None] @ pose            # the in-place cycle
    s = -root_w[:, 1, 3]                                     # progress along the straight (−y) path
    path = build_path(curve, ground)
    p = path.at(s)
    yaw = path.heading_at(s) - char.rest_heading
    D = tf.compose(p, tf.quat_from_axis_angle(np.broadcast_to([0, 0, 1.0], p.shape), yaw))
    moved = D[:, None] @ local
    speeds = []
    for side in "LR":
        pts = sole_points(sk, moved, char, side)
        z, _, _ = ground.height(pts.reshape(-1, 3)[:, :2])
        on = np.abs(pts[..., 2] - z.reshape(pts.shape[:2])) < 0.003
        both = on[1:] & on[:-1]
        v = np.linalg.norm(np.diff(pts[..., :2], axis=0), axis=-1) * straight_clip.fps
        speeds.append(v[both])
    v = np.concatenate(speeds) * 100
    return float(v.mean()), float(np.percentile(v, 95))


AB_CODE = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import numpy as np
from procanim_addon.ground import FlatGround
from procanim_addon.rigs import human_skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk
from path_walk_engine import PREVIEW_PATH, big_rig, other_threads_cpu, s_curve
try:  # the thread limit the extension sets when it registers, where the tree has one
    from procanim_addon.threads import limit_blas_threads
    limit_blas_threads()
except ImportError:
    pass
out = {}
human = human_skeleton()
cases = {"human": (human, s_curve(length=40.0, amp=1.5, waves=4.0, n=801), [96.0]),
         "159 bones": (big_rig(), s_curve(length=40.0, amp=1.5, waves=4.0, n=801), [96.0]),
         "preview": (human, PREVIEW_PATH, [104.0, 108.0, 96.0, 100.0])}
for name, ((sk, rm), pts, cadences) in cases.items():
    generate_path_walk(sk, rm, pts, FlatGround(), PathWalkParams(cadence_spm=cadences[0]))
    best_cpu = best_wall = 1e9
    spin = 0.0
    for _ in range(3):
        for cad in cadences:  # the preview: a new walk per change (another cadence each time)
            o0, c0, w0 = other_threads_cpu(), time.process_time(), time.perf_counter()
            clip = generate_path_walk(sk, rm, pts, FlatGround(), PathWalkParams(cadence_spm=cad))
            best_cpu, best_wall = min(best_cpu, time.process_time() - c0), min(best_wall, time.perf_counter() - w0)
            spin = max(spin, other_threads_cpu() - o0)
    out[name] = [best_cpu, best_wall, spin, clip.frame_count]
print(json.dumps(out))
"""

PREVIEW_PATH = np.array([(0.0, 0.0, 0.0), (0.0, -2.5, 0.0), (1.2, -5.2, 0.0), (1.2, -8.0, 0.0)])  # the live
# preview's timing test (tests/blender/test_preview_timing.py): ~236 frames at 100 steps/min


def other_threads_cpu() -> float:
    """CPU seconds of this process's threads other than the calling one (OpenBLAS's workers),
    from /proc (Linux; 0 elsewhere)."""
    import threading

    me = threading.get_native_id()
    total = 0.0
    try:
        for tid in os.listdir("/proc/self/task"):
            if int(tid) != me:
                with open(f"/proc/self/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0
    return total


def big_rig():
    """A rig of 159 bones like Rigify's human metarig: the engine tests' Rigify-like body (28 bones)
    plus 131 idle bones (fingers, face) under the hands and the head."""
    from procanim_addon.rig_roles import detect
    from procanim_addon.rigs import BoneSpec, RigTemplate

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "engine"))
    from test_walk_gait import _rigify_like

    sk, _ = _rigify_like()
    bones = [BoneSpec(n, sk.names[p] if p >= 0 else None, tuple(sk.heads[i]), tuple(sk.tails[i]),
                      tuple(sk.matrix_local[i][:3, 2])) for i, (n, p) in enumerate(zip(sk.names, sk.parents))]
    for k in range(159 - len(bones)):
        parent = ("hand.L", "hand.R", "spine.006")[k % 3]
        h = np.array(sk.heads[sk.index(parent)]) + [0.0, -0.01 * (k % 7), 0.01 * (k % 5)]
        bones.append(BoneSpec(f"extra.{k:03d}", parent, tuple(h), tuple(h + [0.0, 0.0, 0.02]), (0.0, -1.0, 0.0)))
    t = RigTemplate("metarig", tuple(bones), {})
    big = t.skeleton()
    return big, detect(big.names, {b.name: b.parent for b in t.bones}, rig_name="metarig")


def against(rev: str, rounds: int = 3) -> int:
    """This tree's engine against ``rev``'s, alternating in one run, each with the BLAS threads the
    extension gives it in Blender (the CPU time counts any other thread's spinning too)."""
    import json
    import subprocess
    import tempfile

    root = Path(__file__).resolve().parent.parent
    old = Path(tempfile.mkdtemp(prefix="path-walk-ab-"))
    archive = subprocess.run(["git", "-C", str(root), "archive", rev, "procanim_addon"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    best: dict = {}
    for r in range(rounds):
        pair = ((rev, old), ("this tree", root))
        for label, tree in pair if r % 2 == 0 else pair[::-1]:
            run = subprocess.run([sys.executable, "-c", AB_CODE, str(tree), str(root / "bench")], check=True,
                                 capture_output=True, text=True)
            for case, (cpu, wall, spin, frames) in json.loads(run.stdout).items():
                b = best.setdefault((case, label), [np.inf, np.inf, 0.0, frames])
                b[0], b[1], b[2] = min(b[0], cpu), min(b[1], wall), max(b[2], spin)
    print(f"generate_path_walk, best of 3 calls × {rounds} alternating processes, {rev} against this tree;")
    print("CPU = all threads; 'spin' = the most CPU OpenBLAS's other threads took during one call")
    for case in ("preview", "human", "159 bones"):
        (ca, wa, sa, frames), (cb, wb, sb, _) = best[(case, rev)], best[(case, "this tree")]
        print(f"  {case:10s} {frames:5d} frames: CPU {1000 * ca:6.1f} -> {1000 * cb:6.1f} ms ({ca / cb:.2f}x), "
              f"wall {1000 * wa:6.1f} -> {1000 * wb:6.1f} ms ({wa / wb:.2f}x), spin {1000 * sa:5.1f} -> "
              f"{1000 * sb:5.1f} ms; {1000 * cb / frames:.3f} ms/frame")
    return 0


def main() -> int:
    if "--against" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
        return against(sys.argv[sys.argv.index("--against") + 1], rounds)
    sk, rm = human_skeleton()
    params = PathWalkParams()
    ramp = HeightFieldGround.from_function(
        lambda x, y: np.clip(0.1 * (-y - 1.0), 0, 0.3) - np.clip(0.1 * (-y - 5.0), 0, 0.3), (-3, 3), (-11, 1), 0.05)
    cases = {
        "long S-curve": (s_curve(length=44.0, amp=2.0, waves=3.0, n=2000), FlatGround()),
        "S-curve": (s_curve(), FlatGround()),
        "stairs": (np.array([[0, 0, 0], [0, -7.0, 0]]), cases_stairs()),
        "ramp": (np.array([[0, 0, 0], [0, -9.5, 0]]), ramp),
        "corner": (np.array([[0, 0, 0], [0, -3.0, 0], [3.0, -3.0, 0]]), FlatGround()),
    }
    print(f"path walk engine — ProcAnim human, {params.cadence_spm:g} steps/min, {params.fps:g} fps, "
          f"numpy {np.__version__}")
    header = (f"{'path':14s} {'frames':>6s} {'gen s':>6s} {'cpu s':>6s} {'fr/s':>7s} {'skate':>6s} {'p95':>6s} "
              f"{'pen':>5s} {'dev':>5s} {'devmax':>6s} {'COM z':>6s} {'steps':>5s} {'jump':>5s}")
    print(header)
    print("-" * len(header))
    clips = {}
    for name, (pts, ground) in cases.items():
        reps = 3 if name == "long S-curve" else 1
        best = cpu = np.inf
        for _ in range(reps):
            t0, c0 = time.perf_counter(), time.process_time()
            clip = generate_path_walk(sk, rm, pts, ground, params)
            best = min(best, time.perf_counter() - t0)
            cpu = min(cpu, time.process_time() - c0)
        clips[name] = clip
        m = clip.metrics
        print(f"{name:14s} {clip.frame_count:6d} {best:6.2f} {cpu:6.2f} {clip.frame_count / cpu:7.0f} "
              f"{m['skate_mean_cm_s']:6.2f} "
              f"{m['skate_p95_cm_s']:6.2f} {m['penetration_max_cm']:5.2f} {m['pelvis_deviation_mean_cm']:5.2f} "
              f"{m['pelvis_deviation_max_cm']:6.2f} {m['com_vertical_travel_cm']:6.2f} {m['step_count']:5d} "
              f"{m['max_joint_jump_deg']:5.1f}")
    straight = generate_path_walk(sk, rm, np.array([[0, 0, 0], [0, -s_curve_length(), 0.0]]), FlatGround(), params)
    mean, p95 = naive_follow_path(sk, rm, straight, s_curve(), FlatGround())
    print("\nnaive: in-place cycle carried along the S-curve by its root (Follow Path + baked cycle):")
    ours = clips["S-curve"].metrics
    print(f"  skate mean {mean:.2f} cm/s, p95 {p95:.2f} cm/s   vs path walk {ours['skate_mean_cm_s']:.2f} / "
          f"{ours['skate_p95_cm_s']:.2f} cm/s")
    if "--plots" in sys.argv:
        out = Path(sys.argv[sys.argv.index("--plots") + 1])
        plots(out, sk, rm, clips)
        print(f"plots written to {out}/path_walk_*.png")
    return 0


def plots(out_dir: Path, sk, rm, clips: dict) -> None:
    """PNG figures: the vertical reaction force over a step for plane / up / down (f_v), the COM
    over a walk, and stick-figure contact sheets (side view) of the S-curve and the stairs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from procanim_addon.walk import forces as fr

    out_dir.mkdir(parents=True, exist_ok=True)
    p = PathWalkParams()
    tau = np.linspace(0, 1, 400)
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.6))
    for mode, colour in (("plane", "k"), ("up", "tab:blue"), ("down", "tab:red")):
        f = fr.harmonics(tau, fr.vertical_coeffs(p, mode))
        ax[0].plot(tau, f, colour, label=f"{mode} (f_v = {p.forces.f_v[mode]:g})")
    ax[0].set(xlabel="τ (heel strike → toe off)", ylabel="F_y / body weight (s_y = 1)",
              title="Vertical reaction force of one foot (Tsutsuguchi et al. 2000, eq. 6b)")
    ax[0].legend(fontsize=8)
    ax[0].grid(alpha=0.3)
    clip = clips["S-curve"]
    pose = sk.fk(clip.locations, clip.rotations)
    t = (clip.frames - clip.frames[0]) / clip.fps
    ax[1].plot(t, pose[:, sk.index("hips"), 2, 3] * 100, "k", label="pelvis height (cm)")
    for side, colour in (("L", "tab:blue"), ("R", "tab:red")):
        ax[1].plot(t, pose[:, sk.index(f"foot.{side}"), 2, 3] * 100 + 60, colour, lw=0.8, label=f"ankle {side} + 60 cm")
    ax[1].set(xlabel="time (s)", title="S-curve walk: pelvis and ankles")
    ax[1].legend(fontsize=8)
    ax[1].grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "path_walk_forces.png", dpi=110)
    plt.close(fig)
    for name in ("S-curve", "stairs"):
        clip = clips[name]
        pose = sk.fk(clip.locations, clip.rotations)
        heads, tails = pose[..., :3, 3], sk.tails_of(pose)
        frames = np.linspace(0, clip.frame_count - 1, 16).astype(int)
        fig, axes = plt.subplots(2, 8, figsize=(16, 5.2))
        for ax1, f in zip(axes.ravel(), frames):
            c = heads[f, sk.index("hips")]
            for b in range(len(sk)):
                colour = "tab:blue" if sk.names[b].endswith(".L") else "tab:red" if sk.names[b].endswith(".R") else "k"
                ys = [heads[f, b, 1] - c[1], tails[f, b, 1] - c[1]]
                ax1.plot(ys, [heads[f, b, 2], tails[f, b, 2]], colour, lw=1.5)
            ax1.set(xlim=(-1.0, 1.0), ylim=(min(0.0, c[2] - 1.0), c[2] + 1.0), aspect="equal", xticks=[], yticks=[])
            ax1.set_title(f"frame {int(clip.frames[f])}", fontsize=8)
            if name == "stairs":
                s = np.linspace(c[1] - 1.0, c[1] + 1.0, 400)
                ax1.plot(s - c[1], cases_stairs().profile(-s), "0.5", lw=1)
            else:
                ax1.axhline(0.0, color="0.5", lw=1)
        fig.suptitle(f"Path walk, {name} — side view (−y to the left), left limbs blue")
        fig.tight_layout()
        fig.savefig(out_dir / f"path_walk_{name.lower().replace('-', '_')}_sheet.png", dpi=90)
        plt.close(fig)


def cases_stairs() -> StairsGround:
    return StairsGround(start=1.5, tread=0.30, riser=0.16, steps_up=5, landing=1.0, steps_down=5)


def s_curve_length() -> float:
    return build_path(s_curve(), FlatGround()).length


if __name__ == "__main__":
    raise SystemExit(main())
