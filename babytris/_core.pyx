# cython: language_level=3
"""Compiled core of babytris: bitboard placement, line clears, a board hash map,
breadth-first enumeration into a CSR transition table, and Bellman sweeps.

Everything here works on raw integers and numpy buffers; ``babytris`` wraps it
in friendly objects.  The inner loops hold no Python objects and run without
the GIL.
"""

from cython cimport view
from libc.math cimport fabs, INFINITY
from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, uint8_t, uint16_t
from libc.stdlib cimport malloc, calloc, realloc, free

import numpy as np

cdef board_t ONE = 1

# Status codes of enumeration.
cdef enum:
    OK = 0
    OUT_OF_MEMORY = -1
    OVER_BUDGET = -2
    TOO_MANY_BOARDS = -3


# --------------------------------------------------------------------------
# Hash map: board -> dense index.
# --------------------------------------------------------------------------

cdef inline uint64_t mix64(uint64_t x) noexcept nogil:
    # splitmix64 finaliser: raw boards have structured low bits that would
    # cluster under a plain mask.
    x ^= x >> 30
    x *= <uint64_t>0xbf58476d1ce4e5b9ULL
    x ^= x >> 27
    x *= <uint64_t>0x94d049bb133111ebULL
    x ^= x >> 31
    return x


cdef size_t _capacity_for(size_t expected) noexcept nogil:
    cdef size_t cap = 16
    while cap < 2 * expected:
        cap <<= 1
    return cap


cdef int map_init(BoardMap* m, size_t expected) noexcept nogil:
    cdef size_t i
    m.capacity = _capacity_for(expected)
    m.size = 0
    m.slots = <MapSlot*>malloc(m.capacity * sizeof(MapSlot))
    if m.slots == NULL:
        m.capacity = 0
        return -1
    for i in range(m.capacity):
        m.slots[i].value = -1
    return 0


cdef void map_free(BoardMap* m) noexcept nogil:
    free(m.slots)
    m.slots = NULL
    m.capacity = 0
    m.size = 0


cdef inline size_t _probe(const BoardMap* m, board_t key) noexcept nogil:
    """Slot holding key, or the empty slot where it would go."""
    cdef size_t mask = m.capacity - 1
    cdef size_t i = <size_t>(mix64(key) & mask)
    while m.slots[i].value != -1 and m.slots[i].key != key:
        i = (i + 1) & mask
    return i


cdef index_t map_get(const BoardMap* m, board_t key) noexcept nogil:
    return m.slots[_probe(m, key)].value


cdef int _map_grow(BoardMap* m) noexcept nogil:
    cdef BoardMap bigger
    cdef size_t i, j
    bigger.capacity = m.capacity * 2
    bigger.size = m.size
    bigger.slots = <MapSlot*>malloc(bigger.capacity * sizeof(MapSlot))
    if bigger.slots == NULL:
        return -1
    for i in range(bigger.capacity):
        bigger.slots[i].value = -1
    for i in range(m.capacity):
        if m.slots[i].value != -1:
            j = _probe(&bigger, m.slots[i].key)
            bigger.slots[j] = m.slots[i]
    free(m.slots)
    m[0] = bigger
    return 0


cdef index_t map_get_or_insert(BoardMap* m, board_t key, index_t value) noexcept nogil:
    """Index stored for key; if absent, store value and return it.  -2 if out of memory."""
    cdef size_t i = _probe(m, key)
    if m.slots[i].value != -1:
        return m.slots[i].value
    if 2 * (m.size + 1) > m.capacity:
        if _map_grow(m) != 0:
            return -2
        i = _probe(m, key)
    m.slots[i].key = key
    m.slots[i].value = value
    m.size += 1
    return value


cdef class BoardIndex:
    """Board -> dense index lookups (open addressing, mixed keys).

    Built by enumeration or from an array of distinct boards, where the index
    of ``boards[i]`` is ``i``.
    """

    cdef BoardMap table

    def __cinit__(self):
        self.table.slots = NULL
        self.table.capacity = 0
        self.table.size = 0

    def __dealloc__(self):
        map_free(&self.table)

    @staticmethod
    def from_boards(const uint64_t[::1] boards):
        """Index ``boards``; raises ``ValueError`` on a repeated board."""
        cdef BoardIndex out = BoardIndex()
        cdef Py_ssize_t i, n = boards.shape[0]
        cdef index_t got = 0
        if n >= 2**31 - 1:
            raise ValueError(f"boards: at most 2**31 - 2 boards, got {n}")
        if map_init(&out.table, <size_t>n) != 0:
            raise MemoryError("BoardIndex: cannot allocate the table")
        with nogil:
            for i in range(n):
                got = map_get_or_insert(&out.table, boards[i], <index_t>i)
                if got != i:
                    break
        if got == -2:
            raise MemoryError("BoardIndex: cannot grow the table")
        if n and got != i:
            raise ValueError(f"boards: board {boards[i]} appears twice (at {got} and {i})")
        return out

    def __len__(self):
        return self.table.size

    def get(self, board, default=-1):
        """Dense index of ``board``, or ``default`` if it is not indexed."""
        if not 0 <= board < 2**64:
            return default
        cdef index_t i = map_get(&self.table, <board_t>board)
        return default if i < 0 else i

    def __contains__(self, board):
        return self.get(board) >= 0

    def lookup(self, const uint64_t[::1] boards):
        """Indices of many boards as an int64 array; -1 where a board is absent."""
        cdef Py_ssize_t i, n = boards.shape[0]
        out = np.empty(n, dtype=np.int64)
        cdef int64_t[::1] res = out
        with nogil:
            for i in range(n):
                res[i] = map_get(&self.table, boards[i])
        return out

    @property
    def nbytes(self):
        return self.table.capacity * sizeof(MapSlot)


# --------------------------------------------------------------------------
# Growable C arrays, handed to numpy without a copy.
# --------------------------------------------------------------------------

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


cdef object vec_to_numpy(Vec* v, str fmt, dtype):
    """Give the buffer to a numpy array (which frees it); the Vec is emptied."""
    cdef void* p
    cdef view.array arr
    if v.size == 0:
        vec_free(v)
        return np.empty(0, dtype=dtype)
    p = realloc(v.data, v.size * v.itemsize)  # trim the growth slack
    if p != NULL:
        v.data = p
    arr = view.array(shape=(v.size,), itemsize=v.itemsize, format=fmt, mode="c", allocate_buffer=False)
    arr.data = <char*>v.data
    arr.callback_free_data = free
    v.data = NULL
    vec_init(v, v.itemsize)
    return np.asarray(arr)


# --------------------------------------------------------------------------
# Placement: hard drop and line clears.
# --------------------------------------------------------------------------

cdef inline board_t remove_row(board_t b, int row, int width) noexcept nogil:
    """Delete row ``row`` and shift the rows above it down by one."""
    cdef int lo_bits = row * width
    cdef int hi_bits = lo_bits + width
    cdef board_t low = b & ((ONE << lo_bits) - 1)
    cdef board_t high = 0
    if hi_bits < 64:
        high = (b >> hi_bits) << lo_bits
    return low | high


cdef bint drop(const Geometry* g, board_t board, int k, board_t* after, int* lines) noexcept nogil:
    """Hard-drop placement k on ``board``.

    The piece falls from above the board, so it cannot pass under an
    overhang.  False if it comes to rest with a cell above the top row.  Otherwise
    writes the board after line clears and the number of rows cleared.
    """
    cdef board_t m = g.mask[k]
    cdef int w = g.width
    cdef int rows = g.rows[k]
    cdef int y = g.height    # the piece starts wholly above the board
    cdef int r, n = 0
    cdef board_t b, full
    # Fall while the next row down is free.  (y - 1) * w < 64 throughout;
    # bits shifted past the top of the word are above the board anyway.
    while y > 0 and not ((m << ((y - 1) * w)) & board):
        y -= 1
    if y + rows > g.height:
        return False
    b = board | (m << (y * w))
    # Top row first, so the rows still to check keep their numbers.
    for r in range(y + rows - 1, y - 1, -1):
        full = g.full_row << (r * w)
        if (b & full) == full:
            b = remove_row(b, r, w)
            n += 1
    after[0] = b
    lines[0] = n
    return True



cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define BABYTRIS_PREFETCH(p) __builtin_prefetch((const void*)(p))
    #else
    #define BABYTRIS_PREFETCH(p) ((void)0)
    #endif
    """
    void prefetch "BABYTRIS_PREFETCH"(const void* p) noexcept nogil

# Boards whose moves are generated before their lookups start: enough map
# slots in flight to hide memory latency.
cdef enum:
    BATCH = 32
    MOVE_BYTES = 4 + 1 + 2      # next board, rows cleared, placement number


cdef inline board_t smear_down(board_t b, int width, int height) noexcept nogil:
    """Every cell at or below a filled cell of its column: where a falling
    piece cannot be, since it would have passed through a filled cell."""
    cdef int shift = width
    while shift < width * height:
        b |= b >> shift
        shift <<= 1
    return b


cdef inline bint drop_smeared(const Geometry* g, board_t board, board_t smeared, int k,
                              board_t* after, int* lines) noexcept nogil:
    """:func:`drop`, given ``smeared = smear_down(board)``: legality in one test."""
    cdef board_t m = g.mask[k]
    cdef int w = g.width
    cdef int y = g.height - g.rows[k]
    cdef int r, n = 0
    cdef board_t b, full
    if (m << (y * w)) & smeared:
        return False        # resting above the top row, or blocked on the way
    while y > 0 and not ((m << ((y - 1) * w)) & smeared):
        y -= 1
    b = board | (m << (y * w))
    for r in range(y + g.rows[k] - 1, y - 1, -1):
        full = g.full_row << (r * w)
        if (b & full) == full:
            b = remove_row(b, r, w)
            n += 1
    after[0] = b
    lines[0] = n
    return True


cdef class Engine:
    """Placement tables for one rule set (built by ``babytris.states``)."""

    cdef Geometry geo
    cdef readonly object masks, rows, first

    def __init__(self, int width, int height, masks, rows, first):
        if width < 1 or height < 1 or width * height > 64:
            raise ValueError(f"width * height must be in [1, 64], got {width} * {height}")
        self.masks = np.ascontiguousarray(masks, dtype=np.uint64)
        self.rows = np.ascontiguousarray(rows, dtype=np.uint8)
        self.first = np.ascontiguousarray(first, dtype=np.int32)
        cdef const board_t[::1] m = self.masks
        cdef const uint8_t[::1] r = self.rows
        cdef const int32_t[::1] f = self.first
        if m.shape[0] != r.shape[0] or f.shape[0] < 2 or f[f.shape[0] - 1] != m.shape[0]:
            raise ValueError("Engine: inconsistent placement tables")
        self.geo.width = width
        self.geo.height = height
        self.geo.n_pieces = f.shape[0] - 1
        self.geo.full_row = (ONE << width) - 1
        self.geo.mask = &m[0] if m.shape[0] else NULL
        self.geo.rows = &r[0] if r.shape[0] else NULL
        self.geo.first = &f[0]

    @property
    def n_pieces(self):
        return self.geo.n_pieces

    def successors(self, board, int piece):
        """Legal moves of ``piece`` on ``board`` as ``[(placement, next_board, lines), ...]``."""
        if not 0 <= piece < self.geo.n_pieces:
            raise ValueError(f"piece must be in [0, {self.geo.n_pieces - 1}], got {piece}")
        cdef board_t b = board
        cdef board_t nb
        cdef int k, lines
        out = []
        for k in range(self.geo.first[piece], self.geo.first[piece + 1]):
            if drop(&self.geo, b, k, &nb, &lines):
                out.append((k - self.geo.first[piece], nb, lines))
        return out

    def enumerate(self, uint64_t start, size_t max_bytes, size_t bytes_per_board_after):
        """Breadth-first search of every board reachable from ``start``.

        Returns ``(status, boards, offsets, next_board, lines, placement)``:
        boards in discovery order (uint64, ``start`` first); ``offsets`` (int64,
        ``n_boards * n_pieces + 1``) delimit the moves of state
        ``board * n_pieces + piece``; per move the next board's index (int32),
        rows cleared (uint8) and placement number within the piece (uint16).
        ``status`` is 0, or on failure ``(code, n_boards_so_far, bytes)`` and
        the arrays are None.  The table, the map, the copy that relabelling
        makes and ``bytes_per_board_after`` per board (what the caller
        allocates next) are kept under ``max_bytes``.
        """
        cdef Geometry* g = &self.geo
        cdef int P = g.n_pieces
        cdef int n_place = g.first[P]
        cdef Vec boards, offsets, nxt, lines_v, place
        cdef BoardMap table
        cdef size_t head = 0, hi, bi, n_moves = 0, n_buf, e, c
        cdef int status = OK
        cdef int p, k, lines
        cdef board_t b, nb, sm
        cdef index_t j
        cdef size_t footprint = 0, peak = 0, n_states
        cdef board_t* buf_key = NULL
        cdef uint8_t* buf_lines = NULL
        cdef uint16_t* buf_place = NULL
        cdef int32_t* buf_count = NULL
        vec_init(&boards, sizeof(board_t))
        vec_init(&offsets, sizeof(int64_t))
        vec_init(&nxt, sizeof(int32_t))
        vec_init(&lines_v, sizeof(uint8_t))
        vec_init(&place, sizeof(uint16_t))
        table.slots = NULL
        with nogil:
            buf_key = <board_t*>malloc(BATCH * n_place * sizeof(board_t) + 1)
            buf_lines = <uint8_t*>malloc(BATCH * n_place + 1)
            buf_place = <uint16_t*>malloc(BATCH * n_place * sizeof(uint16_t) + 1)
            buf_count = <int32_t*>malloc(BATCH * P * sizeof(int32_t) + 1)
            if (buf_key == NULL or buf_lines == NULL or buf_place == NULL or buf_count == NULL
                    or map_init(&table, 1024) != 0 or vec_reserve(&boards, 1024) != 0):
                status = OUT_OF_MEMORY
            else:
                (<board_t*>boards.data)[0] = start
                boards.size = 1
                map_get_or_insert(&table, start, 0)
            while status == OK and head < boards.size:
                # Work on a batch of boards: first every legal move, prefetching
                # its map slot, then the lookups, in the same order as one board
                # at a time would make them (so discovery order is unchanged).
                hi = head + BATCH
                if hi > boards.size:
                    hi = boards.size
                n_buf = 0
                for bi in range(head, hi):
                    b = (<board_t*>boards.data)[bi]
                    sm = smear_down(b, g.width, g.height)
                    for p in range(P):
                        c = 0
                        for k in range(g.first[p], g.first[p + 1]):
                            if drop_smeared(g, b, sm, k, &nb, &lines):
                                buf_key[n_buf] = nb
                                buf_lines[n_buf] = <uint8_t>lines
                                buf_place[n_buf] = <uint16_t>(k - g.first[p])
                                prefetch(&table.slots[mix64(nb) & (table.capacity - 1)])
                                n_buf += 1
                                c += 1
                        buf_count[(bi - head) * P + p] = <int32_t>c
                if (vec_reserve(&offsets, offsets.size + (hi - head) * P + 1) != 0
                        or vec_reserve(&nxt, n_moves + n_buf) != 0
                        or vec_reserve(&lines_v, n_moves + n_buf) != 0
                        or vec_reserve(&place, n_moves + n_buf) != 0):
                    status = OUT_OF_MEMORY
                    break
                e = 0
                for bi in range(head, hi):
                    for p in range(P):
                        (<int64_t*>offsets.data)[offsets.size] = n_moves
                        offsets.size += 1
                        for c in range(<size_t>buf_count[(bi - head) * P + p]):
                            j = map_get_or_insert(&table, buf_key[e], <index_t>boards.size)
                            if j == -2:
                                status = OUT_OF_MEMORY
                                break
                            if j == <index_t>boards.size:
                                if boards.size >= 2147483646:
                                    status = TOO_MANY_BOARDS
                                    break
                                if vec_reserve(&boards, boards.size + 1) != 0:
                                    status = OUT_OF_MEMORY
                                    break
                                (<board_t*>boards.data)[boards.size] = buf_key[e]
                                boards.size += 1
                            (<int32_t*>nxt.data)[n_moves] = j
                            (<uint8_t*>lines_v.data)[n_moves] = buf_lines[e]
                            (<uint16_t*>place.data)[n_moves] = buf_place[e]
                            n_moves += 1
                            e += 1
                        if status != OK:
                            break
                    if status != OK:
                        break
                head = hi
                # Budget: what is held now plus the map's next doubling; and the
                # peak to come: the relabelled copy of the table plus the solver.
                footprint = (boards.capacity * sizeof(board_t) + offsets.capacity * sizeof(int64_t)
                             + nxt.capacity * MOVE_BYTES + 3 * table.capacity * sizeof(MapSlot))
                n_states = boards.size * P
                peak = (2 * (boards.size * sizeof(board_t) + n_states * sizeof(int64_t) + n_moves * MOVE_BYTES)
                        + boards.size * (sizeof(int64_t) + sizeof(int32_t))
                        + boards.size * bytes_per_board_after)
                if peak < footprint:
                    peak = footprint
                if status == OK and peak > max_bytes:
                    status = OVER_BUDGET
            if status == OK:
                (<int64_t*>offsets.data)[offsets.size] = n_moves
                offsets.size += 1
            map_free(&table)
            free(buf_key)
            free(buf_lines)
            free(buf_place)
            free(buf_count)
        if status != OK:
            n = boards.size
            vec_free(&boards)
            vec_free(&offsets)
            vec_free(&nxt)
            vec_free(&lines_v)
            vec_free(&place)
            return (status, n, peak), None, None, None, None, None
        nxt.size = lines_v.size = place.size = n_moves
        return (OK,
                vec_to_numpy(&boards, "Q", np.uint64),
                vec_to_numpy(&offsets, "q", np.int64),
                vec_to_numpy(&nxt, "i", np.int32),
                vec_to_numpy(&lines_v, "B", np.uint8),
                vec_to_numpy(&place, "H", np.uint16))


def relabel(const int64_t[::1] order, int n_pieces, const int64_t[::1] offsets,
            const int32_t[::1] next_board, const uint8_t[::1] lines, const uint16_t[::1] placement):
    """Renumber boards so that new board i is old board ``order[i]``.

    Returns ``(offsets, next_board, lines, placement)`` for the new numbering.
    """
    cdef Py_ssize_t n = order.shape[0], i, o, s, t, e, dst = 0
    cdef int p
    cdef int64_t n_moves = next_board.shape[0]
    if offsets.shape[0] != n * n_pieces + 1:
        raise ValueError("relabel: offsets do not match order")
    new_of_old_arr = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] new_of_old = new_of_old_arr
    new_offsets_arr = np.empty(n * n_pieces + 1, dtype=np.int64)
    new_next_arr = np.empty(n_moves, dtype=np.int32)
    new_lines_arr = np.empty(n_moves, dtype=np.uint8)
    new_place_arr = np.empty(n_moves, dtype=np.uint16)
    cdef int64_t[::1] new_offsets = new_offsets_arr
    cdef int32_t[::1] new_next = new_next_arr
    cdef uint8_t[::1] new_lines = new_lines_arr
    cdef uint16_t[::1] new_place = new_place_arr
    with nogil:
        for i in range(n):
            new_of_old[order[i]] = <int32_t>i
        for i in range(n):
            o = order[i]
            for p in range(n_pieces):
                s = o * n_pieces + p
                new_offsets[i * n_pieces + p] = dst
                for e in range(offsets[s], offsets[s + 1]):
                    new_next[dst] = new_of_old[next_board[e]]
                    new_lines[dst] = lines[e]
                    new_place[dst] = placement[e]
                    dst += 1
        new_offsets[n * n_pieces] = dst
    return new_offsets_arr, new_next_arr, new_lines_arr, new_place_arr


# --------------------------------------------------------------------------
# Bellman sweeps over the CSR table (afterstate form).
#
# V[s] for s = board * P + piece; W[b] = sum_p prob[p] V[b * P + p] is the
# value of board b before the next piece is drawn, so one move costs one load.
# --------------------------------------------------------------------------

cdef double greedy_sweep(Py_ssize_t n_boards, int P, const int64_t* offsets, const int32_t* nxt,
                         const uint8_t* lines, const double* scores, const double* probs,
                         double discount, bint reverse, double* V, double* W,
                         int16_t* policy) noexcept nogil:
    """One in-place Bellman optimality sweep; returns the largest |change| of V."""
    cdef Py_ssize_t i, b, s
    cdef int64_t e, lo, hi
    cdef int p
    cdef int16_t arg
    cdef double best, q, w, delta, residual = 0.0
    for i in range(n_boards):
        b = n_boards - 1 - i if reverse else i
        w = 0.0
        for p in range(P):
            s = b * P + p
            lo = offsets[s]
            hi = offsets[s + 1]
            best = 0.0          # no move fits: game over, worth 0
            arg = -1
            if lo < hi:
                best = -INFINITY
                for e in range(lo, hi):
                    q = scores[lines[e]] + discount * W[nxt[e]]
                    if q > best:
                        best = q
                        arg = <int16_t>(e - lo)
            delta = fabs(best - V[s])
            if delta > residual:
                residual = delta
            V[s] = best
            policy[s] = arg
            w += probs[p] * best
        W[b] = w
    return residual


cdef double policy_sweep(Py_ssize_t n_boards, int P, const int64_t* offsets, const int32_t* nxt,
                         const uint8_t* lines, const double* scores, const double* probs,
                         double discount, bint reverse, double* V, double* W,
                         const int16_t* policy) noexcept nogil:
    """One in-place sweep evaluating a fixed policy; returns the largest |change| of V."""
    cdef Py_ssize_t i, b, s
    cdef int64_t e
    cdef int p
    cdef double v, w, delta, residual = 0.0
    for i in range(n_boards):
        b = n_boards - 1 - i if reverse else i
        w = 0.0
        for p in range(P):
            s = b * P + p
            v = 0.0
            if policy[s] >= 0:
                e = offsets[s] + policy[s]
                v = scores[lines[e]] + discount * W[nxt[e]]
            delta = fabs(v - V[s])
            if delta > residual:
                residual = delta
            V[s] = v
            w += probs[p] * v
        W[b] = w
    return residual


def value_iteration(const int64_t[::1] offsets, const int32_t[::1] next_board,
                    const uint8_t[::1] lines, const double[::1] scores, const double[::1] probs,
                    double discount, double tol, int max_iter, int eval_sweeps, bint reverse,
                    double[::1] V, double[::1] W, int16_t[::1] policy, double[::1] residuals):
    """Gauss-Seidel value iteration, optionally modified policy iteration.

    Each iteration is one greedy (Bellman optimality) sweep, followed, while
    not converged, by ``eval_sweeps`` sweeps evaluating the greedy policy.
    Stops once a greedy sweep changes no value by more than ``tol``, or after
    ``max_iter`` greedy sweeps.  ``V``, ``W`` hold the start values and are
    updated in place; ``policy`` receives each state's best move (offset in
    its row, -1 at game over); ``residuals[i]`` the residual of sweep i.

    Returns the number of greedy sweeps run.
    """
    cdef int P = probs.shape[0]
    cdef Py_ssize_t n_boards = W.shape[0]
    cdef int it = 0, j
    cdef double residual
    if offsets.shape[0] != n_boards * P + 1 or V.shape[0] != n_boards * P or policy.shape[0] != V.shape[0]:
        raise ValueError("value_iteration: array shapes do not match")
    if residuals.shape[0] < max_iter:
        raise ValueError("value_iteration: residuals must hold max_iter entries")
    if n_boards == 0:
        return 0
    with nogil:
        while it < max_iter:
            residual = greedy_sweep(n_boards, P, &offsets[0], &next_board[0] if next_board.shape[0] else NULL,
                                    &lines[0] if lines.shape[0] else NULL, &scores[0], &probs[0],
                                    discount, reverse, &V[0], &W[0], &policy[0])
            residuals[it] = residual
            it += 1
            if residual <= tol:
                break
            for j in range(eval_sweeps):
                policy_sweep(n_boards, P, &offsets[0], &next_board[0] if next_board.shape[0] else NULL,
                             &lines[0] if lines.shape[0] else NULL, &scores[0], &probs[0],
                             discount, reverse, &V[0], &W[0], &policy[0])
    return it
