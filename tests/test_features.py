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

    wells = 0
    for c in range(width):
        depth = 0
        for r in range(height - 1, -1, -1):
            depth = depth + 1 if not filled[r][c] and solid(r, c - 1) and solid(r, c + 1) else 0
            wells += depth
    row_transitions = sum(solid(r, c) != solid(r, c + 1) for r in range(height) for c in range(-1, width))
    column_transitions = sum(
        (filled[r - 1][c] if r else True) != filled[r][c] for c in range(width) for r in range(height)
    )
    return {
        "heights": heights,
        "max_height": max(heights),
        "holes": holes,
        "covers": covers,
        "differences": [abs(heights[c + 1] - heights[c]) for c in range(width - 1)],
        "wells": wells,
        "row_transitions": row_transitions,
        "column_transitions": column_transitions,
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
    assert F.holes(rows, 4).tolist() == babytris.reward.holes(boards, 4, 5).tolist()
    assert F.max_height(rows, 4).tolist() == babytris.reward.heights(boards, 4, 5).tolist()


def test_move_features():
    # An L landing on rows 1-2 of a 4-wide board, completing row 1 with two of its cells.
    before = np.array([[0b1111 ^ 0b0001, 0b1100, 0, 0]], dtype=np.uint32)
    piece = np.array([[0, 0b0011, 0b0001, 0]], dtype=np.uint32)
    placed = before | piece
    assert F.landing_height(piece).tolist() == [2.5]
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
