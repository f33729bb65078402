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

from . import _shard

__all__ = ["MAX_BITMAP_CELLS", "BoardRanks"]

#: Cells up to which the bitmap is kept (2**30 bits: 128 MiB, and as much for the counts).
MAX_BITMAP_CELLS = 30


class BoardRanks:
    """The distinct ``boards`` (uint64, ascending) of a board of ``cells``
    cells, and each one's row among them: its rank, or with
    ``layer_of_residue`` (a board's layer by its cells modulo its length, as
    the sweeps number them) its place where the boards are numbered layer
    after layer, ascending within each: the engine's order, in which a
    layer's sweep reads and writes one stretch of the values (``rowed``:
    the boards in that order, the layers ``layer_starts``)."""

    def __init__(
        self,
        boards: np.ndarray,
        cells: int,
        layer_of_residue: np.ndarray | None = None,
        words: np.ndarray | None = None,
    ) -> None:
        """``words``, if given: the bitmap of ``boards`` (a bit a possible board), kept as it is."""
        self.boards, self.cells = boards, cells
        by = np.zeros(1, dtype=np.int64) if layer_of_residue is None else np.asarray(layer_of_residue, dtype=np.int64)
        self.layer_of_residue, R, L = by, len(by), int(by.max()) + 1
        self.masks = _layer_masks(by, L)
        if cells > MAX_BITMAP_CELLS:  # (binary search among the boards, then each one's row)
            layer = by[np.bitwise_count(boards) % R]
            order = np.concatenate([np.flatnonzero(layer == m) for m in range(L)])
            self.rowed, self.layer_starts = boards[order], np.searchsorted(layer[order], np.arange(L + 1))
            self.row_of_rank = np.empty(len(boards), dtype=np.int64)
            self.row_of_rank[order] = np.arange(len(boards))
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
        if L > 1:  # (listed from the bitmap by layer, with the rows before each word's: two compiled passes)
            self.rowed, self.layer_starts, self.before = _shard.listed_by_layer(self.words, self.masks, R)
            return
        self.rowed, self.layer_starts = boards, np.array([0, len(boards)], dtype=np.int64)
        # (one int64 array, no temporary of its size: at 4x7 each is 32 MiB of pages mapped anew)
        self.before = np.zeros(len(self.words), dtype=np.int64)
        np.cumsum(np.bitwise_count(self.words[:-1]), dtype=np.int64, out=self.before[1:])

    def find(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(found, at)``: bool and int64 arrays of the shape of ``boards``:
        whether each is among the boards, and its row (where found)."""
        if self.cells > MAX_BITMAP_CELLS:
            at = np.searchsorted(self.boards, boards)
            found = np.zeros(len(boards), dtype=bool)
            inside = at < len(self.boards)
            found[inside] = self.boards[at[inside]] == boards[inside]
            return found, np.where(found, self.row_of_rank[np.minimum(at, max(len(self.boards) - 1, 0))], at)
        R, L = len(self.layer_of_residue), len(self.layer_starts) - 1
        word_at = boards >> np.uint64(6)
        bit = boards & np.uint64(63)
        word = self.words[word_at]
        found = ((word >> bit) & np.uint64(1)).astype(bool)
        layer = self.layer_of_residue[np.bitwise_count(boards) % R]
        mask = self.masks[(np.bitwise_count(word_at) % R).astype(np.int64) * L + layer]
        below = word & mask & ((np.uint64(1) << bit) - np.uint64(1))
        return found, self.before[word_at.astype(np.int64) * L + layer] + np.bitwise_count(below)

    def index(self, boards: np.ndarray) -> np.ndarray:
        """The row of each of ``boards`` (int64), every one among the boards."""
        return self.find(boards)[1]


def _layer_masks(layer_of_residue: np.ndarray, n_layers: int) -> np.ndarray:
    """Per (residue of a word's own cells, layer), the bits of a word's boards in
    that layer (uint64, ``residues * n_layers``): board ``64 w + j`` has
    ``cells(w) + cells(j)`` cells."""
    R = len(layer_of_residue)
    bit_cells = np.bitwise_count(np.arange(64, dtype=np.uint64)).astype(np.int64)
    bits = np.uint64(1) << np.arange(64, dtype=np.uint64)
    masks = np.zeros(R * n_layers, dtype=np.uint64)
    for r in range(R):
        layer = layer_of_residue[(r + bit_cells) % R]
        for m in range(n_layers):
            masks[r * n_layers + m] = np.bitwise_or.reduce(bits[layer == m], initial=np.uint64(0))
    return masks
