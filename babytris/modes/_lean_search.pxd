# cython: language_level=3
"""The lean mode's search (:class:`babytris.modes._lean.LeanTable`): every
board reachable from the start marked in a bitmap over every possible board,
with no queue; the bit operations the lean mode's bitmap takes (count,
lowest and highest set bit, an atomic and); the table of where each
placement comes to rest on a board, which both take; and the shard owning
a board, for the lean shards (:mod:`babytris.modes.sharded._lean_shard`)."""

from cython.parallel cimport prange
from libc.stdint cimport uint64_t, uint32_t, int64_t, int16_t, uint8_t
from libc.stdlib cimport malloc, free

from babytris.engine._types cimport board_t, fetch_or, atomic_load, mix64
from babytris.engine.signals cimport interrupted
from babytris.engine._drop cimport drop, settle, smear_down
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
    MAX_PROFILES = 65536       # the most column profiles (boards smeared down) a Landings table holds


cdef struct Landings:
    # Where each placement comes to rest, by the board's column profile: a board smeared down
    # (smear_down) is its column heights, so the placements that fit and the row each lands at
    # are a function of them.  A profile's number: sum of height[c] * base**c.
    uint64_t* fits       # per profile: the placements that fit (a bit each)
    uint8_t* rows        # per profile and placement: the row its lowest cells come to rest at
    int n                # placements
    int width
    int base             # height + 1
    board_t column[32]   # each column's cells


cdef inline int landings_build(const Geometry* g, Landings* L) noexcept nogil:
    """Fill ``L`` (:class:`Landings`) for ``g``'s placements; returns 0, or
    -1 where not built (``L.fits`` NULL; free it with :func:`landings_free`
    either way): over 64 placements, over :data:`MAX_PROFILES` profiles,
    with ``top_out`` (a placement that does not fit is a move there), or
    out of memory.  Without it every placement is dropped (``drop``) to
    learn whether it fits and where it lands; most do not fit (4x5: 2.7 of
    18 a board) and testing each took half a greedy sweep's instructions,
    and the landing row is a loop over the rows below the top."""
    cdef int k, c, r, j, h, below, n = g.first[g.n_pieces]
    cdef Py_ssize_t count = 1, index, rest
    cdef board_t sm
    cdef uint64_t fits
    L.fits = NULL
    L.rows = NULL
    L.n = n
    L.width = g.width
    L.base = g.height + 1
    if n > 64 or g.top_out or g.width > 32:
        return -1
    for c in range(g.width):
        count *= L.base
        if count > MAX_PROFILES:
            return -1
        L.column[c] = 0
        for r in range(g.height):
            L.column[c] |= (<board_t>1) << (r * g.width + c)
    L.fits = <uint64_t*>malloc(count * sizeof(uint64_t))
    L.rows = <uint8_t*>malloc(count * n * sizeof(uint8_t))
    if L.fits == NULL or L.rows == NULL:
        landings_free(L)
        return -1
    for index in range(count):
        sm = 0
        rest = index
        for c in range(g.width):
            h = rest % L.base
            rest //= L.base
            for r in range(h):
                sm |= (<board_t>1) << (r * g.width + c)
        fits = 0
        for k in range(n):
            L.rows[index * n + k] = 0
            if g.top[k] & sm:
                continue
            # (drop's count: the positions below its highest where the piece meets the profile)
            below = 0
            for j in range(g.height - g.rows[k]):
                below += ((g.mask[k] << (j * g.width)) & sm) != 0
            fits |= (<uint64_t>1) << k
            L.rows[index * n + k] = <uint8_t>below
        L.fits[index] = fits
    return 0


cdef inline void landings_free(Landings* L) noexcept nogil:
    free(L.fits)
    free(L.rows)
    L.fits = NULL
    L.rows = NULL


cdef inline uint64_t landings_of(const Landings* L, board_t smeared, const uint8_t** rows) noexcept nogil:
    """The placements that fit on a board smeared down to ``smeared`` (a
    bit each); ``rows[0][k]`` receives the row placement k comes to rest at
    (as ``drop`` finds it: ``settle`` there is the move)."""
    cdef Py_ssize_t index = 0
    cdef int c
    for c in range(L.width - 1, -1, -1):
        index = index * L.base + popcount64(smeared & L.column[c])
    rows[0] = L.rows + index * L.n
    return L.fits[index]


cdef inline int _search(const Geometry* g, uint64_t* bits, uint64_t* todo, Py_ssize_t n_words, uint32_t start,
                               int64_t max_boards, int n_threads, int64_t* found, int* passes,
                               const Landings* landings=NULL) noexcept nogil:
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
    ``landings`` (:func:`landings_build`), only the placements that fit are
    settled, at the rows it gives."""
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
                block_new[k] = _expand_block(g, bits, todo, k, n_words, landings)
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
                                  Py_ssize_t n_words, const Landings* landings=NULL) noexcept nogil:
    """Expand the boards waiting in a block of ``todo``'s words (taking
    them): mark each board after a move in ``bits`` and, where new, in
    ``todo``; returns how many new boards it marked.  ``landings``: as for
    :func:`_search`."""
    cdef Py_ssize_t w, last = min((block + 1) * WORDS_PER_BLOCK, n_words)
    cdef uint64_t word, tried
    cdef int k, lines, n = g.first[g.n_pieces]
    cdef board_t b, sm, nb
    cdef const uint8_t* rows
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
            if landings != NULL:
                tried = landings_of(landings, sm, &rows)
                while tried:
                    k = ctz64(tried)
                    tried &= tried - 1
                    if settle(g, b, k, rows[k], &nb, &lines):
                        new += _mark(bits, todo, nb)
            else:
                for k in range(n):
                    if drop(g, b, sm, k, &nb, &lines):
                        new += _mark(bits, todo, nb)
    return new


cdef inline int _mark(uint64_t* bits, uint64_t* todo, board_t nb) noexcept nogil:
    """Mark board nb in ``bits`` and, where new, in ``todo``; returns 1
    where it was new, else 0."""
    cdef uint64_t bit = (<uint64_t>1) << (nb & 63)
    if atomic_load(&bits[nb >> 6]) & bit:
        return 0
    if fetch_or(&bits[nb >> 6], bit) & bit:
        return 0
    fetch_or(&todo[nb >> 6], bit)
    return 1


cdef inline int owner_of(board_t b, uint64_t key_mask, uint64_t n_shards, const int16_t* owners) noexcept nogil:
    """The shard owning board b, as :func:`babytris.modes.sharded.owners.shard_of` gives it:
    ``owners``' entry for the bits of ``b & key_mask`` (``"low_rows"``: the
    bottom rows' pattern, :func:`~babytris.modes.sharded.owners.owner_table`),
    or where ``owners`` is NULL those bits mixed, modulo the shards (``"hash"``)."""
    if owners != NULL:
        return owners[b & key_mask]
    return <int>(mix64(b & key_mask) % n_shards)


cdef inline const int16_t* checked_owners(const int16_t[::1] owners, uint64_t key_mask, int n_shards) except? NULL:
    """``owners`` (an owner table, :func:`owner_of`'s) checked: NULL where
    empty (the key mixed), else its first entry; refused unless it has an
    entry per key (``key_mask + 1``), each a shard in ``[0, n_shards)``."""
    cdef Py_ssize_t i
    if owners is None or owners.shape[0] == 0:
        return NULL
    if key_mask >= <uint64_t>(1 << 30) or <uint64_t>owners.shape[0] != key_mask + 1:
        raise ValueError(f"owners must be empty or hold key_mask + 1 entries ({key_mask + 1:,}), got {owners.shape[0]:,}")
    for i in range(owners.shape[0]):
        if not 0 <= owners[i] < n_shards:
            raise ValueError(f"owners[{i}] = {owners[i]} is not a shard in [0, {n_shards})")
    return &owners[0]
