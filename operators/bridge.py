"""Reading the scene into engine inputs (armature → Skeleton and RigMap). No motion here."""

from __future__ import annotations

import bpy
import numpy as np

from ..procanim_addon.errors import InputError
from ..procanim_addon.rig_roles import ROLES, RigMap, chain_between, detect
from ..procanim_addon.skeleton import Skeleton


def resolve_armature(name: str, context) -> bpy.types.Object:
    """The armature named ``name`` (empty: the sidebar's armature, else the active object).

    Raises :class:`InputError` with a user-facing message when it is missing, not an armature or
    not editable (linked from a library).
    """
    obj = None
    if name:
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise InputError(f"There is no object named '{name}'.")
    else:
        settings = getattr(context.scene, "procanim", None)
        obj = settings.armature if settings is not None and settings.armature else context.active_object
        if obj is None:
            raise InputError("Pick an armature in the ProcAnim sidebar or make one active.")
    if obj.type != "ARMATURE":
        raise InputError(f"'{obj.name}' is a {obj.type.lower()}, not an armature.")
    if obj.library is not None or obj.data.library is not None:
        raise InputError(
            f"'{obj.name}' is linked from a library and cannot be animated here; "
            "make it local or use a library override."
        )
    return obj


def resolve_object(name: str, kinds: tuple, what: str):
    """An object of one of ``kinds`` by name, or an InputError naming what was wrong."""
    obj = bpy.data.objects.get(name) if name else None
    if obj is None:
        raise InputError(f"Pick a {what}." if not name else f"There is no object named '{name}' for the {what}.")
    if obj.type not in kinds:
        raise InputError(
            f"'{obj.name}' is a {obj.type.lower()}; the {what} must be a {' or '.join(k.lower() for k in kinds)}."
        )
    return obj


def read_skeleton(obj) -> Skeleton:
    """The armature's rest pose as a Skeleton (armature space, metres)."""
    bones = []
    for b in obj.data.bones:
        bones.append(
            {
                "name": b.name,
                "parent": b.parent.name if b.parent else None,
                "matrix_local": np.array(b.matrix_local, dtype=float),
                "length": b.length,
                "inherit_rotation": b.use_inherit_rotation,
                "inherit_scale": b.inherit_scale,
                "local_location": b.use_local_location,
                "connected": b.use_connect,
            }
        )
    if not bones:
        raise InputError(f"'{obj.name}' has no bones.")
    return Skeleton.from_bones(bones)


def read_rigmap(obj) -> RigMap:
    """The role map stored on the armature (ProcAnim > Character), detected when none is stored."""
    stored = getattr(obj.data, "procanim_roles", None)
    roles = {item.role: item.bone for item in stored if item.bone} if stored is not None else {}
    parents = {b.name: (b.parent.name if b.parent else None) for b in obj.data.bones}
    detected = detect(list(parents), parents, rig_name=obj.name)
    if not roles:
        return detected
    rm = RigMap(roles, family="stored", rig_name=obj.name)
    if rm.get("hips") and rm.get("chest"):
        rm.spine_bones = chain_between(parents, rm.roles["hips"], rm.roles["chest"])
    return rm


def store_rigmap(obj, rigmap: RigMap) -> None:
    """Write the role map onto the armature data, where the Character panel edits it."""
    coll = obj.data.procanim_roles
    coll.clear()
    for role in ROLES:
        item = coll.add()
        item.role = role
        item.bone = rigmap.get(role) or ""
