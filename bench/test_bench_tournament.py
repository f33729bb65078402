"""Benchmark of the study's tournament end to end: enumeration, the 14 solves,
and every player against every opponent (exact expected points and playouts).

``babytris.standard_tournament(width=W, height=H)`` with its defaults
(``n_placements=10_000``, ``n_games=100``, every core).
"""

from __future__ import annotations

import os

import pytest

import babytris


@pytest.mark.parametrize(
    "width, height, rounds",
    [pytest.param(4, 4, 3, id="4x4"), pytest.param(4, 5, 2, id="4x5", marks=pytest.mark.slow)],
)
def test_tournament(benchmark, width, height, rounds):
    """``standard_tournament(width=W, height=H)``: 9 players x 7 opponents."""
    benchmark.group = "standard_tournament"
    table = benchmark.pedantic(
        babytris.standard_tournament,
        kwargs=dict(width=width, height=height),
        rounds=rounds,
        iterations=1,
        warmup_rounds=0,
    )
    transitions = babytris.enumerate_boards(babytris.Rules(width=width, height=height))  # not timed
    n_players, n_opponents = table.expected.shape
    benchmark.extra_info.update(
        size=f"{width}x{height}",
        width=width,
        height=height,
        n_boards=transitions.n_boards,
        n_moves=transitions.n_moves,
        players=n_players,
        opponents=n_opponents,
        # Every player but "random" and every opponent but "random" is a solve.
        solves=n_players - 1 + n_opponents - 1,
        n_placements=table.n_placements,
        n_games=table.n_games,
        largest_gap_stderr=table.largest_gap,
        threads=os.cpu_count(),
        load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    )
