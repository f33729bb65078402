# cython: language_level=3
"""Compiled core of babytris: bitboard placement, line clears, a board hash map,
breadth-first enumeration into a CSR transition table, and Bellman sweeps.

Everything here works on raw integers and numpy buffers; ``babytris`` wraps it
in friendly objects.  The inner loops hold no Python objects and run without
the GIL.
"""

from cython cimport view
from cython.parallel cimport prange, threadid
from libc.math cimport fabs, INFINITY
from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, uint8_t, uint16_t
from libc.stdlib cimport malloc, realloc, free

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


cdef size_t _capacity_for(size_t expected) noexcept nogil:
    cdef size_t cap = 16
    while cap * MAX_LOAD_NUM < expected * MAX_LOAD_DEN:
        cap <<= 1
    return cap


cdef MapSlot* _empty_slots(size_t capacity) noexcept nogil:
    """``capacity`` slots, all empty; NULL if out of memory."""
    cdef size_t i
    cdef MapSlot* slots = <MapSlot*>alloc_table(capacity * sizeof(MapSlot))
    if slots != NULL:
        for i in range(capacity):
            slots[i].value = -1
    return slots


cdef int map_init(BoardMap* m, size_t expected) noexcept nogil:
    m.capacity = _capacity_for(expected)
    m.size = 0
    m.slots = _empty_slots(m.capacity)
    if m.slots == NULL:
        m.capacity = 0
        return -1
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
    bigger.slots = _empty_slots(bigger.capacity)
    if bigger.slots == NULL:
        return -1
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
    if (m.size + 1) * MAX_LOAD_DEN > m.capacity * MAX_LOAD_NUM:
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
        if self.table.capacity == 0 or not 0 <= board < 2**64:
            return default
        cdef index_t i = map_get(&self.table, <board_t>board)
        return default if i < 0 else i

    def __contains__(self, board):
        return self.get(board) >= 0

    def lookup(self, const uint64_t[::1] boards):
        """Indices of many boards as an int64 array; -1 where a board is absent."""
        cdef Py_ssize_t i, n = boards.shape[0]
        out = np.full(n, -1, dtype=np.int64)
        cdef int64_t[::1] res = out
        if self.table.capacity == 0:
            return out
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

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define BABYTRIS_PREFETCH(p) __builtin_prefetch((const void*)(p))
    #else
    #define BABYTRIS_PREFETCH(p) ((void)0)
    #endif
    """
    void prefetch "BABYTRIS_PREFETCH"(const void* p) noexcept nogil

cdef enum:
    # Boards whose moves are generated before their map lookups start: enough
    # lookups in flight to hide memory latency.
    BATCH = 32
    MOVE_BYTES = 4 + 1 + 2      # next board, rows cleared, placement number


cdef inline board_t remove_row(board_t b, int row, int width) noexcept nogil:
    """Delete row ``row`` and shift the rows above it down by one."""
    cdef int lo_bits = row * width
    cdef int hi_bits = lo_bits + width
    cdef board_t low = b & ((ONE << lo_bits) - 1)
    cdef board_t high = 0
    if hi_bits < 64:
        high = (b >> hi_bits) << lo_bits
    return low | high


cdef inline board_t smear_down(board_t b, int width, int height) noexcept nogil:
    """Every cell at or below a filled cell of its column: where a piece
    falling from above cannot be, as it would have passed through a filled cell."""
    cdef int shift = width
    while shift < width * height:
        b |= b >> shift
        shift <<= 1
    return b


cdef inline board_t canonical(const Geometry* g, board_t b) noexcept nogil:
    """The lesser of ``b`` and its mirror image (row patterns reflected by table)."""
    cdef board_t image = 0
    cdef int r, w = g.width
    for r in range(g.height):
        image |= (<board_t>g.mirror_row[(b >> (r * w)) & g.full_row]) << (r * w)
    return image if image < b else b


cdef inline bint topped_out(const Geometry* g, board_t b) noexcept nogil:
    """Whether ``b`` has a filled cell in the top row."""
    return (b >> ((g.height - 1) * g.width)) != 0


cdef inline bint drop(const Geometry* g, board_t board, board_t smeared, int k,
                      board_t* after, int* lines) noexcept nogil:
    """Hard-drop placement k on ``board``, given ``smeared = smear_down(board)``.

    The piece falls from above the board, so it cannot pass under an
    overhang.  False if it comes to rest with a cell above the top row (or,
    with ``clears_only``, clears no row); otherwise writes the board after
    line clears and the rows cleared.  With ``no_holes`` the empty cells
    under the piece are filled before rows are cleared.  With ``top_out``
    a placement that would rest above the top row, or leaves a cell in the
    top row after its clears, is a move to ``g.lost`` clearing no row, and
    a board with a cell in the top row (the lost board) has no move.
    """
    cdef board_t m = g.mask[k]
    cdef int w = g.width
    cdef int y = g.height - g.rows[k]   # highest position wholly on the board
    cdef int r, n = 0, lowest
    cdef board_t b, full
    if g.top_out and topped_out(g, board):
        return False
    if (m << (y * w)) & smeared:
        if g.top_out:
            after[0] = g.lost
            lines[0] = 0
            return True
        return False
    while y > 0 and not ((m << ((y - 1) * w)) & smeared):
        y -= 1
    b = board | (m << (y * w))
    lowest = y
    if g.no_holes:
        # Filling under the piece can complete rows below it too.
        b = smear_down(b, w, g.height)
        lowest = 0
    # Top row first, so the rows still to check keep their numbers.
    for r in range(y + g.rows[k] - 1, lowest - 1, -1):
        full = g.full_row << (r * w)
        if (b & full) == full:
            b = remove_row(b, r, w)
            n += 1
    if n == 0 and g.clears_only:
        return False
    if g.top_out and topped_out(g, b):
        after[0] = g.lost
        lines[0] = 0
        return True
    if g.mirror_row != NULL:
        b = canonical(g, b)
    after[0] = b
    lines[0] = n
    return True


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


# Boards of up to this many cells may be indexed by a bitmap over every
# possible board (at 30 cells: 128 MiB of bits and 64 MiB of ranks, one per
# 64-bit word) instead of the hash map: a set bit is a reachable board, its
# index the number of set bits before it.  No hashing, no sort, and the bitmap
# of a 4x6 board (2 MiB) stays in cache.
BITMAP_MAX_CELLS = 30


cdef struct Index:
    # Board -> its number: the map, or (if bits) the bitmap.
    const BoardMap* table
    const uint64_t* bits
    const int32_t* rank        # set bits before each word
    const int32_t* perm        # if not NULL, a board's number from its rank in the bitmap


cdef inline index_t index_of(const Index* ix, board_t key) noexcept nogil:
    cdef size_t w
    cdef index_t i
    if ix.bits != NULL:
        w = <size_t>(key >> 6)
        i = ix.rank[w] + popcount(ix.bits[w] & ((ONE << (key & 63)) - 1))
        return ix.perm[i] if ix.perm != NULL else i
    return map_get(ix.table, key)


def _layered(sorted_boards, const int64_t[::1] layer_of_residue):
    """``(boards, layer_starts, new_index)``: ascending ``sorted_boards``
    grouped by layer (stable), and each board's new number (int32; None if
    there is one layer and nothing moves)."""
    cdef const board_t[::1] b = sorted_boards
    cdef Py_ssize_t n = b.shape[0], i
    cdef int m = 1 if layer_of_residue is None else layer_of_residue.shape[0], n_layers = 1, layer
    cdef int64_t fill[65]
    if m < 1:
        raise ValueError("layer_of_residue must not be empty")
    if layer_of_residue is not None:
        for i in range(m):
            if not 0 <= layer_of_residue[i] < 64:
                raise ValueError("layer_of_residue: layers must be in [0, 64)")
            n_layers = max(n_layers, <int>layer_of_residue[i] + 1)
    layer_starts = np.zeros(n_layers + 1, dtype=np.int64)
    cdef int64_t[::1] starts = layer_starts
    if n_layers == 1:
        starts[1] = n
        return sorted_boards, layer_starts, None
    layer_of = np.empty(n, dtype=np.uint8)
    cdef uint8_t[::1] lay = layer_of
    with nogil:
        for i in range(n):
            lay[i] = <uint8_t>layer_of_residue[popcount(b[i]) % m]
            starts[lay[i] + 1] += 1
        for layer in range(n_layers):
            starts[layer + 1] += starts[layer]
            fill[layer] = starts[layer]
    out = np.empty(n, dtype=np.uint64)
    new_index = np.empty(n, dtype=np.int32)
    cdef board_t[::1] o = out
    cdef int32_t[::1] to_new = new_index
    with nogil:
        for i in range(n):
            to_new[i] = <int32_t>fill[lay[i]]
            o[fill[lay[i]]] = b[i]
            fill[lay[i]] += 1
    return out, layer_starts, new_index


cdef inline const void* slot_of(const Index* ix, board_t key) noexcept nogil:
    """Where ``index_of`` will look first (to prefetch it)."""
    if ix.bits != NULL:
        return &ix.bits[key >> 6]
    return &ix.table.slots[mix64(key) & (ix.table.capacity - 1)]


cdef class Engine:
    """Placement tables for one rule set (built by ``babytris.states``)."""

    cdef Geometry geo
    cdef readonly object masks, rows, first, mirror_rows
    cdef const uint16_t[::1] mr

    def __init__(self, int width, int height, masks, rows, first, *, bint clears_only=False, mirror_rows=None,
                 bint no_holes=False, bint top_out=False):
        if width < 1 or height < 1 or width * height > 64:
            raise ValueError(f"width * height must be in [1, 64], got {width} * {height}")
        self.masks = np.ascontiguousarray(masks, dtype=np.uint64)
        self.rows = np.ascontiguousarray(rows, dtype=np.uint8)
        self.first = np.ascontiguousarray(first, dtype=np.int32)
        cdef const board_t[::1] m = self.masks
        cdef const uint8_t[::1] r = self.rows
        cdef const int32_t[::1] f = self.first
        cdef Py_ssize_t k
        if m.shape[0] != r.shape[0] or f.shape[0] < 2 or f[f.shape[0] - 1] != m.shape[0]:
            raise ValueError("Engine: inconsistent placement tables")
        for k in range(m.shape[0]):
            if not 1 <= r[k] <= height or (r[k] * width < 64 and (m[k] >> (r[k] * width)) != 0):
                raise ValueError(f"Engine: placement {k} does not fit a {width}x{height} board")
        self.geo.width = width
        self.geo.height = height
        self.geo.n_pieces = f.shape[0] - 1
        self.geo.full_row = (ONE << width) - 1 if width < 64 else ~(<board_t>0)
        self.geo.mask = &m[0] if m.shape[0] else NULL
        self.geo.rows = &r[0] if r.shape[0] else NULL
        self.geo.first = &f[0]
        self.geo.clears_only = clears_only
        if top_out and clears_only:
            raise ValueError("Engine: top_out and clears_only cannot be combined")
        self.geo.no_holes = no_holes
        self.geo.top_out = top_out
        self.geo.lost = self.geo.full_row << ((height - 1) * width)
        self.geo.mirror_row = NULL
        if mirror_rows is not None:
            if width > 16:
                raise ValueError(f"mirror_rows: boards up to 16 wide, got {width}")
            self.mirror_rows = np.ascontiguousarray(mirror_rows, dtype=np.uint16)
            if self.mirror_rows.shape != (1 << width,):
                raise ValueError(f"mirror_rows must have 2**width = {1 << width} entries")
            self.mr = self.mirror_rows
            self.geo.mirror_row = &self.mr[0]

    @property
    def n_pieces(self):
        return self.geo.n_pieces

    def successors(self, board, int piece):
        """Legal moves of ``piece`` on ``board`` as ``[(placement, next_board, lines), ...]``."""
        if not 0 <= piece < self.geo.n_pieces:
            raise ValueError(f"piece must be in [0, {self.geo.n_pieces - 1}], got {piece}")
        cells = self.geo.width * self.geo.height
        if isinstance(board, bool) or not isinstance(board, (int, np.integer)) or not 0 <= board < 2**cells:
            raise ValueError(f"board must be an integer in [0, 2**{cells}), got {board!r}")
        cdef board_t b = board
        cdef board_t sm = smear_down(b, self.geo.width, self.geo.height)
        cdef board_t nb
        cdef int k, lines
        out = []
        for k in range(self.geo.first[piece], self.geo.first[piece + 1]):
            if drop(&self.geo, b, sm, k, &nb, &lines):
                out.append((k - self.geo.first[piece], nb, lines))
        return out

    def enumerate(self, uint64_t start, size_t max_bytes, size_t bytes_per_board_after, int n_threads=1,
                  Py_ssize_t min_boards_per_thread=0, int bitmap_max_cells=BITMAP_MAX_CELLS,
                  const int64_t[::1] layer_of_residue=None, int64_t[::1] progress=None):
        """Every board reachable from ``start`` and the move table, boards
        numbered by layer, then in ascending order.

        ``progress`` (int64, length 2), if given, receives the boards found and
        the boards expanded so far while the search runs, for another thread to read.

        A board with c filled cells is in layer ``layer_of_residue[c % m]``
        (m its length; default: every board in layer 0).
        Returns ``(status, boards, layer_starts, offsets, next_board, lines,
        placement)``: ``boards`` (uint64), layer ``i`` being
        ``boards[layer_starts[i]:layer_starts[i + 1]]`` (int64), sorted
        ascending within it; ``offsets`` (int64,
        ``n_boards * n_pieces + 1``) delimit the moves of state
        ``board * n_pieces + piece``; per move the next board's index (int32),
        rows cleared (uint8) and placement number within the piece (uint16).
        ``status`` is 0, or on failure ``(code, n_boards_so_far, bytes)`` and
        the arrays are None.  The layers cost 13 bytes per board more while
        the table is built.  Everything held, plus ``bytes_per_board_after``
        per board (what the caller allocates next), stays under ``max_bytes``.

        Three passes: a breadth-first search that finds the boards and counts
        their moves (marking them in a bitmap if the board has at most
        ``bitmap_max_cells`` cells, else in a hash map, then sorting); a count
        of each state's moves; then the moves, written in sorted order by up
        to ``n_threads`` threads, each with at least ``min_boards_per_thread``
        boards.  The result depends on none of these settings.
        """
        cdef Geometry* g = &self.geo
        cdef int P = g.n_pieces
        cdef int cells = g.width * g.height
        cdef BoardMap table
        cdef Index ix
        cdef Vec boards
        cdef size_t n_moves = 0, peak = 0
        cdef int status
        cdef int64_t[::1] offsets_view
        cdef const board_t[::1] sorted_view
        cdef uint64_t[::1] bits_view
        cdef int32_t[::1] rank_view
        cdef int32_t[::1] next_view
        cdef uint8_t[::1] lines_view
        cdef uint16_t[::1] placement_view
        cdef size_t n_words = 0, i
        cdef const int32_t[::1] perm_view
        cdef int64_t* seen = NULL
        if progress is not None:
            if progress.shape[0] < 2:
                raise ValueError(f"progress must have 2 entries, got {progress.shape[0]}")
            seen = &progress[0]
        table.slots = NULL
        ix.table = &table
        ix.bits = NULL
        ix.rank = NULL
        ix.perm = NULL
        if n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        if cells < 64 and start >> cells:
            raise ValueError(f"start must be a board in [0, 2**{cells}), got {start}")
        vec_init(&boards, sizeof(board_t))
        if cells <= min(bitmap_max_cells, BITMAP_MAX_CELLS):
            # The bitmap costs 12 bytes per 64 possible boards, reachable or
            # not: above 24 cells (24 MiB), only if that is an eighth of the
            # budget at most; a thin board with few reachable ones gets the map.
            n_words = ((<size_t>1 << cells) + 63) // 64
            if cells > 24 and 8 * n_words * (sizeof(uint64_t) + sizeof(int32_t)) > max_bytes:
                n_words = 0
        if n_words:
            bits = np.zeros(n_words, dtype=np.uint64)
            bits_view = bits
        try:
            with nogil:
                if n_words:
                    status = discover_bitmap(g, start, &bits_view[0], n_words, &boards, &n_moves, max_bytes,
                                             bytes_per_board_after, &peak, seen)
                else:
                    status = discover(g, start, &table, &boards, &n_moves, max_bytes, bytes_per_board_after,
                                      &peak, seen)
            if status != OK:
                n = boards.size
                vec_free(&boards)
                return (status, n, peak), None, None, None, None, None, None
            if n_words:
                # The bitmap lists the boards in order: write them over the
                # search queue, which holds as many.
                rank = np.empty(n_words, dtype=np.int32)
                rank_view = rank
                with nogil:
                    bitmap_boards(&bits_view[0], n_words, &rank_view[0], <board_t*>boards.data)
                sorted_boards = vec_to_numpy(&boards, "Q", np.uint64)
                ix.bits = &bits_view[0]
                ix.rank = &rank_view[0]
            else:
                sorted_boards = np.sort(vec_to_numpy(&boards, "Q", np.uint64), kind="quicksort")
                sorted_view = sorted_boards
                with nogil:
                    renumber(&table, sorted_view)
            sorted_boards, layer_starts, new_index = _layered(sorted_boards, layer_of_residue)
            if new_index is not None:
                perm_view = new_index
                if n_words:
                    ix.perm = &perm_view[0]
                else:
                    with nogil:
                        for i in range(table.capacity):
                            if table.slots[i].value >= 0:
                                table.slots[i].value = perm_view[table.slots[i].value]
            if min_boards_per_thread > 0:
                n_threads = max(1, min(n_threads, sorted_boards.shape[0] // min_boards_per_thread))
            offsets = np.zeros(sorted_boards.shape[0] * P + 1, dtype=np.int64)
            offsets_view = offsets
            sorted_view = sorted_boards
            with nogil:
                count_moves(g, sorted_view, offsets_view[1:], n_threads)
            np.cumsum(offsets, out=offsets)
            if offsets[-1] != n_moves:
                raise AssertionError("enumeration: move counts disagree between passes")
            next_board = np.empty(n_moves, dtype=np.int32)
            lines = np.empty(n_moves, dtype=np.uint8)
            placement = np.empty(n_moves, dtype=np.uint16)
            next_view = next_board
            lines_view = lines
            placement_view = placement
            with nogil:
                status = fill_moves(g, &ix, sorted_view, offsets_view, next_view, lines_view, placement_view,
                                    n_threads)
            if status != OK:
                raise MemoryError("enumeration: cannot allocate the threads' buffers")
        finally:
            map_free(&table)
            vec_free(&boards)       # emptied already unless an error came first
        return OK, sorted_boards, layer_starts, offsets, next_board, lines, placement


cdef void bitmap_boards(const uint64_t* bits, size_t n_words, int32_t* rank, board_t* boards) noexcept nogil:
    """The set bits of ``bits`` in order into ``boards``; the count before each word into ``rank``."""
    cdef size_t w, n = 0
    cdef uint64_t word
    cdef int bit
    for w in range(n_words):
        rank[w] = <int32_t>n
        word = bits[w]
        while word:
            bit = lowest_bit(word)
            boards[n] = (<board_t>w << 6) | <board_t>bit
            n += 1
            word &= word - 1


cdef int discover_bitmap(const Geometry* g, board_t start, uint64_t* bits, size_t n_words, Vec* boards,
                         size_t* n_moves, size_t max_bytes, size_t bytes_per_board_after,
                         size_t* peak, int64_t* seen) noexcept nogil:
    """Pass 1 for small boards: breadth-first search marking boards in ``bits``
    (``seen``, if not NULL: boards found and expanded so far, for a progress bar)."""
    cdef int P = g.n_pieces
    cdef size_t head = 0, moves = 0, fixed = n_words * (sizeof(uint64_t) + sizeof(int32_t))
    cdef int k, lines
    cdef board_t b, nb, sm
    cdef uint64_t bit
    if vec_reserve(boards, 1024) != 0:
        return OUT_OF_MEMORY
    (<board_t*>boards.data)[0] = start
    boards.size = 1
    bits[start >> 6] |= ONE << (start & 63)
    while head < boards.size:
        b = (<board_t*>boards.data)[head]
        sm = smear_down(b, g.width, g.height)
        for k in range(g.first[P]):
            if not drop(g, b, sm, k, &nb, &lines):
                continue
            moves += 1
            bit = ONE << (nb & 63)
            if bits[nb >> 6] & bit:
                continue
            bits[nb >> 6] |= bit
            if vec_reserve(boards, boards.size + 1) != 0:
                return OUT_OF_MEMORY
            (<board_t*>boards.data)[boards.size] = nb
            boards.size += 1
        head += 1
        if head % 4096 == 0 or head == boards.size:
            if seen != NULL:
                seen[0] = <int64_t>boards.size
                seen[1] = <int64_t>head
            peak[0] = (fixed + boards.capacity * sizeof(board_t)
                       + boards.size * (sizeof(board_t) + sizeof(int64_t) * P + bytes_per_board_after)
                       + moves * MOVE_BYTES)
            if peak[0] > max_bytes:
                n_moves[0] = moves
                return OVER_BUDGET
    n_moves[0] = moves
    return OK


cdef int discover(const Geometry* g, board_t start, BoardMap* table, Vec* boards,
                  size_t* n_moves, size_t max_bytes, size_t bytes_per_board_after,
                  size_t* peak, int64_t* seen) noexcept nogil:
    """Pass 1: breadth-first search.  Fills ``table`` (board -> discovery
    number) and ``boards`` (discovery order), counts the moves; returns a status
    (``seen``, if not NULL: boards found and expanded so far, for a progress bar)."""
    cdef int P = g.n_pieces
    cdef size_t n_place = <size_t>g.first[P]
    cdef size_t head = 0, hi, bi, n_buf, e, moves = 0, n_states, held, later
    cdef int p, k, lines, status = OK
    cdef board_t b, nb, sm
    cdef index_t j
    cdef board_t* buf = <board_t*>malloc(BATCH * n_place * sizeof(board_t) + 8)
    if buf == NULL or map_init(table, 1024) != 0 or vec_reserve(boards, 1024) != 0:
        free(buf)
        return OUT_OF_MEMORY
    (<board_t*>boards.data)[0] = start
    boards.size = 1
    map_get_or_insert(table, start, 0)
    while head < boards.size:
        hi = head + BATCH
        if hi > boards.size:
            hi = boards.size
        # Every move of the batch first, prefetching its map slot; then the
        # lookups, in the order one board at a time would make them.
        n_buf = 0
        for bi in range(head, hi):
            b = (<board_t*>boards.data)[bi]
            sm = smear_down(b, g.width, g.height)
            for k in range(g.first[P]):
                if drop(g, b, sm, k, &nb, &lines):
                    buf[n_buf] = nb
                    prefetch(&table.slots[mix64(nb) & (table.capacity - 1)])
                    n_buf += 1
        for e in range(n_buf):
            j = map_get_or_insert(table, buf[e], <index_t>boards.size)
            if j == -2:
                status = OUT_OF_MEMORY
                break
            if j == <index_t>boards.size:
                if boards.size >= 2147483646:
                    status = TOO_MANY_BOARDS
                    break
                if vec_reserve(boards, boards.size + 1) != 0:
                    status = OUT_OF_MEMORY
                    break
                (<board_t*>boards.data)[boards.size] = buf[e]
                boards.size += 1
        moves += n_buf
        head = hi
        if seen != NULL:
            seen[0] = <int64_t>boards.size
            seen[1] = <int64_t>head
        if status != OK:
            break
        # Budget: what is held now (with the map's next doubling), or what
        # will be held once the table is built, whichever is more.
        n_states = boards.size * P
        held = boards.capacity * sizeof(board_t) + 3 * table.capacity * sizeof(MapSlot)
        later = (boards.size * (sizeof(board_t) + bytes_per_board_after) + n_states * sizeof(int64_t)
                 + moves * MOVE_BYTES + table.capacity * sizeof(MapSlot))
        peak[0] = held if held > later else later
        if peak[0] > max_bytes:
            status = OVER_BUDGET
            break
    free(buf)
    n_moves[0] = moves
    return status


cdef void renumber(BoardMap* table, const board_t[::1] boards) noexcept nogil:
    """Pass 2: point the map at each board's position in sorted order."""
    cdef Py_ssize_t i, n = boards.shape[0]
    for i in range(n):
        if i + 16 < n:
            prefetch(&table.slots[mix64(boards[i + 16]) & (table.capacity - 1)])
        table.slots[_probe(table, boards[i])].value = <index_t>i


cdef void count_moves(const Geometry* g, const board_t[::1] boards, int64_t[::1] counts,
                      int n_threads) noexcept nogil:
    """``counts[i * P + p]``: legal moves of piece p on ``boards[i]``."""
    cdef Py_ssize_t i
    cdef int p, k, lines
    cdef int64_t c
    cdef board_t sm, nb
    for i in prange(boards.shape[0], num_threads=n_threads, schedule="static"):
        nb = 0          # assigned here so that each thread has its own
        lines = 0
        sm = smear_down(boards[i], g.width, g.height)
        for p in range(g.n_pieces):
            c = 0
            if g.top_out:
                # Every placement is a move, but none from the lost board.
                if not topped_out(g, boards[i]):
                    c = g.first[p + 1] - g.first[p]
            else:
                for k in range(g.first[p], g.first[p + 1]):
                    if g.clears_only:
                        if drop(g, boards[i], sm, k, &nb, &lines):
                            c = c + 1
                    elif not ((g.mask[k] << ((g.height - g.rows[k]) * g.width)) & sm):
                        c = c + 1
            counts[i * g.n_pieces + p] = c


cdef int fill_moves(const Geometry* g, const Index* ix, const board_t[::1] boards,
                    const int64_t[::1] offsets, int32_t[::1] next_board, uint8_t[::1] lines,
                    uint16_t[::1] placement, int n_threads) noexcept nogil:
    """Pass 3: every move of every board, at its row; threads share the boards.

    Returns -1 if the threads' buffers cannot be allocated."""
    cdef Py_ssize_t n = boards.shape[0], chunk, lo, hi, i
    cdef Py_ssize_t n_chunks = (n + BATCH - 1) // BATCH
    cdef size_t per_thread = BATCH * <size_t>g.first[g.n_pieces]
    cdef int P = g.n_pieces, p, k, n_lines
    cdef int64_t e, e0
    cdef board_t b, sm, nb
    cdef board_t* keys
    cdef board_t* all_keys = <board_t*>malloc(n_threads * per_thread * sizeof(board_t) + 8)
    if all_keys == NULL:
        return -1
    for chunk in prange(n_chunks, num_threads=n_threads, schedule="dynamic", chunksize=16):
        keys = all_keys + threadid() * per_thread
        nb = 0          # assigned here so that each thread has its own
        n_lines = 0
        lo = chunk * BATCH
        hi = lo + BATCH
        if hi > n:
            hi = n
        # The chunk's moves first, prefetching the map slot of each next
        # board; then the lookups.
        e0 = offsets[lo * P]
        e = e0
        for i in range(lo, hi):
            b = boards[i]
            sm = smear_down(b, g.width, g.height)
            for p in range(P):
                for k in range(g.first[p], g.first[p + 1]):
                    if drop(g, b, sm, k, &nb, &n_lines):
                        keys[e - e0] = nb
                        lines[e] = <uint8_t>n_lines
                        placement[e] = <uint16_t>(k - g.first[p])
                        prefetch(slot_of(ix, nb))
                        e += 1
        for e in range(e0, offsets[hi * P]):
            next_board[e] = index_of(ix, keys[e - e0])
    free(all_keys)
    return 0


# --------------------------------------------------------------------------
# Bellman sweeps over the CSR table (afterstate form).
#
# V[s] for s = board * P + piece is the value of placing that piece on that
# board; W[b] combines V over the pieces (their mean weighted by the
# probabilities, or the choice of an opponent) and is the value of board b
# before the next piece comes, so one move costs one load.
#
# Sweeps update in place (Gauss-Seidel) in ``order``, a list of the boards that
# have a move, cut into layers.  The order is what makes a sweep worth several
# Jacobi ones: a move should lead to a board updated earlier in the sweep.
# With every piece of k cells on a board w wide, a placement takes the cell
# count c to c + k - w * lines, so c mod w steps by k: layering the boards by
# c mod w and visiting the layers against that step makes every move but
# those out of the first layer read a value of this sweep, and within a layer
# no board reads another, so threads share a layer and the result does not
# depend on how many there are.  Otherwise (one layer) the boards go from the
# largest number down: a move without a line clear leads to a superset, a
# larger number, already updated; such a sweep runs on one thread.
# --------------------------------------------------------------------------

cdef enum:
    # How a board's value combines its pieces' (who gives the next piece).
    PIECES_RANDOM = 0          # drawn: the mean weighted by the probabilities
    PIECES_WORST = 1           # an opponent gives the piece with the least value
    PIECES_BEST = 2            # an opponent gives the piece with the most value
    PIECES_FIXED = 3           # a given piece per board

cdef enum:
    # How a state's value combines its moves' (how the player places).
    MOVES_BEST = 0             # the best move
    MOVES_MEAN = 1             # uniformly at random: the mean
    MOVES_FIXED = 2            # a given move per state

cdef enum:
    # Live boards per block of a layer swept by several threads.
    BLOCK = 1024
    # Sweeps prefetch the values a board this many boards ahead will read.
    AHEAD = 6


cdef struct Sweep:
    int P
    const int64_t* offsets
    const int32_t* nxt
    const uint8_t* lines
    const double* scores       # points per rows cleared
    const double* move_reward  # if not NULL, each move's reward (instead of scores[lines])
    const double* probs
    double discount
    double dead                # the value of a state with no move (game over)
    int pieces                 # PIECES_*
    int moves                  # MOVES_*
    const int16_t* piece_choice    # PIECES_FIXED: the piece given on each board
    const int16_t* fixed_move      # MOVES_FIXED: each state's move (offset in its row, -1: none)
    const int32_t* order       # live boards in the order swept
    bint independent_layers    # no board leads to one of its own layer: threads may share a layer
    double* V
    double* W
    double* V_prev             # if not NULL, receives V as it was (for extrapolation)
    double* W_prev
    int16_t* policy            # each state's chosen move (offset in its row), -1 where none
    int32_t* chosen_next       # per state, the chosen move in compact form
    uint8_t* chosen_lines      # (evaluation sweeps read only these: no row lookups)
    double* chosen_reward      # (instead of chosen_lines, with move_reward)


cdef inline double combine_pieces(const Sweep* sw, int32_t b, const double* v) noexcept nogil:
    """A board's value from its states' values ``v[0:P]``."""
    cdef int p
    cdef double w
    if sw.pieces == PIECES_RANDOM:
        w = 0.0
        for p in range(sw.P):
            w += sw.probs[p] * v[p]
        return w
    if sw.pieces == PIECES_FIXED:
        return v[sw.piece_choice[b]]
    w = v[0]
    for p in range(1, sw.P):
        if (v[p] < w) if sw.pieces == PIECES_WORST else (v[p] > w):
            w = v[p]
    return w


cdef inline double store_board(const Sweep* sw, int32_t b, double w, double residual) noexcept nogil:
    """Write board b's new value; returns the residual grown by its change
    (a NaN change, from inf - inf, must not pass as converged)."""
    cdef double delta = fabs(w - sw.W[b])
    if delta > residual or delta != delta:
        residual = delta
    if sw.W_prev != NULL:
        sw.W_prev[b] = sw.W[b]
    sw.W[b] = w
    return residual


cdef double greedy_range_drawn(const Sweep* sw, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """:func:`greedy_range` for the common game: the best move, pieces drawn,
    points by rows cleared; one accumulation per state, no branches but the
    loop's."""
    # Locals, not sw.*: the C compiler cannot tell that the stores into V, W
    # and the policy leave *sw alone, and would reload every field per move.
    cdef const int64_t* offsets = sw.offsets
    cdef const int32_t* nxt = sw.nxt
    cdef const uint8_t* lines = sw.lines
    cdef const double* scores = sw.scores
    cdef const double* probs = sw.probs
    cdef const int32_t* order = sw.order
    cdef double* W = sw.W
    cdef double* V = sw.V
    cdef double* V_prev = sw.V_prev
    cdef double* W_prev = sw.W_prev
    cdef int16_t* policy = sw.policy
    cdef int32_t* chosen_next = sw.chosen_next
    cdef uint8_t* chosen_lines = sw.chosen_lines
    cdef double discount = sw.discount, dead = sw.dead
    cdef int P = sw.P
    cdef Py_ssize_t i, s
    cdef int64_t e, lo, hi
    cdef int p
    cdef int16_t arg
    cdef int32_t b
    cdef double best, q, w, delta, residual = 0.0
    cdef bint better
    for i in range(first, last):
        b = order[i]
        if i + AHEAD < last:
            # Start the random loads of a board a few steps ahead.
            s = <Py_ssize_t>order[i + AHEAD] * P
            for e in range(offsets[s], offsets[s + P]):
                prefetch(&W[nxt[e]])
        w = 0.0
        for p in range(P):
            s = <Py_ssize_t>b * P + p
            lo = offsets[s]
            hi = offsets[s + 1]
            best = dead         # no move fits: game over
            arg = -1
            if lo < hi:
                best = scores[lines[lo]] + discount * W[nxt[lo]]
                arg = 0
                for e in range(lo + 1, hi):
                    q = scores[lines[e]] + discount * W[nxt[e]]
                    # Branch-free max: a mispredicted branch would stall the loads in flight.
                    better = q > best
                    best = q if better else best
                    arg = <int16_t>(e - lo) if better else arg
                chosen_next[s] = nxt[lo + arg]
                chosen_lines[s] = lines[lo + arg]
            else:
                chosen_next[s] = -1
            policy[s] = arg
            delta = fabs(best - V[s])
            if delta > residual or delta != delta:   # a NaN (inf - inf) must not pass as converged
                residual = delta
            if V_prev != NULL:
                V_prev[s] = V[s]
            V[s] = best
            w += probs[p] * best
        delta = fabs(w - W[b])
        if delta > residual or delta != delta:
            residual = delta
        if W_prev != NULL:
            W_prev[b] = W[b]
        W[b] = w
    return residual


cdef double greedy_range(const Sweep* sw, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """Bellman backups of the states of boards ``order[first:last]``,
    recording each state's move; returns the largest |change| of V or W."""
    # Locals, not sw.*: the C compiler cannot tell that the stores into V, W
    # and the policy leave *sw alone, and would reload every field per move.
    cdef const int64_t* offsets = sw.offsets
    cdef const int32_t* nxt = sw.nxt
    cdef const uint8_t* lines = sw.lines
    cdef const double* scores = sw.scores
    cdef const double* move_reward = sw.move_reward
    cdef const int32_t* order = sw.order
    cdef const double* W = sw.W
    cdef double* V = sw.V
    cdef double* V_prev = sw.V_prev
    cdef int16_t* policy = sw.policy
    cdef double discount = sw.discount
    cdef int moves = sw.moves, P = sw.P
    cdef Py_ssize_t i, s
    cdef int64_t e, lo, hi
    cdef int p
    cdef int16_t arg
    cdef int32_t b
    cdef double best, q, delta, residual = 0.0
    cdef bint better
    cdef double v[64]          # a board's state values (P <= 64)
    for i in range(first, last):
        b = order[i]
        if i + AHEAD < last:
            # Start the random loads of a board a few steps ahead.
            s = <Py_ssize_t>order[i + AHEAD] * P
            for e in range(offsets[s], offsets[s + P]):
                prefetch(&W[nxt[e]])
        for p in range(P):
            s = <Py_ssize_t>b * P + p
            lo = offsets[s]
            hi = offsets[s + 1]
            best = 0.0
            arg = -1
            if lo == hi:
                best = sw.dead  # no move fits: game over
            elif moves == MOVES_BEST and move_reward == NULL:
                best = scores[lines[lo]] + discount * W[nxt[lo]]
                arg = 0
                for e in range(lo + 1, hi):
                    q = scores[lines[e]] + discount * W[nxt[e]]
                    # Branch-free max: a mispredicted branch would stall the loads in flight.
                    better = q > best
                    best = q if better else best
                    arg = <int16_t>(e - lo) if better else arg
            elif moves == MOVES_BEST:
                best = move_reward[lo] + discount * W[nxt[lo]]
                arg = 0
                for e in range(lo + 1, hi):
                    q = move_reward[e] + discount * W[nxt[e]]
                    better = q > best
                    best = q if better else best
                    arg = <int16_t>(e - lo) if better else arg
            elif moves == MOVES_MEAN:
                for e in range(lo, hi):
                    best += (move_reward[e] if move_reward != NULL else scores[lines[e]]) + discount * W[nxt[e]]
                best /= <double>(hi - lo)
            else:
                arg = sw.fixed_move[s]
                e = lo + arg
                best = (move_reward[e] if move_reward != NULL else scores[lines[e]]) + discount * W[nxt[e]]
            policy[s] = arg
            if arg >= 0:
                e = lo + arg
                sw.chosen_next[s] = nxt[e]
                if move_reward != NULL:
                    sw.chosen_reward[s] = move_reward[e]
                else:
                    sw.chosen_lines[s] = lines[e]
            else:
                sw.chosen_next[s] = -1
            delta = fabs(best - V[s])
            if delta > residual or delta != delta:   # a NaN (inf - inf) must not pass as converged
                residual = delta
            if V_prev != NULL:
                V_prev[s] = V[s]
            V[s] = best
            v[p] = best
        # The board value counts too: after an extrapolation (or evaluation
        # sweeps) it need not agree with its states' values, and a sweep that
        # leaves V alone while it moves W has not reached the fixed point.
        residual = store_board(sw, b, combine_pieces(sw, b, v), residual)
    return residual


cdef double evaluation_range(const Sweep* sw, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """Backups of boards ``order[first:last]`` under the moves the last
    greedy sweep chose; returns the largest |change| of W.  Only W is kept: V
    is recomputed by the next greedy sweep, so this pass reads a few bytes per
    state where a greedy sweep reads a row."""
    cdef const int32_t* order = sw.order
    cdef const int32_t* chosen_next = sw.chosen_next
    cdef const uint8_t* chosen_lines = sw.chosen_lines
    cdef const double* chosen_reward = sw.chosen_reward
    cdef const double* scores = sw.scores
    cdef const double* W = sw.W
    cdef double discount = sw.discount
    cdef bint custom = sw.move_reward != NULL
    cdef int P = sw.P
    cdef Py_ssize_t i, s
    cdef int p
    cdef int32_t b, j
    cdef double residual = 0.0
    cdef double v[64]
    cdef const double* probs = sw.probs
    cdef double w
    cdef bint drawn = sw.pieces == PIECES_RANDOM and not custom
    for i in range(first, last):
        b = order[i]
        s = <Py_ssize_t>b * P
        if drawn:
            # The common case, kept to one accumulation per state.
            w = 0.0
            for p in range(P):
                j = chosen_next[s + p]
                if j >= 0:
                    w += probs[p] * (scores[chosen_lines[s + p]] + discount * W[j])
                else:
                    w += probs[p] * sw.dead
        else:
            for p in range(P):
                j = chosen_next[s + p]
                v[p] = sw.dead
                if j >= 0:
                    v[p] = (chosen_reward[s + p] if custom else scores[chosen_lines[s + p]]) + discount * W[j]
            w = combine_pieces(sw, b, v)
        residual = store_board(sw, b, w, residual)
    return residual


cdef double sweep_layers(const Sweep* sw, bint greedy, const int64_t* layer_starts, Py_ssize_t n_layers,
                         int n_threads, double* block_residual) noexcept nogil:
    """One sweep, layer after layer; a layer's blocks are shared by
    ``n_threads`` threads (``block_residual``: scratch, one per block)."""
    cdef Py_ssize_t layer, k, first, last, n_blocks
    cdef double residual = 0.0, r
    cdef bint drawn = sw.pieces == PIECES_RANDOM and sw.moves == MOVES_BEST and sw.move_reward == NULL
    for layer in range(n_layers):
        first = layer_starts[layer]
        n_blocks = (layer_starts[layer + 1] - first + BLOCK - 1) // BLOCK
        if sw.independent_layers and n_threads > 1 and n_blocks > 1:
            for k in prange(n_blocks, num_threads=n_threads, schedule="dynamic"):
                last = first + (k + 1) * BLOCK
                if last > layer_starts[layer + 1]:
                    last = layer_starts[layer + 1]
                if greedy and drawn:
                    block_residual[k] = greedy_range_drawn(sw, first + k * BLOCK, last)
                elif greedy:
                    block_residual[k] = greedy_range(sw, first + k * BLOCK, last)
                else:
                    block_residual[k] = evaluation_range(sw, first + k * BLOCK, last)
        else:
            n_blocks = 1
            last = layer_starts[layer + 1]
            if greedy and drawn:
                block_residual[0] = greedy_range_drawn(sw, first, last)
            elif greedy:
                block_residual[0] = greedy_range(sw, first, last)
            else:
                block_residual[0] = evaluation_range(sw, first, last)
        for k in range(n_blocks):
            r = block_residual[k]
            if r > residual or r != r:
                residual = r
    return residual


def popcounts(const uint64_t[::1] boards):
    """Filled cells of each board (uint8 array)."""
    out = np.empty(boards.shape[0], dtype=np.uint8)
    cdef uint8_t[::1] view = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(boards.shape[0]):
            view[i] = <uint8_t>popcount(boards[i])
    return out


def move_values(const int64_t[::1] offsets, const int32_t[::1] next_board, const uint8_t[::1] lines,
                const double[::1] per_state, const double[::1] per_row, const double[::1] per_lines,
                const uint8_t[::1] final_rows=None, double final_value=0.0):
    """One value per move: ``per_state[s] + per_row[next_board[e]] +
    per_lines[lines[e]]`` for each move e of state s, or ``final_value`` where
    ``final_rows[next_board[e]]`` is set (float64 array; one pass, no
    temporaries: the rewards of tables of 10**8 moves)."""
    cdef Py_ssize_t n_states = offsets.shape[0] - 1, n_moves = next_board.shape[0], s, i
    cdef int64_t e
    if n_states < 0 or per_state.shape[0] != n_states or offsets[n_states] != n_moves or lines.shape[0] != n_moves:
        raise ValueError("move_values: array shapes do not match")
    for e in range(n_moves):
        if not 0 <= next_board[e] < per_row.shape[0] or lines[e] >= per_lines.shape[0]:
            raise ValueError(f"move_values: move {e} leads out of per_row or clears more rows than per_lines covers")
    if final_rows is not None and final_rows.shape[0] != per_row.shape[0]:
        raise ValueError("move_values: final_rows must have one entry per row")
    out = np.empty(n_moves, dtype=np.float64)
    cdef double[::1] o = out
    cdef const uint8_t* final = &final_rows[0] if final_rows is not None and final_rows.shape[0] else NULL
    with nogil:
        for s in range(n_states):
            for e in range(offsets[s], offsets[s + 1]):
                i = next_board[e]
                if final != NULL and final[i]:
                    o[e] = final_value
                else:
                    o[e] = per_state[s] + per_row[i] + per_lines[lines[e]]
    return out


cdef class Sweeper:
    """In-place Bellman sweeps over a CSR move table (afterstate form).

    Holds views of the caller's arrays: ``V`` (float64, ``n_boards * P``),
    ``W`` (float64, ``n_boards``), ``policy`` (int16, ``n_boards * P``: the
    chosen move's offset in its row, -1 where no move fits); each sweep
    updates them in place.  ``order`` (int32) lists the boards with a move in
    the order to sweep them, ``layer_starts`` (int64) cuts it into layers.
    With ``independent_layers`` (no board leads to another of its own layer:
    the caller vouches for it) up to ``n_threads`` threads share each layer;
    otherwise sweeps run on one thread, whatever ``n_threads`` says.

    ``pieces`` says how a board's value combines its states' (0: the mean
    weighted by ``probs``; 1: the least, 2: the most, as an opponent giving
    the piece would; 3: the state of the piece ``piece_choice[board]``);
    ``moves`` how a state's value combines its moves' (0: the best; 1: the
    mean, a player placing at random; 2: the move ``fixed_move[state]``).
    A move's reward is ``scores[lines]``, or ``move_reward[move]`` if given;
    a state with no move is worth ``dead_value`` (the caller gives the
    boards with no move at all that value in ``V`` and ``W``: they are not swept).
    """

    cdef Sweep sw
    cdef Py_ssize_t n_boards
    cdef Py_ssize_t n_layers
    cdef const int64_t* layer_starts
    cdef double* block_residual
    cdef public int n_threads
    cdef object arrays           # keeps every array the pointers point into alive

    def __cinit__(self):
        self.block_residual = NULL

    def __dealloc__(self):
        free(self.block_residual)

    def __init__(self, const int64_t[::1] offsets, const int32_t[::1] next_board,
                 const uint8_t[::1] lines, const double[::1] scores, const double[::1] probs,
                 double discount, double[::1] V, double[::1] W, int16_t[::1] policy,
                 const int32_t[::1] order, const int64_t[::1] layer_starts, *, int pieces=PIECES_RANDOM,
                 int moves=MOVES_BEST, const int16_t[::1] piece_choice=None, const int16_t[::1] fixed_move=None,
                 const double[::1] move_reward=None, bint independent_layers=False, int n_threads=1,
                 double dead_value=0.0):
        cdef int P = probs.shape[0]
        cdef Py_ssize_t n_boards = W.shape[0], n_moves = next_board.shape[0], i, widest = 1
        if not 1 <= P <= 64 or offsets.shape[0] != n_boards * P + 1 or V.shape[0] != n_boards * P:
            raise ValueError("Sweeper: array shapes do not match")
        if policy.shape[0] != V.shape[0] or scores.shape[0] < 1:
            raise ValueError("Sweeper: array shapes do not match")
        if lines.shape[0] != n_moves or offsets[n_boards * P] != n_moves:
            raise ValueError("Sweeper: offsets do not match the moves")
        if layer_starts.shape[0] < 1 or layer_starts[0] != 0 or layer_starts[layer_starts.shape[0] - 1] != order.shape[0]:
            raise ValueError("Sweeper: layer_starts must run from 0 to len(order)")
        for i in range(layer_starts.shape[0] - 1):
            if layer_starts[i + 1] < layer_starts[i]:
                raise ValueError("Sweeper: layer_starts must not decrease")
            widest = max(widest, layer_starts[i + 1] - layer_starts[i])
        for i in range(order.shape[0]):
            if not 0 <= order[i] < n_boards:
                raise ValueError("Sweeper: order holds a board out of range")
        if not PIECES_RANDOM <= pieces <= PIECES_FIXED or not MOVES_BEST <= moves <= MOVES_FIXED:
            raise ValueError(f"Sweeper: unknown pieces={pieces} or moves={moves}")
        if (pieces == PIECES_FIXED) != (piece_choice is not None) or (moves == MOVES_FIXED) != (fixed_move is not None):
            raise ValueError("Sweeper: give piece_choice with pieces=3 and fixed_move with moves=2, and only then")
        if piece_choice is not None:
            if piece_choice.shape[0] != n_boards:
                raise ValueError("Sweeper: piece_choice must have one entry per board")
            for i in range(n_boards):
                if not 0 <= piece_choice[i] < P:
                    raise ValueError(f"Sweeper: piece_choice[{i}] = {piece_choice[i]} is not a piece")
        if fixed_move is not None:
            if fixed_move.shape[0] != n_boards * P:
                raise ValueError("Sweeper: fixed_move must have one entry per state")
            for i in range(n_boards * P):
                if not (-1 if offsets[i] == offsets[i + 1] else 0) <= fixed_move[i] < max(1, offsets[i + 1] - offsets[i]):
                    raise ValueError(f"Sweeper: fixed_move[{i}] = {fixed_move[i]} is not a move of its state")
        if move_reward is not None and move_reward.shape[0] != n_moves:
            raise ValueError("Sweeper: move_reward must have one entry per move")
        if n_threads < 1:
            raise ValueError(f"Sweeper: n_threads must be >= 1, got {n_threads}")
        for i in range(n_moves):
            if lines[i] >= scores.shape[0]:
                raise ValueError("Sweeper: a move clears more rows than scores covers")
        chosen_next = np.full(n_boards * P, -1, dtype=np.int32)
        chosen_lines = np.zeros(n_boards * P if move_reward is None else 0, dtype=np.uint8)
        chosen_reward = np.zeros(n_boards * P if move_reward is not None else 0)
        self.arrays = (offsets, next_board, lines, scores, probs, V, W, policy, order, layer_starts, piece_choice,
                       fixed_move, move_reward, chosen_next, chosen_lines, chosen_reward)
        self.block_residual = <double*>malloc(((widest + BLOCK - 1) // BLOCK + 1) * sizeof(double))
        if self.block_residual == NULL:
            raise MemoryError("Sweeper: cannot allocate")
        self.n_boards = n_boards
        self.n_layers = layer_starts.shape[0] - 1
        self.layer_starts = &layer_starts[0]
        self.n_threads = n_threads
        self.sw.P = P
        self.sw.offsets = &offsets[0]
        self.sw.nxt = &next_board[0] if n_moves else NULL
        self.sw.lines = &lines[0] if n_moves else NULL
        self.sw.scores = &scores[0]
        self.sw.move_reward = &move_reward[0] if move_reward is not None and n_moves else NULL
        self.sw.probs = &probs[0]
        self.sw.discount = discount
        self.sw.dead = dead_value
        self.sw.pieces = pieces
        self.sw.moves = moves
        self.sw.piece_choice = &piece_choice[0] if piece_choice is not None and n_boards else NULL
        self.sw.fixed_move = &fixed_move[0] if fixed_move is not None and n_boards else NULL
        self.sw.order = &order[0] if order.shape[0] else NULL
        self.sw.independent_layers = independent_layers
        self.sw.V = &V[0] if n_boards else NULL
        self.sw.W = &W[0] if n_boards else NULL
        self.sw.V_prev = NULL
        self.sw.W_prev = NULL
        self.sw.policy = &policy[0] if n_boards else NULL
        self.sw.chosen_next = _data_i32(chosen_next)
        self.sw.chosen_lines = _data_u8(chosen_lines)
        self.sw.chosen_reward = _data_f64(chosen_reward)
        if move_reward is not None and n_moves == 0:
            self.sw.move_reward = &scores[0]   # never read, but marks the custom rewards

    @property
    def n_live(self):
        """Boards with at least one move (the others keep their values)."""
        return self.layer_starts[self.n_layers]

    def greedy_sweep(self, double[::1] V_prev=None, double[::1] W_prev=None):
        """One Bellman sweep over every live board, recording each state's
        move; returns the largest |change| of V or W.  ``V_prev``,
        ``W_prev``, if given, receive the values as they were before it."""
        cdef double residual = 0.0
        if (V_prev is None) != (W_prev is None):
            raise ValueError("greedy_sweep: give both V_prev and W_prev, or neither")
        if V_prev is not None:
            if V_prev.shape[0] != self.n_boards * self.sw.P or W_prev.shape[0] != self.n_boards:
                raise ValueError("greedy_sweep: V_prev / W_prev shapes do not match")
            self.sw.V_prev = &V_prev[0] if self.n_boards else NULL
            self.sw.W_prev = &W_prev[0] if self.n_boards else NULL
        with nogil:
            residual = sweep_layers(&self.sw, True, self.layer_starts, self.n_layers, self.n_threads,
                                    self.block_residual)
        self.sw.V_prev = NULL
        self.sw.W_prev = NULL
        return residual

    def evaluation_sweep(self, double[::1] W_prev=None):
        """One sweep evaluating the moves the last greedy sweep chose (before
        any greedy sweep: none, so every board gets the dead value); updates W only and
        returns its largest change.  ``W_prev``, if given, receives W as it was."""
        cdef double residual = 0.0
        if W_prev is not None:
            if W_prev.shape[0] != self.n_boards:
                raise ValueError("evaluation_sweep: W_prev shape does not match")
            self.sw.W_prev = &W_prev[0] if self.n_boards else NULL
        with nogil:
            residual = sweep_layers(&self.sw, False, self.layer_starts, self.n_layers, self.n_threads,
                                    self.block_residual)
        self.sw.W_prev = NULL
        return residual


cdef int32_t* _data_i32(int32_t[::1] a):
    return &a[0] if a.shape[0] else NULL


cdef uint8_t* _data_u8(uint8_t[::1] a):
    return &a[0] if a.shape[0] else NULL


cdef double* _data_f64(double[::1] a):
    return &a[0] if a.shape[0] else NULL
