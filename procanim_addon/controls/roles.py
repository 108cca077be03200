"""Roles of a control rig whose family has a control map (CloudRig, a rig mapped in the panel).

The map may name the role of each deform skeleton bone (``[roles]``: CloudRig's ``Thigh.L`` is
``thigh.L``); those roles are taken as named and scored by the structure checks of the rest pose,
as the names of a generated Rigify rig are (:mod:`procanim_addon.rig_roles`). A map without roles
leaves them to the structure (:func:`procanim_addon.rig_roles.detect` on the deform skeleton); the
family is the map's either way.
"""

from __future__ import annotations

import numpy as np

from ..rig_roles import LEG_ROLES, ROLES, RigMap, chain_between, detect
from ..rig_structure import body_checks
from ..skeleton import Skeleton
from .maps import ControlMap


def mapped_rigmap(cmap: ControlMap, skeleton: Skeleton, parents: dict[str, str | None], rig_name: str = "") -> RigMap:
    """The role map of a rig of ``cmap``'s family whose deform skeleton is ``skeleton`` (``parents``:
    bone → parent in that skeleton)."""
    named = {r: b for r, b in cmap.roles if r in ROLES and skeleton.has(b)}
    if not named:
        rm = detect(list(skeleton.names), parents, rig_name=rig_name, skeleton=skeleton)
        rm.family = cmap.label
        return rm
    rm = RigMap(named, cmap.label, rig_name=rig_name)
    if rm.get("hips") and rm.get("chest"):
        rm.spine_bones = chain_between(parents, rm.roles["hips"], rm.roles["chest"])
    checks = body_checks(skeleton, {r: skeleton.index(b) for r, b in named.items()})
    required = ["hips", *LEG_ROLES]
    found = (len(required) - len(rm.missing(required))) / len(required)
    rm.confidence = round(float(np.mean(list(checks.values()))) * found if checks else 0.0, 3)
    rm.notes += [f"check failed: {k}" for k, v in checks.items() if v < 0.5]
    rm.notes.append(f"roles from the {cmap.label} control map, checked against the rest pose")
    missing = [b for r, b in cmap.roles if r in ROLES and not skeleton.has(b)]
    if missing:
        rm.notes.append(f"bones the map names that the rig lacks: {', '.join(missing)}")
    return rm
