"""Opponents that pick the next piece: the minimax (max-min) game."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import Rules, reference


@pytest.fixture(scope="module")
def minimax_4x4(transitions_4x4):
    return babytris.solve_transitions(transitions_4x4, opponent="minimax", tol=1e-10)


def test_minimax_is_never_worth_more_than_random_pieces(minimax_4x4, solution_4x4):
    """min over pieces <= any average over them, stage after stage."""
    assert minimax_4x4.converged
    assert np.all(minimax_4x4.values <= solution_4x4.values + 1e-8)
    assert np.all(minimax_4x4.board_values <= solution_4x4.board_values + 1e-8)
    assert minimax_4x4.start_value < solution_4x4.start_value


def test_board_value_is_the_worst_piece(minimax_4x4):
    assert np.array_equal(minimax_4x4.board_values, minimax_4x4.values.min(axis=1))
    assert minimax_4x4.start_value == minimax_4x4.values[0].min()


def test_piece_policy_gives_the_worst_piece(minimax_4x4, rules_4x4):
    for i in range(0, minimax_4x4.n_boards, 97):
        board = int(minimax_4x4.boards[i])
        piece = minimax_4x4.piece_policy(board)
        assert minimax_4x4.value(board, piece) == minimax_4x4.values[i].min()


def test_opponent_ends_the_game_when_it_can(minimax_4x4, transitions_4x4):
    """On a board where some piece fits nowhere, the opponent can end the game:
    the board is worth 0 and the piece it gives is worth 0 there."""
    moves = np.diff(transitions_4x4.offsets).reshape(-1, 2)
    stuck = np.flatnonzero((moves == 0).any(axis=1) & (moves > 0).any(axis=1))
    assert stuck.size > 100
    for i in stuck[:: max(1, stuck.size // 50)]:
        board = int(minimax_4x4.boards[i])
        piece = minimax_4x4.piece_policy(board)
        assert minimax_4x4.value(board, piece) == 0.0
        assert minimax_4x4.board_values[i] == 0.0


@pytest.mark.parametrize("opponent, state_value", [("minimax", max), ("minavg", lambda q: sum(q) / len(q))])
def test_bellman_fixed_point(transitions_4x4, rules_4x4, opponent, state_value):
    """One more backup, recomputed here from the move table, changes nothing:
    U(b) = min over pieces, V = best move (minimax) or mean over moves (minavg)."""
    s = babytris.solve_transitions(transitions_4x4, opponent=opponent, tol=1e-10)
    t = s.transitions
    after = s.values.min(axis=1)
    scores = np.asarray(rules_4x4.line_scores)
    for state in range(0, s.n_states, 53):
        q = [scores[t.lines[e]] + 0.9 * after[t.next_board[e]] for e in range(t.offsets[state], t.offsets[state + 1])]
        assert abs((state_value(q) if q else 0.0) - s.values.flat[state]) <= 1e-8


@pytest.mark.parametrize("opponent", ["minimax", "minavg"])
def test_matches_reference_on_a_small_game(opponent):
    rules = Rules(width=3, height=4)
    core = babytris.solve(rules, opponent=opponent, tol=1e-12)
    ref = reference.solve(rules, opponent=opponent, tol=1e-12)
    order = core.transitions.indices(np.array(ref.boards, dtype=np.uint64))
    assert np.abs(core.values[order] - np.array(ref.values)).max() <= 1e-9
    assert abs(core.start_value - ref.start_value) <= 1e-9


def test_piece_policy_needs_an_opponent(solution_4x4):
    with pytest.raises(ValueError, match="random"):
        solution_4x4.piece_policy(0)


@pytest.mark.parametrize(
    "kwargs, field",
    [(dict(opponent="nasty"), "opponent"), (dict(opponent="minavg", method="mpi"), "mpi")],
)
def test_bad_opponent_arguments(transitions_4x4, kwargs, field):
    with pytest.raises(ValueError, match=field):
        babytris.solve_transitions(transitions_4x4, **kwargs)


def test_reference_rejects_an_unknown_opponent():
    with pytest.raises(ValueError, match="opponent"):
        reference.solve(width=3, height=3, opponent="nasty")


@pytest.fixture(scope="module")
def minavg_4x4(transitions_4x4):
    return babytris.solve_transitions(transitions_4x4, opponent="minavg", tol=1e-10)


def test_minavg_below_minimax_below_random(minavg_4x4, minimax_4x4, solution_4x4):
    """A random player (mean over moves) never beats the best move; an opponent never beats chance."""
    assert minavg_4x4.converged
    assert np.all(minavg_4x4.values <= minimax_4x4.values + 1e-8)
    assert np.all(minimax_4x4.values <= solution_4x4.values + 1e-8)
    assert minavg_4x4.start_value < minimax_4x4.start_value < solution_4x4.start_value


def test_minavg_has_no_player_policy(minavg_4x4):
    with pytest.raises(ValueError, match="random"):
        minavg_4x4.best_action(0, "I")
    assert minavg_4x4.piece_policy(0) in ("I", "L")
