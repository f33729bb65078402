"""Start boards and the combo objective (one point per clearing placement; a
placement that clears nothing ends the game)."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import Board, Rules, RulesError, reference


def test_domino_on_a_two_wide_board_combos_forever():
    """Only the flat domino clears, and it always does: the combo never ends,
    worth 1 / (1 - discount); standing it up clears nothing, so it is no move."""
    rules = Rules(width=2, height=2, pieces=[[(0, 0), (1, 0)]], objective="combo")
    t = babytris.enumerate_boards(rules)
    assert t.n_boards == 1 and t.n_moves == 1
    s = babytris.solve(rules, discount=0.9, tol=1e-12)
    assert s.start_value == pytest.approx(10.0, abs=1e-10)


def test_monomino_combo_needs_a_start():
    """A monomino on a 2-wide board clears a row only next to a filled cell."""
    empty = babytris.solve(Rules(width=2, height=2, pieces=[[(0, 0)]], objective="combo"), discount=1.0)
    assert empty.start_value == 0.0 and empty.n_boards == 1
    one = babytris.solve(Rules(width=2, height=2, pieces=[[(0, 0)]], objective="combo", start=0b01), discount=1.0)
    assert one.converged and one.start_value == 1.0  # fill the gap, clear, then nothing clears


def test_combo_moves_are_the_clearing_placements():
    rules = Rules(width=4, height=4, objective="combo")
    plain = babytris.engine.placements.engine(Rules(width=4, height=4))
    combo = babytris.engine.placements.engine(rules)
    board = int(Board.from_rows(["....", "....", "#...", "##.#"]))
    for piece in range(2):
        everything = plain.successors(board, piece)
        assert combo.successors(board, piece) == [m for m in everything if m[2] > 0]
        assert [(m.index, b, n) for m, b, n in reference.moves(rules, board, piece)] == combo.successors(board, piece)
    assert rules.line_scores == (0.0, 1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    "fields",
    [
        dict(width=4, height=3, start=int(Board.from_rows(["#...", "##.#"], height=3))),
        dict(width=4, height=4, objective="combo", start=int(Board.from_rows(["##.#"], height=4))),
        dict(width=3, height=4, objective="combo", start=0b011),
        dict(width=4, height=4, pieces="tetrominoes", objective="combo", start=0b0111),
    ],
    ids=["points from a start", "combo 4x4", "combo 3x4", "combo tetrominoes"],
)
def test_start_and_combo_equal_reference(fields):
    rules = Rules(**fields)
    core = babytris.solve(rules, discount=0.9, tol=1e-12)
    ref = reference.solve(rules, discount=0.9, tol=1e-12)
    assert sorted(core.boards.tolist()) == sorted(ref.boards)
    assert core.transitions.start_index == core.transitions.board_index(rules.start)
    order = core.transitions.indices(np.array(ref.boards, dtype=np.uint64))
    assert np.abs(core.values[order] - np.array(ref.values)).max() <= 1e-9
    assert core.start_value == pytest.approx(ref.start_value, abs=1e-9)
    # playouts and exact expectations start on the start board too
    n = 8
    exact = babytris.expected_points(core, "random", n_placements=n)
    assert exact == pytest.approx(reference.expected_points(rules, "random", "random", n), abs=1e-9)
    games = babytris.play(core, "random", n_placements=n, n_games=4000, seed=5)
    assert abs(games.mean - exact) <= 5 * games.stderr


def test_undiscounted_combo_is_the_expected_length():
    """Discount 1 is the expected number of clearing placements, which the
    exact finite-horizon value of the same policy approaches."""
    rules = Rules(width=4, height=5, pieces="tetrominoes", objective="combo", start=0b0111)
    s = babytris.solve(rules, discount=1.0, tol=1e-10)
    assert s.converged and 1.0 < s.start_value < 50
    horizon = babytris.expected_points(s, n_placements=2000)
    assert horizon == pytest.approx(s.start_value, abs=1e-6)


@pytest.mark.parametrize(
    "fields, match",
    [
        (dict(start=-1), "start"),
        (dict(start=2**16), "start"),
        (dict(start=True), "start"),
        (dict(start=0b1111), "full row"),
        (dict(objective="lines"), "objective"),
        (dict(objective="combo", line_scores=(0, 1, 2, 3)), "line_scores"),
    ],
)
def test_bad_start_and_objective(fields, match):
    with pytest.raises(RulesError, match=match):
        Rules(width=4, height=4, **fields)


def test_discount_one_only_where_every_game_ends():
    with pytest.raises(ValueError, match=r"from 13 of the 34 rows of this 3x3 game .* forever"):
        babytris.solve(width=3, height=3, discount=1.0)


def test_repr_round_trip():
    rules = Rules(width=4, height=4, start=0b0111, objective="combo")
    assert "start=7" in repr(rules) and "objective='combo'" in repr(rules)
    assert eval(repr(rules), {"Rules": Rules}) == rules


def test_start_as_a_board():
    board = Board.from_rows(["#..#", "##.#"], height=4)
    assert Rules(width=4, height=4, start=board).start == int(board)
    with pytest.raises(RulesError, match="start is a 4x2 board"):
        Rules(width=4, height=4, start=Board.from_rows(["#..#", "##.#"]))


@pytest.mark.parametrize("rows", [["#.##"], [".###"], ["#...", "##.."]], ids=["gap 1", "gap 0", "L"])
def test_four_wide_combo_has_the_published_280_states(rows):
    """The 4-wide combo study (tetrominoes, 3 residual cells) counts 280
    (residue, piece) states before previews: 40 residues x 7 pieces, whichever
    residue it starts from and however tall the well."""
    for height in (4, 6):
        rules = Rules(
            width=4, height=height, pieces="tetrominoes", objective="combo", start=Board.from_rows(rows, height=height)
        )
        t = babytris.enumerate_boards(rules)
        assert (t.n_boards, t.n_states) == (40, 280)
        assert all(bin(int(b)).count("1") == 3 for b in t.boards)  # a clearing tetromino keeps 3 cells
