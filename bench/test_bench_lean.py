"""The lean mode against the default (table) mode (issue 14, parts 4 and 5):
time, and peak memory against each mode's own estimate.

``test_lean_against_table``: ``solve_lean`` and ``solve`` of the same board,
interleaved (medians of ``rounds``); records both and their ratio.  Target
(issue 48): the lean mode at most :data:`LEAN_OVER_TABLE` times the table's
time at 4x6 and 4x7.
``test_memory_estimate``: the peak resident memory a solve adds, measured in
a fresh interpreter (``bench/conftest.py``), against the estimate the memory
guard refuses work by (``lean_bytes``; ``table_bytes`` for the default
mode, given the boards and moves).  Target: within 20% of the measured peak.
"""

from __future__ import annotations

import statistics
import sys
import time

import pytest

import babytris
from babytris.engine.resources import DEFAULT_MAX_MEMORY, table_bytes
from babytris.modes.lean import lean_plan
from babytris.solvers.solve import solver_bytes_per_board

TARGET = 0.2
LEAN_OVER_TABLE = 2.0

# (width, height, rounds)
SIZES = [
    pytest.param((4, 5, 5), id="4x5"),
    pytest.param((4, 6, 3), id="4x6", marks=pytest.mark.slow),
    pytest.param((4, 7, 3), id="4x7", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("size", SIZES)
def test_lean_against_table(benchmark, size):
    width, height, rounds = size
    lean, table = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        babytris.solve_lean(width=width, height=height)
        lean.append(time.perf_counter() - started)
        started = time.perf_counter()
        babytris.solve(width=width, height=height)
        table.append(time.perf_counter() - started)
    benchmark.group = "lean mode against the table mode"
    benchmark.extra_info.update(
        size=f"{width}x{height}",
        lean_seconds=statistics.median(lean),
        table_seconds=statistics.median(table),
        lean_over_table=statistics.median(lean) / statistics.median(table),
    )
    benchmark.pedantic(babytris.solve_lean, kwargs=dict(width=width, height=height), rounds=1)
    if height >= 6:
        ratio = statistics.median(lean) / statistics.median(table)
        assert ratio <= LEAN_OVER_TABLE, f"{width}x{height}: lean {ratio:.2f}x the table's time"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory from /proc")
@pytest.mark.parametrize("mode", ["solve_lean", "solve"])
@pytest.mark.parametrize(
    "size", [pytest.param((4, 6), id="4x6"), pytest.param((4, 7), id="4x7", marks=pytest.mark.slow)]
)
def test_memory_estimate(benchmark, peak_rss, mode, size):
    width, height = size
    rules = babytris.Rules(width=width, height=height)
    table = babytris.enumerate_boards(rules)
    if mode == "solve_lean":
        plan = lean_plan(rules, table.n_boards, DEFAULT_MAX_MEMORY)  # what the solve keeps, by default
        assert plan is not None
        estimate = plan.bytes
    else:  # the default solve: modified policy iteration, accelerated
        per_board = solver_bytes_per_board(rules, "mpi", True, table.n_boards)
        estimate = table_bytes(rules, table.n_boards, table.n_moves, per_board)
    measured = peak_rss.mib(mode, width, height) * 2**20
    off = estimate / measured - 1
    benchmark.group = "memory estimate against the measured peak"
    benchmark.extra_info.update(size=f"{width}x{height}", mode=mode, estimate=estimate, measured=measured, off=off)
    benchmark.pedantic(lambda: None, rounds=1)
    assert abs(off) <= TARGET, (
        f"{mode} {width}x{height}: estimate {estimate:.3g} B, measured {measured:.3g} B ({off:+.0%})"
    )
