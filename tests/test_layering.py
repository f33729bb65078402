"""The enumeration's boards by layer: written straight from the bitmap
(``_layers.bitmap_layered``) or regrouped from sorted boards (``_layers.layered``),
the same boards, numbers and layer starts."""

from __future__ import annotations

import numpy as np
import pytest

from babytris.engine import _layers


@pytest.mark.parametrize("residues", [None, [0], [1, 0], [3, 2, 1, 0], [0, 2, 1], [5, 5, 0, 63]])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_straight_from_the_bitmap_equals_regrouping_sorted_boards(residues, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**63, size=300, dtype=np.uint64) & rng.integers(0, 2**63, size=300, dtype=np.uint64)
    bits[7] = 0
    bits[-1] = np.uint64(2**64 - 1)
    boards = np.flatnonzero(np.unpackbits(bits.view(np.uint8), bitorder="little")).astype(np.uint64)
    layer_of_residue = None if residues is None else np.array(residues, dtype=np.int64)
    expected_boards, expected_starts, expected_index = _layers.layered(boards.copy(), layer_of_residue)
    out = np.zeros(len(boards), dtype=np.uint64)
    starts, rank, index, same_layer = _layers.bitmap_layered(bits, out, layer_of_residue)
    assert np.array_equal(out, expected_boards) and np.array_equal(starts, expected_starts)
    assert (index is None) == (expected_index is None) and same_layer is None
    if index is not None:
        assert np.array_equal(index, expected_index)
    popcounts = np.unpackbits(bits.view(np.uint8)).reshape(-1, 64).sum(axis=1)
    assert np.array_equal(rank, np.concatenate([[0], np.cumsum(popcounts)[:-1]]))
    # By layer: the same boards, and each board's number from its word's rank and the masks alone.
    by_layer = np.zeros(len(boards), dtype=np.uint64)
    starts, rank, index, same_layer = _layers.bitmap_layered(bits, by_layer, layer_of_residue, True)
    assert np.array_equal(by_layer, expected_boards) and np.array_equal(starts, expected_starts)
    n_layers = len(starts) - 1
    if layer_of_residue is None or n_layers == 1:
        assert same_layer is None and index is None
        return
    if (n_layers - 1) * len(bits) >= len(boards):  # (ranks per layer would take more than the permutation)
        assert same_layer is None and np.array_equal(index, expected_index)
        return
    assert index is None
    m = len(layer_of_residue)
    for number, board in enumerate(by_layer.tolist()):
        w, bit, c = board >> 6, board & 63, board.bit_count()
        layer = int(layer_of_residue[c % m])
        mask = int(same_layer[((c - (board & 63).bit_count()) % m) * n_layers + layer])
        below = int(bits[w]) & mask & ((1 << bit) - 1)
        assert int(rank[w * n_layers + layer]) + below.bit_count() == number


def test_sizes_that_do_not_match_the_bitmap_are_refused():
    bits = np.array([0b1011, 0, 1], dtype=np.uint64)
    with pytest.raises(ValueError, match="boards must hold the 4 set bits, got 3"):
        _layers.bitmap_layered(bits, np.zeros(3, np.uint64), None)
    with pytest.raises(ValueError, match=r"layers must be in \[0, 64\)"):
        _layers.bitmap_layered(bits, np.zeros(4, np.uint64), np.array([0, 64]), True)
    with pytest.raises(ValueError, match="must not be empty"):
        _layers.bitmap_layered(bits, np.zeros(4, np.uint64), np.zeros(0, np.int64))
