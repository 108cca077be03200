"""Sidebar (3D View ▸ N ▸ ProcAnim): property groups, panels, presets, menus — each generator's
settings group, panel and sub-panels made from its Blender side (:mod:`.generator`).

Registration order (property-group types before the pointer properties that use them):
:func:`property_classes` (role and action info groups, the generators' own groups, one settings
group per generator with a panel, then ``scene.procanim``'s group), then :func:`classes` (the
Character panel, the generators' panels in registry order — a sub-panel after its parent — then
each generator's presets, emotion operator and sub-panels, then the figures' operator and menus).
"""

from __future__ import annotations

import functools

from ..operators import control_map_ops, generators
from ..operators.generator import Generator
from . import character, generator, menus, properties


def _with_panels() -> list[Generator]:
    return [g for g in generators.every() if g.has_panel]


@functools.cache
def _scene_settings(groups: tuple[tuple[str, str, type], ...]) -> type:
    return properties.scene_settings_class({name: (label, group) for name, label, group in groups})


def scene_settings() -> type:
    """``scene.procanim``'s group for the generators listed now."""
    return _scene_settings(
        tuple((g.settings_name, g.spec.label, generator.settings_class(g)) for g in _with_panels())
    )


def property_classes() -> tuple[type, ...]:
    return (
        properties.ProcAnimRole,
        properties.ProcAnimActionInfo,
        *(cls for g in generators.every() for cls in g.property_classes()),
        *(generator.settings_class(g) for g in _with_panels()),
        scene_settings(),
    )


def classes() -> tuple[type, ...]:
    return (
        *character.classes,
        *(generator.panel_class(g) for g in _with_panels()),
        *(cls for g in generators.every() for cls in generator.extra_classes(g)),
        *generator.classes,
        *menus.classes,
    )


def register_properties() -> None:
    properties.register_properties(scene_settings())
    control_map_ops.register_properties()
    for g in generators.every():
        g.register_properties()
    menus.register()


def unregister_properties() -> None:
    menus.unregister()
    for g in reversed(generators.every()):
        g.unregister_properties()
    control_map_ops.unregister_properties()
    properties.unregister_properties()
