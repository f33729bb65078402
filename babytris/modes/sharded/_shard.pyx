# cython: language_level=3
"""The moves of a batch of boards with the boards after as bits, for the
sharded solve (:mod:`babytris.modes.sharded.distributed`): a shard expands the boards it
owns and routes each board after to the shard that owns it, so it cannot
number them itself.  The placement rule is the engine's (``_core.pxd``)."""

from cython.parallel cimport prange
from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, uint8_t, uint16_t


cdef struct Ranks:
    # Which shard owns a board (owner_of: owners.shard_of's, by key_mask and the owner table)
    # and a board's row among this one's (the bitmap of its boards, each word's count of boards before).
    uint64_t key_mask
    const int16_t* owners
    uint64_t n_shards
    int64_t index
    const uint64_t* words
    const int64_t* before
    uint64_t n_words

import numpy as np

from babytris.engine.transitions import offsets_from_counts

from babytris.engine._types cimport board_t, offset_t
from babytris.engine._core cimport engine_geometry, smeared_board, drop_piece
from babytris.engine._geometry cimport Geometry
from babytris.engine._index cimport popcount, lowest_bit
from babytris.modes._lean_search cimport checked_owners, owner_of


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


cdef inline int64_t write_moves(const Geometry* g, board_t board, int64_t at, uint64_t* nxt, uint8_t* cleared,
                                uint16_t* number) noexcept nogil:
    """The moves of every piece on ``board``, written from ``at`` on; returns where they end."""
    cdef board_t sm = smeared_board(g, board), after
    cdef int p, k, lines
    for p in range(g.n_pieces):
        for k in range(g.first[p], g.first[p + 1]):
            if drop_piece(g, board, sm, k, &after, &lines):
                nxt[at] = after
                cleared[at] = <uint8_t>lines
                number[at] = <uint16_t>(k - g.first[p])
                at = at + 1
    return at


cdef inline int32_t row_of(board_t after, const Ranks* r) noexcept nogil:
    """A board's row among the shard's own (its rank in the bitmap), -1 if
    another shard owns it, -2 if this one should and does not hold it."""
    if owner_of(after, r.key_mask, r.n_shards, r.owners) != r.index:
        return -1
    cdef uint64_t word = r.words[after >> 6] if (after >> 6) < r.n_words else 0
    cdef uint64_t bit = (<uint64_t>1) << (after & 63)
    if not word & bit:
        return -2
    return <int32_t>(r.before[after >> 6] + popcount(word & (bit - 1)))


cdef inline void write_table_moves(const Geometry* g, board_t board, int64_t at, uint64_t* nxt, int32_t* row,
                                   uint8_t* cleared, uint16_t* number, const Ranks* r) noexcept nogil:
    """:func:`write_moves`, with each move's row (:func:`row_of`)."""
    cdef int64_t end = write_moves(g, board, at, nxt, cleared, number), m
    for m in range(at, end):
        row[m] = row_of(nxt[m], r)


cdef object counted_offsets(const Geometry* g, const uint64_t[::1] boards, int n_threads):
    """The offsets of the moves of every (board, piece) of ``boards``: int32
    ``(len(boards) * n_pieces + 1,)``, the moves counted by ``n_threads`` threads."""
    cdef Py_ssize_t n = boards.shape[0], i
    cdef int P = g.n_pieces
    counts = np.zeros(n * P, dtype=np.int64)
    cdef int64_t[::1] c = counts
    if n:
        for i in prange(n, nogil=True, num_threads=n_threads, schedule="static"):
            count_moves(g, boards[i], &c[i * P])
    return offsets_from_counts(counts)


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
    offsets = counted_offsets(g, boards, n_threads)
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


def table(engine, const uint64_t[::1] boards, const uint64_t[::1] words, const int64_t[::1] before,
          uint64_t key_mask, const int16_t[::1] owners, int n_shards, int index, int n_threads=1):
    """:func:`expand` over a shard's own ``boards`` (uint64, ascending), with
    each move's row found in the same pass: shard ``index`` of ``n_shards``
    owns a board whose bits under ``key_mask`` index ``index`` in the owner
    table ``owners`` (int16), or, where it is empty, are ``index`` modulo
    ``n_shards`` once mixed (splitmix64's finaliser), as
    :func:`babytris.modes.sharded.owners.shard_of` splits; its row is its rank among
    ``boards``, read from ``words`` (a bit a possible board: the boards') and
    ``before`` (int64, the boards before each word) as
    :class:`babytris.modes.sharded.board_ranks.BoardRanks` keeps them.

    Returns:
        ``(offsets, next_bits, rows, lines, placement)``: :func:`expand`'s,
        with ``rows`` int32 per move: the board's row, -1 where another shard
        owns it (a ghost), -2 where this one should and does not (a bug).
    """
    cdef const Geometry* g = engine_geometry(engine)
    if g.soft:
        raise ValueError("table: soft moves are searched, not dropped; the sharded solve takes hard drops only")
    cdef Py_ssize_t n = boards.shape[0], i
    cdef int P = g.n_pieces
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if n_shards < 1 or not 0 <= index < n_shards:
        raise ValueError(f"index must be in [0, {n_shards - 1}], got {index}")
    offsets = counted_offsets(g, boards, n_threads)
    cdef Py_ssize_t n_moves = offsets[n * P]
    next_bits = np.empty(n_moves, dtype=np.uint64)
    rows = np.empty(n_moves, dtype=np.int32)
    lines = np.empty(n_moves, dtype=np.uint8)
    placement = np.empty(n_moves, dtype=np.uint16)
    cdef const offset_t[::1] o = offsets
    cdef uint64_t[::1] nb = next_bits
    cdef int32_t[::1] rw = rows
    cdef uint8_t[::1] cl = lines
    cdef uint16_t[::1] pl = placement
    cdef Ranks r
    r.key_mask, r.n_shards, r.index = key_mask, <uint64_t>n_shards, index
    r.owners = checked_owners(owners, key_mask, n_shards)
    if words.shape[0] < 1 or before.shape[0] != words.shape[0]:
        raise ValueError("table: words and before must have one entry a word, at least one")
    r.words = &words[0]
    r.before = &before[0]
    r.n_words = words.shape[0]
    if n_moves:
        for i in prange(n, nogil=True, num_threads=n_threads, schedule="static"):
            write_table_moves(g, boards[i], o[i * P], &nb[0], &rw[0], &cl[0], &pl[0], &r)
    return offsets, next_bits, rows, lines, placement


def first_seen(const uint64_t[::1] boards, uint64_t[::1] bits):
    """The boards (uint64) of ``boards`` whose bit in ``bits`` (a bit a
    possible board: ``bits[b >> 6] >> (b & 63)``) is clear, in their order,
    each marked in ``bits`` as it is met (a board repeated is kept once).
    Ascending boards read the bitmap in order.  A board beyond it is refused."""
    cdef Py_ssize_t n = boards.shape[0], i, kept = 0, beyond = -1
    cdef uint64_t b, word_at, bit, n_words = bits.shape[0]
    found = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] out = found
    with nogil:
        for i in range(n):
            b = boards[i]
            word_at = b >> 6
            if word_at >= n_words:
                beyond = i
                break
            bit = (<uint64_t>1) << (b & 63)
            if not bits[word_at] & bit:
                bits[word_at] |= bit
                out[kept] = b
                kept = kept + 1
    if beyond >= 0:
        raise ValueError(f"first_seen: board {boards[beyond]} lies beyond the bitmap's {n_words * 64} bits")
    return found[:kept].copy()


def listed(const uint64_t[::1] bits):
    """The boards whose bit is set in ``bits``, ascending (uint64)."""
    cdef Py_ssize_t n_words = bits.shape[0], w, kept = 0, total = 0
    cdef uint64_t word
    with nogil:
        for w in range(n_words):
            total = total + popcount(bits[w])
    found = np.empty(total, dtype=np.uint64)
    cdef uint64_t[::1] out = found
    with nogil:
        for w in range(n_words):
            word = bits[w]
            while word:
                out[kept] = (<uint64_t>w << 6) | <uint64_t>lowest_bit(word)
                kept = kept + 1
                word = word & (word - 1)
    return found
