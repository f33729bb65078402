"""Board: the friendly wrapper of a packed bitboard (bit row * width + col, row 0 at the bottom)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from babytris import Board


@st.composite
def boards(draw):
    width = draw(st.integers(1, 16))
    height = draw(st.integers(1, 64 // width))
    bits = draw(st.integers(0, 2 ** (width * height) - 1))
    return Board(bits, width, height)


def test_bit_layout():
    b = Board.from_rows(["#...", "##.#"])
    # bottom row "##.#": cols 0, 1, 3 -> bits 0, 1, 3; top row "#...": col 0 of row 1 -> bit 4
    assert int(b) == 0b11011 == 27
    assert (b.width, b.height) == (4, 2)
    assert b.filled(0, 0) and b.filled(1, 0) and not b.filled(2, 0) and b.filled(3, 0)
    assert b.filled(0, 1) and not b.filled(1, 1)
    assert b.count() == 4
    assert b.column_heights() == [2, 1, 0, 1]


def test_from_rows_pads_on_top():
    b = Board.from_rows(["##.."], height=3)
    assert (int(b), b.width, b.height) == (3, 4, 3)
    assert b.rows() == ["....", "....", "##.."]


def test_from_cells():
    b = Board.from_cells([(0, 0), (3, 3)])
    assert int(b) == 1 | 1 << 15
    assert b == Board(1 | 1 << 15, 4, 4)
    with pytest.raises(ValueError, match="outside"):
        Board.from_cells([(4, 0)])
    with pytest.raises(ValueError, match="outside"):
        Board.from_cells([(0, -1)])


def test_str_draws_top_row_first():
    b = Board.from_rows(["#...", "##.#"])
    assert str(b) == "#...\n##.#"
    assert str(Board(0, 3, 2)) == "...\n..."
    assert str(Board(1, 3, 2)) == "...\n#.."


def test_int_and_index():
    b = Board(0b1011, 4, 4)
    assert int(b) == 11
    assert bin(b) == "0b1011"  # __index__
    assert [10, 11, 12][Board(1, 4, 4)] == 11


def test_mirror_example():
    b = Board.from_rows(["#...", "##.#"])
    assert b.mirror().rows() == ["...#", "#.##"]
    assert int(b.mirror()) == 0b10001101


@given(boards())
def test_rows_round_trip(b):
    again = Board.from_rows(b.rows())
    assert again == b
    assert int(again) == int(b)
    assert len(b.rows()) == b.height
    assert all(len(r) == b.width for r in b.rows())


@given(boards())
def test_repr_evals_back(b):
    assert eval(repr(b), {"Board": Board}) == b


@given(boards())
def test_mirror(b):
    m = b.mirror()
    assert (m.width, m.height) == (b.width, b.height)
    assert m.mirror() == b
    assert m.count() == b.count()
    assert m.column_heights() == b.column_heights()[::-1]
    for r in range(b.height):
        for c in range(b.width):
            assert m.filled(b.width - 1 - c, r) == b.filled(c, r)


@given(boards())
def test_equality_and_hash(b):
    same = Board(int(b), b.width, b.height)
    assert same == b and hash(same) == hash(b)
    assert Board.from_rows(b.rows(), height=b.height) == b


def test_equality_depends_on_dimensions():
    assert Board(5, 4, 4) != Board(5, 4, 5)
    assert Board(5, 4, 4) != Board(5, 5, 4)
    assert Board(5, 4, 4) != 5


def test_immutable():
    b = Board(1)
    with pytest.raises(AttributeError):
        b.bits = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    "args, words",
    [
        ((16, 2, 2), "bits"),
        ((-1, 4, 4), "bits"),
        ((2**16, 4, 4), "bits"),
        ((0, 0, 4), "width"),
        ((0, True, 4), "width"),
        ((0, 4.0, 4), "width"),
        ((0, 4, 0), "height"),
        ((0, 4, False), "height"),
        ((0, 9, 8), "width \\* height"),
    ],
)
def test_constructor_errors(args, words):
    with pytest.raises(ValueError, match=words):
        Board(*args)


def test_full_64_bit_board():
    b = Board(2**64 - 1, 8, 8)
    assert b.count() == 64
    assert b.mirror() == b
    assert Board.from_rows(b.rows()) == b


@pytest.mark.parametrize(
    "rows, kwargs, words",
    [
        ([], {}, "at least 1 row"),
        (["#..", "#."], {}, "same length"),
        (["#.x"], {}, "only"),
        (["#..", "..."], {"height": 1}, "height"),
    ],
)
def test_from_rows_errors(rows, kwargs, words):
    with pytest.raises(ValueError, match=words):
        Board.from_rows(rows, **kwargs)


@pytest.mark.parametrize("bits", [1.9, "3", True])
def test_bits_must_be_an_integer(bits):
    with pytest.raises(ValueError, match="bits"):
        Board(bits, 2, 2)


def test_filled_checks_the_cell():
    b = Board.from_rows(["#.", ".#"])
    assert b.filled(1, 0) and b.filled(0, 1) and not b.filled(0, 0)
    for col, row in [(2, 0), (-1, 0), (0, 2)]:
        with pytest.raises(ValueError, match="outside"):
            b.filled(col, row)
