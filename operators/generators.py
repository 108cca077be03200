"""The Blender side of every generator in the registry (``procanim_addon/registry.py``), by id.

A shipped generator's Blender side is ``GENERATOR`` in ``operators/<id>.py`` (its module is named
for its id); a generator registered at run time (the extension's ``register_generator``) brings its
own :class:`~.generator.Generator`, kept here beside its spec in the registry.
"""

from __future__ import annotations

import importlib

from ..procanim_addon import registry
from .generator import Generator

_ADDED: dict[str, Generator] = {}  # generators registered at run time, by id


def get(generator_id: str) -> Generator:
    """The Blender side of ``generator_id`` (KeyError naming the known ids when it is not listed)."""
    registry.get(generator_id)
    if generator_id in _ADDED:
        return _ADDED[generator_id]
    # the module named for the id (one rule instead of a second list of generators)
    generator = importlib.import_module(f"{__package__}.{generator_id}").GENERATOR
    if generator.spec is not registry.get(generator_id):
        raise TypeError(f"operators/{generator_id}.py: GENERATOR.spec is not the registry's {generator_id!r}")
    return generator


def every() -> list[Generator]:
    """Every generator's Blender side, in the registry's order."""
    return [get(spec.id) for spec in registry.GENERATORS]


def add(generator: Generator) -> None:
    """List ``generator`` (its spec in the registry, its Blender side here)."""
    registry.add(generator.spec)
    _ADDED[generator.id] = generator


def remove(generator_id: str) -> None:
    """Take a generator added with :func:`add` off the lists (a shipped one stays)."""
    if _ADDED.pop(generator_id, None) is not None:
        registry.remove(generator_id)
