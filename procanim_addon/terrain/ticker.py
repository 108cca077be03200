"""Progress for stages whose step count is not known beforehand (iterations until a tolerance,
refinement levels, repeated collision passes), on top of :mod:`..progress`.

A :class:`Ticker` spans ``lo``–``hi`` of the whole bake. Each :meth:`~Ticker.tick` moves the reported
fraction ``rate`` of the way still left to ``hi``: the fractions never decrease and never reach
``hi`` before :meth:`~Ticker.done`, however many steps the stage takes. Every tick is a call of the
progress callback, so a cancel request raises :class:`..progress.Cancelled` from the next tick.
"""

from __future__ import annotations

from ..progress import ProgressFn, no_progress


class Ticker:
    """``tick()`` inside a loop of unknown length spanning ``lo``–``hi``; ``done()`` at its end."""

    def __init__(self, progress: ProgressFn = no_progress, lo: float = 0.0, hi: float = 1.0,
                 rate: float = 0.05):
        self.progress = progress
        self.hi = float(hi)
        self.fraction = float(lo)
        self.rate = float(rate)
        self.live = progress is not no_progress

    def tick(self) -> None:
        """One step done: report a little more (and raise ``Cancelled`` when a cancel was asked)."""
        if self.live:
            self.fraction += (self.hi - self.fraction) * self.rate
            self.progress(self.fraction)

    __call__ = tick

    def tick_at(self, _i: int) -> None:
        """:meth:`tick` for callers that pass their step number."""
        self.tick()

    def done(self) -> None:
        """The stage is over: report ``hi``."""
        if self.live:
            self.fraction = self.hi
            self.progress(self.hi)


def silent() -> Ticker:
    """A ticker that reports nothing (the default of the engine's inner helpers)."""
    return Ticker()
