"""Long walks cost in proportion to their length: the COM's shooting is solved block by block in
time (each footstep couples only its neighbours) and gives the least-squares solution of the whole
walk; a walk ten times longer needs about ten times the memory, not a hundred."""

import tracemalloc

import numpy as np
import pytest

from procanim_addon.ground import FlatGround
from procanim_addon.rigs import human_skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk, shooting
from procanim_addon.walk.com import Bases, cumtrapz0


def _random_shooting(rng, n_bases=40, N=900):
    """Bases over overlapping windows (some of one sample, one at the grid's start, one running to
    its end, one after every row) and rows at random indices, positions and velocities."""
    start = np.sort(rng.integers(0, N - 60, n_bases))
    start[0] = 0
    length = rng.integers(1, 60, n_bases)
    length[-1] = N - start[-1]
    values = np.zeros((n_bases, 60 if length.max() <= 60 else int(length.max())))
    for j in range(n_bases):
        values[j, :length[j]] = rng.normal(size=length[j])
    bases = Bases(start, length, values, N)
    idx = rng.integers(0, int(start[-1]), 30)
    idx[:3] = [0, idx[5], int(start[-1]) - 1]  # a row at the start, two rows at one index
    is_pos = rng.random(30) < 0.7
    weight = rng.uniform(10.0, 1000.0, 30)
    reg = rng.uniform(0.5, 30.0, n_bases)
    return bases, idx, is_pos, weight, reg


@pytest.mark.parametrize("block_rows", [1, 3, 16, 1000])
def test_the_blockwise_shooting_is_the_least_squares_solution_of_the_whole_system(block_rows):
    rng = np.random.default_rng(block_rows)
    bases, idx, is_pos, weight, reg = _random_shooting(rng)
    dt = 1 / 120
    N, m = bases.N, len(bases)
    dense = np.zeros((N, m))
    for j in range(m):
        dense[bases.start[j]:bases.start[j] + bases.length[j], j] = bases.values[j, :bases.length[j]]
    vel = cumtrapz0(dense, dt)
    pos = cumtrapz0(vel, dt)
    A = np.vstack([weight[:, None] * np.where(is_pos[:, None], pos[idx], vel[idx]), np.diag(reg)])
    system = shooting.ShootingSystem(lambda j, i: bases.integrals(j, i, dt), bases.windows(), idx, is_pos, weight,
                                     reg, dt, block_rows=block_rows)
    for _ in range(3):  # one factorisation, several right-hand sides
        y, nominal = rng.normal(size=len(idx)), rng.normal(size=m)
        want = np.linalg.lstsq(A, np.concatenate([weight * y, reg * nominal]), rcond=None)[0]
        got = system.solve(y, nominal)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * max(1.0, np.abs(want).max()))
        assert got[-1] == nominal[-1]  # its window starts after the last row: nothing moves it


def _walk_memory(length_m: float, systems: list) -> tuple[int, int]:
    sk, rm = human_skeleton()
    tracemalloc.start()
    try:
        clip = generate_path_walk(sk, rm, np.array([[0, 0, 0], [0, -length_m, 0.0]]), FlatGround(), PathWalkParams())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return clip.frame_count, peak


def test_a_20000_frame_walk_needs_memory_in_proportion_to_its_frames(monkeypatch):
    systems: list = []
    build = shooting.ShootingSystem.__init__

    def keep(self, *args, **kwargs):
        build(self, *args, **kwargs)
        systems.append(self)

    monkeypatch.setattr(shooting.ShootingSystem, "__init__", keep)
    short_frames, short_peak = _walk_memory(100.0, systems)
    short_rows = [len(s.weight) for s in systems]
    short_bytes = [s.nbytes for s in systems]
    systems.clear()
    frames, peak = _walk_memory(1000.0, systems)
    assert frames > 20_000 and frames / short_frames > 9
    ratio = frames / short_frames
    # each system the walk builds: its size grows with its rows (a dense one with their square)
    for rows, nbytes, s in zip(short_rows, short_bytes, systems):
        assert len(s.weight) / rows > 9
        assert s.nbytes / nbytes < 1.3 * len(s.weight) / rows
    # the whole walk's peak of allocated memory grows with its frames
    assert peak / short_peak < 1.3 * ratio, (peak, short_peak, ratio)
