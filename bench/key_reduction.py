"""Key reduction (issue 23) against generation, side by side — no Blender needed:

    <venv>/bin/python bench/key_reduction.py [--frames 1000] [--tolerance 0.001] [--repeat 1]
    <venv>/bin/python bench/key_reduction.py --roughness   # the path walk's frame-scale roughness
    <venv>/bin/python bench/key_reduction.py --bound       # the duck's keys with the whole tolerance per curve
    <venv>/bin/python bench/key_reduction.py --placement   # merging against the fewest keys, curve by curve
    <venv-bpy>/bin/python bench/key_reduction.py --rigify-ik  # the keys' IK chain model against Blender's IK

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

``--placement`` takes a path walk of 300 frames and a few of its key groups, each alone with the
whole tolerance on its own bone's points: the keys bottom-up merging keeps (``keys/place.py``), the
fewest keys any placement can keep with the same fits and bounds (dynamic programming over every
segment of up to 40 frames), and the fewest with the dense curve's own slopes at the keys instead of
fitted ones.

``--rigify-ik`` (a Python with ``bpy``) generates a Rigify human, poses its left leg's IK control, the
first IK control's twist and the torso at random (pose A), then changes them by a few millimetres
(pose B) and compares the knee Blender's IK solver gives at B with the one the keys' model of the chain
(``procanim_addon/keys/ik_chains.py``) predicts from A's evaluated chain (the pins) and B's controls —
with the solver's stretch response (measured in Blender, as the bake does) and without.
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


def placement(frames: int = 300, window: int = 40, tolerance: float = 0.001) -> None:
    """Keys of a few groups alone: merging, the fewest with fitted slopes, the fewest with dense slopes."""
    from procanim_addon.curves import hermite_basis
    from procanim_addon.keys.layout import clip_channels
    from procanim_addon.keys.place import merge, segment_costs

    sk, rm = human_skeleton()
    clip = path_walk(sk, rm, frames)
    channels, values = clip_channels(clip)
    model = keys.DeformForward(sk, channels)
    top = model.top_down(values)
    x = clip.frames.astype(float)
    n = len(x)
    slopes = np.gradient(values, x, axis=0)  # the dense curve's own slopes (central differences)

    def dense_slope_costs(target, slope, maps, starts, ends):
        """Largest bounded error of segments with the dense values and slopes at both ends."""
        out = np.empty(len(starts))
        for i, (a, b) in enumerate(zip(starts, ends)):
            d = x[b] - x[a]
            h00, h10, h01, h11 = hermite_basis((x[a : b + 1] - x[a]) / d)
            curve = np.outer(target[:, a], h00) + np.outer(target[:, b], h01) + d * (
                np.outer(slope[:, a], h10) + np.outer(slope[:, b], h11))
            moved = np.einsum("ics,cs->is", maps[:, :, a : b + 1], curve - target[:, a : b + 1])
            out[i] = np.sqrt((moved * moved).sum(axis=0)).max() / tolerance
        return out

    def fewest(costs) -> int:
        """Fewest keys (both ends kept) over segments of up to ``window`` frames, from their costs."""
        best = np.full(n, 10**9)
        best[0] = 1
        for b in range(1, n):
            a = np.arange(max(0, b - window), b)
            ok = costs(a, np.full(len(a), b)) <= 1.0
            if ok.any():
                best[b] = best[a[ok]].min() + 1
        return int(best[-1])

    wanted = ("hips location", "thigh.L rotation_quaternion", "shin.L rotation_quaternion",
              "foot.L rotation_quaternion", "upper_arm.L rotation_quaternion")
    print(f"path walk, {n} frames, each group alone with {tolerance * 1000:g} mm on its own points: keys kept")
    print(f"{'group':30s} {'merging':>8s} {'fewest':>8s} {'fewest, dense slopes':>21s}")
    for level in range(len(top.levels)):
        targets, maps = top.targets(level, values)  # every other curve dense
        for g in top.levels[level]:
            ch = channels[model.groups[g][0]]
            name = f"{ch.bone} {ch.prop}"
            if name not in wanted:
                continue
            target, mats = targets[g].T.copy(), np.transpose(maps[g], (1, 2, 0)).copy()
            bound = np.full(n, tolerance)
            fixed = np.zeros(n, dtype=bool)
            fixed[[0, -1]] = True
            merged = merge(x, target, mats, bound, np.ones(n, dtype=bool), fixed)
            fitted = fewest(lambda a, b, t=target, m=mats, c=bound: segment_costs(x, t, m, c, a, b))
            slope = slopes[:, model.groups[g]].T
            pinned = fewest(lambda a, b, t=target, s=slope, m=mats: dense_slope_costs(t, s, m, a, b))
            print(f"{name:30s} {len(merged):8d} {fitted:8d} {pinned:21d}")


def rigify_ik(trials: int = 8) -> None:
    """The knee of a generated Rigify human's left leg, Blender's IK against the keys' chain model."""
    import importlib

    import bpy

    addon_utils = importlib.import_module("addon_utils")  # after bpy: Blender's script modules are on the path

    sys.path.insert(0, str(ROOT / "tools"))
    from blender_install import install_extension

    from procanim_addon import transforms as tf
    from procanim_addon.keys.ik_chains import SolvingPose, dense_chains, find_chains

    module = install_extension("keys")
    control_rig = importlib.import_module(module + ".operators.control_rig")
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    assert bpy.ops.pose.rigify_generate() == {"FINISHED"}
    obj = bpy.context.active_object
    for pb in obj.pose.bones:
        if "IK_FK" in pb.keys():
            pb["IK_FK"] = 0.0
    rig = control_rig.read_control_rig(obj)
    stretch = control_rig.probe_ik_stretch(obj, rig)
    chains = find_chains(rig)
    chain = chains[rig.index("thigh_ik.L")]
    rng = np.random.default_rng(3)

    def basis(loc, q):
        m = np.eye(4)
        m[:3, :3] = tf.quat_to_mat3(tf.quat_normalize(np.asarray(q, float)))
        m[:3, 3] = loc
        return m

    def pose(bases):
        for name, m in bases.items():
            pb = obj.pose.bones[name]
            pb.rotation_mode = "QUATERNION"
            pb.location = m[:3, 3].tolist()
            pb.rotation_quaternion = tf.mat3_to_quat(m[:3, :3]).tolist()
        obj.update_tag()
        bpy.context.view_layer.update()
        return {pb.name: np.array(pb.matrix) for pb in obj.pose.bones}

    def solving(dense=None, response=None):
        state = SolvingPose(rig, 1, chains, dense, response)
        for i, name in enumerate(rig.names):
            if rig.is_control(i):
                state.set_basis(i, np.array(obj.pose.bones[name].matrix_basis)[None])
        return state

    owner = rig.names[chain.owner]
    print("left knee, Blender's IK at B against the keys' model (mm): reach = hip-target distance / leg")
    print(f"{'reach':>6s} {'moved':>7s} {'model':>7s} {'no stretch':>10s}")
    errors, without = [], []
    for _ in range(trials):
        a = {f"foot_ik.{s}": basis(rng.normal(0, 0.08, 3) + [0, -0.1, 0.2], np.r_[1, rng.normal(0, 0.2, 3)])
             for s in "LR"}
        a.update({f"thigh_ik.{s}": basis([0, 0, 0], [1, 0, rng.normal(0, 0.3), 0]) for s in "LR"})
        a["torso"] = basis(rng.normal(0, 0.03, 3), np.r_[1, rng.normal(0, 0.05, 3)])
        b = dict(a)
        b["foot_ik.L"] = a["foot_ik.L"] @ basis(rng.normal(0, 0.004, 3), [1, 0, 0, 0])
        b["thigh_ik.L"] = a["thigh_ik.L"] @ basis([0, 0, 0], [1, 0, 0.004, 0])
        b["torso"] = a["torso"] @ basis(rng.normal(0, 0.002, 3), np.r_[1, rng.normal(0, 0.003, 3)])
        at_a = pose(a)
        pins = {chain.top: at_a[rig.names[chain.top]][None], chain.owner: at_a[owner][None]}
        dense = dense_chains(rig, solving(), pins)
        at_b = pose(b)
        knee = at_b[owner][:3, 3]
        predicted = [solving(dense, response).solve(chain)[1][0, :3, 3] for response in (stretch, None)]
        root, target = at_a[rig.names[chain.top]][:3, 3], at_a[rig.names[chain.target]][:3, 3]
        reach = np.linalg.norm(target - root) / (rig.lengths[chain.top] + rig.lengths[chain.owner])
        moved = np.linalg.norm(knee - at_a[owner][:3, 3]) * 1000
        errors.append(np.linalg.norm(predicted[0] - knee) * 1000 / moved)
        without.append(np.linalg.norm(predicted[1] - knee) * 1000 / moved)
        print(f"{reach:6.3f} {moved:7.3f} {np.linalg.norm(predicted[0] - knee) * 1000:7.4f} "
              f"{np.linalg.norm(predicted[1] - knee) * 1000:10.4f}")
    print(f"model's error / knee's change: largest {max(errors):.3f} with the stretch response, "
          f"{max(without):.3f} without")


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
    ap.add_argument("--rigify-ik", action="store_true")
    ap.add_argument("--placement", action="store_true")
    args = ap.parse_args()
    if args.placement:
        placement(tolerance=args.tolerance)
        return 0
    if args.rigify_ik:
        rigify_ik()
        return 0
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
