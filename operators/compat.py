"""The one place that branches on ``bpy.app.version``: where an Action keeps its F-curves.

* Blender 4.2/4.3: ``action.fcurves`` and ``action.groups`` (legacy actions).
* Blender 4.4+ (slotted actions): a slot per animated ID, F-curves in the slot's channelbag on a
  keyframe strip of the first layer. The slot must be assigned to the object explicitly, or a
  fresh action's new slot stays unassigned and the object does not move. 5.0 removed
  ``action.fcurves``; 4.4–5.0 share ``strip.channelbag(slot, ensure=True)``.
"""

from __future__ import annotations

import bpy

SLOTTED_ACTIONS = bpy.app.version >= (4, 4, 0)


def assign_action(obj, action):
    """Make ``action`` the object's active action (and its slot the assigned one); returns the
    ``(fcurves, groups)`` collections to write into."""
    ad = obj.animation_data or obj.animation_data_create()
    ad.action = action
    if not SLOTTED_ACTIONS:
        return action.fcurves, action.groups
    slot = next((s for s in action.slots if s.target_id_type == "OBJECT"), None)
    if slot is None:
        slot = action.slots.new(id_type="OBJECT", name=obj.name)
    ad.action_slot = slot
    layer = action.layers[0] if len(action.layers) else action.layers.new("Layer")
    strip = layer.strips[0] if len(layer.strips) else layer.strips.new(type="KEYFRAME")
    bag = strip.channelbag(slot, ensure=True)
    return bag.fcurves, bag.groups


def action_fcurves(action, obj=None):
    """All F-curves of ``action`` (for the slot assigned to ``obj`` when given)."""
    if not SLOTTED_ACTIONS:
        return list(action.fcurves)
    out = []
    slot = obj.animation_data.action_slot if obj is not None and obj.animation_data else None
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                if slot is None or bag.slot == slot:
                    out.extend(bag.fcurves)
    return out


def remove_fcurve(action, fc) -> None:
    """Remove F-curve ``fc`` from ``action``, whichever collection holds it."""
    if not SLOTTED_ACTIONS:
        action.fcurves.remove(fc)
        return
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                if fc in bag.fcurves.values():
                    bag.fcurves.remove(fc)
                    return
