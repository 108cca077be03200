"""ControlRig: everything the conversion needs to know about a control rig, as plain data.

The Blender side (``operators/control_rig.py``) reads an armature once into this structure: every
pose bone's rest matrix, parent, inheritance flags, rotation mode and channel locks; every enabled
constraint with its evaluated influence (drivers applied) and its settings; the switch properties
(custom properties such as ``IK_FK``) and which constraint influences they drive. Nothing here
refers to Blender; arrays are in the armature's space, metres.

What differs between rig families — which bones are controls, which form the deform skeleton,
the IK/FK switches — is the rig's :class:`~.maps.ControlMap` (``family``); the bridge evaluates its
rules on Blender's data (bone collections, custom shapes) into ``control_mask`` and
``skeleton_names``. Without them a rig follows Rigify's conventions, which names alone decide:
mechanism bones carry a prefix — ``MCH-``, ``ORG-``, ``DEF-``, ``VIS_`` — and tweak bones carry
``tweak`` in their names; every other bone is a control (:func:`is_control_name`); the deform
skeleton is the ``ORG-`` bones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..skeleton import RestBones
from ..transforms import affine_inverse
from .maps import ControlMap, rigify_map

MECHANISM_PREFIXES = ("MCH-", "ORG-", "DEF-", "VIS_", "WGT-")


def is_control_name(name: str) -> bool:
    """True for a bone an animator keys: no mechanism prefix and not a tweak bone."""
    return not name.startswith(MECHANISM_PREFIXES) and "tweak" not in name.lower()


@dataclass(frozen=True)
class Mapping:
    """A Transformation constraint's mapping (Blender's settings, read once).

    ``source``/``dest``: 'LOCATION', 'ROTATION' or 'SCALE' (``map_from``/``map_to``); ``axes``: for
    each destination axis, the source axis it reads (0–2); ``from_min``/``from_max`` and
    ``to_min``/``to_max``: the ranges of the chosen source and destination (m, rad or factors);
    ``extrapolate``: ``use_motion_extrapolate``; ``mix``: the mix mode of the destination;
    ``from_rotation_mode``/``to_euler_order``: Blender's names ('AUTO', 'XYZ' …)."""

    source: str = "LOCATION"
    dest: str = "LOCATION"
    axes: tuple[int, ...] = (0, 1, 2)
    from_min: tuple[float, ...] = (0.0, 0.0, 0.0)
    from_max: tuple[float, ...] = (0.0, 0.0, 0.0)
    to_min: tuple[float, ...] = (0.0, 0.0, 0.0)
    to_max: tuple[float, ...] = (0.0, 0.0, 0.0)
    extrapolate: bool = False
    mix: str = "ADD"
    from_rotation_mode: str = "AUTO"
    to_euler_order: str = "AUTO"


@dataclass
class Constraint:
    """One enabled constraint of a pose bone (Blender's settings, read once).

    ``kind`` is Blender's constraint type (``COPY_TRANSFORMS`` …); ``target`` the index of the
    sub-target bone (-1: none or another object); ``influence`` the evaluated influence (drivers
    applied); ``driver`` the ``(bone, property)`` switch driving the influence, if any.
    """

    kind: str
    target: int = -1
    influence: float = 1.0
    owner_space: str = "WORLD"
    target_space: str = "WORLD"
    head_tail: float = 0.0
    mix: str = "REPLACE"
    axes: tuple = (True, True, True)
    invert: tuple = (False, False, False)
    use_offset: bool = False
    euler_order: str = "AUTO"
    targets: tuple = ()  # ARMATURE: ((bone index, weight), ...)
    rest_length: float = 0.0  # STRETCH_TO
    bulge: float = 1.0
    bulge_limits: tuple = ()  # STRETCH_TO: (use_min, min, use_max, max, smooth) when either is used
    volume: str = "VOLUME_XZX"
    keep_axis: str = "PLANE_X"
    track_axis: str = "TRACK_Y"  # DAMPED_TRACK
    distance: float = 0.0  # LIMIT_DISTANCE
    limit_mode: str = "LIMITDIST_INSIDE"
    limits: tuple = ()  # LIMIT_ROTATION: ((use, min, max) for x, y, z)
    scale_limits: tuple = ()  # LIMIT_SCALE: ((use min, min, use max, max) for x, y, z)
    mapping: Mapping | None = None  # TRANSFORM
    chain_count: int = 0  # IK
    pole: int = -1
    pole_angle: float = 0.0
    use_tail: bool = True
    use_stretch: bool = True
    driver: tuple | None = None
    name: str = ""


@dataclass
class ControlRig(RestBones):
    """A posable armature with its constraints, ordered parents first (like :class:`Skeleton`).

    names, parents (-1 root), matrix_local (B, 4, 4) rest matrices, lengths (m),
    inherit_rotation, inherit_scale (Blender's enum names), local_location, connected: per bone;
    rotation_modes ('QUATERNION', 'XYZ' …, 'AXIS_ANGLE'); lock_location / lock_rotation (B, 3) bools;
    constraints: per bone, the enabled ones in evaluation order; properties: bone → {name: value}
    for numeric custom properties (the rig's switches); rig_id: Rigify's id of a generated rig ('');
    ik_stretch: per bone, its IK stretch (0–1; how freely Blender's IK solver may change its length);
    family: the rig family's control map (Rigify's by default); control_mask: per bone, is it a
    control (default: the map's name rules); skeleton_names: the deform skeleton's bones, root
    excluded (default: the map's name rules).
    Bones by name, rest heads and tails: :class:`~procanim_addon.skeleton.RestBones`.
    """

    names: list[str]
    parents: np.ndarray
    matrix_local: np.ndarray
    lengths: np.ndarray
    inherit_rotation: list[bool]
    inherit_scale: list[str]
    local_location: list[bool]
    connected: list[bool]
    rotation_modes: list[str]
    lock_location: np.ndarray
    lock_rotation: np.ndarray
    constraints: list[list[Constraint]]
    properties: dict[str, dict[str, float]] = field(default_factory=dict)
    rig_id: str = ""
    ik_stretch: np.ndarray | None = None
    family: ControlMap = field(default_factory=rigify_map)
    control_mask: np.ndarray | None = None
    skeleton_names: tuple[str, ...] | None = None

    def __post_init__(self):
        self.parents = np.asarray(self.parents, dtype=int)
        self.matrix_local = np.asarray(self.matrix_local, dtype=float)
        self.lengths = np.asarray(self.lengths, dtype=float)
        self.lock_location = np.asarray(self.lock_location, dtype=bool).reshape(-1, 3)
        self.lock_rotation = np.asarray(self.lock_rotation, dtype=bool).reshape(-1, 3)
        n = len(self.names)
        self.ik_stretch = np.zeros(n) if self.ik_stretch is None else np.asarray(self.ik_stretch, dtype=float)
        for i, p in enumerate(self.parents):
            if p >= i:
                raise ValueError("bones must be ordered parents first")
        self._index = {n: i for i, n in enumerate(self.names)}
        if self.control_mask is None:
            self.control_mask = np.array([self.family.is_control(name) for name in self.names], dtype=bool)
        self.control_mask = np.asarray(self.control_mask, dtype=bool)
        if self.skeleton_names is None:
            self.skeleton_names = tuple(name for name in self.names if self.family.in_skeleton(name))
        self._skeleton = frozenset(self._index[n] for n in self.skeleton_names if n in self._index)
        inv = affine_inverse(self.matrix_local)
        parent_inv = np.where((self.parents < 0)[:, None, None], np.eye(4), inv[np.maximum(self.parents, 0)])
        self.rest_rel = parent_inv @ self.matrix_local

    def get(self, name: str) -> int:
        """Index of ``name``, or -1 when the rig has no such bone."""
        return self._index.get(name, -1)

    def children(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in self.names]
        for i, p in enumerate(self.parents):
            if p >= 0:
                out[p].append(i)
        return out

    def is_control(self, i: int) -> bool:
        """Does an animator key bone ``i`` (by the rig family's rules)?"""
        return bool(self.control_mask[i])

    def in_skeleton(self, i: int) -> bool:
        """Is bone ``i`` one of the deform skeleton's bones (Rigify's ``ORG-`` bones), root excluded?"""
        return i in self._skeleton

    @property
    def root_name(self) -> str:
        """The name of the rig's root bone (the deform skeleton's root)."""
        return self.family.root

    def prop(self, bone: str, name: str, default: float | None = None) -> float | None:
        return self.properties.get(bone, {}).get(name, default)
