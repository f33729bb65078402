"""Breadth-first enumeration of reachable boards and the CSR transition table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import babytris
import babytris.engine.placements
import babytris.engine.transitions
from babytris import CATALOGUE, Piece, Rules, reference
from babytris.engine.placements import engine

COUNTS = json.loads((Path(__file__).parent / "data" / "counts.json").read_text())

SMALL = 1500  # largest board count the pure-Python reference enumerates in a test


def fits(cells, width: int, height: int) -> bool:
    return any(
        max(x for x, _ in s) < width and max(y for _, y in s) < height for s in Piece.from_cells(cells).orientations()
    )


@st.composite
def small_rules(draw):
    width = draw(st.integers(1, 6))
    height = draw(st.integers(1, 6))
    pool = [CATALOGUE[n].cells for n in CATALOGUE] + [((0, 0),), ((0, 0), (1, 0))]
    pool = [cells for cells in pool if fits(cells, width, height)]
    chosen = draw(st.lists(st.sampled_from(range(len(pool))), min_size=1, max_size=4, unique=True))
    return Rules(
        width=width,
        height=height,
        pieces=[pool[i] for i in chosen],
        no_holes=draw(st.integers(0, 3)) == 0,
        top_out=draw(st.integers(0, 3)) == 0,
    )


def check_table(t: babytris.Transitions) -> None:
    """Structural invariants of a transition table."""
    rules = t.rules
    n, n_pieces = t.n_boards, rules.n_pieces
    assert t.boards.dtype == np.uint64
    assert t.boards[0] == 0
    # numbered layer by layer (by cell count), strictly ascending within a layer
    layer_of_residue = babytris.engine.transitions.layers(rules)
    starts = t.layer_starts
    assert starts[0] == 0 and starts[-1] == n and len(starts) == layer_of_residue.max() + 2
    for k in range(len(starts) - 1):
        mine = t.boards[starts[k] : starts[k + 1]]
        assert np.all(mine[1:] > mine[:-1])
        cells = np.array([bin(int(b)).count("1") for b in mine], dtype=np.int64)
        assert np.all(layer_of_residue[cells % len(layer_of_residue)] == k)
    # with layers, no move stays in its layer (but a move topping out, to the lost board, never swept)
    if len(starts) > 2 and t.n_moves:
        board_layer = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        move_board = np.repeat(np.arange(n * n_pieces) // n_pieces, np.diff(t.offsets))
        lost = t.boards[t.next_board] == np.uint64(babytris.engine.placements.lost_board(rules))
        assert not rules.no_holes
        assert not np.any((board_layer[move_board] == board_layer[t.next_board]) & (~lost | ~rules.top_out))
    assert int(t.boards[-1]) < 2**rules.cells or rules.cells == 64
    assert t.offsets.shape == (n * n_pieces + 1,)
    assert t.offsets[0] == 0 and t.offsets[-1] == t.n_moves
    assert np.all(np.diff(t.offsets) >= 0)
    assert t.n_states == n * n_pieces
    assert t.next_board.shape == t.lines.shape == t.placement.shape == (t.n_moves,)
    if t.n_moves:
        assert 0 <= t.next_board.min() and t.next_board.max() < n
        tallest = len(rules.line_scores) - 1
        assert t.lines.max() <= tallest
        # (with no_holes the cells filled under a piece count too)
        assert t.lines.max() <= max(p.size for p in rules.pieces) or rules.no_holes
    # every board but the empty one is the successor of some move
    assert set(np.unique(t.next_board).tolist()) >= set(range(1, n))
    # placement numbers increase within each state's row, and stay below the piece's placement count
    counts = np.diff(t.offsets).reshape(n, n_pieces)
    per_piece = [len(babytris.engine.placements.placement_table(rules).placements[p]) for p in range(n_pieces)]
    assert np.all(counts <= np.array(per_piece))
    assert t.nbytes == sum(a.nbytes for a in (t.boards, t.layer_starts, t.offsets, t.next_board, t.lines, t.placement))


def check_rows_match_engine(t: babytris.Transitions) -> None:
    """Each state's row lists exactly the engine's successors, in placement order."""
    e = engine(t.rules)
    n_pieces = t.rules.n_pieces
    boards = t.boards
    for i in range(t.n_boards):
        b = int(boards[i])
        for p in range(n_pieces):
            s = i * n_pieces + p
            row = range(t.offsets[s], t.offsets[s + 1])
            got = [(int(t.placement[j]), int(boards[t.next_board[j]]), int(t.lines[j])) for j in row]
            want = [(k, int(nb), int(n)) for k, nb, n in e.successors(b, p)]
            assert got == want, (b, p)


# --------------------------------------------------------------------------
# Published counts and the reference-generated table
# --------------------------------------------------------------------------


def test_4x4_count(transitions_4x4):
    assert transitions_4x4.n_boards == 12_978
    assert transitions_4x4.n_states == 25_956


def test_4x5_count():
    assert babytris.enumerate_boards(Rules(width=4, height=5)).n_boards == 182_101


def test_count_table_holds_the_published_facts():
    table = {row["name"]: row["boards"] for row in COUNTS}
    assert table["4x4 trominoes"] == 12_978
    assert table["4x5 trominoes"] == 182_101
    assert len(COUNTS) >= 10


@pytest.mark.parametrize("row", COUNTS, ids=[row["name"] for row in COUNTS])
def test_counts_match_reference_table(row):
    t = babytris.enumerate_boards(Rules(**row["rules"]))
    assert t.n_boards == row["boards"]
    check_table(t)


# --------------------------------------------------------------------------
# The board set equals the reference's
# --------------------------------------------------------------------------


def test_4x4_boards_equal_reference(transitions_4x4, reference_boards_4x4):
    assert sorted(transitions_4x4.boards.tolist()) == sorted(reference_boards_4x4)
    assert reference_boards_4x4[0] == 0


def test_4x4_table(transitions_4x4):
    check_table(transitions_4x4)
    check_rows_match_engine(transitions_4x4)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(small_rules())
def test_small_rule_sets_equal_reference(rules):
    try:  # a small budget stops the large games early
        t = babytris.enumerate_boards(rules, max_memory=2**24)
    except babytris.MemoryLimitError:
        assume(False)
    assume(t.n_boards <= SMALL)
    assert sorted(t.boards.tolist()) == sorted(reference.reachable_boards(rules))
    check_table(t)
    check_rows_match_engine(t)


def test_enumeration_is_deterministic(rules_4x4, transitions_4x4):
    again = babytris.enumerate_boards(rules_4x4)
    for name in ("boards", "offsets", "next_board", "lines", "placement"):
        assert np.array_equal(getattr(again, name), getattr(transitions_4x4, name)), name


def test_probabilities_and_scores_do_not_change_the_graph(transitions_4x4):
    other = babytris.enumerate_boards(Rules(line_scores=(0, 5, 5, 5), probabilities=(0.9, 0.1)))
    assert np.array_equal(other.boards, transitions_4x4.boards)
    assert np.array_equal(other.next_board, transitions_4x4.next_board)


def test_piece_order_changes_only_the_layout():
    a = babytris.enumerate_boards(Rules(width=4, height=4, pieces=["I", "L"]))
    b = babytris.enumerate_boards(Rules(width=4, height=4, pieces=["L", "I"]))
    assert np.array_equal(a.boards, b.boards)
    assert a.n_moves == b.n_moves
    ca = np.diff(a.offsets).reshape(-1, 2)
    cb = np.diff(b.offsets).reshape(-1, 2)
    assert np.array_equal(ca, cb[:, ::-1])


# --------------------------------------------------------------------------
# Lookups
# --------------------------------------------------------------------------


def test_board_index(transitions_4x4, reference_boards_4x4):
    t = transitions_4x4
    for b in reference_boards_4x4[:3000]:
        i = t.board_index(b)
        assert int(t.boards[i]) == b
    assert t.board_index(0) == 0
    assert t.board_index(np.uint64(t.boards[-1])) == t.n_boards - 1
    assert t.board_index(babytris.Board(int(t.boards[7]), 4, 4)) == 7


def test_board_index_unreachable(transitions_4x4, reference_boards_4x4):
    reachable = set(reference_boards_4x4)
    unreachable = [b for b in range(2**16) if b not in reachable]
    assert len(unreachable) == 2**16 - 12_978
    # a full bottom row never survives; nor does anything beyond the board or negative
    for b in [0b1111, 2**16 - 1, 2**16, 2**64 - 1, 2**64, 2**80, -1] + unreachable[:300]:
        with pytest.raises(KeyError):
            transitions_4x4.board_index(b)


def test_repr(transitions_4x4):
    text = repr(transitions_4x4)
    assert "4x4" in text and "12,978 boards" in text and f"{transitions_4x4.n_moves:,} moves" in text


@pytest.mark.parametrize(
    "rules",
    [Rules(width=4, height=4), Rules(width=3, height=5, pieces="tetrominoes"), Rules(width=5, height=3)],
    ids=repr,
)
def test_hash_map_and_bitmap_indexes_agree(rules):
    """Boards of up to BITMAP_MAX_CELLS cells are indexed by a bitmap, larger ones
    by the hash map: force the map on a small board and compare every array."""
    from babytris.engine import _core
    from babytris.engine.placements import engine

    assert rules.cells <= _core.BITMAP_MAX_CELLS
    for layer_of_residue in (None, babytris.engine.transitions.layers(rules)):
        with_bitmap = engine(rules).enumerate(0, 2**30, 0, 2, layer_of_residue=layer_of_residue)
        with_map = engine(rules).enumerate(0, 2**30, 0, 2, 0, 0, layer_of_residue=layer_of_residue)
        # (and the bitmap numbering boards by layer without a permutation, as big ones do)
        by_layer = engine(rules).enumerate(0, 2**30, 0, 2, layer_of_residue=layer_of_residue, ranks_by_layer_cells=0)
        assert with_bitmap[0] == with_map[0] == by_layer[0] == 0
        for a, b, c in zip(with_bitmap[1:], with_map[1:], by_layer[1:]):
            assert a.dtype == b.dtype == c.dtype and np.array_equal(a, b) and np.array_equal(a, c)


@pytest.mark.parametrize(
    "rules",
    [Rules(width=4, height=5), Rules(width=4, height=5, moves="soft"), Rules(width=5, height=4, pieces="tetrominoes")],
    ids=repr,
)
def test_threads_sharing_the_search_find_the_same_table(rules):
    """The bitmap search shares its wide stretches (4,096 boards and more, as
    these rules reach) among the threads: every thread count, and the
    single-threaded hash map search, give the same arrays."""
    from babytris.engine.placements import engine

    one = babytris.enumerate_boards(rules, n_jobs=1)
    layer_of_residue = babytris.engine.transitions.layers(rules)
    with_map = engine(rules).enumerate(0, 2**31, 0, 1, 0, 0, layer_of_residue=layer_of_residue)
    assert with_map[0] == 0
    for n_jobs in (2, 3):
        threaded = babytris.enumerate_boards(rules, n_jobs=n_jobs)
        for name in ("boards", "offsets", "next_board", "lines", "placement"):
            assert np.array_equal(getattr(threaded, name), getattr(one, name)), (n_jobs, name)
    by_layer = engine(rules).enumerate(0, 2**31, 0, 2, layer_of_residue=layer_of_residue, ranks_by_layer_cells=0)
    assert by_layer[0] == 0
    names = ("boards", "layer_starts", "offsets", "next_board", "lines", "placement")
    for name, array, numbered in zip(names, with_map[1:], by_layer[1:]):
        assert np.array_equal(array, getattr(one, name)) and np.array_equal(numbered, array), name


def test_thin_board_with_many_cells_uses_the_map_under_a_small_budget():
    """A 1x30 board has 2**30 possible boards but one reachable: the bitmap
    (192 MiB) would break a 100 MiB budget, so the hash map is used."""
    rules = Rules(width=1, height=30, pieces=["I"])
    t = babytris.enumerate_boards(rules, max_memory=100 * 2**20)
    assert t.n_boards == len(reference.reachable_boards(rules)) == 1


def test_engine_rejects_bad_arguments():

    e = engine(Rules(width=4, height=4))
    with pytest.raises(ValueError, match="n_threads"):
        e.enumerate(0, 2**30, 0, 0)
    with pytest.raises(ValueError, match="start"):
        e.enumerate(2**16, 2**30, 0)


def test_max_memory_range():
    with pytest.raises(ValueError, match="max_memory"):
        babytris.enumerate_boards(Rules(width=4, height=4), max_memory=2**64)


@given(
    counts=st.lists(st.integers(0, 3), min_size=0, max_size=60),
    n_pieces=st.integers(1, 3),
    cuts=st.lists(st.integers(0, 20), max_size=4),
)
@settings(max_examples=200, deadline=None)
def test_live_boards_are_the_boards_with_a_move(counts, n_pieces, cuts):
    """The sweep order's compiled pass gives numpy's boards with a move and each layer's count."""
    from babytris.engine._layers import live_boards

    n_boards = len(counts) // n_pieces
    offsets = np.concatenate([[0], np.cumsum(counts[: n_boards * n_pieces])]).astype(np.int32)
    bounds = np.array(sorted([0, n_boards, *(min(c, n_boards) for c in cuts)]), dtype=np.int64)
    order, starts = live_boards(offsets, n_pieces, bounds)
    has_move = offsets[n_pieces::n_pieces] > offsets[:-1:n_pieces]
    assert order.dtype == np.int32 and np.array_equal(order, np.flatnonzero(has_move))
    per_layer = [np.count_nonzero(has_move[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    assert np.array_equal(starts, np.concatenate([[0], np.cumsum(per_layer)]))
    room = np.full(n_boards + 3, -9, dtype=np.int32)
    into, again = live_boards(offsets, n_pieces, bounds, room)
    assert np.array_equal(into, order) and np.array_equal(again, starts)
    assert not len(order) or np.shares_memory(into, room)
    assert (room[len(order) :] == -9).all()


def test_live_boards_refuses_tables_it_cannot_read():
    from babytris.engine._layers import live_boards

    offsets = np.array([0, 1, 1, 2, 3], dtype=np.int32)  # 2 boards of 2 pieces
    with pytest.raises(ValueError, match="n_boards"):
        live_boards(offsets, 3, np.array([0, 1], dtype=np.int64))
    with pytest.raises(ValueError, match="from 0"):
        live_boards(offsets, 2, np.array([0, 3], dtype=np.int64))
    with pytest.raises(ValueError, match="from 0"):
        live_boards(offsets, 2, np.array([0], dtype=np.int64))
    with pytest.raises(ValueError, match="decrease"):
        live_boards(offsets, 2, np.array([0, 2, 1, 2], dtype=np.int64))
    with pytest.raises(ValueError, match="out must have an entry per board"):
        live_boards(offsets, 2, np.array([0, 2], dtype=np.int64), np.zeros(1, dtype=np.int32))


@given(layer_of_residue=st.lists(st.integers(0, 5), min_size=1, max_size=7), width=st.integers(2, 5))
@settings(max_examples=40, deadline=None)
def test_bitmap_ranks_by_layer_agree_with_the_map_for_any_layering(layer_of_residue, width):
    """The bitmap numbers boards layer by layer from a rank per word and layer; the map path regroups
    sorted boards.  Any layering (layers left empty, several residues in one layer) gives both the
    same boards, layer bounds and moves."""
    from babytris.engine._layers import popcounts
    from babytris.engine.placements import engine

    rules = Rules(width=width, height=4)
    layers_ = np.array(layer_of_residue, dtype=np.int64)
    with_bitmap = engine(rules).enumerate(0, 2**30, 0, 2, layer_of_residue=layers_)
    with_map = engine(rules).enumerate(0, 2**30, 0, 1, 0, 0, layer_of_residue=layers_)
    assert with_bitmap[0] == with_map[0] == 0
    boards, layer_starts = with_bitmap[1], with_bitmap[2]
    assert len(layer_starts) == max(layer_of_residue) + 2
    cells = popcounts(boards) % len(layer_of_residue)
    for layer, (a, b) in enumerate(zip(layer_starts[:-1], layer_starts[1:])):
        assert np.all(layers_[cells[a:b]] == layer) and np.all(np.diff(boards[a:b].astype(np.int64)) > 0)
    for a, b in zip(with_bitmap[1:], with_map[1:]):
        assert a.dtype == b.dtype and np.array_equal(a, b)


# --------------------------------------------------------------------------
# The table on given boards at a saved table's offsets (a loaded file's proof)
# --------------------------------------------------------------------------

TABLE_ARRAYS = ("boards", "layer_starts", "offsets", "next_board", "lines", "placement")


@pytest.mark.parametrize(
    "fields",
    [{}, {"height": 5}, {"mirror": True}, {"top_out": True}, {"no_holes": True}, {"moves": "soft"}],
    ids=repr,
)
def test_the_table_written_at_its_own_offsets_is_the_enumerations(fields):
    from babytris.engine.enumeration import table_of_boards

    rules = Rules(**{"width": 4, "height": 4, **fields})
    derived = babytris.enumerate_boards(rules)
    built = table_of_boards(rules, derived.boards, offsets=derived.offsets)
    for name in TABLE_ARRAYS:
        mine, theirs = getattr(built, name), getattr(derived, name)
        assert (mine is None) == (theirs is None), name
        if mine is not None:
            np.testing.assert_array_equal(mine, theirs, err_msg=name)
    assert not np.shares_memory(built.offsets, derived.offsets)  # (the rules' own, not the caller's array)


def _moved(offsets: np.ndarray, at: int, by: int) -> np.ndarray:
    return _set(offsets, at, int(offsets[at]) + by)


def _set(offsets: np.ndarray, at: int, value: int) -> np.ndarray:
    out = offsets.copy()
    out[at] = value
    return out


@pytest.mark.parametrize(
    "edit, at",
    [
        # a move taken from the row before into the next: one offset one short
        pytest.param(lambda o, s: _moved(o, s, -1), "s", id="a row's offset one short"),
        pytest.param(lambda o, s: _moved(o, s, 1), "s", id="one over"),
        pytest.param(lambda o, s: _moved(o, len(o) - 1, -1), "last", id="the moves' total one short"),
        pytest.param(lambda o, s: _moved(o, len(o) - 1, 1), "last", id="the total one over"),
        pytest.param(lambda o, s: _moved(o, len(o) - 1, 2**31 - 1 - int(o[-1])), "last", id="a total far over"),
        pytest.param(lambda o, s: _moved(o, 0, 1), "first", id="not starting at 0"),
        pytest.param(lambda o, s: _set(o, s, -5), "s", id="a negative offset"),
        pytest.param(lambda o, s: _set(o, s, int(o[s - 1]) - 1), "s", id="going back"),
        pytest.param(lambda o, s: np.where(np.arange(len(o)) >= s, o + 3, o).astype(np.int32), "s", id="rows shifted"),
    ],
)
def test_offsets_that_are_not_the_rules_own_are_refused_naming_the_first(edit, at):
    """The moves are written at given offsets in place of a count, so each
    row must hold its state's moves exactly: any other offset is refused,
    naming the first that differs and the rules' own value there."""
    from babytris.engine.enumeration import table_of_boards
    from babytris.engine.transitions import TableError

    rules = Rules(width=4, height=4)
    derived = babytris.enumerate_boards(rules)
    own = derived.offsets
    s = next(i for i in range(1000, len(own)) if own[i] - own[i - 1] >= 2)  # (a row of two moves at least)
    offsets = edit(own, s)
    first = int(np.flatnonzero(offsets != own)[0])
    assert first == {"s": s, "last": len(own) - 1, "first": 0}[at]
    said = rf"\[{first:,}\] is {offsets[first]} where the rules' own table \(re-derived\) has {own[first]}$"
    with pytest.raises(TableError, match=r"transitions\.offsets: " + said):
        table_of_boards(rules, derived.boards, offsets=offsets)


def test_offsets_are_used_only_for_boards_in_the_tables_order():
    """Boards listed in another order: the offsets are for other rows, so the
    moves are counted (the caller's comparison of the boards refuses such a
    file); with previews, hold or a bag a table's offsets are its nodes',
    which no board table is built at: refused as an argument."""
    from babytris.engine.enumeration import table_of_boards

    rules = Rules(width=4, height=4)
    derived = babytris.enumerate_boards(rules)
    reordered = derived.boards[::-1].copy()
    built = table_of_boards(rules, reordered, offsets=derived.offsets)
    np.testing.assert_array_equal(built.offsets, derived.offsets)
    np.testing.assert_array_equal(built.next_board, derived.next_board)
    previews = Rules(width=4, height=4, preview=1)
    table = babytris.enumerate_boards(previews)
    with pytest.raises(ValueError, match="offsets: a table with previews, hold or a bag"):
        table_of_boards(previews, table.boards, offsets=table.offsets)


@pytest.mark.parametrize("threads", [1, 2])
def test_threads_sharing_the_fill_at_offsets_refuse_the_same_first_offset(threads):
    """Chunks of boards written by two threads: each checks its own rows, and
    the offset named is the first that differs, whichever chunk met it."""
    from babytris.engine.resources import LAYER_BYTES
    from babytris.engine.transitions import layers

    rules = Rules(width=4, height=5)
    derived = babytris.enumerate_boards(rules)

    def built(offsets):
        return engine(rules).enumerate(
            0, 2**30, LAYER_BYTES, threads, layer_of_residue=layers(rules), given=derived.boards, given_offsets=offsets
        )

    status, *arrays = built(derived.offsets)
    assert status == 0
    for name, array in zip(TABLE_ARRAYS, arrays):
        np.testing.assert_array_equal(array, getattr(derived, name), err_msg=name)
    own = derived.offsets
    # (rows in chunks far apart, each with a move)
    early = next(i for i in range(40_000, len(own)) if own[i] > own[i - 1])
    late = next(i for i in range(len(own) - 200, len(own)) if own[i] > own[i - 1])
    offsets = _moved(_moved(own, late, -1), early, -1)
    assert built(offsets)[0] == (-9, early, int(own[early]))  # (OFFSETS_DIFFER = -9)
    assert built(_moved(own, late, -1))[0] == (-9, late, int(own[late]))
