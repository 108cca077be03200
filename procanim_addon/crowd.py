"""A crowd: many characters, each with its own engine call, computed in one bake.

Today each walker follows its own curve with the path walk (``procanim.crowd_walk``); the calls
run one after the other, each reporting its share of the progress.
"""

from __future__ import annotations

from .clip import Clip
from .jobs import EngineCall
from .progress import ProgressFn, no_progress, part
from .spec import GeneratorSpec
from .walk.params import PathWalkParams


def crowd(calls: list[EngineCall], progress: ProgressFn = no_progress) -> list[Clip]:
    """Every character's call in turn: their Clips, in the order of ``calls``."""
    n = len(calls)
    clips: list[Clip] = []
    for i, call in enumerate(calls):
        clips += call(part(progress, i / n, (i + 1) / n))
    return clips


SPEC = GeneratorSpec(
    "crowd_walk", "Walk Crowd",
    "Each selected armature walks the selected curve nearest to it, in one bake (a crowd)",
    params=PathWalkParams, engine=crowd, call=crowd,
)
