"""Duck walk — the "Le Quack Walker" cycle (METHODS.md §M1), on any bird armature.

The article keyed IK foot controls, toes, spine, tail, neck and a master control with
trigonometric functions of a phase angle θ. ProcAnim computes the same control trajectories in the
armature's space, then poses the FK bones (two-bone IK for the legs), so it works on rigs with or
without IK controls and bakes exactly what Blender will show.

Symbols (METHODS.md): a = Amplitude/5, s = Speed/5, w = Weight/10, d = Direction/10, q_a (lift
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
* When a light duck's bounce would lift the hips beyond the reach of a planted foot, the body is
  lowered just enough (``clip.metrics['reach_clamped_frames']`` counts those keys).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import transforms as tf
from .clip import Clip
from .errors import InputError
from .frames import character_frame
from .ik.two_bone import solve_two_bone
from .metrics import foot_skate, penetration
from .posing import aim_rotation, unposed, world_rotation_to_local
from .rig_roles import RigMap
from .skeleton import Skeleton

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

    def validate(self) -> None:
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
    out["neck_lateral"] = out["neck_yaw"] / (2.0 * g)
    out["master_weave"] = d * a * np.sin(theta)
    out["master_yaw"] = g * a * out["master_weave"]
    return out


def master_forward(p: DuckParams, frames_rel: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Master forward travel (u) at frames relative to the start."""
    if p.gait == "ARTICLE":
        return frames_rel / 3.0 * p.s * p.a / p.q_a  # s·a/q_a per key of the article (3 frames)
    return theta * 2.0 * p.a / (np.pi * p.fore_aft_divisor)  # 2a/q_b per half cycle: the stance sweep


# --------------------------------------------------------------------------- generator


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
        if "root" in idx and not _ancestor(skeleton, idx["root"], idx["hips"]):
            del idx["root"]
        bad = skeleton.unsupported_bones([i for i in idx.values()])
        if bad:
            raise InputError(
                "These bones do not inherit rotation/scale/location the default way, so ProcAnim cannot "
                f"pose them exactly: {', '.join(bad)}."
            )


def _ancestor(sk: Skeleton, a: int, b: int) -> bool:
    p = sk.parents[b]
    while p >= 0:
        if p == a:
            return True
        p = sk.parents[p]
    return False


def _yaw_quat(deg: np.ndarray) -> np.ndarray:
    return tf.quat_from_axis_angle(np.broadcast_to([0.0, 0.0, 1.0], np.shape(deg) + (3,)), np.radians(deg))


def _hermite(s, p0, m0, p1, m1, span):
    s = s[:, None]
    h00 = 2 * s**3 - 3 * s**2 + 1
    h10 = s**3 - 2 * s**2 + s
    h01 = -2 * s**3 + 3 * s**2
    h11 = s**3 - s**2
    return h00 * p0 + h10 * span * m0 + h01 * p1 + h11 * span * m1


def generate_duck_walk(skeleton: Skeleton, rigmap: RigMap, params: DuckParams, progress=None) -> Clip:
    """Bake-ready clip of the duck walk on ``skeleton`` (keys at ``params.key_frames()``)."""
    params.validate()
    rig = _Rig(skeleton, rigmap)
    sk, cf, idx = skeleton, rig.cf, rig.idx
    u = params.unit_per_leg * cf.leg_length  # metres per article unit
    frames = params.key_frames()
    rel = frames - params.frame_start
    theta = rel * params.s * 2.0 * np.pi / params.fps  # θ(f) = f·s·2π/fps
    ch = article_channels(params, theta)
    fwd, left, up = cf.forward, cf.left, cf.up
    n = len(frames)

    def master(th, fr):
        """Master (root) translation (m) and yaw (deg) at phase th / relative frames fr."""
        c = article_channels(params, th)
        pos = np.outer(master_forward(params, fr, th), fwd) * u + np.outer(c["master_weave"], left) * u
        return pos, c["master_yaw"]

    m_pos, m_yaw = master(theta, rel)
    m_rot = _yaw_quat(m_yaw)
    # the master turns about the character's rest centre (between the hips, on the ground)
    hips_rest = sk.heads[idx["hips"]]
    pivot = np.array([hips_rest[0], hips_rest[1], cf.ground_z])

    def to_master(points_rest, pos, rot):
        return tf.quat_rotate(rot, points_rest - pivot) + pivot + pos

    # ---- ankle targets (armature space): the article's controls, moved with the master
    def ankle_article(side, th):
        fr = th / max(params.s * 2.0 * np.pi / params.fps, 1e-12)  # frames for that phase
        c = article_channels(params, th)
        pos, yaw = master(th, fr)
        rest_ankle = sk.heads[idx[f"foot.{side}"]]
        local = (
            rest_ankle
            + np.outer(c[f"foot_fore_{side}"], fwd) * u
            + np.outer(c[f"foot_lateral_{side}"], left) * u
            + np.outer(c[f"foot_lift_{side}"], up) * u
        )
        return to_master(local, pos, _yaw_quat(yaw))

    ankle, contact = {}, {}
    for side, off in (("L", 0.0), ("R", np.pi)):
        th = theta + off
        contact[side] = ch[f"foot_lift_{side}"] <= 1e-12
        art = ankle_article(side, theta)
        if params.gait == "PLANTED" and params.s > 0 and params.a > 0:
            art = _planted(lambda sd, t, off=off: ankle_article(sd, t - off), side, th, art)
        ankle[side] = art

    # ---- body: master ∘ (sway, bounce) ∘ yaw/roll about the hips
    body_off = np.outer(ch["body_lateral"], left) * u + np.outer(ch["body_height"], up) * u
    body_rot = tf.quat_mul(
        _yaw_quat(ch["body_yaw"]), tf.quat_from_axis_angle(np.broadcast_to(fwd, (n, 3)), np.radians(ch["body_roll"]))
    )
    hips_target_pos = to_master(hips_rest + body_off, m_pos, m_rot)
    reach_clamped = np.zeros(n, bool)

    locations = np.zeros((n, len(sk), 3))
    rotations = tf.quat_identity((n, len(sk)))
    key_loc = np.zeros(len(sk), bool)
    key_rot = np.zeros(len(sk), bool)
    pose = sk.fk(locations, rotations)

    def set_bone(i, loc=None, rot=None):
        if loc is not None and not sk.connected[i]:
            locations[:, i] = loc
            key_loc[i] = True
        if rot is not None:
            rotations[:, i] = rot
            key_rot[i] = True
        for j in [i, *sk.descendants(i)]:  # keep the pose of everything below i up to date
            pose[:, j] = unposed(sk, pose, j) @ tf.compose(locations[:, j], rotations[:, j])

    def place(i, pos, rot_world):
        """Put bone i's head at ``pos`` with orientation ``rot_world``·rest (armature space)."""
        q_rest = tf.mat3_to_quat(sk.matrix_local[i, :3, :3])
        want = tf.compose(pos, tf.quat_mul(rot_world, np.broadcast_to(q_rest, (n, 4))))
        parent = sk.parents[i]
        basis = sk.basis_for(None if parent < 0 else pose[:, parent], i, want)
        loc, rot, _ = tf.decompose(basis)
        set_bone(i, loc, rot)

    if "root" in idx:
        root = idx["root"]
        place(root, to_master(np.broadcast_to(sk.heads[root], (n, 3)), m_pos, m_rot), m_rot)

    # reach clamp: lower the hips until both planted ankles are reachable
    hips_rot_world = tf.quat_mul(m_rot, body_rot)
    hip_joint_rest = {s: sk.heads[idx[f"thigh.{s}"]] for s in "LR"}
    drop = np.zeros(n)
    for side in "LR":
        thigh, shin = idx[f"thigh.{side}"], idx[f"shin.{side}"]
        reach = (sk.lengths[thigh] + sk.lengths[shin]) * 0.995
        hip_j = tf.quat_rotate(hips_rot_world, hip_joint_rest[side] - hips_rest) + hips_target_pos
        vec = hip_j - ankle[side]
        horiz = np.linalg.norm(vec - np.outer(vec @ up, up), axis=-1)
        vert = vec @ up
        need = vert - np.sqrt(np.maximum(reach**2 - horiz**2, 0.0))
        need = np.where(contact[side], np.maximum(need, 0.0), 0.0)
        drop = np.maximum(drop, need)
    reach_clamped = drop > 1e-9
    hips_target_pos = hips_target_pos - np.outer(drop, up)
    place(idx["hips"], hips_target_pos, hips_rot_world)

    if "tail" in idx:
        t = idx["tail"]
        set_bone(t, rot=world_rotation_to_local(unposed(sk, pose, t), _yaw_quat(ch["tail_yaw"])))
    if "neck" in idx:
        k = idx["neck"]
        u_neck = unposed(sk, pose, k)
        off_world = np.outer(ch["neck_height"], up) * u + np.outer(ch["neck_lateral"], left) * u
        off_world = tf.quat_rotate(hips_rot_world, off_world)
        off_local = np.einsum("fji,fj->fi", u_neck[:, :3, :3], off_world)
        set_bone(k, loc=off_local, rot=world_rotation_to_local(u_neck, _yaw_quat(ch["neck_yaw"])))

    # ---- legs: two-bone IK to the ankle targets, then foot pitch and toe curl
    for side in "LR":
        thigh, shin, foot = idx[f"thigh.{side}"], idx[f"shin.{side}"], idx[f"foot.{side}"]
        hip_j = pose[:, thigh, :3, 3] if sk.connected[thigh] else unposed(sk, pose, thigh)[:, :3, 3]
        knee_rest = sk.heads[shin]
        a0, a1 = sk.heads[thigh], sk.heads[foot]
        line = tf.normalize(a1 - a0)
        pole_rest = knee_rest - a0 - np.dot(knee_rest - a0, line) * line
        if np.linalg.norm(pole_rest) < 1e-6 * cf.leg_length:
            pole_rest = fwd.copy()
        pole = tf.quat_rotate(hips_rot_world, np.broadcast_to(pole_rest, (n, 3)))
        knee, _ = solve_two_bone(hip_j, ankle[side], pole, sk.lengths[thigh], sk.lengths[shin])
        set_bone(thigh, rot=aim_rotation(unposed(sk, pose, thigh), knee - hip_j))
        set_bone(shin, rot=aim_rotation(unposed(sk, pose, shin), ankle[side] - knee))
        left_now = tf.quat_rotate(m_rot, np.broadcast_to(left, (n, 3)))
        pitch = tf.quat_from_axis_angle(left_now, np.radians(ch[f"foot_pitch_{side}"]))
        foot_world = tf.quat_mul(pitch, m_rot)
        q_rest = tf.mat3_to_quat(sk.matrix_local[foot, :3, :3])
        u_foot = unposed(sk, pose, foot)
        target = tf.quat_mul(foot_world, np.broadcast_to(q_rest, (n, 4)))
        set_bone(foot, rot=tf.quat_mul(tf.quat_conj(tf.mat3_to_quat(u_foot[:, :3, :3])), target))
        toe_role = f"toe.{side}"
        if toe_role in idx and sk.parents[idx[toe_role]] == foot:
            toe = idx[toe_role]
            drop_m = -ch[f"toe_height_{side}"] * u  # the article's toe height, as a curl down
            ang = np.arcsin(np.clip(drop_m / max(sk.lengths[toe], 1e-9), -1.0, 1.0))
            set_bone(toe, rot=world_rotation_to_local(unposed(sk, pose, toe), tf.quat_from_axis_angle(left_now, ang)))

    clip = Clip(
        list(sk.names),
        frames,
        params.fps,
        locations,
        rotations,
        key_location=key_loc,
        key_rotation=key_rot,
        generator="duck_walk",
    ).with_continuity()
    clip.metrics = _metrics(sk, idx, clip, contact, params, cf, u, reach_clamped)
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
    eps = 1e-4

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
        s = (th[sw] - th0) / np.pi
        out[sw] = art[sw] + _hermite(s, e0, m0, e1, m1, np.pi)
    return out


def _metrics(sk, idx, clip, contact, params, cf, u, reach_clamped) -> dict:
    pose = sk.fk(clip.locations, clip.rotations)
    m = {"keys": int(clip.frame_count), "unit_m": float(u), "leg_length_m": float(cf.leg_length)}
    fps_keys = params.fps / params.key_interval
    skate, low = [], []
    for side in "LR":
        ankle = pose[:, idx[f"foot.{side}"], :3, 3]
        skate.append(foot_skate(ankle, contact[side], fps_keys))
        low.append(ankle[:, 2])
    m["skate_mean_cm_s"] = max(s["skate_mean_cm_s"] for s in skate)
    m["skate_p95_cm_s"] = max(s["skate_p95_cm_s"] for s in skate)
    rest_ankle_z = min(sk.heads[idx["foot.L"]][2], sk.heads[idx["foot.R"]][2])
    m.update(penetration(rest_ankle_z - np.concatenate(low)))
    duration = (clip.frames[-1] - clip.frames[0]) / params.fps
    root_i = idx.get("root", idx["hips"])
    travel = pose[-1, root_i, :3, 3] - pose[0, root_i, :3, 3]
    m["speed_m_s"] = float(np.linalg.norm(travel[:2]) / duration) if duration > 0 else 0.0
    m["stride_m"] = float(m["speed_m_s"] / params.s) if params.s > 0 else 0.0  # one cycle per s⁻¹ seconds
    m["reach_clamped_frames"] = int(np.sum(reach_clamped))
    m["gait"] = params.gait
    return m
