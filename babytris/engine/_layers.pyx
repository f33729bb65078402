# cython: language_level=3
"""Boards by layer: the filled-cell counts that split the boards into the
layers the sweeps visit in order (see :func:`babytris.engine.transitions.layers`),
and the stable grouping of the enumeration's sorted boards by layer (or of
the boards of its bitmap, written by layer straight away)."""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint8_t

import numpy as np

from babytris.engine._types cimport board_t, offset_t
from babytris.engine._index cimport lowest_bit, popcount


cdef int layer_count(const int64_t[::1] layer_of_residue) except -1:
    """The layers ``layer_of_residue`` numbers (1 if None), each checked to lie in [0, 64)."""
    cdef Py_ssize_t i
    cdef int n_layers = 1
    if layer_of_residue is None:
        return 1
    if layer_of_residue.shape[0] < 1:
        raise ValueError("layer_of_residue must not be empty")
    for i in range(layer_of_residue.shape[0]):
        if not 0 <= layer_of_residue[i] < 64:
            raise ValueError("layer_of_residue: layers must be in [0, 64)")
        n_layers = max(n_layers, <int>layer_of_residue[i] + 1)
    return n_layers


def bitmap_layered(const uint64_t[::1] bits, board_t[::1] boards, const int64_t[::1] layer_of_residue,
                   bint by_layer=False):
    """The boards of the enumeration's bitmap (bit b of word w: board
    64 w + b) written into ``boards`` (one entry per set bit) grouped by layer
    as :func:`layered` groups sorted boards; returns ``(layer_starts, rank,
    new_index, same_layer)``.  ``layer_starts`` as :func:`layered` gives it;
    ``rank`` (int32), the set bits before each word; ``new_index``, as
    :func:`layered` gives it, the number of the k-th board in ascending
    order (None with one layer); ``same_layer``, None.  No sorted copy and
    no layer per board are held (at 4x7: 321 MB of fresh memory less).

    ``by_layer`` (with several layers, and where it takes less memory:
    ``(n_layers - 1) * n_words < n_boards``) numbers the boards without
    ``new_index``: ``rank[w * n_layers + L]`` is then the number layer L's
    next board from word w on gets, and ``same_layer[(h % m) * n_layers + L]``
    (uint64, m = len(layer_of_residue)) the bits of a word whose boards have
    h filled cells in bits 6 and up that lie in layer L (``_index.index_of``
    reads both; at 4x7, 64 MB against 159 and no random load a lookup)."""
    cdef Py_ssize_t n_words = bits.shape[0], w, k = 0, n = boards.shape[0], j
    cdef int m = 1 if layer_of_residue is None else layer_of_residue.shape[0], layer, n_layers, h
    cdef uint64_t word
    cdef board_t board
    cdef int64_t fill[65]
    n_layers = layer_count(layer_of_residue)
    layer_starts = np.zeros(n_layers + 1, dtype=np.int64)
    cdef int64_t[::1] starts = layer_starts
    with nogil:  # (the count per layer, and the number of boards)
        for w in range(n_words):
            word = bits[w]
            while word:
                board = (<board_t>w << 6) | <board_t>lowest_bit(word)
                starts[(layer_of_residue[popcount(board) % m] if n_layers > 1 else 0) + 1] += 1
                word &= word - 1
        for layer in range(n_layers):
            starts[layer + 1] += starts[layer]
            fill[layer] = starts[layer]
    if starts[n_layers] != n:
        raise ValueError(f"bitmap_layered: boards must hold the {starts[n_layers]} set bits, got {n}")
    # (only where the ranks per layer, 4 bytes a word and layer, take less than a rank and the
    # permutation, 4 bytes a word and 4 a board: not for a wide board's many layers over few boards)
    by_layer = by_layer and n_layers > 1 and (n_layers - 1) * n_words < n
    rank = np.empty(n_words * (n_layers if by_layer else 1), dtype=np.int32)
    cdef int32_t[::1] ranks = rank
    new_index = np.empty(n, dtype=np.int32) if n_layers > 1 and not by_layer else None
    cdef int32_t[::1] to_new = new_index
    with nogil:
        for w in range(n_words):
            if by_layer:
                for layer in range(n_layers):
                    ranks[w * n_layers + layer] = <int32_t>fill[layer]
            else:
                ranks[w] = <int32_t>k
            word = bits[w]
            while word:
                board = (<board_t>w << 6) | <board_t>lowest_bit(word)
                layer = <int>layer_of_residue[popcount(board) % m] if n_layers > 1 else 0
                if new_index is not None:
                    to_new[k] = <int32_t>fill[layer]
                boards[fill[layer]] = board
                fill[layer] += 1
                k += 1
                word &= word - 1
    if not by_layer:
        return layer_starts, rank, new_index, None
    same_layer = np.zeros(m * n_layers, dtype=np.uint64)
    cdef uint64_t[::1] same = same_layer
    for h in range(m):
        for j in range(64):
            same[h * n_layers + layer_of_residue[(h + popcount(j)) % m]] |= (<uint64_t>1) << j
    return layer_starts, rank, None, same_layer


def layered(sorted_boards, const int64_t[::1] layer_of_residue):
    """``(boards, layer_starts, new_index)``: ascending ``sorted_boards``
    grouped by layer (stable), and each board's new number (int32; None if
    there is one layer and nothing moves)."""
    cdef const board_t[::1] b = sorted_boards
    cdef Py_ssize_t n = b.shape[0], i
    cdef int m = 1 if layer_of_residue is None else layer_of_residue.shape[0], layer
    cdef int64_t fill[65]
    cdef int n_layers = layer_count(layer_of_residue)
    layer_starts = np.zeros(n_layers + 1, dtype=np.int64)
    cdef int64_t[::1] starts = layer_starts
    if n_layers == 1:
        starts[1] = n
        return sorted_boards, layer_starts, None
    layer_of = np.empty(n, dtype=np.uint8)
    cdef uint8_t[::1] lay = layer_of
    with nogil:
        for i in range(n):
            lay[i] = <uint8_t>layer_of_residue[popcount(b[i]) % m]
            starts[lay[i] + 1] += 1
        for layer in range(n_layers):
            starts[layer + 1] += starts[layer]
            fill[layer] = starts[layer]
    out = np.empty(n, dtype=np.uint64)
    new_index = np.empty(n, dtype=np.int32)
    cdef board_t[::1] o = out
    cdef int32_t[::1] to_new = new_index
    with nogil:
        for i in range(n):
            to_new[i] = <int32_t>fill[lay[i]]
            o[fill[lay[i]]] = b[i]
            fill[lay[i]] += 1
    return out, layer_starts, new_index


def popcounts(const uint64_t[::1] boards):
    """Filled cells of each board (uint8 array)."""
    out = np.empty(boards.shape[0], dtype=np.uint8)
    cdef uint8_t[::1] view = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(boards.shape[0]):
            view[i] = <uint8_t>popcount(boards[i])
    return out


def live_boards(const offset_t[::1] offsets, int n_pieces, const int64_t[::1] layer_starts, int32_t[::1] out=None):
    """``(order, starts)``: the boards with a move (int32, ascending), and
    where each layer's begin in it (int64, one more than the layers), in
    two passes over the rows and no array but the result (a mask and the
    indices of numpy's ``flatnonzero`` cost 13 bytes a board at 4x7).
    ``out``, if given (one entry per board at least), receives the order,
    which is then a view of its start."""
    cdef Py_ssize_t n_layers = layer_starts.shape[0] - 1, layer, b, k = 0
    if n_pieces < 1 or offsets.shape[0] < 1 or (offsets.shape[0] - 1) % n_pieces:
        raise ValueError("live_boards: offsets must hold n_boards * n_pieces + 1 entries")
    if n_layers < 1 or layer_starts[0] != 0 or layer_starts[n_layers] != (offsets.shape[0] - 1) // n_pieces:
        raise ValueError("live_boards: layer_starts must run from 0 to the number of boards")
    for layer in range(n_layers):
        if layer_starts[layer + 1] < layer_starts[layer]:
            raise ValueError("live_boards: layer_starts must not decrease")
    starts = np.zeros(n_layers + 1, dtype=np.int64)
    cdef int64_t[::1] at = starts
    with nogil:
        for layer in range(n_layers):
            for b in range(layer_starts[layer], layer_starts[layer + 1]):
                k += offsets[(b + 1) * n_pieces] > offsets[b * n_pieces]
            at[layer + 1] = k
    if out is not None and out.shape[0] < layer_starts[n_layers]:
        raise ValueError(f"live_boards: out must have an entry per board ({layer_starts[n_layers]}), "
                         f"got {out.shape[0]}")
    order = np.empty(k, dtype=np.int32) if out is None else np.asarray(out)[:k]
    cdef int32_t[::1] o = order
    k = 0
    with nogil:
        for b in range(layer_starts[n_layers]):
            if offsets[(b + 1) * n_pieces] > offsets[b * n_pieces]:
                o[k] = <int32_t>b
                k += 1
    return order, starts
