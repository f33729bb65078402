"""Which shard owns a board in the sharded solve (:mod:`babytris.modes.sharded.distributed`):
a fixed function of the rules, the shards and the board's bits, so every
shard, the client and a saved directory's reader agree without asking.

``"hash"`` mixes all of a board's bits.  ``"low_rows"`` looks its bottom
:data:`LOW_ROWS` rows up in an owner table (:func:`owner_table`), balanced
so that the shards hold about as many boards each: the patterns are dealt,
the most frequent first, each to the shard holding the fewest boards so far
(longest processing time first), by their boards counted at a lower height
(:func:`pattern_weights`).  The compiled loops take the same table."""

from __future__ import annotations

import dataclasses
import functools
import heapq

import numpy as np

from ...engine.enumeration import enumerate_boards
from ...engine.placements import canonical_boards, engine
from ...engine.resources import MemoryLimitError
from ...game.rules import Rules
from .. import _lean
from ..lean import lean_rules_problem

__all__ = ["SPLITS", "LOW_ROWS", "shard_of", "key_mask", "owner_digest", "owner_table", "pattern_weights", "distinct"]

#: How boards are split into shards (see :mod:`babytris.modes.sharded.distributed`).
SPLITS = ("hash", "low_rows")
#: The bottom rows ``"low_rows"`` splits by.
LOW_ROWS = 2
#: ``"low_rows"`` looks each board's owner up in a table of every bottom-rows pattern up to this many
#: cells; wider boards' patterns are mixed, as ``"hash"`` mixes a whole board.
MAX_TABLE_BITS = 16
#: The height ``"low_rows"``'s patterns are counted at (lower where the board would pass
#: :data:`ESTIMATE_CELLS`; the rules' own where they are lower).  4 wide, the boards' shares by
#: pattern at 6 rows are within 0.15% (summed) of 4x8's, and the table from them splits 4x7 and 4x8
#: into 4 shards within 0.005% of even (from 4 rows: 0.01%; the mixed patterns: 24.5% over).
ESTIMATE_HEIGHT = LOW_ROWS + 4
#: The most cells of the board the patterns are counted on (4x6: 2.5 million boards, 0.06 s, 5 MiB).
ESTIMATE_CELLS = 24
#: The memory the count's enumeration may take (rules the lean search does not take); over it, the patterns are mixed.
ESTIMATE_BUDGET = 2**28


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over a uint64 array: every bit of the input stirs every bit of the output."""
    x = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def distinct(boards: np.ndarray) -> np.ndarray:
    """The distinct boards of a uint64 array, ascending (np.unique, without its slow path for uint64)."""
    boards = np.sort(boards)
    keep = np.ones(len(boards), dtype=bool)
    keep[1:] = boards[1:] != boards[:-1]
    return boards[keep]


def key_mask(split: str, width: int) -> int:
    """The bits of a board ``split`` reads: all of them (``"hash"``), or the bottom rows'
    (``"low_rows"``: the owner table's index, :func:`owner_table`)."""
    return (1 << 64) - 1 if split == "hash" else (1 << (width * LOW_ROWS)) - 1


@functools.lru_cache(maxsize=16)
def pattern_weights(rules: Rules) -> np.ndarray | None:
    """The reachable boards of each bottom-rows pattern (``pattern = board &
    key_mask("low_rows", width)``): int64, ``2**(width * LOW_ROWS)``
    entries, counted at :data:`ESTIMATE_HEIGHT` rows (fewer where the board
    would pass :data:`ESTIMATE_CELLS` cells; the rules' own where they are
    as low), from the rules' start board where it fits the lower board,
    else the empty one: by the lean search's bitmap (the plain game), else
    the engine's enumeration.  None where no count can be made (patterns
    over :data:`MAX_TABLE_BITS` bits, a piece that does not fit the lower
    board, an enumeration over :data:`ESTIMATE_BUDGET`).  A fixed function
    of ``rules``, kept a process."""
    bits = rules.width * LOW_ROWS
    if bits > MAX_TABLE_BITS:
        return None
    height = min(rules.height, ESTIMATE_HEIGHT, max(LOW_ROWS, ESTIMATE_CELLS // rules.width))
    # (the rewards do not change which boards are reached, and the defaults fit every height;
    # the start board where the lower board takes it: a combo from the empty board reaches no other)
    lower = None
    for start in dict.fromkeys((rules.start, 0)):
        try:
            lower = dataclasses.replace(rules, height=height, start=start, line_scores=None)  # type: ignore[arg-type]
            break
        except ValueError:  # (a start board over the rows or in the top row with top_out; a piece too tall)
            continue
    if lower is None:
        return None
    if lean_rules_problem(lower) is None:  # (the plain game: the lean search's bitmap alone, 2 MiB at 4x6)
        first = int(canonical_boards(np.array([lower.start], dtype=np.uint64), lower)[0])
        table = _lean.LeanTable(engine(lower), first, 1 << 62, 1)
        if table.status == -4:
            raise KeyboardInterrupt
        if table.status != 0:
            raise MemoryError(f"owners: the search of {lower.width}x{lower.height} ran out of memory")
        weights = _marked_by_pattern(table.bits, bits)
    else:  # (the engine's enumeration, which builds the moves too: 0.1 GB at 4x6)
        try:
            boards = enumerate_boards(lower, n_jobs=1, max_memory=ESTIMATE_BUDGET).boards
        except MemoryLimitError:
            return None
        weights = np.bincount((boards & np.uint64((1 << bits) - 1)).astype(np.int64), minlength=1 << bits)
    weights.setflags(write=False)
    return weights


def _marked_by_pattern(marks: np.ndarray, bits: int) -> np.ndarray:
    """The boards marked in ``marks`` (a bit a possible board) by their low
    ``bits`` bits: int64, ``2**bits`` entries.  Board ``64 w + i`` is word
    w's bit i, so its pattern is ``(w % per) * 64 + i`` (folded below 64)."""
    per = 1 << max(0, bits - 6)  # (the words a cycle of patterns spans)
    counts = np.zeros((per, 64), dtype=np.int64)
    padded = np.zeros(max(len(marks), per), dtype=np.uint64)  # (a board under LOW_ROWS rows: one word)
    padded[: len(marks)] = marks
    words = padded.reshape(-1, per)
    for at in range(0, len(words), 1 << 14):
        chunk = words[at : at + (1 << 14)].view(np.uint8).reshape(-1, per, 8)
        counts += np.unpackbits(chunk, axis=2, bitorder="little").sum(axis=0, dtype=np.int64)
    return np.bincount(np.arange(per * 64) & ((1 << bits) - 1), weights=counts.ravel(), minlength=1 << bits).astype(
        np.int64
    )


def owner_digest(rules: Rules, n_shards: int, split: str) -> str:
    """SHA-256 of :func:`owner_table`'s table: a saved directory's manifest
    holds it, so a reader whose table came out otherwise (its code changed)
    refuses the directory rather than ask the wrong shard."""
    import hashlib

    return hashlib.sha256(owner_table(rules, n_shards, split).tobytes()).hexdigest()


@functools.lru_cache(maxsize=64)
def owner_table(rules: Rules, n_shards: int, split: str) -> np.ndarray:
    """The shard owning each bottom-rows pattern under ``split``: int16
    (read-only), ``key_mask(split, width) + 1`` entries, each pattern of
    :func:`pattern_weights` dealt, the most boards first (ties: the lower
    pattern), to the shard with the fewest boards so far (ties: the lower
    shard); the patterns mixed where there are no weights.  Empty where the
    owner is the mix of the key's bits modulo the shards (``"hash"``, or
    patterns over :data:`MAX_TABLE_BITS` bits)."""
    if not 1 <= n_shards <= np.iinfo(np.int16).max:
        raise ValueError(f"n_shards must be in [1, {np.iinfo(np.int16).max}], got {n_shards}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(map(repr, SPLITS))}, got {split!r}")
    bits = rules.width * LOW_ROWS
    if split == "hash" or bits > MAX_TABLE_BITS:
        table = np.zeros(0, dtype=np.int16)
    elif (weights := pattern_weights(rules)) is None:
        table = (_mix(np.arange(1 << bits, dtype=np.uint64)) % np.uint64(n_shards)).astype(np.int16)
    else:
        table = np.empty(1 << bits, dtype=np.int16)
        loads = [(0, k) for k in range(n_shards)]  # (a heap of (boards, shard): its least first)
        for pattern in sorted(range(1 << bits), key=lambda p: (-int(weights[p]), p)):
            boards, k = heapq.heappop(loads)
            table[pattern] = k
            heapq.heappush(loads, (boards + int(weights[pattern]), k))
    table.setflags(write=False)
    return table


def shard_of(boards: np.ndarray, n_shards: int, split: str, rules: Rules) -> np.ndarray:
    """The shard that owns each board: int64 array of the shape of ``boards`` (uint64)."""
    table = owner_table(rules, n_shards, split)
    key = boards & np.uint64(key_mask(split, rules.width))
    if not len(table):
        return (_mix(key) % np.uint64(n_shards)).astype(np.int64)
    return table[key].astype(np.int64)
