# The bitmap search's loop (pass 1 of the enumeration for boards of up to
# BITMAP_MAX_CELLS cells), inline: the queue is expanded a stretch at a time,
# a wide stretch shared by threads that mark boards with an atomic or, each
# with its own buffers; then the boards found are queued.  _core.pyx holds
# the expansion (the drop, inlined there) and calls this with it.

from cython.parallel cimport prange, threadid
from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy

from babytris.engine._geometry cimport Geometry
from babytris.engine._types cimport HAVE_ATOMICS, board_t
from babytris.engine.signals cimport interrupted
from babytris.engine._vec cimport Vec, vec_init, vec_reserve, vec_free


cdef enum:  # status codes of the enumeration (enumeration.py reads the negative ones)
    OK = 0
    OUT_OF_MEMORY = -1
    OVER_BUDGET = -2
    TOO_MANY_BOARDS = -3
    INTERRUPTED = -4
    TOO_MANY_MOVES = -5        # more moves than int32 offsets number (the table's limit)
    NOT_CLOSED = -6            # given boards: a move leads to a board not given
    REPEATED = -7              # given boards: one given twice


cdef enum:
    # A stretch holds at most SEARCH_STRETCH boards; threads share it, in
    # chunks of SEARCH_CHUNK, once it holds SEARCH_MIN_THREADED (below that a
    # parallel region costs more than it saves).
    SEARCH_STRETCH = 16384
    SEARCH_CHUNK = 256
    SEARCH_MIN_THREADED = 4096


# Expands boards queue[lo:hi]: appends to ``found`` the boards it is the first
# to mark in ``bits``, adds the moves made to ``moves`` (``room``: scratch);
# returns OK or OUT_OF_MEMORY.
ctypedef int (*Expand)(const Geometry* g, const board_t* queue, size_t lo, size_t hi, uint64_t* bits,
                       Vec* found, board_t* room, size_t* moves) noexcept nogil


cdef inline int search_bitmap(const Geometry* g, Expand expand, board_t start, uint64_t* bits, Vec* boards,
                              size_t* n_moves, size_t budget, size_t fixed_bytes, size_t board_bytes,
                              size_t move_bytes, size_t* peak, int64_t* seen, board_t* rooms, size_t room,
                              int n_threads) noexcept nogil:
    """Every board reachable from ``start`` into ``boards`` (in an order
    that depends on the threads; the bitmap's does not) and the moves made
    into ``n_moves``; returns a status.  Stops with OVER_BUDGET once
    ``fixed_bytes`` + ``board_bytes`` per board + ``move_bytes`` per move +
    the queues exceed ``budget`` (``peak``: that sum; ``seen``, if not NULL:
    boards found and expanded so far, for a progress bar; ``rooms``:
    ``room`` boards of scratch per thread)."""
    cdef Vec* found = <Vec*>malloc(n_threads * sizeof(Vec))     # each thread's new boards
    cdef size_t* moves = <size_t*>calloc(n_threads, sizeof(size_t))
    cdef int* status = <int*>calloc(n_threads, sizeof(int))
    cdef int t, result = OUT_OF_MEMORY
    if found != NULL and moves != NULL and status != NULL:
        for t in range(n_threads):
            vec_init(&found[t], sizeof(board_t))
        result = _stretches(g, expand, start, bits, boards, n_moves, budget, fixed_bytes, board_bytes,
                            move_bytes, peak, seen, rooms, room, n_threads, found, moves, status)
        for t in range(n_threads):
            vec_free(&found[t])
    free(found)
    free(moves)
    free(status)
    return result


cdef inline int _stretches(const Geometry* g, Expand expand, board_t start, uint64_t* bits, Vec* boards,
                           size_t* n_moves, size_t budget, size_t fixed_bytes, size_t board_bytes,
                           size_t move_bytes, size_t* peak, int64_t* seen, board_t* rooms, size_t room,
                           int n_threads, Vec* found, size_t* moves, int* status) noexcept nogil:
    """:func:`search_bitmap` with its per-thread buffers."""
    cdef int t, threads
    cdef size_t head = 0, hi, total = 0, held
    cdef Py_ssize_t c, n_chunks
    cdef const board_t* queue
    if vec_reserve(boards, 1024) != 0:
        return OUT_OF_MEMORY
    (<board_t*>boards.data)[0] = start
    boards.size = 1
    bits[start >> 6] |= (<uint64_t>1) << (start & 63)
    while head < boards.size:
        hi = boards.size if boards.size - head <= SEARCH_STRETCH else head + SEARCH_STRETCH
        queue = <const board_t*>boards.data    # read only until the stretch is done
        threads = n_threads if HAVE_ATOMICS and hi - head >= SEARCH_MIN_THREADED else 1
        if threads == 1:
            status[0] = expand(g, queue, head, hi, bits, &found[0], rooms, &moves[0])
        else:
            n_chunks = <Py_ssize_t>((hi - head + SEARCH_CHUNK - 1) // SEARCH_CHUNK)
            for c in prange(n_chunks, num_threads=threads, schedule="dynamic"):
                t = threadid()
                if status[t] == OK:
                    status[t] = expand(g, queue, head + <size_t>c * SEARCH_CHUNK,
                                       min(hi, head + <size_t>(c + 1) * SEARCH_CHUNK), bits, &found[t],
                                       rooms + <size_t>t * room, &moves[t])
        # Queue the boards the stretch found, thread by thread.
        held = 0
        total = 0
        for t in range(n_threads):
            if status[t] != OK:
                return status[t]
            total += moves[t]
            held += found[t].capacity
            if found[t].size == 0:
                continue    # (its data may be NULL)
            if vec_reserve(boards, boards.size + found[t].size) != 0:
                return OUT_OF_MEMORY
            memcpy(<board_t*>boards.data + boards.size, found[t].data, found[t].size * sizeof(board_t))
            boards.size += found[t].size
            found[t].size = 0
        head = hi
        if interrupted():
            return INTERRUPTED
        if seen != NULL:
            seen[0] = <int64_t>boards.size
            seen[1] = <int64_t>head
        peak[0] = (fixed_bytes + (boards.capacity + held) * sizeof(board_t) + boards.size * board_bytes
                   + total * move_bytes)
        if peak[0] > budget:
            n_moves[0] = total
            return OVER_BUDGET
    n_moves[0] = total
    return OK
