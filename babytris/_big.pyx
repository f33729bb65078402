# cython: language_level=3
"""Compiled big-board engine: boards up to 16 wide and up to MAX_HEIGHT tall,
as arrays of row bitmasks, for playouts and approximate dynamic programming.

A board is ``height`` uint16 rows, row 0 at the bottom, bit ``c`` of a row its
column ``c``.  Each placement (piece, rotation, column) carries its shape's
rows shifted to its column and the lowest and highest cell of each of its
columns, so the row where it lands comes from the board's column heights in
O(piece width): the piece falls from above the board and stops on the first
cell of any column it covers (it cannot pass under an overhang); a placement
that would rest with a cell above the top row is not a move.  Full rows are
cleared and the rows above them fall.

Board features (those of babytris.features, computed here without the GIL)
score afterstates for a one-step greedy policy: the placement with the
largest ``line_reward[lines] + discount * w . phi(afterstate)`` (the first one
in placement order among equals).  A placement that clears no row changes
only the rows and columns it covers, so its features are the board's totals
plus changes computed there; one that clears rows is scanned from its
landing row up, the rows below it summed once per board.  Games draw pieces
i.i.d. with xoshiro256** generators seeded per game exactly as
babytris._play does, so a game's course depends on its seed alone, never on
the threads.

babytris.tetris builds the tables and checks every argument; the functions
here check only what would otherwise touch memory out of bounds.
"""

from cython.parallel cimport prange
from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, int8_t, uint32_t, uint16_t, uint8_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset

import numpy as np

#: The tallest board.
MAX_HEIGHT = 1024
#: The widest board.
MAX_WIDTH = 16

cdef enum:
    C_MAX_WIDTH = 16
    C_MAX_HEIGHT = 1024
    # Boards handed to a thread at a time by the batch methods.
    BOARDS_PER_CHUNK = 256
    # Games handed to a thread at a time (they differ in length).
    GAMES_PER_CHUNK = 1

# Features, by code: the order of babytris.tetris.FEATURES.  The first eight
# are the board's scalar features, Feats.v's slots.
cdef enum:
    F_MAX_HEIGHT = 0
    F_HOLES = 1
    F_COVERS = 2
    F_BUMPINESS = 3
    F_WELLS = 4
    F_ROW_TRANSITIONS = 5
    F_COLUMN_TRANSITIONS = 6
    F_FILLED = 7
    F_HEIGHTS = 8               # width values
    F_DIFFERENCES = 9           # width - 1 values
    F_LANDING_HEIGHT = 10
    F_ERODED_CELLS = 11
    N_CODES = 12
    N_SCALARS = 8

# What a set of features needs computed beyond transitions, filled cells and height.
cdef enum:
    NEED_HEIGHTS = 1            # the column heights (heights, differences, bumpiness)
    NEED_WELLS = 2
    NEED_COVERS = 4
    NEED_SUM_HEIGHTS = 8        # their sum (holes)



cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define BIG_CTZ(x) __builtin_ctz(x)
    #else
    static inline int big_ctz(unsigned int x) { int n = 0; while (!(x & 1u)) { x >>= 1; n++; } return n; }
    #define BIG_CTZ(x) big_ctz(x)
    #endif
    """
    int lowest_bit "BIG_CTZ"(uint32_t x) noexcept nogil


# --------------------------------------------------------------------------
# Random numbers: splitmix64 (seeding), xoshiro256** (the games), shared with _play.
# --------------------------------------------------------------------------

from babytris._rng cimport Rng, splitmix64, rng_seed, rng_uniform, rng_below


# --------------------------------------------------------------------------
# Geometry and boards.
# --------------------------------------------------------------------------

cdef struct Geo:
    int width, height, n_pieces, max_rows
    uint32_t full
    const int32_t* first        # placements of piece p: first[p]:first[p+1]
    const int16_t* column       # leftmost column of placement k
    const int16_t* n_rows       # rows it spans
    const int16_t* n_cols       # columns it spans
    const uint16_t* shape       # shape[k * max_rows + i]: its row i, at its column
    const int16_t* bottom       # bottom[k * 16 + j]: lowest cell of its column j (shape rows)
    const int16_t* top          # top[k * 16 + j]: highest cell of its column j
    const int16_t* cells        # cells of placement k
    const int16_t* hole_base    # the sum over its columns of (highest cell + 1), minus its cells
    const int16_t* col_cells    # col_cells[k * 16 + j]: its cells in its column j
    const int16_t* inner_covers # inner_covers[k * 16 + j]: those with a gap of the piece below them
    # Per row pattern (any value below 2**width):
    const uint8_t* pc           # filled cells
    const uint8_t* rt           # row transitions, the side walls filled
    const uint16_t* wc          # well cells: empty, both neighbours filled (walls count)


cdef struct Board:
    uint16_t* rows              # height rows; rows at and above `top` are 0
    int top                     # 1 + the highest non-empty row (0: empty board)
    int16_t heights[C_MAX_WIDTH]


cdef inline int board_top(const uint16_t* rows, int height) noexcept nogil:
    cdef int top = height
    while top > 0 and rows[top - 1] == 0:
        top -= 1
    return top


cdef inline void heights_of(const uint16_t* rows, int top, int width, uint32_t full, int16_t* h) noexcept nogil:
    """Column heights (1 + the highest filled row, 0 if empty) from the rows below ``top``."""
    cdef uint32_t seen = 0, newly
    cdef int r, c
    for c in range(width):
        h[c] = 0
    for r in range(top - 1, -1, -1):
        newly = rows[r] & ~seen
        while newly:
            c = lowest_bit(newly)
            h[c] = <int16_t>(r + 1)
            newly &= newly - 1
        seen |= rows[r]
        if seen == full:
            break


cdef inline void load_board(const Geo* g, const uint16_t* rows, Board* b) noexcept nogil:
    """``b`` (its rows already allocated) a copy of ``rows``, with top and heights."""
    memcpy(b.rows, rows, g.height * sizeof(uint16_t))
    b.top = board_top(b.rows, g.height)
    heights_of(b.rows, b.top, g.width, g.full, b.heights)


cdef inline int landing(const Geo* g, const int16_t* heights, int k) noexcept nogil:
    """The row of placement k's lowest cells when dropped on a board with these
    column heights, or -1 if it would rest with a cell above the top row."""
    cdef const int16_t* bottom = g.bottom + 16 * k
    cdef const int16_t* h = heights + g.column[k]
    cdef int j, t, y = 0
    for j in range(g.n_cols[k]):
        t = h[j] - bottom[j]
        if t > y:
            y = t
    if y + g.n_rows[k] > g.height:
        return -1
    return y


cdef inline int place(const Geo* g, const uint16_t* rows, int top, int k, int y,
                      uint16_t* out, int* out_top, int* eroded) noexcept nogil:
    """Land placement k at row y on the board ``rows`` (its top row ``top``),
    writing the board after line clears to ``out`` (which may be ``rows``
    itself) below ``out_top``; returns the rows cleared and writes the eroded
    piece cells (rows cleared times the piece's cells in them).  Rows of
    ``out`` at and above ``out_top`` are left as they were, except that when
    ``out`` is ``rows`` they are kept 0."""
    cdef int nr = g.n_rows[k], n = top, i, r, w, lines = 0, cells = 0
    cdef const uint16_t* s = g.shape + <Py_ssize_t>k * g.max_rows
    cdef uint16_t full = <uint16_t>g.full
    if y + nr > n:
        n = y + nr
    if out != rows:
        memcpy(out, rows, top * sizeof(uint16_t))
        for r in range(top, n):
            out[r] = 0
    for i in range(nr):
        out[y + i] |= s[i]
        if out[y + i] == full:
            lines += 1
            cells += g.pc[s[i]]
    if lines:
        w = y
        for r in range(y, n):
            if out[r] != full:
                out[w] = out[r]
                w += 1
        for r in range(w, n):
            out[r] = 0
        n = w
        while n > 0 and out[n - 1] == 0:
            n -= 1
    out_top[0] = n
    eroded[0] = lines * cells
    return lines


cdef inline int apply(const Geo* g, Board* b, int k, int y, int* eroded) noexcept nogil:
    """Place k at row y on ``b`` in place; returns the rows cleared."""
    cdef int new_top, j, lines
    cdef const int16_t* top = g.top + 16 * k
    lines = place(g, b.rows, b.top, k, y, b.rows, &new_top, eroded)
    b.top = new_top
    if lines:
        heights_of(b.rows, new_top, g.width, g.full, b.heights)
    else:
        for j in range(g.n_cols[k]):
            b.heights[g.column[k] + j] = <int16_t>(y + top[j] + 1)
    return lines


# --------------------------------------------------------------------------
# Features of a board, or of the board made of a board's rows below some
# row y and other rows from y up.
#
# A placement leaves the rows below its landing row y as they were (rows
# cleared are at or above y), so the features of its afterstate split into
# the rows below y, summed once per board in a Prefix, and the rows from y
# up, scanned.  Row and column transitions, filled cells and the solid
# bottom (for covers) are sums over rows or pairs of rows; holes are the
# column heights summed minus the filled cells; a well's depth runs down
# across y, so the cells below y count their runs up to y (in the prefix)
# plus, where the run goes on above, its length above times theirs.
# --------------------------------------------------------------------------

cdef struct Feats:
    int64_t v[N_SCALARS]        # F_MAX_HEIGHT .. F_FILLED
    int16_t heights[C_MAX_WIDTH]


cdef struct Prefix:
    # Index y in [0, top]: the rows below y of the board.
    int64_t* wells              # cumulative wells, as if row y held no well cell
    int32_t* rt                 # row transitions
    int32_t* ct                 # column transitions, the floor's included
    int32_t* filled             # filled cells
    int32_t* solid              # filled cells with only filled cells below
    uint16_t* solid_mask        # columns filled in every row below y (all at y = 0)
    int16_t* top_below          # 1 + the highest non-empty row below y
    uint16_t* well_mask         # columns whose cell in row y - 1 is a well cell
    int16_t* run                # run[y * 16 + c]: well cells of column c from row y - 1 down, unbroken


cdef inline size_t prefix_bytes(int height) noexcept nogil:
    return (<size_t>height + 1) * (8 + 4 * 4 + 2 + 2 + 2 + 2 * C_MAX_WIDTH)


cdef inline void prefix_init(Prefix* pre, void* memory, int height) noexcept nogil:
    cdef size_t n = height + 1
    cdef char* p = <char*>memory
    pre.wells = <int64_t*>p
    p += n * 8
    pre.rt = <int32_t*>p
    p += n * 4
    pre.ct = <int32_t*>p
    p += n * 4
    pre.filled = <int32_t*>p
    p += n * 4
    pre.solid = <int32_t*>p
    p += n * 4
    pre.solid_mask = <uint16_t*>p
    p += n * 2
    pre.top_below = <int16_t*>p
    p += n * 2
    pre.well_mask = <uint16_t*>p
    p += n * 2
    pre.run = <int16_t*>p


cdef inline void prepare_prefix(const Geo* g, const Board* b, int needs, Prefix* pre) noexcept nogil:
    """Sum the board's rows below each y in [0, top] into ``pre``."""
    cdef uint32_t row, below = g.full, solid = g.full, w
    cdef int r, c
    cdef int16_t* run
    cdef int16_t* up
    cdef int64_t sum_runs
    pre.rt[0] = pre.ct[0] = pre.filled[0] = pre.solid[0] = 0
    pre.solid_mask[0] = <uint16_t>g.full
    pre.top_below[0] = 0
    if needs & NEED_WELLS:
        pre.wells[0] = 0
        pre.well_mask[0] = 0
        memset(pre.run, 0, 16 * sizeof(int16_t))
    for r in range(b.top):
        row = b.rows[r]
        pre.ct[r + 1] = pre.ct[r] + g.pc[row ^ below]
        pre.rt[r + 1] = pre.rt[r] + g.rt[row]
        pre.filled[r + 1] = pre.filled[r] + g.pc[row]
        solid &= row
        pre.solid_mask[r + 1] = <uint16_t>solid
        pre.solid[r + 1] = pre.solid[r] + g.pc[solid]
        pre.top_below[r + 1] = r + 1 if row else pre.top_below[r]
        below = row
        if needs & NEED_WELLS:
            w = g.wc[row]
            up = pre.run + 16 * (r + 1)
            run = pre.run + 16 * r
            memset(up, 0, 16 * sizeof(int16_t))
            sum_runs = 0
            while w:
                c = lowest_bit(w)
                up[c] = run[c] + 1
                sum_runs += up[c]
                w &= w - 1
            pre.well_mask[r + 1] = g.wc[row]
            pre.wells[r + 1] = pre.wells[r] + sum_runs


cdef inline int64_t bumpiness(const int16_t* heights, int width) noexcept nogil:
    cdef int64_t total = 0
    cdef int c, d
    for c in range(width - 1):
        d = heights[c + 1] - heights[c]
        total += d if d >= 0 else -d
    return total


cdef inline void after_features(const Geo* g, const Board* b, const Prefix* pre, int y, const uint16_t* s,
                                int m, int needs, Feats* f) noexcept nogil:
    """The board features of the board made of ``b``'s rows below y and
    ``s[0:m]`` from row y up (``s[m - 1]`` non-empty; empty rows above).
    ``pre`` is ``b``'s Prefix, or NULL with y = 0 (``s`` the whole board).
    Column heights come from the rows scanned, else from ``b``'s heights
    where those are at most y, else by a scan down from y."""
    cdef int W = g.width, H = g.height, n = y + m, i, r, c, d
    cdef uint32_t full = g.full
    cdef uint32_t row, above = 0, prev, newly, w, t, cur = 0, pending
    cdef int64_t ct = 0, rt = 0, filled = 0, wells = 0, sum_heights = 0
    cdef int32_t solid
    cdef int16_t depth[C_MAX_WIDTH]
    cdef const int16_t* run
    if needs & NEED_WELLS and W == 1 and n < H:
        d = H - n                   # a 1-wide board: the empty rows above are one well
        depth[0] = <int16_t>d
        cur = 1
        wells = <int64_t>d * (d + 1) // 2
    # Column transitions between rows r - 1 and r for r in (y, n], row n being
    # empty, or up to n - 1 when the stack reaches the top (which is open).
    prev = s[m - 1] if n == H and m > 0 else 0
    for i in range(m - 1, -1, -1):
        row = s[i]
        if needs & (NEED_HEIGHTS | NEED_SUM_HEIGHTS):
            newly = row & ~above
            while newly:
                c = lowest_bit(newly)
                f.heights[c] = <int16_t>(y + i + 1)
                newly &= newly - 1
        ct += g.pc[row ^ prev]
        rt += g.rt[row]
        filled += g.pc[row]
        if needs & NEED_WELLS:
            w = g.wc[row]
            t = w
            while t:
                c = lowest_bit(t)
                depth[c] = depth[c] + 1 if (cur >> c) & 1 else 1
                wells += depth[c]
                t &= t - 1
            cur = w
        above |= row
        prev = row
    # The pair of rows y - 1 (or the floor) and y.
    ct += g.pc[(b.rows[y - 1] if y > 0 else full) ^ prev]
    f.v[F_COLUMN_TRANSITIONS] = ct
    f.v[F_ROW_TRANSITIONS] = rt + 2 * (H - n)
    f.v[F_FILLED] = filled
    f.v[F_MAX_HEIGHT] = n if m > 0 else 0
    if pre != NULL:
        f.v[F_COLUMN_TRANSITIONS] += pre.ct[y]
        f.v[F_ROW_TRANSITIONS] += pre.rt[y]
        f.v[F_FILLED] += pre.filled[y]
        if m == 0:
            f.v[F_MAX_HEIGHT] = pre.top_below[y]
    if needs & (NEED_HEIGHTS | NEED_SUM_HEIGHTS):
        pending = 0
        t = full & ~above
        while t:
            c = lowest_bit(t)
            if y == 0:
                f.heights[c] = 0
            elif b.heights[c] <= y:
                f.heights[c] = b.heights[c]
            else:                   # its cells from y up were cleared
                pending |= 1u << c
            t &= t - 1
        r = y - 1
        while pending:
            newly = b.rows[r] & pending if r >= 0 else pending
            while newly:
                c = lowest_bit(newly)
                f.heights[c] = <int16_t>(r + 1)
                newly &= newly - 1
            pending &= ~(b.rows[r] if r >= 0 else pending)
            r -= 1
        for c in range(W):
            sum_heights += f.heights[c]
        f.v[F_HOLES] = sum_heights - f.v[F_FILLED]
        f.v[F_BUMPINESS] = bumpiness(f.heights, W)
    if needs & NEED_WELLS:
        if pre != NULL:
            wells += pre.wells[y]
            run = pre.run + 16 * y
            t = cur & pre.well_mask[y]          # runs going on below y
            while t:
                c = lowest_bit(t)
                wells += <int64_t>run[c] * depth[c]
                t &= t - 1
        f.v[F_WELLS] = wells
    if needs & NEED_COVERS:
        solid = pre.solid[y] if pre != NULL else 0
        t = pre.solid_mask[y] if pre != NULL else full
        for i in range(m):
            t &= s[i]
            if not t:
                break
            solid += g.pc[t]
        f.v[F_COVERS] = f.v[F_FILLED] - solid


cdef inline int build_after(const Geo* g, const Board* b, int k, int y, uint16_t* s, int* m_out,
                            int* eroded) noexcept nogil:
    """The afterstate of placement k landing at row y, from row y up, into
    ``s``: writes its rows ``s[0:m]`` (m trimmed to its last non-empty row)
    and the eroded cells; returns the rows cleared."""
    cdef int nr = g.n_rows[k], top = b.top, m, i, r, w, lines = 0, cells = 0
    cdef const uint16_t* shape = g.shape + <Py_ssize_t>k * g.max_rows
    cdef uint16_t full = <uint16_t>g.full
    m = (top if top > y + nr else y + nr) - y
    memcpy(s, b.rows + y, m * sizeof(uint16_t))     # rows at and above top are 0
    for i in range(nr):
        s[i] |= shape[i]
        if s[i] == full:
            lines += 1
            cells += g.pc[shape[i]]
    if lines:
        w = 0
        for r in range(m):
            if s[r] != full:
                s[w] = s[r]
                w += 1
        m = w
        while m > 0 and s[m - 1] == 0:
            m -= 1
    m_out[0] = m
    eroded[0] = lines * cells
    return lines


# --------------------------------------------------------------------------
# The fast path: a placement that clears no row changes only the rows and
# columns it covers, so each feature is the board's total plus a change
# computed there: transitions from the piece's rows and their neighbours,
# holes from the column heights summed, covers from which columns already
# have a hole, and cumulative wells (a run of L well cells counts
# L (L + 1) / 2) from the runs through the piece's rows in the columns whose
# well cells change.
# --------------------------------------------------------------------------

cdef struct Stats:
    # Totals of a board, as after_features counts them.
    int64_t rt, ct, filled, sum_heights, wells, covers, bumpiness
    int32_t height_sums[C_MAX_WIDTH + 1]    # heights of the columns left of c, summed
    uint32_t holey              # columns with an empty cell below their top
    bint prefix_ready           # whether the Prefix (for placements that clear) is summed


cdef inline void prepare_stats(const Geo* g, const Board* b, int needs, Stats* st) noexcept nogil:
    cdef int W = g.width, H = g.height, top = b.top, r, c
    cdef uint32_t full = g.full, row, below = full, above = 0, solid = full, w, t, cur = 0
    cdef int64_t rt = 0, ct = 0, filled = 0, sum_heights = 0, wells = 0, solid_cells = 0
    cdef int16_t depth[C_MAX_WIDTH]
    st.holey = 0
    for r in range(top):
        row = b.rows[r]
        rt += g.rt[row]
        ct += g.pc[row ^ below]
        filled += g.pc[row]
        below = row
        solid &= row
        solid_cells += g.pc[solid]
    if 0 < top < H:
        ct += g.pc[below]                       # the top of the stack against the empty row above
    st.rt = rt + 2 * (H - top)
    st.ct = ct if top > 0 else W
    st.filled = filled
    st.covers = filled - solid_cells
    for r in range(top - 1, -1, -1):
        row = b.rows[r]
        st.holey |= ~row & above & full
        above |= row
        if needs & NEED_WELLS:
            w = g.wc[row]
            t = w
            while t:
                c = lowest_bit(t)
                depth[c] = depth[c] + 1 if (cur >> c) & 1 else 1
                wells += depth[c]
                t &= t - 1
            cur = w
    st.height_sums[0] = 0
    for c in range(W):
        sum_heights += b.heights[c]
        st.height_sums[c + 1] = <int32_t>sum_heights
    st.sum_heights = sum_heights
    st.bumpiness = bumpiness(b.heights, W)
    st.wells = wells
    st.prefix_ready = False


# Well runs through a window of up to 4 rows, by its column's well cells
# (bit i: row i of the window, bottom first) and the window's height:
# unbroken from the top, from the bottom, and the cumulative wells of the
# runs touching neither end.
cdef int8_t RUN_TOP[5][16]
cdef int8_t RUN_BOTTOM[5][16]
cdef int8_t RUN_INSIDE[5][16]


cdef void _run_tables() noexcept:
    cdef int nr, bits, i, run, total
    for nr in range(5):
        for bits in range(16):
            i = nr - 1
            while i >= 0 and (bits >> i) & 1:
                i -= 1
            RUN_TOP[nr][bits] = nr - 1 - i
            i = 0
            while i < nr and (bits >> i) & 1:
                i += 1
            RUN_BOTTOM[nr][bits] = i
            total = 0
            run = 0
            for i in range(RUN_BOTTOM[nr][bits], nr - RUN_TOP[nr][bits]):
                if (bits >> i) & 1:
                    run += 1
                else:
                    total += run * (run + 1) // 2
                    run = 0
            RUN_INSIDE[nr][bits] = total + run * (run + 1) // 2


_run_tables()


cdef inline uint32_t column_bits(uint64_t packed, int c) noexcept nogil:
    """Column c's bits of four 16-bit rows packed in a word (row i at bit 16 i), as bits 0..3."""
    return <uint32_t>((((packed >> c) & <uint64_t>0x0001000100010001ULL) * <uint64_t>0x0001000000000000ULL
                       + (((packed >> c) & <uint64_t>0x0001000100010001ULL) * <uint64_t>0x0000000200000000ULL)
                       + (((packed >> c) & <uint64_t>0x0001000100010001ULL) * <uint64_t>0x0000000000040000ULL)
                       + (((packed >> c) & <uint64_t>0x0001000100010001ULL) * <uint64_t>0x0000000000000008ULL))
                      >> 48) & 15u


cdef inline int64_t runs_packed(int64_t above, uint32_t bits, int nr, int64_t below) noexcept nogil:
    """:func:`runs_through` for a window of nr <= 4 rows, from the column's bits."""
    cdef int64_t top_run, bottom_run
    if bits == (1u << nr) - 1:
        top_run = above + nr + below
        return top_run * (top_run + 1) // 2
    top_run = above + RUN_TOP[nr][bits]
    bottom_run = below + RUN_BOTTOM[nr][bits]
    return top_run * (top_run + 1) // 2 + bottom_run * (bottom_run + 1) // 2 + RUN_INSIDE[nr][bits]


cdef inline int64_t runs_through(int64_t above, const uint16_t* masks, int nr, int c, int64_t below) noexcept nogil:
    """Cumulative wells of the runs of column c through a window of rows:
    ``above`` well cells right above it, ``masks[0:nr]`` its rows' well
    cells (bottom first), ``below`` right below it."""
    cdef int64_t run = above, total = 0
    cdef int i
    for i in range(nr - 1, -1, -1):
        if (masks[i] >> c) & 1:
            run += 1
        else:
            total += run * (run + 1) // 2
            run = 0
    run += below
    return total + run * (run + 1) // 2


# --------------------------------------------------------------------------
# Feature vectors and linear values.
# --------------------------------------------------------------------------

cdef inline int needs_of(const int8_t* codes, int n_codes) noexcept nogil:
    cdef int i, needs = 0
    for i in range(n_codes):
        if codes[i] in (F_HEIGHTS, F_DIFFERENCES, F_BUMPINESS):
            needs |= NEED_HEIGHTS
        elif codes[i] == F_HOLES:
            needs |= NEED_SUM_HEIGHTS
        elif codes[i] == F_WELLS:
            needs |= NEED_WELLS
        elif codes[i] == F_COVERS:
            needs |= NEED_COVERS
    return needs


cdef inline int fill_phi(const int8_t* codes, int n_codes, const Feats* f, int width,
                         double landing_height, int eroded, double* phi) noexcept nogil:
    """phi = [1, features in the order of ``codes``]; returns its length."""
    cdef int i, c, d, n = 1
    phi[0] = 1.0
    for i in range(n_codes):
        if codes[i] < F_HEIGHTS:
            phi[n] = <double>f.v[codes[i]]
            n += 1
        elif codes[i] == F_HEIGHTS:
            for c in range(width):
                phi[n] = f.heights[c]
                n += 1
        elif codes[i] == F_DIFFERENCES:
            for c in range(width - 1):
                d = f.heights[c + 1] - f.heights[c]
                phi[n] = d if d >= 0 else -d
                n += 1
        elif codes[i] == F_LANDING_HEIGHT:
            phi[n] = landing_height
            n += 1
        else:
            phi[n] = eroded
            n += 1
    return n


cdef inline double landing_height_of(const Geo* g, int k, int y) noexcept nogil:
    """Mean of the piece's lowest and highest rows where it landed, counted from 1."""
    return y + 0.5 * (g.n_rows[k] - 1) + 1.0


# --------------------------------------------------------------------------
# Policies.
# --------------------------------------------------------------------------

cdef struct Policy:
    bint greedy                 # False: a uniformly random legal placement
    int needs
    # The weights by feature slot (0 for features not asked for), summed in
    # this order: the constant, the scalars, landing height, eroded cells,
    # then each column height and each difference.
    double constant
    double scalar[N_SCALARS]
    int8_t active[N_SCALARS]    # the scalar slots with a weight, in slot order
    int n_active
    double landing, eroded
    double heights[C_MAX_WIDTH]
    double differences[C_MAX_WIDTH]
    bint any_heights, any_differences
    const double* line_reward   # by rows cleared
    double discount
    double epsilon              # chance of a random placement instead of the greedy one


cdef inline double linear_value(const Policy* pol, const Feats* f, int width, double landing_height,
                                int eroded) noexcept nogil:
    cdef double v = pol.constant
    cdef int i, s, c, d
    for i in range(pol.n_active):
        s = pol.active[i]
        v += pol.scalar[s] * <double>f.v[s]
    v += pol.landing * landing_height + pol.eroded * eroded
    if pol.any_heights:
        for c in range(width):
            v += pol.heights[c] * f.heights[c]
    if pol.any_differences:
        for c in range(width - 1):
            d = f.heights[c + 1] - f.heights[c]
            v += pol.differences[c] * (d if d >= 0 else -d)
    return v


cdef struct Work:
    # What a thread needs to score placements: a board, the afterstate's
    # rows from the landing row up, the board's totals and prefix sums.
    Board board
    uint16_t* scratch           # 2 * height rows
    Prefix pre
    Stats stats
    Feats feats
    void* memory


cdef inline int work_alloc(Work* work, int height) noexcept nogil:
    """Allocate ``work`` for boards of ``height`` rows; -1 if out of memory."""
    cdef size_t a = prefix_bytes(height)
    work.memory = malloc(a + 3 * <size_t>height * sizeof(uint16_t))
    if work.memory == NULL:
        return -1
    prefix_init(&work.pre, work.memory, height)
    work.board.rows = <uint16_t*>(<char*>work.memory + a)
    work.scratch = work.board.rows + height
    memset(&work.feats, 0, sizeof(Feats))       # features not asked for stay 0 (weight 0)
    return 0


cdef inline int random_move(const Geo* g, const Board* b, int p, Rng* rng) noexcept nogil:
    cdef int k, n = 0, pick
    for k in range(g.first[p], g.first[p + 1]):
        n += landing(g, b.heights, k) >= 0
    if n == 0:
        return -1
    pick = <int>rng_below(rng, n)
    for k in range(g.first[p], g.first[p + 1]):
        if landing(g, b.heights, k) >= 0:
            if pick == 0:
                return k
            pick -= 1
    return -1


cdef inline int greedy_move(const Geo* g, const Board* b, int p, const Policy* pol, Work* work,
                            double* best_value) noexcept nogil:
    """The placement (global number) of p on b with the largest
    ``line_reward[lines] + discount * w . phi(afterstate)``, the first among
    equals; -1 if none is legal."""
    cdef int k, y, lines, m, eroded, best = -1
    cdef double v, best_v = 0.0
    if g.width > 1:
        return lean_move(g, b, p, pol, work, best_value)
    # A 1-wide board's empty rows are wells, which lean_move does not count: scan every afterstate.
    prepare_prefix(g, b, pol.needs, &work.pre)
    for k in range(g.first[p], g.first[p + 1]):
        y = landing(g, b.heights, k)
        if y < 0:
            continue
        lines = build_after(g, b, k, y, work.scratch, &m, &eroded)
        after_features(g, b, &work.pre, y, work.scratch, m, pol.needs, &work.feats)
        v = pol.line_reward[lines] + pol.discount * linear_value(pol, &work.feats, g.width,
                                                                 landing_height_of(g, k, y), eroded)
        if best < 0 or v > best_v:
            best = k
            best_v = v
    best_value[0] = best_v
    return best


cdef inline double slow_value(const Geo* g, const Board* b, const Policy* pol, Work* work, int k, int y) noexcept nogil:
    """The value of placement k landing at row y, from its rows scanned (a placement that clears rows)."""
    cdef int lines, m, eroded
    if not work.stats.prefix_ready:
        prepare_prefix(g, b, pol.needs, &work.pre)
        work.stats.prefix_ready = True
    lines = build_after(g, b, k, y, work.scratch, &m, &eroded)
    after_features(g, b, &work.pre, y, work.scratch, m, pol.needs, &work.feats)
    return pol.line_reward[lines] + pol.discount * linear_value(pol, &work.feats, g.width, landing_height_of(g, k, y),
                                                                eroded)


cdef int lean_move(const Geo* g, const Board* b, int p, const Policy* pol, Work* work, double* best_value) noexcept nogil:
    """greedy_move on boards at least 2 wide: a placement that clears no row
    is worth the board's value plus the changes its rows and columns make,
    weighted as they come; one that clears rows is scanned (slow_value)."""
    cdef Stats* st = &work.stats
    cdef int W = g.width, H = g.height, top = b.top, k, j, i, c, y, t, nr, nc, col, best = -1
    cdef uint32_t full = g.full, o, n, below_o, below_n, changed, ow, nw
    cdef const uint8_t* pc = g.pc
    cdef const uint8_t* rt = g.rt
    cdef const uint16_t* wc = g.wc
    cdef const uint16_t* rows = b.rows
    cdef const int16_t* heights = b.heights
    cdef const int16_t* bottom
    cdef const int16_t* ptop
    cdef const uint16_t* shape
    cdef uint16_t* tmp = work.scratch
    cdef int64_t d_rt, d_ct, d_h, d_cov, d_wells, above, below
    cdef uint64_t packed_old, packed_new
    cdef const int32_t* height_sums = st.height_sums
    cdef double v, dv, best_v = 0.0, base
    cdef double w_mh = pol.scalar[F_MAX_HEIGHT], w_holes = pol.scalar[F_HOLES], w_cov = pol.scalar[F_COVERS]
    cdef double w_wells = pol.scalar[F_WELLS], w_rt = pol.scalar[F_ROW_TRANSITIONS]
    cdef double w_ct = pol.scalar[F_COLUMN_TRANSITIONS], w_filled = pol.scalar[F_FILLED], w_lh = pol.landing
    cdef double w_bump = pol.scalar[F_BUMPINESS]
    cdef bint wells = pol.needs & NEED_WELLS, covers = pol.needs & NEED_COVERS, holes = w_holes != 0.0
    cdef bint column_heights = pol.needs & NEED_HEIGHTS
    cdef int a_new, b_new, d_old, d_new, last
    cdef double r0 = pol.line_reward[0], discount = pol.discount
    prepare_stats(g, b, pol.needs, st)
    base = (pol.constant + w_mh * top + w_holes * (st.sum_heights - st.filled) + w_cov * st.covers
            + w_wells * st.wells + w_rt * st.rt + w_ct * st.ct + w_filled * st.filled + w_bump * st.bumpiness)
    if pol.any_heights:
        for c in range(W):
            base += pol.heights[c] * heights[c]
    if pol.any_differences:
        for c in range(W - 1):
            d_old = heights[c + 1] - heights[c]
            base += pol.differences[c] * (d_old if d_old >= 0 else -d_old)
    for k in range(g.first[p], g.first[p + 1]):
        col = g.column[k]
        nr = g.n_rows[k]
        nc = g.n_cols[k]
        bottom = g.bottom + 16 * k
        y = 0
        for j in range(nc):
            t = heights[col + j] - bottom[j]
            y = t if t > y else y
        if y + nr > H:
            continue
        shape = g.shape + <Py_ssize_t>k * g.max_rows
        d_rt = d_ct = 0
        changed = 0
        packed_old = packed_new = 0
        below_o = below_n = rows[y - 1] if y > 0 else full
        for i in range(nr):
            o = rows[y + i]                     # rows at and above top are 0
            n = o | shape[i]
            if n == full:
                break
            d_rt += <int>rt[n] - <int>rt[o]
            d_ct += <int>pc[n ^ below_n] - <int>pc[o ^ below_o]
            if wells:
                ow = wc[o]
                nw = wc[n]
                changed |= ow ^ nw
                if nr <= 4:
                    packed_old |= <uint64_t>ow << (16 * i)
                    packed_new |= <uint64_t>nw << (16 * i)
                else:
                    tmp[i] = <uint16_t>ow
                    tmp[nr + i] = <uint16_t>nw
            below_o = o
            below_n = n
        else:
            if y + nr < H:                      # the row above the piece against its top row
                o = rows[y + nr]
                d_ct += <int>pc[o ^ below_n] - <int>pc[o ^ below_o]
            dv = w_rt * d_rt + w_ct * d_ct + w_filled * g.cells[k]
            if y + nr > top:
                dv += w_mh * (y + nr - top)
            if holes:                           # column heights summed, minus the piece's cells
                dv += w_holes * (nc * y + g.hole_base[k] - (height_sums[col + nc] - height_sums[col]))
            if covers:
                d_cov = 0
                for j in range(nc):
                    c = col + j
                    if y + bottom[j] > heights[c] or (st.holey >> c) & 1:
                        d_cov += g.col_cells[16 * k + j]
                    else:
                        d_cov += g.inner_covers[16 * k + j]
                dv += w_cov * d_cov
            if column_heights:                  # the piece's columns rise; the differences beside them change
                ptop = g.top + 16 * k
                if pol.any_heights:
                    for j in range(nc):
                        dv += pol.heights[col + j] * (y + ptop[j] + 1 - heights[col + j])
                last = col + nc if col + nc < W else W - 1
                for c in range(col - 1 if col > 0 else 0, last):
                    a_new = y + ptop[c - col] + 1 if c >= col else heights[c]
                    b_new = y + ptop[c + 1 - col] + 1 if c + 1 < col + nc else heights[c + 1]
                    d_old = heights[c + 1] - heights[c]
                    d_old = d_old if d_old >= 0 else -d_old
                    d_new = b_new - a_new
                    d_new = d_new if d_new >= 0 else -d_new
                    dv += w_bump * (d_new - d_old)
                    if pol.any_differences:
                        dv += pol.differences[c] * (d_new - d_old)
            if wells:
                d_wells = 0
                while changed:
                    c = lowest_bit(changed)
                    above = 0
                    while y + nr + above < top and (wc[rows[y + nr + above]] >> c) & 1:
                        above += 1
                    below = 0
                    while below < y and (wc[rows[y - 1 - below]] >> c) & 1:
                        below += 1
                    if nr <= 4:
                        d_wells += (runs_packed(above, column_bits(packed_new, c), nr, below)
                                    - runs_packed(above, column_bits(packed_old, c), nr, below))
                    else:
                        d_wells += runs_through(above, tmp + nr, nr, c, below) - runs_through(above, tmp, nr, c, below)
                    changed &= changed - 1
                dv += w_wells * d_wells
            v = r0 + discount * (base + dv + w_lh * (y + 0.5 * (nr - 1) + 1.0))
            if best < 0 or v > best_v:
                best = k
                best_v = v
            continue
        v = slow_value(g, b, pol, work, k, y)   # it clears a row
        if best < 0 or v > best_v:
            best = k
            best_v = v
    best_value[0] = best_v
    return best


cdef inline int choose(const Geo* g, const Board* b, int p, const Policy* pol, Rng* rng, Work* work) noexcept nogil:
    cdef double v
    if not pol.greedy or pol.epsilon >= 1.0 or (pol.epsilon > 0.0 and rng_uniform(rng) < pol.epsilon):
        return random_move(g, b, p, rng)
    return greedy_move(g, b, p, pol, work, &v)


cdef int make_policy(Policy* pol, const int8_t[::1] codes, const double[::1] weights,
                     const double[::1] line_reward, double discount, double epsilon, int width,
                     int max_rows) except -1:
    """Fill ``pol`` from arrays (``codes`` None: random placements); check their sizes."""
    cdef int i, c, n = 1
    memset(pol, 0, sizeof(Policy))
    pol.greedy = codes is not None
    pol.epsilon = epsilon
    pol.discount = discount
    if not pol.greedy:
        return 0
    for i in range(codes.shape[0]):
        if not 0 <= codes[i] < N_CODES:
            raise ValueError(f"feature code {codes[i]} out of range")
        n += width if codes[i] == F_HEIGHTS else width - 1 if codes[i] == F_DIFFERENCES else 1
    if weights is None or weights.shape[0] != n:
        raise ValueError(f"weights: {n} needed for these features")
    if line_reward is None or line_reward.shape[0] < max_rows + 1:
        raise ValueError(f"line_reward: {max_rows + 1} entries needed")
    pol.constant = weights[0]
    n = 1
    for i in range(codes.shape[0]):
        if codes[i] < N_SCALARS:
            pol.scalar[codes[i]] += weights[n]
            n += 1
        elif codes[i] == F_HEIGHTS:
            for c in range(width):
                pol.heights[c] += weights[n]
                n += 1
            pol.any_heights = True
        elif codes[i] == F_DIFFERENCES:
            for c in range(width - 1):
                pol.differences[c] += weights[n]
                n += 1
            pol.any_differences = True
        elif codes[i] == F_LANDING_HEIGHT:
            pol.landing += weights[n]
            n += 1
        else:
            pol.eroded += weights[n]
            n += 1
    for i in range(N_SCALARS):
        if pol.scalar[i] != 0.0:
            pol.active[pol.n_active] = <int8_t>i
            pol.n_active += 1
    pol.needs = needs_of(&codes[0], <int>codes.shape[0]) if codes.shape[0] else 0
    pol.line_reward = &line_reward[0]
    return 0


# --------------------------------------------------------------------------
# Games.
# --------------------------------------------------------------------------

cdef struct Game:
    const Geo* g
    const Policy* pol
    const double* cumulative    # cumulative piece probabilities (the last is never read)
    const double* scores        # points by rows cleared
    const uint16_t* start       # the start board's rows
    int64_t max_placements


cdef struct Record:
    uint16_t* rows              # the boards before each placement, height rows each
    int16_t* pieces             # the piece drawn on each
    int64_t n, cap


cdef inline int record(Record* rec, const Board* b, int height, int p) noexcept nogil:
    cdef int64_t cap
    cdef void* q
    if rec.n == rec.cap:
        cap = rec.cap * 2 if rec.cap else 64
        q = realloc(rec.rows, cap * height * sizeof(uint16_t))
        if q == NULL:
            return -1
        rec.rows = <uint16_t*>q
        q = realloc(rec.pieces, cap * sizeof(int16_t))
        if q == NULL:
            return -1
        rec.pieces = <int16_t*>q
        rec.cap = cap
    memcpy(rec.rows + rec.n * height, b.rows, height * sizeof(uint16_t))
    rec.pieces[rec.n] = <int16_t>p
    rec.n += 1
    return 0


cdef int play_one(const Game* G, uint64_t seed, int64_t* placements, int64_t* lines, double* points,
                  Record* rec) noexcept nogil:
    """One game from ``G.start``: draw a piece, place it by the policy, until
    ``max_placements`` or the piece fits nowhere.  Writes the placements made,
    rows cleared and points; with ``rec``, each board and the piece drawn on
    it (the last one too when it fits nowhere).  -1 if out of memory."""
    cdef const Geo* g = G.g
    cdef Rng rng
    cdef Work work
    cdef Board* b = &work.board
    cdef int P = g.n_pieces, p, j, k, y, n, eroded, status = 0
    cdef int64_t t = 0, total_lines = 0
    cdef double u, total = 0.0
    if work_alloc(&work, g.height) < 0:
        placements[0] = lines[0] = 0
        points[0] = 0.0
        return -1
    load_board(g, G.start, b)
    rng_seed(&rng, seed)
    while t < G.max_placements:
        u = rng_uniform(&rng)
        p = 0
        for j in range(P - 1):          # branch-free: the first j with u < cumulative[j]
            p += u >= G.cumulative[j]
        if rec != NULL and record(rec, b, g.height, p) < 0:
            status = -1
            break
        k = choose(g, b, p, G.pol, &rng, &work)
        if k < 0:
            break
        y = landing(g, b.heights, k)
        n = apply(g, b, k, y, &eroded)
        total_lines += n
        total += G.scores[n]
        t += 1
    free(work.memory)
    placements[0] = t
    lines[0] = total_lines
    points[0] = total
    return status


# --------------------------------------------------------------------------
# Per-board work of the batch methods (each call on its own board, threads
# sharing the boards).
# --------------------------------------------------------------------------

cdef int64_t _count_moves(const Geo* g, const uint16_t* rows, int p) noexcept nogil:
    cdef int16_t heights[C_MAX_WIDTH]
    cdef int k, top = board_top(rows, g.height)
    cdef int64_t n = 0
    heights_of(rows, top, g.width, g.full, heights)
    for k in range(g.first[p], g.first[p + 1]):
        n += landing(g, heights, k) >= 0
    return n


cdef void _fill_moves(const Geo* g, const uint16_t* rows, int p, int64_t at, uint16_t* out_rows,
                      uint8_t* out_lines, int16_t* out_place, int16_t* out_landing, double* out_height,
                      int16_t* out_eroded) noexcept nogil:
    """Board ``rows``'s afterstates for piece p, written from entry ``at`` on."""
    cdef int16_t heights[C_MAX_WIDTH]
    cdef int k, y, r, after_top, eroded, top = board_top(rows, g.height)
    cdef uint16_t* out
    heights_of(rows, top, g.width, g.full, heights)
    for k in range(g.first[p], g.first[p + 1]):
        y = landing(g, heights, k)
        if y < 0:
            continue
        out = out_rows + at * g.height
        out_lines[at] = <uint8_t>place(g, rows, top, k, y, out, &after_top, &eroded)
        for r in range(after_top, g.height):
            out[r] = 0
        out_place[at] = <int16_t>(k - g.first[p])
        out_landing[at] = <int16_t>y
        out_height[at] = landing_height_of(g, k, y)
        out_eroded[at] = <int16_t>eroded
        at += 1


cdef void _features_one(const Geo* g, const uint16_t* rows, const int8_t* codes, int n_codes,
                        const double* landing_height, const int16_t* eroded, Py_ssize_t i,
                        double* out) noexcept nogil:
    cdef Feats f
    cdef Board b
    memset(&f, 0, sizeof(Feats))
    b.rows = <uint16_t*>rows
    b.top = board_top(rows, g.height)
    after_features(g, &b, NULL, 0, rows, b.top, needs_of(codes, n_codes), &f)
    fill_phi(codes, n_codes, &f, g.width, landing_height[i] if landing_height != NULL else 0.0,
             eroded[i] if eroded != NULL else 0, out)


cdef int _greedy_chunk(const Geo* g, const Policy* pol, const uint16_t* rows, const int16_t* pieces,
                       Py_ssize_t lo, Py_ssize_t hi, int16_t* placement, double* value) noexcept nogil:
    """Greedy placements of boards lo..hi-1; -1 if out of memory."""
    cdef Work work
    cdef int k
    cdef Py_ssize_t i
    if work_alloc(&work, g.height) < 0:
        return -1
    for i in range(lo, hi):
        load_board(g, rows + i * g.height, &work.board)
        k = greedy_move(g, &work.board, pieces[i], pol, &work, &value[i])
        placement[i] = <int16_t>(k - g.first[pieces[i]]) if k >= 0 else -1
        if k < 0:
            value[i] = 0.0
    free(work.memory)
    return 0


cdef void _copy_record(const Record* rec, uint16_t[:, ::1] rows, int16_t[::1] pieces, int height):
    memcpy(&rows[0, 0], rec.rows, rec.n * height * sizeof(uint16_t))
    memcpy(&pieces[0], rec.pieces, rec.n * sizeof(int16_t))


# --------------------------------------------------------------------------
# The Python-facing engine.
# --------------------------------------------------------------------------

cdef class Engine:
    """Placement tables of one big-board game (built by ``babytris.tetris``).

    Placement k (pieces' placements numbered consecutively, piece p's being
    ``first[p]:first[p+1]``) spans columns ``column[k] .. column[k] + n_cols[k] - 1``
    and ``n_rows[k]`` rows; ``shape[k, i]`` is its row i at its column;
    ``bottom[k, j]`` and ``top[k, j]`` the lowest and highest of its cells in its
    column j (j < n_cols[k])."""

    cdef Geo geo
    cdef readonly object first, column, n_rows, n_cols, shape, bottom, top, cells, col_cells, inner_covers
    cdef readonly object row_cells, row_transitions, row_wells, hole_base
    cdef const int32_t[::1] f_
    cdef const int16_t[::1] c_, nr_, nc_
    cdef const uint16_t[:, ::1] s_
    cdef const int16_t[:, ::1] b_, t_
    cdef int16_t[::1] cells_, hole_base_
    cdef int16_t[:, ::1] colc_, inner_
    cdef const uint8_t[::1] pc_, rt_
    cdef const uint16_t[::1] wc_

    def __init__(self, int width, int height, first, column, n_rows, n_cols, shape, bottom, top):
        if not 1 <= width <= C_MAX_WIDTH or not 1 <= height <= C_MAX_HEIGHT:
            raise ValueError(f"Engine: width in [1, {C_MAX_WIDTH}] and height in [1, {C_MAX_HEIGHT}], "
                             f"got {width} and {height}")
        self.first = np.ascontiguousarray(first, dtype=np.int32)
        self.column = np.ascontiguousarray(column, dtype=np.int16)
        self.n_rows = np.ascontiguousarray(n_rows, dtype=np.int16)
        self.n_cols = np.ascontiguousarray(n_cols, dtype=np.int16)
        self.shape = np.ascontiguousarray(shape, dtype=np.uint16)
        self.bottom = np.ascontiguousarray(bottom, dtype=np.int16)
        self.top = np.ascontiguousarray(top, dtype=np.int16)
        self.f_ = self.first
        self.c_ = self.column
        self.nr_ = self.n_rows
        self.nc_ = self.n_cols
        self.s_ = self.shape
        self.b_ = self.bottom
        self.t_ = self.top
        cdef Py_ssize_t K = self.c_.shape[0], k, i, j
        cdef int P = self.f_.shape[0] - 1
        if (P < 1 or self.f_[0] != 0 or self.f_[P] != K or self.nr_.shape[0] != K or self.nc_.shape[0] != K
                or self.s_.shape[0] != K or self.b_.shape[0] != K or self.t_.shape[0] != K
                or self.b_.shape[1] != 16 or self.t_.shape[1] != 16 or self.s_.shape[1] < 1
                or self.s_.shape[1] > height):
            raise ValueError("Engine: inconsistent placement tables")
        for i in range(P):
            if self.f_[i] > self.f_[i + 1]:
                raise ValueError("Engine: inconsistent placement tables")
        for k in range(K):
            if (not 1 <= self.nr_[k] <= self.s_.shape[1] or self.nc_[k] < 1 or self.c_[k] < 0
                    or self.c_[k] + self.nc_[k] > width):
                raise ValueError(f"Engine: placement {k} does not fit a {width}x{height} board")
            for i in range(self.s_.shape[1]):
                if self.s_[k, i] >> width or (i >= self.nr_[k] and self.s_[k, i]):
                    raise ValueError(f"Engine: placement {k} does not fit a {width}x{height} board")
            for j in range(self.nc_[k]):
                if not 0 <= self.b_[k, j] <= self.t_[k, j] < self.nr_[k]:
                    raise ValueError(f"Engine: placement {k} has bad column bottoms or tops")
        # Cells per placement and column, and those with a gap of the piece below them.
        self.cells = np.zeros(K, dtype=np.int16)
        self.col_cells = np.zeros((K, 16), dtype=np.int16)
        self.inner_covers = np.zeros((K, 16), dtype=np.int16)
        self.cells_ = self.cells
        self.hole_base = np.zeros(K, dtype=np.int16)
        self.hole_base_ = self.hole_base
        self.colc_ = self.col_cells
        self.inner_ = self.inner_covers
        cdef bint gap
        cdef int bit
        for k in range(K):
            for j in range(self.nc_[k]):
                gap = False
                for i in range(self.b_[k, j], self.nr_[k]):
                    bit = (self.s_[k, i] >> (self.c_[k] + j)) & 1
                    if bit:
                        self.colc_[k, j] += 1
                        self.inner_[k, j] += gap
                    else:
                        gap = True
                self.cells_[k] += self.colc_[k, j]
            self.hole_base_[k] = -self.cells_[k]
            for j in range(self.nc_[k]):
                self.hole_base_[k] += self.t_[k, j] + 1
        # Per row pattern: filled cells, row transitions (walls filled), well cells.
        rows = np.arange(1 << width, dtype=np.int64)
        bits = (rows[:, None] >> np.arange(width)) & 1
        walled = np.ones((1 << width, width + 2), dtype=np.int64)
        walled[:, 1:-1] = bits
        self.row_cells = bits.sum(axis=1).astype(np.uint8)
        self.row_transitions = (walled[:, 1:] != walled[:, :-1]).sum(axis=1).astype(np.uint8)
        wells = (1 - bits) & walled[:, :-2] & walled[:, 2:]
        self.row_wells = (wells << np.arange(width)).sum(axis=1).astype(np.uint16)
        self.pc_ = self.row_cells
        self.rt_ = self.row_transitions
        self.wc_ = self.row_wells
        self.geo.pc = &self.pc_[0]
        self.geo.rt = &self.rt_[0]
        self.geo.wc = &self.wc_[0]
        self.geo.width = width
        self.geo.height = height
        self.geo.n_pieces = P
        self.geo.max_rows = <int>self.s_.shape[1]
        self.geo.full = (1u << width) - 1
        self.geo.first = &self.f_[0]
        self.geo.column = &self.c_[0] if K else NULL
        self.geo.n_rows = &self.nr_[0] if K else NULL
        self.geo.n_cols = &self.nc_[0] if K else NULL
        self.geo.shape = &self.s_[0, 0] if K else NULL
        self.geo.bottom = &self.b_[0, 0] if K else NULL
        self.geo.top = &self.t_[0, 0] if K else NULL
        self.geo.cells = &self.cells_[0] if K else NULL
        self.geo.hole_base = &self.hole_base_[0] if K else NULL
        self.geo.col_cells = &self.colc_[0, 0] if K else NULL
        self.geo.inner_covers = &self.inner_[0, 0] if K else NULL

    @property
    def width(self):
        return self.geo.width

    @property
    def height(self):
        return self.geo.height

    @property
    def n_pieces(self):
        return self.geo.n_pieces

    cdef int _check_boards(self, const uint16_t[:, ::1] rows, pieces) except -1:
        if rows.shape[1] != self.geo.height:
            raise ValueError(f"rows must have {self.geo.height} columns (one per board row)")
        if pieces is not None and len(pieces) != rows.shape[0]:
            raise ValueError("pieces must have one entry per board")
        return 0

    def successors(self, const uint16_t[::1] rows, int piece):
        """Legal moves of ``piece`` on one board as ``[(placement, next_rows (tuple), lines), ...]``
        (the exact engine's ``Engine.successors``, for tests)."""
        cdef const Geo* g = &self.geo
        cdef Board b
        cdef uint16_t buf[2 * C_MAX_HEIGHT]
        cdef int k, y, lines, top, eroded
        if rows.shape[0] != g.height or not 0 <= piece < g.n_pieces:
            raise ValueError("successors: rows or piece out of range")
        b.rows = buf
        load_board(g, &rows[0], &b)
        out = []
        for k in range(g.first[piece], g.first[piece + 1]):
            y = landing(g, b.heights, k)
            if y < 0:
                continue
            lines = place(g, b.rows, b.top, k, y, buf + C_MAX_HEIGHT, &top, &eroded)
            out.append((k - g.first[piece], tuple([buf[C_MAX_HEIGHT + i] if i < top else 0
                                                   for i in range(g.height)]), lines))
        return out

    def check_board(self, const uint16_t[::1] rows):
        """-1 if ``rows`` is a board (``height`` rows of ``width`` bits, none
        full), else the first row that is not; raises if the length is wrong."""
        cdef int r
        if rows.shape[0] != self.geo.height:
            raise ValueError(f"rows must have {self.geo.height} entries")
        for r in range(self.geo.height):
            if rows[r] >= self.geo.full:
                return r
        return -1

    def afterstates_one(self, const uint16_t[::1] rows, int piece):
        """:meth:`afterstates` of one board, without threads: the same tuple.
        Raises ``ValueError`` naming ``rows`` unless it is a board (see
        :meth:`check_board`)."""
        cdef const Geo* g = &self.geo
        cdef int64_t m
        cdef int r
        if rows.shape[0] != g.height or not 0 <= piece < g.n_pieces:
            raise ValueError("afterstates_one: rows or piece out of range")
        for r in range(g.height):
            if rows[r] >= g.full:
                raise ValueError(f"rows: row {r} is {'full (it would have been cleared)' if rows[r] == g.full else f'not a bitmask of {g.width} bits'}")
        m = _count_moves(g, &rows[0], piece)
        out_rows = np.zeros((m, g.height), dtype=np.uint16)
        out_lines = np.empty(m, dtype=np.uint8)
        out_place = np.empty(m, dtype=np.int16)
        out_landing = np.empty(m, dtype=np.int16)
        out_height = np.empty(m, dtype=np.float64)
        out_eroded = np.empty(m, dtype=np.int16)
        cdef uint16_t[:, ::1] o_rows = out_rows
        cdef uint8_t[::1] o_lines = out_lines
        cdef int16_t[::1] o_place = out_place, o_landing = out_landing, o_eroded = out_eroded
        cdef double[::1] o_height = out_height
        if m:
            _fill_moves(g, &rows[0], piece, 0, &o_rows[0, 0], &o_lines[0], &o_place[0], &o_landing[0],
                        &o_height[0], &o_eroded[0])
        return (np.array([0, m], dtype=np.int64), out_rows, out_lines, out_place, out_landing, out_height,
                out_eroded)

    def afterstates(self, const uint16_t[:, ::1] rows, const int16_t[::1] pieces, int n_threads=1):
        """Every legal placement of ``pieces[i]`` on board ``rows[i]``, in CSR
        form: ``(offsets (n + 1,) int64, rows (m, height) uint16, lines (m,)
        uint8, placement (m,) int16, landing_row (m,) int16, landing_height (m,)
        float64, eroded (m,) int16)``,
        board i's afterstates being ``offsets[i]:offsets[i + 1]`` in placement order."""
        self._check_boards(rows, pieces)
        cdef Py_ssize_t n = rows.shape[0], i
        cdef int P = self.geo.n_pieces
        for i in range(n):
            if not 0 <= pieces[i] < P:
                raise ValueError(f"pieces: entry {i} is {pieces[i]}, not in [0, {P - 1}]")
        counts = np.zeros(n + 1, dtype=np.int64)
        cdef int64_t[::1] cnt = counts
        with nogil:
            for i in prange(n, num_threads=n_threads, schedule="static"):
                cnt[i + 1] = _count_moves(&self.geo, &rows[i, 0], pieces[i])
        offsets = np.cumsum(counts)
        cdef int64_t m = offsets[n]
        out_rows = np.empty((m, self.geo.height), dtype=np.uint16)
        out_lines = np.empty(m, dtype=np.uint8)
        out_place = np.empty(m, dtype=np.int16)
        out_landing = np.empty(m, dtype=np.int16)
        out_height = np.empty(m, dtype=np.float64)
        out_eroded = np.empty(m, dtype=np.int16)
        cdef double[::1] o_height = out_height
        cdef const int64_t[::1] off = offsets
        cdef uint16_t[:, ::1] o_rows = out_rows
        cdef uint8_t[::1] o_lines = out_lines
        cdef int16_t[::1] o_place = out_place, o_landing = out_landing, o_eroded = out_eroded
        if m:
            with nogil:
                for i in prange(n, num_threads=n_threads, schedule="static"):
                    _fill_moves(&self.geo, &rows[i, 0], pieces[i], off[i], &o_rows[0, 0], &o_lines[0],
                                &o_place[0], &o_landing[0], &o_height[0], &o_eroded[0])
        return offsets, out_rows, out_lines, out_place, out_landing, out_height, out_eroded

    def features(self, const uint16_t[:, ::1] rows, const int8_t[::1] codes, const double[::1] landing_height,
                 const int16_t[::1] eroded, double[:, ::1] out, int n_threads=1):
        """``out[i]`` = [1, features of board i in the order of ``codes``];
        the move features read ``landing_height[i]`` and ``eroded[i]`` (None
        when ``codes`` has none)."""
        self._check_boards(rows, None)
        cdef Py_ssize_t n = rows.shape[0], i
        cdef int j, d = 1
        for j in range(codes.shape[0]):
            if not 0 <= codes[j] < N_CODES:
                raise ValueError(f"feature code {codes[j]} out of range")
            if codes[j] == F_LANDING_HEIGHT and (landing_height is None or landing_height.shape[0] != n):
                raise ValueError("landing_height: one per board needed")
            if codes[j] == F_ERODED_CELLS and (eroded is None or eroded.shape[0] != n):
                raise ValueError("eroded: one per board needed")
            d += self.geo.width if codes[j] == F_HEIGHTS else self.geo.width - 1 if codes[j] == F_DIFFERENCES else 1
        if out.shape[0] != n or out.shape[1] != d:
            raise ValueError(f"out must be ({n}, {d})")
        if n == 0:
            return
        cdef const int8_t* cp = &codes[0] if codes.shape[0] else NULL
        cdef const double* lp = &landing_height[0] if landing_height is not None and n else NULL
        cdef const int16_t* ep = &eroded[0] if eroded is not None and n else NULL
        with nogil:
            for i in prange(n, num_threads=n_threads, schedule="static"):
                _features_one(&self.geo, &rows[i, 0], cp, <int>codes.shape[0], lp, ep, i, &out[i, 0])

    def greedy(self, const uint16_t[:, ::1] rows, const int16_t[::1] pieces, const int8_t[::1] codes,
               const double[::1] weights, const double[::1] line_reward, double discount,
               int16_t[::1] placement, double[::1] value, int n_threads=1):
        """For each board i, the greedy placement of ``pieces[i]`` (its number
        among the piece's placements, -1 if none is legal) and its value
        ``line_reward[lines] + discount * w . phi`` (0.0 if none)."""
        self._check_boards(rows, pieces)
        cdef Policy pol
        make_policy(&pol, codes, weights, line_reward, discount, 0.0, self.geo.width, self.geo.max_rows)
        cdef Py_ssize_t n = rows.shape[0], i, chunk, n_chunks = (rows.shape[0] + BOARDS_PER_CHUNK - 1) // BOARDS_PER_CHUNK
        cdef int P = self.geo.n_pieces
        if placement.shape[0] != n or value.shape[0] != n:
            raise ValueError("placement and value need one entry per board")
        for i in range(n):
            if not 0 <= pieces[i] < P:
                raise ValueError(f"pieces: entry {i} is {pieces[i]}, not in [0, {P - 1}]")
        cdef int status = 0
        with nogil:
            for chunk in prange(n_chunks, num_threads=n_threads, schedule="dynamic"):
                status |= _greedy_chunk(&self.geo, &pol, &rows[0, 0], &pieces[0], chunk * BOARDS_PER_CHUNK,
                                        min(n, (chunk + 1) * BOARDS_PER_CHUNK), &placement[0], &value[0])
        if status:
            raise MemoryError("greedy: out of memory")

    def play(self, const uint16_t[::1] start, const uint64_t[::1] seeds, int64_t max_placements,
             const double[::1] probabilities, const double[::1] scores,
             const int8_t[::1] codes, const double[::1] weights, const double[::1] line_reward,
             double discount, double epsilon,
             int64_t[::1] placements, int64_t[::1] lines, double[::1] points, int n_threads=1):
        """Play ``len(seeds)`` games from ``start``: game i seeded with
        ``seeds[i]`` writes ``placements[i]``, ``lines[i]`` and ``points[i]``
        (``scores[rows cleared]`` summed).  ``codes`` None: random placements;
        else the greedy policy of ``codes``, ``weights``, ``line_reward`` and
        ``discount``, exploring with chance ``epsilon``."""
        cdef Game G
        cdef Policy pol
        cdef Py_ssize_t n_games = seeds.shape[0], i
        cdef int status = 0
        cumulative = np.cumsum(probabilities)
        self._game(&G, &pol, start, max_placements, cumulative, scores, codes, weights, line_reward,
                   discount, epsilon)
        if placements.shape[0] != n_games or lines.shape[0] != n_games or points.shape[0] != n_games:
            raise ValueError("placements, lines and points need one entry per seed")
        if n_games == 0:
            return
        with nogil:
            for i in prange(n_games, num_threads=min(n_threads, n_games), schedule="dynamic", chunksize=GAMES_PER_CHUNK):
                status |= play_one(&G, seeds[i], &placements[i], &lines[i], &points[i], NULL)
        if status:
            raise MemoryError("play: out of memory")

    def sample(self, const uint16_t[::1] start, const uint64_t[::1] seeds, int64_t max_placements,
               const double[::1] probabilities, const double[::1] scores,
               const int8_t[::1] codes, const double[::1] weights, const double[::1] line_reward,
               double discount, double epsilon, int n_threads=1):
        """Play the games of :meth:`play` recording the boards: a list, per
        seed, of ``(rows (t, height) uint16, pieces (t,) int16)``, the boards
        before each placement and the piece drawn on each (t placements made,
        plus the last board when its piece fits nowhere)."""
        cdef Game G
        cdef Policy pol
        cdef Py_ssize_t n_games = seeds.shape[0], i
        cdef int status = 0
        cumulative = np.cumsum(probabilities)
        self._game(&G, &pol, start, max_placements, cumulative, scores, codes, weights, line_reward,
                   discount, epsilon)
        cdef Record* rec = <Record*>malloc(max(n_games, 1) * sizeof(Record))
        if rec == NULL:
            raise MemoryError("sample: out of memory")
        memset(rec, 0, max(n_games, 1) * sizeof(Record))
        cdef int64_t[::1] t_ = np.empty(max(n_games, 1), dtype=np.int64)
        cdef int64_t[::1] l_ = np.empty(max(n_games, 1), dtype=np.int64)
        cdef double[::1] p_ = np.empty(max(n_games, 1), dtype=np.float64)
        out = []
        try:
            if n_games:
                with nogil:
                    for i in prange(n_games, num_threads=min(n_threads, n_games), schedule="dynamic",
                                    chunksize=GAMES_PER_CHUNK):
                        status |= play_one(&G, seeds[i], &t_[i], &l_[i], &p_[i], &rec[i])
            if status:
                raise MemoryError("sample: out of memory")
            for i in range(n_games):
                rows = np.empty((rec[i].n, self.geo.height), dtype=np.uint16)
                pieces = np.empty(rec[i].n, dtype=np.int16)
                if rec[i].n:
                    _copy_record(&rec[i], rows, pieces, self.geo.height)
                out.append((rows, pieces))
        finally:
            for i in range(n_games):
                free(rec[i].rows)
                free(rec[i].pieces)
            free(rec)
        return out

    cdef int _game(self, Game* G, Policy* pol, const uint16_t[::1] start, int64_t max_placements,
                   const double[::1] cumulative, const double[::1] scores, const int8_t[::1] codes,
                   const double[::1] weights, const double[::1] line_reward, double discount,
                   double epsilon) except -1:
        """Fill ``G`` and ``pol``; ``cumulative``, the cumulative piece
        probabilities, must outlive the games."""
        if start.shape[0] != self.geo.height:
            raise ValueError(f"start must have {self.geo.height} rows")
        if cumulative.shape[0] != self.geo.n_pieces or scores.shape[0] < self.geo.max_rows + 1:
            raise ValueError("probabilities or scores have the wrong length")
        if max_placements < 0:
            raise ValueError("max_placements must be >= 0")
        make_policy(pol, codes, weights, line_reward, discount, epsilon, self.geo.width, self.geo.max_rows)
        G.g = &self.geo
        G.pol = pol
        G.cumulative = &cumulative[0]
        G.scores = &scores[0]
        G.start = &start[0]
        G.max_placements = max_placements
        return 0


