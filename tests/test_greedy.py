"""The greedy backups from given board values (babytris.solvers._greedy): each state's
best value and first best move, checked against numpy over the table, against
the Sweeper's own tie-breaking, and against bad arrays."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris.solvers import _greedy, _sweep


def _table(t: babytris.Transitions, seed: int = 3):
    scores = np.asarray(t.rules.line_scores, dtype=np.float64)
    board_values = np.round(np.random.default_rng(seed).random(t.n_boards) * 8) / 4  # coarse: many ties
    return t.offsets, t.next_board, t.lines, scores, board_values


def _move_values(t, scores, board_values, discount, move_reward=None):
    reward = scores[t.lines] if move_reward is None else move_reward
    return reward + discount * board_values[t.next_board]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_state_values_are_each_states_best_move(transitions_4x4, threads):
    t = transitions_4x4
    offsets, nxt, lines, scores, W = _table(t)
    q = _move_values(t, scores, W, 0.9)
    rows = np.repeat(np.arange(t.n_states), np.diff(offsets))
    expected = np.full(t.n_states, -2.5)
    np.maximum.at(expected, rows, q)  # (every state with a move has a value above -2.5)
    expected[np.diff(offsets) == 0] = -2.5
    V = np.full(t.n_states, np.nan)
    _greedy.state_values(offsets, nxt, lines, scores, W, 0.9, V, dead_value=-2.5, n_threads=threads)
    assert np.array_equal(V, expected)
    policy = np.full(t.n_states, 99, dtype=np.int16)
    _greedy.state_values(offsets, nxt, lines, scores, W, 0.9, V, policy=policy, n_threads=threads)
    first = np.zeros(t.n_states, dtype=np.int16)
    first[np.diff(offsets) == 0] = -1
    _greedy.first_best_moves(offsets, nxt, lines, scores, W, 0.9, first, 0.0)
    assert np.array_equal(policy, first)  # (the first best move, -1 where none)
    assert (np.diff(offsets) == 0).any()  # (the dead value is tested)


def test_state_values_read_per_move_rewards(transitions_4x4):
    t = transitions_4x4
    offsets, nxt, lines, scores, W = _table(t)
    reward = np.random.default_rng(1).normal(size=t.n_moves)
    V = np.empty(t.n_states)
    _greedy.state_values(offsets, nxt, lines, scores, W, 0.5, V, move_reward=reward)
    rows = np.repeat(np.arange(t.n_states), np.diff(offsets))
    expected = np.full(t.n_states, -np.inf)
    np.maximum.at(expected, rows, _move_values(t, scores, W, 0.5, reward))
    live = np.diff(offsets) > 0
    assert np.array_equal(V[live], expected[live]) and not V[~live].any()


def test_first_best_moves_match_the_sweepers(transitions_4x4):
    """The function on given arrays and the Sweeper's method break ties alike."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=5))
    offsets, nxt, lines, scores, W = _table(t, seed=7)
    n = t.n_boards
    given = np.zeros(2 * n, dtype=np.int16)
    given[np.diff(offsets) == 0] = -1
    mine = given.copy()
    sweeper = _sweep.Sweeper(
        offsets, nxt, lines, scores, np.asarray(t.rules.probabilities), 0.9, np.zeros(2 * n), W.copy(), given,
        np.arange(n, dtype=np.int32), np.array([0, n], dtype=np.int64),
    )  # fmt: skip
    changed = sweeper.first_best_moves(0.01)
    assert changed > 0
    assert _greedy.first_best_moves(offsets, nxt, lines, scores, W, 0.9, mine, 0.01, n_threads=2) == changed
    assert np.array_equal(mine, given)
    # and each chosen move is the first within the slack of its row's best
    q = _move_values(t, scores, W, 0.9)
    for s in np.flatnonzero(np.diff(offsets))[::97]:
        row = q[offsets[s] : offsets[s + 1]]
        assert mine[s] == np.flatnonzero(row >= row.max() - 0.01)[0]


def test_bad_arrays_are_refused_with_their_place(transitions_4x4):
    t = transitions_4x4
    offsets, nxt, lines, scores, W = _table(t)
    V = np.empty(t.n_states)
    policy = np.zeros(t.n_states, dtype=np.int16)
    policy[np.diff(offsets) == 0] = -1
    bad = nxt.copy()
    bad[9] = t.n_boards
    with pytest.raises(ValueError, match=rf"state_values: next_board\[9\] = {t.n_boards} is outside"):
        _greedy.state_values(offsets, bad, lines, scores, W, 0.9, V)
    with pytest.raises(ValueError, match=r"first_best_moves: next_board\[9\]"):
        _greedy.first_best_moves(offsets, bad, lines, scores, W, 0.9, policy, 0.0)
    few = lines.copy()
    few[4] = len(scores)
    with pytest.raises(ValueError, match=r"lines\[4\] = 4: a move clears more rows"):
        _greedy.state_values(offsets, nxt, few, scores, W, 0.9, V)
    backwards = offsets.copy()
    backwards[1000] = backwards[1001] + 1
    with pytest.raises(ValueError, match=r"offsets must not decrease; offsets\[1001\]"):
        _greedy.state_values(backwards, nxt, lines, scores, W, 0.9, V)
    wild = policy.copy()
    wild[5] = 40
    with pytest.raises(ValueError, match=r"first_best_moves: policy\[5\] = 40 is not a move of its state"):
        _greedy.first_best_moves(offsets, nxt, lines, scores, W, 0.9, wild, 0.0)
    with pytest.raises(ValueError, match="policy must have one entry per state"):
        _greedy.state_values(offsets, nxt, lines, scores, W, 0.9, V, policy=policy[1:])
    with pytest.raises(ValueError, match="V must have one entry per state"):
        _greedy.state_values(offsets, nxt, lines, scores, W, 0.9, V[:-1])
    with pytest.raises(ValueError, match="offsets do not match the moves"):
        _greedy.state_values(offsets, nxt[:-1], lines[:-1], scores, W, 0.9, V)
    with pytest.raises(ValueError, match="slack must be >= 0"):
        _greedy.first_best_moves(offsets, nxt, lines, scores, W, 0.9, policy, float("nan"))
    with pytest.raises(ValueError, match="move_reward must have one entry per move"):
        _greedy.state_values(offsets, nxt, lines, scores, W, 0.9, V, move_reward=np.zeros(3))
    with pytest.raises(ValueError, match="n_threads must be >= 1"):
        _greedy.state_values(offsets, nxt, lines, scores, W, 0.9, V, n_threads=0)
    # and nothing was written by a refused call
    assert np.array_equal(policy[np.diff(offsets) == 0], np.full((np.diff(offsets) == 0).sum(), -1))


def test_an_empty_table_is_no_work():
    V = np.empty(0)
    _greedy.state_values(
        np.zeros(1, np.int32), np.zeros(0, np.int32), np.zeros(0, np.uint8), np.zeros(1), np.zeros(0), 0.9, V
    )
    assert _greedy.first_best_moves(
        np.zeros(1, np.int32), np.zeros(0, np.int32), np.zeros(0, np.uint8), np.zeros(1), np.zeros(0), 0.9,
        np.zeros(0, np.int16), 0.0,
    ) == 0  # fmt: skip


def test_first_best_moves_from_the_known_best_values_are_the_same(transitions_4x4):
    """Given the state values state_values wrote, the pass skips its search for the best: same moves."""
    t = transitions_4x4
    offsets, nxt, lines, scores, W = _table(t, seed=11)
    V = np.empty(t.n_states)
    _greedy.state_values(offsets, nxt, lines, scores, W, 0.9, V)
    searched = np.zeros(t.n_states, dtype=np.int16)
    searched[np.diff(offsets) == 0] = -1
    known = searched.copy()
    for slack in (0.0, 0.02, 0.3):
        a = _greedy.first_best_moves(offsets, nxt, lines, scores, W, 0.9, searched, slack)
        b = _greedy.first_best_moves(offsets, nxt, lines, scores, W, 0.9, known, slack, best=V, n_threads=2)
        assert a == b and np.array_equal(searched, known)
    with pytest.raises(ValueError, match="best must have one entry per state"):
        _greedy.first_best_moves(offsets, nxt, lines, scores, W, 0.9, known, 0.0, best=V[1:])


def test_offsets_without_an_entry_are_refused():
    none = (np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.uint8), np.zeros(1), np.zeros(0), 0.9)
    with pytest.raises(ValueError, match="state_values: offsets must hold one entry more than the states"):
        _greedy.state_values(*none, np.zeros(0))
    with pytest.raises(ValueError, match="first_best_moves: offsets must hold one entry more than the states"):
        _greedy.first_best_moves(*none, np.zeros(0, np.int16), 0.0)
