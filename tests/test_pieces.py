"""Piece catalogue: rotations, mirror images, custom polyominoes."""

from __future__ import annotations

import pytest

from babytris import CATALOGUE, Piece
from babytris.game.pieces import GROUPS, mirror_shape, normalise, piece, turn_clockwise

ROTATIONS = {"I": 2, "L": 4, "I4": 2, "O": 1, "T": 4, "S": 2, "Z": 2, "J": 4, "L4": 4}
SIZES = {"I": 3, "L": 3, "I4": 4, "O": 4, "T": 4, "S": 4, "Z": 4, "J": 4, "L4": 4}


def test_catalogue_names():
    assert set(CATALOGUE) == set(ROTATIONS)
    assert GROUPS["trominoes"] == ("I", "L")
    assert set(GROUPS["tetrominoes"]) == {"I4", "O", "T", "S", "Z", "J", "L4"}


@pytest.mark.parametrize("name", sorted(ROTATIONS))
def test_rotation_count(name):
    p = CATALOGUE[name]
    assert len(p.orientations()) == ROTATIONS[name]
    assert len(set(p.orientations())) == ROTATIONS[name]
    assert p.size == SIZES[name]


@pytest.mark.parametrize("name", sorted(ROTATIONS))
def test_orientations_are_closed_under_turning(name):
    shapes = CATALOGUE[name].orientations()
    assert shapes[0] == CATALOGUE[name].cells
    for shape in shapes:
        assert turn_clockwise(shape) in shapes
        assert normalise(shape) == shape
        assert min(x for x, _ in shape) == 0 and min(y for _, y in shape) == 0
        assert len(shape) == SIZES[name]
    # four quarter turns come back to the start
    shape = shapes[0]
    for _ in range(4):
        shape = turn_clockwise(shape)
    assert shape == shapes[0]


@pytest.mark.parametrize("a, b", [("S", "Z"), ("J", "L4")])
def test_mirror_pairs(a, b):
    pa, pb = CATALOGUE[a], CATALOGUE[b]
    assert pb.same_shape(pa.mirror().cells)
    assert pa.same_shape(pb.mirror().cells)
    assert not pa.same_shape(pa.mirror().cells)
    assert not pa.same_shape(pb.cells)


@pytest.mark.parametrize("name", ["I", "L", "I4", "O", "T"])
def test_self_mirror_up_to_rotation(name):
    p = CATALOGUE[name]
    assert p.same_shape(mirror_shape(p.cells))
    assert p.mirror() == p


@pytest.mark.parametrize("name", sorted(ROTATIONS))
def test_mirror_twice_is_the_same_shape(name):
    p = CATALOGUE[name]
    assert p.same_shape(p.mirror().mirror().cells)


def test_l_tromino_picture():
    assert str(CATALOGUE["L"]) == "#.\n##"
    assert str(CATALOGUE["I"]) == "###"
    assert str(CATALOGUE["T"]) == ".#.\n###"


def test_custom_piece_from_cells():
    p = Piece.from_cells([(5, 7), (6, 7)])
    assert p.cells == ((0, 0), (1, 0))
    assert p.size == 2
    assert len(p.orientations()) == 2
    assert Piece.from_cells([(0, 0), (1, 0)]) == p  # the default name comes from the shape
    named = Piece.from_cells([(0, 0), (0, 1)], name="domino")
    assert named.name == "domino"
    assert named.same_shape(p.cells)


def test_custom_piece_same_as_catalogue_shape():
    # An upright I tromino, given as cells, is the I piece turned.
    p = Piece.from_cells([(0, 0), (0, 1), (0, 2)])
    assert CATALOGUE["I"].same_shape(p.cells)
    assert len(p.orientations()) == 2


def test_monomino():
    p = Piece.from_cells([(3, 3)])
    assert p.cells == ((0, 0),)
    assert p.orientations() == (((0, 0),),)


@pytest.mark.parametrize(
    "cells, words",
    [
        ([(0, 0), (2, 0)], "connected"),
        ([(0, 0), (1, 1)], "connected"),  # corners touching do not count
        ([], "at least 1 cell"),
        ([(0, 0), (1, 0), (0, 0)], "repeats"),
        ([(0, 0, 0)], "pairs"),
        ([(0,)], "pairs"),
        ([("a", 0)], "pairs"),
        ([5], "pairs"),
    ],
)
def test_bad_custom_pieces(cells, words):
    with pytest.raises(ValueError, match=words):
        Piece.from_cells(cells)


def test_piece_lookup():
    assert piece("T") is CATALOGUE["T"]
    assert piece(CATALOGUE["O"]) is CATALOGUE["O"]
    assert piece([(0, 0), (0, 1)]).cells == ((0, 0), (0, 1))
    with pytest.raises(ValueError, match="unknown piece 'X'"):
        piece("X")
