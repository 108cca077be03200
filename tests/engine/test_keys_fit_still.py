"""A phase's still part stays still under reduced keys: a key next to a segment where the target is
constant gets flat handles (zero slope), so the still part does not drift toward the next phase."""

from __future__ import annotations

import numpy as np

from procanim_addon.keys.fit import align, fit_keys


def test_a_key_between_a_still_part_and_a_move_gets_flat_handles_and_the_still_part_stays_still():
    x = np.arange(81, dtype=float)
    still = np.full(41, 0.3)
    move = 0.3 + 0.02 * ((x[41:] - 40.0) / 40.0) ** 2 + 0.01 * (x[41:] - 40.0) / 40.0  # leaves with a slope
    target = np.concatenate([still, move])[:, None]
    keys = np.array([0, 40, 80])
    _, left, right = fit_keys(x, target, keys)
    maps = np.broadcast_to(np.eye(3)[:, :1], (len(x), 3, 1))
    values, left, right = align(x, target, keys, left, right, maps, np.full(len(x), 0.01))
    assert left[1, 0] == right[1, 0] == 0.0  # one slope, flat
    assert np.abs(values[:41, 0] - 0.3).max() < 1e-12  # still up to the key
    assert np.abs(values[:, 0] - target[:, 0]).max() <= 0.01
