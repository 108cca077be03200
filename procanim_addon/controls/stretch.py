"""IK stretch: what Blender's IK solver does to a stretchy two-bone chain, and the scale that cancels it.

Blender's IK solver (the legacy solver, which Rigify's rigs use) treats a bone with an *IK stretch*
above 0 as able to change length. Rigify sets 0.1 on the first two bones of every limb's IK chain
(``thigh_ik``/``MCH-shin_ik``, ``upper_arm_ik``/``MCH-forearm_ik``) and its IK constraints stretch,
so a leg that must bend its knee to reach its foot control also shortens: measured on a generated
Rigify human walking, by 0.2 % with the knee bent 15° and by about 3 % at 60–90°. The foot control is
reached exactly, but the knee comes out up to 2.7 cm off the pose the engine meant (a shortened leg
reaches the same ankle with a straighter knee). The ``IK_Stretch`` switch does not change this: it
only limits how far the IK target may go from the hip (a Limit Distance at 1.035 × the chain length).

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

from dataclasses import dataclass

import numpy as np

from .rig import ControlRig
from .structure import Limb

# Knee (elbow) angles at which the response is measured, degrees: dense near a straight limb, where
# the solver's stretch changes fastest and a small error in length moves the knee most.
PROBE_BEND_DEG = (0, 3, 6, 10, 15, 21, 29, 39, 52, 70, 95, 130)
SCALE_RANGE = (0.9, 1.15)  # the compensating scale is searched in this range
SCALE_STEPS = (0.0025, 0.0001)  # coarse grid, then a fine one around the best coarse value


@dataclass
class StretchResponse:
    """The IK solver's result for a two-bone chain at its rest scale, measured in Blender: with the
    target at ``distance[i]`` (m, from the chain's root, sorted ascending) the first bone ends
    ``upper[i]`` times its length and the second ``lower[i]`` times its own."""

    distance: np.ndarray
    upper: np.ndarray
    lower: np.ndarray

    def __post_init__(self):
        order = np.argsort(self.distance)
        self.distance = np.asarray(self.distance, float)[order]
        self.upper = np.asarray(self.upper, float)[order]
        self.lower = np.asarray(self.lower, float)[order]

    @property
    def stretches(self) -> bool:
        """Does the solver change the chain's length anywhere in the measured range?"""
        return bool(np.max(np.abs(np.concatenate([self.upper, self.lower]) - 1.0)) > 1e-5)

    def at(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``s₁(d)``, ``s₂(d)`` by linear interpolation (held at the ends of the measured range)."""
        return np.interp(d, self.distance, self.upper), np.interp(d, self.distance, self.lower)


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
    """Distances (m) from the chain's root at which the bridge measures the response: those of the
    chain's two bones at their rest lengths bent by :data:`PROBE_BEND_DEG`."""
    a, b = (float(rig.lengths[i]) for i in limb.chain)
    bend = np.radians(PROBE_BEND_DEG)
    return np.sqrt(a * a + b * b + 2.0 * a * b * np.cos(bend))


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
        s1, s2 = response.at(d[:, None] / k)
        x, h = _knee(d[:, None], k * s1 * lengths[0], k * s2 * lengths[1])
        return np.hypot(x - x_want[:, None], h - h_want[:, None])

    lo, hi = SCALE_RANGE
    grid = np.arange(lo, hi + 1e-12, SCALE_STEPS[0])
    best = grid[np.argmin(error(np.broadcast_to(grid, (len(d), len(grid)))), axis=1)]
    fine = best[:, None] + np.arange(-SCALE_STEPS[0], SCALE_STEPS[0] + 1e-12, SCALE_STEPS[1])[None, :]
    err = error(fine)
    pick = np.argmin(err, axis=1)
    rows = np.arange(len(d))
    return fine[rows, pick], err[rows, pick]
