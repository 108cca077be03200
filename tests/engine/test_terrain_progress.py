"""The generator contract for terrain adaptation and the source motions: progress reported inside
the loops (≥ 20 times, never decreasing, ending at 1.0) and a cancel seen at the very next report,
in every stage of the bake."""

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import motions
from procanim_addon.progress import Cancelled
from procanim_addon.rigs import human_skeleton
from procanim_addon.terrain.adapt import AdaptParams, adapt_to_terrain
from procanim_addon.terrain.shapes import body_heights, zigzag
from procanim_addon.terrain.ticker import Ticker

sys.path.insert(0, str(Path(__file__).resolve().parent))
from progress_probe import ProgressProbe  # noqa: E402

SOLE_Z = 0.03


@pytest.fixture(scope="module")
def human():
    return human_skeleton()


@pytest.fixture(scope="module")
def walk_case(human):
    """A walk of 7 steps over knee-high blocks of 0.7 m (other sizes than the Table-2 scenes)."""
    sk, rm = human
    clip = motions.walk(sk, rm, motions.WalkParams(steps=7))
    terrain = zigzag(body_heights(sk, rm)["knee"], start_xy=(0.0, -0.45), direction_xy=(0.0, -1.0),
                     cell_length=0.7, ground_z=SOLE_Z)
    return sk, rm, clip, terrain


def adapt(case, progress, **kw):
    sk, rm, clip, terrain = case
    return adapt_to_terrain(sk, rm, clip, None, terrain, AdaptParams(refuse_infeasible=False, **kw),
                            progress=progress)


@pytest.fixture(scope="module")
def full_run(walk_case):
    rec = ProgressProbe()
    out = adapt(walk_case, rec)
    return rec, out


def test_adaptation_reports_often_and_steadily(full_run):
    rec, _ = full_run
    seen = np.array(rec.seen)
    assert len(seen) >= 20
    assert np.all(np.diff(seen) >= 0), "progress went backwards"
    assert seen[0] == 0.0 and seen[-1] == 1.0
    # the bar moves through the whole range, not in one jump at the end
    assert len(np.unique(np.round(seen, 2))) >= 20
    assert np.max(np.diff(seen)) < 0.1


def test_progress_does_not_change_the_result(walk_case, full_run):
    _, with_progress = full_run
    plain = adapt(walk_case, lambda _f: None)
    np.testing.assert_array_equal(plain.rotations, with_progress.rotations)
    np.testing.assert_array_equal(plain.locations, with_progress.locations)


@pytest.mark.parametrize("where", [0.0, 0.08, 0.3, 0.6, 0.97])
def test_cancel_is_seen_at_the_next_report_in_every_stage(walk_case, full_run, where):
    """Cancels asked at the start, in the descriptors, the solve, the final fix and its end."""
    rec_full, _ = full_run
    k = max(1, int(where * len(rec_full.seen)))
    rec = ProgressProbe(cancel_at=k)
    with pytest.raises(Cancelled):
        adapt(walk_case, rec)
    assert rec.calls == k + 1


def test_progress_reaches_the_rig_in_other_units(walk_case):
    """The centimetre path (unit_m ≠ 1) hands progress down too."""
    sk, rm, clip, terrain = walk_case
    from procanim_addon.terrain.adapt import _in_metres  # the same scene scaled to centimetres

    sk_cm, clip_cm, _, terrain_cm = _in_metres(sk, clip, None, terrain, 100.0)
    rec = ProgressProbe()
    adapt_to_terrain(sk_cm, rm, clip_cm, None, terrain_cm, AdaptParams(unit_m=0.01, refuse_infeasible=False),
                     progress=rec)
    assert len(rec.seen) >= 20 and rec.seen[-1] == 1.0


@pytest.mark.parametrize("kind", ["WALK", "JUMP", "TUMBLE"])
def test_source_motions_report_and_cancel(human, kind):
    sk, rm = human
    params = motions.SourceMotionParams(kind=kind, steps=4)
    rec = ProgressProbe()
    clip = motions.generate(sk, rm, params, progress=rec)
    seen = np.array(rec.seen)
    assert len(seen) >= 20 and np.all(np.diff(seen) >= 0) and seen[-1] == 1.0
    np.testing.assert_array_equal(motions.generate(sk, rm, params).rotations, clip.rotations)
    for k in (1, len(seen) // 2, len(seen) - 1):
        rec = ProgressProbe(cancel_at=k)
        with pytest.raises(Cancelled):
            motions.generate(sk, rm, params, progress=rec)
        assert rec.calls == k + 1


def test_ticker_never_decreases_never_passes_its_end_and_finishes_there():
    rec = ProgressProbe()
    t = Ticker(rec, 0.2, 0.5)
    for _ in range(500):
        t.tick()
    assert np.all(np.diff(rec.seen) >= 0) and 0.2 < rec.seen[0] and max(rec.seen) < 0.5
    t.done()
    assert rec.seen[-1] == 0.5
