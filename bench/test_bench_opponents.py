"""Benchmarks of the solves for other opponents, given policies and weighted rewards.

``test_opponent_solve``: ``babytris.solve_transitions(t, discount=0.9,
tol=1e-8, ...)`` on 4x5 and 4x6 for each model other than random pieces (whose
solve is ``test_value_iteration`` in test_bench_solve.py, not timed again
here).  The table and the solutions given as policies (the optimal player
against random pieces, the minimax solution) are computed once per module and
size, not timed.  ``extra_info`` records the method and ``iterations``
(Bellman optimality sweeps, i.e. greedy sweeps).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import babytris

DISCOUNT = 0.9
TOL = 1e-8

#: The weighted reward timed: the study's max-min player 0/1/4/1.5.
WEIGHTED = babytris.Reward(lines=0, height=1, score=4, gaps=1.5)


@dataclass(frozen=True)
class Game:
    """One size's move table and the solutions the benchmarks take as given policies."""

    width: int
    height: int
    rounds: int
    warmup: int
    transitions: babytris.Transitions
    optimal: babytris.Solution  # the optimal player against random pieces
    minimax: babytris.Solution  # the max-min player against the minimax opponent


# What is timed: id -> (the arguments as the report shows them, the keywords from a Game).
SOLVES: dict[str, tuple[str, Callable[[Game], dict[str, Any]]]] = {
    "minimax": ('opponent="minimax"', lambda g: dict(opponent="minimax")),
    "minavg": ('opponent="minavg"', lambda g: dict(opponent="minavg")),
    "gaps": ('opponent="gaps"', lambda g: dict(opponent="gaps")),
    "best-response-player": ("opponent=<minimax solution>", lambda g: dict(opponent=g.minimax)),
    "best-response-opponent": (
        'player=<optimal solution>, opponent="minimax"',
        lambda g: dict(player=g.optimal, opponent="minimax"),
    ),
    "policy-evaluation": ("player=<optimal solution>", lambda g: dict(player=g.optimal)),
    "weighted-reward": (
        'opponent="minimax", reward=Reward(lines=0, height=1, score=4, gaps=1.5)',
        lambda g: dict(opponent="minimax", reward=WEIGHTED),
    ),
}


# (width, height, timed rounds, warm-up rounds)
@pytest.fixture(
    scope="module",
    params=[pytest.param((4, 5, 5, 1), id="4x5"), pytest.param((4, 6, 3, 0), id="4x6", marks=pytest.mark.slow)],
)
def game(request) -> Game:
    width, height, rounds, warmup = request.param
    transitions = babytris.enumerate_boards(babytris.Rules(width=width, height=height))
    optimal = babytris.solve_transitions(transitions, discount=DISCOUNT, tol=TOL)
    minimax = babytris.solve_transitions(transitions, discount=DISCOUNT, tol=TOL, opponent="minimax")
    return Game(width, height, rounds, warmup, transitions, optimal, minimax)


@pytest.mark.parametrize("what", list(SOLVES))
def test_opponent_solve(benchmark, game, what):
    """``solve_transitions(t, discount=0.9, tol=1e-8, **SOLVES[what])`` on a pre-enumerated table."""
    benchmark.group = f"solve_transitions, opponents and players, {game.width}x{game.height}"
    arguments, keywords = SOLVES[what]
    solution = benchmark.pedantic(
        babytris.solve_transitions,
        args=(game.transitions,),
        kwargs=dict(discount=DISCOUNT, tol=TOL, **keywords(game)),
        rounds=game.rounds,
        iterations=1,
        warmup_rounds=game.warmup,
    )
    assert solution.converged
    benchmark.extra_info.update(
        size=f"{game.width}x{game.height}",
        width=game.width,
        height=game.height,
        what=what,
        arguments=arguments,
        opponent=solution.opponent,
        player=solution.player,
        method=solution.method,
        iterations=solution.iterations,
        n_boards=game.transitions.n_boards,
        n_moves=game.transitions.n_moves,
        threads=os.cpu_count(),
        load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    )
