"""An engine call bound to its inputs: what a bake computes once the scene has been read.

A generator's ``prepare`` (``operators/<id>.py``, main thread) reads the scene into engine inputs
and returns a ``Job`` whose ``compute`` is an :class:`EngineCall`: the generator's
``GeneratorSpec.call`` and those inputs — plain data (numpy arrays, dataclasses), no Blender
object, so the call runs in any thread (the sidebar's and the live preview's workers).
Each call returns its Clips in the armature's own terms: the bridge reads a rig into the engine's
upright frame (:mod:`.upright`) and the spec's call hands the channels back
(:func:`~.upright.clip_to_armature`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .clip import Clip
from .progress import ProgressFn, no_progress


@dataclass(frozen=True)
class EngineCall:
    """``function(*args, progress=progress)`` → one Clip per armature (``function``: a spec's ``call``)."""

    function: Callable[..., list[Clip]]
    args: tuple = ()

    def __call__(self, progress: ProgressFn = no_progress) -> list[Clip]:
        return self.function(*self.args, progress=progress)
