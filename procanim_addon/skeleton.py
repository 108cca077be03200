"""Skeleton: the rest pose of an armature and forward kinematics that mirrors Blender's.

In Blender's terms (armature space; ``bone.matrix_local`` is the rest matrix, head at the origin,
the bone along its +Y axis)::

    rest_rel[b] = matrix_local[parent]⁻¹ @ matrix_local[b]      (a root bone: matrix_local[b])
    basis[b]    = T(location) @ R(rotation) @ S(scale)            (the pose bone's channels)
    pose[b]     = pose[parent] @ rest_rel[b] @ basis[b]

That holds for bones with Blender's default inheritance (inherit rotation on, inherit scale FULL,
local location on); :meth:`Skeleton.unsupported_bones` names the others so operators can refuse
them with a message. World space is ``object.matrix_world @ pose``.

All arrays are in metres and armature space; pose arrays are shaped ``(frames, bones, 4, 4)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import transforms as tf


class RestBones:
    """Bones by name and their rest heads and tails, for a class holding ``names``,
    ``matrix_local`` ``(B, 4, 4)``, ``lengths`` ``(B,)`` and ``_index`` (name → index):
    :class:`Skeleton` and the control rig's ``ControlRig``."""

    names: list[str]
    matrix_local: np.ndarray
    lengths: np.ndarray
    _index: dict[str, int]

    def __len__(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        return self._index[name]

    def has(self, name: str) -> bool:
        return name in self._index

    @property
    def heads(self) -> np.ndarray:
        """Rest heads in armature space, ``(B, 3)``."""
        return self.matrix_local[:, :3, 3]

    @property
    def tails(self) -> np.ndarray:
        """Rest tails in armature space, ``(B, 3)``."""
        return self.heads + self.matrix_local[:, :3, 1] * self.lengths[:, None]


@dataclass
class Skeleton(RestBones):
    """Rest pose of an armature, bones ordered parents before children.

    names:         bone names, ``(B,)``
    parents:       parent index per bone, ``-1`` for a root, ``(B,)``
    matrix_local:  rest matrices in armature space (Blender's ``Bone.matrix_local``), ``(B, 4, 4)``
    lengths:       bone lengths (m), ``(B,)``
    inherit_rotation, inherit_scale, local_location: Blender's per-bone flags (defaults assumed
                   when omitted); see :meth:`unsupported_bones`.
    from_armature: ``(4, 4)`` similarity from the armature's space into the frame these rest
                   matrices are in (:mod:`.upright`), ``None`` when they are in armature space.
    armature_parents: per bone, the index of the bone Blender poses it under when that is not
                   ``parents`` (a tree rebuilt by :mod:`.deform_tree`), ``None`` when they agree.
    """

    names: list[str]
    parents: np.ndarray
    matrix_local: np.ndarray
    lengths: np.ndarray
    inherit_rotation: list[bool] = field(default_factory=list)
    inherit_scale: list[str] = field(default_factory=list)
    local_location: list[bool] = field(default_factory=list)
    connected: list[bool] = field(default_factory=list)
    from_armature: np.ndarray | None = None
    armature_parents: np.ndarray | None = None

    def __post_init__(self):
        self.names = list(self.names)
        self.parents = np.asarray(self.parents, dtype=int)
        self.matrix_local = np.asarray(self.matrix_local, dtype=float)
        self.lengths = np.asarray(self.lengths, dtype=float)
        n = len(self.names)
        if not self.inherit_rotation:
            self.inherit_rotation = [True] * n
        if not self.inherit_scale:
            self.inherit_scale = ["FULL"] * n
        if not self.local_location:
            self.local_location = [True] * n
        if not self.connected:
            self.connected = [False] * n
        for i, p in enumerate(self.parents):
            if p >= i:
                raise ValueError("bones must be ordered parents first (use Skeleton.from_bones)")
        self._index = {name: i for i, name in enumerate(self.names)}
        self.rest_rel = np.empty_like(self.matrix_local)
        inverse = np.linalg.inv(self.matrix_local) if len(self.names) else self.matrix_local  # one call for all
        for i, p in enumerate(self.parents):
            self.rest_rel[i] = self.matrix_local[i] if p < 0 else inverse[p] @ self.matrix_local[i]

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_bones(cls, bones: list[dict]) -> Skeleton:
        """Build from dicts ``{name, parent, matrix_local, length, [inherit_rotation, inherit_scale,
        local_location, connected]}`` in any order; sorts them parents first."""
        by_name = {b["name"]: b for b in bones}
        order: list[str] = []
        seen: set[str] = set()

        def visit(name: str, trail: tuple = ()):
            if name in seen:
                return
            if name in trail:
                raise ValueError(f"bone hierarchy has a cycle at {name!r}")
            parent = by_name[name].get("parent")
            if parent:
                visit(parent, trail + (name,))
            seen.add(name)
            order.append(name)

        for b in bones:
            visit(b["name"])
        idx = {n: i for i, n in enumerate(order)}
        return cls(
            names=order,
            parents=np.array([idx[by_name[n]["parent"]] if by_name[n].get("parent") else -1 for n in order]),
            matrix_local=np.array([by_name[n]["matrix_local"] for n in order], dtype=float),
            lengths=np.array([by_name[n]["length"] for n in order], dtype=float),
            inherit_rotation=[bool(by_name[n].get("inherit_rotation", True)) for n in order],
            inherit_scale=[str(by_name[n].get("inherit_scale", "FULL")) for n in order],
            local_location=[bool(by_name[n].get("local_location", True)) for n in order],
            connected=[bool(by_name[n].get("connected", False)) for n in order],
        )

    # ------------------------------------------------------------------ queries (and RestBones')
    def children(self, i: int) -> list[int]:
        return [j for j, p in enumerate(self.parents) if p == i]

    def descendants(self, i: int) -> list[int]:
        """Indices of every bone below ``i``, parents first."""
        inside = {i}
        out = []
        for j in range(i + 1, len(self)):
            if self.parents[j] in inside:
                inside.add(j)
                out.append(j)
        return out

    def is_ancestor(self, ancestor: int, i: int) -> bool:
        """True when bone ``ancestor`` is a (proper) ancestor of bone ``i``."""
        p = int(self.parents[i])
        while p >= 0:
            if p == ancestor:
                return True
            p = int(self.parents[p])
        return False

    def chain(self, tip: int, root: int) -> list[int]:
        """Bone indices from ``root`` down to ``tip`` (inclusive); raises if not an ancestor."""
        out = [tip]
        while out[-1] != root:
            p = int(self.parents[out[-1]])
            if p < 0:
                raise ValueError(f"{self.names[root]!r} is not an ancestor of {self.names[tip]!r}")
            out.append(p)
        return out[::-1]

    def unsupported_bones(self, indices=None) -> list[str]:
        """Bones whose inheritance settings the FK here does not model (message-ready names)."""
        idx = range(len(self)) if indices is None else indices
        bad = []
        for i in idx:
            if self.parents[i] >= 0 and (
                not self.inherit_rotation[i] or self.inherit_scale[i] != "FULL" or not self.local_location[i]
            ):
                bad.append(self.names[i])
        return bad

    # ------------------------------------------------------------------ kinematics
    def fk(self, locations=None, rotations=None, scales=None, frames: int | None = None) -> np.ndarray:
        """Armature-space pose matrices ``(F, B, 4, 4)`` from local channels.

        locations ``(F, B, 3)`` (m), rotations ``(F, B, 4)`` quaternions, scales ``(F, B, 3)``;
        any may be None (rest value). Vectorised over frames; a loop over bones only. A connected
        bone's location is ignored, as Blender ignores it.
        """
        shape_src = next((x for x in (locations, rotations, scales) if x is not None), None)
        f = frames if shape_src is None else np.shape(shape_src)[0]
        f = 1 if f is None else f
        if locations is not None and any(self.connected):
            locations = np.array(locations, float)
            locations[:, np.asarray(self.connected, bool)] = 0.0
        basis = tf.compose(locations, rotations, scales, shape=(f, len(self)))
        return self.fk_basis(basis)

    def fk_basis(self, basis: np.ndarray) -> np.ndarray:
        """Pose matrices from per-bone basis matrices ``(F, B, 4, 4)``."""
        pose = np.empty_like(basis)
        for i, p in enumerate(self.parents):
            local = self.rest_rel[i] @ basis[:, i]
            pose[:, i] = local if p < 0 else pose[:, p] @ local
        return pose

    def basis_for(self, parent_pose: np.ndarray | None, i: int, target: np.ndarray) -> np.ndarray:
        """Basis matrix that puts bone ``i`` at armature-space matrix ``target``.

        ``basis = (pose[parent] @ rest_rel[i])⁻¹ @ target``; ``parent_pose`` is ``(..., 4, 4)`` or
        None for a root bone.
        """
        ref = self.rest_rel[i] if parent_pose is None else parent_pose @ self.rest_rel[i]
        return np.linalg.inv(ref) @ target

    def tails_of(self, pose: np.ndarray) -> np.ndarray:
        """Posed tails ``(F, B, 3)`` from pose matrices."""
        return pose[..., :3, 3] + pose[..., :3, 1] * self.lengths[:, None]

    def reach(self, chain: list[int]) -> float:
        """Sum of bone lengths along a chain (m)."""
        return float(np.sum(self.lengths[chain]))
