"""The compiled placement engine (hard drop, line clears) against the pure-Python reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import babytris
from babytris import CATALOGUE, Board, Piece, Rules, reference
from babytris.engine.placements import engine, placement_table

CUSTOM = {
    "monomino": [(0, 0)],
    "domino": [(0, 0), (1, 0)],
    "bar5": [(x, 0) for x in range(5)],
    "U": [(0, 0), (1, 0), (2, 0), (0, 1), (2, 1)],
    "plus": [(1, 0), (0, 1), (1, 1), (2, 1), (1, 2)],
}


def fits(cells, width: int, height: int) -> bool:
    return any(
        max(x for x, _ in s) < width and max(y for _, y in s) < height for s in Piece.from_cells(cells).orientations()
    )


def core_moves(rules: Rules, board: int, piece: int) -> list[tuple[int, int, int]]:
    return [(k, int(nb), int(n)) for k, nb, n in engine(rules).successors(board, piece)]


def reference_moves(rules: Rules, board: int, piece: int) -> list[tuple[int, int, int]]:
    return [(p.index, nb, n) for p, nb, n in reference.moves(rules, board, piece)]


def without_full_rows(bits: int, width: int, height: int) -> int:
    """The board with one cell of each full row emptied (a game never shows a full row)."""
    row = (1 << width) - 1
    for r in range(height):
        if bits >> (r * width) & row == row:
            bits &= ~(1 << (r * width + r % width))
    return bits


@st.composite
def geometries(draw, max_width: int = 16):
    """Rules with a random board size (up to 64 cells) and a random non-empty set of pieces that fit."""
    width = draw(st.integers(1, max_width))
    height = draw(st.integers(1, 64 // width))
    pool = [CATALOGUE[n].cells for n in CATALOGUE] + list(CUSTOM.values())
    pool = [cells for cells in pool if fits(cells, width, height)]
    chosen = draw(st.lists(st.sampled_from(range(len(pool))), min_size=1, max_size=4, unique=True))
    return Rules(width=width, height=height, pieces=[pool[i] for i in chosen])


@st.composite
def positions(draw):
    rules = draw(geometries())
    cells = rules.width * rules.height
    bits = draw(st.integers(0, 2**cells - 1) | st.just(0))
    # Also bottom-heavy boards, which look like real play: the lowest rows filled at random.
    if draw(st.booleans()):
        rows_filled = draw(st.integers(0, rules.height))
        bits &= (1 << (rows_filled * rules.width)) - 1
    bits = without_full_rows(bits, rules.width, rules.height)
    piece = draw(st.integers(0, rules.n_pieces - 1))
    return rules, bits, piece


# --------------------------------------------------------------------------
# Against the reference
# --------------------------------------------------------------------------


@pytest.mark.long
def test_all_reachable_4x4_boards_match_reference(rules_4x4, reference_boards_4x4):
    assert len(reference_boards_4x4) == 12978
    mismatches = [
        (b, p)
        for b in reference_boards_4x4
        for p in range(rules_4x4.n_pieces)
        if core_moves(rules_4x4, b, p) != reference_moves(rules_4x4, b, p)
    ]
    assert mismatches == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions())
def test_random_positions_match_reference(position):
    rules, board, piece = position
    assert core_moves(rules, board, piece) == reference_moves(rules, board, piece)


@pytest.mark.parametrize(
    "width, height, piece",
    [
        (64, 1, [(x, 0) for x in range(5)]),
        (63, 1, [(0, 0)]),
        (32, 2, [(0, 0), (1, 0), (1, 1)]),
        (21, 3, "L"),
        (16, 4, "T"),
        (8, 8, "S"),
        (1, 64, "I"),
    ],
)
def test_wide_and_64_cell_boards_match_reference(width, height, piece):
    """Boards using all 64 bits, or a row as wide as the word."""
    rules = Rules(width=width, height=height, pieces=[piece])
    rng = np.random.default_rng(width * 100 + height)
    boards = [0, (1 << width) - 2, 1 << (width * height - 1)]
    for _ in range(50):
        bits = int(rng.integers(0, 2**63, dtype=np.uint64)) | int(rng.integers(0, 2)) << 63
        bits &= (1 << (width * height)) - 1
        bits &= (1 << (int(rng.integers(0, height + 1)) * width)) - 1
        boards.append(without_full_rows(bits, width, height))
    for b in boards:
        assert core_moves(rules, b, 0) == reference_moves(rules, b, 0), Board(b, width, height)


def test_64_wide_row_fills_without_clearing():
    """On a 64-wide board one domino fills 2 of 64 cells: no row is full."""
    rules = Rules(width=64, height=1, pieces=[[(0, 0), (1, 0)]])
    moves = core_moves(rules, 0, 0)
    assert len(moves) == 63
    assert moves[0] == (0, 0b11, 0)
    assert all(n == 0 for _, _, n in moves)


# --------------------------------------------------------------------------
# Hand-made positions
# --------------------------------------------------------------------------


def find(rules: Rules, piece: str, rotation: int, column: int) -> int:
    """Placement number of (rotation, column) for a piece."""
    p = rules.piece_index(piece)
    (k,) = [m.index for m in placement_table(rules).placements[p] if (m.rotation, m.column) == (rotation, column)]
    return k


def test_empty_board_placement_counts(rules_4x4):
    assert len(core_moves(rules_4x4, 0, rules_4x4.piece_index("I"))) == 6
    assert len(core_moves(rules_4x4, 0, rules_4x4.piece_index("L"))) == 12
    for width in (4, 5, 6):
        rules = Rules(width=width, height=4)
        assert len(core_moves(rules, 0, 0)) == (width - 2) + width
        assert len(core_moves(rules, 0, 1)) == 4 * (width - 1)
        assert all(n == 0 for p in range(2) for _, _, n in core_moves(rules, 0, p))


def test_placement_numbers_are_rotation_major(rules_4x4):
    table = placement_table(rules_4x4)
    i_moves = table.placements[0]
    assert [(m.rotation, m.column) for m in i_moves] == [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (1, 3)]
    assert [m.index for m in i_moves] == list(range(6))
    assert all(m.piece == "I" for m in i_moves)
    # horizontal I at column 1 on the empty board: cells (1..3, 0)
    assert (1, 0b1110, 0) in core_moves(rules_4x4, 0, 0)


def test_single_line_clear(rules_4x4):
    board = Board.from_rows(["###."], height=4)
    after = Board.from_rows(["...#", "...#"], height=4)  # the I's upper two cells fall one row
    k = find(rules_4x4, "I", 1, 3)
    assert (k, int(after), 1) in core_moves(rules_4x4, int(board), 0)
    # the horizontal I lands on top instead, no clear
    assert (0, int(Board.from_rows(["###.", "###."], height=4)), 0) in core_moves(rules_4x4, int(board), 0)


def test_double_and_triple_line_clear(rules_4x4):
    k = find(rules_4x4, "I", 1, 3)
    two = Board.from_rows(["###.", "###."], height=4)
    assert (k, int(Board.from_rows(["...#"], height=4)), 2) in core_moves(rules_4x4, int(two), 0)
    three = Board.from_rows(["###.", "###.", "###."], height=4)
    assert (k, 0, 3) in core_moves(rules_4x4, int(three), 0)


def test_clear_in_the_middle_keeps_rows_above_and_below():
    rules = Rules(width=4, height=5)
    board = Board.from_rows(["#...", "##..", ".###"], height=5)
    # L as drawn ("#." over "##") at column 2 rests on row 0 and completes row 1;
    # row 2 ("#..." plus the L's top cell) falls onto row 1, row 0 stays.
    assert CATALOGUE["L"].cells == ((0, 0), (1, 0), (0, 1))
    after = Board.from_rows(["#.#.", ".###"], height=5)
    assert (find(rules, "L", 0, 2), int(after), 1) in core_moves(rules, int(board), 1)


def test_no_sliding_under_an_overhang():
    rules = Rules(width=4, height=5)
    board = Board.from_rows(["##..", ".#.."], height=5)  # (0, 0) is covered by (0, 1)
    for p in range(rules.n_pieces):
        moves = core_moves(rules, int(board), p)
        assert moves
        for _, nb, _ in moves:
            assert not Board(nb, 4, 5).filled(0, 0)
    # the upright I in column 0 rests on the overhang
    k = find(rules, "I", 1, 0)
    expected = Board.from_rows(["#...", "#...", "#...", "##..", ".#.."])
    assert (k, int(expected), 0) in core_moves(rules, int(board), 0)


def test_flat_piece_cannot_enter_a_tunnel_from_the_side():
    rules = Rules(width=4, height=4, pieces=["I"])
    board = Board.from_rows(["....", "###.", "....", "...."])  # a roof over rows 0 and 1
    under_roof = int(Board.from_rows(["###.", "###."], height=4))
    moves = core_moves(rules, int(board), 0)
    assert all(nb & under_roof == 0 for _, nb, _ in moves)
    # flat on the roof at columns 0 and 1; upright in columns 0-2 would stick out of the top
    assert sorted(k for k, _, _ in moves) == [0, 1, find(rules, "I", 1, 3)]
    # the upright I in column 3 drops to the floor and completes row 2
    assert (find(rules, "I", 1, 3), int(Board.from_rows(["...#", "...#"], height=4)), 1) in moves


def test_game_over_on_a_full_board():
    rules = Rules(width=4, height=4)
    board = Board.from_rows([".#.#", "#.#.", "#.#.", "#.#."])  # only two lone cells left at the top
    assert core_moves(rules, int(board), 0) == []
    assert core_moves(rules, int(board), 1) == []
    assert reference_moves(rules, int(board), 0) == [] and reference_moves(rules, int(board), 1) == []


def test_piece_must_end_inside_the_board():
    rules = Rules(width=4, height=4)
    board = Board.from_rows([".##.", ".##.", ".##.", ".##."])
    moves = core_moves(rules, int(board), 0)
    # only upright I's in columns 0 and 3 fit; a flat I would rest above the top
    assert sorted(k for k, _, _ in moves) == sorted([find(rules, "I", 1, 0), find(rules, "I", 1, 3)])
    assert core_moves(rules, int(board), 1) == []


def test_successors_rejects_bad_piece(rules_4x4):
    e = engine(rules_4x4)
    assert e.n_pieces == 2
    with pytest.raises(ValueError):
        e.successors(0, 2)
    with pytest.raises(ValueError):
        e.successors(0, -1)


# --------------------------------------------------------------------------
# Corrupted move tables: a clear error, never a crash (issue 18)
# --------------------------------------------------------------------------


def _corrupt(t, field, index, value):
    array = getattr(t, field).copy()
    array[index] = value
    return dataclasses.replace(t, **{field: array})


@pytest.mark.parametrize(
    "field, index, value, words",
    [
        ("offsets", 1000, 10**9, "offsets: must rise from 0"),
        ("offsets", 1000, 0, r"offsets\[1000\] = 0 is below"),
        ("offsets", 0, 1, "offsets: must rise from 0"),
        ("next_board", 7, 12978, "next_board: move 7 leads to row 12978"),
        ("next_board", 7, -1, "next_board: move 7 leads to row -1"),
        ("lines", 3, 4, "lines: a move clears more than the 3 rows"),
        ("placement", 3, 60, "placement: a placement number outside"),
        ("boards", 5, 2**20, "boards: a board has cells beyond the 16"),
    ],
)
def test_a_corrupted_table_is_refused_before_any_compiled_loop(transitions_4x4, field, index, value, words):
    """The issue's repro: `o[1000] = 10**9` on the offsets crashed solve_transitions (exit 139)."""
    with pytest.raises(ValueError, match=words):
        babytris.solve_transitions(_corrupt(transitions_4x4, field, index, value))
    with pytest.raises(ValueError, match=words):
        babytris.long_run_rate(_corrupt(transitions_4x4, field, index, value))


def test_a_table_cannot_be_edited_in_place(transitions_4x4):
    with pytest.raises(ValueError, match="read-only"):
        transitions_4x4.offsets[1000] = 10**9
    with pytest.raises(ValueError, match="read-only"):
        transitions_4x4.next_board[0] = -5


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("offsets", np.zeros(5, dtype=np.int32), "offsets: 5 entries"),
        ("offsets", np.zeros(25_957, dtype=np.int64), "offsets: must be a 1-d int32 array, got int64"),
        ("next_board", np.zeros(3, dtype=np.int64), "next_board: must be a 1-d int32 array"),
        ("lines", [0, 1], "lines: must be a 1-d uint8 array, got list"),
    ],
)
def test_wrong_shapes_and_dtypes_are_refused(transitions_4x4, field, value, words):
    with pytest.raises(ValueError, match=words):
        dataclasses.replace(transitions_4x4, **{field: value})


def test_the_sweeper_range_checks_what_it_is_given(transitions_4x4):
    from babytris.solvers import _sweep

    t = transitions_4x4
    n, P = t.n_boards, t.rules.n_pieces
    order = np.arange(n, dtype=np.int32)
    starts = np.array([0, n], dtype=np.int64)

    def sweeper(offsets, next_board, policy=None):
        return _sweep.Sweeper(
            offsets,
            next_board,
            np.ascontiguousarray(t.lines),
            np.asarray(t.rules.line_scores),
            np.asarray(t.rules.probabilities),
            0.9,
            np.zeros(n * P),
            np.zeros(n),
            np.full(n * P, -1, dtype=np.int16) if policy is None else policy,
            order,
            starts,
        )

    offsets = t.offsets.copy()
    offsets[1000] = 0
    with pytest.raises(ValueError, match=r"offsets must not decrease; offsets\[1000\]"):
        sweeper(offsets, t.next_board.copy())
    next_board = t.next_board.copy()
    next_board[9] = n
    with pytest.raises(ValueError, match=r"next_board\[9\] = 12978 is outside"):
        sweeper(t.offsets.copy(), next_board)
    # The evaluation sweeps read each state's move through the policy: it must be one of its row's.
    policy = np.full(n * P, -1, dtype=np.int16)
    policy[5] = t.offsets[6] - t.offsets[5]
    with pytest.raises(ValueError, match=r"policy\[5\] = \d+ is not a move of its state"):
        sweeper(t.offsets.copy(), t.next_board.copy(), policy)
    # (the checks compare as unsigned: negatives must wrap to the top, not pass)
    policy[5] = -2
    with pytest.raises(ValueError, match=r"policy\[5\] = -2 is not a move of its state"):
        sweeper(t.offsets.copy(), t.next_board.copy(), policy)
    next_board = t.next_board.copy()
    next_board[-1] = -1
    with pytest.raises(ValueError, match=rf"next_board\[{t.n_moves - 1}\] = -1 is outside"):
        sweeper(t.offsets.copy(), next_board)
    offsets = t.offsets.copy()
    offsets[7] = -(2**31)  # (a fall from which the next count would overflow 32 bits)
    with pytest.raises(ValueError, match=r"offsets must not decrease; offsets\[7\]"):
        sweeper(offsets, t.next_board.copy())
    lines = np.ascontiguousarray(t.lines).copy()
    lines[3] = len(t.rules.line_scores)
    with pytest.raises(ValueError, match=rf"lines\[3\] = {len(t.rules.line_scores)}: a move clears more rows than"):
        _sweep.Sweeper(
            t.offsets, t.next_board, lines, np.asarray(t.rules.line_scores), np.asarray(t.rules.probabilities),
            0.9, np.zeros(n * P), np.zeros(n), np.full(n * P, -1, dtype=np.int16), order, starts,
        )  # fmt: skip
    assert sweeper(t.offsets.copy(), t.next_board.copy()).greedy_sweep() > 0
