# The hash map from boards to dense indices: open addressing, linear probing,
# power-of-two capacity (as preshed's maps).  Every function is inline, so the
# enumeration's hot loop calls it without a jump between modules.

from libc.stdlib cimport malloc, free

from babytris.engine._types cimport board_t, index_t, mix64


cdef struct MapSlot:
    board_t key
    index_t value              # -1 marks an empty slot (board 0 is a valid key)


cdef struct BoardMap:
    # Open addressing, linear probing, power-of-two capacity, load <= 7/10.
    MapSlot* slots
    size_t capacity
    size_t size


cdef extern from *:
    """
    #include <stdlib.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* Memory for a big table, on huge pages where the kernel offers them:
       random probes into hundreds of MiB otherwise miss the TLB every time. */
    static void* babytris_alloc_table(size_t bytes) {
        void* p = NULL;
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        const size_t huge = (size_t)2 << 20;
        if (bytes >= 2 * huge) {
            if (posix_memalign(&p, huge, bytes) != 0) return NULL;
            madvise(p, bytes, MADV_HUGEPAGE);
            return p;
        }
    #endif
        return malloc(bytes);
    }
    """
    void* alloc_table "babytris_alloc_table"(size_t bytes) noexcept nogil


# Grow the map past this load: linear probing stays short up to about 3/4,
# and a fuller table touches fewer pages.
cdef enum:
    MAX_LOAD_NUM = 7
    MAX_LOAD_DEN = 10


cdef inline size_t _capacity_for(size_t expected) noexcept nogil:
    cdef size_t cap = 16
    while cap * MAX_LOAD_NUM < expected * MAX_LOAD_DEN:
        cap <<= 1
    return cap


cdef inline MapSlot* _empty_slots(size_t capacity) noexcept nogil:
    """``capacity`` slots, all empty; NULL if out of memory."""
    cdef size_t i
    cdef MapSlot* slots = <MapSlot*>alloc_table(capacity * sizeof(MapSlot))
    if slots != NULL:
        for i in range(capacity):
            slots[i].value = -1
    return slots


cdef inline int map_init(BoardMap* m, size_t expected) noexcept nogil:
    m.capacity = _capacity_for(expected)
    m.size = 0
    m.slots = _empty_slots(m.capacity)
    if m.slots == NULL:
        m.capacity = 0
        return -1
    return 0


cdef inline void map_free(BoardMap* m) noexcept nogil:
    free(m.slots)
    m.slots = NULL
    m.capacity = 0
    m.size = 0


cdef inline size_t map_probe(const BoardMap* m, board_t key) noexcept nogil:
    """Slot holding key, or the empty slot where it would go."""
    cdef size_t mask = m.capacity - 1
    cdef size_t i = <size_t>(mix64(key) & mask)
    while m.slots[i].value != -1 and m.slots[i].key != key:
        i = (i + 1) & mask
    return i


cdef inline index_t map_get(const BoardMap* m, board_t key) noexcept nogil:
    return m.slots[map_probe(m, key)].value


cdef inline int _map_grow(BoardMap* m) noexcept nogil:
    cdef BoardMap bigger
    cdef size_t i, j
    bigger.capacity = m.capacity * 2
    bigger.size = m.size
    bigger.slots = _empty_slots(bigger.capacity)
    if bigger.slots == NULL:
        return -1
    for i in range(m.capacity):
        if m.slots[i].value != -1:
            j = map_probe(&bigger, m.slots[i].key)
            bigger.slots[j] = m.slots[i]
    free(m.slots)
    m[0] = bigger
    return 0


cdef inline index_t map_get_or_insert(BoardMap* m, board_t key, index_t value) noexcept nogil:
    """Index stored for key; if absent, store value and return it.  -2 if out of memory."""
    cdef size_t i = map_probe(m, key)
    if m.slots[i].value != -1:
        return m.slots[i].value
    if (m.size + 1) * MAX_LOAD_DEN > m.capacity * MAX_LOAD_NUM:
        if _map_grow(m) != 0:
            return -2
        i = map_probe(m, key)
    m.slots[i].key = key
    m.slots[i].value = value
    m.size += 1
    return value
