"""Memory budget: work that would not fit is refused early, with an estimate."""

from __future__ import annotations

import re

import numpy as np
import pytest

import babytris
from babytris import MemoryLimitError, Rules
from babytris.engine import resources

GIB = re.compile(r"\d+(\.\d+)? GiB")


def test_memory_limit_error_is_a_memory_error():
    assert issubclass(MemoryLimitError, MemoryError)
    assert babytris.DEFAULT_MAX_MEMORY >= 2**30


def test_solve_8x8_refused():
    with pytest.raises(MemoryLimitError) as info:
        babytris.solve(width=8, height=8, max_memory=2**24)
    message = str(info.value)
    assert GIB.search(message), message
    assert "8x8" in message and "max_memory" in message


def test_enumerate_8x8_refused():
    with pytest.raises(MemoryLimitError) as info:
        babytris.enumerate_boards(Rules(width=8, height=8), max_memory=2**24)
    assert GIB.search(str(info.value))


def test_4x5_refused_under_a_small_budget_accepted_under_a_larger_one():
    rules = Rules(width=4, height=5)
    with pytest.raises(MemoryLimitError):
        babytris.solve(rules, max_memory=2**20)
    s = babytris.solve(rules, max_memory=2**30)
    assert s.n_boards == 182_101


@pytest.mark.parametrize("rules", [Rules(width=4, height=4), Rules(width=4, height=5), Rules(width=5, height=3)])
def test_an_accepted_solve_stays_within_budget(rules):
    outcomes = []
    for exponent in range(20, 28):
        budget = 2**exponent
        try:
            s = babytris.solve(rules, max_memory=budget)
        except MemoryLimitError:
            outcomes.append(False)
            continue
        outcomes.append(True)
        assert s.nbytes <= budget
        assert s.transitions.nbytes <= budget
    # the budget is monotone: once accepted, every larger budget is accepted too
    assert outcomes == sorted(outcomes)
    assert outcomes[-1]


@pytest.mark.parametrize("bad", [2**20 - 1, 0, -(2**30), 2.0**30, "1073741824", None, True])
def test_bad_max_memory(bad):
    with pytest.raises(ValueError, match="max_memory"):
        babytris.solve(width=3, height=3, max_memory=bad)
    with pytest.raises(ValueError, match="max_memory"):
        babytris.enumerate_boards(Rules(width=3, height=3), max_memory=bad)


def test_smallest_budget_accepted_for_a_tiny_game():
    assert babytris.solve(width=3, height=3, max_memory=2**20).n_boards == 34
    assert babytris.solve(width=3, height=3, max_memory=np.int64(2**20)).n_boards == 34


def test_a_board_far_over_budget_is_refused_before_the_search():
    """6x8 used to search for 15 s and 3.4 GiB before the guard refused it."""
    with pytest.raises(MemoryLimitError, match=r"refused before the search") as err:
        babytris.enumerate_boards(Rules(width=6, height=8))
    forecast = int(re.search(r"about ([\d,]+) boards", str(err.value)).group(1).replace(",", ""))
    assert forecast > 10**12


def test_the_forecast_counts_the_moves_too():
    from babytris.engine.enumeration import forecast_table

    small = babytris.enumerate_boards(Rules(width=4, height=5))
    boards, moves = forecast_table(Rules(width=4, height=8))
    assert boards == int(182101 * (182101 / 12978) ** 3)
    assert moves == int(boards * small.n_moves / small.n_boards)  # 2.72 moves a board at every height measured


def test_the_forecast_extrapolates_the_growth_per_row_of_the_known_counts():
    from babytris.engine.enumeration import forecast_boards

    # 4 wide: 12,978 boards at height 4 and 182,101 at height 5 (the published counts)
    assert forecast_boards(Rules(width=4, height=8)) == int(182101 * (182101 / 12978) ** 3)
    # 28 cells: forecast too (35,852,665 against the 35.7 million found), so a budget refuses it before the search
    assert forecast_boards(Rules(width=4, height=7)) == int(182101 * (182101 / 12978) ** 2)
    assert forecast_boards(Rules(width=4, height=6)) is None  # 24 cells: searched, no forecast


def test_a_thirty_cell_board_over_the_budget_is_refused_before_its_search():
    """5x6 under 1 GiB was refused only after a search of 72 million boards (13-119 s)."""
    from babytris.modes.lean import solve_lean

    with pytest.raises(babytris.MemoryLimitError, match="forecast"):
        babytris.enumerate_boards(Rules(width=5, height=6), max_memory=2**30)
    with pytest.raises(babytris.MemoryLimitError, match="forecast"):
        solve_lean(width=5, height=6, max_memory=2**30)


@pytest.mark.parametrize(
    "make, width, height",
    [("block_drop", 6, 10), ("block_drop", 7, 9), ("block_drop", 8, 8), ("no_holes_tetris", 6, 6)],
)
def test_the_forecast_of_column_heights_is_kept_to_their_number(make, width, height):
    """Boards without holes (one-cell blocks, no_holes) grow slower than any power of the rows: the
    forecast is at most the column heights' count, (height + 1) ** width, and the lost board; these
    seed models were refused before the search as needing 8.3 GiB to 1.5e8 GiB."""
    from babytris.engine.enumeration import forecast_table
    from babytris.solvers import models

    rules = getattr(models, make)(width=width, height=height).rules
    boards, moves = forecast_table(rules)
    assert boards <= (height + 1) ** width + 1
    assert resources.table_bytes(rules, boards, moves) < resources.DEFAULT_MAX_MEMORY


def test_the_forecast_of_boards_with_holes_is_not_capped():
    """Standard pieces leave holes at every height searched: 6x8 keeps its forecast of over 10**12 boards."""
    from babytris.engine.enumeration import _column_heights

    assert not _column_heights(babytris.enumerate_boards(Rules(width=6, height=3)))
    assert _column_heights(babytris.enumerate_boards(Rules(width=6, height=3, pieces=[[(0, 0)]])))


def test_offsets_past_2_31_moves_are_refused_for_the_lean_mode():
    """The table's offsets are int32: counts summing past them are refused, not wrapped."""
    from babytris.engine.transitions import MAX_MOVES, offsets_from_counts

    offsets = offsets_from_counts(np.array([MAX_MOVES - 1, 1, 0]))
    assert offsets.dtype == np.int32 and offsets.tolist() == [0, MAX_MOVES - 1, MAX_MOVES, MAX_MOVES]
    with pytest.raises(MemoryLimitError, match=r"2,147,483,648 moves: a move table holds at most .*lean mode"):
        offsets_from_counts(np.array([MAX_MOVES, 1]))


class _EngineFindingTooManyMoves:
    """An engine whose search reports 2**31 + 7 moves (too many for int32 offsets)."""

    def enumerate(self, *args, **kwargs):
        return (-5, 1_000, 2**31 + 7), None, None, None, None, None, None


def test_an_enumeration_past_2_31_moves_is_refused_and_the_cli_goes_lean(monkeypatch, capsys):
    import importlib

    from babytris.cli import commands as cli

    enumeration = importlib.import_module("babytris.engine.enumeration")
    monkeypatch.setattr(enumeration, "engine", lambda rules: _EngineFindingTooManyMoves())
    with pytest.raises(MemoryLimitError, match=r"4x4: 2,147,483,655 moves: a move table holds at most"):
        babytris.enumerate_boards(Rules(width=4, height=4))
    assert cli.main(["solve", "--width", "4", "--height", "4"]) == 0
    out = capsys.readouterr().out
    assert "lean" in out and "2,147,483,655 moves" in out


# --- Work that grows with an argument, refused before it starts (issue 38.5) ---------------------


def test_big_samples_and_fits_are_refused_before_they_start():
    from babytris.big import Tetris, fitted_value_iteration, sample_boards
    from babytris.big.fitted import fitted_bytes
    from babytris.big.games import game_model
    from babytris.big.playouts import sample_bytes

    tetris = Tetris()
    with pytest.raises(MemoryLimitError, match=r"n: 1,000,000,000 boards of 10x20 need about 162\.\d\d GiB"):
        sample_boards(tetris, 10**9)
    with pytest.raises(MemoryLimitError, match="n_samples: 100,000,000 boards"):
        fitted_value_iteration(tetris, n_samples=10**8)
    # the budget is the caller's: just under the estimate refuses, at it plays
    need = sample_bytes(tetris, 20_000)
    with pytest.raises(MemoryLimitError):
        sample_boards(tetris, 20_000, max_memory=need - 1)
    assert len(sample_boards(tetris, 20_000, max_memory=need)) == 20_000
    need = fitted_bytes(game_model(tetris), 4, 1000)  # the constant and the default three features
    with pytest.raises(MemoryLimitError):
        fitted_value_iteration(tetris, n_samples=1000, max_memory=need - 1)
    assert fitted_value_iteration(tetris, n_samples=1000, max_memory=need, max_iter=2).n_samples == 1000


def test_play_pictures_of_many_placements_are_refused_before_the_game(tmp_path, capsys):
    from babytris.cli import commands as cli

    gif = tmp_path / "game.gif"
    assert cli.main(["play", "--placements", "100000", "--gif", str(gif), "--quiet"]) == cli.EXIT_OVER_MEMORY
    err = capsys.readouterr().err
    assert err.startswith("babytris play: error: --placements") and "100,001 frames" in err, err
    assert err.count("\n") == 1 and not gif.exists()


def test_wide_boards_and_previews_with_hold_are_refused_before_their_search():
    """8x8 was refused after 135 s and 3.4 GiB of search, 4x7 with preview 2 and hold after its
    35.7 million boards were searched (39 s): both now from the forecast, before the search."""
    from babytris.engine.enumeration import forecast_table

    assert forecast_table(Rules(width=8, height=8)) is not None  # from 8x3 and 8x2 (8x1 fits no piece)
    with pytest.raises(MemoryLimitError, match="refused before the search"):
        babytris.enumerate_boards(Rules(width=8, height=8))
    with pytest.raises(MemoryLimitError, match=r"preview=2, hold=True: about 35,852,665 boards \(forecast"):
        babytris.enumerate_boards(Rules(width=4, height=7, preview=2, hold=True))


def test_a_refusal_during_the_search_says_what_would_be_held():
    """The search stops before allocating past the budget: its message gives that projection as
    what the search and table would hold, not as memory already held."""
    with pytest.raises(MemoryLimitError) as refused:
        babytris.enumerate_boards(Rules(width=4, height=6), max_memory=2**22)
    assert "would hold" in str(refused.value) and "already" not in str(refused.value)


def test_a_tournament_counts_the_solutions_it_keeps_before_its_search():
    """A 5x6 tournament searched 135 million boards (13-55 s) before its refusal: every player's and
    opponent's solution is kept to the end, which the forecast now counts first."""
    with pytest.raises(MemoryLimitError, match="refused before the search"):
        babytris.standard_tournament(width=5, height=6)


I5 = [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)]  # a pentomino, 5 tall standing up


def test_a_piece_standing_up_is_forecast_from_rows_where_it_stands(monkeypatch):
    """8x8 with a 1x5 piece was forecast from 8x2 and 8x1 (115,269 boards: the piece lying down only),
    then searched for 30 s and 3.5 GiB before it was refused.  Its forecast is now from 8x6 and 8x5,
    where the piece also stands (362,441 and 14,963 boards, searched exactly), and the solve is
    refused before its search: no search of 8x8 runs here (it would fail this test)."""
    from babytris.engine import enumeration

    rules = Rules(width=8, height=8, pieces=[I5])
    assert [babytris.enumerate_boards(Rules(width=8, height=h, pieces=[I5])).n_boards for h in (6, 5)] == [
        362_441,
        14_963,
    ]
    boards, moves = enumeration.forecast_table(rules)
    assert boards == int(362_441 * (362_441 / 14_963) ** 2)  # 212 million
    searched = enumeration._engine_table

    def no_search_of_8x8(rules, *args, **kwargs):
        assert rules.height < 8, "the 8x8 board was searched before its refusal"
        return searched(rules, *args, **kwargs)

    monkeypatch.setattr(enumeration, "_engine_table", no_search_of_8x8)
    for refused in (lambda: babytris.enumerate_boards(rules), lambda: babytris.solve(rules)):
        with pytest.raises(MemoryLimitError, match=r"about 212,\d{3},\d{3} boards .* refused before the search"):
            refused()
    # A T pentomino: 209 boards at 8x3, 1,763 at 8x4 (forecast 8.9 million from them), and 8x5's search stopped
    # at FORECAST_BUDGET with millions found: a floor of its growth, forecast over 10**16.
    t = Rules(width=8, height=8, pieces=[[(1, 0), (1, 1), (0, 2), (1, 2), (2, 2)]])
    with pytest.raises(MemoryLimitError, match="refused before the search") as err:
        babytris.solve(t)
    assert int(re.search(r"about ([\d,]+) boards", str(err.value)).group(1).replace(",", "")) > 10**16


def test_the_forecast_keeps_to_the_cheap_rows_when_the_standing_rows_are_too_many(monkeypatch):
    """Where the rows a piece stands in hold more boards than FORECAST_BUDGET (8x4 with trominoes),
    the forecast is from the rows of FORECAST_CELLS cells (8x3 and 8x2), as before."""
    from babytris.engine import enumeration

    monkeypatch.setattr(enumeration, "FORECAST_BUDGET", 2**20)
    low = [babytris.enumerate_boards(Rules(width=8, height=h)).n_boards for h in (3, 2)]
    boards, _ = enumeration.forecast_table(Rules(width=8, height=8))
    assert boards == int(low[0] * (low[0] / low[1]) ** 5)
