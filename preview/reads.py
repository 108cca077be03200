"""What a generator's ``prepare`` read from the scene, kept between one preview's regenerations.

A slider change does not touch the path, the ground or the armature, yet ``prepare`` would read
them again on every change (the ground: its evaluated mesh into a :class:`TerrainMesh`, slow on the
main thread for a large mesh). ``prepare`` asks for such a read through ``kept_read``
(``operators/objects.py``), which calls ``args.reads.get(what, objects, build)`` when the arguments
have ``reads`` (only the preview's do): the value ``build()`` made last time is returned while
every object it came from is in the same state — ``object_state`` (``operators/inputs.py``): name,
type, world and basis matrices, and content digest (bones and roles, evaluated geometry), the same
state the preview's key holds. So a kept read is exactly what ``build()`` would return now whenever
the key says the inputs are unchanged, and Generate (which reads afresh) bakes the same Clip the
preview showed (tested).

One value is kept per ``what`` (the last one), so memory stays that of one regeneration's inputs.
Arrays are handed out as copies (an engine that changed its input in place would change the kept
one); other values (a Skeleton, a TerrainMesh) are shared, as the bridge's own Skeleton cache does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..operators import inputs
from ..operators.generator import Generator


class Reads:
    """The kept reads of one preview (main thread only)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple, Any]] = {}
        self._generator: Generator | None = None
        self._context: Any = None
        self.hits = 0  # reads served from what was kept (the tests count them)

    def bind(self, generator: Generator, context) -> None:
        """The generator and context the next ``prepare`` runs with."""
        self._generator, self._context = generator, context

    def state(self, objects: Sequence) -> tuple:
        """The state of ``objects`` (None for an empty optional object)."""
        generator = self._generator
        assert generator is not None, "Reads.bind comes first"
        return tuple(
            None if obj is None else inputs.object_state(obj, generator, self._context) for obj in objects
        )

    def get(self, what: str, objects: Sequence, build: Callable[[], Any]) -> Any:
        """``build()``, or the value it made last time for ``what`` when ``objects`` are all in the
        state they were in then."""
        state = self.state(objects)
        kept = self._kept.get(what)
        if kept is not None and kept[0] == state:
            self.hits += 1
            value = kept[1]
        else:
            value = build()
            self._kept[what] = (state, value)
        return value.copy() if isinstance(value, np.ndarray) else value  # an array the engine may change

    def forget(self) -> None:
        self._kept.clear()
