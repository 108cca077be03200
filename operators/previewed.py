"""Where the live preview leaves the Clips it shows, and Generate finds them (the preview writes,
Generate reads): when nothing has changed since, Generate bakes what the preview showed instead
of computing it again.

Generate recomputes the key of its inputs afresh (:func:`.inputs.inputs_key`, ``fresh=True``) and
takes the preview's Clips only when the keys are equal — the engines are pure functions of their
inputs, so the Clips are the ones it would compute.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ..procanim_addon.clip import Clip
from . import inputs
from .generator import Generator


@dataclass(frozen=True)
class Offer:
    """The Clips a preview computed from the inputs ``key``, and how long that took (ms)."""

    key: tuple
    clips: list[Clip]
    compute_ms: float


_OFFERS: dict[str, Offer] = {}  # generator id → the preview's latest Clips


def offer(generator_id: str, key: tuple, clips: list[Clip], compute_ms: float) -> None:
    """The preview of ``generator_id`` shows ``clips``, made from the inputs ``key``."""
    _OFFERS[generator_id] = Offer(key, clips, compute_ms)


def withdraw(generator_id: str) -> None:
    """The preview of ``generator_id`` stopped: nothing to take."""
    _OFFERS.pop(generator_id, None)


def take(generator: Generator, args, context) -> list[Clip] | None:
    """Copies of the preview's Clips when they were made from exactly the inputs ``args`` (an
    operator) names now; None otherwise."""
    offered = _OFFERS.get(generator.id)
    if offered is None:
        return None
    try:
        key = inputs.inputs_key(generator, args, context, fresh=True)
    except Exception:  # an argument that does not resolve: the operator reports it itself
        return None
    if key != offered.key:
        return None
    clips = copy.deepcopy(offered.clips)
    for clip in clips:
        clip.metrics["preview_compute_ms"] = offered.compute_ms  # generate_ms: this bake's own time
    return clips
