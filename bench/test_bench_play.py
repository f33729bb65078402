"""Benchmarks of playouts and finite-horizon evaluation on 4x5 (the default rules).

``test_play``: ``babytris.play`` throughput, in placements per second
(``extra_info["placements_per_second"]``, from the median round), on one thread
and on every core, for the optimal player (10,000-placement games that never
end) and the random player (games of a few placements: per-game overhead).
``test_expected_points``: ``babytris.horizon_values`` for 10,000 placements of
the optimal player against random pieces: over the boards it reaches (the
default) or every board, extrapolated (the default) or all 10,000 backups.
The solve itself is done once per module and not timed.
"""

from __future__ import annotations

import os

import pytest

import babytris

WIDTH, HEIGHT = 4, 5
N_ACTIONS = 10_000


@pytest.fixture(scope="module")
def solution():
    return babytris.solve(width=WIDTH, height=HEIGHT, discount=0.9, tol=1e-10)


def _info(benchmark, solution, **extra):
    benchmark.extra_info.update(
        size=f"{WIDTH}x{HEIGHT}",
        n_boards=solution.n_boards,
        n_moves=solution.transitions.n_moves,
        cores=os.cpu_count(),
        load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        **extra,
    )


@pytest.mark.parametrize("player, n_games", [("optimal", 200), ("random", 200_000)], ids=["optimal", "random"])
@pytest.mark.parametrize("n_jobs", [1, None], ids=["1-thread", "all-threads"])
def test_play(benchmark, solution, player, n_games, n_jobs):
    """``play(solution, player, n_placements=10_000, n_games=...)``: 2 million
    placements for the optimal player; about 1.3 million for the random one."""
    benchmark.group = f"play {WIDTH}x{HEIGHT} ({player} player)"
    result = benchmark.pedantic(
        babytris.play,
        args=(solution, player),
        kwargs=dict(n_placements=N_ACTIONS, n_games=n_games, seed=1, n_jobs=n_jobs),
        rounds=10,
        iterations=1,
        warmup_rounds=1,
    )
    placements = int(result.placements.sum())
    _info(
        benchmark,
        solution,
        player=player,
        n_games=n_games,
        placements=placements,
        threads=n_jobs or os.cpu_count(),
        mean_points=result.mean,
    )
    if benchmark.stats is not None:  # None under --benchmark-disable
        benchmark.extra_info["placements_per_second"] = placements / benchmark.stats.stats.median


@pytest.mark.parametrize(
    "all_boards, exact, rounds",
    [
        pytest.param(False, False, 10, id="reachable-extrapolated"),
        pytest.param(False, True, 10, id="reachable-exact"),
        pytest.param(True, False, 5, id="all-boards-extrapolated"),
        pytest.param(True, True, 1, id="all-boards-exact", marks=pytest.mark.slow),
    ],
)
def test_expected_points(benchmark, solution, all_boards, exact, rounds):
    """``horizon_values(solution, n_placements=10_000, ...)``, the optimal player against random pieces."""
    benchmark.group = f"expected points of {N_ACTIONS:,} placements, {WIDTH}x{HEIGHT}"
    result = benchmark.pedantic(
        babytris.horizon_values,
        args=(solution,),
        kwargs=dict(n_placements=N_ACTIONS, exact=exact, all_boards=all_boards),
        rounds=rounds,
        iterations=1,
        warmup_rounds=0 if exact and all_boards else 1,
    )
    _info(
        benchmark,
        solution,
        boards_computed=result.n_computed,
        steps=result.steps,
        stopped=result.stopped,
        start_value=result.start_value,
        threads=1,
    )
