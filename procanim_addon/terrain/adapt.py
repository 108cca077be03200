"""Terrain adaptation: re-fit a clip made on one surface to another.

The method of Jo & Choi (2019), "A Real-time Motion Adaptation Method using Spatial Relationships
between a Virtual Character and Its Surrounding Environment" (Table 1, Eq. 1–4), with the final
IK step its Section V asks for. :func:`adapt_to_terrain` runs, in order:

1. source joints by FK; contact frames of feet (and hands) on the reference surface
   (:func:`_read_source`);
2. relationship descriptors around every joint on every frame, sampled on the reference and
   carried to the terrain (Eq. 1, 2: :mod:`.descriptors`) — the per-frame joint estimates
   (:func:`_joint_estimates`);
3. the damped update with bone lengths restored (Eq. 3, 4) at key frames, splined between them
   and refined until under tolerance (:mod:`.solve`);
4. joint positions back to bone rotations, swing only, twist kept (:mod:`.joints`);
5. the final fix (:mod:`.fix`): footprints level on one step, contacts on the terrain with their
   source gap, limbs lifted, hips raised, knees turned out where they would collide;
6. metrics (:func:`_metrics`): collisions per limb (and the source's own on its reference),
   bone-length error, contact error, penetration, solve times, and ``unfixed_frames``: the frame
   numbers where a limb still cuts the terrain (reported, not hidden).

Progress: every stage reports its share of the bake (``progress``, see :mod:`..progress`) inside
its loops — descriptor chunks of frames, damped iterations, refinement levels, bones, fix passes —
so a cancel is seen within one step.

All positions are in the armature's space, metres (see ``AdaptParams.unit_m`` for other units);
the surfaces are :class:`TerrainMesh` objects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..errors import InputError
from ..frames import CharacterFrame, character_frame
from ..limits import check_bake_size
from ..progress import ProgressFn, loop, no_progress
from ..skeleton import Skeleton
from . import descriptors as rd
from .collisions import colliding, collision_metrics, contact_allowance, limb_boxes
from .contact import Effector, effectors, gaps, point_gaps
from .fix import FinalFix
from .joints import JointSet, channels_from_positions, joint_set
from .mesh import TerrainMesh
from .params import AdaptParams
from .solve import SolveStats, UpdateRule, damped_solve, multires_solve
from .ticker import Ticker

# Share of the bake each stage reports over (0–1), about its share of the time; only the look of
# the progress bar depends on them.
SPAN_DESCRIPTORS = (0.02, 0.10)
SPAN_SOLVE = (0.10, 0.22)
SPAN_CHANNELS = (0.22, 0.27)
SPAN_BOX_GAPS = (0.27, 0.30)  # the limbs' source clearance, for the fix
SPAN_FIX = (0.30, 0.95)  # both footing policies (the second only when it is tried)
# Frames per chunk of the descriptor stage (one progress report each; the result does not depend on it).
DESCRIPTOR_CHUNK_FRAMES = 32
# RECON: the flat reference (none given) is at this percentile of the per-frame lowest foot point,
# so a foot point that dips for a frame or two (a heel in a roll) does not sink the ground; it
# reaches REFERENCE_MARGIN_M beyond the hips' path on every side.
REFERENCE_PERCENTILE = 5
REFERENCE_MARGIN_M = 10.0
# RECON: a foot (or hand) in contact that was inside its own ground in the source by up to this
# much (m; capture noise, a heel pressed into the floor) may be as deep in the terrain: contact, not
# collision. Deeper is a motion below its floor, and is lifted.
CONTACT_SINK_M = 0.01


def _channels_in_skeleton_order(skeleton, source: Clip):
    missing = [n for n in source.bone_names if not skeleton.has(n)]
    if missing:
        raise InputError(f"The action animates bones the armature does not have: {', '.join(missing[:5])}.")
    f, b = source.frame_count, len(skeleton)
    loc = np.zeros((f, b, 3))
    rot = tf.quat_identity((f, b))
    key_loc = np.zeros(b, bool)
    key_rot = np.zeros(b, bool)
    for k, name in enumerate(source.bone_names):
        i = skeleton.index(name)
        loc[:, i] = source.locations[:, k]
        rot[:, i] = tf.quat_normalize(source.rotations[:, k])
        key_loc[i] = source.key_location[k]
        key_rot[i] = source.key_rotation[k]
    if source.scales is not None and not np.allclose(source.scales, 1.0, atol=1e-6):
        raise InputError("The action scales bones; terrain adaptation keeps bone lengths and needs unscaled bones.")
    return loc, rot, key_loc, key_rot


def _same_mesh(a: TerrainMesh, b: TerrainMesh) -> bool:
    return a is b or (a.corners.shape == b.corners.shape and np.allclose(a.corners, b.corners, atol=1e-6))


@dataclass
class _Source:
    """Step 1: the source clip read on the skeleton. Channels and pose ``(F, B, …)``; per effector
    name, its contact points ``(F, P, 3)``, gap on the reference ``(F,)`` m (inf where no surface)
    and contact frames ``(F,)``; the body joints ``(F, J, 3)``."""

    cf: CharacterFrame
    loc: np.ndarray
    rot: np.ndarray
    key_loc: np.ndarray
    key_rot: np.ndarray
    pose: np.ndarray
    effs: list[Effector]
    legs: list[Effector]
    reference: TerrainMesh
    points: dict
    gap: dict
    contact: dict
    js: JointSet
    joints: np.ndarray


def adapt_to_terrain(skeleton, rigmap, source: Clip, reference: TerrainMesh | None, terrain: TerrainMesh,
                     params: AdaptParams | None = None, progress: ProgressFn = no_progress) -> Clip:
    """The source clip re-fitted from ``reference`` to ``terrain`` (see the module docstring).

    ``reference`` None is a flat ground at the motion's own ground height: the lowest foot point
    over the clip (its 5th percentile over frames). Raises :class:`InputError` for a clip over the
    bake size limits (:func:`..limits.check_bake_size`, before anything is allocated), a reference equal
    to the terrain, a motion that leaves the terrain, or (with ``refuse_infeasible``) a terrain the
    motion cannot climb; :class:`..progress.Cancelled` when ``progress`` asks for it.
    """
    p = params or AdaptParams()
    p.validate()
    check_bake_size(source.frame_count, len(skeleton), "The terrain adaptation")  # before any allocation
    if p.unit_m != 1.0:  # work in metres, hand back channels in the rig's own units
        sk_m, src_m, ref_m, ter_m = _in_metres(skeleton, source, reference, terrain, p.unit_m)
        out = adapt_to_terrain(sk_m, rigmap, src_m, ref_m, ter_m, replace(p, unit_m=1.0), progress)
        out.locations = out.locations / p.unit_m
        if out.object_locations is not None:
            out.object_locations = out.object_locations / p.unit_m
        return out
    t_start = time.perf_counter()
    progress(0.0)
    src = _read_source(skeleton, rigmap, source, reference, terrain, p)
    est = _joint_estimates(src, terrain, p, progress)
    stats = SolveStats()
    loc, rot, pose, joint_length_error = _solve(skeleton, src, est, p, stats, progress)
    t_solved = time.perf_counter()
    best, lb = _final_fix(skeleton, rigmap, src, terrain, loc, rot, pose, p, source.fps, progress)
    metrics = _metrics(skeleton, src, terrain, best, lb, p)
    # the frames the fix could not clear (a motion that does not fit the terrain there), by number
    metrics["unfixed_frames"] = [int(round(f)) for f in source.frames[np.any(best.hits, axis=1)]]
    metrics["joint_length_error_pct"] = joint_length_error
    metrics.update(frames_solved=stats.frames_solved, iterations_max=stats.iterations, refine_levels=stats.levels,
                   descriptors_per_joint=p.descriptors_per_joint, joints=src.js.count, footing_policy=best.policy)
    metrics["solve_time_s"] = time.perf_counter() - t_start
    metrics["descriptor_solve_time_s"] = t_solved - t_start  # steps 1-4: the paper's real-time part
    metrics["fps_solve"] = source.frame_count / max(metrics["solve_time_s"], 1e-9)
    clip = _result_clip(skeleton, source, src, best.loc, best.rot, metrics)
    progress(1.0)
    return clip


def _read_source(skeleton, rigmap, source: Clip, reference, terrain, p: AdaptParams) -> _Source:
    """Step 1: FK of the source, its reference surface, contacts on it, the feasibility check."""
    if source.frame_count < 1:
        raise InputError("The action has no frames to adapt.")
    cf = character_frame(skeleton, rigmap)
    loc_src, rot_src, key_loc, key_rot = _channels_in_skeleton_order(skeleton, source)
    pose_src = skeleton.fk(loc_src, rot_src)
    effs = effectors(skeleton, rigmap, hands=p.hands)
    legs = [e for e in effs if e.is_leg]
    if not legs:
        raise InputError("The rig has no complete leg (thigh, shin, foot): nothing to keep on the ground.")
    if reference is None:
        per_frame = np.min([e.points(skeleton, pose_src)[..., 2].min(axis=1) for e in legs], axis=0)
        low = float(np.percentile(per_frame, REFERENCE_PERCENTILE))
        hips_xy = pose_src[:, rigmap.index(skeleton, "hips"), :2, 3]
        span = float(np.ptp(hips_xy, axis=0).max()) + 2 * REFERENCE_MARGIN_M
        reference = TerrainMesh.flat(low, center=hips_xy.mean(axis=0), size=span, name="reference")
    elif _same_mesh(reference, terrain):
        raise InputError(
            f"The reference '{reference.name}' and the terrain '{terrain.name}' are the same surface: "
            "there is nothing to adapt. Pick the changed terrain, or leave the reference empty."
        )
    points = {e.name: e.points(skeleton, pose_src) for e in effs}
    src_gap, contact = {}, {}
    for e in effs:
        g, ok = gaps(points[e.name], reference, below=True)
        src_gap[e.name] = np.where(ok, g, np.inf)
        contact[e.name] = ok & (g < p.contact_height_m)
    _check_feasible(p, cf, effs, points, contact, reference, terrain, source)
    js = joint_set(skeleton, rigmap)
    return _Source(cf, loc_src, rot_src, key_loc, key_rot, pose_src, effs, legs, reference, points, src_gap, contact,
                   js, js.positions(skeleton, pose_src))


def _joint_estimates(src: _Source, terrain, p: AdaptParams, progress: ProgressFn) -> np.ndarray:
    """Step 2: per frame and joint, the position the descriptors carried to the terrain give
    (Eq. 1 on the reference, Eq. 2 on the terrain), ``(F, J, 3)``; the source joint where no
    descriptor reaches the terrain. Computed in chunks of frames (one progress report each)."""
    p_src = src.joints
    est = np.empty_like(p_src)
    starts = range(0, p_src.shape[0], DESCRIPTOR_CHUNK_FRAMES)
    tick = loop(progress, len(starts), *SPAN_DESCRIPTORS)
    for k, a in enumerate(starts):
        tick(k)
        chunk = p_src[a:a + DESCRIPTOR_CHUNK_FRAMES]
        flat = chunk.reshape(-1, 3)
        desc = rd.sample(src.reference, flat, src.cf.forward, p.descriptors_per_joint, p.radius0_m, p.spread_m)
        r = rd.encode(flat, desc)  # Eq. 1
        w = rd.weights(flat, desc, p.cutoff_ratio)
        moved = rd.carry(desc, terrain, src.cf.forward)
        w = np.where(moved.valid, w, 0.0)
        s = w.sum(axis=1, keepdims=True)
        w = np.where(s > 0, w / np.where(s > 0, s, 1.0), 0.0)
        e = rd.estimate(moved, r, w)  # Eq. 2
        est[a:a + DESCRIPTOR_CHUNK_FRAMES] = np.where(s > 0, e, flat).reshape(chunk.shape)
    return est


def _solve(skeleton, src: _Source, est: np.ndarray, p: AdaptParams, stats: SolveStats, progress: ProgressFn):
    """Steps 3–4: the damped update with lengths restored (Eq. 3, 4), multi-resolution over frames,
    then channels. Returns loc, rot, pose and the joints' length error (%)."""
    p_src, js = src.joints, src.js
    tick = Ticker(progress, *SPAN_SOLVE)

    carry = (js.parent, js.rest_length < p.rigid_length_ratio * src.cf.leg_length)
    rule = UpdateRule.of(p)

    def solve_frames(idx):
        solved = damped_solve(p_src[idx], est[idx], js.restore_lengths, rule, stats, tick, carry)
        return solved - p_src[idx]

    disp = multires_solve(src.joints.shape[0], solve_frames, p.key_interval, p.tolerance_m, stats)
    tick.done()
    p_new = js.restore_lengths(p_src + disp)
    joint_length_error = js.length_error(p_new)
    loc, rot, pose = channels_from_positions(skeleton, js, src.loc, src.rot, p_new,
                                             Ticker(progress, *SPAN_CHANNELS, rate=0.2).tick_at)
    return loc, rot, pose, joint_length_error


def _final_fix(skeleton, rigmap, src: _Source, terrain, loc, rot, pose, p: AdaptParams, fps: float,
               progress: ProgressFn):
    """Step 5 (:mod:`.fix`): the kept :class:`.fix.Trial` and the limb boxes. A footprint that
    straddles a step can leave it backward or toward its hip; both are tried when it matters and the
    result with fewer collisions (then the smaller contact error) is kept."""
    lo, hi = SPAN_FIX
    lb = limb_boxes(skeleton, rigmap, p.box_radius_ratio, soles=True)
    box_pts = lb.sample_points(skeleton, src.pose)
    box_gap_src = np.empty(box_pts.shape[:-1])  # (F, M, P)
    starts = range(0, len(box_pts), DESCRIPTOR_CHUNK_FRAMES)
    gap_tick = loop(progress, len(starts), *SPAN_BOX_GAPS)
    for k, a in enumerate(starts):
        gap_tick(k)
        box_gap_src[a:a + DESCRIPTOR_CHUNK_FRAMES] = point_gaps(box_pts[a:a + DESCRIPTOR_CHUNK_FRAMES], src.reference,
                                                                below=True)
    fix = FinalFix(skeleton=skeleton, joints=src.js, source_pose=src.pose, ends=src.effs, legs=src.legs,
                   source_gap=src.gap, contact=src.contact, reference=src.reference, terrain=terrain, boxes=lb,
                   box_source_gap=box_gap_src, box_sink=contact_allowance(lb, src.gap, src.contact, CONTACT_SINK_M),
                   params=p, frame=src.cf, ramp=int(round(p.smoothing_s * fps)), fps=fps)
    best = None
    tick = Ticker(progress, lo, hi)  # the second policy, when it is tried, goes on from the first
    for policy in ("back", "near_hip"):
        trial = fix.run(loc.copy(), rot.copy(), pose.copy(), policy, tick)
        if best is None or trial.score < best.score:
            best = trial
        if not trial.decided or trial.score[0] == 0:  # the other policy would repeat it, or nothing to gain
            break
    tick.done()
    return best, lb


def _metrics(skeleton, src: _Source, terrain, best, lb, p: AdaptParams) -> dict:
    """Step 6: collisions per limb (and the source's own on its reference: what the motion already
    does, a roll pressing its arms on the floor, is not the adaptation's doing), bone-length error,
    contact error and penetration of the kept trial."""
    metrics = collision_metrics(lb, best.hits)
    src_hits = colliding(skeleton, lb, src.pose, src.reference, p.collision_tolerance_m,
                         contact_allowance(lb, src.gap, src.contact, CONTACT_SINK_M))
    metrics.update({"source_" + k: v for k, v in collision_metrics(lb, src_hits).items()})
    metrics["bone_length_error_pct"] = bone_length_error_pct(skeleton, best.pose, best.loc)
    errs = []
    gaps_now = {}
    for e in src.effs:
        g, _ = gaps(e.points(skeleton, best.pose), terrain)
        gaps_now[e.name] = g
        if np.any(src.contact[e.name]):
            errs.append(np.abs(g - src.gap[e.name])[src.contact[e.name]])
    allerr = np.concatenate(errs) if errs else np.zeros(0)
    metrics["contact_error_cm_max"] = float(allerr.max() * 100) if allerr.size else 0.0
    metrics["contact_error_cm_mean"] = float(allerr.mean() * 100) if allerr.size else 0.0
    metrics["contact_frames"] = int(sum(int(c.sum()) for c in src.contact.values()))
    metrics["penetration_cm_max"] = float(max(0.0, -min(float(g.min()) for g in gaps_now.values())) * 100)
    return metrics


def _result_clip(skeleton, source: Clip, src: _Source, loc, rot, metrics: dict) -> Clip:
    """The adapted channels as a Clip: the hips' location and every body bone's rotation keyed."""
    key_loc = src.key_loc.copy()
    key_loc[src.js.hips] = True
    key_rot = src.key_rot.copy()
    key_rot[src.js.bones] = True
    clip = Clip(list(skeleton.names), source.frames.copy(), source.fps, loc, rot, key_location=key_loc,
                key_rotation=key_rot, object_locations=source.object_locations,
                object_rotations=source.object_rotations, generator=(source.generator or "action") + "+terrain",
                metrics=metrics)
    return clip.with_continuity()


# --------------------------------------------------------------------------- helpers

def _in_metres(skeleton, source: Clip, reference, terrain, unit_m: float):
    """Skeleton, clip and surfaces scaled from armature units to metres."""
    ml = skeleton.matrix_local.copy()
    ml[:, :3, 3] *= unit_m
    sk = Skeleton(list(skeleton.names), skeleton.parents.copy(), ml, skeleton.lengths * unit_m,
                  list(skeleton.inherit_rotation), list(skeleton.inherit_scale), list(skeleton.local_location))
    src = replace(source, locations=source.locations * unit_m, metrics=dict(source.metrics),
                  object_locations=None if source.object_locations is None else source.object_locations * unit_m)

    def scaled(mesh):
        return None if mesh is None else TerrainMesh(mesh.vertices * unit_m, mesh.triangles, name=mesh.name)

    return sk, src, scaled(reference), scaled(terrain)


def bone_length_error_pct(skeleton, pose: np.ndarray, locations: np.ndarray) -> float:
    """Largest change of a bone's length over frames, in % of its rest length: both the head→tail
    length (posed Y axis scale) and the distance from each bone's head to its parent's head (bones
    whose location channel moves them, like the hips, are free to change the latter)."""
    err = [np.abs(np.linalg.norm(pose[..., :3, 1], axis=-1) - 1.0)]  # unit Y axis ⇔ length kept
    fixed = ~np.any(np.abs(locations) > 1e-9, axis=(0, 2))
    idx = np.nonzero((skeleton.parents >= 0) & fixed)[0]
    par = skeleton.parents[idx]
    rest = np.linalg.norm(skeleton.heads[idx] - skeleton.heads[par], axis=-1)
    ok = rest > 1e-6
    posed = np.linalg.norm(pose[:, idx][..., :3, 3] - pose[:, par][..., :3, 3], axis=-1)
    err.append(np.abs(posed[:, ok] - rest[ok]) / rest[ok])
    return float(max(np.max(e) for e in err if e.size) * 100)


def _check_feasible(p, cf, effs, src_points, contact, reference, terrain, source) -> None:
    """Every contact has terrain under it, and the terrain does not rise under the contacts by more
    than the motion can step (max_step_ratio × leg length)."""
    rises = []
    for e in effs:
        c = contact[e.name]
        if not np.any(c):
            continue
        pts = src_points[e.name][c].reshape(-1, 3)
        zt, _, ht = terrain.height(pts[:, :2], normals=False)
        if not np.all(ht):
            f = int(source.frames[np.nonzero(c)[0][np.nonzero(~ht.reshape(int(c.sum()), -1).all(axis=1))[0][0]]])
            raise InputError(
                f"The terrain '{terrain.name}' does not reach under the character's {e.name} at frame {f}: "
                "make the terrain cover the whole motion."
            )
        zr, _, hr = reference.ray_down(pts, normals=False)
        zr = np.where(hr, zr, reference.height(pts[:, :2], normals=False)[0])
        rises.append(zt - zr)
    if not rises or not p.refuse_infeasible:
        return
    r = np.concatenate(rises)
    step = float(r.max() - r.min())
    limit = p.max_step_ratio * cf.leg_length
    if step > limit:
        raise InputError(
            f"The terrain '{terrain.name}' rises {step:.2f} m between places the character touches the ground; "
            f"this motion can step about {limit:.2f} m ({p.max_step_ratio:g} × leg length). "
            "Use a climbing motion, lower the terrain, or turn off 'Refuse infeasible' to adapt anyway."
        )
