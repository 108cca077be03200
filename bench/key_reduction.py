"""Key reduction (issue 23) against generation, side by side — no Blender needed:

    <venv>/bin/python bench/key_reduction.py [--frames 1000] [--tolerance 0.001] [--repeat 1]
    <venv>/bin/python bench/key_reduction.py --roughness   # the path walk's frame-scale roughness
    <venv>/bin/python bench/key_reduction.py --bound       # the duck's keys with the whole tolerance per curve

For each case the engine generates the clip (timed), finds the feet's contacts and the marks
(timed with the reduction) and plans the keys at the tolerance (``procanim_addon.keys``): the
reduction's CPU time is printed beside the generation's, per frame too, with the keys written as a
share of the dense bake's, the largest deform error measured by the engine's copy of Blender's
evaluation and the skate added to planted feet.

Cases: a path walk sized to about ``--frames`` frames on ProcAnim's human (22 bones) and on a
Rigify-metarig-like rig of 159 bones (bench/path_walk_engine.py's: the forward model carries the
130 idle bones rigidly); the duck's walk (keyed every 3 frames) and a handshake's initiator for the
key shares; and keys on the controls of tests/engine/test_controls.py's small Rigify-like rig
swaying for ``--frames`` frames — FK controls, and IK controls (the IK leg solved by the keys' model
of the chain), where "gen" is the conversion onto the controls. Times are CPU seconds of this
process (all threads) and vary with the machine's load: compare the columns of one run.

``--roughness`` prints, for the human's path walk, how far each bone's tail strays from a cubic
fitted over 7 frames around it (mm: median, 90th percentile, largest) — what no smooth curve between
keys a few frames apart can follow within the tolerance — and where the knee strays most: the frames
around each heel strike and lift-off, with the hip–ankle distance as a fraction of the leg.

``--bound`` gives each of the duck's key groups the whole tolerance on its own bone's points (every
other curve exact, no skate bound, no forced key) and merges its keys from every dense key: the keys
each curve keeps even then, a bound the joint reduction cannot beat.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from path_walk_engine import big_rig, s_curve  # noqa: E402

from procanim_addon import keys  # noqa: E402
from procanim_addon.clip import Clip  # noqa: E402
from procanim_addon.duck import DuckParams, generate_duck_walk  # noqa: E402
from procanim_addon.ground import FlatGround  # noqa: E402
from procanim_addon.handshake import HandshakeParams, generate_handshake  # noqa: E402
from procanim_addon.rigs import duck_skeleton, human_skeleton  # noqa: E402
from procanim_addon.walk import PathWalkParams, generate_path_walk  # noqa: E402

STEP_M = 1.0 / 24 * 1.2  # metres of path per frame at the default cadence, to size the curve


def timed(fn, repeat: int):
    """(result, best CPU seconds, best wall seconds) of ``repeat`` calls."""
    best_cpu = best_wall = np.inf
    out = None
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        out = fn()
        best_cpu, best_wall = min(best_cpu, time.process_time() - c0), min(best_wall, time.perf_counter() - w0)
    return out, best_cpu, best_wall


def path_walk(sk, rm, frames: int):
    length = frames * STEP_M
    path = s_curve(length=length, amp=1.5, waves=max(1.0, length / 10.0), n=max(400, frames))
    return generate_path_walk(sk, rm, path, FlatGround(), PathWalkParams())


def walk_case(label, sk, rm, frames: int, tolerance: float, repeat: int):
    clip, gen_cpu, gen_wall = timed(lambda: path_walk(sk, rm, frames), repeat)
    foot_list = keys.feet(sk, rm)

    def reduce():
        contacts, marks = keys.walk_contacts(sk, clip, foot_list, FlatGround())
        return keys.plan_clip_keys(clip, sk, tolerance, marks=marks, contacts=contacts, feet=foot_list)

    keyed, red_cpu, red_wall = timed(reduce, repeat)
    report(label, clip, keyed, gen_cpu, gen_wall, red_cpu, red_wall)


def report(label, clip, keyed, gen_cpu, gen_wall, red_cpu, red_wall):
    m = keyed.metrics()
    per_frame = red_cpu / clip.frame_count * 1000
    print(f"{label:28s} {clip.frame_count:6d} {len(keyed.curves):6d} {gen_cpu:7.2f} {red_cpu:7.2f} "
          f"{per_frame:7.3f} {red_cpu / gen_cpu:6.2f} {gen_wall:7.2f} {red_wall:7.2f} "
          f"{m['keys_percent_of_dense']:6.1f} {m['key_error_max_mm']:6.3f} {m['key_skate_added_cm_s']:6.3f} "
          f"{'yes' if m['contacts_exact'] else 'no':>5s}")


def roughness(frames: int) -> None:
    """Deviation (mm) of each bone's tail from the local cubic through the 7 frames around it, and
    the frames where the knee deviates most, by their place in the step."""
    sk, rm = human_skeleton()
    clip = path_walk(sk, rm, frames)
    pose = sk.fk(clip.locations, clip.rotations)
    tails = sk.tails_of(pose)
    t = np.arange(-3, 4)
    fit = np.vander(t, 4) @ np.linalg.pinv(np.vander(t, 4))  # least-squares cubic over 7 frames

    def off(p):  # (F, ...) → the middle frame's distance from the cubic, frames 3 … F − 4
        windows = np.lib.stride_tricks.sliding_window_view(p, 7, axis=0)
        return np.abs(windows[..., 3] - windows @ fit[3])

    print(f"path walk, {clip.frame_count} frames: bone tails' distance from a cubic over 7 frames (mm)")
    for name in ("hips", "chest", "upper_arm.L", "forearm.L", "thigh.L", "shin.L", "foot.L", "toe.L"):
        d = np.linalg.norm(off(tails[:, sk.index(name)]), axis=-1) * 1000
        print(f"  {name:12s} median {np.median(d):6.2f}  p90 {np.percentile(d, 90):6.2f}  max {d.max():6.2f}")
    foot_list = keys.feet(sk, rm)
    contacts, _ = keys.walk_contacts(sk, clip, foot_list, FlatGround())
    th, sh, ft = (sk.index(f"{role}.L") for role in ("thigh", "shin", "foot"))
    knee = np.linalg.norm(off(tails[:, th]), axis=-1) * 1000
    hip, ankle = pose[:, th, :3, 3], pose[:, ft, :3, 3]
    reach = np.linalg.norm(ankle - hip, axis=-1) / (sk.lengths[th] + sk.lengths[sh])
    frames_ = clip.frames[3:-3]
    starts = np.array(sorted(c.start for c in contacts if c.foot.side == "L" and c.start > clip.frames[0]))
    ends = np.array(sorted(c.end for c in contacts if c.foot.side == "L" and c.end < clip.frames[-1]))
    print("  the left knee (thigh tail) by its frame relative to the left foot's heel strike and lift-off "
          "(mm off the cubic: median over the steps; hip-ankle distance / leg):")
    for name, events in (("heel strike", starts), ("lift-off", ends)):
        for k in range(-5, 3):
            rows = np.nonzero(np.isin(frames_, events + k))[0]
            if len(rows):
                print(f"    {name:11s} {k:+d}: knee {np.median(knee[rows]):5.1f} mm, "
                      f"reach {np.median(reach[rows + 3]):.4f}")
    stance = np.zeros(len(frames_), dtype=bool)
    for c in contacts:
        if c.foot.side == "L":
            stance |= (frames_ >= c.start + 3) & (frames_ <= c.end - 5)
    distance = off(np.linalg.norm(ankle - hip, axis=-1)) * 1000
    print(f"    mid-stance (contact + 3 … lift-off − 5): knee median {np.median(knee[stance]):.2f} mm, "
          f"p90 {np.percentile(knee[stance], 90):.2f}; reach median {np.median(reach[3:-3][stance]):.4f}; "
          f"hip-ankle distance off its cubic {np.median(distance[stance]):.2f} mm")


def duck_bound(tolerance: float) -> None:
    """Keys of each duck key group merged alone with the whole tolerance on its own bone's points."""
    from procanim_addon.keys.dense import dense_reference, sample_frames
    from procanim_addon.keys.layout import clip_channels
    from procanim_addon.keys.place import merge

    sk, rm = duck_skeleton()
    clip = generate_duck_walk(sk, rm, DuckParams())
    channels, values = clip_channels(clip)
    model = keys.DeformForward(sk, channels)
    samples = sample_frames(clip.frames)
    reference = dense_reference(clip.frames, values, samples)
    top = model.top_down(reference)
    allowed = np.isin(samples, clip.frames)
    total = 0
    print(f"duck walk: {len(clip.frames)} dense keys per curve; each group alone with {tolerance * 1000:g} mm:")
    for level in range(len(top.levels)):
        targets, maps = top.targets(level, reference)  # every other curve dense: no compensation
        for g in top.levels[level]:
            fixed = np.zeros(len(samples), dtype=bool)
            fixed[[0, -1]] = True
            kept = merge(samples, targets[g].T, np.transpose(maps[g], (1, 2, 0)), np.full(len(samples), tolerance),
                         allowed, fixed)
            ch = channels[model.groups[g][0]]
            total += len(kept) * len(model.groups[g])
            print(f"  {ch.bone + ' ' + ch.prop:28s} {len(kept):4d} keys ({100 * len(kept) / allowed.sum():5.1f} %)")
    print(f"  all groups: {100 * total / values.size:.1f} % of the dense keys")


def controls_case(mode: str, frames: int, tolerance: float, repeat: int) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "engine"))
    from test_controls import mini_rig
    from test_keys_controls import swaying

    from procanim_addon.controls import convert

    rig = mini_rig(mode)
    sk, intended = swaying(rig, frames)
    converted, conv_cpu, conv_wall = timed(lambda: convert(rig, sk, intended, mode), repeat)
    clip = Clip.rest(sk.names, np.arange(1.0, frames + 1), 24.0)  # the frames and rate the keys are on
    keyed, red_cpu, red_wall = timed(lambda: keys.plan_control_keys(rig, sk, converted, clip, tolerance), repeat)
    report(f"{mode} controls, test rig", clip, keyed, conv_cpu, conv_wall, red_cpu, red_wall)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=1000)
    ap.add_argument("--tolerance", type=float, default=keys.DEFAULT_TOLERANCE_M)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--roughness", action="store_true")
    ap.add_argument("--bound", action="store_true")
    args = ap.parse_args()
    if args.roughness:
        roughness(args.frames)
        return 0
    if args.bound:
        duck_bound(args.tolerance)
        return 0
    print(f"key reduction at {args.tolerance * 1000:g} mm, numpy {np.__version__}; CPU seconds, then wall seconds")
    print(f"{'case':28s} {'frames':>6s} {'curves':>6s} {'gen s':>7s} {'keys s':>7s} {'ms/fr':>7s} {'ratio':>6s} "
          f"{'gen w':>7s} {'keys w':>7s} {'keys %':>6s} {'err mm':>6s} {'skate':>6s} {'exact':>5s}")
    walk_case("path walk, human (22)", *human_skeleton(), args.frames, args.tolerance, args.repeat)
    walk_case("path walk, Rigify-like (159)", *big_rig(), args.frames, args.tolerance, args.repeat)
    sk, rm = duck_skeleton()
    clip, gen_cpu, gen_wall = timed(lambda: generate_duck_walk(sk, rm, DuckParams()), args.repeat)
    foot_list = keys.feet(sk, rm)

    def duck():
        contacts, marks = keys.walk_contacts(sk, clip, foot_list, FlatGround())
        return keys.plan_clip_keys(clip, sk, args.tolerance, marks=marks, contacts=contacts, feet=foot_list)

    keyed, red_cpu, red_wall = timed(duck, args.repeat)
    report("duck walk (every 3 frames)", clip, keyed, gen_cpu, gen_wall, red_cpu, red_wall)
    a = (*human_skeleton(), np.eye(4))
    b_place = np.eye(4)
    b_place[:3, :3] = np.diag([-1.0, -1.0, 1.0])
    b_place[1, 3] = -1.0
    b = (*human_skeleton(), b_place)
    (ci, _, rep), gen_cpu, gen_wall = timed(lambda: generate_handshake(a, b, HandshakeParams()), args.repeat)
    keyed, red_cpu, red_wall = timed(
        lambda: keys.plan_clip_keys(ci, a[0], args.tolerance, marks=keys.handshake_marks(
            rep["phase_starts_initiator"], ci.frames)), args.repeat)
    report("handshake, initiator", ci, keyed, gen_cpu, gen_wall, red_cpu, red_wall)
    controls_case("FK", args.frames, args.tolerance, args.repeat)
    controls_case("IK", args.frames, args.tolerance, args.repeat)
    print("ms/fr: the reduction's CPU milliseconds per frame; ratio: reduction's CPU time / generation's; "
          "w: wall seconds; keys %: of the dense bake's; err: largest deform error (engine's copy of Blender's "
          "evaluation); skate: mean horizontal speed added to the sole points over every contact frame (cm/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
