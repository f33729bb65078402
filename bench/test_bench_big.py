"""Benchmarks of the big-board engine on 10x20 with the seven tetrominoes.

``test_greedy_playout``: ``babytris.big.playouts.play_greedy`` throughput, in
placements per second (``extra_info["placements_per_second"]``, from the
median round), on one thread and on every core, for a one-step greedy player
with Dellacherie's six features (landing height, eroded cells, row and
column transitions, holes, wells): its games last hundreds of thousands of
placements, so the rate is per placement, not per game.  The target is 1
million placements a second on this (2-core) machine.
``test_random_playout``: random placements, games of a few dozen placements
(per-game cost included).  ``test_afterstates_batch``, ``test_greedy_batch``:
every afterstate, and the greedy choice with its value (a fitted value
iteration backup), of 100,000 boards met in play.  ``test_afterstates_one``:
one board's afterstates from Python.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from babytris.big.playouts import greedy_placements, play_greedy, sample_boards
from babytris.big.tetris import Tetris

# Dellacherie's weights on the variants the engine updates incrementally (its fast path); his exact
# `column_transitions` and `wells` need a scan of each afterstate (test_dellacherie_playout).
NAMES = ["landing_height", "eroded_cells", "row_transitions", "column_transitions_open_top", "holes", "well_runs"]
DELLACHERIE = ["landing_height", "eroded_cells", "row_transitions", "column_transitions", "holes", "wells"]
WEIGHTS = [0.0, -1.0, 1.0, -1.0, -1.0, -4.0, -1.0]
N_BOARDS = 100_000


@pytest.fixture(scope="module")
def tetris():
    return Tetris(width=10, height=20)


@pytest.fixture(scope="module")
def boards(tetris):
    """Boards met by the greedy player exploring 10% of the time (not timed)."""
    return sample_boards(tetris, N_BOARDS, weights=WEIGHTS, features=NAMES, epsilon=0.1, max_placements=10_000, seed=1)


def _info(benchmark, **extra):
    benchmark.extra_info.update(
        size="10x20",
        pieces="tetrominoes",
        cores=os.cpu_count(),
        load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        **extra,
    )


@pytest.mark.parametrize("n_jobs", [1, None], ids=["1-thread", "all-threads"])
def test_greedy_playout(benchmark, tetris, n_jobs):
    """``play_greedy(tetris, WEIGHTS, NAMES, n_games=4, max_placements=250_000, ...)``: up to 1 million placements."""
    benchmark.group = "big-board playouts 10x20 (greedy, Dellacherie's weights on the incremental features)"
    result = benchmark.pedantic(
        play_greedy,
        args=(tetris, WEIGHTS, NAMES),
        kwargs=dict(n_games=4, max_placements=250_000, seed=1, n_jobs=n_jobs),
        rounds=5,
        iterations=1,
        warmup_rounds=1,
    )
    threads = n_jobs or os.cpu_count()
    _info(
        benchmark,
        player="greedy",
        features=NAMES,
        weights=WEIGHTS,
        n_games=4,
        placements=result.total_placements,
        lines=int(result.lines.sum()),
        threads=threads,
    )
    if benchmark.stats is not None:  # None under --benchmark-disable
        benchmark.extra_info["placements_per_second"] = result.total_placements / benchmark.stats.stats.median


@pytest.mark.parametrize("n_jobs", [1, None], ids=["1-thread", "all-threads"])
def test_dellacherie_playout(benchmark, tetris, n_jobs):
    """Dellacherie's controller exactly (mdptetris's definitions, each afterstate
    scanned): ``play_greedy(tetris, WEIGHTS, DELLACHERIE, n_games=4, max_placements=100_000, ...)``."""
    benchmark.group = "big-board playouts 10x20 (greedy, Dellacherie's controller exactly)"
    result = benchmark.pedantic(
        play_greedy,
        args=(tetris, WEIGHTS, DELLACHERIE),
        kwargs=dict(n_games=4, max_placements=100_000, seed=1, n_jobs=n_jobs),
        rounds=3,
        iterations=1,
        warmup_rounds=1,
    )
    _info(
        benchmark,
        player="greedy",
        features=DELLACHERIE,
        weights=WEIGHTS,
        n_games=4,
        placements=result.total_placements,
        lines=int(result.lines.sum()),
        threads=n_jobs or os.cpu_count(),
    )
    if benchmark.stats is not None:  # None under --benchmark-disable
        benchmark.extra_info["placements_per_second"] = result.total_placements / benchmark.stats.stats.median


@pytest.mark.parametrize("n_jobs", [1, None], ids=["1-thread", "all-threads"])
def test_random_playout(benchmark, tetris, n_jobs):
    """``play_greedy(tetris, None, n_games=50_000, ...)``: uniformly random placements."""
    benchmark.group = "big-board playouts 10x20 (random)"
    result = benchmark.pedantic(
        play_greedy,
        args=(tetris, None),
        kwargs=dict(n_games=50_000, seed=1, n_jobs=n_jobs),
        rounds=5,
        iterations=1,
        warmup_rounds=1,
    )
    _info(
        benchmark, player="random", n_games=50_000, placements=result.total_placements, threads=n_jobs or os.cpu_count()
    )
    if benchmark.stats is not None:
        benchmark.extra_info["placements_per_second"] = result.total_placements / benchmark.stats.stats.median


def test_afterstates_batch(benchmark, tetris, boards):
    """``tetris.afterstates_batch(rows, pieces)`` of 100,000 boards, one thread."""
    benchmark.group = "big-board batches 10x20"
    after = benchmark.pedantic(
        tetris.afterstates_batch, args=(boards.rows, boards.pieces), rounds=5, iterations=1, warmup_rounds=1
    )
    _info(benchmark, boards=N_BOARDS, afterstates=len(after), threads=1)
    if benchmark.stats is not None:
        benchmark.extra_info["afterstates_per_second"] = len(after) / benchmark.stats.stats.median


def test_greedy_batch(benchmark, tetris, boards):
    """``greedy_placements(tetris, rows, pieces, WEIGHTS, NAMES, line_rewards="scores", discount=0.9)``
    of 100,000 boards, one thread."""
    benchmark.group = "big-board batches 10x20"
    benchmark.pedantic(
        greedy_placements,
        args=(tetris, boards.rows, boards.pieces, WEIGHTS, NAMES),
        kwargs=dict(line_rewards="scores", discount=0.9),
        rounds=5,
        iterations=1,
        warmup_rounds=1,
    )
    afterstates = len(tetris.afterstates_batch(boards.rows, boards.pieces))
    _info(benchmark, boards=N_BOARDS, afterstates=afterstates, threads=1)
    if benchmark.stats is not None:
        benchmark.extra_info["boards_per_second"] = N_BOARDS / benchmark.stats.stats.median


def test_afterstates_one(benchmark, tetris, boards):
    """``tetris.afterstates(rows, piece)`` of one board (a T on a board met in play)."""
    benchmark.group = "big-board batches 10x20"
    rows = np.ascontiguousarray(boards.rows[N_BOARDS // 2])
    after = benchmark(tetris.afterstates, rows, "T")
    _info(benchmark, afterstates=len(after), threads=1)
