# The board index of the enumeration: a reachable board's number from the
# bitmap over every possible board (its rank among the set bits) or from the
# hash map, inline.  _core.pyx fills and reads it.

from libc.stdint cimport uint64_t, int64_t, int32_t

from babytris.engine._types cimport board_t, index_t, mix64, prefetch
from babytris.engine._boardmap cimport BoardMap, map_get, map_probe


cdef extern from *:
    """
    /* Portable popcount (no -mpopcnt needed) and lowest set bit. */
    static inline int babytris_popcount(unsigned long long x) {
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int)((x * 0x0101010101010101ULL) >> 56);
    }
    #if defined(__GNUC__) || defined(__clang__)
    #define BABYTRIS_CTZ(x) __builtin_ctzll(x)
    #else
    #define BABYTRIS_CTZ(x) babytris_popcount(((x) & (~(x) + 1)) - 1)
    #endif
    """
    int popcount "babytris_popcount"(uint64_t x) noexcept nogil
    int lowest_bit "BABYTRIS_CTZ"(uint64_t x) noexcept nogil


cdef struct Index:
    # Board -> its number: the map, or (if bits) the bitmap.
    const BoardMap* table
    const uint64_t* bits
    const int32_t* rank        # set bits before each word (with same_layer: per word and layer, see below)
    const int32_t* perm        # if not NULL, a board's number from its rank in the bitmap
    # Big bitmaps number boards by layer without a permutation (a random load a lookup, and 4
    # bytes a board): rank[w * n_layers + L] is the number of layer L's first board in word w
    # or after, same_layer[(h % m) * n_layers + L] the bits j of a word whose boards have h
    # filled cells above bit 6 that lie in layer L (see _layers.bitmap_layered).
    const uint64_t* same_layer
    const int64_t* layer_of_residue
    int m
    int n_layers


cdef inline index_t index_of(const Index* ix, board_t key) noexcept nogil:
    cdef size_t w
    cdef index_t i
    cdef int c, layer
    if ix.bits != NULL:
        w = <size_t>(key >> 6)
        if ix.same_layer != NULL:
            c = popcount(key)
            layer = <int>ix.layer_of_residue[c % ix.m]
            return ix.rank[w * ix.n_layers + layer] + popcount(
                ix.bits[w] & ix.same_layer[((c - popcount(key & 63)) % ix.m) * ix.n_layers + layer]
                & (((<board_t>1) << (key & 63)) - 1))
        i = ix.rank[w] + popcount(ix.bits[w] & (((<board_t>1) << (key & 63)) - 1))
        return ix.perm[i] if ix.perm != NULL else i
    return map_get(ix.table, key)


cdef inline bint has_board(const Index* ix, board_t key) noexcept nogil:
    """Whether ``key`` is one of the index's boards (``index_of`` is defined only then)."""
    if ix.bits != NULL:
        return (ix.bits[key >> 6] >> (key & 63)) & 1
    return map_get(ix.table, key) >= 0


cdef inline void use_layer_ranks(Index* ix, const uint64_t[::1] same_layer,
                                 const int64_t[::1] layer_of_residue) noexcept:
    """Number the bitmap's boards by the ranks per layer (``ix.rank`` must hold them)."""
    ix.same_layer = &same_layer[0]
    ix.layer_of_residue = &layer_of_residue[0]
    ix.m = <int>layer_of_residue.shape[0]
    ix.n_layers = <int>(same_layer.shape[0] // layer_of_residue.shape[0])


cdef inline const void* slot_of(const Index* ix, board_t key) noexcept nogil:
    """Where ``index_of`` will look first (to prefetch it)."""
    if ix.bits != NULL:
        return &ix.bits[key >> 6]
    return &ix.table.slots[mix64(key) & (ix.table.capacity - 1)]


cdef inline void renumber(BoardMap* table, const board_t[::1] boards) noexcept nogil:
    """Pass 2: point the map at each board's position in sorted order."""
    cdef Py_ssize_t i, n = boards.shape[0]
    for i in range(n):
        if i + 16 < n:
            prefetch(&table.slots[mix64(boards[i + 16]) & (table.capacity - 1)])
        table.slots[map_probe(table, boards[i])].value = <index_t>i
