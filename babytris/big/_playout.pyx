# cython: language_level=3
"""Big-board playout kernels: the board totals and well runs a placement's
features change from, policies (random, or the one-step greedy choice of
``line_reward[lines] + discount * w . phi(afterstate)``), whole games, and
the per-board work of the batch methods; no Python objects, no GIL.

Games draw pieces i.i.d. with xoshiro256** generators seeded per game exactly
as babytris.analysis._play does (the generator is babytris/rng.pxd, shared so a seed
means the same piece sequence in both engines), so a game's course depends on
its seed alone, never on the threads.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, int8_t, uint32_t, uint16_t, uint8_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset
from libc.math cimport fabs

from babytris.engine.rng cimport Rng, rng_seed, rng_uniform, rng_below
from babytris.engine.signals cimport interrupted
from babytris.big._board cimport *


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
        elif codes[i] == F_WELL_RUNS:
            needs |= NEED_WELLS
        elif codes[i] == F_WELLS or codes[i] == F_COLUMN_TRANSITIONS:
            needs |= NEED_SCAN
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
    """Mean of the piece's lowest and highest rows where it landed, counted
    from 0 (mdptetris: the bottom row plus half the piece's height less one)."""
    return y + 0.5 * (g.n_rows[k] - 1)


# --------------------------------------------------------------------------
# Policies (the Policy struct, which _engine fills, is declared in _playout.pxd).
# --------------------------------------------------------------------------

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


cdef inline bint better(double v, double best_v, int best, int* ties, Rng* rng) noexcept nogil:
    """Whether a placement worth ``v`` replaces the best so far (``best`` < 0:
    none yet): a larger value; with ``rng``, also an equal one (to rounding:
    values are summed in different orders) with chance 1 / (equals seen), so
    each of the equal best is chosen with the same chance."""
    cdef double slack
    if best < 0:
        ties[0] = 1
        return True
    if rng == NULL:
        return v > best_v
    slack = 1e-9 * (1.0 + fabs(best_v))
    if v > best_v + slack:
        ties[0] = 1
        return True
    if v >= best_v - slack:
        ties[0] += 1
        return rng_below(rng, ties[0]) == 0
    return False


cdef inline int greedy_move(const Geo* g, const Board* b, int p, const Policy* pol, Work* work,
                            double* best_value, Rng* rng) noexcept nogil:
    """The placement (global number) of p on b with the largest
    ``line_reward[lines] + discount * w . phi(afterstate)``: the first among
    equals, or with ``rng`` one of them at random; -1 if none is legal."""
    cdef int k, y, lines, m, eroded, best = -1, ties = 0
    cdef double v, best_v = 0.0
    if g.width > 1 and not pol.needs & NEED_SCAN:
        return lean_move(g, b, p, pol, work, best_value, rng)
    # A 1-wide board's empty rows are wells, which lean_move does not count, and features
    # lean_move cannot update (NEED_SCAN): scan every afterstate.
    prepare_prefix(g, b, pol.needs, &work.pre)
    for k in range(g.first[p], g.first[p + 1]):
        y = landing(g, b.heights, k)
        if y < 0:
            continue
        lines = build_after(g, b, k, y, work.scratch, &m, &eroded)
        after_features(g, b, &work.pre, y, work.scratch, m, pol.needs, &work.feats)
        v = pol.line_reward[lines] + pol.discount * linear_value(pol, &work.feats, g.width,
                                                                 landing_height_of(g, k, y), eroded)
        if better(v, best_v, best, &ties, rng):
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


cdef int lean_move(const Geo* g, const Board* b, int p, const Policy* pol, Work* work, double* best_value,
                   Rng* rng) noexcept nogil:
    """greedy_move on boards at least 2 wide: a placement that clears no row
    is worth the board's value plus the changes its rows and columns make,
    weighted as they come; one that clears rows is scanned (slow_value)."""
    cdef Stats* st = &work.stats
    cdef int W = g.width, H = g.height, top = b.top, k, j, i, c, y, t, nr, nc, col, best = -1, ties = 0
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
    cdef double w_wells = pol.scalar[F_WELL_RUNS], w_rt = pol.scalar[F_ROW_TRANSITIONS]
    cdef double w_ct = pol.scalar[F_COLUMN_TRANSITIONS_OPEN_TOP], w_filled = pol.scalar[F_FILLED], w_lh = pol.landing
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
            v = r0 + discount * (base + dv + w_lh * (y + 0.5 * (nr - 1)))
            if better(v, best_v, best, &ties, rng):
                best = k
                best_v = v
            continue
        v = slow_value(g, b, pol, work, k, y)   # it clears a row
        if better(v, best_v, best, &ties, rng):
            best = k
            best_v = v
    best_value[0] = best_v
    return best


cdef inline int choose(const Geo* g, const Board* b, int p, const Policy* pol, Rng* rng, Work* work) noexcept nogil:
    cdef double v
    if not pol.greedy or pol.epsilon >= 1.0 or (pol.epsilon > 0.0 and rng_uniform(rng) < pol.epsilon):
        return random_move(g, b, p, rng)
    return greedy_move(g, b, p, pol, work, &v, rng if pol.random_ties else NULL)


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
# Games (Game and Record are declared in _playout.pxd).
# --------------------------------------------------------------------------

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


cdef enum:
    # The caller's thread looks for Ctrl-C every this many of its placements
    # (a placement takes a microsecond or so on 10x20).
    WATCH_EVERY = 1024


cdef int play_one(const Game* G, uint64_t seed, int64_t* placements, int64_t* lines, double* points,
                  Record* rec, bint watch) noexcept nogil:
    """One game from ``G.start``: draw a piece, place it by the policy, until
    ``max_placements`` or the piece fits nowhere, or ``G.stop`` is set.
    Writes the placements made, rows cleared and points; with ``rec``, each
    board and the piece drawn on it (the last one too when it fits nowhere).
    With ``watch`` (on the caller's thread only, which holds no GIL), looks
    for Ctrl-C every WATCH_EVERY placements and sets ``G.stop``.  -1 if out
    of memory."""
    cdef const Geo* g = G.g
    cdef Rng rng
    cdef Work work
    cdef Board* b = &work.board
    cdef int P = g.n_pieces, p, j, k, y, n, eroded, status = 0
    cdef int64_t t = 0, total_lines = 0
    cdef double u, total = 0.0
    if G.stop != NULL and stopped(G.stop):     # the games left after Ctrl-C cost nothing
        placements[0] = lines[0] = 0
        points[0] = 0.0
        return 0
    if work_alloc(&work, g.height) < 0:
        placements[0] = lines[0] = 0
        points[0] = 0.0
        return -1
    load_board(g, G.start, b)
    rng_seed(&rng, seed)
    while t < G.max_placements:
        if G.stop != NULL:
            if watch:
                G.ticks[0] += 1
                if G.ticks[0] % WATCH_EVERY == 0 and interrupted():
                    G.stop[0] = 1
            if stopped(G.stop):
                break
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

cdef int64_t count_moves(const Geo* g, const uint16_t* rows, int p) noexcept nogil:
    cdef int16_t heights[C_MAX_WIDTH]
    cdef int k, top = board_top(rows, g.height)
    cdef int64_t n = 0
    heights_of(rows, top, g.width, g.full, heights)
    for k in range(g.first[p], g.first[p + 1]):
        n += landing(g, heights, k) >= 0
    return n


cdef void fill_moves(const Geo* g, const uint16_t* rows, int p, int64_t at, uint16_t* out_rows,
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


cdef void features_one(const Geo* g, const uint16_t* rows, const int8_t* codes, int n_codes,
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


cdef int greedy_chunk(const Geo* g, const Policy* pol, const uint16_t* rows, const int16_t* pieces,
                       Py_ssize_t lo, Py_ssize_t hi, int16_t* placement, double* value) noexcept nogil:
    """Greedy placements of boards lo..hi-1; -1 if out of memory."""
    cdef Work work
    cdef int k
    cdef Py_ssize_t i
    if work_alloc(&work, g.height) < 0:
        return -1
    for i in range(lo, hi):
        load_board(g, rows + i * g.height, &work.board)
        k = greedy_move(g, &work.board, pieces[i], pol, &work, &value[i], NULL)
        placement[i] = <int16_t>(k - g.first[pieces[i]]) if k >= 0 else -1
        if k < 0:
            value[i] = 0.0
    free(work.memory)
    return 0


cdef void copy_record(const Record* rec, uint16_t[:, ::1] rows, int16_t[::1] pieces, int height):
    memcpy(&rows[0, 0], rec.rows, rec.n * height * sizeof(uint16_t))
    memcpy(&pieces[0], rec.pieces, rec.n * sizeof(int16_t))
