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

import time
from dataclasses import dataclass, field

import numpy as np

from .. import transforms as tf
from ..errors import InputError
from .ccd import ccd
from .fabrik import fabrik
from .fuzzy import ARM_JOINT, CLAVICLE_JOINT, ELBOW_JOINT, FuzzyJoint, fuzzy_frame
from .jacobian import damped_least_squares, jacobian_transpose
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


def _position(method, chain, base, target, th, count, eff_local, s: IKSettings, frame_time):
    it = s.max_iterations or _DEFAULT_ITER.get(method, 1)
    if method == "JACOBIAN_TRANSPOSE":
        return jacobian_transpose(chain, base, target, th, count, eff_local, s.tolerance_m, it, s.max_step_rad)
    if method == "DLS":
        return damped_least_squares(chain, base, target, th, count, eff_local, s.tolerance_m, it, s.max_step_rad,
                                    s.damping_m)
    if method == "CCD":
        return ccd(chain, base, target, th, count, eff_local, s.tolerance_m, it)
    if method == "FABRIK":
        return fabrik(chain, base, target, th, count, eff_local, s.tolerance_m, it)
    joints = s.fuzzy or [ARM_JOINT] * chain.n
    return fuzzy_frame(chain, base, target, th, count, eff_local, joints, frame_time, s.fuzzy_ticks)


def _twist_about(local: np.ndarray, axis: np.ndarray) -> float:
    """Twist angle (rad) of rotation ``local`` about unit ``axis`` (swing-twist decomposition)."""
    q = tf.mat3_to_quat(local)
    return float(2.0 * np.arctan2(q[1:] @ axis, q[0]))


def orient_last(chain, base, angles, orientation, twist_to_parent=True) -> np.ndarray:
    """Angles with the last bone turned to armature-space rotation ``orientation`` (within limits)."""
    th = np.array(angles, float)
    n = chain.n
    if n == 1:
        pre = (np.asarray(base, float) @ chain.rest_rel[0])[:3, :3]
        th[0] = chain.clamp_joint(0, chain.angles_of(0, pre.T @ orientation))
        return th
    mats = chain.fk(base, th, n - 1)
    rr = chain.rest_rel[n - 1]
    pre = mats[n - 2, :3, :3] @ rr[:3, :3]
    local = pre.T @ orientation
    j = n - 2
    twist_axis = chain.axes[j, 2]
    head = rr[:3, 3]
    on_axis = np.linalg.norm(head - twist_axis * (twist_axis @ head)) < 1e-4 * max(1.0, np.linalg.norm(head))
    if twist_to_parent and on_axis and chain.upper[j, 2] > chain.lower[j, 2]:
        k = rr[:3, :3].T @ twist_axis
        tau = _twist_about(local, k)
        new = float(np.clip(th[j, 2] + tau, chain.lower[j, 2], chain.upper[j, 2]))
        delta = new - th[j, 2]
        th[j, 2] = new
        local = tf.quat_to_mat3(tf.quat_from_axis_angle(k, -delta)) @ local
    th[n - 1] = chain.clamp_joint(n - 1, chain.angles_of(n - 1, local))
    return th


def solve_frame(method, chain, base, position, orientation=None, angles=None, settings=None,
                frame_time=1.0 / 24.0) -> FrameSolution:
    """Solve one frame (see the module docstring). ``angles`` defaults to the rest pose."""
    method = check_method(method)
    s = settings or IKSettings()
    th = chain.zero_angles() if angles is None else chain.clamp(np.array(angles, float))
    position = np.asarray(position, float)
    if orientation is not None and chain.n > 1:
        orientation = np.asarray(orientation, float)
        count = chain.n - 1
        eff_local = chain.head_offset(count - 1)
        target = position - orientation @ chain.effector_local
    else:
        count = chain.n
        eff_local = chain.effector_local
        target = position
    th, iters = _position(method, chain, base, target, th, count, eff_local, s, frame_time)
    if s.pole is not None and s.pole_weight > 0:
        joint = chain.n - 3 if s.pole_joint is None else s.pole_joint
        th = apply_swivel(chain, base, th, count, eff_local, s.pole, joint, s.pole_weight)
        if method != "FUZZY":  # a limit may have clamped the swivel: settle again
            th, more = _position(method, chain, base, target, th, count, eff_local, s, frame_time)
            iters += more
    if orientation is not None:
        th = orient_last(chain, base, th, orientation, s.twist_to_parent)
        # a wrist limit may have clamped the hand's rotation: then the effector misses. Re-aim the
        # arm at the wrist position the hand needs *as it is turned* (position first, orientation as
        # close as the limits allow), a few rounds (not for FUZZY, which acts once per frame)
        for _ in range(s.orientation_rounds if method != "FUZZY" and chain.n > 1 else 0):
            mats = chain.fk(base, th)
            if np.sum((chain.effector(mats) - position) ** 2) < s.tolerance_m ** 2:
                break
            target = position - mats[-1, :3, :3] @ chain.effector_local
            th, more = _position(method, chain, base, target, th, count, eff_local, s, frame_time)
            iters += more
            th = orient_last(chain, base, th, orientation, s.twist_to_parent)
    eff = chain.effector(chain.fk(base, th))
    return FrameSolution(th, eff, int(iters))


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
        t0 = time.perf_counter()
        sol = solve_frame(method, chain, bases[i], positions[i], None if orientations is None else orientations[i],
                          th, settings, 1.0 / fps)
        secs[i] = time.perf_counter() - t0
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
