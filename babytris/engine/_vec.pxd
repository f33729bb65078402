# Growable C arrays (the enumeration's search queues), inline: the engine and
# the lean sweeps share them.  _core.vec_to_numpy hands one to numpy without a copy.

from libc.stdlib cimport realloc, free

cdef struct Vec:
    void* data
    size_t size
    size_t capacity
    size_t itemsize


cdef inline void vec_init(Vec* v, size_t itemsize) noexcept nogil:
    v.data = NULL
    v.size = 0
    v.capacity = 0
    v.itemsize = itemsize


cdef inline int vec_reserve(Vec* v, size_t need) noexcept nogil:
    cdef size_t cap
    cdef void* p
    if need <= v.capacity:
        return 0
    cap = v.capacity + v.capacity // 2 + 64
    if cap < need:
        cap = need
    p = realloc(v.data, cap * v.itemsize)
    if p == NULL:
        return -1
    v.data = p
    v.capacity = cap
    return 0


cdef inline void vec_free(Vec* v) noexcept nogil:
    free(v.data)
    vec_init(v, v.itemsize)
