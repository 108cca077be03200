"""Terrain adaptation (Jo & Choi 2019, METHODS.md §M4): re-fit a clip made on one surface to another.

:func:`adapt_to_terrain` runs, in order:

1. source joints by FK; contact frames of feet (and hands) on the reference surface;
2. relationship descriptors around every joint on every frame, sampled on the reference and
   carried to the terrain (Eq. 1, 2: :mod:`.descriptors`) — the per-frame joint estimates;
3. the damped update with bone lengths restored (Eq. 3, 4) at key frames, splined between them
   and refined until under tolerance (:mod:`.solve`);
4. joint positions back to bone rotations, swing only, twist kept (:mod:`.joints`);
5. the final fix (:mod:`.contact`), which the paper leaves to its IK step:
   a. planted feet and hands keep the source's orientation (turned with the ground normal) and
      one footprint per contact; a footprint that would straddle a step slides off it, back or
      toward its hip (both are tried, the result with fewer collisions is kept);
   b. the hips come down where a foot or hand in contact could not reach its ground;
   c. each end that touched the reference touches the terrain with its source gap (two-bone IK);
      limbs off the ground are lifted until their boxes keep min(source gap, clearance);
   d. where limbs still collide: the hips rise as far as the contacts' reach allows, then knees
      turn out (swivel about hip→ankle), then free ends are lifted 1 cm at a time;
   lifts, drops and turns fade in and out over ``smoothing_s`` so nothing pops;
6. metrics: collisions per limb (and the source's own on its reference), bone-length error,
   contact error, penetration, solve times.

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
from ..frames import character_frame
from ..limits import check_limits
from ..skeleton import Skeleton
from . import descriptors as rd
from .collisions import colliding, collision_metrics, limb_boxes
from .contact import UP, effectors, footing_shifts, gaps, intervals, move_end, ramp_envelope, set_world
from .joints import channels_from_positions, joint_set
from .mesh import TerrainMesh
from .solve import SolveStats, damped_solve, multires_solve


@dataclass
class AdaptParams:
    """Parameters of the adaptation (defaults are the ones measured in bench/terrain_engine.py).

    descriptors_per_joint: descriptor points per joint (the paper: at least 10)
    radius0_m, spread_m:   descriptor spiral radius ρ = sqrt(radius0_m² + spread_m·h) (RECON)
    cutoff_ratio:          weights vanish beyond this × the nearest descriptor distance (RECON)
    damping:               d of Eq. 3 (part of the previous update carried over). 0 by default:
                           with lengths restored inside the loop, d > 0 makes the iteration cycle
                           (measured: d = 0.2 never settles in 200 iterations, d = 0 in about 15)
    k0, k_decay, k_min:    k of Eq. 3: 9 at first (paper), then × k_decay per iteration (RECON)
    iteration_tolerance_m: the per-frame solve stops when no joint moves more than this
    max_iterations:        per-frame cap
    key_interval:          frames between the first key frames of the multi-resolution solve
    tolerance_m:           refine the key frames until the spline is this close to the solve
    contact_height_m:      a foot/hand point this close to the reference is in contact
    hands:                 also keep hands that touch the reference on the terrain (tumbling)
    clearance_m:           lifted limbs keep their source gap up to this much above the terrain
    collision_tolerance_m: boxes are shrunk by this much before testing (touching ≠ colliding)
    box_radius_ratio:      limb box thickness as a fraction of the bone length
    max_step_ratio:        RECON: largest rise of the terrain under contacts the motion can take,
                           as a fraction of leg length; more raises InputError (see refuse_infeasible)
    refuse_infeasible:     raise InputError when the terrain exceeds what the motion can do;
                           False adapts anyway and reports the collisions (the bench does this)
    smoothing_s:           lifts and hip drops fade in and out over this time (s)
    unit_m:                metres per armature-space unit (the armature object's scale when its
                           space is not metres, e.g. a BVH imported at another scale); every *_m
                           value above is in metres whatever the rig's units
    """

    descriptors_per_joint: int = 12
    radius0_m: float = 0.05
    spread_m: float = 0.3
    cutoff_ratio: float = 4.0
    damping: float = 0.0
    k0: float = 9.0
    k_decay: float = 0.8
    k_min: float = 0.5
    iteration_tolerance_m: float = 1e-4
    max_iterations: int = 200
    key_interval: int = 8
    tolerance_m: float = 0.005
    contact_height_m: float = 0.03
    hands: bool = True
    clearance_m: float = 0.01
    collision_tolerance_m: float = 0.002
    box_radius_ratio: float = 0.12
    max_step_ratio: float = 0.75
    refuse_infeasible: bool = True
    smoothing_s: float = 0.25
    unit_m: float = 1.0

    def validate(self) -> None:
        check_limits(self)  # every field a number within its documented range (limits.py)
        if self.descriptors_per_joint < 10:
            raise InputError("Use at least 10 descriptor points per joint (the method needs them for continuity).")
        if not 0.0 <= self.damping < 1.0:
            raise InputError("Damping must be between 0 and 1 (exclusive).")
        if self.k0 <= 0 or self.k_min <= 0 or not 0 < self.k_decay <= 1:
            raise InputError("k must be positive and its decay between 0 and 1.")
        if self.key_interval < 1 or self.max_iterations < 1:
            raise InputError("Key interval and iteration count must be at least 1.")
        if min(self.tolerance_m, self.iteration_tolerance_m) <= 0:
            raise InputError("Tolerances must be positive.")
        if min(self.radius0_m, self.spread_m, self.cutoff_ratio - 1.0, self.contact_height_m) <= 0:
            raise InputError("Descriptor radius, spread and contact height must be positive; cutoff ratio above 1.")
        if min(self.clearance_m, self.collision_tolerance_m, self.smoothing_s, self.max_step_ratio) < 0:
            raise InputError("Clearance, collision tolerance, smoothing and step ratio cannot be negative.")
        if not self.unit_m > 0:
            raise InputError("The armature's unit (metres per unit) must be positive.")


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


def adapt_to_terrain(skeleton, rigmap, source: Clip, reference: TerrainMesh | None, terrain: TerrainMesh,
                     params: AdaptParams | None = None, progress=None) -> Clip:
    """The source clip re-fitted from ``reference`` to ``terrain`` (see the module docstring).

    ``reference`` None is a flat ground at the motion's own ground height: the lowest foot point
    over the clip (its 5th percentile over frames). Raises :class:`InputError` for a reference equal
    to the terrain, a motion that leaves the terrain, or (with ``refuse_infeasible``) a terrain the
    motion cannot climb.
    """
    p = params or AdaptParams()
    p.validate()
    if p.unit_m != 1.0:  # work in metres, hand back channels in the rig's own units
        sk_m, src_m, ref_m, ter_m = _in_metres(skeleton, source, reference, terrain, p.unit_m)
        out = adapt_to_terrain(sk_m, rigmap, src_m, ref_m, ter_m, replace(p, unit_m=1.0))
        out.locations = out.locations / p.unit_m
        if out.object_locations is not None:
            out.object_locations = out.object_locations / p.unit_m
        return out
    t_start = time.perf_counter()
    if source.frame_count < 1:
        raise InputError("The action has no frames to adapt.")
    cf = character_frame(skeleton, rigmap)
    loc_src, rot_src, key_loc, key_rot = _channels_in_skeleton_order(skeleton, source)
    pose_src = skeleton.fk(loc_src, rot_src)
    n_frames = source.frame_count
    effs = effectors(skeleton, rigmap, hands=p.hands)
    legs = [e for e in effs if e.is_leg]
    if not legs:
        raise InputError("The rig has no complete leg (thigh, shin, foot): nothing to keep on the ground.")

    # ---- reference surface
    if reference is None:
        # the lowest foot point per frame; the ground is the 5th percentile over the clip, so a
        # foot point that dips for a frame or two (a heel in a roll) does not sink the ground
        per_frame = np.min([e.points(skeleton, pose_src)[..., 2].min(axis=1) for e in legs], axis=0)
        low = float(np.percentile(per_frame, 5))
        hips_xy = pose_src[:, rigmap.index(skeleton, "hips"), :2, 3]
        span = float(np.ptp(hips_xy, axis=0).max()) + 20.0
        reference = TerrainMesh.flat(low, center=hips_xy.mean(axis=0), size=span, name="reference")
    elif _same_mesh(reference, terrain):
        raise InputError(
            f"The reference '{reference.name}' and the terrain '{terrain.name}' are the same surface: "
            "there is nothing to adapt. Pick the changed terrain, or leave the reference empty."
        )

    # ---- contacts on the reference
    src_points = {e.name: e.points(skeleton, pose_src) for e in effs}
    src_gap, contact = {}, {}
    for e in effs:
        g, ok = gaps(src_points[e.name], reference, below=True)
        src_gap[e.name] = np.where(ok, g, np.inf)
        contact[e.name] = ok & (g < p.contact_height_m)
    _check_feasible(p, cf, effs, src_points, contact, reference, terrain, source)

    # ---- descriptors: per-frame joint estimates on the terrain (Eq. 1, 2)
    js = joint_set(skeleton, rigmap)
    p_src = js.positions(skeleton, pose_src)  # (F, J, 3)
    flat_src = p_src.reshape(-1, 3)
    desc = rd.sample(reference, flat_src, cf.forward, p.descriptors_per_joint, p.radius0_m, p.spread_m)
    r = rd.encode(flat_src, desc)  # Eq. 1
    w = rd.weights(flat_src, desc, p.cutoff_ratio)
    moved = rd.carry(desc, terrain, cf.forward)
    w = np.where(moved.valid, w, 0.0)
    s = w.sum(axis=1, keepdims=True)
    w = np.where(s > 0, w / np.where(s > 0, s, 1.0), 0.0)
    est = rd.estimate(moved, r, w)  # Eq. 2
    est = np.where((s > 0), est, flat_src).reshape(p_src.shape)

    # ---- damped update + lengths (Eq. 3, 4), multi-resolution over frames
    stats = SolveStats()

    def solve_frames(idx):
        solved = damped_solve(p_src[idx], est[idx], js.restore_lengths, p.damping, p.k0, p.k_decay, p.k_min,
                              p.iteration_tolerance_m, p.max_iterations, stats)
        return solved - p_src[idx]

    disp = multires_solve(n_frames, solve_frames, p.key_interval, p.tolerance_m, stats)
    p_new = js.restore_lengths(p_src + disp)
    joint_length_error = js.length_error(p_new)
    loc, rot, pose = channels_from_positions(skeleton, js, loc_src, rot_src, p_new)

    t_solved = time.perf_counter()

    # ---- final fix: hips within reach, contacts on the terrain, limbs clear of blocks. A footprint
    # that straddles a step can leave it backward or toward its hip; both are tried when it matters
    # and the result with fewer collisions (then the smaller contact error) is kept.
    lb = limb_boxes(skeleton, rigmap, p.box_radius_ratio)
    box_gap_src = _point_gaps(lb.sample_points(skeleton, pose_src), reference, below=True)  # (F, M, P)
    fix = _FinalFix(skeleton, js, pose_src, effs, legs, src_gap, contact, reference, terrain, lb, box_gap_src, p, cf,
                    int(round(p.smoothing_s * source.fps)), source.fps)
    best = None
    for policy in ("back", "near_hip"):
        trial = fix.run(loc.copy(), rot.copy(), pose.copy(), policy)
        if best is None or trial.score < best.score:
            best = trial
        if not trial.nudged or trial.score[0] == 0:
            break
    loc, rot, pose, hits = best.loc, best.rot, best.pose, best.hits
    metrics_policy = best.policy

    # ---- metrics
    metrics = collision_metrics(lb, hits)
    # the same measure for the source on its own reference: what the motion already does (a roll
    # pressing its arms on the floor) is not the adaptation's doing
    src_hits = colliding(skeleton, lb, pose_src, reference, p.collision_tolerance_m)
    metrics.update({"source_" + k: v for k, v in collision_metrics(lb, src_hits).items()})
    metrics["bone_length_error_pct"] = bone_length_error_pct(skeleton, pose, loc)
    metrics["joint_length_error_pct"] = joint_length_error
    errs = []
    gaps_now = {}
    for e in effs:
        g, _ = gaps(e.points(skeleton, pose), terrain)
        gaps_now[e.name] = g
        if np.any(contact[e.name]):
            errs.append(np.abs(g - src_gap[e.name])[contact[e.name]])
    allerr = np.concatenate(errs) if errs else np.zeros(0)
    metrics["contact_error_cm_max"] = float(allerr.max() * 100) if allerr.size else 0.0
    metrics["contact_error_cm_mean"] = float(allerr.mean() * 100) if allerr.size else 0.0
    metrics["contact_frames"] = int(sum(int(c.sum()) for c in contact.values()))
    metrics["penetration_cm_max"] = float(max(0.0, -min(float(g.min()) for g in gaps_now.values())) * 100)
    metrics["frames_solved"] = stats.frames_solved
    metrics["iterations_max"] = stats.iterations
    metrics["refine_levels"] = stats.levels
    metrics["descriptors_per_joint"] = p.descriptors_per_joint
    metrics["joints"] = js.count
    metrics["footing_policy"] = metrics_policy
    metrics["solve_time_s"] = time.perf_counter() - t_start
    metrics["descriptor_solve_time_s"] = t_solved - t_start  # steps 1-4: the paper's real-time part
    metrics["fps_solve"] = n_frames / max(metrics["solve_time_s"], 1e-9)

    key_loc = key_loc.copy()
    key_loc[js.hips] = True
    key_rot = key_rot.copy()
    key_rot[js.bones] = True
    clip = Clip(list(skeleton.names), source.frames.copy(), source.fps, loc, rot, key_location=key_loc,
                key_rotation=key_rot, object_locations=source.object_locations,
                object_rotations=source.object_rotations, generator=(source.generator or "action") + "+terrain",
                metrics=metrics)
    return clip.with_continuity()


@dataclass
class _Trial:
    loc: np.ndarray
    rot: np.ndarray
    pose: np.ndarray
    hits: np.ndarray
    score: tuple
    nudged: bool
    policy: str


@dataclass
class _FinalFix:
    """Step 5 of the module docstring, run on copies of the channels so that alternatives can be
    compared. ``src_gap``/``contact``: per effector name, (F,); ``box_gap_src``: (F, M, P) m."""

    skeleton: object
    js: object
    pose_src: np.ndarray
    effs: list
    legs: list
    src_gap: dict
    contact: dict
    reference: TerrainMesh
    terrain: TerrainMesh
    lb: object
    box_gap_src: np.ndarray
    p: AdaptParams
    cf: object
    ramp: int
    fps: float

    def run(self, loc, rot, pose, policy: str) -> _Trial:
        skeleton, js, pose_src, effs, legs = self.skeleton, self.js, self.pose_src, self.effs, self.legs
        src_gap, contact, reference, terrain = self.src_gap, self.contact, self.reference, self.terrain
        lb, box_gap_src, p, cf, ramp, fps = self.lb, self.box_gap_src, self.p, self.cf, self.ramp, self.fps
        nudged = False
        for e in effs:  # planted ends: source orientation, one level footprint each
            nudged |= _plant(skeleton, loc, rot, pose, pose_src, e, contact[e.name], reference, terrain, ramp,
                             cf.forward if e.is_leg else -cf.forward, fps, policy)
        _lower_hips_for_reach(skeleton, js.hips, loc, rot, pose, pose_src, effs, src_gap, contact, terrain, ramp)
        for e in effs:
            _place_effector(skeleton, loc, rot, pose, e, src_gap[e.name], contact[e.name], terrain,
                            lb, box_gap_src, p, ramp, cf.forward if e.is_leg else -cf.forward)
        hits = colliding(skeleton, lb, pose, terrain, p.collision_tolerance_m)
        leg_box = np.isin(lb.bones, [b for e in legs for b in _limb_bones(skeleton, e)])
        every_box = np.ones(len(lb.bones), bool)  # an arm pinned under a low, rolling body counts too
        if np.any(hits):
            raise_by = _hips_raise_to_clear(skeleton, js.hips, loc, rot, pose, effs, src_gap, contact, terrain, lb,
                                            every_box, hits, p, cf.forward)
            raise_by = np.minimum(ramp_envelope(raise_by, ramp), _hips_headroom(skeleton, pose, effs, contact))
            if np.any(raise_by > 0):
                m = pose[:, js.hips].copy()
                m[:, :3, 3] += raise_by[:, None] * UP
                set_world(skeleton, loc, rot, pose, js.hips, m, raise_by > 0, with_location=True)
                for e in effs:
                    _place_effector(skeleton, loc, rot, pose, e, src_gap[e.name], contact[e.name], terrain,
                                    lb, box_gap_src, p, ramp, cf.forward if e.is_leg else -cf.forward)
            hits = colliding(skeleton, lb, pose, terrain, p.collision_tolerance_m)
        for _ in range(3):  # a swivel fading in around one frame can touch its neighbours: re-check
            if not np.any(hits[:, leg_box]):
                break
            _swivel_to_clear(skeleton, loc, rot, pose, legs, lb, hits, terrain, p, cf, ramp)
            hits = colliding(skeleton, lb, pose, terrain, p.collision_tolerance_m)
        for _ in range(4):  # lift what the sampled clearance missed, 1 cm at a time
            extra = False
            for e in effs:
                mine = np.isin(lb.bones, _limb_bones(skeleton, e))
                bad = np.any(hits[:, mine], axis=1) & ~contact[e.name]
                if np.any(bad):
                    extra = True
                    lift = ramp_envelope(bad * 0.01, ramp)
                    move_end(skeleton, loc, rot, pose, e, lift, (lift > 0) & ~contact[e.name],
                             cf.forward if e.is_leg else -cf.forward)
            if not extra:
                break
            hits = colliding(skeleton, lb, pose, terrain, p.collision_tolerance_m)
        errs = [np.abs(gaps(e.points(skeleton, pose), terrain)[0] - src_gap[e.name])[contact[e.name]] for e in effs]
        err = max((float(x.max()) for x in errs if x.size), default=0.0)
        score = (int(np.any(hits, axis=1).sum()), round(err, 3))
        return _Trial(loc, rot, pose, hits, score, nudged, policy)


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


def _limb_bones(skeleton, e) -> list[int]:
    return [b for b in (e.upper, e.lower, e.end, e.tip) if b >= 0]


def _point_gaps(points: np.ndarray, surface, below: bool) -> np.ndarray:
    """Height of each point above the surface under it, same shape as ``points[..., 0]``."""
    flat = points.reshape(-1, 3)
    if below:
        z, _, hit = surface.ray_down(flat)
        tz, _, thit = surface.height(flat[:, :2])
        z = np.where(hit, z, tz)
        hit = hit | thit
    else:
        z, _, hit = surface.height(flat[:, :2])
    return np.where(hit, flat[:, 2] - z, np.inf).reshape(points.shape[:-1])


def _check_feasible(p, cf, effs, src_points, contact, reference, terrain, source) -> None:
    """Every contact has terrain under it, and the terrain does not rise under the contacts by more
    than the motion can step (max_step_ratio × leg length)."""
    rises = []
    for e in effs:
        c = contact[e.name]
        if not np.any(c):
            continue
        pts = src_points[e.name][c].reshape(-1, 3)
        zt, _, ht = terrain.height(pts[:, :2])
        if not np.all(ht):
            f = int(source.frames[np.nonzero(c)[0][np.nonzero(~ht.reshape(int(c.sum()), -1).all(axis=1))[0][0]]])
            raise InputError(
                f"The terrain '{terrain.name}' does not reach under the character's {e.name} at frame {f}: "
                "make the terrain cover the whole motion."
            )
        zr, _, hr = reference.ray_down(pts)
        zr = np.where(hr, zr, reference.height(pts[:, :2])[0])
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


def _lower_hips_for_reach(skeleton, hips, loc, rot, pose, pose_src, legs, src_gap, contact, terrain, ramp) -> None:
    """Lower the hips (with everything above) where a leg or arm in contact could not reach its ground."""
    drop = np.zeros(pose.shape[0])
    for e in legs:
        c = contact[e.name]
        if not np.any(c):
            continue
        g, _ = gaps(e.points(skeleton, pose), terrain)
        dz = np.where(c, src_gap[e.name] - g, 0.0)
        ankle = pose[:, e.end, :3, 3] + dz[:, None] * UP
        hip = pose[:, e.upper, :3, 3]
        # the leg may stretch to 99.5 % of its length, or as far as the source itself stretched it
        reach_src = np.linalg.norm(pose_src[:, e.end, :3, 3] - pose_src[:, e.upper, :3, 3], axis=-1)
        reach = np.maximum(0.995 * (skeleton.lengths[e.upper] + skeleton.lengths[e.lower]), reach_src)
        dh = np.linalg.norm((hip - ankle)[:, :2], axis=-1)
        dv = hip[:, 2] - ankle[:, 2]
        dv_max = np.sqrt(np.maximum(reach**2 - dh**2, 0.0))
        drop = np.maximum(drop, np.where(c, dv - dv_max, 0.0))
    drop = ramp_envelope(drop, ramp)
    if np.any(drop > 1e-9):
        m = pose[:, hips].copy()
        m[:, :3, 3] -= drop[:, None] * UP
        set_world(skeleton, loc, rot, pose, hips, m, drop > 1e-9, with_location=True)


def _plant(skeleton, loc, rot, pose, pose_src, e, contact, reference, terrain, ramp, direction, fps,
           policy: str = "back") -> bool:
    """Contact frames: the end bone (and toe) take the source's orientation, turned as the ground
    normal turns from reference to terrain; then the footprint is made level (:func:`_nudge_footing`).
    True when a footprint was moved."""
    if not np.any(contact):
        return False
    xy = pose[:, e.end, :2, 3]
    _, n_ref, _ = reference.height(xy)
    _, n_ter, _ = terrain.height(xy)
    tilt = tf.quat_to_mat3(tf.rotation_between(n_ref, n_ter))
    for bone in (e.end, e.tip):
        if bone < 0:
            continue
        m = pose[:, bone].copy()
        m[:, :3, :3] = tilt @ pose_src[:, bone, :3, :3]
        set_world(skeleton, loc, rot, pose, bone, m, contact)
    return _nudge_footing(skeleton, loc, rot, pose, pose_src, e, contact, reference, terrain, ramp, direction, fps,
                          policy)


def _place_effector(skeleton, loc, rot, pose, e, gap_src, contact, terrain, lb, box_gap_src, p, ramp, hint,
                    passes: int = 6) -> None:
    """Contact frames: the end touches the terrain with its source gap. Other frames: lift the end
    until every box point of the limb keeps min(source gap, clearance) above the terrain (a few
    passes: lifting the end raises the bones above it only in part)."""
    n = pose.shape[0]
    if np.any(contact):
        g, _ = gaps(e.points(skeleton, pose), terrain)
        dz = np.where(contact, gap_src - g, 0.0)
        move_end(skeleton, loc, rot, pose, e, dz, contact & (np.abs(dz) > 1e-9), hint)
    mine = np.isin(lb.bones, _limb_bones(skeleton, e))
    for _ in range(passes):
        pts = lb.sample_points(skeleton, pose)[:, mine]
        gap_now = _point_gaps(pts, terrain, below=False)
        need = np.minimum(box_gap_src[:, mine], p.clearance_m) - gap_now
        lift = np.max(np.where(np.isfinite(need), need, 0.0).reshape(n, -1), axis=1)
        lift = np.where(contact, 0.0, np.maximum(lift, 0.0))
        if lift.max() < 1e-4:
            break
        lift = np.where(contact, 0.0, ramp_envelope(lift, ramp))
        move_end(skeleton, loc, rot, pose, e, lift, lift > 1e-9, hint)


def _nudge_footing(skeleton, loc, rot, pose, pose_src, e, contact, reference, terrain, ramp, direction, fps,
                   policy: str = "back") -> bool:
    """Each planted interval of an end keeps one footprint; one that would straddle a step of the
    terrain (uneven under the foot where the reference was even) slides along ``direction`` to the
    nearest place, back or forward, where it stands on one level — of the two, the one that keeps
    the foot nearer under its hip (legs reach). The slide fades in and out over ``ramp`` frames."""
    n = pose.shape[0]
    pts = e.points(skeleton, pose)
    src = e.points(skeleton, pose_src)
    zr, _, _ = reference.height(src[..., :2].reshape(-1, 2))
    zr = zr.reshape(src.shape[:-1])
    ref_spread = zr.max(axis=1) - zr.min(axis=1)
    total = np.zeros((n, 3))
    weight = np.zeros(n)
    speed = np.zeros(n)
    speed[1:] = np.linalg.norm(np.diff(src[:, 0, :2], axis=0), axis=-1) * fps
    for a, b in intervals(contact):
        still = np.arange(a, b)[speed[a:b] < 0.25]  # judge the footprint where the end is planted
        sel = still if still.size else np.arange(a, b)
        back, fwd = footing_shifts(pts[sel], ref_spread[sel], terrain, direction)
        options = [x for x in (back, fwd) if x is not None]
        if not options or 0.0 in options:
            continue
        if policy == "back":  # stay on the side the foot comes from
            s = options[0]
        else:  # "near_hip": of the two ways off the step, the one that keeps the foot nearer its hip
            hip = pose_src[sel, e.upper, :2, 3]
            ankle = pose_src[sel, e.end, :2, 3]
            d2 = np.asarray(direction, float)[:2]
            s = min(options, key=lambda x: float(np.max(np.linalg.norm(ankle + x * d2 - hip, axis=-1))))
        ind = np.zeros(n)
        ind[a:b] = 1.0
        env = ramp_envelope(ind, ramp)
        total += env[:, None] * (s * np.asarray(direction, float))
        weight += env
    if not np.any(weight > 0):
        return False
    offset = total / np.maximum(weight, 1.0)[:, None]
    offset[:, 2] = 0.0
    move_end(skeleton, loc, rot, pose, e, offset, weight > 0, direction)
    return True


def _hips_raise_to_clear(skeleton, hips, loc, rot, pose, legs, src_gap, contact, terrain, lb, leg_box, hits, p,
                         forward, step_m: float = 0.03, max_raise_m: float = 0.6) -> np.ndarray:
    """Per frame, the smallest raise of the hips (m) after which no leg box collides while every
    leg in contact still reaches its ground (a leg folded under low hips pushes its knee into the
    block in front of it or past the edge it stands on; a straighter leg keeps it clear). 0 where
    no raise up to ``max_raise_m`` helps."""
    bad = np.nonzero(np.any(hits[:, leg_box], axis=1))[0]
    out = np.zeros(pose.shape[0])
    todo = np.ones(len(bad), bool)
    for dz in np.arange(step_m, max_raise_m + 1e-9, step_m):
        sub = bad[todo]
        if sub.size == 0:
            break
        sl, sr, sp = loc[sub].copy(), rot[sub].copy(), pose[sub].copy()
        m = sp[:, hips].copy()
        m[:, :3, 3] += dz * UP
        set_world(skeleton, sl, sr, sp, hips, m, np.ones(len(sub), bool), with_location=True)
        reached = np.ones(len(sub), bool)
        for e in legs:
            c = contact[e.name][sub]
            if not np.any(c):
                continue
            g, _ = gaps(e.points(skeleton, sp), terrain)
            want = np.where(c, src_gap[e.name][sub] - g, 0.0)
            move_end(skeleton, sl, sr, sp, e, want, c, forward if e.is_leg else -forward)
            g2, _ = gaps(e.points(skeleton, sp), terrain)
            reached &= ~c | (np.abs(g2 - src_gap[e.name][sub]) < 0.005)
        clear = ~np.any(colliding(skeleton, lb, sp, terrain, p.collision_tolerance_m)[:, leg_box], axis=1)
        ok = clear & reached
        idx = np.nonzero(todo)[0][ok]
        out[bad[idx]] = dz
        todo[idx] = False
    return out


def _swivel_to_clear(skeleton, loc, rot, pose, legs, lb, hits, terrain, p, cf, ramp,
                     angles_deg=(15, 30, 45, 60, 75, 90, 105, 120)) -> None:
    """Legs still colliding turn the knee out (the bend plane swivels about hip→ankle, toward the
    leg's own side) by the smallest angle that clears them; the swivel fades in and out over
    ``ramp`` frames. The foot stays where it is."""
    for e in legs:
        mine = np.isin(lb.bones, _limb_bones(skeleton, e))
        bad = np.nonzero(np.any(hits[:, mine], axis=1))[0]
        if bad.size == 0:
            continue
        side = cf.left if e.name.endswith(".L") else -cf.left
        best = np.zeros(pose.shape[0])
        todo = np.ones(bad.size, bool)
        for deg in angles_deg:
            sub = bad[todo]
            if sub.size == 0:
                break
            for sign in (1.0, -1.0):
                sl, sr, sp = loc[sub].copy(), rot[sub].copy(), pose[sub].copy()
                knee_before = sp[:, e.lower, :3, 3].copy()
                ang = np.full(sub.size, sign * np.radians(deg))
                move_end(skeleton, sl, sr, sp, e, np.zeros(sub.size), np.ones(sub.size, bool), cf.forward, ang)
                outward = np.sum((sp[:, e.lower, :3, 3] - knee_before) * side, axis=-1) > 0
                clear = ~np.any(colliding(skeleton, lb, sp, terrain, p.collision_tolerance_m)[:, mine], axis=1)
                ok = clear & outward
                idx = np.nonzero(todo)[0][ok]
                best[bad[idx]] = sign * np.radians(deg)
                todo[idx] = False
                sub = bad[todo]
                if sub.size == 0:
                    break
        if not np.any(best != 0):
            continue
        turn = ramp_envelope(np.maximum(best, 0.0), ramp) - ramp_envelope(np.maximum(-best, 0.0), ramp)
        turn = np.where(best != 0, best, turn)  # the frames that need it get exactly what cleared them
        move_end(skeleton, loc, rot, pose, e, np.zeros(pose.shape[0]), turn != 0, cf.forward, turn)


def _hips_headroom(skeleton, pose, legs, contact, stretch: float = 0.995) -> np.ndarray:
    """Per frame, how far the hips may rise (m) before a leg in contact can no longer reach its
    ankle where it is now (``stretch`` × thigh + shin); inf where no leg is in contact."""
    room = np.full(pose.shape[0], np.inf)
    for e in legs:
        c = contact[e.name]
        hip = pose[:, e.upper, :3, 3]
        ankle = pose[:, e.end, :3, 3]
        reach = stretch * (skeleton.lengths[e.upper] + skeleton.lengths[e.lower])
        dh = np.linalg.norm((hip - ankle)[:, :2], axis=-1)
        up = np.sqrt(np.maximum(reach**2 - dh**2, 0.0)) - (hip[:, 2] - ankle[:, 2])
        room = np.where(c, np.minimum(room, np.maximum(up, 0.0)), room)
    return room
