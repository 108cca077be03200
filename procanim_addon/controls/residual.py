"""How far Blender's evaluated deform bones are from the pose the engine intended.

After a bake onto controls, Blender evaluates a few frames and reads back the ``ORG-`` bones (the
deform skeleton the engine posed) and the ``DEF-`` bones the mesh follows (each carried by an
``ORG-`` bone: ``DEF-thigh.L`` and ``DEF-thigh.L.001`` by ``ORG-thigh.L``). The intended matrix of
a ``DEF-`` bone is its ORG bone's carried rigidly from rest:
``intended(DEF) = intended(ORG) · rest(ORG)⁻¹ · rest(DEF)``.

The residual of a bone on a frame is the distance of its head from where it should be, and for the
ORG bones also of its tail (``matrix @ (0, length, 0)``). A ``DEF-`` bone's tail is not compared:
Rigify stretches deform segments from one joint to the next, so where the engine moved a bone away
from its parent's tail (a neck raised by a location key) the segment bridges the gap — its head and
the next joint are what the mesh follows, and both are compared.
"""

from __future__ import annotations

import numpy as np

from ..skeleton import Skeleton
from ..transforms import affine_inverse
from ..verification import TOLERANCE_CM as TOLERANCE_CM  # re-exported: the bound a residual is held to
from ..verification import conclude, measured_figures
from .convert import ControlKeys
from .intended import IntendedPose
from .parenting import mul
from .rig import ControlRig
from .structure import find_limbs

VERIFY_FRAMES = 10  # frames Blender evaluates to verify a bake onto controls
IK_STRETCH_NOTE = (
    "Blender's IK solver puts knees and elbows off the generated pose (IK stretch, a chain the "
    "conversion does not model) while feet and hands are exact; Key Target 'FK Controls' keys "
    "this motion exactly."
)


def verification_samples(frames: int, count: int = VERIFY_FRAMES) -> np.ndarray:
    """Indices of the ``count`` frames (at most; evenly spread, first and last included) of a clip of
    ``frames`` frames that Blender evaluates to verify a bake."""
    return np.unique(np.linspace(0, frames - 1, min(frames, count)).round().astype(int))


def deform_checks(rig: ControlRig, org_bones: list[int]) -> list[tuple[int, int]]:
    """``(deform bone, ORG bone)`` rig-index pairs to compare: each ORG bone itself (``(o, o)``)
    and its ``DEF-`` bones (segments included: ``DEF-thigh.L.001``, CloudRig's ``DEF-Thigh_2.L``),
    paired by the rig's control map."""
    wanted = {rig.names[i]: i for i in org_bones}
    out = [(i, i) for i in org_bones]
    for j, name in enumerate(rig.names):
        base = rig.family.skeleton_bone_of(name, set(wanted))
        if base is not None:
            out.append((j, wanted[base]))
    return out


def intended_deform(rig: ControlRig, checks: list[tuple[int, int]], org_pose: dict[int, np.ndarray]) -> np.ndarray:
    """Intended matrices ``(S, C, 4, 4)`` of the checked bones from their ORG bones' ``(S, 4, 4)``."""
    out = []
    for d, o in checks:
        carry = affine_inverse(rig.matrix_local[o]) @ rig.matrix_local[d]
        out.append(mul(org_pose[o], carry))
    return np.stack(out, axis=1)


def residual_m(
    rig: ControlRig, checks: list[tuple[int, int]], evaluated: np.ndarray, intended: np.ndarray
) -> np.ndarray:
    """Per frame and checked bone, the head distance (m) — for an ORG bone the larger of its head
    and tail distances — ``(S, C)``."""
    lengths = np.array([rig.lengths[d] for d, _ in checks])
    tip = np.zeros((len(checks), 4))
    tip[:, 1], tip[:, 3] = lengths, 1.0
    ev_tail = np.einsum("scij,cj->sci", evaluated, tip)[..., :3]
    in_tail = np.einsum("scij,cj->sci", intended, tip)[..., :3]
    head = np.linalg.norm(evaluated[..., :3, 3] - intended[..., :3, 3], axis=-1)
    tail = np.linalg.norm(ev_tail - in_tail, axis=-1)
    own = np.array([d == o for d, o in checks])
    return np.where(own, np.maximum(head, tail), head)


def summary(rig: ControlRig, checks: list[tuple[int, int]], residual: np.ndarray) -> dict:
    """Metrics of a verification: largest and mean residual (cm) and the worst bone."""
    if residual.size == 0:
        return {"control_residual_cm_max": 0.0, "control_residual_cm_mean": 0.0, "control_residual_bone": ""}
    worst = int(np.argmax(residual.max(axis=0)))
    return {
        "control_residual_cm_max": float(residual.max() * 100.0),
        "control_residual_cm_mean": float(residual.mean() * 100.0),
        "control_residual_bone": rig.names[checks[worst][0]],
    }


def verify(
    rig: ControlRig,
    skeleton: Skeleton,
    keys: ControlKeys,
    intended: IntendedPose,
    checks: list[tuple[int, int]],
    samples: np.ndarray,
    evaluated: np.ndarray,
    world: np.ndarray | None = None,
) -> dict:
    """The metrics of a bake onto controls verified on the frames ``samples``: ``evaluated``
    ``(S, C, 4, 4)`` are Blender's armature-space matrices of the deform bones of ``checks``
    (:func:`deform_checks` of ``keys.checked``), compared with ``intended``; with the object's
    world matrices ``world`` ``(S, 4, 4)``, the figures the samples measure too. Above
    :data:`TOLERANCE_CM` the bake is approximate, and far above it it does not take effect
    (:func:`procanim_addon.verification.conclude`); when IK keys leave a limb off, a note saying why
    is added to ``keys.notes``."""
    org_pose = {o: intended.full(skeleton.index(rig.names[o]))[samples] for _, o in checks}
    want = intended_deform(rig, checks, org_pose)
    residual = residual_m(rig, checks, evaluated, want)
    out = summary(rig, checks, residual)
    out["control_verify_frames"] = int(len(samples))
    out.update(conclude(evaluated[..., :3, 3], want[..., :3, 3], residual.max(axis=0) * 100.0))
    if world is not None:
        out.update(measured_figures(world, evaluated, want))
    if out["control_bake_approximate"] and keys.mode == "IK":
        worst = checks[int(np.argmax(residual.max(axis=0)))][1]
        if any(worst in limb.deform for limb in find_limbs(rig)):
            keys.notes.append(IK_STRETCH_NOTE)
    return out


def verify_skeleton(
    skeleton: Skeleton,
    intended: IntendedPose,
    bones: list[int],
    samples: np.ndarray,
    evaluated: np.ndarray,
    world: np.ndarray | None = None,
) -> dict:
    """The metrics of a bake onto a skeleton's own bones (key target ``DEFORM``, a plain rig)
    verified on the frames ``samples``: ``evaluated`` ``(S, N, 4, 4)`` are Blender's armature-space
    matrices of the skeleton ``bones`` (indices), compared head and tail with ``intended``; with
    the object's world matrices ``world`` ``(S, 4, 4)``, the figures the samples measure too."""
    intended.set_samples(samples)
    want = np.stack([intended.sampled(k) for k in bones], axis=1) if bones else np.zeros((len(samples), 0, 4, 4))
    lengths = skeleton.lengths[bones]
    tip = np.zeros((len(bones), 4))
    tip[:, 1], tip[:, 3] = lengths, 1.0
    head = np.linalg.norm(evaluated[..., :3, 3] - want[..., :3, 3], axis=-1)
    tail = np.linalg.norm(np.einsum("snij,nj->sni", evaluated - want, tip)[..., :3], axis=-1)
    residual = np.maximum(head, tail)
    out = {"control_residual_cm_max": 0.0, "control_residual_cm_mean": 0.0, "control_residual_bone": ""}
    if residual.size:
        out = {
            "control_residual_cm_max": float(residual.max() * 100.0),
            "control_residual_cm_mean": float(residual.mean() * 100.0),
            "control_residual_bone": skeleton.names[bones[int(np.argmax(residual.max(axis=0)))]],
        }
    out["control_verify_frames"] = int(len(samples))
    per_bone = residual.max(axis=0) * 100.0 if residual.size else np.zeros(len(bones))
    out.update(conclude(evaluated[..., :3, 3], want[..., :3, 3], per_bone))
    if world is not None:
        out.update(measured_figures(world, evaluated, want))
    return out
