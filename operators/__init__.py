"""Blender operators and the Blender side of the generators: one module per operator or generator,
plus the bridge (scene → engine), the baker and the machinery every generator shares.

A generator's module (``operators/<id>.py``) implements :class:`.generator.Generator`; its operator
is :class:`.base.GeneratorOperator` made for it by :func:`.base.operator_class`. The generators are
listed once, in ``procanim_addon/registry.py`` (:mod:`.generators` finds their Blender side).
"""

from __future__ import annotations

from . import add_rigs, add_zigzag, control_map_ops, detect_rig, export, generators
from .base import operator_class

FIXED_CLASSES = (
    *control_map_ops.property_classes,  # the map dialog's fields, before the operator that shows them
    *add_rigs.classes,
    *detect_rig.classes,
    *control_map_ops.classes,
    *add_zigzag.classes,
    *export.classes,
)


def classes() -> tuple[type, ...]:
    """Every operator class, the generators' in the registry's order (registered in this order)."""
    return (*FIXED_CLASSES, *(operator_class(g) for g in generators.every()))
