"""ProcAnim — procedural character animation baked onto armatures.

This file only registers: properties, operators, panels (in that order; property-group types
before the pointer properties that use them). The motion engine is ``procanim_addon`` (no bpy).
"""

import bpy

from . import operators, panels
from .panels import properties

_classes = (*panels.properties.classes, *operators.classes, *[c for c in panels.classes if c not in panels.properties.classes])


def register():
    for cls in _classes:
        bpy.utils.register_class(cls)
    properties.register_properties()


def unregister():
    properties.unregister_properties()
    for cls in reversed(_classes):
        bpy.utils.unregister_class(cls)
