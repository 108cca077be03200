"""Sidebar (3D View ▸ N ▸ ProcAnim): property groups, panels, presets, menus — generator panels
and settings made from the registry (see :mod:`.generator`).

Registration order (property-group types before the pointer properties that use them):
:data:`property_classes` (role and action info groups, the handshake's per-character group, one
settings group per generator, then ``scene.procanim``'s group), then :data:`classes` (panels in
registry order — a sub-panel after its parent — then each panel module's own classes, menus).
"""

from __future__ import annotations

import importlib

from ..operators import generator_module
from ..procanim_addon.registry import GENERATORS
from . import character, generator, menus, properties


def panel_module(entry):
    """The ``panels/<id>.py`` module of a registry entry."""
    return importlib.import_module(f".{entry.id}", __name__)


SETTINGS = {
    entry.settings: (entry.label, generator.settings_class(entry, generator_module(entry), panel_module(entry)))
    for entry in GENERATORS
}
SCENE_SETTINGS = properties.scene_settings_class(SETTINGS)
GENERATOR_PANELS = tuple(
    generator.panel_class(entry, generator_module(entry), panel_module(entry)) for entry in GENERATORS
)

property_classes = (
    properties.ProcAnimRole,
    properties.ProcAnimActionInfo,
    *(cls for entry in GENERATORS for cls in getattr(panel_module(entry), "property_classes", ())),
    *(group for _label, group in SETTINGS.values()),
    SCENE_SETTINGS,
)

classes = (
    *character.classes,
    *GENERATOR_PANELS,
    *(cls for entry in GENERATORS for cls in panel_module(entry).classes),
    *generator.classes,
    *menus.classes,
)


def register_properties():
    properties.register_properties(SCENE_SETTINGS)
    for entry in GENERATORS:
        hook = getattr(panel_module(entry), "register_properties", None)
        if hook is not None:
            hook()
    menus.register()


def unregister_properties():
    menus.unregister()
    for entry in reversed(GENERATORS):
        hook = getattr(panel_module(entry), "unregister_properties", None)
        if hook is not None:
            hook()
    properties.unregister_properties()
