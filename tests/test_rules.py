"""Rules: defaults, groups, line scores, validation, hashing, repr."""

from __future__ import annotations

import math

import pytest

import babytris
from babytris import CATALOGUE, Piece, Rules, RulesError


def test_defaults():
    r = Rules()
    assert (r.width, r.height) == (4, 4)
    assert r.piece_names == ("I", "L")
    assert r.pieces == (CATALOGUE["I"], CATALOGUE["L"])
    assert r.n_pieces == 2
    assert r.cells == 16
    assert r.line_scores == (0.0, 1.0, 3.0, 6.0)
    assert r.probabilities == (0.5, 0.5)
    assert r.mirror_map() == (0, 1)


def test_stored_as_tuples():
    r = Rules(pieces=["I", "L"], line_scores=[0, 1, 2, 3], probabilities=[0.25, 0.75])
    assert isinstance(r.pieces, tuple)
    assert r.line_scores == (0.0, 1.0, 2.0, 3.0) and isinstance(r.line_scores, tuple)
    assert r.probabilities == (0.25, 0.75) and isinstance(r.probabilities, tuple)


def test_groups():
    assert Rules(pieces="trominoes") == Rules()
    assert Rules(pieces=["trominoes"]).piece_names == ("I", "L")
    t = Rules(pieces="tetrominoes")
    assert t.piece_names == ("I4", "O", "T", "S", "Z", "J", "L4")
    assert t.probabilities == pytest.approx((1 / 7,) * 7)
    assert math.fsum(t.probabilities) == pytest.approx(1.0)
    both = Rules(width=5, height=5, pieces=["trominoes", "tetrominoes"])
    assert both.piece_names == ("I", "L", "I4", "O", "T", "S", "Z", "J", "L4")


def test_single_name_string():
    assert Rules(pieces="O").piece_names == ("O",)


@pytest.mark.parametrize(
    "pieces, width, height, expected",
    [
        ("trominoes", 4, 4, (0, 1, 3, 6)),
        ("tetrominoes", 4, 4, (0, 1, 3, 6, 10)),
        ("tetrominoes", 4, 5, (0, 1, 3, 6, 10)),
        (["O"], 4, 4, (0, 1, 3)),
        (["I"], 4, 4, (0, 1, 3, 6)),
        # the tallest placement is capped by the board: an I tromino lies flat on 1 row
        (["I"], 4, 1, (0, 1)),
        ([[(0, 0)]], 3, 3, (0, 1)),
        ([[(0, y) for y in range(5)]], 6, 6, (0, 1, 3, 6, 10, 15)),
    ],
)
def test_default_line_scores_are_triangular(pieces, width, height, expected):
    assert Rules(width=width, height=height, pieces=pieces).line_scores == tuple(map(float, expected))


def test_longer_line_scores_accepted():
    assert Rules(line_scores=(0, 1, 3, 6, 100)).line_scores == (0.0, 1.0, 3.0, 6.0, 100.0)


def test_piece_index():
    r = Rules(pieces="tetrominoes")
    assert r.piece_index("S") == 3
    assert r.piece_index(CATALOGUE["L4"]) == 6
    assert r.piece_index(2) == 2
    for bad in (7, -1, True, "L", "nope"):
        with pytest.raises(ValueError):
            r.piece_index(bad)


def test_mirror_map():
    assert Rules(pieces="tetrominoes").mirror_map() == (0, 1, 2, 4, 3, 6, 5)
    assert Rules(pieces=["S", "Z"]).mirror_map() == (1, 0)
    assert Rules(pieces=["S", "O"]).mirror_map() is None
    assert Rules(pieces=["J"]).mirror_map() is None


def test_custom_piece_in_rules():
    r = Rules(width=3, height=3, pieces=[[(0, 0), (1, 0)], "I"])
    assert r.pieces[0].cells == ((0, 0), (1, 0))
    assert r.line_scores == (0.0, 1.0, 3.0, 6.0)


def _field_error(field: str, **kwargs) -> RulesError:
    with pytest.raises(RulesError) as info:
        Rules(**kwargs)
    assert isinstance(info.value, ValueError)
    assert field in str(info.value), str(info.value)
    return info.value


@pytest.mark.parametrize(
    "field, kwargs",
    [
        ("width", dict(width=0)),
        ("width", dict(width=-3)),
        ("width", dict(width=65, height=1)),
        ("width", dict(width=True)),
        ("width", dict(width=4.0)),
        ("width", dict(width="4")),
        ("width", dict(width=None)),
        ("height", dict(height=0)),
        ("height", dict(height=False)),
        ("height", dict(height=4.5)),
        ("width * height", dict(width=9, height=8)),
        ("width * height", dict(width=5, height=13)),
        ("pieces", dict(pieces=["X"])),
        ("pieces", dict(pieces=["I", "Q"])),
        ("pieces", dict(pieces="tetris")),
        ("pieces", dict(pieces=[])),
        ("pieces", dict(pieces=5)),
        ("pieces", dict(pieces=[[(0, 0), (2, 0)]])),  # disconnected
        ("pieces", dict(pieces=[[]])),  # empty
        ("pieces", dict(pieces=[[(0, 0), (0, 0)]])),  # repeated cell
        ("pieces", dict(pieces=["I", "I"])),
        ("pieces", dict(pieces=["trominoes", "L"])),
        ("pieces", dict(pieces=["I", [(0, 0), (0, 1), (0, 2)]])),  # the same shape twice
        ("pieces", dict(width=2, height=2, pieces=["I"])),  # fits in no rotation
        ("pieces", dict(width=3, height=3, pieces=["I4"])),
        ("pieces", dict(width=1, height=8, pieces=["L"])),
        ("line_scores", dict(line_scores=(0, 1, 3))),
        ("line_scores", dict(line_scores=())),
        ("line_scores", dict(pieces="tetrominoes", line_scores=(0, 1, 3, 6))),
        ("line_scores", dict(line_scores=(0, 1, float("nan"), 6))),
        ("line_scores", dict(line_scores=(0, 1, float("inf"), 6))),
        ("line_scores", dict(line_scores=(0, 1, "three", 6))),
        ("line_scores", dict(line_scores=3)),
        ("probabilities", dict(probabilities=(1.0,))),
        ("probabilities", dict(probabilities=(0.2, 0.3, 0.5))),
        ("probabilities", dict(probabilities=(1.5, -0.5))),
        ("probabilities", dict(probabilities=(0.0, 1.0))),
        ("probabilities", dict(probabilities=(0.3, 0.3))),
        ("probabilities", dict(probabilities=(0.5, 0.5 + 1e-6))),
        ("probabilities", dict(probabilities=(float("nan"), 0.5))),
        ("probabilities", dict(probabilities="ab")),
    ],
)
def test_validation_errors_name_the_field(field, kwargs):
    _field_error(field, **kwargs)


def test_rules_error_is_value_error():
    assert issubclass(RulesError, ValueError)


def test_probabilities_close_to_one_accepted():
    r = Rules(pieces=["I", "L", "O"], width=4, height=4, probabilities=(0.1, 0.2, 0.7))
    assert r.probabilities == (0.1, 0.2, 0.7)  # fsum is 1 within 1e-9 though 0.1 + 0.2 + 0.7 != 1.0


def test_largest_boards_accepted():
    for width, height in [(8, 8), (16, 4), (64, 1), (1, 64), (21, 3)]:
        r = Rules(width=width, height=height, pieces=["I"] if height < 3 or width < 3 else "trominoes")
        assert r.cells == width * height <= 64


def test_equal_and_hashable():
    a = Rules(width=4, height=5, pieces=["I", "L"], line_scores=[0, 1, 3, 6])
    b = Rules(width=4, height=5)
    assert a == b and hash(a) == hash(b)
    assert len({a, b, Rules(width=5, height=4)}) == 2
    assert a != Rules(width=4, height=5, pieces=["L", "I"])
    assert a != Rules(width=4, height=5, line_scores=(0, 1, 3, 7))
    assert a != Rules(width=4, height=5, probabilities=(0.4, 0.6))


def test_frozen():
    r = Rules()
    with pytest.raises(AttributeError):
        r.width = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(width=5, height=3, pieces="tetrominoes"),
        Rules(width=3, height=4, pieces=["I"], line_scores=(0, 2.5, 7, 1e-3)),
        Rules(pieces=["I", "L", "O"], probabilities=(0.1, 0.2, 0.7)),
        Rules(pieces=["T", "S", "Z"], probabilities=(1 / 3, 1 / 3, 1 / 3)),
        Rules(width=3, height=3, pieces=["I", [(0, 0), (1, 0)]]),
    ],
    ids=repr,
)
def test_repr_evals_back(rules):
    namespace = {}
    exec("from babytris import Rules", namespace)
    again = eval(repr(rules), namespace)
    assert again == rules
    assert repr(again) == repr(rules)


def test_repr_keeps_custom_piece_names():
    """A custom piece built with a name must survive eval(repr(rules))."""
    rules = Rules(width=3, height=3, pieces=["I", Piece.from_cells([(0, 0), (1, 0)], name="domino")])
    namespace = {}
    exec("from babytris import Rules, Piece", namespace)
    assert eval(repr(rules), namespace) == rules


@pytest.mark.parametrize("field", ["line_scores", "probabilities"])
def test_strings_are_not_number_lists(field):
    with pytest.raises(ValueError, match=field):
        Rules(**{field: "0136" if field == "line_scores" else "1"})


@pytest.mark.parametrize(
    ("entry", "keyword"),
    [
        (lambda **kw: babytris.solve(**kw), "max_iterations"),  # (solve's own is max_iter)
        (lambda **kw: babytris.solve(**kw), "gamma"),
        (lambda **kw: babytris.solve_lean(**kw), "widht"),
    ],
)
def test_an_unknown_keyword_is_named_with_the_rules_fields(entry, keyword):
    # an entry point's **rule_fields take what its own options did not: the keyword is named, not Rules.__init__
    with pytest.raises(TypeError, match=f"unexpected keyword '{keyword}': neither an option here nor a field of Rules"):
        entry(width=4, height=4, **{keyword: 1})
    with pytest.raises(ValueError, match=r"\(width, height, pieces, "):
        entry(width=4, height=4, **{keyword: 1})
