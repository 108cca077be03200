"""Progress reporting and cancellation for long generators (no Blender here).

A generator that takes a while calls ``progress(fraction)`` now and then; the Blender side passes a
:class:`Progress` whose :meth:`cancel` (Esc in the sidebar) makes the next call raise
:class:`Cancelled`. Scripts pass nothing and lose nothing.
"""

from __future__ import annotations

import threading


class Cancelled(Exception):
    """The user cancelled the bake."""


class Progress:
    """Thread-safe progress (0–1) with a cancel flag."""

    def __init__(self):
        self.fraction = 0.0
        self._cancel = threading.Event()

    def __call__(self, fraction: float) -> None:
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        if self._cancel.is_set():
            raise Cancelled()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()


def no_progress(_fraction: float) -> None:
    """The default callback: report nothing, never cancel."""
