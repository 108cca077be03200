"""procanim.detect_rig — find which bone plays each role, from the rig's structure, and store it."""

from __future__ import annotations

import json

import bpy

from ..procanim_addon.errors import InputError
from ..procanim_addon.frames import AXES_HINT
from ..procanim_addon.rig_roles import CONTROL_ROLES, LEG_ROLES, OPTIONAL_ROLES, ROLES, RigMap
from .bridge import detect_roles, read_skeleton, resolve_armature, store_rigmap
from .on_armature import OnArmature

#: ID property on the armature data where the last detection is kept for the Character panel
DETECTION_KEY = "procanim_detection"


def store_detection(obj, rigmap: RigMap) -> None:
    """Keep what detection found (family, confidence, notes, the map) on the armature data, so the
    panel can show it and tell a map edited by hand from the detected one."""
    obj.data[DETECTION_KEY] = {
        "family": rigmap.family,
        "confidence": float(rigmap.confidence),
        "notes": "\n".join(rigmap.notes),
        "roles": json.dumps({r: b for r, b in rigmap.roles.items() if b}, sort_keys=True),
    }


def read_detection(obj) -> dict | None:
    """What :func:`store_detection` kept: ``{family, confidence, notes (list), roles (dict)}``."""
    raw = obj.data.get(DETECTION_KEY) if obj is not None else None
    if raw is None:
        return None
    try:
        roles = json.loads(raw.get("roles", "{}"))
    except ValueError:
        roles = {}
    notes = [n for n in str(raw.get("notes", "")).split("\n") if n]
    return {"family": str(raw.get("family", "")), "confidence": float(raw.get("confidence", 0.0)),
            "notes": notes, "roles": roles}


def missing_roles(roles: dict[str, str]) -> tuple[list[str], list[str]]:
    """(missing leg roles, other missing roles that most generators use); optional roles such as
    ``tail``, ``toe.L`` or ``foot_ik.L`` are not listed."""
    legs = [r for r in LEG_ROLES if not roles.get(r)]
    skip = set(OPTIONAL_ROLES) | set(CONTROL_ROLES) | set(LEG_ROLES)
    return legs, [r for r in ROLES if r not in skip and not roles.get(r)]


class PROCANIM_OT_detect_rig(OnArmature, bpy.types.Operator):
    """Detect which bone plays each role (hips, thigh.L …) from the rig's structure and rest pose;
    bone names only break ties"""

    bl_idname = "procanim.detect_rig"
    bl_label = "Detect Roles"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        try:
            obj = resolve_armature(self.armature, context)
            skeleton = read_skeleton(obj)
        except InputError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        rigmap = detect_roles(obj, skeleton)
        store_rigmap(obj, rigmap)
        store_detection(obj, rigmap)
        found = len([r for r in ROLES if rigmap.get(r)])
        legs, others = missing_roles(rigmap.roles)
        summary = f"{obj.name}: {rigmap.family}, confidence {rigmap.confidence:.0%}, {found} roles found"
        if rigmap.lies_along:
            lying = f"the character lies in the scene (it stands along {rigmap.lies_along}, not up Z)"
            self.report({"WARNING"}, f"{summary}; {lying}, so ProcAnim cannot animate it yet. {AXES_HINT}")
        elif legs:
            self.report({"WARNING"}, f"{summary}; missing leg roles: {', '.join(legs)}")
        elif others:
            self.report({"INFO"}, f"{summary}; missing: {', '.join(others)}")
        else:
            self.report({"INFO"}, summary)
        return {"FINISHED"}


classes = (PROCANIM_OT_detect_rig,)
