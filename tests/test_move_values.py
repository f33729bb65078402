"""One value per move in one compiled pass (``_moves.move_values``): per-row
entries shared by a row's states, the gap opponent's holes created, and bad
arrays refused with the move that is out of range."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris.engine import _moves
from babytris.engine.reward import holes, holes_created


def test_one_entry_per_row_equals_the_entries_repeated(transitions_4x4):
    t = transitions_4x4
    rng = np.random.default_rng(4)
    per_row, per_board = rng.normal(size=t.n_boards), rng.normal(size=t.n_boards)
    per_lines = rng.normal(size=len(t.rules.line_scores))
    repeated = _moves.move_values(t.offsets, t.next_board, t.lines, np.repeat(per_board, 2), per_row, per_lines)
    shared = _moves.move_values(t.offsets, t.next_board, t.lines, per_board, per_row, per_lines, states_per_entry=2)
    assert np.array_equal(repeated, shared)
    rows = np.repeat(np.arange(t.n_states), np.diff(t.offsets)) // 2
    assert np.array_equal(shared, per_board[rows] + per_row[t.next_board] + per_lines[t.lines])


@pytest.mark.parametrize("rules", [babytris.Rules(width=4, height=4), babytris.Rules(width=4, height=4, top_out=True)])
def test_holes_created_are_the_holes_after_less_before(rules):
    t = babytris.enumerate_boards(rules)
    count = holes(t.boards, rules.width, rules.height)
    rows = np.repeat(np.arange(t.n_states), np.diff(t.offsets)) // rules.n_pieces
    expected = (count[t.next_board] - count[rows]).astype(np.float64)
    if rules.top_out:  # (a move that tops out creates none: the lost board's empty rows are no holes)
        from babytris.engine.placements import lost_board

        expected[t.boards[t.next_board] == np.uint64(lost_board(rules))] = 0.0
    assert np.array_equal(holes_created(t), expected) and (expected != 0).any()


def test_bad_arrays_are_refused(transitions_4x4):
    t = transitions_4x4
    per_board, per_row, per_lines = np.zeros(t.n_boards), np.zeros(t.n_boards), np.zeros(len(t.rules.line_scores))
    with pytest.raises(ValueError, match="states_per_entry must be >= 1, got 0"):
        _moves.move_values(t.offsets, t.next_board, t.lines, per_board, per_row, per_lines, states_per_entry=0)
    with pytest.raises(ValueError, match="shapes do not match"):
        _moves.move_values(t.offsets, t.next_board, t.lines, per_board, per_row, per_lines, states_per_entry=1)
    bad = t.next_board.copy()
    bad[17] = t.n_boards
    with pytest.raises(ValueError, match="move 17 leads out of per_row"):
        _moves.move_values(t.offsets, bad, t.lines, per_board, per_row, per_lines, states_per_entry=2)
    with pytest.raises(ValueError, match=r"move \d+ leads out of per_row or clears more rows"):
        _moves.move_values(t.offsets, t.next_board, t.lines, per_board, per_row, per_lines[:1], states_per_entry=2)
