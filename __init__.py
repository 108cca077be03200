"""ProcAnim — procedural character animation baked onto armatures.

This file only registers: property groups, operators, panels and menus (in that order;
property-group types before the pointer properties that use them), the batch command, then the
live preview (which hooks nothing into Blender until a Preview is turned on, and unhooks
everything when disabled). The motion engine is ``procanim_addon`` (no bpy); the generators are
listed once in ``procanim_addon/registry.py``. Imports happen inside register() so that importing
the package (e.g. by test collection) does not need Blender.
"""


def _classes():
    from . import operators, panels

    return (*panels.property_classes, *operators.classes, *panels.classes)


def register():
    import bpy

    from . import batch, panels, preview
    from .procanim_addon.threads import limit_blas_threads

    limit_blas_threads()  # once per process: OpenBLAS's idle threads would spin on the other cores
    for cls in _classes():
        bpy.utils.register_class(cls)
    panels.register_properties()
    batch.register()  # the `blender -c procanim` command (batch/)
    preview.register()


def unregister():
    import bpy

    from . import batch, panels, preview

    preview.unregister()
    batch.unregister()
    panels.unregister_properties()
    for cls in reversed(_classes()):
        bpy.utils.unregister_class(cls)
