# cython: language_level=3
"""The lean mode's search (:class:`babytris.modes._lean.LeanTable`): every
board reachable from the start marked in a bitmap over every possible board,
with no queue; and the bit operations the lean mode's bitmap takes (count,
lowest and highest set bit, an atomic and); the table of the placements
that fit on a board, which both take."""

from cython.parallel cimport prange
from libc.stdint cimport uint64_t, uint32_t, int64_t
from libc.stdlib cimport malloc, free

from babytris.engine._types cimport board_t, fetch_or, atomic_load
from babytris.engine.signals cimport interrupted
from babytris.engine._drop cimport drop, smear_down
from babytris.engine._geometry cimport Geometry


cdef extern from *:
    """
    #define BABYTRIS_POPCOUNT64(x) __builtin_popcountll(x)
    #define BABYTRIS_CTZ64(x) __builtin_ctzll(x)
    #define BABYTRIS_TOP64(x) (63 - __builtin_clzll(x))
    """
    int popcount64 "BABYTRIS_POPCOUNT64"(uint64_t x) noexcept nogil
    int ctz64 "BABYTRIS_CTZ64"(uint64_t x) noexcept nogil
    int top64 "BABYTRIS_TOP64"(uint64_t x) noexcept nogil    # the highest set bit


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define BABYTRIS_FETCH_AND(p, v) __atomic_fetch_and((p), (v), __ATOMIC_RELAXED)
    #else
    static inline unsigned long long babytris_fetch_and(unsigned long long* p, unsigned long long v) {
        unsigned long long old = *p; *p = old & v; return old;
    }
    #define BABYTRIS_FETCH_AND(p, v) babytris_fetch_and((unsigned long long*)(p), (v))
    #endif
    """
    # ``*p &= v`` as one atomic step (where HAVE_ATOMICS, as fetch_or); returns the word before.
    uint64_t fetch_and "BABYTRIS_FETCH_AND"(uint64_t* p, uint64_t v) noexcept nogil


cdef enum:
    WORDS_PER_BLOCK = 256      # words of the bitmap per block of a threaded pass or sweep
    BLOCKS_PER_ROUND = 1024    # blocks between checks for Ctrl-C (16.8 M possible boards; 4x8: 2 M reachable)
    MAX_FIT_BITS = 16          # the most cells (a board's top rows) a table of fitting placements is indexed by


cdef inline uint64_t* fit_table(const Geometry* g, int* shift) noexcept nogil:
    """The placements that fit on a board (``g.top[k] & smeared == 0``: the
    piece's highest position wholly on the board is free), as a bit per
    placement, indexed by the smeared board's top rows (``smeared >>
    shift``: each ``top[k]`` lies in them); free it with ``free``.  NULL
    where that table would not be small (over 64 placements, or the tallest
    one's rows over :data:`MAX_FIT_BITS` cells), with ``top_out`` (a
    placement that does not fit is a move there), or out of memory: then
    every placement is dropped to learn whether it fits.  Most do not (4x5:
    2.7 of 18 a board), and testing each took half a greedy sweep's
    instructions."""
    cdef int k, tallest = 0, n = g.first[g.n_pieces]
    cdef uint64_t index, fits
    cdef uint64_t* table
    for k in range(n):
        tallest = max(tallest, <int>g.rows[k])
    if n > 64 or g.top_out or tallest * g.width > MAX_FIT_BITS or tallest > g.height:
        return NULL
    shift[0] = (g.height - tallest) * g.width
    table = <uint64_t*>malloc(((<size_t>1) << (tallest * g.width)) * sizeof(uint64_t))
    if table == NULL:
        return NULL
    for index in range((<uint64_t>1) << (tallest * g.width)):
        fits = 0
        for k in range(n):
            if not (g.top[k] >> shift[0]) & index:
                fits |= (<uint64_t>1) << k
        table[index] = fits
    return table


cdef inline int _search(const Geometry* g, uint64_t* bits, uint64_t* todo, Py_ssize_t n_words, uint32_t start,
                               int64_t max_boards, int n_threads, int64_t* found, int* passes,
                               const uint64_t* fits=NULL, int fit_shift=0) noexcept nogil:
    """Mark in ``bits`` every board reachable from ``start``; returns 0, -1
    (out of memory), -2 (over ``max_boards``) or -4 (interrupted).

    No queue: ``todo`` (a second bitmap) marks the boards found and not yet
    expanded, and each pass expands them in ascending order, threads sharing
    the blocks of words and marking with atomic ors.  A move that clears no
    row leads to a larger board, expanded later in the same pass; one that
    clears rows may lead to a smaller one, left for the next pass.  The
    passes end with one that finds nothing new.  The boards found, and so
    the table, do not depend on the threads; neighbouring boards' moves
    land near each other, so the marks stay in the caches more than a
    breadth-first queue's would (and 4x8's queue would take 2 GB).  With
    ``fits`` (:func:`fit_table`), only the placements that fit are dropped."""
    cdef Py_ssize_t n_blocks = (n_words + WORDS_PER_BLOCK - 1) // WORDS_PER_BLOCK, k, first, last
    cdef int64_t* block_new = <int64_t*>malloc(n_blocks * sizeof(int64_t))
    cdef int64_t new
    if block_new == NULL:
        return -1
    bits[start >> 6] |= (<uint64_t>1) << (start & 63)
    todo[start >> 6] |= (<uint64_t>1) << (start & 63)
    found[0] = 1
    while True:
        passes[0] += 1
        new = 0
        first = 0
        while first < n_blocks:
            last = first + BLOCKS_PER_ROUND
            if last > n_blocks:
                last = n_blocks
            for k in prange(first, last, num_threads=n_threads, schedule="dynamic"):
                block_new[k] = _expand_block(g, bits, todo, k, n_words, fits, fit_shift)
            for k in range(first, last):
                new += block_new[k]
            if found[0] + new > max_boards:
                found[0] += new
                free(block_new)
                return -2
            if interrupted():
                found[0] += new
                free(block_new)
                return -4
            first = last
        found[0] += new
        if new == 0:
            free(block_new)
            return 0


cdef inline int64_t _expand_block(const Geometry* g, uint64_t* bits, uint64_t* todo, Py_ssize_t block,
                                  Py_ssize_t n_words, const uint64_t* fits=NULL, int fit_shift=0) noexcept nogil:
    """Expand the boards waiting in a block of ``todo``'s words (taking
    them): mark each board after a move in ``bits`` and, where new, in
    ``todo``; returns how many new boards it marked.  ``fits``: as for
    :func:`_search`."""
    cdef Py_ssize_t w, last = min((block + 1) * WORDS_PER_BLOCK, n_words)
    cdef uint64_t word, tried
    cdef int k, n = g.first[g.n_pieces]
    cdef board_t b, sm
    cdef int64_t new = 0
    for w in range(block * WORDS_PER_BLOCK, last):
        word = atomic_load(&todo[w])
        if not word:
            continue
        fetch_and(&todo[w], ~word)   # (bits another thread sets meanwhile stay, for the next pass)
        while word:
            b = (<board_t>w << 6) | <board_t>ctz64(word)
            word &= word - 1
            sm = smear_down(b, g.width, g.height)
            if fits != NULL:
                tried = fits[sm >> fit_shift]
                while tried:
                    k = ctz64(tried)
                    tried &= tried - 1
                    new += _mark(g, bits, todo, b, sm, k)
            else:
                for k in range(n):
                    new += _mark(g, bits, todo, b, sm, k)
    return new


cdef inline int _mark(const Geometry* g, uint64_t* bits, uint64_t* todo, board_t b, board_t sm,
                      int k) noexcept nogil:
    """Drop placement k on b (``sm``: b smeared down) and mark the board
    after it in ``bits`` and, where new, in ``todo``; returns 1 where it was
    new, else 0 (also where k is no move)."""
    cdef board_t nb
    cdef int lines
    cdef uint64_t bit
    if not drop(g, b, sm, k, &nb, &lines):
        return 0
    bit = (<uint64_t>1) << (nb & 63)
    if atomic_load(&bits[nb >> 6]) & bit:
        return 0
    if fetch_or(&bits[nb >> 6], bit) & bit:
        return 0
    fetch_or(&todo[nb >> 6], bit)
    return 1
