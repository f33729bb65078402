"""Previews: the player sees the next pieces; a state is the board, the piece
to place and the queue."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import babytris
from babytris import Reward, Rules, RulesError, reference
from strategies import small_rules


@pytest.fixture(scope="module")
def solutions():
    return {k: babytris.solve(width=4, height=4, preview=k, tol=1e-11) for k in (0, 1, 2)}


def test_state_counts(solutions):
    """Every reachable board with every queue: 12,978 x 2**k rows, twice as many states."""
    for k, s in solutions.items():
        assert s.n_boards == 12_978 * 2**k and s.n_states == 25_956 * 2**k
        assert s.transitions.n_moves == 35_280 * 2**k


def test_seeing_more_is_worth_more(solutions):
    """A player who sees more can do at least what one who sees less does."""
    values = [solutions[k].start_value for k in (0, 1, 2)]
    assert values[0] < values[1] < values[2]
    assert values[0] == pytest.approx(9.118607, abs=1e-6)  # the plain game's


def test_preview_value_is_the_plain_value_averaged_when_the_queue_is_not_used():
    """A single piece leaves nothing to foresee: previews change no value."""
    plain = babytris.solve(width=3, height=4, pieces=["I"], tol=1e-12)
    seen = babytris.solve(width=3, height=4, pieces=["I"], preview=2, tol=1e-12)
    assert seen.start_value == pytest.approx(plain.start_value, abs=1e-10)
    assert np.allclose(seen.values[:, 0], np.repeat(plain.values[:, 0], 1), atol=1e-10)


def test_lookups_take_the_preview(solutions):
    s = solutions[2]
    board = int(babytris.Board.from_rows(["....", "....", "#...", "##.#"]))
    assert s.value(board, "L", ("I", "I")) == s.values[s.index(board, ["L", "I"]), 0]
    move = s.best_action(board, "L", ("I", "L"))
    assert move is not None and move.piece == "L"
    q = s.action_values(board, "L", ("I", "L"))
    assert max(q.values()) == pytest.approx(s.value(board, "L", ("I", "L")), abs=1e-9)
    with pytest.raises(ValueError, match="preview must name 2 pieces"):
        s.value(board, "L")
    with pytest.raises(ValueError, match="start_nodes"):
        s.transitions.start_index


@pytest.mark.parametrize("opponent", ["random", "minimax", "minavg", "gaps"])
def test_equals_reference(opponent):
    rules = Rules(width=3, height=4, preview=1, probabilities=(0.3, 0.7))
    core = babytris.solve(rules, opponent=opponent, tol=1e-12)
    ref = reference.solve(rules, opponent=opponent, tol=1e-12)
    rows = [core.index(b, q) for b, q in ref.boards]
    assert np.abs(core.values[rows] - np.array(ref.values)).max() <= 1e-9
    assert core.start_value == pytest.approx(ref.start_value, abs=1e-9)


def test_minimized_previews_equal_the_full_solve(solutions):
    quotient = babytris.solve(width=4, height=4, preview=2, tol=1e-11, minimize=True)
    assert np.max(np.abs(quotient.values - solutions[2].values)) <= 1e-9
    assert quotient.partition.n_classes < quotient.n_states / 4


def test_play_and_rate_refuse_previews_clearly(solutions):
    with pytest.raises(ValueError, match="previews"):
        babytris.play(solutions[1])
    with pytest.raises(ValueError, match="previews"):
        babytris.expected_points(solutions[1])
    with pytest.raises(ValueError, match="previews"):
        babytris.long_run_rate(solutions[1].transitions)


@pytest.mark.parametrize("preview", [-1, 9, True, 1.5])
def test_bad_preview(preview):
    with pytest.raises(RulesError, match="preview"):
        Rules(preview=preview)


def test_preview_memory_guard():
    with pytest.raises(babytris.MemoryLimitError, match="preview=8"):
        babytris.enumerate_boards(Rules(width=4, height=5, pieces="tetrominoes", preview=8), max_memory=2**30)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(small_rules(sizes=(2, 3), variants=True), st.integers(1, 2), st.sampled_from(["random", "minimax", "gaps"]),
       st.floats(0.0, 0.9))
def test_random_games_equal_reference(rules, preview, opponent, discount):
    rules = Rules(width=rules.width, height=rules.height, pieces=rules.pieces, probabilities=rules.probabilities,
                  start=rules.start, objective=rules.objective, preview=preview,
                  line_scores=None if rules.objective == "combo" else rules.line_scores)
    try:
        t = babytris.enumerate_boards(rules, max_memory=2**24)
    except babytris.MemoryLimitError:
        assume(False)
    assume(t.n_boards <= 600)
    core = babytris.solve_transitions(t, discount=discount, opponent=opponent, tol=1e-12)
    ref = reference.solve(rules, discount=discount, opponent=opponent, tol=1e-12)
    rows = [t.board_index(b, q) for b, q in ref.boards]
    assert np.abs(core.values[rows] - np.array(ref.values)).max() <= 1e-9 * max(1.0, np.abs(core.values).max())
    states, boards = reference.minimize(rules, opponent=opponent)
    p = babytris.minimize(t, opponent=opponent)
    assert p.n_classes == len(set(states.values())) and p.n_board_classes == len(set(boards.values()))
