"""The move table built on given boards (what a loaded file's proof uses in
place of a search): the same table as the enumeration where the boards are
the reachable ones, and a clear refusal naming a board where they are not."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris.engine import _core
from babytris.engine.enumeration import table_of_boards
from babytris.engine.placements import engine
from babytris.engine.resources import LAYER_BYTES
from babytris.engine.transitions import TableError, layers

ARRAYS = ("boards", "layer_starts", "offsets", "next_board", "lines", "placement", "queues", "slots", "bags")


def _same_table(built, derived) -> None:
    for name in ARRAYS:
        mine, theirs = getattr(built, name), getattr(derived, name)
        assert (mine is None) == (theirs is None), name
        if mine is not None:
            np.testing.assert_array_equal(mine, theirs, err_msg=name)


def _shuffled(table, seed: int = 0) -> np.ndarray:
    """The table's boards in another order, each once per node (as a file of
    a game with previews lists them: the boards repeat, node by node)."""
    per_board = table.rules.nodes_per_board if table.rules.node_tables else 1
    base = table.boards[::per_board]
    return np.repeat(np.random.default_rng(seed).permutation(base), per_board)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"height": 5},
        {"preview": 1},
        {"width": 3, "height": 4, "hold": True},
        {"width": 3, "height": 5, "randomizer": "bag"},
        {"mirror": True},
        {"moves": "soft"},
        {"top_out": True},
        {"no_holes": True},
        {"objective": "combo"},
    ],
    ids=repr,
)
def test_the_table_on_the_reachable_boards_is_the_enumerations(fields):
    rules = babytris.Rules(**{"width": 4, "height": 4, **fields})
    derived = babytris.enumerate_boards(rules)
    _same_table(table_of_boards(rules, derived.boards), derived)
    # in any order: the table comes out in the engine's
    _same_table(table_of_boards(rules, _shuffled(derived)), derived)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=small_rules(variants=True), seed=st.integers(0, 2**32 - 1))
def test_small_random_rule_sets_agree_with_the_enumeration(rules, seed):
    derived = babytris.enumerate_boards(rules)
    _same_table(table_of_boards(rules, _shuffled(derived, seed)), derived)


@pytest.mark.parametrize("bitmap_max_cells", [30, 0], ids=["bitmap", "hash map"])
def test_both_indexes_build_the_same_table_and_refuse_the_same_boards(bitmap_max_cells):
    rules = babytris.Rules(width=4, height=4)
    derived = babytris.enumerate_boards(rules)
    boards = _shuffled(derived)

    def built(given):
        return engine(rules).enumerate(
            0, 2**30, LAYER_BYTES, 2, bitmap_max_cells=bitmap_max_cells, layer_of_residue=layers(rules), given=given
        )

    status, *arrays = built(boards)
    assert status == 0
    for name, array in zip(ARRAYS, arrays):
        np.testing.assert_array_equal(array, getattr(derived, name), err_msg=name)
    # a board left out: some board leads to it (NOT_CLOSED = -6, with a board that has such a move)
    status, *_ = built(boards[boards != derived.boards[-1]])
    assert status[0] == -6 and int(status[1]) in set(derived.boards.tolist())
    # a board twice (REPEATED = -7, naming it)
    assert built(np.append(boards, boards[5]))[0] == (-7, int(boards[5]), 0)


def test_boards_that_are_not_the_reachable_ones_are_refused_naming_one():
    rules = babytris.Rules(width=4, height=4)
    boards = babytris.enumerate_boards(rules).boards
    left_out = boards[boards != boards[-1]]
    with pytest.raises(TableError, match=r"transitions\.boards: board \d+ has a move to a board not in the table"):
        table_of_boards(rules, left_out)
    with pytest.raises(TableError, match=rf"board {boards[3]} is listed twice"):
        table_of_boards(rules, np.append(boards, boards[3]))
    with pytest.raises(TableError, match="65536 is not a board of 4x4 cells"):
        table_of_boards(rules, np.append(boards, np.uint64(2**16)))
    with pytest.raises(TableError, match="must be a 1-d uint64 array"):
        table_of_boards(rules, boards.astype(np.int64))
    with pytest.raises(TableError, match="2 entries per board"):  # (a node table: each board once per queue)
        table_of_boards(babytris.Rules(width=4, height=4, preview=1), boards[:5])
    with pytest.raises(TableError, match="none given"):
        table_of_boards(rules, np.zeros(0, dtype=np.uint64))


def test_a_closed_set_with_boards_play_never_reaches_is_refused():
    # The boards reachable from the empty board together with those reachable
    # from a board it never leads to: closed under moves, yet not the game's.
    rules = babytris.Rules(width=4, height=4)
    own = set(babytris.enumerate_boards(rules).boards.tolist())
    stray = next(b for b in range(1, 2**16) if b not in own and (b & 0xF) != 0xF and not b >> 12)
    other = babytris.enumerate_boards(babytris.Rules(width=4, height=4, start=stray)).boards
    union = np.array(sorted(own | set(other.tolist())), dtype=np.uint64)
    assert len(union) > len(own)
    with pytest.raises(TableError, match=r"board \d+ is not reached by play from the start board") as info:
        table_of_boards(rules, union)
    named = int(re.search(r"board (\d+) is not reached", str(info.value)).group(1))
    assert named in set(other.tolist()) - own


def test_first_unreached_names_the_first_board_no_play_reaches():
    table = babytris.enumerate_boards(babytris.Rules(width=4, height=5))
    assert _core.first_unreached(table.offsets, table.next_board, 2, 0) == -1
    for lost in (5, table.n_boards - 1):
        redirected = np.where(table.next_board == lost, 0, table.next_board).astype(np.int32)
        assert _core.first_unreached(table.offsets, redirected, 2, 0) == lost
    with pytest.raises(ValueError, match="do not agree"):
        _core.first_unreached(table.offsets, table.next_board, 3, 0)
    with pytest.raises(ValueError, match="do not agree"):
        _core.first_unreached(table.offsets, table.next_board, 2, table.n_boards)
    with pytest.raises(ValueError, match="do not agree"):
        _core.first_unreached(np.zeros(0, dtype=np.int32), table.next_board, 1, 0)
    # arrays no table holds: refused, never read out of range
    one = np.array([0, 1, 1], dtype=np.int32)
    for next_board in (np.array([10**9], dtype=np.int32), np.array([-1], dtype=np.int32)):
        with pytest.raises(ValueError, match="out of range"):
            _core.first_unreached(one, next_board, 1, 0)
    with pytest.raises(ValueError, match="out of range"):
        _core.first_unreached(np.array([0, 5, 1], dtype=np.int32), np.array([1], dtype=np.int32), 1, 0)


def test_a_list_far_from_closed_costs_its_reading_not_its_table(tmp_path):
    # A forged file's two million boards for rules whose table holds 1,696: the moves of a
    # sample are checked before the table is allocated (it would take about a gigabyte).
    script = (
        "import resource, numpy as np, babytris\n"
        "from babytris.engine.enumeration import table_of_boards\n"
        "from babytris.engine.transitions import TableError\n"
        "rules = babytris.Rules(width=4, height=8, no_holes=True, top_out=True)\n"
        "boards = np.arange(2_000_000, dtype=np.uint64) << np.uint64(4)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    table_of_boards(rules, boards)\n"
        "except TableError as err:\n"
        "    print(err)\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    message, grown_mib = out.stdout.strip().splitlines()
    assert re.search(r"board \d+ has a move to a board not in the table", message), out.stdout
    assert int(grown_mib) < 200, out.stdout  # (the map of the boards given: 64 MiB; the table: about 1 GiB)


def test_boards_repeated_are_refused_before_anything_grows_with_them():
    rules = babytris.Rules(width=4, height=4)
    status, *arrays = engine(rules).enumerate(
        0, 2**30, LAYER_BYTES, 1, layer_of_residue=layers(rules), given=np.zeros(10**6, dtype=np.uint64)
    )
    assert status == (-7, 0, 0) and arrays == [None] * 6
    with pytest.raises(ValueError, match=r"given: every board must be in \[0, 2\*\*16\)"):
        engine(rules).enumerate(0, 2**30, 0, 1, given=np.array([0, 2**63 + 5], dtype=np.uint64))
