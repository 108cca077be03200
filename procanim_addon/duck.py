"""Duck walk — the "Le Quack Walker" cycle, on any bird armature.

Source: the "Le Quack Walker" article (a blog report of the Character Essences project: a Maya
Python plugin, its GUI, formulas in "Method" and "Animation Graphs and Code", and a survey of 34
participants in "Results").

The article keyed IK foot controls, toes, spine, tail, neck and a master control with
trigonometric functions of a phase angle θ. ProcAnim computes the same control trajectories in the
armature's space, then poses the FK bones (two-bone IK for the legs), so it works on rigs with or
without IK controls and bakes exactly what Blender will show.

Symbols (the article's code): a = Amplitude/5, s = Speed/5, w = Weight/10, d = Direction/10, q_a (lift
divisor: 1, 2, 3 by weight), q_b = 0.9 (fore-aft divisor), g = 20°/unit (rotation gain),
θ(f) = (f − f₀)·s·2π/fps.

Choices where the article is silent or inconsistent (also in README, "Duck walk"):

* Length unit u = ``unit_per_leg`` × leg length (default 0.225): Amplitude 5 then gives a stride
  (one foot's advance per cycle, 4·a·u/q_b in the planted gait) of one leg length on any duck.
* The right foot is a true half cycle behind the left (θ_R = θ + π) at every speed, its lateral
  channel included; the original offset it by fps/2 frames and keyed its lateral at the left's time.
* Stance width: the article's x_R = x_L − a puts the right control a units beside the left and the
  body at their midpoint (x_L − a/2). ProcAnim keeps the rig's own stance width and the midpoint
  relation: both feet and the body share the sway term (a/3)·w·|sin(θ/2)|.
* ``gait='PLANTED'`` (default): the master moves 2a/q_b·u per half cycle — the foot's stance sweep —
  and each stance foot is held where the article's ellipse puts it at mid-stance; the swing is the
  article's ellipse plus a Hermite correction with zero foot speed at lift-off and touch-down. So no
  foot skates, at any Direction. ``gait='ARTICLE'`` reproduces the article's channels verbatim
  (master forward s·a/q_a·u every 3 frames), foot skate included.
* When a light duck's bounce would lift the hips beyond the reach of a leg (planted or swinging),
  the planted gait lowers the top of the bounce just enough, the same on every step: the body's
  height stays a sine of 2θ in phase with the article's (:func:`_bounce_cut`). The ARTICLE gait lowers
  each key where a planted foot is out of reach. ``clip.metrics['reach_clamped_frames']`` counts the
  keys lowered, ``bounce_lowered_cm`` says by how much at most.
* The article's foot pitch and toe curl would push long toes (a Rigify bird's, ProcAnim's duck's)
  into the ground in the swing; both are scaled down by one factor until the toe tip rises at least
  ``TOE_CLEARANCE`` of the ankle's lift (RECON): one factor for the whole planted walk
  (:func:`_gesture_scale`), key by key in the ARTICLE gait.

The planted gait's two whole-walk choices are checked on ``CYCLE_SAMPLES`` phases of one gait cycle
(every walk at the same settings repeats it) rather than on the keys, so what a key gets does not
depend on which frames are keys: a walk keyed on every frame (a loop's) and one keyed every 3 frames
agree on their common frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import duck_cycle
from . import transforms as tf
from .clip import Clip
from .curves import hermite
from .errors import InputError
from .frames import character_frame
from .ik.two_bone import solve_two_bone
from .limits import check_bake_size, check_limits
from .loop import Contacts, LoopSpec, check_loop, travel_root
from .metric_table import LOOP, PLANTED_FEET, row
from .metrics import foot_skate, penetration
from .posing import aim_rotation, basis_for, refresh, unposed, world_rotation_to_local
from .progress import ProgressFn, no_progress, part
from .rig_roles import RigMap
from .skeleton import Skeleton
from .spec import GeneratorSpec
from .upright import clip_to_armature

REQUIRED_ROLES = ["hips", "thigh.L", "shin.L", "foot.L", "thigh.R", "shin.R", "foot.R"]

#: Emotion presets of the article's survey (34 participants): name -> (amplitude, speed, weight, direction)
PRESETS = {
    "NEUTRAL": ("Neutral", (5.0, 5.0, 5.0, 0.0), "The article's neutral walk"),
    "JOY": ("Joy", (5.0, 5.0, 1.0, 0.0), "Light weight: over 90 % read it as happy, 94 % as funny"),
    "HAPPY_WANDERING": ("Happy, wandering", (7.0, 5.0, 1.0, 5.0), "67 % happy, 85 % funny"),
    "SAD": ("Sad / fearful", (3.0, 5.0, 9.0, 0.0), "Heavy weight: 38 % sad, 41 % fear"),
}


@dataclass
class DuckParams:
    """Parameters of the duck walk (the article's GUI plus ProcAnim's documented choices).

    frame_start, frame_end: frame range (frames); fps: frames per second; key_interval: a key every
    N frames (the article: 3). amplitude, speed, weight, direction: sliders 0–10.
    """

    frame_start: int = 0
    frame_end: int = 120
    fps: float = 24.0
    key_interval: int = 3
    amplitude: float = 5.0
    speed: float = 5.0
    weight: float = 5.0
    direction: float = 0.0
    gait: str = "PLANTED"
    unit_per_leg: float = 0.225
    rotation_gain_deg: float = 20.0  # g
    fore_aft_divisor: float = 0.9  # q_b
    loop: str = "NONE"  # or IN_PLACE / ROOT_MOTION: a seamless loop of whole cycles (duck_cycle.py)
    loop_cycles: int = 1  # gait cycles in a loop (frame_end is then not used)

    def validate(self) -> None:
        check_limits(self)  # every field a number within its documented range (limits.py)
        check_loop(self.loop, self.loop_cycles, "Duck walk")
        if not self.frame_end > self.frame_start:
            raise InputError(f"End frame ({self.frame_end}) must be after the start frame ({self.frame_start}).")
        if not (np.isfinite(self.fps) and self.fps > 0):
            raise InputError(f"Frames per second must be positive (got {self.fps}).")
        if int(self.key_interval) < 1:
            raise InputError(f"Key interval must be at least 1 frame (got {self.key_interval}).")
        for name in ("amplitude", "speed", "weight", "direction"):
            v = getattr(self, name)
            if not (np.isfinite(v) and 0.0 <= v <= 10.0):
                raise InputError(f"{name.capitalize()} must be between 0 and 10 (got {v}).")
        if self.gait not in ("PLANTED", "ARTICLE"):
            raise InputError(f"Gait must be PLANTED or ARTICLE (got {self.gait!r}).")
        if (self.frame_end - self.frame_start) / max(int(self.key_interval), 1) > 1_000_000:
            raise InputError("That frame range asks for more than a million keys per channel.")
        if not (0 < self.unit_per_leg <= 2 and self.fore_aft_divisor > 0):
            raise InputError("Unit per leg must be in (0, 2] and the fore-aft divisor positive.")

    @property
    def a(self) -> float:
        return self.amplitude / 5.0

    @property
    def s(self) -> float:
        return self.speed / 5.0

    @property
    def w(self) -> float:
        return self.weight / 10.0

    @property
    def d(self) -> float:
        return self.direction / 10.0

    @property
    def q_a(self) -> float:
        """Lift divisor: 1 when Weight < 2.5, 2 when < 7.5, else 3."""
        return 1.0 if self.weight < 2.5 else (2.0 if self.weight < 7.5 else 3.0)

    def key_frames(self) -> np.ndarray:
        f = np.arange(self.frame_start, self.frame_end + 1, int(self.key_interval), dtype=float)
        if f[-1] != self.frame_end:
            f = np.append(f, float(self.frame_end))
        return f


# --------------------------------------------------------------------------- the article's channels


def article_channels(p: DuckParams, theta: np.ndarray) -> dict:
    """The article's control values at phase θ (radians), in its own units (u) and degrees.

    Keys: foot_lift_L/R, foot_fore_L/R, foot_lateral_L/R (sway), foot_pitch_L/R (deg),
    toe_height_L/R, body_height, body_lateral, body_yaw, body_roll (deg), tail_yaw (deg),
    neck_height, neck_yaw (deg), neck_lateral, master_weave, master_yaw (deg).
    """
    a, w, d, q_a, q_b, g = p.a, p.w, p.d, p.q_a, p.fore_aft_divisor, p.rotation_gain_deg
    out = {}
    for side, th in (("L", theta), ("R", theta + np.pi)):  # true half cycle for the right foot
        lift = np.maximum(0.0, -a * np.sin(th) / q_a)  # y = max(0, −a·sin θ / q_a)
        out[f"foot_lift_{side}"] = lift
        out[f"foot_fore_{side}"] = a * np.cos(th) / q_b  # z = a·cos θ / q_b
        out[f"foot_lateral_{side}"] = (a / 3.0) * w * np.abs(np.sin(th / 2.0))  # x_L
        out[f"foot_pitch_{side}"] = np.maximum(0.0, -g * a * np.sin(th) / 2.0)
        out[f"toe_height_{side}"] = -lift / q_a
    out["body_height"] = np.cos(w * np.pi) / 2.0 + (1.0 - w) * np.sin(2.0 * theta) / q_a
    out["body_lateral"] = out["foot_lateral_L"]  # x_L − a/2: the feet's midpoint (see module doc)
    out["body_yaw"] = -w * g * a * np.cos(theta)
    out["body_roll"] = out["body_yaw"] / 3.0
    out["tail_yaw"] = out["body_yaw"] / 2.0
    out["neck_height"] = -out["body_height"] / 2.0
    out["neck_yaw"] = -out["body_yaw"]
    out["neck_lateral"] = w * a * np.cos(theta) / 2.0  # neck yaw / (2g): the gain cancels (g may be 0)
    out["master_weave"] = d * a * np.sin(theta)
    out["master_yaw"] = g * a * out["master_weave"]
    return out


def master_forward(p: DuckParams, frames_rel: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Master forward travel (u) at frames relative to the start."""
    if p.gait == "ARTICLE":
        return frames_rel / 3.0 * p.s * p.a / p.q_a  # s·a/q_a per key of the article (3 frames)
    return theta * 2.0 * p.a / (np.pi * p.fore_aft_divisor)  # 2a/q_b per half cycle: the stance sweep



# --------------------------------------------------------------------------- generator

#: Keys posed at a time: the generator works on chunks of at most this many keys (numpy over the
#: chunk) and reports its progress after each of the :data:`STEPS` of a chunk, so reports come at a
#: steady pace however long the bake (ProcAnim's choice: a chunk has a fixed numpy cost, so smaller
#: chunks would slow short bakes down; figures in docs/performance.md, Duck walk).
CHUNK_KEYS = 2048
#: The metrics' reports after the last chunk: with the chunk's steps, ≥ 20 reports per bake.
METRIC_STEPS = ("continuity", "fk", "skate.L", "skate.R", "penetration", "done")
#: What one chunk does, in order (one progress report after each).
STEPS = ("ankle.L", "ankle.R", "root", "hips", "tail", "neck",
         "thigh.L", "shin.L", "foot.L", "toe.L", "thigh.R", "shin.R", "foot.R", "toe.R")


#: A planted ankle must stay within this fraction of thigh + shin from the hip joint (ProcAnim's
#: choice, not the article's: a knee kept 0.5 % short of straight still has a bend direction).
REACH_MARGIN = 0.995
#: Half-width (rad of phase) of the central difference that gives the ankle's speed at lift-off
#: and touch-down for the planted gait's swing correction.
PHASE_STEP_RAD = 1e-4
#: RECON: in the swing, the foot's lowest end (its tail, the toe tip) rises at least this fraction
#: of the ankle's lift. The article's foot pitch and toe curl, in degrees and units made for a
#: duck's foot, are scaled down (both by one factor) on a foot whose toes they would push into the
#: ground: long toes, or a low ankle (a Rigify bird's).
TOE_CLEARANCE = 0.5
#: Bisection steps for that factor (each halves its interval).
TOE_SCALE_STEPS = 12
#: Phases per gait cycle on which the planted gait checks its choices for the whole walk (the bounce's
#: cut for the legs' reach, the foot gesture's scale for the toes' clearance).
CYCLE_SAMPLES = 360
#: A planted ankle is this close (m) to its rest height: the seam's skate is measured on it.
CONTACT_TOL_M = 1e-3


class _Rig:
    """Indices and rest geometry of the bones the duck walk uses."""

    def __init__(self, skeleton: Skeleton, rigmap: RigMap):
        rigmap.require(REQUIRED_ROLES)
        self.sk = skeleton
        self.cf = character_frame(skeleton, rigmap)
        idx = {}
        for role in ["root", "hips", "tail", "neck", "toe.L", "toe.R"] + REQUIRED_ROLES:
            name = rigmap.get(role)
            if name and skeleton.has(name):
                idx[role] = skeleton.index(name)
        self.idx = idx
        for side in "LR":
            thigh, shin, foot = idx[f"thigh.{side}"], idx[f"shin.{side}"], idx[f"foot.{side}"]
            if skeleton.parents[foot] != shin or skeleton.parents[shin] != thigh:
                raise InputError(
                    f"The {side} leg bones must be a chain thigh → shin → foot "
                    f"({skeleton.names[thigh]}, {skeleton.names[shin]}, {skeleton.names[foot]})."
                )
        if "root" in idx and not skeleton.is_ancestor(idx["root"], idx["hips"]):
            del idx["root"]
        bad = skeleton.unsupported_bones([i for i in idx.values()])
        if bad:
            raise InputError(
                "These bones do not inherit rotation/scale/location the default way, so ProcAnim cannot "
                f"pose them exactly: {', '.join(bad)}."
            )
        self.hips_rest = skeleton.heads[idx["hips"]]
        # the master turns about the character's rest centre (between the hips, on the ground)
        self.pivot = np.array([self.hips_rest[0], self.hips_rest[1], self.cf.ground_z])


def _yaw_quat(deg: np.ndarray) -> np.ndarray:
    return tf.quat_from_axis_angle(np.broadcast_to([0.0, 0.0, 1.0], np.shape(deg) + (3,)), np.radians(deg))


@dataclass
class _Phases:
    """The article's controls at some phases: θ (rad), the channels (:func:`article_channels`), the
    master's translation (m) and rotation (quaternions), each foot's ankle target (m) and contact flags."""

    theta: np.ndarray
    ch: dict
    m_pos: np.ndarray
    m_rot: np.ndarray
    ankle: dict
    contact: dict


class _Cycle:
    """The article's controls as armature-space motion: master, ankle targets (metres)."""

    def __init__(self, rig: _Rig, params: DuckParams):
        self.rig, self.p = rig, params
        self.u = params.unit_per_leg * rig.cf.leg_length  # metres per article unit
        # the planted gait's choices for the whole walk (the ARTICLE gait checks each key instead)
        self.cut: tuple[float, float] | None = None  # (j, δ) of :func:`_bounce_cut`, m
        self.gesture_scale: float | None = None  # :func:`_gesture_scale`
        if params.gait == "PLANTED":
            cycle = self.at(self.phases())
            self.cut = _bounce_cut(self, cycle)
            self.gesture_scale = _gesture_scale(self, cycle)

    def phases(self) -> np.ndarray:
        """Phases (rad) that sample one gait cycle; the one phase of a duck that does not walk."""
        if self.p.s <= 0:
            return np.zeros(1)
        return np.arange(CYCLE_SAMPLES) * (2.0 * np.pi / CYCLE_SAMPLES)

    def at(self, theta: np.ndarray, rel: np.ndarray | None = None) -> _Phases:
        """The article's controls at the phases θ (rad), ``rel`` frames after the start (by default
        the frames of those phases)."""
        p = self.p
        if rel is None:
            rel = theta / (p.s * 2.0 * np.pi / p.fps) if p.s > 0 else np.zeros_like(theta)
        ch = article_channels(p, theta)
        m_pos, m_yaw = self.master(theta, rel)
        ankle, contact = {}, {}
        for side in "LR":
            ankle[side], contact[side] = self.ankle(side, theta, ch)
        return _Phases(theta, ch, m_pos, _yaw_quat(m_yaw), ankle, contact)

    def body(self, ph: _Phases) -> tuple[np.ndarray, np.ndarray]:
        """The hips' head (m) and armature-space rotation at ``ph`` as the article moves them: master ∘
        (sway, bounce) ∘ yaw/roll about the hips — before any lowering for the legs' reach."""
        rig, u, n = self.rig, self.u, len(ph.theta)
        fwd, left, up = rig.cf.forward, rig.cf.left, rig.cf.up
        off = np.outer(ph.ch["body_lateral"], left) * u + np.outer(ph.ch["body_height"], up) * u
        body_rot = tf.quat_mul(_yaw_quat(ph.ch["body_yaw"]),
                               tf.quat_from_axis_angle(np.broadcast_to(fwd, (n, 3)), np.radians(ph.ch["body_roll"])))
        return self.to_master(rig.hips_rest + off, ph.m_pos, ph.m_rot), tf.quat_mul(ph.m_rot, body_rot)

    def drop(self, ph: _Phases, hips_pos, hips_rot) -> np.ndarray:
        """How far (m) the body comes down at ``ph`` so that the legs reach their ankles."""
        if self.cut is not None:
            j, delta = self.cut
            return delta + j * 0.5 * (1.0 + np.sin(2.0 * ph.theta))
        need = _reach_need(self, ph, hips_pos, hips_rot)  # ARTICLE: each key, the planted feet only
        return np.max([np.where(ph.contact[s], np.maximum(need[s], 0.0), 0.0) for s in "LR"], axis=0)

    def master(self, th, fr):
        """Master (root) translation (m) and yaw (deg) at phase th / relative frames fr."""
        cf, u = self.rig.cf, self.u
        c = article_channels(self.p, th)
        pos = np.outer(master_forward(self.p, fr, th), cf.forward) * u + np.outer(c["master_weave"], cf.left) * u
        return pos, c["master_yaw"]

    def to_master(self, points_rest, pos, rot):
        pivot = self.rig.pivot
        return tf.quat_rotate(rot, points_rest - pivot) + pivot + pos

    def ankle_article(self, side: str, th):
        """The article's ankle control at phase θ (the left foot's phase), moved with the master."""
        p, rig, cf, u = self.p, self.rig, self.rig.cf, self.u
        fr = th / max(p.s * 2.0 * np.pi / p.fps, 1e-12)  # frames for that phase
        c = article_channels(p, th)
        pos, yaw = self.master(th, fr)
        rest_ankle = rig.sk.heads[rig.idx[f"foot.{side}"]]
        local = (
            rest_ankle
            + np.outer(c[f"foot_fore_{side}"], cf.forward) * u
            + np.outer(c[f"foot_lateral_{side}"], cf.left) * u
            + np.outer(c[f"foot_lift_{side}"], cf.up) * u
        )
        return self.to_master(local, pos, _yaw_quat(yaw))

    def ankle(self, side: str, theta, ch):
        """Ankle target (armature space, m) and contact flags of one foot at the phases θ."""
        off = 0.0 if side == "L" else np.pi
        contact = ch[f"foot_lift_{side}"] <= 1e-12
        art = self.ankle_article(side, theta)
        if self.p.gait == "PLANTED" and self.p.s > 0 and self.p.a > 0:
            art = _planted(lambda sd, t: self.ankle_article(sd, t - off), side, theta + off, art)
        return art, contact


class _Keys:
    """Pose channels of one chunk of keys and the armature-space pose they give, kept up to date."""

    def __init__(self, sk: Skeleton, n: int):
        self.sk, self.n = sk, n
        self.locations = np.zeros((n, len(sk), 3))
        self.rotations = tf.quat_identity((n, len(sk)))
        self.key_loc = np.zeros(len(sk), bool)
        self.key_rot = np.zeros(len(sk), bool)
        self.pose = sk.fk(self.locations, self.rotations)
        self.local = np.broadcast_to(np.eye(4), (n, len(sk), 4, 4)).copy()  # each bone's basis matrix

    def set_bone(self, i, loc=None, rot=None):
        if loc is not None and not self.sk.connected[i]:
            self.locations[:, i] = loc
            self.key_loc[i] = True
        if rot is not None:
            self.rotations[:, i] = rot
            self.key_rot[i] = True
        refresh(self.sk, self.locations, self.rotations, self.pose, i, self.local)

    def place(self, i, pos, rot_world):
        """Put bone i's head at ``pos`` with orientation ``rot_world``·rest (armature space)."""
        sk = self.sk
        q_rest = tf.mat3_to_quat(sk.matrix_local[i, :3, :3])
        want = tf.compose(pos, tf.quat_mul(rot_world, np.broadcast_to(q_rest, (self.n, 4))))
        loc, rot, _ = tf.decompose(basis_for(sk, self.pose, i, want))
        self.set_bone(i, loc, rot)

    def unposed(self, i):
        return unposed(self.sk, self.pose, i)


def _pose_body(keys: _Keys, cyc: _Cycle, ph: _Phases, tick):
    """Root (the master) and hips (:meth:`_Cycle.body`), the hips lowered by :meth:`_Cycle.drop`.
    Returns the hips' rotation and how far (m) each key was lowered."""
    rig, n = cyc.rig, keys.n
    sk, idx = rig.sk, rig.idx
    hips_pos, hips_rot = cyc.body(ph)
    if "root" in idx:
        root = idx["root"]
        keys.place(root, cyc.to_master(np.broadcast_to(sk.heads[root], (n, 3)), ph.m_pos, ph.m_rot), ph.m_rot)
    tick()
    drop = cyc.drop(ph, hips_pos, hips_rot)
    keys.place(idx["hips"], hips_pos - np.outer(drop, rig.cf.up), hips_rot)
    tick()
    return hips_rot, drop


def _reach_need(cyc: _Cycle, ph: _Phases, hips_pos, hips_rot) -> dict:
    """Per foot, how far (m) the hips at ``hips_pos``/``hips_rot`` must come down for the hip joint to
    be within ``REACH_MARGIN`` of the leg from the ankle target (negative: the leg has that slack)."""
    rig = cyc.rig
    sk, idx, up = rig.sk, rig.idx, rig.cf.up
    need = {}
    for side in "LR":
        thigh, shin = idx[f"thigh.{side}"], idx[f"shin.{side}"]
        reach = (sk.lengths[thigh] + sk.lengths[shin]) * REACH_MARGIN
        hip_j = tf.quat_rotate(hips_rot, sk.heads[thigh] - rig.hips_rest) + hips_pos
        vec = hip_j - ph.ankle[side]
        horiz = np.linalg.norm(vec - np.outer(vec @ up, up), axis=-1)
        need[side] = vec @ up - np.sqrt(np.maximum(reach**2 - horiz**2, 0.0))
    return need


def _bounce_cut(cyc: _Cycle, cycle: _Phases) -> tuple[float, float]:
    """``(j, δ)`` (m): the planted gait lowers the body by δ + j·(1 + sin 2θ)/2 at phase θ, the least
    that keeps both legs within reach of their ankles (stance and swing) over the sampled ``cycle``.

    The top of the article's bounce comes down first — j up to the bounce's whole height, its lowest
    point kept — then the whole body (δ). The body's height stays a sine of 2θ, in phase with the
    article's, whatever the legs: no frame is lowered on its own (a kink), and no leg's reach stops
    counting when its foot lifts (a jump)."""
    hips_pos, hips_rot = cyc.body(cycle)
    need = _reach_need(cyc, cycle, hips_pos, hips_rot)
    need = np.maximum(need["L"], need["R"])
    top = 0.5 * (1.0 + np.sin(2.0 * cycle.theta))  # 0 at the bounce's lowest point, 1 at its top
    height = 2.0 * (1.0 - cyc.p.w) / cyc.p.q_a * cyc.u  # the article's bounce, lowest to highest
    short = need > 0.0
    j = 0.0
    if np.any(short):
        with np.errstate(divide="ignore"):
            j = float(min(np.max(need[short] / top[short]), height))
    delta = max(float(np.max(need - j * top)), 0.0)
    return j, delta


def _pose_tail_and_neck(keys: _Keys, cyc: _Cycle, ch, hips_rot_world, tick):
    """Tail yaw; neck counter-motion (offset and yaw, in the hips' frame)."""
    idx, left, up, u = cyc.rig.idx, cyc.rig.cf.left, cyc.rig.cf.up, cyc.u
    if "tail" in idx:
        t = idx["tail"]
        keys.set_bone(t, rot=world_rotation_to_local(keys.unposed(t), _yaw_quat(ch["tail_yaw"])))
    tick()
    if "neck" in idx:
        k = idx["neck"]
        u_neck = keys.unposed(k)
        off_world = np.outer(ch["neck_height"], up) * u + np.outer(ch["neck_lateral"], left) * u
        off_world = tf.quat_rotate(hips_rot_world, off_world)
        off_local = np.einsum("fji,fj->fi", u_neck[:, :3, :3], off_world)
        keys.set_bone(k, loc=off_local, rot=world_rotation_to_local(u_neck, _yaw_quat(ch["neck_yaw"])))
    tick()


def _pose_leg(keys: _Keys, cyc: _Cycle, side: str, ph: _Phases, hips_rot_world, tick):
    """Two-bone IK to the ankle target, then the article's foot pitch and toe curl, scaled down where
    they would leave the toes less than ``TOE_CLEARANCE`` of the ankle's lift: by one factor for the
    whole walk (PLANTED, :func:`_gesture_scale`), key by key (ARTICLE)."""
    rig, n = cyc.rig, keys.n
    sk, idx, cf = rig.sk, rig.idx, rig.cf
    thigh, shin, foot = idx[f"thigh.{side}"], idx[f"shin.{side}"], idx[f"foot.{side}"]
    hip_j = keys.pose[:, thigh, :3, 3] if sk.connected[thigh] else keys.unposed(thigh)[:, :3, 3]
    knee_rest = sk.heads[shin]
    a0, a1 = sk.heads[thigh], sk.heads[foot]
    line = tf.normalize(a1 - a0)
    pole_rest = knee_rest - a0 - np.dot(knee_rest - a0, line) * line
    if np.linalg.norm(pole_rest) < 1e-6 * cf.leg_length:  # a straight rest leg: bend the knee forward
        pole_rest = cf.forward.copy()
    pole = tf.quat_rotate(hips_rot_world, np.broadcast_to(pole_rest, (n, 3)))
    ankle = ph.ankle[side]
    knee, _ = solve_two_bone(hip_j, ankle, pole, sk.lengths[thigh], sk.lengths[shin])
    keys.set_bone(thigh, rot=aim_rotation(keys.unposed(thigh), knee - hip_j))
    tick()
    keys.set_bone(shin, rot=aim_rotation(keys.unposed(shin), ankle - knee))
    tick()
    gesture = _gesture(cyc, side, ph)
    if cyc.gesture_scale is not None:
        factor = np.full(n, cyc.gesture_scale)
    else:  # ARTICLE: key by key, the posed ankle
        need = TOE_CLEARANCE * ph.ch[f"foot_lift_{side}"] * cyc.u
        factor = _clearance_factor(gesture, need, keys.pose[:, foot, :3, 3])
    tick()
    gesture.pose(keys, factor)
    tick()


def _gesture(cyc: _Cycle, side: str, ph: _Phases) -> _FootGesture:
    """The article's foot pitch and toe curl of one foot at ``ph``."""
    rig = cyc.rig
    sk, idx = rig.sk, rig.idx
    foot, toe = idx[f"foot.{side}"], idx.get(f"toe.{side}")
    if toe is not None and sk.parents[toe] != foot:
        toe = None
    left_now = tf.quat_rotate(ph.m_rot, np.broadcast_to(rig.cf.left, (len(ph.theta), 3)))
    return _FootGesture(sk, foot, toe, left_now, ph.m_rot, ph.ch[f"foot_pitch_{side}"],
                        -ph.ch[f"toe_height_{side}"] * cyc.u)  # the article's toe height, as a curl down


def _clearance_factor(gesture: _FootGesture, need: np.ndarray, head: np.ndarray) -> np.ndarray:
    """Per phase, the largest factor on the article's foot pitch and toe curl (bisection,
    ``TOE_SCALE_STEPS``) that keeps the foot's lower end ``need`` (m) above its rest height with the
    foot's head at ``head`` (m); 1 where the whole gesture does (factor 0 lifts the foot rigidly)."""
    n = len(need)
    factor = np.ones(n)
    short = np.nonzero(gesture.rise(factor, np.arange(n), head) < need - 1e-9)[0]
    if short.size:
        lo, hi = np.zeros(short.size), np.ones(short.size)
        for _ in range(TOE_SCALE_STEPS):
            mid = 0.5 * (lo + hi)
            ok = gesture.rise(mid, short, head[short]) >= need[short]
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
        factor[short] = lo
    return factor


def _gesture_scale(cyc: _Cycle, cycle: _Phases) -> float:
    """The planted gait's one factor on the article's foot pitch and toe curl for the whole walk: the
    largest that keeps both feet's toes ``TOE_CLEARANCE`` of the ankle's lift clear on every sampled
    phase of the ``cycle`` (the ankles on their targets: the legs reach them, :func:`_bounce_cut`).
    A factor found phase by phase would change within a swing, and bend the foot's curves."""
    scale = 1.0
    for side in "LR":
        need = TOE_CLEARANCE * cycle.ch[f"foot_lift_{side}"] * cyc.u
        swing = np.nonzero(need > 0.0)[0]
        if swing.size:
            gesture = _gesture(cyc, side, _take(cycle, swing))
            scale = min(scale, float(_clearance_factor(gesture, need[swing], cycle.ankle[side][swing]).min()))
    return scale


def _take(ph: _Phases, rows: np.ndarray) -> _Phases:
    """The phases ``rows`` of ``ph``."""
    return _Phases(ph.theta[rows], {k: v[rows] for k, v in ph.ch.items()}, ph.m_pos[rows], ph.m_rot[rows],
                   {s: v[rows] for s, v in ph.ankle.items()}, {s: v[rows] for s, v in ph.contact.items()})


class _FootGesture:
    """The article's foot pitch (deg, about the character's left) and toe curl (a drop of the toe
    tip, m) of one foot at some phases, scaled by a factor per phase: measured (:meth:`rise`) or
    posed (:meth:`pose`)."""

    def __init__(self, sk: Skeleton, foot: int, toe: int | None, left_now, m_rot, pitch_deg, toe_drop_m):
        self.sk, self.foot, self.toe, self.left_now = sk, foot, toe, left_now
        self.m_rot, self.pitch_deg, self.toe_drop_m = m_rot, pitch_deg, toe_drop_m

    def rotations(self, factor, rows):
        """The foot's armature-space orientation and the toe's curl (quaternions) on ``rows``."""
        sk = self.sk
        pitch = tf.quat_from_axis_angle(self.left_now[rows], np.radians(factor * self.pitch_deg[rows]))
        q_rest = np.broadcast_to(tf.mat3_to_quat(sk.matrix_local[self.foot, :3, :3]), (len(rows), 4))
        foot = tf.quat_mul(tf.quat_mul(pitch, self.m_rot[rows]), q_rest)
        if self.toe is None:
            return foot, None
        drop = factor * self.toe_drop_m[rows] / max(sk.lengths[self.toe], 1e-9)
        return foot, tf.quat_from_axis_angle(self.left_now[rows], np.arcsin(np.clip(drop, -1.0, 1.0)))

    def pose(self, keys: _Keys, factor: np.ndarray) -> None:
        """Pose the foot (and toe) of ``keys`` with ``factor`` ``(n,)`` × the article's pitch and curl."""
        foot, toe = self.foot, self.toe
        q_foot, curl = self.rotations(factor, np.arange(keys.n))
        keys.set_bone(foot, rot=tf.quat_mul(tf.quat_conj(tf.mat3_to_quat(keys.unposed(foot)[:, :3, :3])), q_foot))
        if toe is not None:
            keys.set_bone(toe, rot=world_rotation_to_local(keys.unposed(toe), curl))

    def rise(self, factor: np.ndarray, rows: np.ndarray, head: np.ndarray) -> np.ndarray:
        """How far (m) the lower of the foot's tail and the toe tip is above its rest height on ``rows``
        with ``factor`` ``(len(rows),)`` and the foot's head at ``head`` ``(len(rows), 3)``."""
        sk, foot, toe = self.sk, self.foot, self.toe
        q_foot, curl = self.rotations(factor, rows)
        y = np.array([0.0, 1.0, 0.0])
        heights = [(head + tf.quat_rotate(q_foot, y * sk.lengths[foot]))[:, 2] - sk.tails[foot, 2]]
        if toe is not None:
            rel = sk.rest_rel[toe]
            toe_head = head + tf.quat_rotate(q_foot, np.broadcast_to(rel[:3, 3], (len(rows), 3)))
            q_rel = np.broadcast_to(tf.mat3_to_quat(rel[:3, :3]), (len(rows), 4))
            q_toe = tf.quat_mul(curl, tf.quat_mul(q_foot, q_rel))
            heights.append((toe_head + tf.quat_rotate(q_toe, y * sk.lengths[toe]))[:, 2] - sk.tails[toe, 2])
        return np.min(heights, axis=0)


def _pose_keys(cyc: _Cycle, frames: np.ndarray, progress: ProgressFn):
    """Pose channels of the keys at ``frames`` (one chunk): ``(keys, contact, drop)`` (drop: how far
    (m) each key's body was lowered for the legs' reach)."""
    p, sk = cyc.p, cyc.rig.sk
    done = [0]

    def tick():
        done[0] += 1
        progress(done[0] / len(STEPS))

    rel = frames - p.frame_start
    ph = cyc.at(rel * p.s * 2.0 * np.pi / p.fps, rel)  # θ(f) = f·s·2π/fps
    tick()
    tick()
    keys = _Keys(sk, len(frames))
    hips_rot_world, drop = _pose_body(keys, cyc, ph, tick)
    _pose_tail_and_neck(keys, cyc, ph.ch, hips_rot_world, tick)
    for side in "LR":
        _pose_leg(keys, cyc, side, ph, hips_rot_world, tick)
    return keys, ph.contact, drop


def generate_duck_walk(skeleton: Skeleton, rigmap: RigMap, params: DuckParams,
                       progress: ProgressFn = no_progress) -> Clip:
    """Bake-ready clip of the duck walk on ``skeleton`` (keys at ``params.key_frames()``).

    ``progress`` (see :mod:`.progress`) hears the fraction done after every step of every chunk
    of keys and may cancel the bake there.
    """
    params.validate()
    if params.loop != "NONE":
        return _walk_loop(skeleton, rigmap, params, progress)
    check_bake_size((params.frame_end - params.frame_start) / params.key_interval + 1, len(skeleton), "The duck walk")
    rig = _Rig(skeleton, rigmap)
    cyc = _Cycle(rig, params)
    frames = params.key_frames()
    n = len(frames)
    chunks = np.array_split(np.arange(n), -(-n // CHUNK_KEYS))
    parts = []
    for c, keys_idx in enumerate(chunks):
        span = part(progress, 0.8 * c / len(chunks), 0.8 * (c + 1) / len(chunks))
        parts.append(_pose_keys(cyc, frames[keys_idx], span))
    done = [0]

    def tick():
        done[0] += 1
        progress(0.8 + 0.2 * done[0] / len(METRIC_STEPS))

    keys = parts[0][0]
    clip = Clip(
        list(skeleton.names),
        frames,
        params.fps,
        np.concatenate([k.locations for k, _, _ in parts]),
        np.concatenate([k.rotations for k, _, _ in parts]),
        key_location=keys.key_loc,
        key_rotation=keys.key_rot,
        generator="duck_walk",
    ).with_continuity()
    contact = {s: np.concatenate([c[s] for _, c, _ in parts]) for s in "LR"}
    drop = np.concatenate([r for _, _, r in parts])
    tick()
    clip.metrics = _metrics(skeleton, rig.idx, clip, contact, params, rig.cf, cyc.u, drop, tick)
    tick()
    return clip


def _walk_loop(skeleton: Skeleton, rigmap: RigMap, params: DuckParams, progress: ProgressFn) -> Clip:
    """A seamless loop of ``params.loop_cycles`` gait cycles (:mod:`.duck_cycle`)."""
    frames = duck_cycle.loop_frames(params)
    rig = _Rig(skeleton, rigmap)
    dense = generate_duck_walk(skeleton, rigmap, frames.window, part(progress, 0.0, 0.9))
    w = frames.window
    u = w.unit_per_leg * rig.cf.leg_length
    cycle_stride = float(master_forward(w, np.array([frames.cycle_frames]), np.array([2.0 * np.pi]))[0]) * u
    hips = rig.idx["hips"]
    spec = LoopSpec(params.loop, frames.cycles, cycle_stride, rig.cf.forward, hips,
                    travel_root(skeleton, hips, rig.idx.get("root")))
    feet = [rig.idx[f"foot.{s}"] for s in "LR"]
    contacts = Contacts(lambda pose: pose[:, feet][:, :, :3, 3], skeleton.heads[feet, 2], CONTACT_TOL_M)
    clip = duck_cycle.cut_loop(skeleton, dense, frames, spec, contacts)
    progress(1.0)
    return clip


def _planted(ankle_article, side: str, th: np.ndarray, art: np.ndarray) -> np.ndarray:
    """Hold each stance foot at its mid-stance position; Hermite swing with zero end speeds.

    ``th`` is this foot's own phase; ``ankle_article(side, th)`` the article's ankle at that phase.
    """
    out = art.copy()
    two_pi = 2.0 * np.pi
    cyc = np.floor(th / two_pi)
    phase = th - cyc * two_pi  # stance: [0, π], swing: (π, 2π)
    stance = phase <= np.pi
    eps = PHASE_STEP_RAD

    def horiz(v):
        v = np.array(v, float)
        v[..., 2] = 0.0
        return v

    hold = horiz(ankle_article(side, cyc * two_pi + np.pi / 2))  # mid-stance position of this cycle
    out[stance, :2] = hold[stance, :2]
    sw = ~stance
    if np.any(sw):
        th0 = cyc[sw] * two_pi + np.pi
        th1 = th0 + np.pi
        a0, a1 = ankle_article(side, th0), ankle_article(side, th1)
        e0 = hold[sw] - horiz(a0)
        e1 = horiz(ankle_article(side, th1 + np.pi / 2)) - horiz(a1)
        m0 = -horiz((ankle_article(side, th0 + eps) - ankle_article(side, th0 - eps)) / (2 * eps))
        m1 = -horiz((ankle_article(side, th1 + eps) - ankle_article(side, th1 - eps)) / (2 * eps))
        s = ((th[sw] - th0) / np.pi)[:, None]
        out[sw] = art[sw] + hermite(e0, np.pi * m0, e1, np.pi * m1, s)  # tangents per half cycle (π rad)
    return out


def _metrics(sk, idx, clip, contact, params, cf, u, drop, tick) -> dict:
    pose = sk.fk(clip.locations, clip.rotations)
    tick()
    m = {"keys": int(clip.frame_count), "unit_m": float(u), "leg_length_m": float(cf.leg_length)}
    fps_keys = params.fps / params.key_interval
    skate, low = [], []
    for side in "LR":
        ankle = pose[:, idx[f"foot.{side}"], :3, 3]
        skate.append(foot_skate(ankle, contact[side], fps_keys))
        low.append(ankle[:, 2])
        tick()
    m["skate_mean_cm_s"] = max(s["skate_mean_cm_s"] for s in skate)
    m["skate_p95_cm_s"] = max(s["skate_p95_cm_s"] for s in skate)
    rest_ankle_z = min(sk.heads[idx["foot.L"]][2], sk.heads[idx["foot.R"]][2])
    m.update(penetration(rest_ankle_z - np.concatenate(low)))
    tick()
    duration = (clip.frames[-1] - clip.frames[0]) / params.fps
    root_i = idx.get("root", idx["hips"])
    travel = pose[-1, root_i, :3, 3] - pose[0, root_i, :3, 3]
    m["speed_m_s"] = float(np.linalg.norm(travel[:2]) / duration) if duration > 0 else 0.0
    m["stride_m"] = float(m["speed_m_s"] / params.s) if params.s > 0 else 0.0  # one cycle per s⁻¹ seconds
    m["reach_clamped_frames"] = int(np.sum(drop > 1e-9))
    m["bounce_lowered_cm"] = float(np.max(drop, initial=0.0) * 100.0)
    m["gait"] = params.gait
    return m


# ----------------------------------------------------------------------------- the generator's spec


def bake_call(skeleton: Skeleton, rigmap: RigMap, params: DuckParams, progress: ProgressFn = no_progress) -> list[Clip]:
    """What ``procanim.duck_walk`` computes: one Clip, for the one armature."""
    return [clip_to_armature(generate_duck_walk(skeleton, rigmap, params, progress=progress), skeleton)]


SPEC = GeneratorSpec(
    "duck_walk", "Duck Walk", "Laban-style walk cycle with emotion presets on a bird rig",
    params=DuckParams, engine=generate_duck_walk, call=bake_call,
    metrics=(
        row("stride_m", "Stride", "m", 3, "How far one foot advances per gait cycle"),
        row("speed_m_s", "Walking speed", "m/s", 3, "Mean forward speed of the body"),
        *PLANTED_FEET,
        row("reach_clamped_frames", "Keys lowered (reach)", "", 0,
            "Keys where a light duck's body was lowered so both legs reach their feet"),
        row("bounce_lowered_cm", "Body lowered (reach)", "cm", 2,
            "How far a light duck's body came down at most so both legs reach their feet (0: the article's "
            "bounce; the planted gait lowers the top of the bounce, the same on every step)"),
        *LOOP,
    ),
)
