"""Which shard owns a board in the sharded solve (babytris.modes.sharded.owners):
the "low_rows" owner table dealt by the bottom rows' boards, and the compiled
loops' owner (``owner_of``, given the table) agreeing with ``shard_of``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import small_rules

from babytris import Rules
from babytris.engine.enumeration import enumerate_boards
from babytris.engine.placements import canonical_boards, engine
from babytris.engine.transitions import layers
from babytris.modes import _lean
from babytris.modes.sharded import _lean_shard, _shard, owners
from babytris.modes.sharded.board_ranks import BoardRanks
from babytris.modes.sharded.owners import SPLITS, key_mask, owner_table, pattern_weights, shard_of


def _bitmap(boards: np.ndarray, cells: int) -> np.ndarray:
    """A bit a possible board, set for ``boards``."""
    bits = np.zeros(max(1, (1 << cells) >> 6), dtype=np.uint64)
    np.bitwise_or.at(bits, (boards >> np.uint64(6)).astype(np.int64), np.uint64(1) << (boards & np.uint64(63)))
    return bits


def _sweeper(rules: Rules, bits: np.ndarray, split: str, n_shards: int, k: int, table=None):
    """Shard ``k``'s lean sweeper over ``bits``, told ``split``'s owner table (or ``table``)."""
    return _lean_shard.LeanShardSweeper(
        engine(rules),
        bits,
        np.asarray(rules.line_scores, dtype=np.float64),
        np.asarray(rules.probabilities, dtype=np.float64),
        0.9,
        np.asarray(layers(rules), dtype=np.int64),
        key_mask(split, rules.width),
        owner_table(rules, n_shards, split) if table is None else table,
        n_shards,
        k,
    )


@settings(max_examples=25, deadline=None)
@given(
    rules=small_rules(sizes=(2, 5), max_pieces=2, line_scores=False),
    n_shards=st.integers(1, 5),
    split=st.sampled_from(SPLITS),
    data=st.data(),
)
def test_the_compiled_owner_is_shard_of(rules, n_shards, split, data):
    """Random boards (any bits, reachable or not) at widths 2 to 5: the lean
    shard's own boards and ghosts (``LeanShardSweeper``, its sweeps' owner)
    and the table shard's moves to another shard (``_shard.table``'s -1)
    are those ``shard_of`` gives."""
    cells = rules.width * rules.height
    drawn = data.draw(st.lists(st.integers(0, 2**cells - 1), min_size=1, max_size=300))
    boards = np.unique(np.array(drawn, dtype=np.uint64))
    owner = shard_of(boards, n_shards, split, rules)
    assert owner.dtype == np.int64 and owner.min() >= 0 and owner.max() < n_shards
    bits = _bitmap(boards, cells)
    for k in range(n_shards):
        sweeper = _sweeper(rules, bits, split, n_shards, k)
        own, _ = sweeper.boards(True)
        ghosts, _ = sweeper.boards(False)
        assert np.array_equal(own, boards[owner == k]) and np.array_equal(ghosts, boards[owner != k])
        mine = boards[owner == k]
        if not len(mine):
            continue
        ranks = BoardRanks(mine, cells)
        table = owner_table(rules, n_shards, split)
        args = (ranks.words, ranks.before, ranks.masks, ranks.layer_of_residue, key_mask(split, rules.width), table)
        offsets, rows, _, _ = _shard.table(engine(rules), mine, *args, n_shards, k)
        after = _shard.expand(engine(rules), mine, 1)[1]
        assert np.array_equal(rows == -1, shard_of(after, n_shards, split, rules) != k)


def test_low_rows_deals_4x6_evenly():
    """4x6's patterns counted at its own height: the shards' boards within
    0.1% of even with 2 and 4 shards, 2.1% with 3 and 5 (196 of the 211
    patterns hold about 1/196 of the boards each: n shards cannot share
    them evenly unless n divides 196); the patterns mixed, as before the
    table, put 24.5% over even in the largest of 4.  Each board's owner is
    its bottom rows' entry."""
    rules = Rules(width=4, height=6)
    boards = enumerate_boards(rules).boards
    for n, within in ((2, 1.001), (3, 1.021), (4, 1.001), (5, 1.021)):
        counts = np.bincount(shard_of(boards, n, "low_rows", rules), minlength=n)
        assert counts.max() <= within * len(boards) / n, (n, counts)
    mixed = owners._mix(np.arange(256, dtype=np.uint64)) % np.uint64(4)
    assert np.bincount(mixed[boards & np.uint64(0xFF)], minlength=4).max() > 1.2 * len(boards) / 4
    table = owner_table(rules, 4, "low_rows")
    assert np.array_equal(shard_of(boards, 4, "low_rows", rules), table[boards & np.uint64(0xFF)])


def test_low_rows_deals_4x7_evenly_from_its_patterns_at_six_rows():
    """4x7's table comes from 4x6's boards (:data:`owners.ESTIMATE_HEIGHT`):
    its real boards (the lean search's bitmap, counted by pattern) split
    within 0.1% of even over 2 and 4 shards."""
    rules = Rules(width=4, height=7)
    assert np.array_equal(pattern_weights(rules), pattern_weights(Rules(width=4, height=6)))
    start = int(canonical_boards(np.array([rules.start], dtype=np.uint64), rules)[0])
    bits = _lean.LeanTable(engine(rules), start, 1 << 40, 1).bits
    per_bit = np.zeros((4, 64), dtype=np.int64)  # (pattern = (word % 4) * 64 + bit)
    for at in range(0, len(bits), 1 << 20):
        chunk = bits[at : at + (1 << 20)].view(np.uint8).reshape(-1, 4, 8)
        per_bit += np.unpackbits(chunk, axis=2, bitorder="little").sum(axis=0, dtype=np.int64)
    patterns = per_bit.ravel()
    assert patterns.sum() == 35_655_859
    for n in (2, 4):
        counts = np.bincount(owner_table(rules, n, "low_rows"), weights=patterns, minlength=n)
        assert counts.max() <= 1.001 * patterns.sum() / n, (n, counts)


def test_the_owner_table_is_a_fixed_function_of_the_rules():
    """The same table computed afresh (no cache), read-only; dealt by boards:
    the pattern with the most boards first, to shard 0, the next to shard 1."""
    rules = Rules(width=4, height=5)
    table = owner_table(rules, 3, "low_rows")
    owner_table.cache_clear()
    pattern_weights.cache_clear()
    again = owner_table(rules, 3, "low_rows")
    assert again is not table and np.array_equal(again, table) and again.dtype == np.int16
    assert not again.flags.writeable and not pattern_weights(rules).flags.writeable
    weights = pattern_weights(rules)
    assert weights.sum() == 182_101 and len(weights) == 256
    first, second = np.argsort(-weights, kind="stable")[:2]
    assert table[first] == 0 and table[second] == 1
    # no table where the owner is mixed: "hash", or patterns over MAX_TABLE_BITS (9 wide: 18 bits)
    assert len(owner_table(rules, 3, "hash")) == 0
    wide = Rules(width=9, height=3)
    assert len(owner_table(wide, 3, "low_rows")) == 0 and pattern_weights(wide) is None
    boards = np.arange(0, 1 << 27, 997, dtype=np.uint64)
    expected = owners._mix(boards & np.uint64((1 << 18) - 1)) % np.uint64(3)
    assert np.array_equal(shard_of(boards, 3, "low_rows", wide), expected.astype(np.int64))
    with pytest.raises(ValueError, match=r"n_shards must be in \[1, 32767\], got 0"):
        owner_table(rules, 0, "low_rows")
    with pytest.raises(ValueError, match=r"split must be one of 'hash', 'low_rows', got 'rows'"):
        owner_table(rules, 2, "rows")
    assert np.array_equal(owner_table(rules, np.int64(3), "low_rows"), table)  # (a numpy count of shards)


def test_the_compiled_loops_refuse_an_owner_table_that_is_not_one():
    rules = Rules(width=4, height=4)
    boards = np.sort(enumerate_boards(rules).boards)[:100]
    ranks = BoardRanks(boards, 16)
    with pytest.raises(ValueError, match=r"owners must be empty or hold key_mask \+ 1 entries \(256\), got 255"):
        rank_of = (ranks.words, ranks.before, ranks.masks, ranks.layer_of_residue)
        _shard.table(engine(rules), boards, *rank_of, 0xFF, np.zeros(255, dtype=np.int16), 2, 0)
    wrong = np.zeros(256, dtype=np.int16)
    wrong[7] = 2
    with pytest.raises(ValueError, match=r"owners\[7\] = 2 is not a shard in \[0, 2\)"):
        _sweeper(rules, _bitmap(boards, 16), "low_rows", 2, 0, wrong)


@settings(max_examples=20, deadline=None)
@given(rules=small_rules(sizes=(1, 4), max_pieces=2, line_scores=False, variants=True))
def test_the_patterns_are_counted_as_the_enumeration_finds_them(rules):
    """Any rule set (the lean search's bitmap for the plain game, the engine's
    enumeration for the rest; patterns under a word's 6 bits folded): each
    bottom-rows pattern's boards, as the enumeration of the same rules lists them."""
    weights = pattern_weights(rules)
    assert weights is not None and len(weights) == 1 << (2 * rules.width)
    boards = enumerate_boards(rules).boards  # (at most 4 rows and 16 cells: counted at the rules' own height)
    assert np.array_equal(
        weights, np.bincount((boards & np.uint64(len(weights) - 1)).astype(np.int64), minlength=len(weights))
    )
