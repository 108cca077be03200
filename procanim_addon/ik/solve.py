"""One interface for every chain solver: position (and optionally the last bone's orientation).

``solve_frame(method, chain, base, position, orientation, angles, settings, frame_time)`` moves the
chain from ``angles`` (warm start: the previous frame's) so that the effector reaches ``position``
(armature space, m). With an ``orientation`` (armature-space 3×3 of the last bone, e.g. the hand)
the last bone is oriented exactly, within its limits, and the rest of the chain carries its head
to ``position − R · effector_local``; the twist the last bone would need is passed to its parent's
twist first (the forearm pronates, the wrist does not corkscrew). A pole direction turns the arm
about the shoulder→wrist axis so the elbow points toward it (down and out for a handshake).

``solve_path`` runs ``solve_frame`` over frames, warm-starting each from the one before, and
returns per-frame pose-bone quaternions for a Clip, the reached effector positions, iterations and
solver time per frame.

Methods: 'JACOBIAN_TRANSPOSE', 'CCD', 'FABRIK', 'DLS' (iterate to ``tolerance_m``) and 'FUZZY' (one
frame of the fuzzy controllers of Deglorie et al. 2015: it lags a moving target by design).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .. import transforms as tf
from ..errors import InputError
from ._effector import distance2
from .ccd import ccd
from .fabrik import fabrik
from .fuzzy import ARM_JOINT, CLAVICLE_JOINT, ELBOW_JOINT, FuzzyJoint, fuzzy_frame
from .jacobian import damped_least_squares, jacobian_transpose
from .kernel import axis_rotation, euler_xyz, mat_mul, mat_t_mul, mat_vec
from .swivel import apply_swivel

SOLVERS = ("JACOBIAN_TRANSPOSE", "CCD", "FABRIK", "DLS", "FUZZY")
_DEFAULT_ITER = {"JACOBIAN_TRANSPOSE": 4000, "CCD": 400, "FABRIK": 400, "DLS": 200}


@dataclass
class IKSettings:
    """Solver settings. Lengths in metres, angles in radians.

    tolerance_m:     stop when the effector is this close to its target (iterative methods)
    max_iterations:  per frame; None = the method's default
    max_step_rad:    largest change of one angle per gradient iteration (JT, DLS)
    damping_m:       λ of damped least squares
    pole:            armature-space direction the elbow should point to (None: no swivel)
    pole_joint:      chain index of the bone swivelled (the upper arm); None = n − 3
    pole_weight:     0..1, how much of the swivel is applied per frame
    fuzzy:           one :class:`FuzzyJoint` per chain bone (None: the paper's arm numbers for all)
    fuzzy_ticks:     control ticks per frame (None: enough that slow·Δt ≤ dead zone)
    twist_to_parent: hand twist goes to the forearm's twist axis first
    orientation_rounds: re-solves when a wrist limit keeps the last bone from its orientation goal
    extrapolate:     CCD, JT and FABRIK jump ahead to the limit of their own iterations when they
                     can (:mod:`.extrapolate`: the same poses in a fraction of the iterations)
    """

    tolerance_m: float = 1e-6
    max_iterations: int | None = None
    max_step_rad: float = 0.25
    damping_m: float = 0.005
    pole: np.ndarray | None = None
    pole_joint: int | None = None
    pole_weight: float = 1.0
    fuzzy: list | None = None
    fuzzy_ticks: int | None = None
    twist_to_parent: bool = True
    orientation_rounds: int = 6
    extrapolate: bool = True


@dataclass
class FrameSolution:
    angles: np.ndarray  # (n, 3) rad
    effector: np.ndarray  # (3,) armature space, m
    iterations: int


@dataclass
class PathSolution:
    """Per-frame results of :func:`solve_path`."""

    angles: np.ndarray  # (F, n, 3) rad
    rotations: np.ndarray  # (F, n, 4) pose-bone quaternions (w, x, y, z)
    effectors: np.ndarray  # (F, 3) reached effector, armature space (m)
    iterations: np.ndarray  # (F,)
    seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (F,) solver time per frame


def check_method(method: str) -> str:
    m = str(method).upper()
    if m not in SOLVERS:
        raise InputError(f"Unknown IK solver '{method}'. Choose one of: {', '.join(SOLVERS)}.")
    return m


def _position(method, kern, g0, h0, target, th, count, s: IKSettings, frame_time):
    it = s.max_iterations or _DEFAULT_ITER.get(method, 1)
    if method == "JACOBIAN_TRANSPOSE":
        return jacobian_transpose(kern, g0, h0, target, th, count, s.tolerance_m, it, s.max_step_rad, s.extrapolate)
    if method == "DLS":
        return damped_least_squares(kern, g0, h0, target, th, count, s.tolerance_m, it, s.max_step_rad, s.damping_m)
    if method == "CCD":
        return ccd(kern, g0, h0, target, th, count, s.tolerance_m, it, s.extrapolate)
    if method == "FABRIK":
        return fabrik(kern, g0, h0, target, th, count, s.tolerance_m, it, s.extrapolate)
    joints = s.fuzzy or [ARM_JOINT] * kern.n
    return fuzzy_frame(kern, g0, h0, target, th, count, joints, frame_time, s.fuzzy_ticks)


def orient_last(kern, g0, th, orientation_a, twist_to_parent=True) -> list:
    """The flat angles ``th`` (in place) with the last bone turned to an armature-space rotation
    ``O`` (within limits); ``orientation_a`` is ``O · A_lastᵀ`` (9-tuple, see :mod:`.kernel`).

    The twist the hand needs about the forearm's twist axis goes to the forearm first (when that
    axis runs through the hand's head and ``twist_to_parent``): swing-twist, the twist angle of a
    rotation ``m`` about a unit axis ``k`` being ``2 atan2(v·k, 1 + tr m)`` with ``v`` its
    antisymmetric part ``(m21 − m12, m02 − m20, m10 − m01)``.
    """
    last = kern.n - 1
    g = g0 if last == 0 else kern.frames(g0, th, last)[last]
    m = mat_t_mul(g, orientation_a)  # the last joint's turn in its axis coordinates
    j = last - 1
    if twist_to_parent and kern.twist_k is not None and kern.upper[3 * j + 2] > kern.lower[3 * j + 2]:
        k = kern.twist_k
        v = (m[7] - m[5], m[2] - m[6], m[3] - m[1])
        tau = 2.0 * math.atan2(v[0] * k[0] + v[1] * k[1] + v[2] * k[2], 1.0 + m[0] + m[4] + m[8])
        old = th[3 * j + 2]
        new = min(max(old + tau, kern.lower[3 * j + 2]), kern.upper[3 * j + 2])
        th[3 * j + 2] = new
        m = mat_mul(axis_rotation(k, old - new), m)
    kern.set_joint(th, last, m)
    return th


def _hand_offset(kern, g0, h0, th):
    """Head of the last bone and its effector offset ``W_last · effector_local`` (world)."""
    last = kern.n - 1
    head, g = kern.point(g0, h0, th, last)
    return head, mat_vec(mat_mul(g, euler_xyz(*th[3 * last:3 * last + 3])), kern.d[last])


def _orient(method, kern, g0, h0, position, orientation_a, th, iters, s, frame_time):
    """Orient the last bone; while a wrist limit keeps it from its goal, re-aim the arm at the wrist
    position the hand needs *as it is turned* (not for FUZZY, which acts once per frame)."""
    th = orient_last(kern, g0, th, orientation_a, s.twist_to_parent)
    rounds = s.orientation_rounds if method != "FUZZY" and kern.n > 1 else 0
    for _ in range(rounds):
        head, off = _hand_offset(kern, g0, h0, th)
        effector = (head[0] + off[0], head[1] + off[1], head[2] + off[2])
        if distance2(effector, position) < s.tolerance_m ** 2:
            return th, iters, effector
        target = (position[0] - off[0], position[1] - off[1], position[2] - off[2])
        th, more = _position(method, kern, g0, h0, target, th, kern.n - 1, s, frame_time)
        iters += more
        th = orient_last(kern, g0, th, orientation_a, s.twist_to_parent)
    return th, iters, None


def solve_frame(method, chain, base, position, orientation=None, angles=None, settings=None,
                frame_time=1.0 / 24.0) -> FrameSolution:
    """Solve one frame (see the module docstring). ``angles`` defaults to the rest pose."""
    method = check_method(method)
    s = settings or IKSettings()
    kern = chain.kernel()
    th = kern.clamp(np.ravel(chain.zero_angles() if angles is None else np.asarray(angles, float)).tolist())
    g0, h0 = kern.start(base)
    position = tuple(np.asarray(position, float).tolist())
    orientation_a = None
    count, target = kern.n, position
    if orientation is not None:
        o = np.asarray(orientation, float)
        orientation_a = tuple((o @ chain.axes[-1].T).reshape(9).tolist())
        if kern.n > 1:  # the arm carries the hand's head to where the turned hand needs it
            count = kern.n - 1
            target = tuple((np.asarray(position) - o @ chain.effector_local).tolist())
    th, iters = _position(method, kern, g0, h0, target, th, count, s, frame_time)
    if s.pole is not None and s.pole_weight > 0:
        joint = chain.n - 3 if s.pole_joint is None else s.pole_joint
        clamped = apply_swivel(kern, g0, h0, th, count, tuple(np.asarray(s.pole, float).tolist()), joint,
                               s.pole_weight)
        if clamped and method != "FUZZY":  # a limit clamped the swivel, the effector moved: settle again
            th, more = _position(method, kern, g0, h0, target, th, count, s, frame_time)
            iters += more
    effector = None
    if orientation_a is not None:
        th, iters, effector = _orient(method, kern, g0, h0, position, orientation_a, th, iters, s, frame_time)
    if effector is None:
        effector = kern.point(g0, h0, th, kern.n)[0]
    return FrameSolution(np.array(th).reshape(kern.n, 3), np.array(effector), int(iters))


def solve_path(method, chain, bases, positions, orientations=None, angles0=None, settings=None,
               fps: float = 24.0) -> PathSolution:
    """Solve ``F`` frames in order, each warm-started from the previous solution.

    bases ``(F, 4, 4)`` or ``(4, 4)``; positions ``(F, 3)``; orientations ``(F, 3, 3)`` or None.
    """
    positions = np.asarray(positions, float)
    f = positions.shape[0]
    bases = np.asarray(bases, float)
    if bases.ndim == 2:
        bases = np.broadcast_to(bases, (f, 4, 4))
    th = chain.zero_angles() if angles0 is None else np.array(angles0, float)
    out = np.empty((f, chain.n, 3))
    eff = np.empty((f, 3))
    iters = np.zeros(f, int)
    secs = np.zeros(f)
    for i in range(f):
        t0 = time.thread_time()
        sol = solve_frame(method, chain, bases[i], positions[i], None if orientations is None else orientations[i],
                          th, settings, 1.0 / fps)
        secs[i] = time.thread_time() - t0
        th = sol.angles
        out[i], eff[i], iters[i] = th, sol.effector, sol.iterations
    rot = tf.quat_continuity(chain.quaternions(out), axis=0)
    return PathSolution(out, rot, eff, iters, secs)


def fuzzy_joints_for(chain, clavicle_first: bool, elbow: FuzzyJoint | None = None) -> list[FuzzyJoint]:
    """The fuzzy controllers' numbers (Deglorie et al. 2015) per chain bone (tip last): the
    clavicle's slow controller first if there is one,
    and ``elbow`` (default :data:`~.fuzzy.ELBOW_JOINT`) for the bone before the hand."""
    joints = [ARM_JOINT] * chain.n
    if clavicle_first and chain.n >= 4:
        joints[0] = CLAVICLE_JOINT
    if chain.n >= 3:
        joints[chain.n - 2] = ELBOW_JOINT if elbow is None else elbow
    return joints
