"""Solution.policy_table and babytris solve --policy-csv: the policy as rows a
report can use, checked against the Solution's own lookups."""

from __future__ import annotations

import csv
import json
import sys

import numpy as np
import pytest

import babytris
from babytris import Board, Rules
from babytris.cli import commands as cli
from babytris.results.tables import board_rows, policy_array, policy_table


@pytest.fixture(scope="module")
def solution():
    return babytris.solve(width=4, height=4)


def test_every_row_agrees_with_the_lookups(solution):
    table = policy_array(solution)
    assert len(table) == solution.n_states == 25_956
    rng = np.random.default_rng(0)
    for i in rng.choice(len(table), 300, replace=False):
        row = table[i]
        board = Board.from_rows(str(row["rows"]).split("/"), height=4)
        assert int(board) == int(row["board"])
        assert row["value"] == solution.value(board, str(row["piece"]))
        best = solution.best_action(board, str(row["piece"]))
        if best is None:
            assert (row["rotation"], row["column"], row["placement"]) == (-1, -1, -1)
        else:
            assert (row["rotation"], row["column"], row["placement"]) == (best.rotation, best.column, best.index)


def test_the_board_text_is_drawn_top_row_first():
    board = Board.from_rows(["#...", "##.#"], height=4)
    assert board_rows(np.array([int(board)], dtype=np.uint64), 4, 4).tolist() == ["..../..../#.../##.#"]


def test_a_dataframe_when_pandas_is_there(solution, monkeypatch):
    pandas = pytest.importorskip("pandas")
    frame = policy_table(solution)
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == [
        "board", "rows", "piece", "rotation", "column", "value", "placement", "drawn", "chance"
    ]  # fmt: skip
    assert frame["value"].mean() == pytest.approx(4.151086, abs=1e-6)
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    assert isinstance(solution.policy_table(), np.ndarray)


def test_soft_moves_previews_and_hold_get_their_columns():
    soft = policy_array(babytris.solve(Rules(width=3, height=4, moves="soft")))
    assert "row" in soft.dtype.names and soft["row"].max() >= 0
    preview = babytris.solve(width=3, height=4, preview=1)
    table = policy_array(preview)
    # node (board, queue (q,)) with drawn piece d: places q, then sees d
    i = 5
    node, drawn = divmod(i, 2)
    q = int(preview.transitions.queues[node])
    assert table["piece"][i] == preview.rules.piece_names[q] and table["queue"][i] == preview.rules.piece_names[drawn]
    hold = policy_array(babytris.solve(width=3, height=4, hold=True))
    assert {"held", "locked", "hold", "placed"} <= set(hold.dtype.names)
    assert hold["hold"].any() and (hold["placed"][hold["hold"]] == "").all()
    assert ((hold["placed"] != hold["piece"]) & ~hold["hold"] & (hold["placement"] >= 0)).any()  # swaps


def test_a_random_player_has_no_move_and_the_opponent_its_choice():
    s = babytris.solve(width=3, height=4, opponent="minavg")
    table = policy_array(s)
    assert (table["placement"] == -1).all() and (table["rotation"] == -1).all()
    assert table["value"].tolist() == s.values.ravel().tolist()
    names = np.array(s.rules.piece_names)
    assert table["gives"].tolist() == np.repeat(names[s.opponent_policy], 2).tolist()


@pytest.mark.parametrize("preview", [0, 1])
@pytest.mark.parametrize("opponent", ["random", "minimax", "gaps"])
def test_both_sides_in_every_timing(preview, opponent):
    """The chance column is each row's piece distribution: the rules'
    probabilities, or the opponent's choice (1 for the piece it gives, which
    with previews is the one that joins the queue)."""
    s = babytris.solve(width=3, height=4, preview=preview, opponent=opponent)
    table = policy_array(s)
    chance = table["chance"].reshape(s.n_boards, 2)
    assert np.allclose(chance.sum(axis=1), 1.0)
    if opponent == "random":
        assert "gives" not in table.dtype.names
        assert np.allclose(chance, s.rules.probabilities)
    else:
        given = table["gives"].reshape(s.n_boards, 2)
        assert (given[:, 0] == given[:, 1]).all()
        assert (table["drawn"][table["chance"] == 1.0] == table["gives"][table["chance"] == 1.0]).all()
        assert chance.argmax(axis=1).tolist() == s.opponent_policy.tolist()
        if preview:  # the drawn piece is the queue's last: the one the opponent named before the placement
            assert (table["queue"] == table["drawn"]).all()
    # the row's value before its piece is the Solution's board value
    assert np.allclose((s.values * chance).sum(axis=1), s.board_values)


def test_the_cli_writes_the_policy_as_csv(tmp_path, capsys, solution):
    path = tmp_path / "policy.csv"
    assert cli.main(["solve", "--policy-csv", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["policy_csv"] == str(path)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 25_956
    first = policy_array(solution)[0]
    assert rows[0]["rows"] == first["rows"] and float(rows[0]["value"]) == first["value"]
    assert cli.main(["solve", "--policy-csv", str(tmp_path / "no" / "p.csv")]) != 0
    assert "--policy-csv: no directory" in capsys.readouterr().err
    assert cli.main(["solve", "--mode", "lean", "--policy-csv", str(path)]) != 0
    assert "--policy-csv: a lean solution holds board values only" in capsys.readouterr().err


@pytest.mark.parametrize(
    "options", [dict(), dict(hold=True, preview=1), dict(randomizer="bag", hold=True), dict(opponent="minavg")]
)
def test_a_table_built_in_slices_is_the_table_built_whole(monkeypatch, options):
    # issue 47: the table is built in slices (for Ctrl-C); uneven ones, cut across boards, change nothing
    from babytris.results import tables

    solution = babytris.solve(width=4, height=4, **options)
    whole = policy_array(solution)
    monkeypatch.setattr(tables, "SLICE_STATES", 97)
    sliced = policy_array(solution)
    assert sliced.dtype == whole.dtype and len(sliced) == len(whole) > 97 * 100
    for name in whole.dtype.names:
        assert np.array_equal(sliced[name], whole[name]), name
