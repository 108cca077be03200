"""The generators, listed once.

Every part of ProcAnim that needs "all generators" iterates :data:`GENERATORS`: the add-on's
registration (operators, sidebar settings and panels, menus), the batch command, the metric table,
the engine's own tests. An entry is the generator's :class:`~.spec.GeneratorSpec`, exported by its
engine package; its Blender side is ``operators/<id>.py`` (see ``docs/adding-a-generator.md``).

Adding a generator: its engine package with its ``SPEC``, its Blender module, one line here. A
generator defined elsewhere (another add-on, a test) is added at run time with :func:`add` — through
the extension's ``register_generator``, which also registers its Blender classes.
"""

from __future__ import annotations

from . import duck, motions
from .crowd.spec import SPEC as CROWD_WALK
from .fix_feet.spec import SPEC as FIX_FEET
from .handshake.spec import SPEC as HANDSHAKE
from .spec import GeneratorSpec
from .terrain.spec import SPEC as ADAPT_TERRAIN
from .walk.spec import SPEC as PATH_WALK

GENERATORS: list[GeneratorSpec] = [duck.SPEC, HANDSHAKE, PATH_WALK, ADAPT_TERRAIN, motions.SPEC, CROWD_WALK,
                                   FIX_FEET]

BY_ID: dict[str, GeneratorSpec] = {g.id: g for g in GENERATORS}


def get(generator_id: str) -> GeneratorSpec:
    """The spec of ``generator_id`` (KeyError naming the known ids otherwise)."""
    try:
        return BY_ID[generator_id]
    except KeyError:
        raise KeyError(f"unknown generator {generator_id!r}; known: {', '.join(BY_ID)}") from None


def add(spec: GeneratorSpec) -> None:
    """List ``spec`` after the others (ValueError when its id is taken by another generator)."""
    known = BY_ID.get(spec.id)
    if known is spec:
        return
    if known is not None:
        raise ValueError(f"a generator {spec.id!r} is already registered")
    GENERATORS.append(spec)
    BY_ID[spec.id] = spec


def remove(generator_id: str) -> None:
    """Take a generator added with :func:`add` off the list (nothing when it is not listed)."""
    spec = BY_ID.pop(generator_id, None)
    if spec is not None:
        GENERATORS.remove(spec)


def figure_keys(generator_id: str) -> list[str]:
    """The keys of the figures ``generator_id``'s spec shows (none for an unknown generator)."""
    spec = BY_ID.get(generator_id)
    return [m.key for m in spec.metrics] if spec is not None else []
