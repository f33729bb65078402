"""Previews and hold: the player sees the next pieces and may keep one aside;
a state is the board, the piece to place, the queue and the hold slot."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import Rules, RulesError, reference


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
        _ = s.transitions.start_index


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


def test_the_rate_refuses_previews_clearly(solutions):
    # (play and expected_points take every timing: tests/test_timings.py)
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
@given(
    small_rules(sizes=(2, 3), variants=True),
    st.integers(0, 2),
    st.booleans(),
    st.sampled_from(["random", "minimax", "gaps"]),
    st.floats(0.0, 0.9),
    st.sampled_from(["empty", "drawn"]),
)
def test_random_games_equal_reference(rules, preview, hold, opponent, discount, hold_start):
    rules = Rules(
        width=rules.width,
        height=rules.height,
        pieces=rules.pieces,
        probabilities=rules.probabilities,
        start=rules.start,
        objective=rules.objective,
        preview=preview,
        hold=hold,
        hold_start=hold_start if hold else "empty",
        line_scores=None if rules.objective == "combo" else rules.line_scores,
        no_holes=rules.no_holes,
        top_out=rules.top_out,
    )
    try:
        t = babytris.enumerate_boards(rules, max_memory=2**24)
    except babytris.MemoryLimitError:
        assume(False)
    assume(t.n_boards <= 600)
    core = babytris.solve_transitions(t, discount=discount, opponent=opponent, tol=1e-12)
    ref = reference.solve(rules, discount=discount, opponent=opponent, tol=1e-12)
    rows = [t.board_index(*node) if isinstance(node, tuple) else t.board_index(node) for node in ref.boards]
    assert np.abs(core.values[rows] - np.array(ref.values)).max() <= 1e-9 * max(1.0, np.abs(core.values).max())
    assert core.start_value == pytest.approx(ref.start_value, abs=1e-9 * max(1.0, np.abs(core.values).max()))
    states, boards = reference.minimize(rules, opponent=opponent)
    p = babytris.minimize(t, opponent=opponent)
    assert p.n_classes == len(set(states.values())) and p.n_board_classes == len(set(boards.values()))
    quotient = babytris.solve_transitions(t, discount=discount, opponent=opponent, tol=1e-12, minimize=True)
    assert np.abs(quotient.values - core.values).max() <= 1e-9 * max(1.0, np.abs(core.values).max())


# --------------------------------------------------------------------------
# Hold
# --------------------------------------------------------------------------


@pytest.mark.parametrize("preview", [0, 1])
def test_hold_is_worth_at_least_going_without(preview):
    """With the slot empty the player may ignore it: every (board, queue) is
    worth at least what it is without hold."""
    plain = babytris.solve(width=4, height=4, preview=preview, tol=1e-11)
    held = babytris.solve(width=4, height=4, preview=preview, hold=True, tol=1e-11)
    assert held.n_boards == plain.n_boards * 5  # empty, I or L held, I or L just held
    empty = np.flatnonzero(held.transitions.slots == 0)
    assert np.all(held.values[empty] >= plain.values - 1e-9)
    assert held.start_value > plain.start_value


@pytest.mark.parametrize("preview", [0, 1])
@pytest.mark.parametrize("opponent", ["random", "minimax", "gaps"])
def test_hold_equals_reference(preview, opponent):
    rules = Rules(width=3, height=3, preview=preview, hold=True, probabilities=(0.4, 0.6))
    core = babytris.solve(rules, opponent=opponent, tol=1e-12)
    ref = reference.solve(rules, opponent=opponent, tol=1e-12)
    rows = [core.transitions.board_index(*node) for node in ref.boards]
    assert np.abs(core.values[rows] - np.array(ref.values)).max() <= 1e-9
    assert core.start_value == pytest.approx(ref.start_value, abs=1e-9)
    if opponent == "random":  # the opponent's pieces, where the choice is clear
        return
    for j, node in enumerate(ref.boards):
        row = sorted(ref.values[j], reverse=opponent == "gaps")
        if abs(row[1] - row[0]) > 1e-6:
            assert int(core.opponent_policy[rows[j]]) == ref.piece_choices[node]


def test_hold_moves_and_lookups():
    s = babytris.solve(width=4, height=4, hold=True, tol=1e-11)
    q = s.action_values(0, "L")  # empty board, nothing held: place L, or hold it
    assert "hold" in q and len(q) == 12 + 1
    assert max(q.values()) == pytest.approx(s.value(0, "L"), abs=1e-9)
    swap = s.action_values(0, "L", held="I")  # I held: place L (12), or I (6) and hold L
    assert len(swap) == 12 + 6 and {m.piece for m in swap} == {"I", "L"}
    assert len(s.action_values(0, "L", held="I", locked=True)) == 12  # just held: no second hold
    assert s.best_action(0, "L", held="I") in swap
    with pytest.raises(ValueError, match="held"):
        babytris.solve(width=3, height=3, tol=1e-6).value(0, "L", held="I")


def test_minimized_hold_equals_the_full_solve():
    full = babytris.solve(width=4, height=4, preview=1, hold=True, tol=1e-11)
    quotient = babytris.solve(width=4, height=4, preview=1, hold=True, tol=1e-11, minimize=True)
    assert np.max(np.abs(quotient.values - full.values)) <= 1e-9


def test_bad_hold():
    with pytest.raises(RulesError, match="hold"):
        Rules(hold=1)
    s = babytris.solve(width=3, height=3, hold=True, tol=1e-6)
    with pytest.raises(ValueError, match="held"):
        s.value(0, "I", held=True)
    # (play and expected_points take hold: tests/test_timings.py; the long-run rate does not yet)
    with pytest.raises(ValueError, match="hold"):
        babytris.long_run_rate(s.transitions)


def test_a_drawn_hold_starts_holding_the_first_piece():
    """hold_start="drawn" (c4w): the first piece fills the slot, so the start
    is worth each piece held, weighed by its chance; the table is the same."""
    rules = Rules(width=4, height=4, hold=True, probabilities=(0.3, 0.7))
    empty = babytris.solve(rules, tol=1e-12)
    drawn = babytris.solve(dataclasses.replace(rules, hold_start="drawn"), tol=1e-12)
    assert np.array_equal(drawn.values, empty.values)
    by_hand = sum(
        held_chance * piece_chance * empty.value(0, piece, held=held)
        for held, held_chance in (("I", 0.3), ("L", 0.7))
        for piece, piece_chance in (("I", 0.3), ("L", 0.7))
    )
    assert drawn.start_value == pytest.approx(by_hand, abs=1e-12)
    assert drawn.start_value > empty.start_value  # a piece in hand from the start
    rows, chances = drawn.transitions.start_nodes()
    assert drawn.transitions.slots[rows].tolist() == [1, 2] and chances.tolist() == [0.3, 0.7]
    with pytest.raises(ValueError, match="hold_start"):
        _ = drawn.transitions.start_index
    with pytest.raises(RulesError, match="hold_start='drawn' needs hold=True"):
        Rules(hold_start="drawn")
    with pytest.raises(RulesError, match="hold_start must be one of 'empty', 'drawn'"):
        Rules(hold=True, hold_start="full")
