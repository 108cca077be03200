"""IK stretch: what Blender's IK solver does to a stretchy two-bone chain, and the scale that cancels it.

Blender's IK solver (the legacy solver, which Rigify's rigs use) treats a bone with an *IK stretch*
above 0 as able to change length. Rigify sets 0.1 on the first two bones of every limb's IK chain
(``thigh_ik``/``MCH-shin_ik``, ``upper_arm_ik``/``MCH-forearm_ik``) and its IK constraints stretch,
so a leg that must bend its knee to reach its foot control also shortens, and the more it
bends. The foot control is reached exactly, but the knee comes out off the pose the engine meant (a
shortened leg reaches the same ankle with a straighter knee). The ``IK_Stretch`` switch does not
change this: it only limits how far the IK target may go from the hip (a Limit Distance).

**Response.** What the solver does depends on where it starts. On Rigify's limbs the chain starts
aimed at its target (``MCH-thigh_ik_swing`` damped-tracks it), so for a chain at its rest scale the
solver's result depends only on the distance ``d`` from the chain's root to the target: each bone
ends at ``s₁(d)``, ``s₂(d)`` times its length. The bridge measures these once per bake
(:func:`probe_distances` gives where to put the target; Blender evaluates the rig for each) into a
:class:`StretchResponse`. The solver works in units of the chain's length, so a chain started ``k``
times longer (the chain's first control scaled by ``k``, its child inherits it) reaching for ``d``
ends as the unit chain reaching for ``d / k``, scaled by ``k``: lengths ``k·s₁(d/k)·L₁`` and
``k·s₂(d/k)·L₂``.

**Compensation** (what Rigify's own IK←FK snap does: ``correct_scale`` in its ``rig_ui_template``
scales the base IK control until the IK bone's scale matches the FK bone's): per frame, the uniform
scale ``k`` of the chain's first control whose triangle (hip, knee, ankle with sides
``k·s₁(d/k)·L₁``, ``k·s₂(d/k)·L₂``, ``d``) puts the knee closest to the intended knee
(:func:`compensating_scale`). Both bones then end within a fraction of a per cent of their lengths
(``s₂/s₁``): the knee within a few millimetres.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .rig import ControlRig
from .structure import Limb

# Knee (elbow) bends at which the response is measured, in degrees beyond the chain's rest bend (at
# which the solver has nothing to do: no stretch), and straighter than at rest. Dense near the
# rest bend: a walk's stance leg comes back to it every step, the solver's stretch changes fastest
# there, and near a straight limb a small error in length moves the knee most.
PROBE_FROM_REST_DEG = (0.0, 1.5, 3.5, 6.0, 9.5, 14.0, 20.0, 28.0, 38.0, 50.0, 65.0, 85.0, 110.0, 140.0)
PROBE_STRAIGHTER = (0.0, 0.25, 0.5, 0.75)  # fractions of the rest bend
MAX_BEND_DEG = 160.0
# Beyond the chain's reach (fractions of its length): a chain scaled down reaches for a target past
# its length when the engine straightens a knee more than the rig's rest bend.
PROBE_PAST_REACH = (1.0015, 1.004, 1.008)
SCALE_RANGE = (0.9, 1.15)  # the compensating scale is searched in this range
SCALE_STEPS = (0.0025, 0.0001)  # coarse grid, then a fine one around the best coarse value


@dataclass
class StretchResponse:
    """The IK solver's result for a two-bone chain at its rest scale, measured in Blender: with the
    target at ``distance[i]`` (m, from the chain's root, sorted ascending) the first bone ends
    ``upper[i]`` times its length and the second ``lower[i]`` times its own, and its end stops at
    ``reached[i]`` times that distance from the root (the solver stops a fraction of a millimetre
    short of a nearly straight chain's target, which moves a nearly straight knee by millimetres).
    ``lengths``: the two bones' rest lengths (m); the response is interpolated in the bend they make
    at a distance (near a straight chain the distance hardly changes while the bend does)."""

    distance: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    reached: np.ndarray | None = None
    lengths: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self):
        order = np.argsort(self.distance)
        self.distance = np.asarray(self.distance, float)[order]
        self.upper = np.asarray(self.upper, float)[order]
        self.lower = np.asarray(self.lower, float)[order]
        self.reached = np.ones_like(self.distance) if self.reached is None else np.asarray(self.reached, float)[order]

    @property
    def stretches(self) -> bool:
        """Does the solver change the chain's length anywhere in the measured range?"""
        return bool(np.max(np.abs(np.concatenate([self.upper, self.lower]) - 1.0)) > 1e-5)

    def at(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``s₁(d)``, ``s₂(d)`` and the fraction of ``d`` reached, linear in the bend between
        measured distances (in the distance past the chain's reach; held at the ends)."""
        x, xp = self._param(np.asarray(d, float)), self._param(self.distance)[::-1]
        return tuple(np.interp(x, xp, v[::-1]) for v in (self.upper, self.lower, self.reached))

    def _param(self, d: np.ndarray) -> np.ndarray:
        """Decreasing with ``d``: the bend (rad) within reach, minus the fraction past it beyond."""
        reach = sum(self.lengths)
        return bend(d, *self.lengths) - np.maximum(d / reach - 1.0, 0.0)


def bend(d: np.ndarray, a: float, b: float) -> np.ndarray:
    """The bend (rad, 0 = straight) of a two-bone chain of lengths ``a``, ``b`` whose ends are ``d`` apart."""
    return np.arccos(np.clip((np.asarray(d, float) ** 2 - a * a - b * b) / (2.0 * a * b), -1.0, 1.0))


def rest_bend(rig: ControlRig, limb: Limb) -> float:
    """The bend (rad) of ``limb``'s IK chain at rest: the angle between its two bones."""
    y0, y1 = (rig.matrix_local[i][:3, 1] for i in limb.chain[:2])
    return float(np.arccos(np.clip(np.dot(y0, y1) / (np.linalg.norm(y0) * np.linalg.norm(y1)), -1.0, 1.0)))


def stretchy_chain(rig: ControlRig, limb: Limb) -> bool:
    """Does ``limb``'s IK chain stretch (an IK constraint with stretch on, two bones, one with
    IK stretch above 0) and start at a control that can be scaled to cancel it?"""
    if limb.ik_owner < 0 or len(limb.chain) != 2 or not rig.is_control(limb.chain[0]):
        return False
    ik = [c for c in rig.constraints[limb.ik_owner] if c.kind == "IK" and c.influence > 0]
    if not ik or not ik[0].use_stretch:
        return False
    return bool(np.max(rig.ik_stretch[limb.chain]) > 0.0)


def probe_distances(rig: ControlRig, limb: Limb) -> np.ndarray:
    """Distances (m) from the chain's root at which the bridge measures the response, from the
    straight chain to a deeply bent one: those of the chain's two bones at their rest lengths
    bent by :data:`PROBE_STRAIGHTER` of their rest bend and by it plus :data:`PROBE_FROM_REST_DEG`,
    and past the chain's length by :data:`PROBE_PAST_REACH`."""
    a, b = (float(rig.lengths[i]) for i in limb.chain)
    rest = rest_bend(rig, limb)
    angles = np.concatenate([rest * np.asarray(PROBE_STRAIGHTER), rest + np.radians(PROBE_FROM_REST_DEG)])
    angles = np.unique(np.minimum(angles, np.radians(MAX_BEND_DEG)))
    past = (a + b) * np.asarray(PROBE_PAST_REACH)[::-1]
    return np.concatenate([past, np.sqrt(a * a + b * b + 2.0 * a * b * np.cos(angles))])


def _knee(d: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knee of the triangle hip–knee–ankle with sides ``a`` (hip–knee), ``b`` (knee–ankle) and ``d``
    (hip–ankle): its distance along the hip→ankle axis and from it (a straight chain past reach)."""
    x = (d * d + a * a - b * b) / (2.0 * d)
    return x, np.sqrt(np.maximum(a * a - x * x, 0.0))


def compensating_scale(
    response: StretchResponse, lengths: tuple[float, float], hip: np.ndarray, knee: np.ndarray, ankle: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per frame, the scale ``k`` of the chain's first control that brings the solver's knee closest
    to ``knee`` with the chain's root at ``hip`` and its target at ``ankle`` (each ``(F, 3)``), and
    the knee error (m) left; ``lengths`` are the bones' rest lengths ``L₁``, ``L₂`` (m)."""
    axis = ankle - hip
    d = np.maximum(np.linalg.norm(axis, axis=-1), 1e-9)
    rel = knee - hip
    x_want = np.sum(rel * axis, axis=-1) / d
    h_want = np.sqrt(np.maximum(np.sum(rel * rel, axis=-1) - x_want**2, 0.0))

    def error(k: np.ndarray) -> np.ndarray:  # k (F, K) → knee error (F, K)
        s1, s2, reached = response.at(d[:, None] / k)
        x, h = _knee(d[:, None] * reached, k * s1 * lengths[0], k * s2 * lengths[1])
        return np.hypot(x - x_want[:, None], h - h_want[:, None])

    lo, hi = SCALE_RANGE
    grid = np.arange(lo, hi + 1e-12, SCALE_STEPS[0])
    best = grid[np.argmin(error(np.broadcast_to(grid, (len(d), len(grid)))), axis=1)]
    fine = best[:, None] + np.arange(-SCALE_STEPS[0], SCALE_STEPS[0] + 1e-12, SCALE_STEPS[1])[None, :]
    err = error(fine)
    pick = np.argmin(err, axis=1)
    rows = np.arange(len(d))
    return fine[rows, pick], err[rows, pick]


# ----------------------------------------------------------------------------- probing Blender's solver


def _mirror_key(rig: ControlRig, limb: Limb) -> tuple:
    """What the IK solver's response of ``limb``'s chain depends on, the same for a limb and its
    mirror image: the chain's lengths, rest bend and IK stretch, the IK constraint's settings, the
    influences of the constraints on the chain and its controls, and the limb's switches."""
    bones = [*limb.chain, limb.ik_control, limb.ik_target, limb.ik_owner]
    ik = [
        (c.kind, c.influence, c.use_stretch, c.chain_count, c.use_tail, c.pole >= 0, abs(c.pole_angle))
        for c in rig.constraints[limb.ik_owner]
    ]
    props = [sorted(rig.properties.get(rig.names[b], {}).items()) for b in (limb.ik_control, *limb.chain)]
    return (
        tuple(float(rig.lengths[i]) for i in limb.chain),
        round(rest_bend(rig, limb), 12),
        tuple(float(rig.ik_stretch[i]) for i in limb.chain) if rig.ik_stretch is not None else (),
        repr(ik),
        repr([[(c.kind, c.influence) for c in rig.constraints[b]] for b in bones]),
        repr(props),
        repr(sorted(rig.properties.get(limb.switch, {}).items())),
    )


Matrices = Callable[[int], np.ndarray]  # rig bone index → its evaluated armature-space matrix (4, 4)


class ProbePlan:
    """Where the bridge puts the IK target of each of ``limbs`` (stretchy chains of ``rig``), step by
    step, to measure their :class:`StretchResponse`: each limb at its :func:`probe_distances`. A limb
    and its mirror image (the same :func:`_mirror_key`) respond alike, so they split the distances
    between them — member ``m`` of a group of ``n`` takes the distances ``m, m+n, m+2n, …`` — and
    Blender evaluates fewer poses. Every limb whose turn it is moves at once, one evaluation a step."""

    def __init__(self, rig: ControlRig, limbs: list[Limb]):
        self.rig, self.limbs = rig, limbs
        self.distances = [probe_distances(rig, limb) for limb in limbs]
        groups: dict[tuple, list[int]] = {}
        for j, limb in enumerate(limbs):
            groups.setdefault(_mirror_key(rig, limb), []).append(j)
        self.groups = list(groups.values())
        self._share = {j: (m, len(g)) for g in self.groups for m, j in enumerate(g)}
        self.steps = max(-(-len(self.distances[j]) // n) for j, (_, n) in self._share.items()) if limbs else 0

    def at(self, step: int) -> list[tuple[int, int]]:
        """``(limb, distance index)`` of every limb measured at ``step``."""
        out = []
        for j in range(len(self.limbs)):
            m, n = self._share[j]
            k = step * n + m
            if k < len(self.distances[j]):
                out.append((j, k))
        return out

    def start(self, matrix: Matrices) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per limb, from the rig as evaluated before probing: the chain's root (head of its first
        bone), its IK target's head and the IK control's matrix."""
        return [
            (matrix(limb.chain[0])[:3, 3], matrix(limb.ik_target)[:3, 3], matrix(limb.ik_control))
            for limb in self.limbs
        ]

    def placement(self, start, j: int, k: int) -> np.ndarray:
        """The armature-space matrix of limb ``j``'s IK control that puts its IK target at distance
        ``k`` from the chain's root, on the line the target is on at the ``start``."""
        hip, target, control = start[j]
        along = (target - hip) / max(float(np.linalg.norm(target - hip)), 1e-9)
        moved = control.copy()
        moved[:3, 3] += hip + along * self.distances[j][k] - target
        return moved

    def responses(self, measured: list[list[tuple[int, tuple]]]) -> dict[int, StretchResponse]:
        """The response of each limb's chain, by the rig index of its IK constraint's owner, from
        ``measured``: per limb, ``(distance index, chain_lengths(...))`` of every step it moved in;
        a group's members share their measurements."""
        out = {}
        for group in self.groups:
            rows = [row for _, row in sorted(r for j in group for r in measured[j])]
            chain = self.limbs[group[0]].chain
            lengths = (float(self.rig.lengths[chain[0]]), float(self.rig.lengths[chain[1]]))
            for j in group:
                out[self.limbs[j].ik_owner] = StretchResponse(*np.array(rows).T, lengths=lengths)
        return out


def chain_lengths(matrix: Matrices, rig: ControlRig, limb: Limb) -> tuple[float, float, float, float]:
    """From the evaluated ``matrix`` of each bone: the distance (m) from the chain's root to its
    target, the chain's two bones' scales relative to the scale the chain's first bone inherits,
    and the fraction of that distance its end reached."""
    first, second = (matrix(i) for i in limb.chain)
    parent = int(rig.parents[limb.chain[0]])
    inherited = float(np.linalg.norm(matrix(parent)[:3, 1])) if parent >= 0 else 1.0
    target = matrix(limb.ik_target)[:3, 3]
    end = second[:3, 3] + second[:3, 1] * float(rig.lengths[limb.chain[1]])
    d = float(np.linalg.norm(target - first[:3, 3]))
    return (
        d,
        float(np.linalg.norm(first[:3, 1])) / inherited,
        float(np.linalg.norm(second[:3, 1])) / inherited,
        float(np.linalg.norm(end - first[:3, 3])) / max(d, 1e-9),
    )
