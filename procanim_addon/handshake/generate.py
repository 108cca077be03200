"""The handshake generator: two characters, four phases, any pair of solvers → two Clips and a report.

Frame by frame (the framework of Deglorie et al. 2015, §5): each character's state machine picks its
phase; a phase builds its target path when it starts, from the current poses, sizes and dominance
(the arbiter shares the poses); the character's solver then moves the right arm (clavicle → hand) toward this frame's
target, warm-started from the previous frame. Targets are world-space grip points and hand
rotations; each character converts them into its own armature space.

* N: rest pose.  D (initiator): hand a short way toward the point of contact (the invitation).
* A: grip point on a straight path (smoothstep timing) from where it is to C, hand rotation slerped
  to the grip rotation; if C is beyond a comfortable reach the body leans forward (spine, for a
  much smaller partner) and/or steps toward it (root) — beyond the paper's clavicle-to-hand model.
* S (synchronised start): both grip points on one shared path ``C + o(t) ŝ``.
* R: back to the rest grip point and rotation; over the second half the joints ease into the rest
  pose, so N starts exactly at rest.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..curves import smoothstep
from ..errors import InputError
from ..ik.solve import solve_frame
from ..limits import check_bake_size
from ..progress import ProgressFn, no_progress
from .character import Character, prepare_character
from .grip import grip_rotation
from .model import contact_point, dominance_weight, horizontal, shake_offsets, shake_vector, step_toward
from .params import HandshakeParams
from .phases import Arbiter, CharacterFSM, Phase
from .report import alignment_report, shake_report


@dataclass
class Meeting:
    """What the arbiter settles when the invitation goes out (world space)."""

    contact: np.ndarray  # C (m)
    weight: float  # C's place on the elbow line (0 = initiator's elbow)
    grip_rot: dict  # name -> (3, 3) hand rotation in the grip
    step_arm: dict  # name -> (3,) body displacement (armature space, m)
    step_m: dict  # name -> step length (world m)
    lean: dict  # name -> forward spine lean (rad)


@dataclass
class Plan:
    """A phase's path: grip point, hand rotation and body displacement from start to end."""

    phase: Phase
    start: int
    frames: int
    p0: np.ndarray
    p1: np.ndarray
    q0: np.ndarray
    q1: np.ndarray
    d0: np.ndarray
    d1: np.ndarray
    lean0: float = 0.0
    lean1: float = 0.0
    shake: np.ndarray | None = None  # (frames,) multiples of ŝ
    shake_vec: np.ndarray | None = None
    ease_to_rest: bool = False

    def progress(self, f: int) -> float:
        return float(np.clip((f - self.start + 1) / self.frames, 0.0, 1.0))

    def done(self, f: int) -> bool:
        return f - self.start + 1 >= self.frames

    def at(self, f: int):
        u = self.progress(f)
        if self.shake is not None:
            i = min(max(f - self.start, 0), len(self.shake) - 1)
            return self.p0 + self.shake[i] * self.shake_vec, self.q1, self.d1, self.lean1, 0.0
        s = float(smoothstep(u))
        rest_weight = float(smoothstep((u - 0.5) / 0.5)) if self.ease_to_rest else 0.0
        return (self.p0 + s * (self.p1 - self.p0), tf.quat_slerp(self.q0, self.q1, s),
                self.d0 + s * (self.d1 - self.d0), self.lean0 + s * (self.lean1 - self.lean0), rest_weight)


class _Actor:
    """A character's running state during generation."""

    def __init__(self, ch: Character, fsm: CharacterFSM, static_target: bool = False):
        self.ch = ch
        self.static_target = static_target  # a fuzzy controller aims at the phase's end, not the path
        self.fsm = fsm
        self.angles = ch.chain.zero_angles()
        self.disp = np.zeros(3)
        self.lean = 0.0
        self.plan: Plan | None = None
        self.pose = ch.rest_pose
        self.rec_angles, self.rec_disp, self.rec_phase, self.rec_target, self.rec_time = [], [], [], [], []
        self.rec_lean, self.rec_orient = [], []

    def grip(self):
        return self.ch.grip_world(self.pose)

    def hand_q(self):
        return tf.mat3_to_quat(self.ch.hand_rot_world(self.pose))

    def neutral(self):
        rest = self.ch.rest_pose
        return self.ch.grip_world(rest), tf.mat3_to_quat(self.ch.hand_rot_world(rest))

    def begin(self, phase, f, frames, p1, q1, d1, lean1=0.0, ease=False):
        self.plan = Plan(phase, f, frames, self.grip(), np.asarray(p1, float), self.hand_q(), np.asarray(q1, float),
                         self.disp.copy(), np.asarray(d1, float), self.lean, float(lean1), ease_to_rest=ease)

    def arrived(self, f: int, contact, p: HandshakeParams) -> bool:
        """The approach path is done and the grip point is on C (a lagging controller is waited for,
        at most ``p.max_wait_frames``)."""
        if not self.plan.done(f - 1):
            return False
        close = np.linalg.norm(self.grip() - contact) <= p.arrive_tolerance_m
        return bool(close or f - (self.plan.start + self.plan.frames) >= p.max_wait_frames)

    def step_frame(self, f: int, fps: float):
        ch = self.ch
        target = np.full(3, np.nan)
        wanted = np.full(4, np.nan)
        if self.fsm.phase is Phase.NEUTRAL or self.plan is None:
            self.angles = ch.chain.zero_angles()
            self.disp = np.zeros(3)
            self.lean = 0.0
            elapsed = 0.0
        else:
            p, q, d, lean, rest_w = self.plan.at(f)
            if self.static_target and self.plan.shake is None:
                p = self.plan.p1  # the paper's §6.2: fuzzy control needs no motion path, only where the phase ends
            target, wanted = p, (q if rest_w == 0 else wanted)
            self.disp, self.lean = d, lean
            body = ch.body_pose(d, lean)
            base = ch.chain.base_from_pose(body)
            position, rotation = ch.to_armature(p), ch.rot_to_armature(tf.quat_to_mat3(q))
            t0 = time.thread_time()  # CPU time of the solve alone (as Blender's IK is timed), whatever else runs
            sol = solve_frame(ch.solver, ch.chain, base, position, rotation, self.angles, ch.settings, 1.0 / fps)
            elapsed = time.thread_time() - t0
            angles = sol.angles
            if rest_w > 0:
                angles = (1.0 - rest_w) * angles + rest_w * ch.chain.zero_angles()
            self.angles = angles
        self.pose = ch.pose_with(self.angles, self.disp, self.lean)
        self.rec_lean.append(self.lean)
        self.rec_angles.append(self.angles.copy())
        self.rec_disp.append(self.disp.copy())
        self.rec_phase.append(self.fsm.phase.value)
        self.rec_target.append(target)
        self.rec_orient.append(wanted)
        self.rec_time.append(elapsed)

    def clip(self, frames, fps, generator) -> Clip:
        ch = self.ch
        sk = ch.skeleton
        f = len(frames)
        clip = Clip.rest(sk.names, frames, fps, generator=generator)
        angles = np.array(self.rec_angles)
        clip.rotations[:, ch.chain.bones] = ch.chain.quaternions(angles)
        disp = np.array(self.rec_disp)
        stepped = bool(np.any(np.abs(disp) > 1e-9))
        if stepped:
            clip.locations[:, ch.body_root] = np.einsum("ij,fj->fi", sk.matrix_local[ch.body_root][:3, :3].T, disp)
        lean = np.array(self.rec_lean)
        key_rot = np.zeros(len(sk), bool)
        key_rot[ch.chain.bones] = True
        if np.any(np.abs(lean) > 1e-9) and ch.spine:
            clip.rotations[:, ch.spine] = np.stack([ch.lean_rotations(a) for a in lean])
            key_rot[ch.spine] = True
        key_loc = np.zeros(len(sk), bool)
        key_loc[ch.body_root] = stepped
        clip.key_rotation, clip.key_location = key_rot, key_loc
        assert clip.locations.shape == (f, len(sk), 3)
        return clip.with_continuity()


def _meeting(ai: _Actor, ap: _Actor, p: HandshakeParams) -> Meeting:
    """Point of contact, grip rotations and steps, from both characters' current poses."""
    ci, cp = ai.ch, ap.ch
    e_i, e_p = ci.elbow_world(ai.pose), cp.elbow_world(ap.pose)
    rest_elbow_z = [ci.elbow_world(ci.rest_pose)[2], cp.elbow_world(cp.rest_pose)[2]]
    forearm = np.mean([ci.forearm_length(), cp.forearm_length()])
    height = float(np.mean(rest_elbow_z) - p.contact_drop_forearms * forearm)
    w = dominance_weight(p.dominance_initiator, p.dominance_partner, p.dominance_shift)
    c = contact_point(e_i, e_p, w, height)
    toward = horizontal(e_p - e_i)
    if not np.any(toward):
        raise InputError("The two characters stand on the same spot; place them apart, facing each other.")
    grip_rot, step_arm, step_m, leans = {}, {}, {}, {}
    for a, fingers in ((ai, toward), (ap, -toward)):
        ch = a.ch
        r = grip_rotation(ch.hand_axes, fingers)
        grip_rot[ch.name] = r
        wrist = c - ch.scale * (r @ ch.hand_axes.grip_local)  # hand head when the grip point is on C
        # the shake takes the hand half a shake vector above and below C: those must be reachable too.
        # ŝ is built at the shake's start; here its length is estimated with the elbows one forearm
        # from C on either side (elbow distance ≈ the two forearms)
        half_shake = np.array([0.0, 0.0, 0.5 * p.shake_ratio * (ci.forearm_length() + cp.forearm_length())])
        wrists = (wrist, wrist + half_shake, wrist - half_shake)
        reach = p.reach_comfort * ch.arm_reach()
        max_step = p.max_step_legs * ch.frame.leg_length * ch.scale
        # the smallest forward lean (then step) that brings the shoulder within reach of the wrist
        # target: beyond the paper's clavicle-to-hand model, a tall character bends toward a small one
        found = None
        lean_steps = np.radians(np.arange(0.0, p.max_lean_deg + 1e-9, 2.5)) if ch.spine else np.zeros(1)
        for lean in lean_steps:
            shoulder = ch.shoulder_world(ch.body_pose(np.zeros(3), float(lean)))
            direction = horizontal(wrist - shoulder)
            # C within a comfortable reach, the shake's ends within reach at all
            steps = [step_toward(shoulder, w_, reach if k == 0 else 0.98 * ch.arm_reach(), direction)
                     for k, w_ in enumerate(wrists)]
            s = None if any(x is None for x in steps) else max(steps)
            if s is not None and (found is None or s < found[1]):
                found = (float(lean), s, direction)
            if s is not None and s <= max_step and wrist[2] <= shoulder[2]:
                found = (float(lean), s, direction)
                break
        if found is None:
            raise InputError(f"The {ch.name} cannot reach the point of contact at {height:.2f} m even bending "
                             f"{p.max_lean_deg:.0f}°: the characters' sizes differ too much for a handshake.")
        lean, s, direction = found
        if s > max_step:
            gap = float(np.linalg.norm((e_p - e_i)[:2]))
            raise InputError(f"The characters are too far apart to shake hands: the {ch.name} would need a "
                             f"{s:.2f} m step (at most {max_step:.2f} m). Their elbows are {gap:.2f} m apart; "
                             "move them closer.")
        step_m[ch.name] = float(s)
        step_arm[ch.name] = ch.world_rot.T @ (s * direction) / ch.scale
        leans[ch.name] = lean
    return Meeting(c, w, grip_rot, step_arm, step_m, leans)


def check_facing(ci: Character, cp: Character, max_deg: float) -> None:
    """Both must face the other roughly (within ``max_deg``, top view), or a handshake makes no sense:
    an :class:`InputError` names the one that does not (the only facing check: operators rely on it)."""
    pos = {c.name: c.to_world(c.rest_pose[c.body_root, :3, 3]) for c in (ci, cp)}
    for me, other in ((ci, cp), (cp, ci)):
        fwd = horizontal(me.world_rot @ me.frame.forward)
        to_other = horizontal(pos[other.name] - pos[me.name])
        if not np.any(to_other):
            raise InputError("The two characters stand on the same spot; place them apart, facing each other.")
        angle = float(np.degrees(np.arccos(np.clip(fwd @ to_other, -1.0, 1.0))))
        if angle > max_deg:
            raise InputError(f"The {me.name} does not face the {other.name} (turned {angle:.0f}° away; at most "
                             f"{max_deg:.0f}°). Turn the characters toward each other.")


#: A handshake longer than this many frames is a bug (the phases are at most a few thousand frames).
FRAME_LIMIT = 100_000
#: Share of the progress bar the per-frame loop fills; the report (FK of both clips) takes the rest.
LOOP_SHARE = 0.95


def expected_frames(p: HandshakeParams) -> int:
    """Frames a bake takes when no hand has to wait for the other (for the progress bar)."""
    if not p.accept:
        return p.neutral_frames + max(p.dummy_frames, p.response_frames) + p.retreat_frames + p.hold_frames
    shake = p.shake_frames + p.secondary_shakes * p.secondary_frames
    return p.neutral_frames + p.dummy_frames + p.approach_frames + shake + p.retreat_frames + p.hold_frames


class _Handshake:
    """The two actors, their state machines and the arbiter, frame by frame (Deglorie et al. 2015, §5)."""

    def __init__(self, ci: Character, cp: Character, p: HandshakeParams):
        self.p = p
        self.fi, self.fp = CharacterFSM("initiator", True), CharacterFSM("partner", False)
        self.arbiter = Arbiter(self.fi, self.fp, p.accept, p.response_frames)
        self.ai = _Actor(ci, self.fi, p.fuzzy_static_targets and ci.solver == "FUZZY")
        self.ap = _Actor(cp, self.fp, p.fuzzy_static_targets and cp.solver == "FUZZY")
        self.meeting: Meeting | None = None
        self.shake_frames = p.shake_frames + p.secondary_shakes * p.secondary_frames
        self.end_hold: int | None = None

    def _approach(self, a: _Actor, f: int) -> None:
        a.fsm.go(Phase.APPROACH, f)
        name = a.ch.name
        a.begin(Phase.APPROACH, f, self.p.approach_frames, self.meeting.contact,
                tf.mat3_to_quat(self.meeting.grip_rot[name]), self.meeting.step_arm[name], self.meeting.lean[name])

    def _retreat(self, a: _Actor, f: int) -> None:
        a.fsm.go(Phase.RETREAT, f)
        p_rest, q_rest = a.neutral()
        a.begin(Phase.RETREAT, f, self.p.retreat_frames, p_rest, q_rest, np.zeros(3), 0.0, ease=True)

    def _invite(self, f: int) -> None:
        """N → D: the arbiter settles the meeting; the initiator's hand goes a short way toward C."""
        p, ai = self.p, self.ai
        self.meeting = _meeting(ai, self.ap, p)
        self.arbiter.invite(f)
        q_grip = tf.mat3_to_quat(self.meeting.grip_rot["initiator"])
        p_rest, q_rest = ai.neutral()
        ai.begin(Phase.DUMMY, f, p.dummy_frames, p_rest + p.dummy_fraction * (self.meeting.contact - p_rest),
                 tf.quat_slerp(q_rest, q_grip, p.dummy_fraction), np.zeros(3))

    def _start_shake(self, f: int) -> None:
        """A → S for both: one shared path ``C + o(t) ŝ``, ŝ built now from the current elbows
        (⊥ elbow line, 35 % of the elbow distance)."""
        p, ai, ap = self.p, self.ai, self.ap
        s_vec = shake_vector(ai.ch.elbow_world(ai.pose), ap.ch.elbow_world(ap.pose), p.shake_ratio)
        offsets = shake_offsets(p.shake_frames, p.secondary_shakes, p.secondary_frames, p.secondary_decay)
        for a in (ai, ap):
            q = tf.mat3_to_quat(self.meeting.grip_rot[a.ch.name])
            a.plan = Plan(Phase.SHAKE, f, self.shake_frames, self.meeting.contact.copy(), self.meeting.contact.copy(),
                          q, q, a.disp.copy(), a.disp.copy(), a.lean, a.lean, shake=offsets, shake_vec=s_vec)

    def transitions(self, f: int) -> bool:
        """The phase changes at the start of frame ``f``; True when the bake is over."""
        p, fi, fp, ai, ap = self.p, self.fi, self.fp, self.ai, self.ap
        if f == p.neutral_frames and fi.phase is Phase.NEUTRAL and self.arbiter.invited_at is None:
            self._invite(f)
        answer = self.arbiter.poll(f)
        if answer and fp.phase is Phase.NEUTRAL and fi.phase in (Phase.DUMMY, Phase.APPROACH):
            self._approach(ap, f)
        if fi.phase is Phase.DUMMY and ai.plan.done(f - 1):
            if answer:
                self._approach(ai, f)
            elif answer is False:
                self._retreat(ai, f)
        if (fi.phase is Phase.APPROACH and fp.phase is Phase.APPROACH
                and self.arbiter.try_shake(f, ai.arrived(f, self.meeting.contact, p),
                                           ap.arrived(f, self.meeting.contact, p))):
            self._start_shake(f)
        for a in (ai, ap):
            if a.fsm.phase is Phase.SHAKE and a.plan.done(f - 1):
                self._retreat(a, f)
        for a in (ai, ap):
            if a.fsm.phase is Phase.RETREAT and a.plan.done(f - 1):
                a.fsm.go(Phase.NEUTRAL, f)
                a.plan = None
        if self.end_hold is None and fi.phase is Phase.NEUTRAL and fp.phase is Phase.NEUTRAL and len(fi.history) > 1:
            self.end_hold = f + p.hold_frames
        return self.end_hold is not None and f >= self.end_hold

    def solve(self, f: int, tick) -> None:
        """Frame ``f``: each character's solver moves its arm; the arbiter shares the poses."""
        for k, a in enumerate((self.ai, self.ap)):
            tick(f + 0.5 * k)
            a.step_frame(f, self.p.fps)
        self.arbiter.share("initiator", self.ai.pose)
        self.arbiter.share("partner", self.ap.pose)

    def report(self, clip_i: Clip, clip_p: Clip) -> dict:
        """Table 3, the hands' alignment, the phase sequences and the meeting's figures."""
        ai, ap, ci, cp, meeting = self.ai, self.ap, self.ai.ch, self.ap.ch, self.meeting
        report = shake_report(ci, cp, clip_i, clip_p, np.array(ai.rec_phase), np.array(ap.rec_phase),
                              np.array(ai.rec_target), np.array(ai.rec_time), np.array(ap.rec_time))
        report.update(alignment_report(ci, clip_i, np.array(ai.rec_orient), "initiator"))
        report.update(alignment_report(cp, clip_p, np.array(ap.rec_orient), "partner"))
        report.update({
            "sequence_initiator": self.fi.sequence(), "sequence_partner": self.fp.sequence(),
            "phase_starts_initiator": [(int(fr), ph.value) for fr, ph in self.fi.history],
            "phase_starts_partner": [(int(fr), ph.value) for fr, ph in self.fp.history],
            "contact_point": None if meeting is None else meeting.contact.tolist(),
            "contact_weight": None if meeting is None else meeting.weight,
            "step_initiator_m": 0.0 if meeting is None else meeting.step_m["initiator"],
            "step_partner_m": 0.0 if meeting is None else meeting.step_m["partner"],
            "lean_initiator_deg": 0.0 if meeting is None else float(np.degrees(meeting.lean["initiator"])),
            "lean_partner_deg": 0.0 if meeting is None else float(np.degrees(meeting.lean["partner"])),
            "accepted": bool(self.arbiter.answer),
            "phase_initiator": "".join(ai.rec_phase), "phase_partner": "".join(ap.rec_phase),
        })
        return report


def generate_handshake(initiator, partner, params: HandshakeParams | None = None,
                       progress: ProgressFn = no_progress):
    """Bake a handshake between two characters.

    initiator, partner: ``(Skeleton, RigMap, world_matrix (4, 4))`` each.
    Returns ``(clip_initiator, clip_partner, report)``; the report holds the paper's Table 3 for the
    shake phase (see :func:`~procanim_addon.handshake.report.shake_report`) and the phase sequence.
    ``progress`` (see :mod:`..progress`) hears the fraction done before each character's solve of
    every frame, and may cancel the bake there.
    Raises :class:`~procanim_addon.errors.InputError` for bad parameters or characters that cannot
    reach each other.
    """
    p = (params or HandshakeParams()).validate()
    bones = max(len(initiator[0]), len(partner[0]))
    check_bake_size(expected_frames(p) + p.max_wait_frames, bones, "The handshake")
    if initiator[0] is partner[0] and np.allclose(np.asarray(initiator[2], float), np.asarray(partner[2], float)):
        raise InputError("The initiator and the partner are the same character; pick two.")
    ci = prepare_character("initiator", initiator[0], initiator[1], initiator[2], p.solver_initiator, p)
    cp = prepare_character("partner", partner[0], partner[1], partner[2], p.solver_partner, p)
    check_facing(ci, cp, p.max_facing_deg)
    run = _Handshake(ci, cp, p)
    scale = LOOP_SHARE / (expected_frames(p) + 1)

    def tick(f: float) -> None:
        progress(min(f * scale, LOOP_SHARE))

    f = 0
    while f < FRAME_LIMIT and not run.transitions(f):
        run.solve(f, tick)
        f += 1
    progress(LOOP_SHARE)
    frames = p.frame_start + np.arange(f, dtype=float)
    clip_i = run.ai.clip(frames, p.fps, "handshake")
    clip_p = run.ap.clip(frames, p.fps, "handshake")
    report = run.report(clip_i, clip_p)
    for clip in (clip_i, clip_p):
        clip.metrics.update({k: v for k, v in report.items() if isinstance(v, (int, float, str, bool))})
    progress(1.0)
    return clip_i, clip_p, report
