"""Live preview: while a generator's Preview is on, changing its settings regenerates the motion in
a background thread and every 3D view shows it — a ghost of the deform skeleton at the current
frame, the foot plants, the pelvis path, the handshake's grip points and a status line — without
writing anything to the file. Generate then bakes the Clip the preview showed when nothing changed
since (:func:`finished_clips`).

Modules: :mod:`.inputs` (the key of a generator's inputs), :mod:`.session` (one generator's
preview: change → cancel → regenerate → result), :mod:`.runtime` (the running previews, the timer
and handlers they hold), :mod:`.draw` (gpu/blf). The engine side is
``procanim_addon/ghost.py``. See ``docs/preview.md``.

Imports of the Blender-side modules happen inside the functions, so the sidebar's settings can
import :func:`preview_property` while the add-on's modules are still being loaded.
"""

from __future__ import annotations


def preview_property(entry):
    """The ``preview`` toggle of a generator's sidebar settings: no storage of its own, it is on
    while the generator's preview runs (so a file never loads with a preview half on)."""
    from bpy.props import BoolProperty

    def get(_settings) -> bool:
        from . import runtime

        return runtime.is_on(entry.id)

    def set_(_settings, value: bool) -> None:
        import bpy

        from . import runtime

        if value:
            runtime.start(entry.id, bpy.context)
        else:
            runtime.stop(entry.id)

    return BoolProperty(
        name="Preview",
        description="Show the motion in the 3D views while the settings change; nothing is baked until Generate",
        get=get,
        set=set_,
    )


def draw_toggle(layout, entry, settings) -> None:
    """The Preview toggle and, while it is on, the preview's status (for the generator panels)."""
    from . import runtime

    row = layout.row()
    row.prop(settings, "preview", toggle=True, icon="HIDE_OFF" if runtime.is_on(entry.id) else "HIDE_ON")
    session = runtime.SESSIONS.get(entry.id)
    if session is not None:
        kind, text = session.status()
        icon = {"BUSY": "SORTTIME", "ERROR": "ERROR", "READY": "CHECKMARK"}.get(kind, "INFO")
        layout.label(text=text.split(": ", 1)[-1], icon=icon)


def finished_clips(op_module, args, context):
    """The preview's Clips for exactly the inputs ``args`` names now, or None (Generate's hook)."""
    from . import runtime

    return runtime.finished_clips(op_module, args, context)


def register() -> None:
    """Nothing is hooked into Blender until a Preview is turned on."""


def unregister() -> None:
    from . import runtime

    runtime.stop_all()


def notify_preview(prop):
    """``prop`` (a bpy property annotation, not yet registered) with an ``update`` callback that
    tells the running previews a setting changed (:func:`.runtime.on_change`), after the property's
    own ``update`` if it has one. Blender calls ``update`` in the same call that sets the value —
    a slider drag, a typed value, a preset, a script — so a change starts its regeneration at once.
    Collection properties (no ``update``) and properties with custom ``set`` are returned unchanged."""
    function, keywords = getattr(prop, "function", None), getattr(prop, "keywords", None)
    if function is None or keywords is None or "set" in keywords or function.__name__ == "CollectionProperty":
        return prop
    own = keywords.get("update")

    def update(settings, context) -> None:
        if own is not None:
            own(settings, context)
        from . import runtime

        runtime.on_change()

    return function(**{**keywords, "update": update})

