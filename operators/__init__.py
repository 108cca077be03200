"""Blender operators: one module per operator, plus the bridge (scene → engine) and the baker.

Generator operators are made from the registry (``procanim_addon/registry.py``): each entry's
``operators/<id>.py`` module holds its arguments and ``prepare`` (see :mod:`.base`), and
:func:`.base.operator_class` turns the two into the operator class.
"""

from __future__ import annotations

import importlib

from ..procanim_addon.registry import GENERATORS
from . import add_rigs, add_zigzag, crowd_walk, detect_rig
from .base import operator_class


def generator_module(entry):
    """The ``operators/<id>.py`` module of a registry entry."""
    return importlib.import_module(f".{entry.id}", __name__)


GENERATOR_OPERATORS = tuple(operator_class(entry, generator_module(entry)) for entry in GENERATORS)

classes = (
    *add_rigs.classes,
    *detect_rig.classes,
    *add_zigzag.classes,
    *GENERATOR_OPERATORS,
    *crowd_walk.classes,
)
