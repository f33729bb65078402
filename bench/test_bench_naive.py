"""babytris against a naive C solver of the same game (issue 14, part 1).

``bench/naive_vi.c`` is Baby Tetris as a plain C program would solve it on one
core: breadth-first search, a move table, synchronous value iteration to the
same tolerance.  It is compiled with ``cc -O2`` (the ``naive`` fixture of
``conftest.py``; skipped without a C compiler) and times itself from the search to the last sweep.  The test
interleaves it with ``babytris.solve(width=4, height=5, discount=0.9)`` by
default (medians of 11), records both and their ratio, and fails above 0.2.
"""

from __future__ import annotations

import statistics
import subprocess
import time

import pytest

import babytris

TARGET = 0.2
ROUNDS = 11


@pytest.mark.parametrize("size", [pytest.param((4, 5), id="4x5")])
def test_default_solve_against_naive_c(benchmark, naive, size):
    width, height = size
    ours, theirs = [], []
    for _ in range(ROUNDS):
        done = subprocess.run([str(naive), str(width), str(height), "0.9", "1e-8"], capture_output=True, text=True)
        boards, sweeps, start, seconds = done.stdout.split()
        theirs.append(float(seconds))
        started = time.perf_counter()
        solution = babytris.solve(width=width, height=height, discount=0.9)
        ours.append(time.perf_counter() - started)
    assert int(boards) == solution.n_boards
    assert float(start) == pytest.approx(solution.start_value, abs=2e-7)  # both within their bounds of the truth
    ratio = statistics.median(ours) / statistics.median(theirs)
    benchmark.group = "babytris against naive C"
    benchmark.extra_info.update(
        size=f"{width}x{height}",
        babytris_seconds=statistics.median(ours),
        naive_seconds=statistics.median(theirs),
        naive_sweeps=int(sweeps),
        babytris_over_naive=ratio,
    )
    benchmark.pedantic(babytris.solve, kwargs=dict(width=width, height=height, discount=0.9), rounds=1)
    assert ratio <= TARGET, f"babytris took {ratio:.2f}x the naive C time (target <= {TARGET})"
