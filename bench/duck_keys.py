"""Why the duck walk keeps about half its keys at 1 mm (issue 23) — no Blender needed:

    <venv>/bin/python bench/duck_keys.py [--tolerance 0.001]

The duck's dense bake keys every curve every 3 frames (the article's key interval): at Speed 5 that
is 8 keys per gait cycle of 24 frames, and the issue's floor of 25 % of the dense keys is 2 keys per
gait cycle per curve. Four measurements, on the article's Joy (the demo's first duck) and Neutral on
ProcAnim's duck and on Rigify's bird metarig (tests/rig_samples.py):

0. **Presets**: the keys written at the tolerance, as a share of the dense bake's, for every preset on
   both rigs, keyed every 3 frames and every frame, and the keys of the second over the first.
1. **Shape**: per key group, what the group moves over one gait cycle in its 8 keys — the amplitude
   (mm, at the farthest point the bone carries: the key reduction's error map) of the cycle's
   harmonics 1–4. Harmonic 2 is the article's bounce (sin 2θ); harmonic 4 alternates key by key,
   the finest a key every 3 frames can show.
2. **Keys per group** at the tolerance (keyed every 3 frames): the joint reduction
   (``keys.plan_clip_keys``); each group alone with the whole tolerance on its own points (every
   other curve exact) by merging (``keys/place.py``, as ``bench/key_reduction.py --bound``); the
   fewest keys any placement on the dense keys can keep with the same fitted segments (dynamic
   programming over every segment); the fewest with keys on any frame. Then the joint reduction of
   the same walk keyed on every frame, in keys per gait cycle per curve, and the joint reduction
   without the planted feet's bounds (no contacts given: no skate bound, no forced contact key).
3. **Sines**: the fewest keys per gait cycle (any placement on the dense keys, fitted segments) that
   hold Blender's curve through a sine sampled every 3 frames within the tolerance, by amplitude —
   a sine of the gait cycle (the body's yaw, a leg's swing) and of half of it (the bounce).
4. **Stepping only**: the walk with no bounce, no turn and no foot pitch (Weight 10, rotation gain 0):
   the keys the legs need to step at all.
5. **Between keys**: the dense bake keyed every 3 frames as Blender plays it (its FK rotations
   interpolated between keys) against the walk itself, on the frames between keys; and the planted
   ankles' mean horizontal speed in the stance on every frame, keyed every 3 frames and every frame.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import rig_samples  # noqa: E402

from procanim_addon import keys  # noqa: E402
from procanim_addon import transforms as tf  # noqa: E402
from procanim_addon.duck import PRESETS, DuckParams, article_channels, generate_duck_walk  # noqa: E402
from procanim_addon.fcurves import evaluate  # noqa: E402
from procanim_addon.ground import FlatGround  # noqa: E402
from procanim_addon.keys.dense import dense_reference, sample_frames  # noqa: E402
from procanim_addon.keys.layout import clip_channels  # noqa: E402
from procanim_addon.keys.place import merge, segment_costs  # noqa: E402
from procanim_addon.rig_roles import detect  # noqa: E402
from procanim_addon.rigs import duck_skeleton  # noqa: E402
from procanim_addon.skeleton import Skeleton  # noqa: E402

CYCLE_KEYS = 8  # keys per gait cycle at Speed 5, 24 fps, a key every 3 frames


def bird_metarig():
    bones, _ = rig_samples.rigify_bird()
    sk = Skeleton.from_bones(rig_samples.bone_dicts(bones))
    return sk, detect(sk.names, {b["name"]: b["parent"] for b in bones}, skeleton=sk)


def preset(name: str, **kw) -> DuckParams:
    a, s, w, d = PRESETS[name][1]
    return DuckParams(**{"amplitude": a, "speed": s, "weight": w, "direction": d, **kw})


def reduce(sk, rm, clip, tolerance, planted=True):
    """The joint reduction; ``planted=False``: without the feet's contacts (no skate bound on the
    planted feet, no forced contact keys)."""
    foot_list = keys.feet(sk, rm)
    contacts, marks = keys.walk_contacts(sk, clip, foot_list, FlatGround())
    if not planted:
        contacts, marks = [], []
    return keys.plan_clip_keys(clip, sk, tolerance, marks=marks, contacts=contacts, feet=foot_list)


def fewest(x, target, maps, bound, candidates) -> int:
    """Fewest keys (first and last sample kept) on ``candidates`` sample indices whose fitted segments
    keep every sample within ``bound``: dynamic programming over every segment."""
    a, b = np.triu_indices(len(candidates), 1)
    ok = segment_costs(x, target, maps, bound, candidates[a], candidates[b]) <= 1.0
    best = np.full(len(candidates), 10**9)
    best[0] = 1
    for j in range(1, len(candidates)):
        prev = a[(b == j) & ok]
        if len(prev):
            best[j] = best[prev].min() + 1
    return int(best[-1])


class Groups:
    """The clip's key groups, each alone against the dense bake as Blender plays it (every frame)."""

    def __init__(self, sk, clip):
        self.channels, values = clip_channels(clip)
        self.model = keys.DeformForward(sk, self.channels)
        self.x = sample_frames(clip.frames)
        self.reference = dense_reference(clip.frames, values, self.x)
        self.on_key = np.isin(self.x, clip.frames)
        self.values = values

    def each(self):
        """(name, channel count, target (C, S), maps (3, C, S)) per group, every other curve dense."""
        top = self.model.top_down(self.reference)
        for level in range(len(top.levels)):
            targets, maps = top.targets(level, self.reference)
            for g in top.levels[level]:
                ch = self.channels[self.model.groups[g][0]]
                prop = "loc" if ch.prop == "location" else "rot"
                yield f"{ch.bone} {prop}", len(self.model.groups[g]), targets[g].T.copy(), \
                    np.transpose(maps[g], (1, 2, 0)).copy()


def harmonics(target, maps, on_key) -> np.ndarray:
    """Amplitudes (mm) of harmonics 1–4 of one gait cycle of the group's motion at its points: the
    change from the cycle's mean through the error map, over the keys of the second cycle."""
    keys_at = np.nonzero(on_key)[0][CYCLE_KEYS : 2 * CYCLE_KEYS + 1]  # a cycle and the next one's first key
    ramp = np.outer(target[:, keys_at[-1]] - target[:, keys_at[0]], np.arange(CYCLE_KEYS + 1) / CYCLE_KEYS)
    change = (target[:, keys_at] - ramp)[:, :-1]  # the root's travel taken off
    change = change - change.mean(axis=1, keepdims=True)
    moved = np.einsum("ics,cs->si", maps[:, :, keys_at[:-1]], change) * 1000.0  # (8, 3) mm
    spectrum = np.fft.rfft(moved, axis=0) / CYCLE_KEYS
    spectrum[1:-1] *= 2.0
    return np.linalg.norm(np.abs(spectrum), axis=1)[1:]


def presets_table(rigs: dict, tolerance):
    print(f"keys written at {tolerance * 1000:g} mm (% of the dense bake's): keyed every 3 frames, every frame, "
          "and the keys of the second / the first")
    for label, (sk, rm) in rigs.items():
        for name in PRESETS:
            keyed = [reduce(sk, rm, generate_duck_walk(sk, rm, preset(name, key_interval=k)), tolerance)
                     for k in (3, 1)]
            shares = [f"{100 * k.keys_written / k.keys_dense:5.1f} %" for k in keyed]
            print(f"  {label:24s} {name:16s} {shares[0]}  {shares[1]}  "
                  f"{keyed[1].keys_written / keyed[0].keys_written:5.2f}")


def groups_table(label, sk, rm, params, tolerance):
    clip = generate_duck_walk(sk, rm, params)
    keyed = reduce(sk, rm, clip, tolerance)
    joint = {}
    for c in keyed.curves:
        joint.setdefault(f"{c.group} {'loc' if c.data_path.endswith('location') else 'rot'}", len(c))
    every = reduce(sk, rm, generate_duck_walk(sk, rm, params.__class__(**{**params.__dict__, "key_interval": 1})),
                   tolerance)
    free = reduce(sk, rm, clip, tolerance, planted=False)
    cycles = (params.frame_end - params.frame_start) / (params.fps / params.s)
    def share(k):
        return f"{k.keys_written}/{k.keys_dense} = {100 * k.keys_written / k.keys_dense:.1f} %"

    print(f"\n{label}: {len(clip.frames)} dense keys per curve ({CYCLE_KEYS} per gait cycle); {share(keyed)}; "
          f"keyed every frame: {share(every)} "
          f"({every.keys_written / len(every.curves) / cycles:.2f} keys per cycle per curve, "
          f"{keyed.keys_written / len(keyed.curves) / cycles:.2f} keyed every 3 frames); without the planted "
          f"feet's bounds: {100 * free.keys_written / free.keys_dense:.1f} %")
    print(f"  {'group':14s} {'harmonics 1-4 (mm at its farthest point)':>42s}   {'joint':>5s} {'alone':>5s} "
          f"{'fewest':>6s} {'any frame':>9s}")
    g = Groups(sk, clip)
    bound = np.full(len(g.x), tolerance)
    fixed = np.zeros(len(g.x), dtype=bool)
    fixed[[0, -1]] = True
    sums = np.zeros(4)
    for name, count, target, maps in g.each():
        amp = harmonics(target, maps, g.on_key)
        alone = len(merge(g.x, target, maps, bound, g.on_key, fixed))
        few = fewest(g.x, target, maps, bound, np.nonzero(g.on_key)[0])
        anywhere = fewest(g.x, target, maps, bound, np.arange(len(g.x)))
        sums += count * np.array([joint.get(name, 0), alone, few, anywhere])
        print(f"  {name:14s} {' '.join(f'{v:9.2f}' for v in amp)}   {joint.get(name, 0):5d} {alone:5d} {few:6d} "
              f"{anywhere:9d}")
    share = 100 * sums / g.values.size
    print(f"  {'all':14s} {'':42s}   {share[0]:4.1f}% {share[1]:4.1f}% {share[2]:5.1f}% {share[3]:8.1f}%")


def sines(tolerance):
    """Fewest keys per gait cycle for a sine keyed every 3 frames, by amplitude (one channel, mm)."""
    x = np.arange(0.0, 121.0)
    dense = np.arange(0.0, 121.0, 3.0)
    on_key = np.nonzero(np.isin(x, dense))[0]
    maps = np.zeros((3, 1, len(x)))
    maps[0, 0] = 1.0
    bound = np.full(len(x), tolerance)
    print(f"\nsines keyed every 3 frames ({CYCLE_KEYS} keys per cycle), fewest keys per gait cycle within "
          f"{tolerance * 1000:g} mm (the floor of 25 % is 2):")
    print(f"  {'amplitude mm':>12s} {'sin θ (cycle)':>14s} {'sin 2θ (bounce)':>16s}")
    for amp_mm in (0.5, 1, 2, 5, 10, 20, 50):
        row = []
        for k in (1, 2):
            y = amp_mm / 1000.0 * np.sin(k * 2 * np.pi * dense / 24.0)
            ref = evaluate(dense, y[:, None], x)[:, 0]
            ref[on_key] = y
            row.append((fewest(x, ref[None], maps, bound, on_key) - 1) / 5.0)
        print(f"  {amp_mm:12g} {row[0]:14.2f} {row[1]:16.2f}")


def played(sk, clip) -> np.ndarray:
    """Armature-space pose on every frame of the clip's dense bake as Blender plays it."""
    channels, values = clip_channels(clip)
    frames = np.arange(clip.frames[0], clip.frames[-1] + 1)
    v = evaluate(clip.frames, values, frames)
    loc = np.zeros((len(frames), len(sk), 3))
    rot = tf.quat_identity((len(frames), len(sk)))
    for c, ch in enumerate(channels):
        (loc if ch.prop == "location" else rot)[:, sk.index(ch.bone), ch.index] = v[:, c]
    return sk.fk(loc, rot)


def between_keys(label, sk, rm):
    """Per preset: how far (mm) the dense bake keyed every 3 frames, as Blender plays it, strays from
    the walk itself (keyed on every frame) on the frames between its keys — the largest over the
    bones' heads and tails, median and largest over the frames — and the planted ankles' speed
    (cm/s) over the frame pairs of the gait's stance (the article's lift 0 on both frames), keyed
    every 3 frames and every frame."""
    for name in PRESETS:
        poses, slide = [], []
        for interval in (3, 1):
            params = preset(name, key_interval=interval)
            clip = generate_duck_walk(sk, rm, params)
            pose = played(sk, clip)
            frames = np.arange(clip.frames[0], clip.frames[-1] + 1)
            ch = article_channels(params, (frames - params.frame_start) * params.s * 2 * np.pi / params.fps)
            speeds = []
            for side in "LR":
                ankle = pose[:, sk.index(rm.get(f"foot.{side}")), :2, 3]
                planted = ch[f"foot_lift_{side}"] <= 1e-12
                both = planted[1:] & planted[:-1]
                speeds.append(np.linalg.norm(np.diff(ankle, axis=0), axis=-1)[both] * clip.fps)
            poses.append(np.concatenate([pose[..., :3, 3], sk.tails_of(pose)], axis=1))
            slide.append(np.concatenate(speeds).mean() * 100)
        off = np.linalg.norm(poses[0] - poses[1], axis=-1).max(axis=1)[np.mod(np.arange(len(poses[0])), 3) != 0]
        print(f"  {label:24s} {name:16s} {np.median(off) * 1000:7.2f} {off.max() * 1000:7.2f}   "
              f"{slide[0]:7.4f} {slide[1]:7.4f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tolerance", type=float, default=keys.DEFAULT_TOLERANCE_M)
    args = ap.parse_args()
    tol = args.tolerance
    duck, bird = duck_skeleton(), bird_metarig()
    presets_table({"ProcAnim's duck": duck, "Rigify's bird metarig": bird}, tol)
    groups_table("Joy, ProcAnim's duck", *duck, preset("JOY"), tol)
    groups_table("Neutral, ProcAnim's duck", *duck, preset("NEUTRAL"), tol)
    groups_table("Joy, Rigify's bird metarig", *bird, preset("JOY"), tol)
    groups_table("stepping only (Weight 10, rotation gain 0), ProcAnim's duck", *duck,
                 preset("NEUTRAL", weight=10.0, rotation_gain_deg=0.0), tol)
    sines(tol)
    print("\nbetween keys: the every-3-frame bake as Blender plays it against the walk (mm: median, largest); "
          "the planted ankles' speed in the stance (cm/s: keyed every 3 frames, every frame)")
    between_keys("ProcAnim's duck", *duck)
    between_keys("Rigify's bird metarig", *bird)
    print("\njoint: the reduction's keys per curve of the group; alone: merged with the whole tolerance on the "
          "group's own points, every other curve exact; fewest: the fewest keys on the dense keys any placement "
          "can keep with the same fitted segments; any frame: the fewest with keys on any frame. 'all': share "
          "of the dense keys.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
