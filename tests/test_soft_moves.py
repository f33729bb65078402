"""Soft moves (``Rules(moves="soft")``): a piece may move down, left, right
and turn before it locks, so it can slide under an overhang.

The compiled search against the pure-Python twin
(:func:`babytris.reference.game.soft_moves`, written apart from it), hand-drawn
tucks, the exact counts and values of 4x4 and 4x5, and the parts of the
library that read placement numbers.  The differential tests over random
rule sets (tests/test_reference.py, tests/test_previews.py) draw soft moves
a quarter of the time (tests/strategies.py).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import babytris
from babytris import Board, Placement, Rules, RulesError, reference
from babytris.cli import commands as cli
from babytris.draw.pictures import landing_cells
from babytris.engine.placements import engine
from babytris.engine.stepped import Game
from babytris.reference.game import moves as reference_moves
from babytris.reference.game import reachable_boards

SOFT = Rules(width=4, height=4, moves="soft")
HARD = Rules(width=4, height=4)
# An L dropped on the empty board: row 1 is "##..", row 0 "#...", so the
# cell at column 1, row 0 lies under an overhang that no hard drop reaches.
LEDGE = Board.from_rows(["##..", "#..."], height=4)
# An L slid in from the right under the overhang (cells (1,0), (2,0), (2,1)).
TUCKED = Board.from_rows(["###.", "###."], height=4)


def next_boards(rules: Rules, board: Board, piece: str) -> set[int]:
    return {after for _, after, _ in engine(rules).successors(board.bits, rules.piece_index(piece))}


def test_a_piece_slides_under_an_overhang():
    soft, hard = next_boards(SOFT, LEDGE, "L"), next_boards(HARD, LEDGE, "L")
    assert TUCKED.bits in soft and TUCKED.bits not in hard
    assert hard < soft  # every hard drop is a soft move too


def test_a_piece_cannot_pass_through_cells():
    # Row 1 filled but for column 3: only an upright I fits through that gap,
    # and it would get there by a hard drop too; turning at the bottom needs
    # room (no kicks), so no other move is added.
    walled = Board.from_rows(["###.", "...."], height=4)
    for piece in ("I", "L"):
        assert next_boards(SOFT, walled, piece) == next_boards(HARD, walled, piece)


def test_the_tuck_is_the_best_move_and_is_a_placement_with_a_row():
    solution = babytris.solve(SOFT)
    best = solution.best_action(LEDGE, "L")
    assert best.row == 0 and best.index == solution.rules.height * (best.index // 4) + best.row
    assert landing_cells(LEDGE, best, rules=SOFT) == {(1, 0), (2, 0), (2, 1)}
    values = solution.action_values(LEDGE, "L")
    assert values[best] == max(values.values())
    assert "row=0" in repr(best)
    assert "row" not in repr(babytris.solve(HARD).best_action(LEDGE, "L"))  # hard drops: as before


@pytest.mark.long
@pytest.mark.parametrize(
    "fields, every_board",
    [
        (dict(width=3, height=4), True),
        (dict(width=3, height=3, top_out=True), True),
        (dict(width=4, height=4, no_holes=True), True),
        (dict(width=4, height=4, objective="combo"), True),
        (dict(width=4, height=4), False),
        (dict(width=5, height=3, pieces="tetrominoes"), False),
        (dict(width=4, height=4, pieces=["I", "L", "T", "O"]), False),
    ],
)
def test_the_compiled_search_equals_the_reference(fields, every_board):
    rules = Rules(moves="soft", **fields)
    boards = reachable_boards(rules)
    assert babytris.enumerate_boards(rules).n_boards == len(boards)
    for board in boards if every_board else boards[:: max(1, len(boards) // 400)]:
        for piece in range(rules.n_pieces):
            fast = sorted(engine(rules).successors(board, piece))
            slow = sorted((m.index, after, rows) for m, after, rows in reference_moves(rules, board, piece))
            assert fast == slow, (board, piece)


def test_exact_counts_and_values_at_4x4():
    soft, hard = babytris.solve(SOFT, tol=1e-12), babytris.solve(HARD, tol=1e-12)
    assert (soft.n_boards, soft.transitions.n_moves) == (12_978, 36_286)
    assert hard.transitions.n_moves == 35_280
    # The same boards (every board soft moves reach is reached by hard drops too, at 4x4) ...
    assert np.array_equal(soft.boards, hard.boards)
    # ... and more moves from them: an optimal player does at least as well everywhere.
    assert np.all(soft.values >= hard.values - 1e-9)
    assert soft.start_value == pytest.approx(9.139447815, abs=1e-8)
    assert float(soft.values.mean()) == pytest.approx(4.299967077, abs=1e-8)


def test_exact_counts_and_start_value_at_4x5():
    solution = babytris.solve(Rules(width=4, height=5, moves="soft"), tol=1e-12)
    assert (solution.n_boards, solution.transitions.n_moves) == (182_101, 512_972)
    assert solution.start_value == pytest.approx(10.383594279, abs=1e-8)  # hard drops: 10.380595451


def test_values_equal_the_reference_with_previews_and_hold():
    for fields in (dict(preview=1), dict(hold=True)):
        rules = Rules(width=3, height=4, moves="soft", **fields)
        fast = babytris.solve(rules, tol=1e-12)
        slow = reference.solve(rules, tol=1e-12)
        assert fast.start_value == pytest.approx(slow.start_value, abs=1e-9)


@pytest.mark.parametrize(
    "fields, words",
    [
        (dict(moves="sideways"), "moves must be one of 'hard', 'soft'"),
        (dict(moves=None), "moves must be one of"),
        (dict(moves="soft", mirror=True), "mirror: soft moves"),
    ],
)
def test_bad_moves_are_refused(fields, words):
    with pytest.raises(RulesError, match=words):
        Rules(width=4, height=4, **fields)


def test_lean_mode_refuses_soft_moves():
    with pytest.raises(ValueError, match="moves='soft'"):
        babytris.solve_lean(SOFT)


def test_a_saved_soft_solution_loads_as_soft(tmp_path):
    solution = babytris.solve(SOFT)
    solution.save(tmp_path / "soft.npz")
    again = babytris.load(tmp_path / "soft.npz")
    assert again.rules == SOFT and again.rules.moves == "soft"
    assert np.array_equal(again.values, solution.values)


def test_a_game_plays_soft_moves():
    game = Game(SOFT, seed=3)
    moves = game.moves()
    assert len(moves) == len(engine(SOFT).successors(game.board, game.piece))
    assert all(isinstance(m.placement, Placement) and m.placement.row is not None for m in moves)
    points = game.place(moves[-1].placement)
    assert points == moves[-1].points and game.placements == 1


def test_the_cli_solves_soft_moves(capsys):
    assert cli.main(["solve", "--moves", "soft", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rules"]["moves"] == "soft"
    assert (summary["boards"], summary["moves"]) == (12_978, 36_286)
    assert summary["start_value"] == pytest.approx(babytris.solve(SOFT).start_value, abs=1e-9)
    assert cli.main(["solve", "--moves", "sideways"]) == 2
    assert "--moves: invalid choice: 'sideways'" in capsys.readouterr().err


def test_the_lean_command_refuses_soft_moves(capsys):
    # (the lean mode solves hard drops only: asked for soft moves, it must not answer for hard ones)
    assert cli.main(["solve", "--mode", "lean", "--moves", "soft"]) != 0
    assert "moves='soft'" in capsys.readouterr().err


def test_a_soft_placement_draws_at_its_row_without_rules():
    tuck = babytris.solve(SOFT).best_action(LEDGE, "L")
    assert landing_cells(LEDGE, tuck) == {(1, 0), (2, 0), (2, 1)}  # rules from the placement: soft
