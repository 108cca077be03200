"""Deform pose → control channels: the conversion of a bake onto a control rig.

:func:`convert` takes the pose the engine intends for the deform skeleton (armature-space matrices
of the ``ORG-`` bones and ``root``, from :func:`Skeleton.fk` of a Clip) and returns the basis of
every control to key, the switch values to key, and which deform bones the verification compares.
It is a pure function of the rig's rest data, inheritance flags and constraint relations
(:class:`~.rig.ControlRig`), evaluated with :class:`~.evaluate.RigPose` — no Blender evaluation.

Order (parents first, so that each solve sees the controls above it already placed):

1. ``root`` when the motion moves it (root motion keyed on the rig's root);
2. the torso: a rigid fit of the trunk (the deform chain from the root to the limbs);
3. the limbs (IK mode: the chain is posed as the IK solver will place it, the main IK control
   follows the limb's end, the knee direction is the twist of the chain's first control or the
   pole's place, the chain's first control is scaled to cancel the IK solver's stretch
   (:mod:`.stretch`), other IK-side controls follow their bones; FK mode: each FK control follows its
   bone) and every other deform bone that is not already where it should be (the control that
   drives it follows it) — in the rig's evaluation order of their controls, so that no solve
   moves a bone an earlier one placed (``ORG-spine`` is driven by ``spine_fk``, which hangs under
   ``spine_fk.001``: ``spine_fk.001`` is solved first).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import collector, heap
from .. import transforms as tf
from ..progress import Progress, no_progress
from ..skeleton import Skeleton
from ..transforms import norms
from . import solve
from .constraints import Unsupported
from .deform import rest_offsets
from .evaluate import RigPose
from .intended import IntendedPose
from .parenting import apply_basis, parent_transform
from .rig import ControlRig
from .stretch import StretchResponse, compensating_scale
from .structure import Limb, common_control, driver_control, evaluation_order, find_limbs, reads_closure, trunk

MODES = ("IK", "FK")
STATIC_M = 1e-6  # a limb whose deform bones stay this close to rest is left alone
CHECK_FRAMES = 24  # frames on which "is this bone already where it should be?" is asked


@dataclass
class ControlKeys:
    """What to key: per control (rig index) its basis ``(F, 4, 4)`` (location and rotation) and
    whether its location and rotation move; ``scale`` ``(F, 3)`` for the controls whose scale is
    keyed (the first control of a stretchy IK chain, :mod:`.stretch`); ``location`` ``(F, 3)`` and
    ``rotation`` ``(F, 4)`` (quaternions) the basis is made of, per control; switch values
    ``{(bone, property): value}``; the deform bones (rig indices) the verification compares; the IK
    chains' bones where the conversion posed them (``pins``, ``(F, 4, 4)`` by rig index: where the
    solver must put them) and the solver's stretch response it used (``stretch``); notes for the user
    (plain sentences)."""

    basis: dict[int, np.ndarray] = field(default_factory=dict)
    key_location: dict[int, bool] = field(default_factory=dict)
    key_rotation: dict[int, bool] = field(default_factory=dict)
    scale: dict[int, np.ndarray] = field(default_factory=dict)
    location: dict[int, np.ndarray] = field(default_factory=dict)
    rotation: dict[int, np.ndarray] = field(default_factory=dict)
    switches: dict[tuple[str, str], float] = field(default_factory=dict)
    checked: list[int] = field(default_factory=list)
    pins: dict[int, np.ndarray] = field(default_factory=dict)
    stretch: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    mode: str = "IK"

    def channels(self, control: int) -> tuple[np.ndarray, np.ndarray]:
        """The location ``(F, 3)`` and rotation ``(F, 4)`` keys of ``control`` (from its basis when
        they were not kept)."""
        loc, rot = self.location.get(control), self.rotation.get(control)
        if loc is None or rot is None:
            loc, rot, _ = tf.decompose(self.basis[control])
        return loc, rot

    def is_finite(self) -> bool:
        """No NaN or infinity in any key."""
        arrays = [*self.basis.values(), *self.scale.values(), *self.location.values(), *self.rotation.values()]
        return all(np.isfinite(a).all() for a in arrays) and all(np.isfinite(v) for v in self.switches.values())


class _Conversion:
    def __init__(
        self,
        rig: ControlRig,
        skeleton: Skeleton,
        intended: np.ndarray | IntendedPose,
        mode: str,
        stretch: dict[int, StretchResponse] | None = None,
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.rig, self.sk, self.mode = rig, skeleton, mode
        self.frames = intended.frames if isinstance(intended, IntendedPose) else intended.shape[0]
        self.state = RigPose(rig, self.frames)
        self.samples = np.unique(np.linspace(0, self.frames - 1, min(self.frames, CHECK_FRAMES)).round().astype(int))
        self.check = self.state.sampled(self.samples)
        if not isinstance(intended, IntendedPose):
            intended = IntendedPose(skeleton, matrices=intended, offsets=rest_offsets(rig, skeleton))
        intended.set_samples(self.samples)
        self.intended = intended
        self.sk_of = {rig.index(n): k for k, n in enumerate(skeleton.names) if rig.has(n)}
        self.limbs = find_limbs(rig)
        self.limb_of = {d: limb for limb in self.limbs for d in limb.deform if d in self.sk_of}
        self.out = ControlKeys(mode=mode, stretch=dict(stretch or {}))
        self.solved: set[int] = set()
        self.stretch = stretch or {}
        self.scaled: set[int] = set()

    # ------------------------------------------------------------------ steps
    def goal(self, bone: int) -> np.ndarray:
        """Intended matrices ``(F, 4, 4)`` of rig bone ``bone`` (a deform bone)."""
        return self.intended.full(self.sk_of[bone])

    def key(self, control: int) -> None:
        self.solved.add(control)

    def follow(self, control: int, bone: int, probe: int | None = None) -> None:
        """Key ``control`` so that deform bone ``bone`` reaches its goal, measured on ``probe`` (the
        bone ``bone`` copies, when its own head is held by a connected parent)."""
        try:
            err = solve.follow(self.state, control, bone if probe is None else probe, self.goal(bone))
        except Unsupported as exc:
            self.out.notes.append(f"{self.rig.names[bone]} not converted ({exc}).")
            return
        self.key(control)
        self.out.checked.append(bone)
        if err > 1e-4:
            self.out.notes.append(
                f"{self.rig.names[control]} reaches {self.rig.names[bone]} within {err * 100:.2f} cm."
            )

    def matches(self, bone: int) -> bool:
        """Is ``bone`` already where it should be (checked on a sample of frames)?"""
        try:
            got = solve.bone_points(self.check.pose(bone), float(self.rig.lengths[bone]))
        except Unsupported:
            return True  # not evaluable here: left to the rig (and out of the verification)
        want = solve.bone_points(self.intended.sampled(self.sk_of[bone]), float(self.rig.lengths[bone]))
        return float(np.max(norms(got - want))) < solve.TOLERANCE_M * 10

    def root_and_torso(self) -> None:
        rig = self.rig
        root = rig.get(rig.root_name)
        if root >= 0 and root in self.sk_of and not self.matches(root):
            self.follow(root, root)
        limb_roots = [rig.names[limb.deform[0]] for limb in self.limbs]
        trunk_bones = [rig.index(n) for n in trunk(self.sk, limb_roots, rig.root_name) if rig.has(n)]
        drivers = [d for d in (driver_control(rig, b) for b in trunk_bones) if d >= 0]
        torso = common_control(rig, drivers)
        if torso >= 0 and trunk_bones:
            solve.rigid_fit(self.state, torso, trunk_bones, {b: self.goal(b) for b in trunk_bones})
            self.key(torso)

    def limb(self, limb: Limb) -> None:
        if self.limb_static(limb):
            return
        rig = self.rig
        mode = self.side(limb)
        if mode != self.mode:
            name = limb.role or rig.names[limb.deform[0]]
            self.out.notes.append(f"{name} has {mode} controls only: keyed with them.")
        if limb.switch is not None:
            self.out.switches[limb.switch] = limb.value(mode)
        # each deform bone of a limb copies its FK or IK source whole: the source is what is measured
        if mode == "FK":
            for bone, fk, control in zip(limb.deform, limb.fk, limb.fk_controls):
                if fk >= 0 and control >= 0 and bone in self.sk_of:
                    self.follow(control, bone, probe=fk)
            return
        for member in limb.chain:
            if member in limb.ik:
                self.state.pin(member, self.goal(limb.deform[limb.ik.index(member)]))
                self.out.pins[member] = self.state.pinned[member]
        end = limb.deform[limb.ik.index(limb.ik_target)]
        self.follow(limb.ik_control, end, probe=limb.ik_target)
        self.knee(limb)
        self.cancel_stretch(limb)
        for bone, src in zip(limb.deform, limb.ik):
            if rig.is_control(src) and src not in limb.chain and src != limb.ik_control and bone in self.sk_of:
                self.follow(src, bone, probe=src)
        self.out.checked.extend(b for b in limb.deform if b in self.sk_of and b not in self.out.checked)

    def side(self, limb: Limb) -> str:
        """The side of ``limb`` this bake keys: the bake's mode, or the side the limb has when it
        has one only (an IK-only leg keyed by an FK bake, an FK-only arm by an IK bake)."""
        if self.mode == "IK" and limb.ik_control < 0:
            return "FK"
        if self.mode == "FK" and not any(c >= 0 for c in limb.fk_controls) and limb.ik_control >= 0:
            return "IK"
        return self.mode

    def limb_static(self, limb: Limb) -> bool:
        rig = self.rig
        for b in limb.deform:
            if b in self.sk_of:
                rest = np.broadcast_to(rig.matrix_local[b], (self.frames, 4, 4))
                got = solve.bone_points(self.goal(b), float(rig.lengths[b]))
                want = solve.bone_points(rest, float(rig.lengths[b]))
                if float(np.max(norms(got - want))) > STATIC_M:
                    return False
        return True

    def knee(self, limb: Limb) -> None:
        """Knee (elbow) direction: the pole's place, or the twist of the chain's first control."""
        rig = self.rig
        upper, lower = limb.deform[limb.ik.index(limb.chain[0])], limb.deform[limb.ik.index(limb.chain[-1])]
        end = limb.deform[limb.ik.index(limb.ik_target)]
        hip, knee, ankle = (self.goal(b)[:, :3, 3] for b in (upper, lower, end))
        if limb.pole >= 0 and rig.is_control(limb.pole):
            distance = float(np.linalg.norm(rig.heads[limb.pole] - rig.heads[lower]))
            place = solve.pole_position(hip, knee, ankle, distance)
            rotscale, loc = self.state.parent_tf(limb.pole)
            wanted = apply_basis(rotscale, loc, None)
            wanted[:, :3, 3] = place
            self.state.set_basis(limb.pole, self.state.basis_for(limb.pole, wanted))
            self.key(limb.pole)
            return
        top = limb.chain[0]
        if not rig.is_control(top):
            self.out.notes.append(f"No control turns the knee of {rig.names[upper]}; the rig's IK decides it.")
            return
        # The IK solver bends the chain in the plane it starts in; the first bone's own twist about
        # its axis turns that plane about the hip→target line by the same angle.
        rotscale, loc = self.state.parent_tf(top)
        upper_start = apply_basis(rotscale, loc, None)
        second = limb.chain[1] if len(limb.chain) > 1 else top
        rs2, loc2 = parent_transform(rig, second, upper_start, self.frames)
        knee_start = apply_basis(rs2, loc2, None)[:, :3, 3]
        target = self.state.pose(limb.ik_target)[:, :3, 3]
        axis, current = solve.knee_direction(upper_start[:, :3, 3], knee_start, target)
        _, wanted = solve.knee_direction(hip, knee, ankle)
        angle = solve.knee_twist(axis, current, wanted)
        q = tf.quat_from_axis_angle(np.broadcast_to([0.0, 1.0, 0.0], (self.frames, 3)), angle)
        self.state.set_basis(top, tf.compose(None, q))
        self.key(top)

    def cancel_stretch(self, limb: Limb) -> None:
        """Scale the chain's first control so that the IK solver's stretch leaves the knee (elbow)
        where it should be (:func:`~.stretch.compensating_scale`), when the bridge measured the
        solver's response for this chain."""
        response = self.stretch.get(limb.ik_owner)
        top = limb.chain[0] if limb.chain else -1
        if response is None or not response.stretches or top < 0 or not self.rig.is_control(top):
            return
        upper, lower = limb.deform[limb.ik.index(top)], limb.deform[limb.ik.index(limb.chain[-1])]
        end = limb.deform[limb.ik.index(limb.ik_target)]
        hip, knee, ankle = (self.goal(b)[:, :3, 3] for b in (upper, lower, end))
        lengths = (float(self.rig.lengths[top]), float(self.rig.lengths[limb.chain[-1]]))
        k, err = compensating_scale(response, lengths, hip, knee, ankle)
        basis = self.state.basis.get(top)
        basis = np.broadcast_to(np.eye(4), (self.frames, 4, 4)).copy() if basis is None else basis.copy()
        basis[:, :3, :3] *= k[:, None, None]
        self.state.set_basis(top, basis)
        self.scaled.add(top)
        self.key(top)
        self.out.notes.append(
            f"{self.rig.names[top]} is scaled {k.min():.3f}–{k.max():.3f} to cancel the IK stretch of its chain "
            f"(as Rigify's IK snap does; the solver's knee within {err.max() * 100:.2f} cm)."
        )

    def group(self, control: int, bones: list[int]) -> None:
        """Key ``control`` for the deform bones it drives: exactly for one bone, by the best rigid
        fit for several (the rig moves them together; the verification reports what is left)."""
        if control < 0 or all(self.matches(b) for b in bones):
            return
        if len(bones) == 1:
            self.follow(control, bones[0])
            return
        try:
            solve.rigid_fit(self.state, control, bones, {b: self.goal(b) for b in bones})
        except Unsupported as exc:
            self.out.notes.append(f"{self.rig.names[control]} not converted ({exc}).")
            return
        self.key(control)
        self.out.checked.extend(b for b in bones if b not in self.out.checked)

    # ------------------------------------------------------------------ driver
    def run(self, progress: Progress) -> ControlKeys:
        self.root_and_torso()
        progress(0.2)
        steps = self.steps()
        for k, (_, kind, what) in enumerate(steps):
            if kind == "limb":
                self.limb(what)
            else:
                self.group(*what)
            if k % 4 == 0:
                progress(0.2 + 0.75 * k / max(len(steps), 1))
        self.collect()
        progress(1.0)
        return self.out

    def steps(self) -> list[tuple[float, str, object]]:
        """Limbs and deform bones, ordered by the evaluation rank of the controls they move; a
        control that reads what a limb keys comes after the limb, whatever its rank (CloudRig's
        ``FK-Toes`` hangs from the IK foot through an Armature constraint)."""
        rig = self.rig
        rank = evaluation_order(rig)
        out: list[tuple[float, str, object]] = []
        limb_rank: list[tuple[float, set[int]]] = []
        for limb in self.limbs:
            controls = [c for c in (*limb.fk, *limb.chain, limb.ik_control, limb.pole) if c >= 0]
            r = float(max(rank[c] for c in controls)) if controls else 0.0
            out.append((r, "limb", limb))
            keyed = {c for c in (*limb.fk_controls, *limb.chain, limb.ik_control, limb.pole) if c >= 0}
            limb_rank.append((r, keyed))
        groups: dict[int, list[int]] = {}
        for name in self.sk.names:
            bone = rig.get(name)
            if bone < 0 or name == rig.root_name or bone in self.limb_of:
                continue
            control = driver_control(rig, bone)
            if control >= 0 and control not in self.solved:
                groups.setdefault(control, []).append(bone)
        for c, bones in groups.items():
            r = float(rank[c])
            reads = reads_closure(rig, c) if limb_rank else set()
            for lr, keyed in limb_rank:
                if lr >= r and reads & keyed:
                    r = lr + 0.5
            out.append((r, "bones", (c, bones)))
        out.sort(key=lambda s: s[0])
        return out

    def collect(self) -> None:
        for c in sorted(self.solved):
            basis = self.state.basis.get(c)
            if basis is None:
                continue
            loc, rot, scale = tf.decompose(basis)
            moves_loc = bool(np.max(np.abs(loc)) > 1e-6) and not self.rig.connected[c]
            moves_rot = bool(np.max(tf.quat_angle(rot)) > 1e-6)
            # a stretch-cancelling scale is keyed even where it stays 1: a re-bake must not inherit
            # the scale a previous bake left on the control (Blender keeps unkeyed channels)
            moves_scale = c in self.scaled
            if not (moves_loc or moves_rot or moves_scale):
                continue
            if moves_scale:
                self.out.scale[c] = scale
            self.out.basis[c] = tf.compose(loc, rot)
            self.out.location[c], self.out.rotation[c] = loc, rot
            self.out.key_location[c] = moves_loc
            self.out.key_rotation[c] = moves_rot


@collector.paused()
@heap.kept()
def convert(
    rig: ControlRig,
    skeleton: Skeleton,
    intended: np.ndarray | IntendedPose,
    mode: str = "IK",
    progress: Progress = no_progress,
    stretch: dict[int, StretchResponse] | None = None,
) -> ControlKeys:
    """Control channels that make ``rig``'s deform bones follow ``intended``: the armature-space pose
    of ``skeleton`` (the rig's deform skeleton), as matrices ``(F, B, 4, 4)`` or an
    :class:`~.intended.IntendedPose` (computed bone by bone as needed). ``mode`` is ``'IK'`` or ``'FK'``.
    ``stretch``: the IK solver's response of each stretchy IK chain (by the rig index of its IK
    constraint's owner), measured by the bridge; without it IK chains are keyed as if rigid."""
    return _Conversion(rig, skeleton, intended, mode, stretch).run(progress)
