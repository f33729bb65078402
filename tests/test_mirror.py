"""Mirror pre-reduction: a board stands for itself and its mirror image."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import Rules, RulesError, reference
from babytris.engine.placements import mirror_boards


def symmetric_count(t) -> int:
    w, h = t.rules.width, t.rules.height
    return int(np.count_nonzero(mirror_boards(t.boards, w, h) == t.boards))


@pytest.mark.long
@pytest.mark.parametrize(
    "fields",
    [
        dict(width=4, height=4),
        dict(width=4, height=5),
        dict(width=4, height=4, pieces="tetrominoes"),
        dict(width=5, height=3),
    ],
    ids=["4x4", "4x5", "4x4 tetrominoes", "5x3"],
)
def test_half_the_boards_and_the_same_values(fields):
    full = babytris.solve(Rules(**fields), tol=1e-11)
    half = babytris.solve(Rules(mirror=True, **fields), tol=1e-11)
    # each pair of mirror images counts once, a symmetric board once
    assert half.n_boards == (full.n_boards + symmetric_count(full.transitions)) // 2
    assert half.start_value == pytest.approx(full.start_value, abs=1e-9)
    boards = full.boards[:: max(1, full.n_boards // 400)]
    for b in boards:
        for p in range(full.rules.n_pieces):
            assert half.value(int(b), p) == pytest.approx(full.value(int(b), p), abs=1e-9)
            move = half.best_action(int(b), p)  # reflected back onto the board asked about
            if move is None:
                assert full.best_action(int(b), p) is None
            else:
                assert full.action_values(int(b), p)[move] == pytest.approx(full.value(int(b), p), abs=1e-9)


def test_with_previews_hold_and_an_opponent():
    fields = dict(width=4, height=4, preview=1, hold=True)
    full = babytris.solve(Rules(**fields), opponent="minimax", tol=1e-11)
    half = babytris.solve(Rules(mirror=True, **fields), opponent="minimax", tol=1e-11)
    assert half.n_boards * 2 > full.n_boards > half.n_boards
    assert half.start_value == pytest.approx(full.start_value, abs=1e-9)
    for b in full.boards[::4001]:
        assert half.value(int(b), "L", ("I",), held="I") == pytest.approx(
            full.value(int(b), "L", ("I",), held="I"), abs=1e-9
        )


def test_equals_reference():
    rules = Rules(width=4, height=3, pieces=["S", "Z", "O"], mirror=True)
    core = babytris.solve(rules, tol=1e-12)
    ref = reference.solve(rules, tol=1e-12)
    assert sorted(core.boards.tolist()) == sorted(ref.boards)
    order = core.transitions.indices(np.array(ref.boards, dtype=np.uint64))
    assert np.abs(core.values[order] - np.array(ref.values)).max() <= 1e-9


@pytest.mark.parametrize(
    "fields, match",
    [
        (dict(pieces=["I", "S"]), "closed under mirroring"),
        (dict(pieces=["S", "Z"], probabilities=(0.3, 0.7)), "equally likely"),
        (dict(width=17, height=3, pieces=["I"]), "16 wide"),
        (dict(pieces="tetrominoes", preview=1), "no preview, no hold and no bag"),
        (dict(mirror=1), "mirror must be True or False"),
    ],
)
def test_bad_mirror(fields, match):
    fields = {"mirror": True, **fields}
    with pytest.raises(RulesError, match=match):
        Rules(**fields)


def test_piece_policy_reflects_back():
    """The opponent's piece on a board stored as its mirror image is the
    mirror image of the stored board's piece."""
    fields = dict(width=4, height=4, pieces=["S", "Z", "O"])
    full = babytris.solve(Rules(**fields), opponent="minimax", tol=1e-12)
    half = babytris.solve(Rules(mirror=True, **fields), opponent="minimax", tol=1e-12)
    checked = 0
    for i, b in enumerate(full.boards):
        row = np.sort(full.values[i])
        if row[1] - row[0] > 1e-6:  # a single worst piece
            assert half.piece_policy(int(b)) == full.piece_policy(int(b))
            checked += 1
    assert checked > 50


def test_lookups_reject_boards_off_the_board():
    half = babytris.solve(Rules(width=4, height=4, pieces=["S", "Z", "O"], mirror=True))
    with pytest.raises(KeyError):
        half.value(1 << 40, "S")
