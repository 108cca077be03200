"""Progress reporting and cancellation: the contract every generator follows (no Blender here).

Every engine entry point takes ``progress`` (a :data:`ProgressFn`, default :func:`no_progress`)
and calls it with the fraction done (0–1) inside its per-frame or per-iteration loops — at least
20 times per bake, and often enough in time that a cancel is seen within a fraction of a second.
The Blender side passes a :class:`Progress`: its :meth:`~Progress.cancel` (Esc in the sidebar, a
newer setting in the live preview) makes the next call raise :class:`Cancelled`, so nothing of a
cancelled bake is written. A generator made of parts hands each part ``part(progress, lo, hi)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

ProgressFn = Callable[[float], None]


class Cancelled(Exception):
    """The user cancelled the bake."""


class Progress:
    """Thread-safe progress (0–1) with a cancel flag; ``calls`` counts the reports."""

    def __init__(self):
        self.fraction = 0.0
        self.calls = 0
        self._cancel = threading.Event()

    def __call__(self, fraction: float) -> None:
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        self.calls += 1
        if self._cancel.is_set():
            raise Cancelled()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()


def no_progress(_fraction: float) -> None:
    """The default callback: report nothing, never cancel."""


def part(progress: ProgressFn, lo: float, hi: float) -> ProgressFn:
    """The callback for a part of the work that spans ``lo``–``hi`` of the whole: the part reports
    its own 0–1 and the whole sees ``lo + fraction · (hi − lo)``."""
    if progress is no_progress:
        return no_progress
    width = hi - lo
    return lambda fraction: progress(lo + min(max(fraction, 0.0), 1.0) * width)


def loop(progress: ProgressFn, n: int, lo: float = 0.0, hi: float = 1.0) -> Callable[[int], None]:
    """``tick(i)`` for a loop of ``n`` iterations spanning ``lo``–``hi``: call it at the top of
    iteration ``i`` (it reports ``i / n`` of the span and raises :class:`Cancelled` when asked)."""
    if progress is no_progress:
        return lambda _i: None
    width = (hi - lo) / max(n, 1)
    return lambda i: progress(lo + i * width)
