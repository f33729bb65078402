# cython: language_level=3
"""A shard's moves, for the sharded solve (:mod:`babytris.modes.sharded.distributed`):
the boards after a batch of boards as bits (a shard routes each to the shard
that owns it, so it cannot number them itself), and a shard's move table,
each move's row found as it is written where the board after is its own.
The placement rule is the engine's (``_drop.pxd``, inlined), a board's
owner the lean shards' (``owner_of``)."""

from cython.parallel cimport prange, threadid
from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, uint8_t, uint16_t
from libc.stdlib cimport malloc, free


cdef struct Ranks:
    # Which shard owns a board (owner_of: owners.shard_of's, by key_mask and the owner table) and a
    # board's row among this one's, numbered layer after layer (board_ranks.BoardRanks: the bitmap
    # of its boards; per word and layer the rows before; per residue of a word's cells and layer, its bits).
    uint64_t key_mask
    const int16_t* owners
    uint64_t n_shards
    int64_t index
    const uint64_t* words
    const int64_t* before
    uint64_t n_words
    const uint64_t* masks
    const int64_t* layer_of_residue
    int residues
    int n_layers

import numpy as np

from babytris.engine.resources import MemoryLimitError
from babytris.engine.transitions import MAX_MOVES, too_many_moves

from babytris.engine._types cimport board_t, offset_t, prefetch, populate_threads
from babytris.engine._core cimport engine_geometry
from babytris.engine._drop cimport drop, smear_down
from babytris.engine._geometry cimport Geometry
from babytris.engine._index cimport popcount, lowest_bit
from babytris.engine.signals cimport interrupted
from babytris.modes._lean_search cimport checked_owners, owner_of

cdef enum:
    # Boards whose moves are written before their rows are looked up (the rows' bitmap words
    # loading meanwhile), and boards between two looks for Ctrl-C (4x7: about 30 ms).
    BATCH = 32
    SLICE = BATCH * 8192


cdef inline int piece_moves(const Geometry* g, board_t board, board_t smeared, int p, uint64_t* nxt,
                            uint8_t* cleared, uint16_t* number) noexcept nogil:
    """The moves of piece ``p`` on ``board`` written from index 0 of each
    array (each may be NULL: not written); returns how many."""
    cdef board_t after
    cdef int k, lines, c = 0
    for k in range(g.first[p], g.first[p + 1]):
        if drop(g, board, smeared, k, &after, &lines):
            if nxt != NULL:
                nxt[c] = after
            if cleared != NULL:
                cleared[c] = <uint8_t>lines
            if number != NULL:
                number[c] = <uint16_t>(k - g.first[p])
            c = c + 1
    return c


cdef inline int32_t row_of(board_t after, const Ranks* r) noexcept nogil:
    """A board's row among the shard's own (its place, layer after layer, as
    BoardRanks numbers them), -1 if another shard owns it, -2 if this one
    should and does not hold it."""
    if owner_of(after, r.key_mask, r.n_shards, r.owners) != r.index:
        return -1
    cdef uint64_t w = after >> 6
    cdef uint64_t word = r.words[w] if w < r.n_words else 0
    cdef uint64_t bit = (<uint64_t>1) << (after & 63)
    if not word & bit:
        return -2
    cdef int64_t layer = r.layer_of_residue[popcount(after) % r.residues]
    cdef uint64_t mask = r.masks[(popcount(w) % r.residues) * r.n_layers + layer]
    return <int32_t>(r.before[w * r.n_layers + layer] + popcount(word & mask & (bit - 1)))


cdef inline void rows_of(const uint64_t* after, int64_t n, int32_t* row, const Ranks* r) noexcept nogil:
    """:func:`row_of` of ``after[0:n]`` into ``row``, the bitmap words of all asked for before the first is read."""
    cdef int64_t m
    cdef uint64_t w
    for m in range(n):
        w = after[m] >> 6
        if w < r.n_words:
            prefetch(&r.words[w])
            prefetch(&r.before[w * r.n_layers])
    for m in range(n):
        row[m] = row_of(after[m], r)


cdef inline int64_t write_batch(const Geometry* g, const uint64_t* boards, Py_ssize_t lo, Py_ssize_t hi,
                                offset_t* offsets, bint counted, int64_t at, uint64_t* nxt, uint64_t* keys,
                                int32_t* row, uint8_t* cleared, uint16_t* number, const Ranks* r) noexcept nogil:
    """The moves of ``boards[lo:hi]`` from move ``at`` on (``counted``: at
    ``offsets[lo * P]``; else their offsets written as they come, from
    ``at``); returns where they end.  The boards after go to ``nxt`` (at
    their moves) or, with ``row`` and ``r``, to ``keys`` (from 0), each
    move's row (:func:`row_of`) to ``row``."""
    cdef int P = g.n_pieces, p
    cdef int64_t first = offsets[lo * P] if counted else at, e = first
    cdef Py_ssize_t i
    cdef board_t b, sm
    for i in range(lo, hi):
        b = boards[i]
        sm = smear_down(b, g.width, g.height)
        for p in range(P):
            e += piece_moves(g, b, sm, p, (keys + (e - first)) if row != NULL else (nxt + e), cleared + e, number + e)
            if not counted:
                offsets[i * P + p + 1] = <offset_t>e
    if row != NULL:
        rows_of(keys, e - first, row + first, r)
    return e


cdef int fill(const Geometry* g, const uint64_t[::1] boards, offset_t* offsets, bint counted, int64_t n_moves,
              uint64_t* nxt, int32_t* row, uint8_t* cleared, uint16_t* number, const Ranks* r,
              int n_threads) noexcept nogil:
    """The moves of every board (:func:`write_batch`), a slice of SLICE
    boards at a time: ``counted`` (offsets counted), by ``n_threads``
    threads; else, on one, writing the offsets, checked to stay within
    ``n_moves`` (the arrays hold a batch's most moves more).  Returns 0,
    1 on Ctrl-C (asked between slices), 2 where the moves are not
    ``n_moves``, 3 if the threads' room cannot be allocated."""
    cdef Py_ssize_t n = boards.shape[0], first = 0, last, c, lo, hi
    cdef size_t room = <size_t>BATCH * g.max_moves
    cdef uint64_t* keys = NULL
    cdef int64_t at = 0
    if row != NULL:
        keys = <uint64_t*>malloc(n_threads * room * sizeof(uint64_t) + 8)
        if keys == NULL:
            return 3
    while first < n:
        last = min(first + SLICE, n)
        if counted:
            for c in prange(first // BATCH, (last + BATCH - 1) // BATCH, num_threads=n_threads, schedule="static"):
                lo = c * BATCH
                hi = min(lo + BATCH, last)
                write_batch(g, &boards[0], lo, hi, offsets, True, 0, nxt,
                            (keys + threadid() * room) if keys != NULL else NULL, row, cleared, number, r)
        else:
            lo = first
            while lo < last and at <= n_moves:
                hi = min(lo + BATCH, last)
                at = write_batch(g, &boards[0], lo, hi, offsets, False, at, nxt, keys, row, cleared, number, r)
                lo = hi
            if at > n_moves:
                break
        first = last
        if first < n and interrupted():
            free(keys)
            return 1
    free(keys)
    return 2 if not counted and at != n_moves else 0


cdef object counted_offsets(const Geometry* g, const uint64_t[::1] boards, int n_threads):
    """The offsets of the moves of every (board, piece) of ``boards``: int32
    ``(len(boards) * n_pieces + 1,)``, the moves counted by ``n_threads``
    threads.  Raises MemoryLimitError past MAX_MOVES moves, KeyboardInterrupt
    on Ctrl-C (asked between slices of SLICE boards)."""
    cdef Py_ssize_t n = boards.shape[0], i, first = 0, last, s
    cdef int P = g.n_pieces, p
    cdef int64_t total = 0, most = MAX_MOVES
    cdef bint stopped = False
    cdef board_t sm
    offsets = np.empty(n * P + 1, dtype=np.int32)
    cdef offset_t[::1] o = offsets
    o[0] = 0
    with nogil:
        populate_threads(&o[0], o.shape[0] * sizeof(offset_t), n_threads)
        while first < n and not stopped:
            last = min(first + SLICE, n)
            for i in prange(first, last, num_threads=n_threads, schedule="static"):
                sm = smear_down(boards[i], g.width, g.height)
                for p in range(P):
                    o[1 + i * P + p] = piece_moves(g, boards[i], sm, p, NULL, NULL, NULL)
            first = last
            stopped = first < n and interrupted()
        if not stopped:
            for s in range(1, n * P + 1):  # (numpy's cumsum of an int64 count: 2-3x as long)
                total = total + o[s]
                if total > most:
                    break
                o[s] = <offset_t>total
    if stopped:
        raise KeyboardInterrupt
    if total > most:
        raise MemoryLimitError(too_many_moves(total))
    return offsets


cdef tuple moves_of(engine, const uint64_t[::1] boards, const Ranks* r, int n_threads, int64_t n_moves):
    """:func:`expand`'s arrays, and the rows (:func:`row_of`) where ``r`` is
    not NULL (then no boards after); ``n_moves`` (>= 0) their number,
    known: one pass on one thread, no count."""
    cdef const Geometry* g = engine_geometry(engine)
    if g.soft:
        raise ValueError("expand: soft moves are searched, not dropped; the sharded solve takes hard drops only")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if n_moves > MAX_MOVES:
        raise MemoryLimitError(too_many_moves(n_moves))
    cdef Py_ssize_t n = boards.shape[0]
    cdef int P = g.n_pieces
    cdef bint counted = n_moves < 0 or n_threads > 1
    if counted:
        offsets = counted_offsets(g, boards, n_threads)
        n_moves = offsets[n * P]
    else:
        offsets = np.empty(n * P + 1, dtype=np.int32)
        offsets[0] = 0
    cdef offset_t[::1] o = offsets
    cdef Py_ssize_t room = n_moves + (0 if counted else BATCH * g.max_moves)  # (a batch past a wrong n_moves)
    next_bits = np.empty(room if r == NULL else 0, dtype=np.uint64)
    rows = np.empty(room if r != NULL else 0, dtype=np.int32)
    lines = np.empty(room, dtype=np.uint8)
    placement = np.empty(room, dtype=np.uint16)
    cdef uint64_t[::1] nb = next_bits
    cdef int32_t[::1] rw = rows
    cdef uint8_t[::1] cl = lines
    cdef uint16_t[::1] pl = placement
    cdef int status = 0
    with nogil:
        # (mapped in one call each: a fault a page cost as long as the writing)
        if r == NULL:
            populate_threads(&nb[0], n_moves * sizeof(uint64_t), n_threads)
        else:
            populate_threads(&rw[0], n_moves * sizeof(int32_t), n_threads)
        populate_threads(&cl[0], n_moves * sizeof(uint8_t), n_threads)
        populate_threads(&pl[0], n_moves * sizeof(uint16_t), n_threads)
        status = fill(g, boards, &o[0], counted, n_moves, &nb[0] if r == NULL else NULL,
                      &rw[0] if r != NULL else NULL, &cl[0], &pl[0], r, n_threads)
    if status == 1:
        raise KeyboardInterrupt
    if status == 2:
        raise ValueError(f"table: the boards' moves are not the {n_moves:,} given (n_moves)")
    if status == 3:
        raise MemoryError("table: cannot allocate the threads' room")
    if not counted:
        rows, lines, placement = rows[:n_moves], lines[:n_moves], placement[:n_moves]
    return offsets, next_bits, rows, lines, placement


def expand(engine, const uint64_t[::1] boards, int n_threads=1):
    """Every move of every (board, piece) of ``boards`` (uint64), by ``n_threads`` threads.

    Returns:
        ``(offsets, next_bits, lines, placement)``: int32 ``(len(boards) *
        n_pieces + 1,)`` delimiting the moves of state ``i * n_pieces + p``,
        then per move the board after as bits (uint64), the rows cleared
        (uint8) and the placement number within the piece (uint16), as
        :meth:`Engine.enumerate` numbers them.

    Raises:
        MemoryLimitError: more moves than a table holds (int32 offsets).
        KeyboardInterrupt: on Ctrl-C.
    """
    offsets, next_bits, _, lines, placement = moves_of(engine, boards, NULL, n_threads, -1)
    return offsets, next_bits, lines, placement


def table(engine, const uint64_t[::1] boards, const uint64_t[::1] words, const int64_t[::1] before,
          const uint64_t[::1] masks, const int64_t[::1] layer_of_residue,
          uint64_t key_mask, const int16_t[::1] owners, int n_shards, int index, int n_threads=1,
          int64_t n_moves=-1):
    """:func:`expand` over a shard's own ``boards`` (uint64, in the order of
    their rows), each move's row found as it is written, in place of the
    board after: shard ``index`` of ``n_shards`` owns a board whose bits
    under ``key_mask`` index ``index`` in the owner table ``owners``
    (int16), or, where it is empty, are ``index`` modulo ``n_shards`` once
    mixed (splitmix64's finaliser), as
    :func:`babytris.modes.sharded.owners.shard_of` splits; its row is read
    from ``words`` (a bit a possible board: the boards'), ``before``
    (int64, per word and layer the rows before) and ``masks`` (uint64, per
    residue of a word's cells and layer, the bits of that layer), a board's
    layer being ``layer_of_residue[its cells % len]``, as
    :class:`babytris.modes.sharded.board_ranks.BoardRanks` keeps them.
    ``n_moves``, if known (the search counted them), saves a pass counting
    them on one thread (checked: ValueError where the boards have other).

    Returns:
        ``(offsets, rows, lines, placement)``: :func:`expand`'s, with
        ``rows`` int32 per move: the board's row, -1 where another shard
        owns it (a ghost: :func:`away_moves` gives it), -2 where this one
        should and does not (a bug).
    """
    if n_shards < 1 or not 0 <= index < n_shards:
        raise ValueError(f"index must be in [0, {n_shards - 1}], got {index}")
    cdef Ranks r
    cdef Py_ssize_t i
    r.key_mask, r.n_shards, r.index = key_mask, <uint64_t>n_shards, index
    r.owners = checked_owners(owners, key_mask, n_shards)
    r.residues = layer_of_residue.shape[0]
    r.n_layers = masks.shape[0] // max(r.residues, 1)
    if r.residues < 1 or r.n_layers < 1 or masks.shape[0] != r.residues * r.n_layers:
        raise ValueError("table: masks must hold one mask a (residue, layer), layer_of_residue one layer a residue")
    for i in range(r.residues):
        if not 0 <= layer_of_residue[i] < r.n_layers:
            raise ValueError(f"table: layer_of_residue[{i}] = {layer_of_residue[i]} is not a layer")
    if words.shape[0] < 1 or before.shape[0] != words.shape[0] * r.n_layers:
        raise ValueError("table: words must have an entry a word, at least one, and before one a (word, layer)")
    r.words = &words[0]
    r.before = &before[0]
    r.n_words = words.shape[0]
    r.masks = &masks[0]
    r.layer_of_residue = &layer_of_residue[0]
    offsets, _, rows, lines, placement = moves_of(engine, boards, &r, n_threads, n_moves)
    return offsets, rows, lines, placement


def away_moves(engine, const uint64_t[::1] boards, const offset_t[::1] offsets, const int32_t[::1] rows):
    """The moves of :func:`table` whose row is negative (to another shard's
    board, or -2) and the boards after them, each board with one of them
    expanded again (the table keeps no board after).

    Returns:
        ``(moves, after)``: int64 move numbers, ascending; uint64 boards.
    """
    cdef const Geometry* g = engine_geometry(engine)
    cdef Py_ssize_t n = boards.shape[0], j = 0, s = 0, last = -1, m, n_away = 0
    cdef int P = g.n_pieces
    if g.soft:
        raise ValueError("away_moves: soft moves are searched, not dropped; the sharded solve takes hard drops only")
    if offsets.shape[0] != n * P + 1 or rows.shape[0] != offsets[n * P]:
        raise ValueError(f"away_moves: offsets must have {n * P + 1} entries, rows one a move")
    with nogil:
        for m in range(rows.shape[0]):
            n_away += rows[m] < 0
    moves = np.empty(n_away, dtype=np.int64)
    found = np.empty(n_away, dtype=np.uint64)
    cdef int64_t[::1] at = moves
    cdef uint64_t[::1] out = found
    cdef uint64_t* moved = <uint64_t*>malloc(g.max_moves * sizeof(uint64_t) + 8)
    if moved == NULL:
        raise MemoryError("away_moves: cannot allocate")
    with nogil:
        for m in range(rows.shape[0]):
            if rows[m] >= 0:
                continue
            while offsets[s + 1] <= m:
                s = s + 1
            if s != last:
                piece_moves(g, boards[s // P], smear_down(boards[s // P], g.width, g.height), s % P, moved, NULL, NULL)
                last = s
            at[j] = m
            out[j] = moved[m - offsets[s]]
            j = j + 1
    free(moved)
    return moves, found


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


def listed_by_layer(const uint64_t[::1] bits, const uint64_t[::1] masks, int residues):
    """The boards whose bit is set in ``bits``, layer after layer, ascending
    within each, and where each word's boards of each layer stand: a
    board's layer is read from ``masks`` (uint64, ``residues * n_layers``:
    per residue of a word's own cells modulo ``residues`` and layer, the
    bits of that layer, as :class:`~babytris.modes.sharded.board_ranks.BoardRanks`
    makes them).  Two passes over the bitmap, where sorting by layer took
    seconds at 4x7.

    Returns:
        ``(boards, layer_starts, before)``: uint64; int64 ``(n_layers + 1,)``;
        int64 ``(n_words * n_layers,)``, the rows before word w's boards of
        layer m at ``w * n_layers + m``.
    """
    if residues < 1 or masks.shape[0] % residues or masks.shape[0] == 0:
        raise ValueError("listed_by_layer: masks must hold residues * n_layers masks")
    cdef Py_ssize_t n_words = bits.shape[0], w
    cdef int L = masks.shape[0] // residues, m
    cdef uint64_t word
    starts = np.zeros(L + 1, dtype=np.int64)
    before = np.empty(n_words * L, dtype=np.int64)
    cdef int64_t[::1] st = starts
    cdef int64_t[::1] bf = before
    cdef const uint64_t* mask
    with nogil:
        for w in range(n_words):
            mask = &masks[(popcount(<uint64_t>w) % residues) * L]
            for m in range(L):
                st[m + 1] += popcount(bits[w] & mask[m])
        for m in range(L):
            st[m + 1] += st[m]
    found = np.empty(st[L], dtype=np.uint64)
    cursor = starts[:L].copy()
    cdef uint64_t[::1] out = found
    cdef int64_t[::1] at = cursor
    with nogil:
        for w in range(n_words):
            mask = &masks[(popcount(<uint64_t>w) % residues) * L]
            for m in range(L):
                bf[w * L + m] = at[m]
                word = bits[w] & mask[m]
                while word:
                    out[at[m]] = (<uint64_t>w << 6) | <uint64_t>lowest_bit(word)
                    at[m] += 1
                    word = word & (word - 1)
    return found, starts, before


def unmark(uint64_t[::1] bits, const uint64_t[::1] boards):
    """Clear the bit of each of ``boards`` (uint64) in ``bits`` (a bit a
    possible board); a board beyond the bitmap is refused."""
    cdef Py_ssize_t n = boards.shape[0], i, beyond = -1
    cdef uint64_t b, n_words = bits.shape[0]
    with nogil:
        for i in range(n):
            b = boards[i]
            if (b >> 6) >= n_words:
                beyond = i
                break
            bits[b >> 6] &= ~((<uint64_t>1) << (b & 63))
    if beyond >= 0:
        raise ValueError(f"unmark: board {boards[beyond]} lies beyond the bitmap's {n_words * 64} bits")


def live_by_layer(const offset_t[::1] offsets, const uint64_t[::1] boards, int n_pieces,
                  const int64_t[::1] layer_of_residue):
    """The boards that have a move, by layer: a board of c filled cells is
    in layer ``layer_of_residue[c % m]`` (m its length; the layers numbered
    0 to m - 1), in the order given within each (a stable split: no sort;
    a shard's rows, numbered layer after layer and ascending within each,
    come out as they are, as :func:`babytris.engine.transitions.layer_order`
    orders them).  ``offsets``: the table's, ``len(boards) * n_pieces + 1``
    at least.

    Returns:
        ``(order, starts)``: int32 board indices; int64 ``(m + 1,)``, layer
        ``k`` being ``order[starts[k]:starts[k + 1]]``.
    """
    cdef Py_ssize_t n = boards.shape[0], i
    cdef int P = n_pieces, m = layer_of_residue.shape[0], k
    if P < 1 or m < 1 or offsets.shape[0] < n * P + 1:
        raise ValueError("live_by_layer: offsets, boards, n_pieces and layer_of_residue do not agree")
    for k in range(m):
        if not 0 <= layer_of_residue[k] < m:
            raise ValueError(f"live_by_layer: layer_of_residue[{k}] must be in [0, {m - 1}]")
    starts = np.zeros(m + 1, dtype=np.int64)
    cdef int64_t[::1] s = starts
    cdef int64_t[::1] at = np.zeros(m, dtype=np.int64)
    with nogil:
        for i in range(n):
            if offsets[(i + 1) * P] > offsets[i * P]:
                s[layer_of_residue[popcount(boards[i]) % m] + 1] += 1
        for k in range(m):
            s[k + 1] += s[k]
            at[k] = s[k]
    order = np.empty(s[m], dtype=np.int32)
    cdef int32_t[::1] o = order
    with nogil:
        for i in range(n):
            if offsets[(i + 1) * P] > offsets[i * P]:
                k = <int>layer_of_residue[popcount(boards[i]) % m]
                o[at[k]] = <int32_t>i
                at[k] += 1
    return order, starts
