"""Tied moves and pieces: the policy depends on the game, not on the path to its values.

Which of several equally good moves a sweep records depends on rounding (the
method, acceleration, threads); a converged solve re-chooses the first of the
moves within :attr:`Solution.tie_slack` of the best.  And the minimax game
solved by van der Wal's generalized policy iteration (the default) matches
value iteration.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris.solvers import _sweep

WAYS = [
    dict(method="vi", accelerate=False, n_jobs=1),
    dict(method="vi", accelerate=True, n_jobs=1),
    dict(method="mpi", accelerate=True, n_jobs=1),
    dict(method="mpi", accelerate=False, n_jobs=2),
    dict(method="mpi", eval_sweeps=1, n_jobs=2),
]


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_every_method_gives_the_same_policy_on_4x5(opponent):
    solutions = [babytris.solve(width=4, height=5, discount=0.9, opponent=opponent, **way) for way in WAYS]
    first = solutions[0]
    for s in solutions[1:]:
        assert np.abs(s.values - first.values).max() <= s.error_bound + first.error_bound
        assert np.array_equal(s.policy, first.policy)
        if opponent == "minimax":
            assert np.array_equal(s.opponent_policy, first.opponent_policy)


def test_the_policy_takes_the_first_of_tied_moves(solution_4x4):
    """Recompute every move's value: the chosen one is the first within the slack of the best."""
    s, t = solution_4x4, solution_4x4.transitions
    q = np.asarray(t.rules.line_scores)[t.lines] + s.discount * s.board_values[t.next_board]
    tied_states = 0
    for state in range(0, t.n_boards * 2, 7):  # every 7th state
        lo, hi = t.offsets[state], t.offsets[state + 1]
        if lo == hi:
            continue
        near = np.flatnonzero(q[lo:hi] >= q[lo:hi].max() - s.tie_slack)
        tied_states += near.size > 1
        assert s.policy.ravel()[state] == t.placement[lo + near[0]]
    assert tied_states > 100  # Baby Tetris has many ties: the test sees them
    assert 0 < s.tie_slack <= 2 * 0.9 * s.error_bound * 1.000001


def test_the_opponent_gives_the_first_of_tied_pieces():
    s = babytris.solve(width=4, height=4, discount=0.9, opponent="minimax")
    assert s.values[0, 0] == pytest.approx(s.values[0, 1], abs=s.tie_slack)  # the start: a tie
    assert s.piece_policy(s.rules.start) == "I"
    low = s.values.min(axis=1, keepdims=True) + s.tie_slack
    assert np.array_equal(s.opponent_policy, np.argmax(s.values <= low, axis=1))
    # The board is worth the least valuable piece exactly, whichever tied piece is named.
    assert np.array_equal(s.board_values, s.values.min(axis=1))


def test_an_unconverged_solve_keeps_its_greedy_moves():
    s = babytris.solve(width=4, height=4, discount=0.9, max_iter=2)
    assert not s.converged and s.tie_slack == 0.0


def test_minimax_defaults_to_strategy_iteration_and_takes_generalized_policy_iteration():
    vi = babytris.solve(width=4, height=5, discount=0.9, opponent="minimax", method="vi", tol=1e-10)
    mpi = babytris.solve(width=4, height=5, discount=0.9, opponent="minimax", method="mpi", tol=1e-10)
    strategy = babytris.solve(width=4, height=5, discount=0.9, opponent="minimax", tol=1e-10)
    assert mpi.method == "mpi" and vi.method == "vi" and strategy.method == "strategy"
    assert np.abs(strategy.values - vi.values).max() <= strategy.error_bound + vi.error_bound
    assert strategy.iterations < mpi.iterations  # the opponent evaluated exactly
    assert np.abs(mpi.values - vi.values).max() <= mpi.error_bound + vi.error_bound
    assert mpi.start_value == pytest.approx(vi.start_value, abs=mpi.error_bound + vi.error_bound)
    assert mpi.iterations < vi.iterations / 2  # each greedy sweep followed by cheap evaluation sweeps


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=small_rules(variants=True),
    opponent=st.sampled_from(["random", "minimax"]),
    discount=st.sampled_from([0.5, 0.9, 0.97]),
)
def test_methods_agree_on_policies_over_random_rules(rules, opponent, discount):
    kw = dict(discount=discount, opponent=opponent, tol=1e-11, max_iter=100_000)
    vi = babytris.solve(rules, method="vi", accelerate=False, **kw)
    mpi = babytris.solve(rules, method="mpi", **kw)
    assert vi.converged and mpi.converged
    if discount < 1 and rules.objective != "combo":
        assert np.abs(mpi.values - vi.values).max() <= mpi.error_bound + vi.error_bound
    # The same policy, but where two moves' values differ by about the slack
    # itself (say 2.2e-12 against slacks of 2.0e-12 and 2.6e-12: a soft-move
    # game with a one-cell piece): one run may count them tied and the other not.
    others = [mpi]
    if opponent == "minimax" and (discount < 1 or rules.objective != "combo"):
        strategy = babytris.solve(rules, method="strategy", **kw)
        assert strategy.converged
        assert np.abs(strategy.values - vi.values).max() <= strategy.error_bound + vi.error_bound
        others.append(strategy)
    for other in others:
        for i, p in np.argwhere(vi.policy != other.policy):
            values = vi.action_values(int(vi.boards[i]), int(p))
            chosen = [q for move, q in values.items() if move.index in (vi.policy[i, p], other.policy[i, p])]
            assert len(chosen) == 2 and abs(chosen[0] - chosen[1]) <= 2 * (vi.tie_slack + other.tie_slack)


def test_first_best_moves_refuses_bad_arguments(transitions_4x4):
    t = transitions_4x4
    n = t.n_boards
    args = (
        t.offsets,
        t.next_board,
        t.lines,
        np.asarray(t.rules.line_scores, dtype=np.float64),
        np.asarray(t.rules.probabilities),
        0.9,
        np.zeros(2 * n),
        np.zeros(n),
        np.full(2 * n, -1, dtype=np.int16),
        np.arange(n, dtype=np.int32),
        np.array([0, n], dtype=np.int64),
    )
    with pytest.raises(ValueError, match="slack"):
        _sweep.Sweeper(*args).first_best_moves(-1.0)
    with pytest.raises(ValueError, match="slack"):
        _sweep.Sweeper(*args).first_best_moves(float("nan"))
    with pytest.raises(ValueError, match="moves=0"):
        _sweep.Sweeper(*args, moves=_sweep.MOVES_MEAN).first_best_moves(0.0)


def test_first_best_moves_do_not_depend_on_threads(transitions_4x4):
    """Each state is re-chosen alone, so threads sharing the states change nothing."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=5))
    n = t.n_boards
    rng = np.random.default_rng(5)
    board_values = np.round(rng.random(n) * 4) / 4  # coarse values: many exact ties
    policies, changed = [], []
    for threads in (1, 2, 3):
        policy = np.zeros(2 * n, dtype=np.int16)
        policy[np.diff(t.offsets) == 0] = -1
        sweeper = _sweep.Sweeper(
            t.offsets, t.next_board, t.lines, np.asarray(t.rules.line_scores, dtype=np.float64),
            np.asarray(t.rules.probabilities), 0.9, np.zeros(2 * n), board_values.copy(), policy,
            np.arange(n, dtype=np.int32), np.array([0, n], dtype=np.int64), n_threads=threads,
        )  # fmt: skip
        changed.append(sweeper.first_best_moves(0.01))
        policies.append(policy)
    assert changed[0] > 0 and changed[0] == changed[1] == changed[2]
    assert np.array_equal(policies[0], policies[1]) and np.array_equal(policies[0], policies[2])
