"""Benchmarks of the seed models (:mod:`babytris.solvers.models`): the exact solve of
Block Drop and No-Holes Tetris at growing sizes, beside the times Bodoia and
Puranik report for a generic POMDP solver (Block Drop 4x4 under 1 s, 5x4 16 s,
6x4 over a minute, nothing above 7x5; No-Holes Tetris 4x4 about 20 s, 5x4 and
6x4 not solved well).

Sizes are the paper's ``m x n``: m rows (``height``), n columns (``width``).
Each round is ``model.solve(discount=0.9, tol=1e-8)``: enumeration and the
solve (the paper gives no discount).  ``extra_info`` holds the size, the
boards and states (boards x pieces; the lost board included), the moves, the
greedy sweeps and the paper's state count.  ``bench/models_table.py`` prints
the same as a table of medians, with peak memory, up to the sizes that take a
minute.
"""

from __future__ import annotations

import os

import pytest

import babytris

slow = pytest.mark.slow

#: (model, m rows, n columns, pieces, timed rounds)
SIZES = [
    pytest.param("block_drop", 4, 4, None, 10, id="block-drop-4x4"),
    pytest.param("block_drop", 5, 4, None, 10, id="block-drop-5x4"),
    pytest.param("block_drop", 6, 4, None, 10, id="block-drop-6x4"),
    pytest.param("block_drop", 7, 5, None, 5, id="block-drop-7x5"),
    pytest.param("block_drop", 10, 6, None, 3, id="block-drop-10x6"),
    pytest.param("block_drop", 9, 7, None, 3, id="block-drop-9x7", marks=slow),
    pytest.param("block_drop", 8, 8, None, 3, id="block-drop-8x8", marks=slow),
    pytest.param("no_holes_tetris", 4, 4, "tetrominoes", 10, id="no-holes-4x4"),
    pytest.param("no_holes_tetris", 5, 4, "tetrominoes", 10, id="no-holes-5x4"),
    pytest.param("no_holes_tetris", 6, 4, "tetrominoes", 10, id="no-holes-6x4"),
    pytest.param("no_holes_tetris", 6, 6, "tetrominoes", 5, id="no-holes-6x6"),
    pytest.param("no_holes_tetris", 7, 7, "tetrominoes", 3, id="no-holes-7x7", marks=slow),
    pytest.param("no_holes_tetris", 8, 7, "tetrominoes", 3, id="no-holes-8x7", marks=slow),
    pytest.param("no_holes_tetris", 6, 4, ["T"], 10, id="no-holes-T-6x4"),
    pytest.param("no_holes_tetris", 6, 4, ["I4", "O"], 10, id="no-holes-I4-O-6x4"),
]


def model_of(name: str, m: int, n: int, pieces) -> babytris.Model:
    if name == "block_drop":
        return babytris.block_drop(width=n, height=m)
    return babytris.no_holes_tetris(width=n, height=m, pieces=pieces)


@pytest.mark.parametrize("name, m, n, pieces, rounds", SIZES)
def test_solve_model(benchmark, name, m, n, pieces, rounds):
    model = model_of(name, m, n, pieces)
    benchmark.group = f"seed models: {model.name}"
    s = benchmark.pedantic(
        model.solve, kwargs=dict(discount=0.9, tol=1e-8), rounds=rounds, iterations=1, warmup_rounds=1
    )
    assert s.converged
    benchmark.extra_info.update(
        model=model.name,
        size=model.size,
        width=n,
        height=m,
        pieces=list(model.rules.piece_names),
        n_boards=s.n_boards,
        n_states=s.n_states,
        n_moves=s.transitions.n_moves,
        iterations=s.iterations,
        paper_states=model.paper_states,
        start_value=s.start_value,
        cores=os.cpu_count(),
        load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    )
