"""The big-board engine's shared C declarations and inline helpers: board
geometry (placement tables, row bitmask boards, drops and line clears) and
the features of a board or afterstate, computed without the GIL.

A board is ``height`` uint16 rows, row 0 at the bottom, bit ``c`` of a row its
column ``c``.  Everything here is ``inline`` (compiled into each module that
cimports it: ``_playout`` and ``_engine``), so the hot loops pay no call.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, int8_t, uint32_t, uint16_t, uint8_t
from libc.string cimport memcpy, memset

cdef enum:
    C_MAX_WIDTH = 16
    C_MAX_HEIGHT = 1024
    # Boards handed to a thread at a time by the batch methods.
    BOARDS_PER_CHUNK = 256
    # Games handed to a thread at a time (they differ in length).
    GAMES_PER_CHUNK = 1

# Features, by code: the order of babytris.big.tetris.FEATURES.  The first eight
# are the board's scalar features, Feats.v's slots.
cdef enum:
    F_MAX_HEIGHT = 0
    F_HOLES = 1
    F_COVERS = 2
    F_BUMPINESS = 3
    F_WELL_RUNS = 4             # runs of well cells, a run of d counting 1 + ... + d
    F_ROW_TRANSITIONS = 5
    F_COLUMN_TRANSITIONS_OPEN_TOP = 6
    F_FILLED = 7
    F_WELLS = 8                 # Dellacherie's (mdptetris): each well cell counts 1 + the empty cells under it
    F_COLUMN_TRANSITIONS = 9    # Dellacherie's (mdptetris): the row above the stack is empty, even above the board
    F_HEIGHTS = 10              # width values
    F_DIFFERENCES = 11          # width - 1 values
    F_LANDING_HEIGHT = 12
    F_ERODED_CELLS = 13
    N_CODES = 14
    N_SCALARS = 10

# What a set of features needs computed beyond transitions, filled cells and height.
cdef enum:
    NEED_HEIGHTS = 1            # the column heights (heights, differences, bumpiness)
    NEED_WELLS = 2              # well runs
    NEED_COVERS = 4
    NEED_SUM_HEIGHTS = 8        # their sum (holes)
    NEED_SCAN = 16              # features only a scan of the whole afterstate gives (Dellacherie's wells,
                                # column transitions against the row above the board): no incremental values


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
    f.v[F_COLUMN_TRANSITIONS_OPEN_TOP] = ct
    f.v[F_ROW_TRANSITIONS] = rt + 2 * (H - n)
    f.v[F_FILLED] = filled
    f.v[F_MAX_HEIGHT] = n if m > 0 else 0
    if pre != NULL:
        f.v[F_COLUMN_TRANSITIONS_OPEN_TOP] += pre.ct[y]
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
        f.v[F_WELL_RUNS] = wells
    if needs & NEED_SCAN:
        # the top row against the empty row above the board (counted only when the stack reaches it)
        f.v[F_COLUMN_TRANSITIONS] = f.v[F_COLUMN_TRANSITIONS_OPEN_TOP] + (g.pc[s[m - 1]] if n == H and m > 0 else 0)
        f.v[F_WELLS] = dellacherie_wells(g, b, y, s, m, f.v[F_MAX_HEIGHT])
    if needs & NEED_COVERS:
        solid = pre.solid[y] if pre != NULL else 0
        t = pre.solid_mask[y] if pre != NULL else full
        for i in range(m):
            t &= s[i]
            if not t:
                break
            solid += g.pc[t]
        f.v[F_COVERS] = f.v[F_FILLED] - solid


cdef inline int64_t dellacherie_wells(const Geo* g, const Board* b, int y, const uint16_t* s, int m,
                                      int64_t top) noexcept nogil:
    """Dellacherie's wells as mdptetris computes them: every well cell (empty,
    its left and right neighbours filled, the walls counting as filled) in
    the rows below ``top`` counts 1 plus the empty cells right under it in its
    column.  The board is ``b``'s rows below y and ``s[0:m]`` from y up."""
    cdef int16_t empty_run[C_MAX_WIDTH]  # empty cells right under the current row, per column
    cdef int r, c
    cdef uint32_t row, w
    cdef int64_t total = 0
    for c in range(g.width):
        empty_run[c] = 0
    for r in range(top):
        row = b.rows[r] if r < y else s[r - y]
        w = g.wc[row]
        while w:
            c = lowest_bit(w)
            total += 1 + empty_run[c]
            w &= w - 1
        for c in range(g.width):
            empty_run[c] = 0 if (row >> c) & 1 else empty_run[c] + 1
    return total


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
