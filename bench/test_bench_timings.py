"""The course's timing as fast as the other (issue 36's speed criterion): a
game solve (enumeration included) and a 10,000-placement exact evaluation with
the opponent naming the next piece before the placement (``preview=1``),
against the same work with the opponent choosing after it.  Target: at most
1.5x each.

Each case times the two timings interleaved in one run (medians of
``rounds``), records the medians and the ratio in ``extra_info``, and fails
above the target.  The minimax opponent, discount 0.9, default threads.
"""

from __future__ import annotations

import os
import statistics
import time

import pytest

import babytris

TARGET = 1.5

# (width, height, rounds)
SIZES = [pytest.param((4, 4, 15), id="4x4"), pytest.param((4, 5, 9), id="4x5")]


def _seconds(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _ratio(benchmark, name: str, size: tuple, rounds: int, works: dict) -> float:
    times: dict[str, list[float]] = {timing: [] for timing in works}
    for _ in range(rounds):
        for timing, work in works.items():
            times[timing].append(_seconds(work))
    medians = {timing: statistics.median(ts) for timing, ts in times.items()}
    ratio = medians["before"] / medians["after"]
    benchmark.group = f"the course's timing: {name}"
    benchmark.extra_info.update(
        size=f"{size[0]}x{size[1]}",
        before_seconds=medians["before"],
        after_seconds=medians["after"],
        before_over_after=ratio,
        cores=os.cpu_count(),
    )
    benchmark.pedantic(works["before"], rounds=1)
    return ratio


@pytest.mark.parametrize("size", SIZES)
def test_a_game_solve_in_the_course_timing(benchmark, size):
    width, height, rounds = size
    rules = {
        timing: babytris.Rules(width=width, height=height, preview=k) for timing, k in (("after", 0), ("before", 1))
    }
    works = {timing: (lambda r=r: babytris.solve(r, opponent="minimax")) for timing, r in rules.items()}
    ratio = _ratio(benchmark, "solve", (width, height), rounds, works)
    assert ratio <= TARGET, f"the course's timing took {ratio:.2f}x the solve (target <= {TARGET})"


@pytest.mark.parametrize("size", SIZES)
def test_an_exact_evaluation_in_the_course_timing(benchmark, size):
    width, height, rounds = size
    solved = {
        timing: babytris.solve(width=width, height=height, preview=preview, opponent="minimax")
        for timing, preview in (("after", 0), ("before", 1))
    }
    works = {
        timing: (lambda s=s: babytris.expected_points(s, "optimal", "solution", n_placements=10_000))
        for timing, s in solved.items()
    }
    ratio = _ratio(benchmark, "10,000 placements", (width, height), rounds, works)
    assert ratio <= TARGET, f"the course's timing took {ratio:.2f}x the evaluation (target <= {TARGET})"
