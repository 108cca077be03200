"""ProcAnim — procedural character animation baked onto armatures.

This file only registers: properties, operators, panels (in that order; property-group types
before the pointer properties that use them). The motion engine is ``procanim_addon`` (no bpy).
Imports happen inside register() so that importing the package (e.g. by test collection) does
not need Blender.
"""


def _classes():
    from . import operators, panels

    props = panels.properties.classes
    return (*props, *operators.classes, *[c for c in panels.classes if c not in props])


def register():
    import bpy

    from .panels import handshake, properties

    for cls in _classes():
        bpy.utils.register_class(cls)
    properties.register_properties()
    handshake.register_properties()


def unregister():
    import bpy

    from .panels import handshake, properties

    handshake.unregister_properties()
    properties.unregister_properties()
    for cls in reversed(_classes()):
        bpy.utils.unregister_class(cls)
