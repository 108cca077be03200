"""The preview's part of the sidebar settings: the Preview toggle of each generator, and the
``update`` callback every setting carries so that a change reaches the running previews at once."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from ..operators.generator import Generator
from . import runtime


def preview_property(generator: Generator):
    """The ``preview`` toggle of a generator's sidebar settings: no storage of its own, it is on
    while the generator's preview runs (so a file never loads with a preview half on)."""

    def get(_settings) -> bool:
        return runtime.is_on(generator.id)

    def set_(_settings, value: bool) -> None:
        if value:
            runtime.start(generator.id, bpy.context)
        else:
            runtime.stop(generator.id)

    return BoolProperty(
        name="Preview",
        description="Show the motion in the 3D views while the settings change; nothing is baked until Generate",
        get=get,
        set=set_,
    )


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
        runtime.on_change()

    return function(**{**keywords, "update": update})
