"""Which shard owns a board in the sharded solve (:mod:`babytris.modes.sharded.distributed`):
a fixed function of the board's bits, so every shard, the client and a saved
directory's reader agree without asking."""

from __future__ import annotations

import numpy as np

__all__ = ["SPLITS", "LOW_ROWS", "shard_of", "key_mask", "distinct"]

#: How boards are split into shards (see :mod:`babytris.modes.sharded.distributed`).
SPLITS = ("hash", "low_rows")
#: The bottom rows ``"low_rows"`` splits by.
LOW_ROWS = 2
#: ``"low_rows"`` looks each board's owner up in a table of every bottom-rows pattern up to this many cells.
MAX_TABLE_BITS = 16


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
    """The bits of a board ``split`` mixes (:func:`shard_of`: the owner is the mix of the board's bits
    under this mask, modulo the shards), for the compiled table (``_shard.table``)."""
    return (1 << 64) - 1 if split == "hash" else (1 << (width * LOW_ROWS)) - 1


def shard_of(boards: np.ndarray, n_shards: int, split: str, width: int) -> np.ndarray:
    """The shard that owns each board: int64 array of the shape of ``boards`` (uint64)."""
    if split == "hash":
        return (_mix(boards) % np.uint64(n_shards)).astype(np.int64)
    bits = width * LOW_ROWS
    key = boards & np.uint64((1 << bits) - 1)
    if bits > MAX_TABLE_BITS:
        return (_mix(key) % np.uint64(n_shards)).astype(np.int64)
    # (the owner of every bottom-rows pattern, looked up: a third of the mixing's time at 4x6)
    table = (_mix(np.arange(1 << bits, dtype=np.uint64)) % np.uint64(n_shards)).astype(np.int64)
    return table[key]
