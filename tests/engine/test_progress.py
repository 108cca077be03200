"""Progress and cancellation (the sidebar's Esc) reach a generator running in a worker thread."""

import threading

import pytest

from procanim_addon.progress import Cancelled, Progress


def test_progress_is_clamped_and_readable_from_another_thread():
    p = Progress()
    t = threading.Thread(target=lambda: p(1.7))
    t.start()
    t.join()
    assert p.fraction == 1.0
    p(-3)
    assert p.fraction == 0.0


def test_cancel_stops_the_generator_at_its_next_report():
    p = Progress()
    steps = []

    def generator():
        for i in range(1000):
            p(i / 1000)
            steps.append(i)
            if i == 10:
                p.cancel()

    with pytest.raises(Cancelled):
        generator()
    assert steps[-1] == 10 and p.cancelled
