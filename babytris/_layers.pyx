# cython: language_level=3
"""Boards by layer: the filled-cell counts that split the boards into the
layers the sweeps visit in order (see :func:`babytris.transitions.layers`),
and the stable grouping of the enumeration's sorted boards by layer."""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint8_t

import numpy as np

from babytris._types cimport board_t, offset_t
from babytris._index cimport popcount


def layered(sorted_boards, const int64_t[::1] layer_of_residue):
    """``(boards, layer_starts, new_index)``: ascending ``sorted_boards``
    grouped by layer (stable), and each board's new number (int32; None if
    there is one layer and nothing moves)."""
    cdef const board_t[::1] b = sorted_boards
    cdef Py_ssize_t n = b.shape[0], i
    cdef int m = 1 if layer_of_residue is None else layer_of_residue.shape[0], n_layers = 1, layer
    cdef int64_t fill[65]
    if m < 1:
        raise ValueError("layer_of_residue must not be empty")
    if layer_of_residue is not None:
        for i in range(m):
            if not 0 <= layer_of_residue[i] < 64:
                raise ValueError("layer_of_residue: layers must be in [0, 64)")
            n_layers = max(n_layers, <int>layer_of_residue[i] + 1)
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


def live_boards(const offset_t[::1] offsets, int n_pieces, const int64_t[::1] layer_starts):
    """``(order, starts)``: the boards with a move (int32, ascending), and
    where each layer's begin in it (int64, one more than the layers), in
    two passes over the rows and no array but the result (a mask and the
    indices of numpy's ``flatnonzero`` cost 13 bytes a board at 4x7)."""
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
    order = np.empty(k, dtype=np.int32)
    cdef int32_t[::1] o = order
    k = 0
    with nogil:
        for b in range(layer_starts[n_layers]):
            if offsets[(b + 1) * n_pieces] > offsets[b * n_pieces]:
                o[k] = <int32_t>b
                k += 1
    return order, starts
