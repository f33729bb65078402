"""Where boards stand among a shard's sorted boards, for the sharded solve's
search and table (:mod:`babytris.modes.sharded.shard`): a bitmap over every board of
the rules' cells with each word's count of boards before it, so a lookup is
two reads and a popcount where a binary search of millions of boards was
about 25 cache misses (measured here: 40 million boards found among 17
million, 1.1 s against 74 s; the table's 100 million moves at 4x7 took most
of its 18 s).  Boards of more than :data:`MAX_BITMAP_CELLS` cells fall back to
:func:`numpy.searchsorted`."""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_BITMAP_CELLS", "BoardRanks"]

#: Cells up to which the bitmap is kept (2**30 bits: 128 MiB, and as much for the counts).
MAX_BITMAP_CELLS = 30


class BoardRanks:
    """The distinct ``boards`` (uint64, ascending) of a board of ``cells``
    cells, and each one's position among them."""

    def __init__(self, boards: np.ndarray, cells: int, words: np.ndarray | None = None) -> None:
        """``words``, if given: the bitmap of ``boards`` (a bit a possible board), kept as it is."""
        self.boards, self.cells = boards, cells
        if cells > MAX_BITMAP_CELLS:
            return
        if words is not None:
            self.words = words
        else:
            self.words = np.zeros(max(1, (1 << cells) >> 6), dtype=np.uint64)
        if words is None and len(boards):
            word = boards >> np.uint64(6)
            starts = np.flatnonzero(np.concatenate([[True], word[1:] != word[:-1]]))
            # (distinct boards: within a word the bits add up to their OR)
            self.words[word[starts]] = np.add.reduceat(np.uint64(1) << (boards & np.uint64(63)), starts)
        # (one int64 array, no temporary of its size: at 4x7 each is 32 MiB of pages mapped anew)
        self.before = np.zeros(len(self.words), dtype=np.int64)
        np.cumsum(np.bitwise_count(self.words[:-1]), dtype=np.int64, out=self.before[1:])

    def find(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(found, at)``: bool and int64 arrays of the shape of ``boards``:
        whether each is among the boards, and where (where found; else where
        it would go)."""
        if self.cells > MAX_BITMAP_CELLS:
            at = np.searchsorted(self.boards, boards)
            found = np.zeros(len(boards), dtype=bool)
            inside = at < len(self.boards)
            found[inside] = self.boards[at[inside]] == boards[inside]
            return found, at
        word_at = boards >> np.uint64(6)
        bit = boards & np.uint64(63)
        word = self.words[word_at]
        found = ((word >> bit) & np.uint64(1)).astype(bool)
        below = word & ((np.uint64(1) << bit) - np.uint64(1))
        return found, self.before[word_at] + np.bitwise_count(below)

    def index(self, boards: np.ndarray) -> np.ndarray:
        """The position of each of ``boards`` (int64), every one among the boards."""
        return self.find(boards)[1]
