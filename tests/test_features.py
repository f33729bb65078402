"""Board features equal a plain-Python computation, cell by cell, on random boards."""

import numpy as np
import pytest

import babytris
from babytris.big import features as F


def plain(rows, width):
    """Every feature of one board by loops over its cells (row 0 at the bottom)."""
    height = len(rows)
    filled = [[bool(rows[r] >> c & 1) for c in range(width)] for r in range(height)]
    heights = [max([r + 1 for r in range(height) if filled[r][c]], default=0) for c in range(width)]
    holes = sum(1 for c in range(width) for r in range(heights[c]) if not filled[r][c])
    covers = sum(
        1
        for c in range(width)
        for r in range(height)
        if filled[r][c] and any(not filled[below][c] for below in range(r))
    )

    def solid(r, c):
        return c < 0 or c >= width or filled[r][c]

    def well_cell(r, c):
        return not filled[r][c] and solid(r, c - 1) and solid(r, c + 1)

    well_runs = 0
    for c in range(width):
        depth = 0
        for r in range(height - 1, -1, -1):
            depth = depth + 1 if well_cell(r, c) else 0
            well_runs += depth
    # mdptetris's get_well_sums_dellacherie: each well cell below the stack's top counts
    # itself and the empty cells under it, down to the first filled one
    wells = 0
    for c in range(width):
        for r in range(max(heights)):
            if well_cell(r, c):
                wells += 1
                below = r - 1
                while below >= 0 and not filled[below][c]:
                    wells += 1
                    below -= 1
    row_transitions = sum(solid(r, c) != solid(r, c + 1) for r in range(height) for c in range(-1, width))
    open_top = sum((filled[r - 1][c] if r else True) != filled[r][c] for c in range(width) for r in range(height))
    return {
        "heights": heights,
        "max_height": max(heights),
        "holes": holes,
        "covers": covers,
        "differences": [abs(heights[c + 1] - heights[c]) for c in range(width - 1)],
        "well_runs": well_runs,
        "wells": wells,
        "row_transitions": row_transitions,
        "column_transitions_open_top": open_top,
        # the row above the board is empty (mdptetris's empty_row): a filled top cell is one more
        "column_transitions": open_top + sum(filled[height - 1]),
        "filled": sum(map(sum, filled)),
    }


def random_boards(n, width, height, seed):
    rng = np.random.default_rng(seed)
    # Stacks with a ragged top and some holes, and plain noise.
    rows = rng.integers(0, 1 << width, size=(n, height), dtype=np.uint32)
    tops = rng.integers(0, height + 1, size=n)
    rows[np.arange(height)[None, :] >= tops[:, None]] = 0
    return rows


@pytest.mark.parametrize("width, height", [(4, 4), (5, 6), (10, 20), (1, 3), (16, 8)])
def test_features_equal_plain_python(width, height):
    rows = random_boards(200, width, height, seed=width * 100 + height)
    expected = [plain(list(map(int, board)), width) for board in rows]
    assert F.column_heights(rows, width).tolist() == [e["heights"] for e in expected]
    assert F.height_differences(rows, width).tolist() == [e["differences"] for e in expected]
    for name, function in F.BOARD_FEATURES.items():
        if name == "bumpiness":
            assert function(rows, width).tolist() == [sum(e["differences"]) for e in expected]
        else:
            assert function(rows, width).tolist() == [e[name] for e in expected], name


def test_rows_from_bits_and_the_exact_engines_boards():
    rules = babytris.Rules(width=4, height=5)
    boards = babytris.enumerate_boards(rules).boards[::997]
    rows = F.rows_from_bits(boards, 4, 5)
    for bits, board_rows in zip(boards, rows):
        board = babytris.Board(int(bits), 4, 5)
        assert board.column_heights() == F.column_heights(board_rows, 4)[0].tolist()
        assert [int(r) for r in board_rows] == [int(bits) >> (4 * r) & 15 for r in range(5)]
    assert F.holes(rows, 4).tolist() == babytris.engine.reward.holes(boards, 4, 5).tolist()
    assert F.max_height(rows, 4).tolist() == babytris.engine.reward.heights(boards, 4, 5).tolist()


def test_move_features():
    # An L landing on rows 1-2 of a 4-wide board, completing row 1 with two of its cells.
    before = np.array([[0b1111 ^ 0b0001, 0b1100, 0, 0]], dtype=np.uint32)
    piece = np.array([[0, 0b0011, 0b0001, 0]], dtype=np.uint32)
    placed = before | piece
    assert F.landing_height(piece).tolist() == [1.5]  # bottom row 1 + (2 - 1) / 2, rows from 0 (mdptetris)
    assert F.eroded_cells(placed, piece, 4).tolist() == [1 * 2]
    assert F.eroded_cells(before, np.zeros_like(piece), 4).tolist() == [0]


def test_feature_matrix():
    rows = random_boards(50, 6, 7, seed=3)
    X = F.feature_matrix(rows, 6, ["max_height", "heights", "differences", "holes"])
    assert X.shape == (50, 1 + 1 + 6 + 5 + 1) and (X[:, 0] == 1).all()
    assert X[:, -1].tolist() == F.holes(rows, 6).tolist()
    with pytest.raises(ValueError, match="unknown feature 'height'"):
        F.feature_matrix(rows, 6, ["height"])


@pytest.mark.parametrize(
    "rows, width, words",
    [
        (np.array([[16]]), 4, "bitmask"),
        (np.zeros((2, 3), dtype=float), 4, "integer array"),
        (np.zeros((2, 3), dtype=np.uint32), 0, "width"),
    ],
)
def test_bad_input(rows, width, words):
    with pytest.raises(ValueError, match=words):
        F.max_height(rows, width)


def board(picture: list[str]) -> np.ndarray:
    """Row bitmasks of a picture drawn top row first, '#' or 'X' filled."""
    return np.array(
        [[sum(1 << c for c, ch in enumerate(line) if ch in "#X") for line in reversed(picture)]], dtype=np.uint32
    )


def test_wells_of_mdptetris_own_example():
    """The board of get_well_sums_dellacherie's documentation: 9 well cells
    worth 6 (column 0), 1, 1 and 12 (column 6), 20 in all."""
    picture = [
        "........",
        "........",
        "...X....",
        "...XX...",
        ".X.XX...",
        ".XXXXX.X",
        ".XXXXX.X",
        "XXXXX..X",
        "...XXX.X",
        "X.X..X.X",
    ]
    rows = board(picture)
    assert F.wells(rows, 8).tolist() == [20]
    # the runs of well cells alone: column 0 a run of 3 (6), columns 1 and 2 one each, column 6
    # runs of 2 (rows 5, 6 from the top: 1 + 2) and 2 (rows 8, 9: 1 + 2)
    assert F.well_runs(rows, 8).tolist() == [6 + 1 + 1 + 3 + 3]


def test_dellacherie_features_on_hand_drawn_boards():
    # 4 wide, 5 high, drawn top row first; the walls count as filled
    rows = board(
        [
            "....",
            "#...",
            "#.#.",
            "##.#",
            "#.##",
        ]
    )
    # bottom up: #.## 2 changes, ##.# 2, #.#. 4 (the right wall too), #... 2, .... 2 (its walls)
    assert F.row_transitions(rows, 4).tolist() == [2 + 2 + 4 + 2 + 2]
    # each column up from the filled floor to the empty row above the stack:
    # ####. 1, .#... 3, #.#.. 3, ##... 1
    assert F.column_transitions(rows, 4).tolist() == [1 + 3 + 3 + 1]
    assert F.column_transitions_open_top(rows, 4).tolist() == [8]  # the stack is below the top row
    assert F.holes(rows, 4).tolist() == [2]  # column 1 row 0, column 2 row 1
    # well cells below the stack's top: row 0 column 1, row 1 column 2, row 2 columns 1 and 3,
    # each with a filled cell (or the floor) right under it: 1 each
    assert F.wells(rows, 4).tolist() == [4]
    # a stack reaching the top row: its filled cells there meet the empty row above the board
    full_top = board(["#...", "#...", "##.#"])
    assert F.column_transitions(full_top, 4).tolist() == [1 + 1 + 1 + 1]
    assert F.column_transitions_open_top(full_top, 4).tolist() == [0 + 1 + 1 + 1]
    # landing height: bottom row (from 0) + (rows - 1) / 2; an upright I4 on the floor: 1.5
    upright = np.array([[1, 1, 1, 1, 0]], dtype=np.uint32)
    assert F.landing_height(upright).tolist() == [1.5]
