# The table on given boards (Engine.enumerate(given=...), a loaded file's
# proof), inline: pass 1 in place of the search (the boards marked, the moves
# of a sample checked), the moves written at a saved table's offsets in place
# of the count (each row checked as it is written), and the walk that shows
# every board reached (first_unreached).  _core.pyx calls them.

from cython.parallel cimport prange, threadid
from libc.stdint cimport uint64_t, int64_t, int32_t, uint8_t, uint16_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from babytris.engine._boardmap cimport BoardMap, map_init, map_get_or_insert
from babytris.engine._drop cimport drop, smear_down, soft_moves
from babytris.engine._geometry cimport Geometry
from babytris.engine._index cimport Index, has_board, index_of, lowest_bit, slot_of
from babytris.engine._search cimport INTERRUPTED, NOT_CLOSED, OK, OUT_OF_MEMORY, REPEATED, TOO_MANY_BOARDS
from babytris.engine._types cimport board_t, index_t, offset_t, prefetch
from babytris.engine._vec cimport Vec, vec_reserve
from babytris.engine.signals cimport interrupted


cdef enum:
    CLOSED_SAMPLE = 4096        # given boards whose moves are checked before their table is allocated,
    CLOSED_STRIDE = 64          # one in this many at least (a small list's table costs little)
    OUT_OF_RANGE = -8           # the walk met an offset or a next board out of range
    OFFSETS_DIFFER = -9         # given offsets: a state's moves do not fill its row exactly


cdef inline int take_boards(const Geometry* g, const board_t* given, size_t n, uint64_t* bits, BoardMap* table,
                     Vec* boards, board_t* named) noexcept nogil:
    """Pass 1 for given boards: mark each in ``bits`` (if not NULL, else in
    ``table``), check the moves of a few thousand of them at most, evenly spaced (a
    list far from closed is refused before its table is allocated: what a
    forged file costs then is its reading; one made to pass the sample fails
    once its table is built), and copy them to ``boards``;
    returns a status (REPEATED or NOT_CLOSED, with the board in ``named``)."""
    cdef size_t i, stride = max(n // CLOSED_SAMPLE + 1, <size_t>CLOSED_STRIDE)
    cdef board_t b, bit, sm, nb = 0
    cdef index_t j
    cdef int k, p, c, lines = 0
    cdef board_t* moves
    cdef Index marked          # (only its bitmap or map: what has_board reads)
    if n >= 2147483647:
        return TOO_MANY_BOARDS
    if bits == NULL and map_init(table, 1024) != 0:  # (grown as boards come: a repeat costs little)
        return OUT_OF_MEMORY
    for i in range(n):
        b = given[i]
        if bits != NULL:
            bit = (<board_t>1) << (b & 63)
            if bits[b >> 6] & bit:
                named[0] = b
                return REPEATED
            bits[b >> 6] |= bit
        else:
            j = map_get_or_insert(table, b, <index_t>i)
            if j == -2:
                return OUT_OF_MEMORY
            if j != <index_t>i:
                named[0] = b
                return REPEATED
    marked.bits = bits
    marked.table = table
    moves = <board_t*>malloc((<size_t>g.max_moves + 1) * sizeof(board_t))
    if moves == NULL:
        return OUT_OF_MEMORY
    i = 0
    while i < n:
        b = given[i]
        i += stride
        sm = smear_down(b, g.width, g.height)
        c = 0
        for p in range(g.n_pieces):
            if g.soft:
                c += soft_moves(g, b, p, moves + c, NULL, NULL)
                continue
            for k in range(g.first[p], g.first[p + 1]):
                if drop(g, b, sm, k, &nb, &lines):
                    moves[c] = nb
                    c += 1
        for k in range(c):
            if not has_board(&marked, moves[k]):
                named[0] = b
                free(moves)
                return NOT_CLOSED
    free(moves)
    if vec_reserve(boards, n if n else 1) != 0:
        return OUT_OF_MEMORY
    memcpy(boards.data, given, n * sizeof(board_t))
    boards.size = n
    return OK


cdef inline int fill_at_offsets(const Geometry* g, const Index* ix, const board_t* boards, const offset_t* offsets,
                                int64_t n_moves, int32_t* next_board, uint8_t* lines, uint16_t* numbers,
                                int n_threads, Py_ssize_t batch, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """The fill (pass 3) of hard drops at a saved table's ``offsets`` (the
    boards given in the table's order), which take the count's place: every
    move of boards ``first:last`` (``first`` a multiple of ``batch``, the
    boards before it written already, ``offsets[0]`` checked to be 0) written
    at its row, threads sharing chunks of ``batch`` boards; a move to a board
    not given gets -1.  Nothing is taken on the offsets' word: a state whose
    moves do not fill its row exactly (a row ending before its moves do,
    after them, or past ``n_moves``) stops its chunk before anything is written
    out of the row, so all the rows filled exactly is all the offsets are the
    rules' own.  ``numbers``: the placement numbers, or NULL.

    Returns OK, OFFSETS_DIFFER (count the moves to name the state), or
    OUT_OF_MEMORY (the threads' buffers)."""
    cdef Py_ssize_t n_chunks = (last + batch - 1) // batch, chunk, lo, hi, i
    cdef size_t per_thread = batch * <size_t>g.max_moves
    cdef int P = g.n_pieces, p, k, n_lines, bad
    cdef int64_t e, e0, end, differ = 0
    cdef board_t b, sm, nb
    cdef board_t* keys
    cdef board_t* all_keys = <board_t*>malloc(n_threads * per_thread * sizeof(board_t) + 8)
    if all_keys == NULL:
        return OUT_OF_MEMORY
    for chunk in prange(first // batch, n_chunks, num_threads=n_threads, schedule="dynamic", chunksize=16):
        keys = all_keys + threadid() * per_thread
        nb = 0          # assigned here so that each thread has its own
        n_lines = 0
        lo = chunk * batch
        hi = lo + batch
        if hi > last:
            hi = last
        # (the chunk's first offset is the end of the chunk before it, checked there)
        e0 = offsets[lo * P]
        e = e0
        bad = not 0 <= e0 <= n_moves
        i = lo
        # The chunk's moves first, prefetching each next board's slot; then the lookups.
        while i < hi and not bad:
            b = boards[i]
            sm = smear_down(b, g.width, g.height)
            p = 0
            while p < P and not bad:
                end = offsets[i * P + p + 1]
                bad = end > n_moves
                k = g.first[p]
                while k < g.first[p + 1] and not bad:
                    if drop(g, b, sm, k, &nb, &n_lines):
                        bad = e >= end          # (the row ends before the moves do)
                        if not bad:
                            keys[e - e0] = nb
                            lines[e] = <uint8_t>n_lines
                            if numbers != NULL:
                                numbers[e] = <uint16_t>(k - g.first[p])
                            prefetch(slot_of(ix, nb))
                            e = e + 1
                    k = k + 1
                bad = bad or e != end           # (or after them)
                p = p + 1
            i = i + 1
        if bad:
            differ += 1
        else:
            for e in range(e0, offsets[hi * P]):
                next_board[e] = index_of(ix, keys[e - e0]) if has_board(ix, keys[e - e0]) else -1
    free(all_keys)
    return OFFSETS_DIFFER if differ else OK


cdef inline int walk_levels(const offset_t* offsets, const int32_t* next_board, int64_t n_moves, Py_ssize_t n,
                            Py_ssize_t P, int32_t start, uint64_t* marks) noexcept nogil:
    """Mark in ``marks[0:(n + 63) // 64]`` every board play from ``start``
    reaches (``marks``: three such bitmaps, zeroed; the other two hold a
    level and the boards it leads to); returns OK, INTERRUPTED or OUT_OF_RANGE.

    A breadth-first search a level at a time, each level's boards in a
    bitmap visited in number order: the rows are read in ascending order (a
    queue would read them in random order), and the marks stay in cache."""
    cdef Py_ssize_t n_words = (n + 63) // 64, w, b
    cdef uint64_t* seen = marks
    cdef uint64_t* level = marks + n_words
    cdef uint64_t* found = marks + 2 * n_words
    cdef uint64_t bits, more = 1
    cdef int64_t e
    cdef int32_t nb
    seen[start >> 6] = (<uint64_t>1) << (start & 63)
    level[start >> 6] = (<uint64_t>1) << (start & 63)
    while more:
        for w in range(n_words):
            if w % 16384 == 16383 and interrupted():  # (a million boards: about a millisecond)
                return INTERRUPTED
            bits = level[w]
            while bits:
                b = w * 64 + lowest_bit(bits)
                bits &= bits - 1
                if not 0 <= offsets[b * P] <= offsets[(b + 1) * P] <= n_moves:
                    return OUT_OF_RANGE
                for e in range(offsets[b * P], offsets[(b + 1) * P]):
                    nb = next_board[e]
                    if not 0 <= nb < n:
                        return OUT_OF_RANGE
                    # (every board the level leads to, seen or not: one store, no branch on
                    # whether it is new, which no predictor guesses; the seen ones go below)
                    found[nb >> 6] |= (<uint64_t>1) << (nb & 63)
        more = 0
        for w in range(n_words):  # (the next level: the boards found that are new)
            bits = found[w] & ~seen[w]
            found[w] = 0
            seen[w] |= bits
            level[w] = bits
            more |= bits
    return OK
