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

Board features (those of babytris.big.features, computed here without the GIL)
score afterstates for a one-step greedy policy: the placement with the
largest ``line_reward[lines] + discount * w . phi(afterstate)`` (the first one
in placement order among equals).  A placement that clears no row changes
only the rows and columns it covers, so its features are the board's totals
plus changes computed there; one that clears rows is scanned from its
landing row up, the rows below it summed once per board.  Games draw pieces
i.i.d. with xoshiro256** generators seeded per game exactly as
babytris.analysis._play does, so a game's course depends on its seed alone, never on
the threads.

The loops live in ``_playout`` (policies, games, the batch methods' work,
nogil) and ``_board.pxd`` (geometry and features, inline); this module holds
the Python-facing :class:`Engine`.  babytris.big.tetris builds the tables and
checks every argument; the functions here check only what would otherwise
touch memory out of bounds.
"""

from cython.parallel cimport prange, threadid
from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, int8_t, uint32_t, uint16_t, uint8_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

import numpy as np

from babytris.big._board cimport *
from babytris.big._playout cimport (
    Policy, Game, Record, make_policy, play_one, count_moves, fill_moves, features_one, greedy_chunk, copy_record,
)
from babytris.big._td cimport TDNet, TDSettings, td_games
from babytris.engine.signals cimport interrupted

#: The tallest board.
MAX_HEIGHT = 1024

cdef enum:
    # greedy(): chunks per thread between two looks for Ctrl-C (some ms).
    CHUNKS_PER_BLOCK = 8
    STOPPED = 2     # greedy's status after Ctrl-C (1: out of memory)
    # play(): games scheduled at a time (Ctrl-C stops the games under way
    # within a millisecond or so; the block's others are then skipped).
    GAMES_PER_BLOCK = 1 << 14
#: The widest board.
MAX_WIDTH = 16


# --------------------------------------------------------------------------
# The Python-facing engine.
# --------------------------------------------------------------------------

cdef class Engine:
    """Placement tables of one big-board game (built by ``babytris.big.tetris``).

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
        m = count_moves(g, &rows[0], piece)
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
            fill_moves(g, &rows[0], piece, 0, &o_rows[0, 0], &o_lines[0], &o_place[0], &o_landing[0],
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
                cnt[i + 1] = count_moves(&self.geo, &rows[i, 0], pieces[i])
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
                    fill_moves(&self.geo, &rows[i, 0], pieces[i], off[i], &o_rows[0, 0], &o_lines[0],
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
                features_one(&self.geo, &rows[i, 0], cp, <int>codes.shape[0], lp, ep, i, &out[i, 0])

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
        cdef Py_ssize_t block, block_end, block_chunks = CHUNKS_PER_BLOCK * max(n_threads, 1)
        # Blocks of chunks (some ms each), Ctrl-C looked for between them.
        for block in range(0, n_chunks, block_chunks):
            block_end = min(n_chunks, block + block_chunks)
            with nogil:
                for chunk in prange(block, block_end, num_threads=n_threads, schedule="dynamic"):
                    status |= greedy_chunk(&self.geo, &pol, &rows[0, 0], &pieces[0], chunk * BOARDS_PER_CHUNK,
                                            min(n, (chunk + 1) * BOARDS_PER_CHUNK), &placement[0], &value[0])
                if interrupted():
                    status = STOPPED
            if status:
                break
        if status == STOPPED:
            raise KeyboardInterrupt
        if status:
            raise MemoryError("greedy: out of memory")

    def play(self, const uint16_t[::1] start, const uint64_t[::1] seeds, int64_t max_placements,
             const double[::1] probabilities, const double[::1] scores,
             const int8_t[::1] codes, const double[::1] weights, const double[::1] line_reward,
             double discount, double epsilon,
             int64_t[::1] placements, int64_t[::1] lines, double[::1] points, int n_threads=1,
             bint random_ties=False):
        """Play ``len(seeds)`` games from ``start``: game i seeded with
        ``seeds[i]`` writes ``placements[i]``, ``lines[i]`` and ``points[i]``
        (``scores[rows cleared]`` summed).  ``codes`` None: random placements;
        else the greedy policy of ``codes``, ``weights``, ``line_reward`` and
        ``discount``, exploring with chance ``epsilon``, taking the first of
        equally good placements or with ``random_ties`` one at random."""
        cdef Game G
        cdef Policy pol
        cdef Py_ssize_t n_games = seeds.shape[0], i
        cdef int status = 0
        cumulative = np.cumsum(probabilities)
        self._game(&G, &pol, start, max_placements, cumulative, scores, codes, weights, line_reward,
                   discount, epsilon)
        pol.random_ties = random_ties
        if placements.shape[0] != n_games or lines.shape[0] != n_games or points.shape[0] != n_games:
            raise ValueError("placements, lines and points need one entry per seed")
        if n_games == 0:
            return
        cdef int stop = 0
        cdef int64_t ticks = 0
        cdef Py_ssize_t block, block_end
        G.stop, G.ticks = &stop, &ticks
        # Blocks of games, so that the games left after Ctrl-C are not even scheduled.
        for block in range(0, n_games, GAMES_PER_BLOCK):
            block_end = min(n_games, block + GAMES_PER_BLOCK)
            with nogil:
                for i in prange(block, block_end, num_threads=min(n_threads, block_end - block), schedule="dynamic",
                                chunksize=GAMES_PER_CHUNK):
                    status |= play_one(&G, seeds[i], &placements[i], &lines[i], &points[i], NULL, threadid() == 0)
            if stop or status:
                break
        if stop:
            raise KeyboardInterrupt
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
        cdef int stop = 0
        cdef int64_t ticks = 0
        G.stop, G.ticks = &stop, &ticks
        try:
            if n_games:
                with nogil:
                    for i in prange(n_games, num_threads=min(n_threads, n_games), schedule="dynamic",
                                    chunksize=GAMES_PER_CHUNK):
                        status |= play_one(&G, seeds[i], &t_[i], &l_[i], &p_[i], &rec[i], threadid() == 0)
            if stop:
                raise KeyboardInterrupt
            if status:
                raise MemoryError("sample: out of memory")
            for i in range(n_games):
                rows = np.empty((rec[i].n, self.geo.height), dtype=np.uint16)
                pieces = np.empty(rec[i].n, dtype=np.int16)
                if rec[i].n:
                    copy_record(&rec[i], rows, pieces, self.geo.height)
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
        G.stop = NULL
        G.ticks = NULL
        return 0

    def td_train(self, double[:, ::1] W1T, double[::1] b1, double[::1] w2, double[::1] b2,
                 uint64_t[::1] rng_state, const double[::1] probabilities, scores, double rate, double trace,
                 double discount, double placement_reward, double line_reward, double game_over, bint explore,
                 int64_t max_placements, int64_t[::1] lines, int64_t[::1] placements, int64_t[::1] explored,
                 bint toward_best=True, bint as_written=True):
        """TD(lambda) on ``len(lines)`` games from the empty board
        (babytris.big._td): trains the network ``W1T`` (W1 transposed,
        ``(width * height, hidden)``), ``b1``, ``w2`` and ``b2`` (one value) in
        place and writes each game's rows cleared, placements and explored
        moves.  ``scores`` (points by rows cleared) or None for
        ``placement_reward + line_reward * rows``.  ``rng_state`` (4 words)
        is read and advanced.  ``toward_best``: each step's target is the
        best move's ``r + discount * V`` (the paper's), else the move played's.
        ``as_written``: the best move maximises ``r + V`` and exploration
        weighs the afterstates' values (eq. 1 and 5 as the paper writes them),
        else both use ``r + discount * V``."""
        cdef TDNet net
        cdef TDSettings s
        cdef int hidden = W1T.shape[1]
        cdef int64_t n_games = lines.shape[0]
        cdef int status
        cdef const double[::1] sc
        if W1T.shape[0] != self.geo.width * self.geo.height or hidden < 1:
            raise ValueError(f"W1T must be ({self.geo.width * self.geo.height}, hidden)")
        if b1.shape[0] != hidden or w2.shape[0] != hidden or b2.shape[0] != 1 or rng_state.shape[0] != 4:
            raise ValueError("b1 and w2 need one entry per hidden unit, b2 one, rng_state four")
        if placements.shape[0] != n_games or explored.shape[0] != n_games:
            raise ValueError("lines, placements and explored need one entry per game")
        if probabilities.shape[0] != self.geo.n_pieces:
            raise ValueError(f"probabilities must have {self.geo.n_pieces} entries")
        if max_placements < 0:
            raise ValueError("max_placements must be >= 0")
        cumulative = np.cumsum(probabilities)
        cdef const double[::1] cum = cumulative
        s.scores = NULL
        if scores is not None:
            sc = np.ascontiguousarray(scores, dtype=np.float64)
            if sc.shape[0] < self.geo.max_rows + 1:
                raise ValueError(f"scores needs {self.geo.max_rows + 1} entries (0 to {self.geo.max_rows} rows)")
            s.scores = &sc[0]
        s.rate, s.trace, s.discount = rate, trace, discount
        s.placement_reward, s.line_reward, s.game_over = placement_reward, line_reward, game_over
        s.cumulative = &cum[0]
        s.explore = explore
        s.toward_best = toward_best
        s.as_written = as_written
        s.max_placements = max_placements
        eW1T = np.empty_like(W1T)
        eb1 = np.empty(hidden)
        ew2 = np.empty(hidden)
        cdef double[:, ::1] e1 = eW1T
        cdef double[::1] e2 = eb1, e3 = ew2
        net.n_in, net.hidden = W1T.shape[0], hidden
        net.W1T, net.b1, net.w2, net.b2 = &W1T[0, 0], &b1[0], &w2[0], &b2[0]
        net.eW1T, net.eb1, net.ew2 = &e1[0, 0], &e2[0], &e3[0]
        if n_games == 0:
            return
        with nogil:
            status = td_games(&self.geo, &net, &s, &rng_state[0], n_games, &lines[0], &placements[0], &explored[0])
        if status == 1:
            raise KeyboardInterrupt
        if status:
            raise MemoryError("td_train: out of memory")
