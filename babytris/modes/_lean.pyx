# cython: language_level=3
"""Lean exact solves: the reachable boards held as a bitmap over every
possible board with a rank directory (a board's index is the number of
reachable boards below it), and Bellman sweeps that recompute each move from
the rules instead of reading a stored move table.

Per possible board one bit, per 64 of them a 4-byte rank; per reachable board
its value (8 bytes).  The search queue (4 bytes a board) lives only during
the search.  Boards of up to 32 cells (4x8: a 512 MiB bitmap).
"""

from cython.parallel cimport prange
from libc.math cimport fabs
from libc.stdint cimport uint64_t, uint32_t, int64_t, int32_t, int16_t, uint8_t
from libc.stdlib cimport malloc, free

import numpy as np

from babytris.engine._types cimport board_t, prefetch
from babytris.engine.signals cimport interrupted
from babytris.engine._core cimport engine_geometry, smeared_board, drop_piece
from babytris.engine._geometry cimport Geometry
from babytris.engine._vec cimport Vec, vec_init, vec_reserve, vec_free


cdef extern from *:
    """
    #define BABYTRIS_POPCOUNT64(x) __builtin_popcountll(x)
    #define BABYTRIS_CTZ64(x) __builtin_ctzll(x)
    #define BABYTRIS_TOP64(x) (63 - __builtin_clzll(x))
    """
    int popcount64 "BABYTRIS_POPCOUNT64"(uint64_t x) noexcept nogil
    int ctz64 "BABYTRIS_CTZ64"(uint64_t x) noexcept nogil
    int top64 "BABYTRIS_TOP64"(uint64_t x) noexcept nogil    # the highest set bit


#: The largest board (in cells) the lean mode holds: its bitmap has 2**cells bits.
MAX_CELLS = 32
cdef enum:
    MAX_PLACEMENTS = 256       # of all pieces together (one board's moves are gathered first)
    WORDS_PER_BLOCK = 256      # words of the bitmap per block of a threaded sweep
    BLOCKS_PER_ROUND = 4096    # blocks between checks for Ctrl-C (67 M possible boards)
    COMBINE_MEAN = 0           # pieces drawn: the mean weighted by the probabilities
    COMBINE_MIN = 1            # an opponent gives the least valuable piece


cdef inline int64_t index_of(const uint64_t* bits, const uint32_t* ranks, board_t b) noexcept nogil:
    """The index of reachable board b: the reachable boards below it."""
    cdef uint64_t w = b >> 6
    return <int64_t>ranks[w] + popcount64(bits[w] & ((<uint64_t>1 << (b & 63)) - 1))


cdef class LeanTable:
    """The boards reachable from ``start`` under an engine's rules (at most
    :data:`MAX_CELLS` cells), as a bitmap with ranks; and the sweeps over
    them (:class:`LeanSweeper`).  ``max_boards``: stop (``status = -2``)
    once more boards than this are found; ``status = -4`` when interrupted."""

    cdef object engine                 # keeps the geometry alive
    cdef const Geometry* g
    cdef readonly object bits          # uint64, 2**cells / 64 words
    cdef readonly object ranks         # uint32, reachable boards before each word
    cdef readonly int64_t n_boards
    cdef readonly Py_ssize_t n_words
    cdef readonly int cells
    cdef readonly int status
    cdef const uint64_t* b
    cdef const uint32_t* r

    def __init__(self, engine, uint64_t start, int64_t max_boards):
        self.engine = engine
        self.g = engine_geometry(engine)
        self.cells = self.g.width * self.g.height
        if self.cells > MAX_CELLS:
            raise ValueError(f"lean mode holds boards of at most {MAX_CELLS} cells, got {self.cells}")
        if self.g.first[self.g.n_pieces] > MAX_PLACEMENTS:
            raise ValueError(f"lean mode takes at most {MAX_PLACEMENTS} placements of all pieces together")
        if start >> self.cells:
            raise ValueError(f"start must be a board in [0, 2**{self.cells}), got {start}")
        n_words = max(1, (<uint64_t>1 << self.cells) // 64)
        self.n_words = n_words
        self.bits = np.zeros(n_words, dtype=np.uint64)
        cdef uint64_t[::1] bits = self.bits
        cdef int64_t found = 0
        with nogil:
            self.status = _search(self.g, &bits[0], <uint32_t>start, max_boards, &found)
        self.n_boards = found
        self.ranks = np.empty(n_words, dtype=np.uint32)
        cdef uint32_t[::1] ranks = self.ranks
        cdef Py_ssize_t w
        cdef uint64_t running = 0
        with nogil:
            for w in range(<Py_ssize_t>n_words):
                ranks[w] = <uint32_t>running
                running += popcount64(bits[w])
        self.b = &bits[0]
        self.r = &ranks[0]

    def index(self, const uint64_t[::1] boards):
        """Each board's index (int64), -1 where it is not reachable (or not a board)."""
        out = np.empty(boards.shape[0], dtype=np.int64)
        cdef int64_t[::1] o = out
        cdef Py_ssize_t i
        cdef board_t x
        for i in range(boards.shape[0]):
            x = boards[i]
            if x >> self.cells or not (self.b[x >> 6] >> (x & 63)) & 1:
                o[i] = -1
            else:
                o[i] = index_of(self.b, self.r, x)
        return out

    def boards(self):
        """Every reachable board in index order (uint64 array)."""
        out = np.empty(self.n_boards, dtype=np.uint64)
        cdef uint64_t[::1] o = out
        cdef Py_ssize_t w, n = 0
        cdef uint64_t word
        for w in range(self.n_words):
            word = self.b[w]
            while word:
                o[n] = (<uint64_t>w << 6) | <uint64_t>ctz64(word)
                n += 1
                word &= word - 1
        return out

    def state_values(self, const uint64_t[::1] boards, const double[::1] W, const double[::1] scores,
                     double discount, double slack=0.0):
        """``(values, moves)`` of reachable ``boards``, each ``(n, n_pieces)``:
        a state's value, the best of its moves' ``scores[lines] + discount *
        W[next]`` (0 where none fits), and the first move (its number among
        the piece's placements) within ``slack`` of it (-1 where none)."""
        cdef int P = self.g.n_pieces
        cdef Py_ssize_t n = boards.shape[0], i
        self._check(W, scores)
        for i in range(n):
            if boards[i] >> self.cells or not (self.b[boards[i] >> 6] >> (boards[i] & 63)) & 1:
                raise ValueError(f"boards[{i}] = {boards[i]} is not reachable")
        values = np.zeros((n, P))
        moves = np.full((n, P), -1, dtype=np.int16)
        cdef double[:, ::1] v = values
        cdef int16_t[:, ::1] m = moves
        cdef double q[MAX_PLACEMENTS]
        cdef int ok[MAX_PLACEMENTS]
        cdef int p, k
        cdef double best
        for i in range(n):
            _move_values(self.g, self.b, self.r, boards[i], &W[0], &scores[0], discount, q, ok)
            for p in range(P):
                best = 0.0
                for k in range(self.g.first[p], self.g.first[p + 1]):
                    if ok[k] and (m[i, p] < 0 or q[k] > best):
                        best = q[k]
                        m[i, p] = k - self.g.first[p]
                v[i, p] = best
                for k in range(self.g.first[p], self.g.first[p + 1]):
                    if ok[k] and q[k] >= best - slack:
                        m[i, p] = k - self.g.first[p]
                        break
        return values, moves

    cdef _check(self, const double[::1] W, const double[::1] scores):
        if W.shape[0] != self.n_boards:
            raise ValueError(f"W must have one value per board ({self.n_boards}), got {W.shape[0]}")
        cdef int k, tallest = 0
        for k in range(self.g.first[self.g.n_pieces]):
            tallest = max(tallest, <int>self.g.rows[k])
        if scores.shape[0] < tallest + 1:
            raise ValueError(f"scores must cover 0..{tallest} rows cleared (the tallest placement)")


cdef int _search(const Geometry* g, uint64_t* bits, uint32_t start, int64_t max_boards,
                 int64_t* found) noexcept nogil:
    """Breadth-first search from ``start``, marking boards in ``bits``; a queue of 4-byte boards."""
    cdef Vec queue
    cdef size_t head = 0
    cdef int k, lines
    cdef board_t b, nb, sm
    cdef uint64_t bit
    vec_init(&queue, sizeof(uint32_t))
    if vec_reserve(&queue, 1024) != 0:
        return -1
    (<uint32_t*>queue.data)[0] = start
    queue.size = 1
    bits[start >> 6] |= (<uint64_t>1) << (start & 63)
    while head < queue.size:
        b = (<uint32_t*>queue.data)[head]
        sm = smeared_board(g, b)
        for k in range(g.first[g.n_pieces]):
            if not drop_piece(g, b, sm, k, &nb, &lines):
                continue
            bit = (<uint64_t>1) << (nb & 63)
            if bits[nb >> 6] & bit:
                continue
            bits[nb >> 6] |= bit
            if <int64_t>queue.size >= max_boards:
                found[0] = queue.size
                vec_free(&queue)
                return -2
            if vec_reserve(&queue, queue.size + 1) != 0:
                found[0] = queue.size
                vec_free(&queue)
                return -1
            (<uint32_t*>queue.data)[queue.size] = <uint32_t>nb
            queue.size += 1
        head += 1
        if head % 65536 == 0 and interrupted():
            found[0] = queue.size
            vec_free(&queue)
            return -4
    found[0] = queue.size
    vec_free(&queue)
    return 0


cdef inline void _move_values(const Geometry* g, const uint64_t* bits, const uint32_t* ranks, board_t b,
                              const double* W, const double* scores, double discount, double* q,
                              int* ok) noexcept nogil:
    """Every placement k on b: ``ok[k]`` whether it is a move, ``q[k]`` its
    value; the loads of the next boards' ranks and values are started early."""
    cdef int k, lines, n = g.first[g.n_pieces]
    cdef board_t sm = smeared_board(g, b)
    cdef board_t nb[MAX_PLACEMENTS]
    cdef int n_lines[MAX_PLACEMENTS]
    cdef int64_t j[MAX_PLACEMENTS]
    for k in range(n):
        ok[k] = drop_piece(g, b, sm, k, &nb[k], &n_lines[k])
        if ok[k]:
            prefetch(&bits[nb[k] >> 6])
            prefetch(&ranks[nb[k] >> 6])
    for k in range(n):
        if ok[k]:
            j[k] = index_of(bits, ranks, nb[k])
            prefetch(&W[j[k]])
    for k in range(n):
        if ok[k]:
            q[k] = scores[n_lines[k]] + discount * W[j[k]]


cdef double _backup(const Geometry* g, const uint64_t* bits, const uint32_t* ranks, board_t b,
                    int64_t i, double* W, float* change, const double* scores, const double* probs,
                    double discount, int combine) noexcept nogil:
    """One Bellman backup of board b (index i) in place; returns |change|
    (0 for a board where nothing fits: it keeps its value).  ``change``, if
    not NULL, receives the change (new - old; 0 where nothing fits)."""
    cdef double q[MAX_PLACEMENTS]
    cdef int ok[MAX_PLACEMENTS]
    cdef int p, k
    cdef bint found, any_move = False
    cdef double best, w = 0.0, delta
    _move_values(g, bits, ranks, b, W, scores, discount, q, ok)
    for p in range(g.n_pieces):
        best = 0.0     # no move fits: game over, worth 0
        found = False
        for k in range(g.first[p], g.first[p + 1]):
            if ok[k] and (not found or q[k] > best):
                best = q[k]
                found = True
        any_move = any_move or found
        if combine == COMBINE_MEAN:
            w += probs[p] * best
        elif p == 0 or best < w:
            w = best
    if not any_move:
        if change != NULL:
            change[i] = 0.0
        return 0.0
    delta = fabs(w - W[i])
    if change != NULL:
        change[i] = <float>(w - W[i])
    W[i] = w
    return delta if delta == delta else 1e308   # a NaN must not pass as converged


cdef class LeanSweeper:
    """Value-iteration sweeps over a :class:`LeanTable`, in place on the board
    values ``W``: layer by layer (boards grouped by ``layer_of_residue[cells
    mod len]``, no move leading into its own layer), threads sharing a layer;
    with one layer, from the largest board down on one thread.  ``combine``:
    0 for drawn pieces (``probs``), 1 for an opponent giving the least
    valuable piece.  Rewards are ``scores[rows cleared]``; a state with no
    move is worth 0."""

    cdef LeanTable table
    cdef object arrays
    cdef double* W
    cdef const double* scores
    cdef const double* probs
    cdef double discount
    cdef int combine
    cdef int n_layers
    cdef uint8_t layer_of[64]
    cdef int residues
    cdef public int n_threads

    def __init__(self, LeanTable table, double[::1] W, const double[::1] scores, const double[::1] probs,
                 double discount, const int64_t[::1] layer_of_residue, *, int combine=COMBINE_MEAN,
                 int n_threads=1):
        cdef int i
        table._check(W, scores)
        if probs.shape[0] != table.g.n_pieces:
            raise ValueError("probs must have one entry per piece")
        if not 0.0 <= discount <= 1.0:
            raise ValueError(f"discount must be in [0, 1], got {discount}")
        if combine not in (COMBINE_MEAN, COMBINE_MIN):
            raise ValueError(f"combine must be 0 (drawn) or 1 (least valuable piece), got {combine}")
        if not 1 <= layer_of_residue.shape[0] <= 64:
            raise ValueError("layer_of_residue must have 1 to 64 entries")
        if n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        self.n_layers = 1
        for i in range(layer_of_residue.shape[0]):
            if not 0 <= layer_of_residue[i] < 64:
                raise ValueError("layer_of_residue: layers must be in [0, 64)")
            self.layer_of[i] = <uint8_t>layer_of_residue[i]
            self.n_layers = max(self.n_layers, <int>layer_of_residue[i] + 1)
        self.residues = layer_of_residue.shape[0]
        self.table = table
        self.arrays = (W, scores, probs)
        self.W = &W[0] if W.shape[0] else NULL
        self.scores = &scores[0]
        self.probs = &probs[0]
        self.discount = discount
        self.combine = combine
        self.n_threads = n_threads

    def greedy_sweep(self, V_prev=None, float[::1] changes=None):
        """One sweep over every board; returns the largest change of a
        board's value.  ``changes``, if given (float32, a board each),
        receives each board's change: the values before the sweep are the
        values after it minus these, to float32's precision, at half the
        memory of a copy (``V_prev``: no state values are kept; must be
        empty or None)."""
        if V_prev is not None and len(V_prev):
            raise ValueError("greedy_sweep: the lean sweeps keep no state values (V_prev must be empty)")
        if changes is not None and changes.shape[0] != self.table.n_boards:
            raise ValueError("greedy_sweep: changes shape does not match")
        if self.table.n_boards == 0:
            return 0.0
        cdef float* prev = &changes[0] if changes is not None else NULL
        cdef Py_ssize_t n_words = self.table.n_words
        cdef Py_ssize_t n_blocks = (n_words + WORDS_PER_BLOCK - 1) // WORDS_PER_BLOCK, k
        cdef double* block_residual = <double*>malloc(n_blocks * sizeof(double))
        cdef double residual = 0.0
        cdef int layer
        cdef Py_ssize_t first, last
        cdef bint stopped = False
        if block_residual == NULL:
            raise MemoryError("greedy_sweep: cannot allocate")
        try:
            with nogil:
                if self.n_layers == 1:
                    residual = self._descending(prev, &stopped)
                else:
                    for layer in range(self.n_layers):
                        # In rounds, so that Ctrl-C is seen within a fraction of a second.
                        first = 0
                        while first < n_blocks and not stopped:
                            last = first + BLOCKS_PER_ROUND
                            if last > n_blocks:
                                last = n_blocks
                            for k in prange(first, last, num_threads=self.n_threads, schedule="dynamic"):
                                block_residual[k] = self._block(k, layer, prev)
                            stopped = interrupted()
                            first = last
                        if stopped:
                            break
                        for k in range(n_blocks):
                            if block_residual[k] > residual:
                                residual = block_residual[k]
        finally:
            free(block_residual)
        if stopped:
            raise KeyboardInterrupt
        return residual

    def jump(self, double step, float[::1] changes not None):
        """Aitken's jump along the last sweep's changes: ``W += step *
        changes``, then ``changes`` zeroed."""
        if changes.shape[0] != self.table.n_boards:
            raise ValueError("jump: changes shape does not match")
        cdef Py_ssize_t i, n = changes.shape[0]
        cdef double* W = self.W
        with nogil:
            for i in prange(n, num_threads=self.n_threads, schedule="static"):
                W[i] += step * changes[i]
                changes[i] = 0.0

    def evaluation_sweep(self, changes=None):
        raise NotImplementedError("the lean sweeps are value iteration only (no policy is stored)")

    cdef double _block(self, Py_ssize_t block, int layer, float* prev) noexcept nogil:
        cdef const uint64_t* bits = self.table.b
        cdef const uint32_t* ranks = self.table.r
        cdef Py_ssize_t w, last = min((block + 1) * WORDS_PER_BLOCK, self.table.n_words)
        cdef uint64_t word
        cdef int64_t i
        cdef board_t b
        cdef double residual = 0.0, d
        for w in range(block * WORDS_PER_BLOCK, last):
            word = bits[w]
            i = ranks[w]
            while word:
                b = (<board_t>w << 6) | <board_t>ctz64(word)
                word &= word - 1
                if self.layer_of[popcount64(b) % self.residues] == layer:
                    d = _backup(self.table.g, bits, ranks, b, i, self.W, prev, self.scores, self.probs,
                                self.discount, self.combine)
                    if d > residual:
                        residual = d
                i += 1
        return residual

    cdef double _descending(self, float* prev, bint* stopped) noexcept nogil:
        cdef const uint64_t* bits = self.table.b
        cdef const uint32_t* ranks = self.table.r
        cdef Py_ssize_t w
        cdef uint64_t word
        cdef int64_t i
        cdef int top
        cdef board_t b
        cdef double residual = 0.0, d
        for w in range(self.table.n_words - 1, -1, -1):
            if w % 65536 == 0 and interrupted():
                stopped[0] = True
                return residual
            word = bits[w]
            i = ranks[w] + popcount64(word)
            while word:
                top = top64(word)
                word &= ~((<uint64_t>1) << top)
                i -= 1
                b = (<board_t>w << 6) | <board_t>top
                d = _backup(self.table.g, bits, ranks, b, i, self.W, prev, self.scores, self.probs,
                            self.discount, self.combine)
                if d > residual:
                    residual = d
        return residual

