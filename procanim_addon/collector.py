"""Python's cyclic garbage collector paused around the engine's long numpy sections.

The key planner and the control-rig conversion make many short-lived containers (dicts of matrices,
tuples of arrays), which start the cyclic collector again and again; in a Blender session each full
collection walks Blender's own ~90,000 tracked objects. Reference counting still frees every
array as soon as it is dropped; only cycles wait until the section ends. Measured in
bench/control_rig_bake.py's process after two dense bakes: the plan of a 1,000-frame walk took
0.61–0.69 s with the collector on and 0.53–0.59 s paused (docs/keys.md, Speed).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector off for the ``with`` block (or the decorated function), on again after it
    if it was on before (nested or concurrent sections leave it as the outermost found it)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
