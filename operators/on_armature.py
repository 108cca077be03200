"""The operators that act on one armature named by an argument (Detect Roles, the control-map
operators): the ``armature`` argument they share and how it becomes the armature or a report."""

from __future__ import annotations

import bpy
from bpy.props import StringProperty

from ..procanim_addon.errors import InputError
from .bridge import resolve_armature


class OnArmature:
    """A mixin of an operator on one armature (``class PROCANIM_OT_x(OnArmature, bpy.types.Operator)``):
    the ``armature`` argument, an object name (empty: the sidebar's armature, else the active object),
    and :meth:`armature_or_report`."""

    armature: StringProperty(
        name="Armature", description="Armature object name (empty: the sidebar's or the active one)"
    )

    def armature_or_report(self, context) -> bpy.types.Object | None:
        """The armature the ``armature`` argument names (:func:`.bridge.resolve_armature`), or None
        once an error report says why it cannot be used (the caller then returns ``{"CANCELLED"}``)."""
        try:
            return resolve_armature(self.armature, context)
        except InputError as err:
            self.report({"ERROR"}, str(err))  # type: ignore[attr-defined]  # the Operator it is mixed into
            return None
