# C-level declarations every compiled module of babytris shares: the board
# and index types, the key mixer of the hash tables, a prefetch hint, an
# atomic or, a hint to map pages before writing them.

from cython.parallel cimport prange
from libc.stdint cimport uint64_t, uint32_t, int64_t, int32_t, int16_t, uint8_t

ctypedef uint64_t board_t      # bit row * width + col, row 0 at the bottom
ctypedef int32_t index_t       # dense board index; -1 = none
ctypedef int32_t offset_t      # a move's number in a table (its CSR offsets): tables hold < 2**31 moves


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


cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #include <unistd.h>
    #ifndef MADV_POPULATE_WRITE
    #define MADV_POPULATE_WRITE 23
    #endif
    #endif
    static inline void babytris_populate(void* start, size_t n) {
    #if defined(__linux__)
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t lo = ((size_t)start + page - 1) & ~(page - 1), hi = ((size_t)start + n) & ~(page - 1);
        if (page > 0 && hi > lo) (void)madvise((void*)lo, hi - lo, MADV_POPULATE_WRITE);
    #else
        (void)start; (void)n;
    #endif
    }
    """
    # Maps the whole pages of ``[start, start + n)`` writable in one system
    # call, before a loop writes them all: first touches one page at a time
    # cost a fault each, and a page read before it is written (zeros from
    # calloc) a second fault and a TLB flush on the other cores.  Linux 5.14
    # and up; elsewhere, or where refused, nothing happens (the loop's own
    # first touches map the pages, as without it).
    void populate "babytris_populate"(void* start, size_t n) noexcept nogil


cdef inline void populate_threads(void* start, size_t n, int n_threads) noexcept nogil:
    """populate(start, n) on ``n_threads`` threads, in pieces of 32 MiB cut at
    multiples of 32 MiB, so that no two threads fill the same page table
    (4x7: 640 MB took longer on one thread than the threads' own first touches)."""
    cdef size_t piece = <size_t>32 << 20, base = <size_t>start & ~(piece - 1)
    cdef Py_ssize_t n_pieces = (<size_t>start + n - base + piece - 1) // piece, i
    cdef size_t lo, hi
    if n_threads < 2 or n_pieces < 2:
        populate(start, n)
        return
    for i in prange(n_pieces, num_threads=n_threads, schedule="dynamic"):
        lo = base + i * piece
        hi = lo + piece
        if lo < <size_t>start:
            lo = <size_t>start
        if hi > <size_t>start + n:
            hi = <size_t>start + n
        populate(<void*>lo, hi - lo)


# Checks of the arrays a compiled loop will index without checks.  Each
# first only accumulates a flag, a loop the compiler vectorizes, and looks for
# where only if something is wrong (a solve checks its table every time).

cdef inline Py_ssize_t first_bad_state(const offset_t* offsets, const int16_t* policy,
                                       Py_ssize_t n) noexcept nogil:
    """The first state s < n whose moves ``offsets[s]:offsets[s + 1]`` run
    backwards, or whose ``policy[s]`` (if not NULL) is neither -1 nor one of
    them; -1 if none."""
    cdef Py_ssize_t s
    cdef uint32_t count
    cdef int bad = 0
    if policy == NULL:  # (the offsets alone)
        for s in range(n):
            bad |= offsets[s + 1] < offsets[s]
    else:
        # (32-bit unsigned throughout, so that it vectorizes: policy p is -1 or a
        # move when p + 1 <= count; a p below -1 wraps to the top)
        for s in range(n):
            count = <uint32_t>offsets[s + 1] - <uint32_t>offsets[s]
            bad |= (offsets[s + 1] < offsets[s]) | (<uint32_t>(<int32_t>policy[s] + 1) > count)
    if bad:
        for s in range(n):
            if offsets[s + 1] < offsets[s]:
                return s
            if policy != NULL and not -1 <= policy[s] < <int64_t>offsets[s + 1] - offsets[s]:
                return s
    return -1


cdef inline Py_ssize_t first_bad_move(const int32_t* next_board, const uint8_t* lines, Py_ssize_t n,
                                      Py_ssize_t n_boards, Py_ssize_t n_scores) noexcept nogil:
    """The first move e < n whose ``next_board[e]`` lies outside
    [0, n_boards) or whose ``lines[e]`` is n_scores or more; -1 if none."""
    cdef Py_ssize_t e
    cdef int bad = 0
    # (8- and 32-bit unsigned, so that it vectorizes: a negative board wraps to the top)
    cdef uint32_t boards = <uint32_t>min(n_boards, <Py_ssize_t>0x80000000)  # (int32 boards: < 2**31 anyway)
    cdef uint8_t most_lines = <uint8_t>min(n_scores - 1, 255)
    for e in range(n):
        bad |= (<uint32_t>next_board[e] >= boards) | (lines[e] > most_lines)
    if bad:
        for e in range(n):
            if next_board[e] < 0 or next_board[e] >= n_boards or lines[e] >= n_scores:
                return e
    return -1


cdef inline int check_move_table(str who, const offset_t[::1] offsets, const int16_t* policy,
                                 const int32_t[::1] next_board, const uint8_t[::1] lines, Py_ssize_t n_boards,
                                 Py_ssize_t n_scores) except -1:
    """Raise ValueError, naming ``who``, unless the offsets run from 0 to the
    moves without decreasing, each move leads to a board in [0, n_boards) and
    clears fewer rows than ``n_scores``, and each ``policy[s]`` (if not NULL)
    is -1 or a move of state s: what the compiled loops index by unchecked."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, n_moves = next_board.shape[0], i
    if n < 0 or lines.shape[0] != n_moves or offsets[n] != n_moves:
        raise ValueError(f"{who}: offsets do not match the moves: the last offset must be the number of "
                         f"next boards ({n_moves}) and of rows cleared ({lines.shape[0]}), got "
                         f"{offsets[n] if n >= 0 else None}")
    if offsets[0] != 0:
        raise ValueError(f"{who}: offsets must start at 0")
    i = first_bad_state(&offsets[0], policy, n)
    if i >= 0 and offsets[i + 1] < offsets[i]:
        raise ValueError(f"{who}: offsets must not decrease; offsets[{i + 1}] = {offsets[i + 1]} < offsets[{i}]")
    if i >= 0:
        raise ValueError(f"{who}: policy[{i}] = {policy[i]} is not a move of its state: must be in "
                         f"[-1, {offsets[i + 1] - offsets[i]})")
    i = first_bad_move(&next_board[0] if n_moves else NULL, &lines[0] if n_moves else NULL, n_moves, n_boards,
                       n_scores)
    if i >= 0 and not 0 <= next_board[i] < n_boards:
        raise ValueError(f"{who}: next_board[{i}] = {next_board[i]} is outside [0, {n_boards})")
    if i >= 0:
        raise ValueError(f"{who}: lines[{i}] = {lines[i]}: a move clears more rows than the {n_scores} scores cover")
    return 0


cdef inline int check_room(str who, const uint8_t[::1] room, Py_ssize_t n_states) except -1:
    """Raise ValueError, naming ``who``, unless ``room`` holds the chosen moves' cache of n_states states."""
    if room.shape[0] < 5 * n_states:
        raise ValueError(f"{who} must hold 5 bytes a state ({5 * n_states}), got {room.shape[0]}")
    if (<size_t>&room[0]) % 4:
        raise ValueError(f"{who} must start on a 4-byte boundary (the boards the moves lead to are int32)")
    return 0
