"""A :class:`~procanim_addon.progress.Progress` that records what a generator reports and can press
Esc at a given report — what the generator-contract tests of each generator use."""

from __future__ import annotations

from procanim_addon.progress import Progress


class ProgressProbe(Progress):
    """Records every fraction reported; ``cancel_at=k`` requests a cancel during the k-th report
    (1-based), so the contract says the (k+1)-th report raises ``Cancelled``."""

    def __init__(self, cancel_at: int | None = None):
        super().__init__()
        self.seen: list[float] = []
        self.cancel_at = cancel_at

    def __call__(self, fraction: float) -> None:
        self.seen.append(float(fraction))
        super().__call__(fraction)
        if self.cancel_at is not None and self.calls == self.cancel_at:
            self.cancel()

    def assert_reported_a_whole_bake(self, at_least: int = 20) -> None:
        assert len(self.seen) >= at_least, f"only {len(self.seen)} progress reports"
        assert all(b >= a for a, b in zip(self.seen, self.seen[1:])), "progress went backwards"
        assert 0.0 <= self.seen[0] and self.seen[-1] == 1.0
