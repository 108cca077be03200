"""What a bake's verification concludes: does Blender show the motion the figures describe?

After every bake — onto a rig's controls or onto its own bones, whatever the generator — Blender
evaluates a few frames (``VERIFY_FRAMES`` of :mod:`procanim_addon.controls.residual`, one read of every
bone's matrix per frame) and the deform bones are compared with the pose the engine generated
(:mod:`procanim_addon.controls.residual`). The residual ``r`` (cm, largest over the sampled frames
and bones) decides what the bake's figures mean:

* ``r ≤ TOLERANCE_CM`` (0.5 cm): the figures describe what Blender shows, within ``r``;
* above it: *approximate* — the rig follows the motion with an error the sidebar names;
* the bake **does not take effect** when the deform skeleton does not follow it: of the bones the
  bake moves (more than ``TOLERANCE_CM`` over the sampled frames), more than half are further from
  the generated pose than ``EFFECT_RATIO`` of their own motion (keyed bones overridden by
  constraints, a rig the conversion cannot drive). This is judged twice: in armature space, and
  without the travel the skeleton's points share (their median offset on each frame) — a body
  carried along by its root while its limbs stay still (root keyed, every other bone overridden)
  does not take effect either. The
  figures the generator computed are then kept only as ``intended_<key>``, the sidebar shows the
  measured ones, and the operator ends with an error saying what to do. One limb that does not
  follow (a constraint on one shin) is approximate.

Measured on the sampled frames (world space): ``measured_travel_m``, how far the deform skeleton's
centre moved horizontally from the first sampled frame to the last, beside ``intended_travel_m``.
Nothing here reads Blender.
"""

from __future__ import annotations

import numpy as np

TOLERANCE_CM = 0.5  # a residual above this makes a bake approximate
EFFECT_RATIO = 0.25  # a bone further than this share of its motion from the pose does not follow it
# A bone that does not move is at least half its motion away from the generated pose on some
# sampled frame (the triangle inequality), so a bake that moves nothing is always caught.
FOLLOWING_SHARE = 0.5  # the bake takes effect while at least half of the moving bones follow it


def motion_cm(intended_points: np.ndarray) -> np.ndarray:
    """How far the generated pose moves each checked point over the sampled frames: its largest
    distance (cm) from where it is on the first sampled frame. ``intended_points`` ``(S, N, 3)`` m;
    returns ``(N,)``."""
    if intended_points.shape[0] < 2:
        return np.zeros(intended_points.shape[1])
    return np.max(np.linalg.norm(intended_points - intended_points[:1], axis=-1), axis=0) * 100.0


def travel_m(points: np.ndarray) -> float:
    """Horizontal distance (m) the centre of ``points`` ``(S, N, 3)`` (world space, Z up) moves from
    the first sampled frame to the last."""
    if points.shape[0] < 2:
        return 0.0
    centre = points.mean(axis=1)
    return float(np.linalg.norm(centre[-1, :2] - centre[0, :2]))


def _lost(residual_cm: np.ndarray, motion: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which points move, and which of those are further than their share of it from the pose."""
    moving = motion > TOLERANCE_CM
    return moving, moving & (residual_cm > np.maximum(TOLERANCE_CM, EFFECT_RATIO * motion))


def conclude(evaluated: np.ndarray, intended: np.ndarray, residual_cm: np.ndarray) -> dict:
    """``control_bake_approximate`` and ``bake_takes_effect`` from the checked points' evaluated and
    intended places ``(S, N, 3)`` (m) and each point's largest residual (cm, ``(N,)``, the bones'
    heads and tails as the verification measures them)."""
    residual_cm = np.asarray(residual_cm, float)
    approximate = bool(residual_cm.size and residual_cm.max() > TOLERANCE_CM)
    if not approximate or evaluated.shape[1] == 0:
        return {"control_bake_approximate": approximate, "bake_takes_effect": True}
    moving, lost = _lost(residual_cm, motion_cm(intended))
    # without the travel the skeleton shares (the median offset over its points, per frame, which a
    # few points that stay behind do not move): the body's own motion
    offset = evaluated - intended
    rel_residual = np.max(np.linalg.norm(offset - np.median(offset, axis=1, keepdims=True), axis=-1), axis=0) * 100.0
    shift = intended - intended[:1]
    rel_motion = np.max(np.linalg.norm(shift - np.median(shift, axis=1, keepdims=True), axis=-1), axis=0) * 100.0
    moving_rel, lost_rel = _lost(rel_residual, rel_motion)
    moving, lost = moving | moving_rel, lost | lost_rel
    takes_effect = lost.sum() <= FOLLOWING_SHARE * max(int(moving.sum()), 1)
    return {"control_bake_approximate": approximate, "bake_takes_effect": bool(takes_effect)}


def measured_figures(world: np.ndarray, evaluated: np.ndarray, intended: np.ndarray) -> dict:
    """The figures measured on the sampled frames: ``measured_travel_m`` from Blender's evaluated
    deform bones, ``intended_travel_m`` from the generated pose. ``world``: the object's world matrix
    on each sampled frame ``(S, 4, 4)``; ``evaluated``, ``intended``: armature-space bone matrices
    ``(S, N, 4, 4)``."""
    if evaluated.shape[1] == 0:
        return {}

    def heads(m: np.ndarray) -> np.ndarray:
        return np.einsum("sij,snj->sni", world[:, :3, :3], m[..., :3, 3]) + world[:, None, :3, 3]

    return {"measured_travel_m": travel_m(heads(evaluated)), "intended_travel_m": travel_m(heads(intended))}


def finish(metrics: dict, keys) -> dict:
    """The metrics a bake stores: as they are when it takes effect, else :func:`withhold` ``keys``."""
    return metrics if metrics.get("bake_takes_effect", True) else withhold(metrics, keys)


def withhold(metrics: dict, keys) -> dict:
    """``metrics`` with each generator figure of ``keys`` it holds moved to ``intended_<key>``: the
    bake did not take effect, so they describe the motion generated, not what Blender shows."""
    out = dict(metrics)
    for key in keys:
        if key in out and not key.startswith("intended_"):
            out[f"intended_{key}"] = out.pop(key)
    return out
