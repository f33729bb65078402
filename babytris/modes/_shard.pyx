# cython: language_level=3
"""The moves of a batch of boards with the boards after as bits, for the
sharded solve (:mod:`babytris.modes.distributed`): a shard expands the boards it
owns and routes each board after to the shard that owns it, so it cannot
number them itself.  The placement rule is the engine's (``_core.pxd``)."""

from cython.parallel cimport prange
from libc.stdint cimport uint64_t, int64_t, uint8_t, uint16_t

import numpy as np

from babytris.engine.transitions import offsets_from_counts

from babytris.engine._types cimport board_t, offset_t
from babytris.engine._core cimport engine_geometry, smeared_board, drop_piece
from babytris.engine._geometry cimport Geometry


cdef inline void count_moves(const Geometry* g, board_t board, int64_t* counts) noexcept nogil:
    """The number of moves of each piece on ``board`` into ``counts[0:P]``."""
    cdef board_t sm = smeared_board(g, board), after
    cdef int p, k, lines
    cdef int64_t c
    for p in range(g.n_pieces):
        c = 0
        for k in range(g.first[p], g.first[p + 1]):
            if drop_piece(g, board, sm, k, &after, &lines):
                c = c + 1
        counts[p] = c


cdef inline void write_moves(const Geometry* g, board_t board, int64_t at, uint64_t* nxt, uint8_t* cleared,
                             uint16_t* number) noexcept nogil:
    """The moves of every piece on ``board``, written from ``at`` on."""
    cdef board_t sm = smeared_board(g, board), after
    cdef int p, k, lines
    for p in range(g.n_pieces):
        for k in range(g.first[p], g.first[p + 1]):
            if drop_piece(g, board, sm, k, &after, &lines):
                nxt[at] = after
                cleared[at] = <uint8_t>lines
                number[at] = <uint16_t>(k - g.first[p])
                at = at + 1


def expand(engine, const uint64_t[::1] boards, int n_threads=1):
    """Every move of every (board, piece) of ``boards`` (uint64), by ``n_threads`` threads.

    Returns:
        ``(offsets, next_bits, lines, placement)``: int32 ``(len(boards) *
        n_pieces + 1,)`` delimiting the moves of state ``i * n_pieces + p``,
        then per move the board after as bits (uint64), the rows cleared
        (uint8) and the placement number within the piece (uint16), as
        :meth:`Engine.enumerate` numbers them.
    """
    cdef const Geometry* g = engine_geometry(engine)
    if g.soft:
        raise ValueError("expand: soft moves are searched, not dropped; the sharded solve takes hard drops only")
    cdef Py_ssize_t n = boards.shape[0], i
    cdef int P = g.n_pieces
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    counts = np.zeros(n * P, dtype=np.int64)
    cdef int64_t[::1] c = counts
    if n:
        for i in prange(n, nogil=True, num_threads=n_threads, schedule="static"):
            count_moves(g, boards[i], &c[i * P])
    offsets = offsets_from_counts(counts)
    cdef Py_ssize_t n_moves = offsets[n * P]
    next_bits = np.empty(n_moves, dtype=np.uint64)
    lines = np.empty(n_moves, dtype=np.uint8)
    placement = np.empty(n_moves, dtype=np.uint16)
    cdef const offset_t[::1] o = offsets
    cdef uint64_t[::1] nb = next_bits
    cdef uint8_t[::1] cl = lines
    cdef uint16_t[::1] pl = placement
    if n_moves:
        for i in prange(n, nogil=True, num_threads=n_threads, schedule="static"):
            write_moves(g, boards[i], o[i * P], &nb[0], &cl[0], &pl[0])
    return offsets, next_bits, lines, placement
