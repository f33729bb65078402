"""Games as fast as plain solves (issue 14, part 2): each optimising
opponent's solve against the random-piece solve of the same board, on a
table enumerated beforehand.  Target: at most 1.3x.

Each case times the game and the random-piece solve interleaved in one run
(medians of ``rounds``, so a busy spell hits both alike), records the
medians, the ratio and the greedy sweeps in ``extra_info``, and fails above
the target.  Default settings (threads as the tuner picks, ``tol=1e-8``,
discount 0.9).
"""

from __future__ import annotations

import os
import statistics
import time

import pytest

import babytris

TARGET = 1.3

# (width, height, rounds)
SIZES = [
    pytest.param((4, 4, 31), id="4x4"),
    pytest.param((4, 5, 15), id="4x5"),
    pytest.param((4, 6, 7), id="4x6", marks=pytest.mark.slow),
]


@pytest.fixture(scope="module", params=SIZES)
def table(request):
    width, height, rounds = request.param
    return babytris.enumerate_boards(babytris.Rules(width=width, height=height)), rounds


@pytest.mark.parametrize("opponent", ["minimax", "minavg", "gaps"])
def test_game_against_random_pieces(benchmark, table, opponent):
    transitions, rounds = table

    def once(**kw):
        started = time.perf_counter()
        solution = babytris.solve_transitions(transitions, discount=0.9, **kw)
        return time.perf_counter() - started, solution

    game, plain = [], []
    for _ in range(rounds):
        seconds, solution = once(opponent=opponent)
        game.append(seconds)
        plain.append(once()[0])
    ratio = statistics.median(game) / statistics.median(plain)
    rules = transitions.rules
    benchmark.group = "games against the random-piece solve"
    benchmark.extra_info.update(
        size=f"{rules.width}x{rules.height}",
        opponent=opponent,
        method=solution.method,
        iterations=solution.iterations,
        game_seconds=statistics.median(game),
        random_seconds=statistics.median(plain),
        game_over_random=ratio,
        cores=os.cpu_count(),
    )
    benchmark.pedantic(babytris.solve_transitions, args=(transitions,), kwargs=dict(opponent=opponent), rounds=1)
    assert solution.converged
    assert ratio <= TARGET, f"{opponent} took {ratio:.2f}x the random-piece solve (target <= {TARGET})"
