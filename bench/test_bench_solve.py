"""Benchmarks of the exact solve: enumeration, value iteration, both, and the reference.

Every benchmark records in ``extra_info``: the size, ``n_boards``, ``n_moves``,
``iterations`` (where a sweep runs), and ``peak_rss_mib``: the peak resident
memory of the same operation run alone in a fresh interpreter, above the bare
``import babytris`` (``peak_rss_of`` names the operation).  RSS and not
tracemalloc, since the core's own malloc'd buffers (hash map, queues) are
invisible to tracemalloc.
"""

from __future__ import annotations

import os
import statistics
import time

import pytest

import babytris
import babytris.reference

DISCOUNT = 0.9
TOL = 1e-8

slow = pytest.mark.slow

# (width, height, timed rounds, warm-up rounds): fewer rounds for the big ones.
SIZES = [
    pytest.param(4, 4, 10, 1, id="4x4"),
    pytest.param(4, 5, 5, 1, id="4x5"),
    pytest.param(5, 4, 5, 1, id="5x4"),
    pytest.param(4, 6, 3, 0, id="4x6", marks=slow),
    pytest.param(5, 5, 3, 0, id="5x5", marks=slow),
]


def _info(benchmark, width, height, transitions, *, iterations=None, method=None, peak_rss_mib=None, peak_rss_of=None):
    benchmark.extra_info.update(
        size=f"{width}x{height}",
        width=width,
        height=height,
        n_boards=transitions.n_boards,
        n_moves=transitions.n_moves,
        threads=os.cpu_count(),
        # The machine is shared: the 1-minute load average when the benchmark ended.
        load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        peak_rss_mib=peak_rss_mib,
        peak_rss_of=peak_rss_of,
    )
    if iterations is not None:
        benchmark.extra_info["iterations"] = iterations
    if method is not None:
        benchmark.extra_info["method"] = method


@pytest.mark.parametrize("width, height, rounds, warmup", SIZES)
def test_solve(benchmark, peak_rss, width, height, rounds, warmup):
    """Full solve: enumeration + value iteration (the default method, mpi)."""
    benchmark.group = "solve (enumeration + value iteration)"
    solution = benchmark.pedantic(
        babytris.solve,
        kwargs=dict(width=width, height=height, discount=DISCOUNT, tol=TOL),
        rounds=rounds,
        iterations=1,
        warmup_rounds=warmup,
    )
    assert solution.converged
    _info(
        benchmark,
        width,
        height,
        solution.transitions,
        iterations=solution.iterations,
        method=solution.method,
        peak_rss_mib=peak_rss.mib("solve", width, height),
        peak_rss_of="solve",
    )


@pytest.mark.parametrize("width, height, rounds, warmup", SIZES)
def test_enumerate(benchmark, peak_rss, width, height, rounds, warmup):
    """Breadth-first enumeration of the reachable boards and the move table."""
    benchmark.group = "enumeration"
    rules = babytris.Rules(width=width, height=height)
    transitions = benchmark.pedantic(
        babytris.enumerate_boards, args=(rules,), rounds=rounds, iterations=1, warmup_rounds=warmup
    )
    _info(
        benchmark,
        width,
        height,
        transitions,
        peak_rss_mib=peak_rss.mib("enumerate_boards", width, height),
        peak_rss_of="enumerate_boards",
    )


@pytest.mark.parametrize("width, height, rounds, warmup", SIZES)
def test_value_iteration(benchmark, peak_rss, width, height, rounds, warmup):
    """Value iteration alone, on a table enumerated beforehand (not timed)."""
    benchmark.group = "value iteration (pre-enumerated table)"
    transitions = babytris.enumerate_boards(babytris.Rules(width=width, height=height))
    solution = benchmark.pedantic(
        babytris.solve_transitions,
        args=(transitions,),
        kwargs=dict(discount=DISCOUNT, tol=TOL),
        rounds=rounds,
        iterations=1,
        warmup_rounds=warmup,
    )
    assert solution.converged
    # The sweeps run with the whole table resident: their peak is the solve's.
    _info(
        benchmark,
        width,
        height,
        transitions,
        iterations=solution.iterations,
        method=solution.method,
        peak_rss_mib=peak_rss.mib("solve", width, height),
        peak_rss_of="solve",
    )


@slow
def test_reference_4x4(benchmark, peak_rss):
    """The pure-Python reference on 4x4 (~25 s a run: one round), with the core's
    median on the same problem timed in this same test for an honest ratio."""
    benchmark.group = "core vs reference (4x4)"
    core_times = []
    for _ in range(11):
        started = time.perf_counter()
        core = babytris.solve(width=4, height=4, discount=DISCOUNT, tol=TOL)
        core_times.append(time.perf_counter() - started)
    reference = benchmark.pedantic(
        babytris.reference.solve,
        kwargs=dict(width=4, height=4, discount=DISCOUNT, tol=TOL),
        rounds=1,
        iterations=1,
        warmup_rounds=0,
    )
    assert reference.converged and reference.n_boards == core.n_boards
    # Both stop within TOL of a sweep; the fixed point is then within TOL * g / (1 - g).
    assert abs(reference.start_value - core.start_value) < 1e-6
    _info(
        benchmark,
        4,
        4,
        core.transitions,
        iterations=reference.iterations,
        peak_rss_mib=peak_rss.mib("reference.solve", 4, 4),
        peak_rss_of="reference.solve",
    )
    core_median = statistics.median(core_times)
    benchmark.extra_info.update(core_median_s=core_median, core_rounds=len(core_times), core_iterations=core.iterations)
    if benchmark.stats is not None:  # None under --benchmark-disable
        reference_median = benchmark.stats.stats.median
        benchmark.extra_info.update(reference_median_s=reference_median, ratio=reference_median / core_median)
