"""A numpy model of Blender's pose evaluation of a control rig, over whole clips at once.

``RigPose`` computes bones lazily, parents and constraint targets first: a bone's matrix is its
parent transform (:mod:`.parenting`) applied to its basis (the channels being converted; identity
for bones not keyed), then its constraints in order, each blended by its influence
(:mod:`.constraints`); a connected bone keeps its head where its parent put it, whatever its
constraints do, as in Blender. Bones can be *pinned* to given matrices: the conversion pins the bones an IK
solver or a copy will put where the engine wants them, so that what depends on them is evaluated
from the intended pose. Changing a basis or a pin forgets every bone that depends on it.
"""

from __future__ import annotations

import numpy as np

from ..transforms import affine_inverse
from . import constraints as cs
from .parenting import apply_basis, basis_for, mul, parent_inverse, parent_transform
from .rig import ControlRig


class RigPose:
    """Armature-space matrices ``(F, 4, 4)`` of a control rig's bones over ``frames`` frames."""

    def __init__(self, rig: ControlRig, frames: int, like: RigPose | None = None, lean: bool = False):
        """``like``: a RigPose of the same rig whose tables of the rig's structure (who reads whom, the
        closures found so far) this one shares instead of working them out again. ``lean``: keep
        neither a bone's parent transform (except for bones with a basis or read in LOCAL space:
        worked out again if asked for) nor its matrices before its constraints (:meth:`unconstrained`
        then refuses) once its matrices are known — half the memory of a whole clip."""
        self.rig = rig
        self.frames = frames
        self.basis: dict[int, np.ndarray] = {}
        self.pinned: dict[int, np.ndarray] = {}
        self._pose: dict[int, np.ndarray] = {}
        self._pre: dict[int, np.ndarray] = {}  # bone → its matrices before its own constraints, when they act
        self._parent_tf: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._parent_inv: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # bone → (a matrix stack it had, that stack's LOCAL matrices) when known without inverting:
        # the basis just applied, or what a LOCAL-space constraint gave (see local)
        self._known: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        if like is not None and like.rig is rig:
            self._dependents, self._ik_members, self._closures = like._dependents, like._ik_members, like._closures
            self._plain, self._uses_local = like._plain, like._uses_local
        else:
            self._dependents = _dependents(rig)
            self._ik_members = ik_chain_members(rig)
            self._plain = plain_bones(rig)
            self._uses_local = local_readers(rig)
            self._closures: dict[int, frozenset[int]] = {}
        self.mirror: tuple[RigPose, np.ndarray] | None = None
        self.lean = lean

    def sampled(self, frames: np.ndarray) -> RigPose:
        """A RigPose over a few of these frames that follows every basis and pin set here (cheap
        checks of whole clips)."""
        other = RigPose(self.rig, len(frames), like=self)
        for i, m in self.basis.items():
            other.basis[i] = m[frames]
        for i, m in self.pinned.items():
            other.pinned[i] = m[frames]
        self.mirror = (other, np.asarray(frames))
        return other

    # ------------------------------------------------------------------ inputs
    def set_basis(self, i: int, basis: np.ndarray) -> None:
        self.basis[i] = basis
        self._forget(i, keep_parent_tf=True)
        if self.mirror is not None:
            self.mirror[0].set_basis(i, basis[self.mirror[1]])

    def pin(self, i: int, pose: np.ndarray) -> None:
        self.pinned[i] = pose
        self._forget(i)
        if self.mirror is not None:
            self.mirror[0].pin(i, pose[self.mirror[1]])

    def _forget(self, i: int, keep_parent_tf: bool = False) -> None:
        closure = self._closure(i)
        for cache in (self._pose, self._pre, self._known, self._parent_tf, self._parent_inv):
            for j in closure.intersection(cache):  # the cached ones only (the closure can be most of the rig)
                if cache is self._pose or cache is self._pre or cache is self._known or j != i or not keep_parent_tf:
                    del cache[j]

    def _closure(self, i: int) -> frozenset[int]:
        """Bone ``i`` and every bone that depends on it, however indirectly (kept once found)."""
        got = self._closures.get(i)
        if got is None:
            seen, stack = {i}, [i]
            while stack:
                for k in self._dependents[stack.pop()]:
                    if k not in seen:
                        seen.add(k)
                        stack.append(k)
            got = self._closures[i] = frozenset(seen)
        return got

    # ------------------------------------------------------------------ evaluation
    def parent_tf(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``(rotscale, loc)`` of bone ``i`` under its evaluated parent."""
        got = self._parent_tf.get(i)
        if got is None:
            p = int(self.rig.parents[i])
            got = parent_transform(self.rig, i, self.pose(p) if p >= 0 else None, self.frames)
            self._parent_tf[i] = got
        return got

    def pose(self, i: int) -> np.ndarray:
        got = self._pose.get(i)
        if got is not None:
            return got
        if i in self.pinned:
            got = self.pinned[i]
        elif i in self._ik_members:
            raise cs.Unsupported(f"IK chain through '{self.rig.names[i]}' that the conversion does not solve")
        elif self._plain[i] and i not in self.basis:  # what parent_transform and apply_basis give then
            got = mul(self.pose(int(self.rig.parents[i])), self.rig.rest_rel[i])
        else:
            rotscale, loc = self.parent_tf(i)
            basis = self.basis.get(i)
            if basis is not None and self.rig.connected[i]:
                basis = basis.copy()
                basis[..., :3, 3] = 0.0  # Blender ignores a connected bone's location
            got = apply_basis(rotscale, loc, basis)
            if self._uses_local[i]:
                self._known[i] = (got, _identity(self.frames) if basis is None else basis)
            head = got[..., :3, 3].copy()
            before = got
            for c in self.rig.constraints[i]:
                if c.influence > 0.0:
                    got = cs.blend(got, self._constraint(i, c, got), c.influence)
            if got is not before and not self.lean:
                self._pre[i] = before
            if self.rig.connected[i] and self.rig.constraints[i]:
                got = got.copy()  # (not an array whose LOCAL matrices are known)
                got[..., :3, 3] = head  # Blender: "prevent constraints breaking a chain"
            if self.lean and i not in self.basis and not self._uses_local[i]:
                self._parent_tf.pop(i, None)
        self._pose[i] = got
        return got

    def local(self, i: int, pose: np.ndarray | None = None) -> np.ndarray:
        """Bone ``i``'s LOCAL-space matrices (its basis as Blender's constraints read it)."""
        pose = self.pose(i) if pose is None else pose
        known = self._known.get(i)
        if known is not None and known[0] is pose:
            return known[1]
        rotscale, loc = self.parent_tf(i)
        inverse = self._parent_inv.get(i)
        if inverse is None:
            inverse = self._parent_inv[i] = parent_inverse(rotscale, loc)
        return basis_for(rotscale, loc, pose, inverse)

    def basis_for(self, i: int, pose: np.ndarray) -> np.ndarray:
        """The basis that puts bone ``i`` at ``pose`` before its own constraints."""
        return self.local(i, pose)

    def unconstrained(self, i: int, pose: np.ndarray) -> np.ndarray:
        """Where bone ``i`` must be before its own constraints for them to leave it at ``pose``,
        taking what they do now as a transform applied on the left (exact for an Armature
        constraint, CloudRig's ``FK-Toes``; ``pose`` itself when they change nothing)."""
        if self.lean:
            raise ValueError("a lean RigPose keeps no matrices before constraints")
        self.pose(i)
        before = self._pre.get(i)
        if before is None:
            return pose
        after = self.pose(i)
        if float(np.max(np.abs(after - before))) < 1e-12:
            return pose
        return before @ affine_inverse(after) @ pose

    def _to_space(self, i: int, pose: np.ndarray, space: str) -> np.ndarray:
        if space in ("WORLD", "POSE"):
            return pose
        if space == "LOCAL":
            return self.local(i, pose)
        raise cs.Unsupported(f"constraint space {space}")

    def _from_space(self, i: int, m: np.ndarray, space: str) -> np.ndarray:
        if space in ("WORLD", "POSE"):
            return m
        rotscale, loc = self.parent_tf(i)
        out = apply_basis(rotscale, loc, m)
        self._known[i] = (out, m)
        return out

    def _constraint(self, i: int, c, owner_pose: np.ndarray) -> np.ndarray:
        rig = self.rig
        kind = c.kind
        if kind == "ARMATURE":
            deforms = [(mul(self.pose(j), affine_inverse(rig.matrix_local[j])), w) for j, w in c.targets if w > 0]
            return cs.armature(c, owner_pose, deforms)
        if kind == "LIMIT_ROTATION":
            m = self._to_space(i, owner_pose, c.owner_space)
            return self._from_space(i, cs.limit_rotation(c, m, rig.rotation_modes[i]), c.owner_space)
        if kind == "LIMIT_SCALE":
            m = self._to_space(i, owner_pose, c.owner_space)
            return self._from_space(i, cs.limit_scale(c, m), c.owner_space)
        if c.target < 0:
            raise cs.Unsupported(f"{kind} without a bone target")
        t = c.target
        if kind in ("DAMPED_TRACK", "STRETCH_TO", "LIMIT_DISTANCE", "COPY_LOCATION") and c.target_space in (
            "WORLD",
            "POSE",
        ):
            point = cs.target_point(self.pose(t), rig.lengths[t], c.head_tail)
            if kind == "DAMPED_TRACK":
                return cs.damped_track(c, owner_pose, point)
            if kind == "STRETCH_TO":
                rest = c.rest_length or float(
                    np.linalg.norm(cs.target_point(rig.matrix_local[t], rig.lengths[t], c.head_tail) - rig.heads[i])
                )
                return cs.stretch_to(c, owner_pose, point, rest)
            if kind == "LIMIT_DISTANCE":
                return cs.limit_distance(c, owner_pose, point)
            m = self._to_space(i, owner_pose, c.owner_space)
            return self._from_space(i, cs.copy_location(c, m, point), c.owner_space)
        if kind not in ("COPY_TRANSFORMS", "COPY_ROTATION", "COPY_SCALE", "COPY_LOCATION", "TRANSFORM"):
            raise cs.Unsupported(kind)
        target = self._to_space(t, self.pose(t), c.target_space)
        if c.head_tail and c.target_space in ("WORLD", "POSE"):
            target = target.copy()
            target[..., :3, 3] = cs.target_point(self.pose(t), rig.lengths[t], c.head_tail)
        owner = self._to_space(i, owner_pose, c.owner_space)
        if kind == "TRANSFORM":
            out = cs.transform(c, owner, target, rig.rotation_modes[i])
        elif kind == "COPY_TRANSFORMS":
            out = cs.copy_transforms(c, owner, target)
        elif kind == "COPY_ROTATION":
            out = cs.copy_rotation(c, owner, target, rig.rotation_modes[i])
        elif kind == "COPY_SCALE":
            out = cs.copy_scale(c, owner, target)
        else:
            out = cs.copy_location(c, owner, target[..., :3, 3])
        return self._from_space(i, out, c.owner_space)


def _dependents(rig: ControlRig) -> list[list[int]]:
    """For each bone, the bones whose evaluation reads it (children and the owners of constraints that
    act: one without influence is never evaluated, so reads nothing)."""
    out: list[list[int]] = [[] for _ in rig.names]
    for i, p in enumerate(rig.parents):
        if p >= 0:
            out[p].append(i)
    for i, cons in enumerate(rig.constraints):
        for c in cons:
            if c.influence <= 0.0:
                continue
            for t in [c.target, c.pole, *(j for j, _ in c.targets)]:
                if t is not None and t >= 0 and i not in out[t]:
                    out[t].append(i)
    return out


def _identity(frames: int) -> np.ndarray:
    return np.broadcast_to(np.eye(4), (frames, 4, 4)).copy()


def local_readers(rig: ControlRig) -> list[bool]:
    """Bones whose LOCAL-space matrices some constraint reads (their own or another bone's)."""
    out = [False] * len(rig.names)
    for i, cons in enumerate(rig.constraints):
        for c in cons:
            if c.influence > 0.0 and c.owner_space == "LOCAL":
                out[i] = True
            if c.influence > 0.0 and c.target_space == "LOCAL" and c.target >= 0:
                out[c.target] = True
    return out


def plain_bones(rig: ControlRig) -> list[bool]:
    """Bones that follow their parent the default way (inherit rotation, full scale, local location)
    with no constraint acting: with an identity basis their matrix is ``parent · rest_rel``."""
    return [
        bool(p >= 0 and rig.inherit_rotation[i] and rig.inherit_scale[i] == "FULL" and rig.local_location[i])
        and not any(c.influence > 0.0 for c in rig.constraints[i])
        for i, p in enumerate(rig.parents)
    ]


def ik_chain_members(rig: ControlRig) -> dict[int, int]:
    """Bones moved by an enabled IK constraint: bone index → the IK owner's index."""
    out: dict[int, int] = {}
    for i, cons in enumerate(rig.constraints):
        for c in cons:
            if c.kind != "IK" or c.influence <= 0.0:
                continue
            j, n = i, 0
            while j >= 0 and (c.chain_count == 0 or n < c.chain_count):
                out.setdefault(j, i)
                j, n = int(rig.parents[j]), n + 1
    return out
