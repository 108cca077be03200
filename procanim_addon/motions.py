"""Procedural source motions for terrain adaptation: a walk cycle, a jump and a forward roll.

These are the inputs of the experiment of Jo & Choi (2019), "A Real-time Motion Adaptation Method
using Spatial Relationships between a Virtual Character and Its Surrounding Environment", Table 2:
walk, jump and tumbling made on flat ground. Each is a pure function ``(skeleton, rigmap, params) -> Clip`` made on flat
ground at the rig's rest sole height, speaking in roles only:

* :func:`walk` — walks forward; each foot is planted flat on the ground while it supports the body
  and swings on a sine arc between footprints; arms swing against the legs.
* :func:`jump` — stand, crouch, ballistic flight forward with tucked legs, land, absorb, stand.
* :func:`tumble` — squat, forward roll (the tucked body rolls 360° over its back, always touching
  the ground, without slipping), squat, stand.

Directions and sizes come from the rest pose (:func:`frames.character_frame`): forward from
feet→toes, the scale from the leg length. Times in seconds, distances in metres, angles in degrees.

Progress: each motion is posed in chunks of frames (every posing step of every chunk reports, see
:mod:`.progress`), so a long clip reports often and a cancel is seen within one chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import transforms as tf
from .clip import Clip
from .curves import smoothstep
from .errors import InputError
from .frames import character_frame
from .ik.two_bone import solve_two_bone
from .limits import check_bake_size, check_limits
from .metric_table import row
from .posing import aim_rotation, refresh, unposed
from .progress import ProgressFn, no_progress
from .spec import GeneratorSpec
from .terrain.collisions import limb_boxes
from .terrain.ticker import Ticker
from .upright import clip_to_armature

GRAVITY = 9.81  # m/s²

LEG_REQUIRED = ["hips", "thigh.L", "thigh.R", "shin.L", "shin.R", "foot.L", "foot.R"]
# Posing runs over chunks of frames: at least MIN_CHUNKS per clip (so every clip reports ≥ 20
# times), chunks of at least MIN_CHUNK_FRAMES (the result does not depend on either).
MIN_CHUNKS = 4
MIN_CHUNK_FRAMES = 16


# --------------------------------------------------------------------------- parameters

@dataclass
class WalkParams:
    """steps: footsteps in the clip; step_length_m: distance between successive footprints
    (0 = 0.6 × leg length); cadence_spm: steps per minute; lift_m: swing-foot lift (0 = 0.12 × leg
    length); double_support: fraction of a step with both feet down; arm_swing_deg: upper-arm
    swing amplitude; fps; frame_start."""

    steps: int = 6
    step_length_m: float = 0.0
    cadence_spm: float = 110.0
    lift_m: float = 0.0
    double_support: float = 0.2
    arm_swing_deg: float = 20.0
    fps: float = 24.0
    frame_start: int = 1

    def validate(self) -> None:
        check_limits(self)  # every field a number within its documented range (limits.py)
        if self.steps < 1:
            raise InputError("A walk needs at least one step.")
        if self.cadence_spm <= 0 or self.fps <= 0:
            raise InputError("Cadence and frame rate must be positive.")
        if not 0.0 <= self.double_support < 0.9:
            raise InputError("Double support must be a fraction of the step between 0 and 0.9.")
        if self.step_length_m < 0 or self.lift_m < 0:
            raise InputError("Step length and foot lift cannot be negative.")


@dataclass
class JumpParams:
    """distance_m: forward jump distance (0 = 0.7 × leg length); height_m: lift of the body at
    the top of the flight (0 = 0.35 × leg length); crouch_m: how far the hips drop before take-off
    and after landing (0 = 0.22 × leg length); tuck_m: how far the feet draw up in flight (0 = 0.15 ×
    leg length); hold_s: standing still at start and end; crouch_s, land_s: crouch and absorb times."""

    distance_m: float = 0.0
    height_m: float = 0.0
    crouch_m: float = 0.0
    tuck_m: float = 0.0
    hold_s: float = 0.25
    crouch_s: float = 0.45
    land_s: float = 0.45
    fps: float = 24.0
    frame_start: int = 1

    def validate(self) -> None:
        check_limits(self)  # every field a number within its documented range (limits.py)
        if min(self.distance_m, self.height_m, self.crouch_m, self.tuck_m) < 0:
            raise InputError("Jump distance, height, crouch and tuck cannot be negative.")
        if min(self.crouch_s, self.land_s) <= 0 or self.hold_s < 0 or self.fps <= 0:
            raise InputError("Jump phase times and the frame rate must be positive.")


@dataclass
class TumbleParams:
    """squat_s: stand → squat; roll_s: the 360° roll; rise_s: squat → stand; hold_s: standing still
    at start and end; squat_depth: hips drop as a fraction of leg length; tuck_deg: forward bend of
    the spine and neck while tucked."""

    squat_s: float = 0.6
    roll_s: float = 1.2
    rise_s: float = 0.6
    hold_s: float = 0.25
    squat_depth: float = 0.5
    tuck_deg: float = 30.0
    fps: float = 24.0
    frame_start: int = 1

    def validate(self) -> None:
        check_limits(self)  # every field a number within its documented range (limits.py)
        if min(self.squat_s, self.roll_s, self.rise_s) <= 0 or self.hold_s < 0 or self.fps <= 0:
            raise InputError("Tumble phase times and the frame rate must be positive.")
        if not 0.2 <= self.squat_depth <= 0.6:
            raise InputError("Tumble squat depth must be between 0.2 and 0.6 of the leg length.")


@dataclass
class SourceMotionParams:
    """The source-motion operator's settings: which motion (``WALK``, ``JUMP``, ``TUMBLE``), its
    first frame, frames per second and (for the walk) the number of footsteps."""

    kind: str = "WALK"
    frame_start: int = 1
    fps: float = 24.0
    steps: int = 6

    def motion_params(self) -> WalkParams | JumpParams | TumbleParams:
        """The parameters of the chosen motion, validated."""
        if self.kind == "WALK":
            params: WalkParams | JumpParams | TumbleParams = WalkParams(
                steps=self.steps, fps=self.fps, frame_start=self.frame_start)
        elif self.kind == "JUMP":
            params = JumpParams(fps=self.fps, frame_start=self.frame_start)
        elif self.kind == "TUMBLE":
            params = TumbleParams(fps=self.fps, frame_start=self.frame_start)
        else:
            raise InputError(f"Unknown source motion '{self.kind}' (WALK, JUMP or TUMBLE).")
        params.validate()
        return params

    def validate(self) -> SourceMotionParams:
        check_limits(self)  # every field a number within its documented range (limits.py)
        self.motion_params()
        return self


# --------------------------------------------------------------------------- posing helper

class _Poser:
    """Local channels of a clip being built, with its armature-space pose kept up to date."""

    def __init__(self, skeleton, rigmap, frames: int, progress: ProgressFn = no_progress):
        rigmap.require(LEG_REQUIRED)
        self.sk = skeleton
        self.rm = rigmap
        self.f = frames
        b = len(skeleton)
        self.loc = np.zeros((frames, b, 3))
        self.rot = tf.quat_identity((frames, b))
        self.pose = skeleton.fk(self.loc, self.rot)
        self.cf = character_frame(skeleton, rigmap)
        self.tick = Ticker(progress, 0.0, 0.95)
        size = max(MIN_CHUNK_FRAMES, -(-frames // MIN_CHUNKS))
        self.chunks = [slice(a, min(a + size, frames)) for a in range(0, frames, size)]

    def _each_chunk(self):
        """The frame slices to pose one after the other (a progress report before each)."""
        for sl in self.chunks:
            self.tick()
            yield sl

    def _rows(self, x, sl):
        """``x`` on the frames of ``sl`` when it has a frame axis; as it is otherwise (broadcast)."""
        x = np.asarray(x)
        return x[sl] if x.ndim >= 2 and x.shape[0] == self.f else x

    def idx(self, role: str) -> int | None:
        name = self.rm.get(role)
        return self.sk.index(name) if name and self.sk.has(name) else None

    def set_world(self, i: int, rot_world: np.ndarray, head: np.ndarray | None = None) -> None:
        """Bone ``i`` oriented ``rot_world @ rest`` (armature space), its head at ``head`` if given."""
        rest_q = tf.mat3_to_quat(self.sk.matrix_local[i, :3, :3])
        for sl in self._each_chunk():
            u = unposed(self.sk, self.pose[sl], i)
            # pose = U · R_local must equal rot_world · rest  →  R_local = U⁻¹ · rot_world · rest
            u_q = tf.mat3_to_quat(u[:, :3, :3])
            self.rot[sl, i] = tf.quat_mul(tf.quat_conj(u_q), tf.quat_mul(self._rows(rot_world, sl), rest_q))
            if head is not None:
                # basis translation so that the head lands on ``head``: U · T(loc) has origin ``head``
                self.loc[sl, i] = np.einsum("fji,fj->fi", u[:, :3, :3], self._rows(head, sl) - u[:, :3, 3])
            refresh(self.sk, self.loc[sl], self.rot[sl], self.pose[sl], i)

    def turn_local(self, i: int | None, axis_world: np.ndarray, angle: np.ndarray) -> None:
        """Rotate bone ``i`` by ``angle`` (rad, (F,)) about an armature-space axis through its head."""
        if i is None:
            return
        q = tf.quat_from_axis_angle(np.broadcast_to(axis_world, (self.f, 3)), angle)
        cur = tf.mat3_to_quat(self.pose[:, i, :3, :3] @ np.linalg.inv(self.sk.matrix_local[i, :3, :3]))
        self.set_world(i, tf.quat_mul(q, cur))

    def aim(self, i: int, direction: np.ndarray) -> None:
        """Point bone ``i``'s +Y along the armature-space ``direction`` (F, 3), no added twist."""
        for sl in self._each_chunk():
            self.rot[sl, i] = aim_rotation(unposed(self.sk, self.pose[sl], i), self._rows(direction, sl))
            refresh(self.sk, self.loc[sl], self.rot[sl], self.pose[sl], i)

    def leg(self, side: str, ankle: np.ndarray, foot_rot_world: np.ndarray | None = None, mask=None) -> None:
        """Two-bone IK of thigh/shin to put the ankle (foot head) at ``ankle`` (F, 3), knee forward;
        the foot keeps ``foot_rot_world @ rest`` (default: its rest orientation, flat). Only frames
        where ``mask`` (F,) is true change."""
        th, sh, ft = (self.idx(f"{r}.{side}") for r in ("thigh", "shin", "foot"))
        if mask is not None:
            keep = self.rot[:, [th, sh, ft]].copy()
            self.leg(side, ankle, foot_rot_world)
            for k, i in enumerate((th, sh, ft)):
                self.rot[~mask, i] = keep[~mask, k]
            refresh(self.sk, self.loc, self.rot, self.pose, th)
            return
        hip = self.pose[:, th, :3, 3]
        pole = np.broadcast_to(self.cf.forward + 0.2 * self.cf.up, hip.shape)
        knee, end = solve_two_bone(hip, ankle, pole, self.sk.lengths[th], self.sk.lengths[sh])
        self.aim(th, knee - hip)
        self.aim(sh, end - knee)
        if foot_rot_world is None:
            foot_rot_world = tf.quat_identity((self.f,))
        self.set_world(ft, foot_rot_world)

    def arm(self, side: str, hand: np.ndarray) -> None:
        """Two-bone IK of upper arm/forearm to put the wrist (hand head) at ``hand``, elbow back/out."""
        ua, fa = self.idx(f"upper_arm.{side}"), self.idx(f"forearm.{side}")
        if ua is None or fa is None:
            return
        sh = self.pose[:, ua, :3, 3]
        out = self.cf.left if side == "L" else -self.cf.left
        pole = np.broadcast_to(-self.cf.forward + 0.5 * out, sh.shape)
        elbow, end = solve_two_bone(sh, hand, pole, self.sk.lengths[ua], self.sk.lengths[fa])
        self.aim(ua, elbow - sh)
        self.aim(fa, end - elbow)

    def rest_head(self, role: str) -> np.ndarray:
        return self.sk.heads[self.idx(role)].copy()

    def clip(self, fps: float, frame_start: int, generator: str) -> Clip:
        frames = frame_start + np.arange(self.f, dtype=float)
        key_loc = np.zeros(len(self.sk), bool)
        key_loc[self.idx("hips")] = True
        clip = Clip(list(self.sk.names), frames, fps, self.loc, self.rot, key_location=key_loc, generator=generator)
        return clip.with_continuity()


def _heels(skeleton, rigmap, pose, sole_z: float) -> np.ndarray:
    """The heel of each foot ``(F, 2, 3)``: the point under the ankle at the rest sole height,
    carried by the foot bone (feet have no heel joint, but a heel must not sink into the ground)."""
    out = []
    for side in "LR":
        i = skeleton.index(rigmap.bone(f"foot.{side}"))
        heel = np.array([*skeleton.heads[i, :2], sole_z, 1.0])
        local = np.linalg.inv(skeleton.matrix_local[i]) @ heel
        out.append(np.einsum("fij,j->fi", pose[:, i], local)[:, :3])
    return np.stack(out, axis=1)


def _piecewise(t, times, values):
    """Smoothstep interpolation through ``(times, values)`` keys (flat tangents at every key)."""
    t = np.asarray(t, float)
    out = np.full(t.shape, float(values[0]))
    for (t0, v0), (t1, v1) in zip(zip(times[:-1], values[:-1]), zip(times[1:], values[1:])):
        if t1 > t0:
            s = smoothstep((t - t0) / (t1 - t0))
            out = np.where(t >= t0, v0 + (v1 - v0) * s, out)
    return out


# --------------------------------------------------------------------------- walk

def walk(skeleton, rigmap, params: WalkParams | None = None, progress: ProgressFn = no_progress) -> Clip:
    """A forward walk on flat ground (the rest sole height), starting mid-stride.

    Footprint k (k = −1 … steps) lies k·step_length ahead of the start, left foot on even k. During
    step k the foot on footprint k supports the body; the other foot stays down for the first
    ``double_support`` of the step, then swings from footprint k−1 to k+1 on a sine arc. The hips
    move forward at constant speed, over the support foot at mid-step, as low as needed for both
    legs to reach their footprints in double support (plus a small bob).
    """
    p = params or WalkParams()
    p.validate()
    step_t = 60.0 / p.cadence_spm
    n = int(round(p.steps * step_t * p.fps)) + 1
    check_bake_size(n, len(skeleton), "The source motion")  # before any allocation
    po = _Poser(skeleton, rigmap, n, progress)
    cf = po.cf
    leg = cf.leg_length
    step = p.step_length_m or 0.6 * leg
    lift = p.lift_m or 0.12 * leg
    t = np.arange(n) / p.fps
    phase = t / step_t  # steps elapsed
    k = np.minimum(np.floor(phase).astype(int), p.steps - 1)
    tau = phase - k  # 0..1 within the step

    hips_i = po.idx("hips")
    hips0 = skeleton.heads[hips_i]
    ankles0 = {s: po.rest_head(f"foot.{s}") for s in "LR"}
    hip_joints = {s: po.rest_head(f"thigh.{s}") for s in "LR"}
    reach = min(skeleton.lengths[po.idx(f"thigh.{s}")] + skeleton.lengths[po.idx(f"shin.{s}")] for s in "LR")
    if 0.5 * step >= 0.9 * reach:
        raise InputError(
            f"Step length {step:.2f} m is too long for this character: its legs ({reach:.2f} m) reach "
            f"at most {1.8 * reach:.2f} m between footprints."
        )
    # footprints under the hip joints: a captured skeleton's rest pose stands with its legs splayed,
    # its ankles out of the legs' reach from the hips' walking height
    for s in "LR":
        ankles0[s] -= np.dot(ankles0[s] - hip_joints[s], cf.left) * cf.left
    # lowest hip height at which an ankle half a step behind the hip joint is reached at 97 %
    rise = min(np.sqrt((0.97 * reach) ** 2 - (0.5 * step) ** 2) - (hip_joints[s][2] - ankles0[s][2]) for s in "LR")
    bob = 0.012 * leg
    hips_dz = min(rise, 0.0) - bob * (1 + np.cos(2 * np.pi * tau)) / 2  # lowest at the start of each step

    forward = cf.forward
    hips_pos = hips0 + np.outer((phase - 0.5) * step, forward) + np.outer(hips_dz, cf.up)
    yaw = np.radians(4.0) * np.cos(np.pi * phase)  # pelvis turns toward the swing leg
    po.set_world(hips_i, tf.quat_from_axis_angle(np.broadcast_to(cf.up, (n, 3)), yaw), hips_pos)
    for role, gain in (("spine", -0.5), ("chest", -0.5)):
        po.turn_local(po.idx(role), cf.up, gain * yaw)

    for side, parity in (("L", 0), ("R", 1)):
        own = (k % 2) == parity  # this foot supports during step k
        # footprints of this side: stance on k when own, else swinging from k-1 to k+1
        stance_x = k * step
        swing_s = np.clip((tau - p.double_support) / (1 - p.double_support), 0.0, 1.0)
        swing_x = (k - 1) * step + 2 * step * (0.5 - 0.5 * np.cos(np.pi * swing_s))
        x = np.where(own, stance_x, swing_x)
        z = np.where(own, 0.0, lift * np.sin(np.pi * swing_s))
        ankle = ankles0[side] + np.outer(x, forward) + np.outer(z, cf.up)
        po.leg(side, ankle)

    swing = np.radians(p.arm_swing_deg) * np.cos(np.pi * phase)  # left arm forward when the right leg is
    for side, sign in (("L", 1.0), ("R", -1.0)):
        ua, fa = po.idx(f"upper_arm.{side}"), po.idx(f"forearm.{side}")
        po.turn_local(ua, cf.left, -sign * swing)
        po.turn_local(fa, cf.left, -np.full(n, np.radians(15.0)))
    clip = po.clip(p.fps, p.frame_start, "walk")
    clip.metrics.update({"steps": p.steps, "step_length_m": float(step)})
    progress(1.0)
    return clip


# --------------------------------------------------------------------------- jump

def jump(skeleton, rigmap, params: JumpParams | None = None, progress: ProgressFn = no_progress) -> Clip:
    """A standing long jump forward on flat ground.

    Phases: hold, crouch (hips drop ``crouch_m``, feet planted, trunk leans forward, arms swing
    back), push (hips rise back to standing), flight (hips on a ballistic parabola of apex
    ``height_m``; the feet follow the hips and tuck up by ``tuck_m``), land (feet planted
    ``distance_m`` ahead, hips absorb ``crouch_m``), rise, hold.
    """
    p = params or JumpParams()
    p.validate()
    cf = character_frame(skeleton, rigmap)
    leg = cf.leg_length
    dist = p.distance_m or 0.7 * leg
    apex = p.height_m or 0.35 * leg
    crouch = p.crouch_m or 0.22 * leg
    tuck = p.tuck_m or 0.15 * leg
    flight = 2.0 * np.sqrt(2.0 * apex / GRAVITY)
    push = 0.12
    t_keys = np.cumsum([0.0, p.hold_s, p.crouch_s, push, flight, p.land_s, p.land_s, p.hold_s])
    n = int(round(t_keys[-1] * p.fps)) + 1
    check_bake_size(n, len(skeleton), "The source motion")  # before any allocation
    t = np.arange(n) / p.fps
    po = _Poser(skeleton, rigmap, n, progress)
    t_off, t_land = t_keys[3], t_keys[4]
    s_fl = np.clip((t - t_off) / flight, 0.0, 1.0)  # 0..1 over the flight
    in_flight = (t > t_off) & (t < t_land)

    # hips height: smooth crouches on the ground, a parabola in the air (v0 = g·flight/2)
    dz_ground = _piecewise(t, t_keys[[1, 2, 3, 4, 5, 6]], [0.0, -crouch, 0.0, 0.0, -crouch, 0.0])
    tt = t - t_off
    dz_air = (0.5 * GRAVITY * flight) * tt - 0.5 * GRAVITY * tt**2
    hips_dz = np.where(in_flight, dz_air, dz_ground) - 0.01 * leg  # knees never locked straight
    hips_dx = dist * s_fl  # constant horizontal speed in the air
    hips_i = po.idx("hips")
    hips0 = skeleton.heads[hips_i]
    lean = np.radians(25.0) * np.clip(-dz_ground / max(crouch, 1e-9), 0, 1)
    hips_pos = hips0 + np.outer(hips_dx, cf.forward) + np.outer(hips_dz, cf.up)
    po.set_world(hips_i, tf.quat_from_axis_angle(np.broadcast_to(cf.left, (n, 3)), lean), hips_pos)
    po.turn_local(po.idx("neck"), cf.left, -0.6 * lean)  # eyes stay forward

    tuck_dz = tuck * np.sin(np.pi * s_fl) * in_flight
    for side in "LR":
        ankle0 = po.rest_head(f"foot.{side}")
        ankle = ankle0 + np.outer(hips_dx, cf.forward) + np.outer(np.where(in_flight, dz_air + tuck_dz, 0.0), cf.up)
        toe_down = np.radians(20.0) * np.sin(np.pi * s_fl) * in_flight  # toes point down in the air
        po.leg(side, ankle, tf.quat_from_axis_angle(np.broadcast_to(cf.left, (n, 3)), -toe_down))

    # arms: back in the crouch, forward-up through take-off and flight, down again after landing
    arm = _piecewise(t, t_keys[[1, 2, 3, 4, 5, 6]], [0.0, -40.0, 70.0, 30.0, 10.0, 0.0])
    for side in "LR":
        po.turn_local(po.idx(f"upper_arm.{side}"), cf.left, np.radians(arm))
    clip = po.clip(p.fps, p.frame_start, "jump")
    clip.metrics.update({"jump_distance_m": float(dist), "jump_height_m": float(apex), "flight_s": float(flight)})
    progress(1.0)
    return clip


# --------------------------------------------------------------------------- tumble

def tumble(skeleton, rigmap, params: TumbleParams | None = None, progress: ProgressFn = no_progress) -> Clip:
    """A forward roll on flat ground.

    Stand → squat (feet planted, hips drop ``squat_depth`` × leg length, trunk and head bend
    forward, arms reach forward-down) → roll: the tucked squat pose turns 360° forward about the
    character's left axis; its lowest point (joints, heels and the limbs' boxes of
    :mod:`.terrain.collisions`) always touches the ground and it rolls without slipping (the hips
    advance by their height above the contact times the turn) → squat → stand.
    """
    p = params or TumbleParams()
    p.validate()
    fps = p.fps
    t_keys = np.cumsum([0.0, p.hold_s, p.squat_s, p.roll_s, p.rise_s, p.hold_s])
    n = int(round(t_keys[-1] * fps)) + 1
    check_bake_size(n, len(skeleton), "The source motion")  # before any allocation
    t = np.arange(n) / fps
    po = _Poser(skeleton, rigmap, n, progress)
    cf = po.cf
    leg = cf.leg_length
    hips_i = po.idx("hips")
    hips0 = skeleton.heads[hips_i]

    # 1) the squat/tuck pose weight w (0 stand … 1 tucked) and the roll angle φ
    w = _piecewise(t, t_keys[[1, 2, 3, 4]], [0.0, 1.0, 1.0, 0.0])
    phi = 2 * np.pi * smoothstep((t - t_keys[2]) / p.roll_s)
    # 2) a tucked, unrolled pose on every frame: hips down and back, trunk bent, feet planted
    drop = p.squat_depth * leg * w
    back = 0.25 * leg * w  # hips sit back over the heels
    lean = np.radians(35.0) * w
    hips_pos = hips0 + np.outer(-drop, cf.up) - np.outer(back, cf.forward)
    po.set_world(hips_i, tf.quat_from_axis_angle(np.broadcast_to(cf.left, (n, 3)), lean), hips_pos)
    tuck = np.radians(p.tuck_deg) * w
    for role in ("spine", "chest", "neck"):
        po.turn_local(po.idx(role), cf.left, tuck)
    for side in "LR":
        po.leg(side, np.broadcast_to(po.rest_head(f"foot.{side}"), (n, 3)).copy())
    # arms reach forward and down toward the ground in front of the feet
    for side in "LR":
        ua = po.idx(f"upper_arm.{side}")
        if ua is None:
            continue
        shoulder = po.pose[:, ua, :3, 3]
        reach = skeleton.lengths[ua] + skeleton.lengths[po.idx(f"forearm.{side}")]
        rest_hand = po.rest_head(f"hand.{side}") if po.idx(f"hand.{side}") is not None else shoulder[0]
        reach_dir = tf.normalize(cf.forward * 0.8 - cf.up * 0.6)
        target = shoulder + 0.92 * reach * reach_dir
        hand = (1 - w)[:, None] * np.broadcast_to(rest_hand, (n, 3)) + w[:, None] * target
        po.arm(side, hand)

    # 3) roll: turn the whole body by φ about the left axis through the hips, keep the lowest joint
    #    on the ground and advance by ∫ (hips height above contact) dφ
    rolling = (phi > 0) & (t < t_keys[3])
    if np.any(rolling):
        _roll(po, rigmap, phi, rolling, t >= t_keys[3])
    clip = po.clip(fps, p.frame_start, "tumble")
    clip.metrics.update({"roll_s": p.roll_s})
    progress(1.0)
    return clip


def _roll(po: _Poser, rigmap, phi: np.ndarray, rolling: np.ndarray, after: np.ndarray) -> None:
    """The tumble's roll: the tucked pose turned by ``phi`` (F,) rad forward about the character's
    left axis through the hips, its lowest point (joints, heels, limb boxes) on the ground, rolling
    without slipping; frames ``after`` the roll keep the advance, the feet re-planted there."""
    skeleton, cf, n = po.sk, po.cf, po.f
    hips_i = po.idx("hips")
    ground = cf.ground_z
    body = [i for i in range(len(skeleton)) if i == hips_i or skeleton.is_ancestor(hips_i, i)]
    boxes = limb_boxes(skeleton, rigmap).sample_points(skeleton, po.pose)  # limbs have thickness
    points = np.concatenate((po.pose[:, body][..., :3, 3], skeleton.tails_of(po.pose)[:, body],
                             _heels(skeleton, rigmap, po.pose, ground), boxes.reshape(n, -1, 3)), axis=1)
    rel = points - po.pose[:, hips_i, None, :3, 3]
    q = tf.quat_from_axis_angle(np.broadcast_to(cf.left, (n, 3)), phi)
    rel_rot = tf.quat_rotate(q[:, None, :], rel)
    lowest = rel_rot[..., 2].min(axis=1)  # (F,) below the hips (negative)
    hips_z = ground - lowest
    height = hips_z - ground
    adv = np.concatenate(([0.0], np.cumsum(0.5 * (height[1:] + height[:-1]) * np.diff(phi))))
    hips_now = po.pose[:, hips_i, :3, 3]
    new_hips = hips_now + np.outer(adv, cf.forward)
    new_hips[:, 2] = np.where(rolling, hips_z, hips_now[:, 2])
    # after the roll the body stays where the roll ended
    cur = tf.mat3_to_quat(po.pose[:, hips_i, :3, :3] @ np.linalg.inv(skeleton.matrix_local[hips_i, :3, :3]))
    po.set_world(hips_i, tf.quat_mul(q, cur), new_hips)
    # the rise: feet stay where the roll put them (re-plant on the ground with IK)
    if np.any(after):
        for side in "LR":
            ankle = po.rest_head(f"foot.{side}") + np.outer(adv, cf.forward)
            po.leg(side, ankle, mask=after)


def generate(skeleton, rigmap, params: SourceMotionParams | None = None,
             progress: ProgressFn = no_progress) -> Clip:
    """The source motion ``params.kind`` (the registry's engine entry for ``procanim.source_motion``);
    ``progress`` as in :mod:`.progress`."""
    p = params or SourceMotionParams()
    make = {"WALK": walk, "JUMP": jump, "TUMBLE": tumble}
    motion = p.motion_params()
    return make[p.kind](skeleton, rigmap, motion, progress)


# ----------------------------------------------------------------------------- the generator's spec


def bake_call(skeleton, rigmap, params: SourceMotionParams, progress: ProgressFn = no_progress) -> list[Clip]:
    """What ``procanim.source_motion`` computes: the motion, named so that a re-run replaces its
    own bake whichever motion it was."""
    clip = generate(skeleton, rigmap, params, progress=progress)
    clip.generator = "source_motion"
    clip.metrics["motion"] = params.kind.lower()
    return [clip_to_armature(clip, skeleton)]


SPEC = GeneratorSpec(
    "source_motion", "Source Motion", "A walk, jump or forward roll made on flat ground",
    params=SourceMotionParams, engine=generate, call=bake_call,
    metrics=(
        row("steps", "Steps", "", 0, "Footsteps of the walk"),
        row("step_length_m", "Step length", "m", 3, "Distance between successive footprints"),
    ),
)
