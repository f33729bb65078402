# C-level declarations every compiled module of babytris shares: the board
# and index types, the key mixer of the hash tables, a prefetch hint, an
# atomic or.

from libc.stdint cimport uint64_t, int32_t, int64_t

ctypedef uint64_t board_t      # bit row * width + col, row 0 at the bottom
ctypedef int32_t index_t       # dense board index; -1 = none
ctypedef int32_t offset_t      # a move's number in a table (its CSR offsets): tables hold < 2**31 moves


cdef extern from "Python.h":
    int PyErr_CheckSignals()
    void PyErr_Clear()


cdef inline bint interrupted() noexcept nogil:
    """Whether Ctrl-C (a signal whose handler raised) came since the last call.
    Long loops call this every millisecond or so, outside parallel regions,
    then stop and return normally; their Python caller raises KeyboardInterrupt
    (so the handler's exception is cleared here, not left pending)."""
    cdef int status
    with gil:
        status = PyErr_CheckSignals()
        if status != 0:
            PyErr_Clear()
    return status != 0


cdef inline uint64_t mix64(uint64_t x) noexcept nogil:
    # splitmix64 finaliser: raw boards have structured low bits that would
    # cluster under a plain mask.
    x ^= x >> 30
    x *= <uint64_t>0xbf58476d1ce4e5b9ULL
    x ^= x >> 27
    x *= <uint64_t>0x94d049bb133111ebULL
    x ^= x >> 31
    return x


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define BABYTRIS_PREFETCH(p) __builtin_prefetch((const void*)(p))
    #else
    #define BABYTRIS_PREFETCH(p) ((void)0)
    #endif
    """
    void prefetch "BABYTRIS_PREFETCH"(const void* p) noexcept nogil


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define BABYTRIS_FETCH_OR(p, v) __atomic_fetch_or((p), (v), __ATOMIC_RELAXED)
    #define BABYTRIS_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
    #define BABYTRIS_ATOMICS 1
    #else
    static inline unsigned long long babytris_fetch_or(unsigned long long* p, unsigned long long v) {
        unsigned long long old = *p; *p = old | v; return old;
    }
    #define BABYTRIS_FETCH_OR(p, v) babytris_fetch_or((unsigned long long*)(p), (v))
    #define BABYTRIS_LOAD(p) (*(p))
    #define BABYTRIS_ATOMICS 0
    #endif
    """
    # ``*p |= v`` as one atomic step; returns the word before.  Only where
    # HAVE_ATOMICS: elsewhere it is a plain read and write, for one thread.
    uint64_t fetch_or "BABYTRIS_FETCH_OR"(uint64_t* p, uint64_t v) noexcept nogil
    uint64_t atomic_load "BABYTRIS_LOAD"(const uint64_t* p) noexcept nogil
    const bint HAVE_ATOMICS "BABYTRIS_ATOMICS"


# Checks of the arrays a compiled loop will index without checks.

cdef inline Py_ssize_t first_decrease(const offset_t* a, Py_ssize_t n) noexcept nogil:
    """The first i with a[i] < a[i - 1], or -1."""
    cdef Py_ssize_t i
    for i in range(1, n):
        if a[i] < a[i - 1]:
            return i
    return -1


cdef inline Py_ssize_t first_outside(const int32_t* a, Py_ssize_t n, Py_ssize_t high) noexcept nogil:
    """The first i with a[i] outside [0, high), or -1."""
    cdef Py_ssize_t i
    for i in range(n):
        if a[i] < 0 or a[i] >= high:
            return i
    return -1
