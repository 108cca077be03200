"""The path walk reports its progress throughout a bake and stops at the next report after a cancel
(the sidebar's Esc): the generator contract of procanim_addon/progress.py."""

import numpy as np
import pytest

from procanim_addon.ground import FlatGround, StairsGround
from procanim_addon.progress import Cancelled, Progress
from procanim_addon.rigs import human_skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk

# sizes of their own: a 5 m curve with one bend, a short flight of 3 steps
BEND = np.stack([0.8 * np.sin(np.linspace(0, np.pi, 60)), np.linspace(0, -5.0, 60), np.zeros(60)], -1)
FLIGHT = StairsGround(start=1.1, tread=0.32, riser=0.15, steps_up=3, landing=0.8, steps_down=0)


@pytest.fixture(scope="module")
def human():
    return human_skeleton(1.62)


class Recording(Progress):
    """A Progress that keeps every fraction it was given and cancels itself at call ``cancel_at``."""

    def __init__(self, cancel_at=None):
        super().__init__()
        self.seen, self.cancel_at = [], cancel_at

    def __call__(self, fraction):
        self.seen.append(float(fraction))
        if self.cancel_at is not None and len(self.seen) == self.cancel_at:
            self.cancel()
            self.fraction = min(max(float(fraction), 0.0), 1.0)
            self.calls += 1
            return
        super().__call__(fraction)


@pytest.mark.parametrize("scene", ["bend", "flight"])
def test_a_bake_reports_often_in_order_up_to_one(human, scene):
    sk, rm = human
    points, ground = (BEND, FlatGround()) if scene == "bend" else (np.array([[0, 0, 0], [0, -4.5, 0]]), FLIGHT)
    rec = Recording()
    clip = generate_path_walk(sk, rm, points, ground, PathWalkParams(), progress=rec)
    seen = np.array(rec.seen)
    assert len(seen) >= 20
    assert np.all(np.diff(seen) >= 0.0), "fractions go backwards"
    assert seen[0] == 0.0 and seen[-1] == 1.0
    assert np.max(np.diff(seen)) <= 0.25, "a large part of the bake runs without reporting"
    assert clip.frame_count > 0


def test_progress_changes_nothing(human):
    sk, rm = human
    quiet = generate_path_walk(sk, rm, BEND, FlatGround(), PathWalkParams())
    loud = generate_path_walk(sk, rm, BEND, FlatGround(), PathWalkParams(), progress=Recording())
    # the same walk: two calls in one process may differ in the last bits (numpy's sums depend on
    # how arrays fall in memory: 1.6e-13 seen in CI), so "nothing" is the goldens' 1e-9
    np.testing.assert_allclose(quiet.rotations, loud.rotations, rtol=0.0, atol=1e-9)
    np.testing.assert_allclose(quiet.locations, loud.locations, rtol=0.0, atol=1e-9)


def test_a_cancel_stops_the_bake_at_the_next_report(human):
    sk, rm = human
    total = Recording()
    generate_path_walk(sk, rm, BEND, FlatGround(), PathWalkParams(), progress=total)
    n = len(total.seen)
    for k in (1, 2, n // 3, n // 2, n - 1):
        rec = Recording(cancel_at=k)
        with pytest.raises(Cancelled):
            generate_path_walk(sk, rm, BEND, FlatGround(), PathWalkParams(), progress=rec)
        assert len(rec.seen) == k + 1, f"cancelled at call {k}, stopped at call {len(rec.seen)}"
