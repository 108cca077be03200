"""ProcAnim — procedural character animation baked onto armatures.

This file only registers, in one ordered walk: property groups, operators, panels and menus
(property-group types before the pointer properties that use them), the batch command, and the
live preview's clean-up on unregister (the preview hooks nothing into Blender until a Preview is
turned on). The motion engine is ``procanim_addon`` (no bpy); the generators are listed once in
``procanim_addon/registry.py``, and :func:`register_generator` adds one from elsewhere at run time.
"""

_registered = False


def _layers():
    """The add-on's Blender-side packages (and the batch command's Blender side)."""
    # imported when registering, not with the package: the batch command and the Dask workers
    # import the package without Blender (tools/batch.py, batch/dask_plugin.py)
    import bpy

    from . import operators, panels, preview
    from .batch import command as batch

    return bpy, batch, operators, panels, preview


def _classes(operators, panels) -> tuple:
    return (*panels.property_classes(), *operators.classes(), *panels.classes())


def register():
    global _registered
    # imported here, as the layers are: pytest imports this file by its folder's name, as no package
    from .procanim_addon.threads import limit_blas_threads

    limit_blas_threads()  # once per process: OpenBLAS's idle threads would spin on the other cores
    bpy, batch, operators, panels, _preview = _layers()
    for cls in _classes(operators, panels):
        bpy.utils.register_class(cls)
    panels.register_properties()
    batch.register()  # the `blender -c procanim` command (batch/)
    _registered = True


def unregister():
    global _registered
    bpy, batch, operators, panels, preview = _layers()
    preview.unregister()
    batch.unregister()
    panels.unregister_properties()
    for cls in reversed(_classes(operators, panels)):
        bpy.utils.unregister_class(cls)
    _registered = False


def register_generator(generator) -> None:
    """Add a generator defined outside ProcAnim: ``generator`` is its Blender side (a subclass
    instance of ``operators.generator.Generator``, whose ``spec`` is its engine side). It is listed
    after the others (registry, menus, batch command) and, when the extension is enabled, its
    operator, settings and panel are registered at once."""
    _reregistered(lambda operators: operators.generators.add(generator))


def unregister_generator(generator_id: str) -> None:
    """Undo :func:`register_generator`."""
    _reregistered(lambda operators: operators.generators.remove(generator_id))


def _reregistered(change) -> None:
    """``change(operators)`` to the list of generators, the classes registered again around it
    (the sidebar's settings group holds one pointer per generator)."""
    _bpy, _batch, operators, _panels, _preview = _layers()
    if not _registered:
        change(operators)
        return
    unregister()
    try:
        change(operators)
    finally:
        register()
