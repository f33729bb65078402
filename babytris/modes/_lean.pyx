# cython: language_level=3
"""Lean exact solves: the reachable boards held as a bitmap over every
possible board with a rank directory (a board's index is the number of
reachable boards below it), and Bellman sweeps that recompute each move from
the rules instead of reading a stored move table: greedy sweeps recompute
every move and keep each state's chosen one, evaluation sweeps read only that.

Per possible board one bit, per 64 of them a 4-byte rank; per reachable board
its value (8 bytes) and what is kept of its states' moves.  The search's
second bitmap (the boards not yet expanded) lives only during the search.
Boards of up to 32 cells (4x8: a 512 MiB bitmap).
"""

from cython.parallel cimport prange
from libc.math cimport fabs
from libc.stdint cimport uint64_t, uint32_t, int64_t, int32_t, int16_t, uint8_t
from libc.stdlib cimport malloc, free

import numpy as np

from babytris.engine._types cimport HAVE_ATOMICS, board_t, prefetch
from babytris.engine.signals cimport interrupted
from babytris.engine._core cimport engine_geometry
from babytris.engine._drop cimport drop, settle, smear_down
from babytris.engine._geometry cimport Geometry
from babytris.modes._lean_search cimport (
    BLOCKS_PER_ROUND, WORDS_PER_BLOCK, Landings, checked_owners, ctz64, landings_build, landings_free, owner_of,
    popcount64, top64, _search,
)
from babytris.modes._lean_backup cimport (
    COMBINE_MEAN, COMBINE_MIN, MAX_PLACEMENTS, NO_NEXT, NO_PLACEMENT, Kept, _backup, _bellman, _choose, _gather,
    _evaluate_kept, _move_values, _settle, index_of,
)


#: The largest board (in cells) the lean mode holds: its bitmap has 2**cells bits.
MAX_CELLS = 32
cdef enum:
    BATCH_MOVES = 64           # kept moves read per batch of an evaluation sweep (loads started first)
    BATCH_PLACEMENTS = 128     # placements of a greedy sweep's batch of boards (each stage's loads started first)
    KEEP_NONE = 0              # value iteration: nothing kept between sweeps
    KEEP_PLACEMENTS = 1        # each state's chosen placement number (a byte)
    KEEP_MOVES = 2             # each state's chosen next board (its index) and rows cleared
    MAX_OWN_MASKS = 65536      # own-board masks a shard's sweeper keeps per word pattern (a low_rows key up to 22 bits)

#: What a sweeper may keep of each state's chosen move, by name (``LeanSweeper(keep=...)``).
KEEP = {"none": KEEP_NONE, "placements": KEEP_PLACEMENTS, "moves": KEEP_MOVES}
#: The most placements one piece may have where placements are kept (255 marks none).
MAX_KEPT_PLACEMENTS = 255


cdef class LeanTable:
    """The boards reachable from ``start`` under an engine's rules (at most
    :data:`MAX_CELLS` cells), as a bitmap with ranks; and the sweeps over
    them (:class:`LeanSweeper`).  ``max_boards``: stop (``status = -2``)
    once more boards than this are found; ``status = -4`` when interrupted.
    The search runs on ``n_threads`` (:func:`_search`); ``passes``: its
    passes over the bitmap.  ``given``: a bitmap believed, not searched,
    holding ``start`` unless ``from_start`` is False (a lean shard's boards
    and ghosts)."""

    cdef object engine                 # keeps the geometry alive
    cdef const Geometry* g
    cdef readonly object bits          # uint64, 2**cells / 64 words
    cdef readonly object ranks         # uint32, reachable boards before each word
    cdef readonly int64_t n_boards
    cdef readonly Py_ssize_t n_words
    cdef readonly int cells
    cdef readonly int status
    cdef readonly int passes
    cdef const uint64_t* b
    cdef const uint32_t* r
    cdef Landings landings             # where each placement lands, by column profile (landings_build)

    def __init__(self, engine, uint64_t start, int64_t max_boards, int n_threads=1, given=None, bint from_start=True):
        self.engine = engine
        self.g = engine_geometry(engine)
        self.cells = self.g.width * self.g.height
        if self.cells > MAX_CELLS:
            raise ValueError(f"lean mode holds boards of at most {MAX_CELLS} cells, got {self.cells}")
        if self.g.first[self.g.n_pieces] > MAX_PLACEMENTS:
            raise ValueError(f"lean mode takes at most {MAX_PLACEMENTS} placements of all pieces together")
        if start >> self.cells:
            raise ValueError(f"start must be a board in [0, 2**{self.cells}), got {start}")
        landings_build(self.g, &self.landings)
        n_words = max(1, (<uint64_t>1 << self.cells) // 64)
        self.n_words = n_words
        if n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        cdef uint64_t[::1] bits
        cdef uint64_t[::1] todo
        cdef int64_t found = 0
        cdef int passes = 0
        if given is None:
            self.bits = np.zeros(n_words, dtype=np.uint64)
            bits = self.bits
            todo = np.zeros(n_words, dtype=np.uint64)
            with nogil:
                self.status = _search(self.g, &bits[0], &todo[0], n_words, <uint32_t>start, max_boards,
                                      n_threads if HAVE_ATOMICS else 1, &found, &passes,
                                      &self.landings if self.landings.fits != NULL else NULL)
            todo = None
        else:
            # (a saved bitmap believed, not searched: a file loaded without its proof)
            self.bits = given
            bits = self.bits
            if bits.shape[0] != n_words:
                raise ValueError(f"given must hold {n_words:,} words (2**cells / 64), got {bits.shape[0]:,}")
            if from_start and not (bits[start >> 6] >> (start & 63)) & 1:  # (a lean shard's: not from the start)
                raise ValueError(f"given must hold the start board {start}")
            self.status = 0
        self.ranks = np.empty(n_words, dtype=np.uint32)
        cdef uint32_t[::1] ranks = self.ranks
        cdef Py_ssize_t w
        cdef uint64_t running = 0
        with nogil:
            for w in range(<Py_ssize_t>n_words):
                ranks[w] = <uint32_t>running
                running += popcount64(bits[w])
        if given is not None:
            found = <int64_t>running
            if found > max_boards:
                raise ValueError(f"given holds {found:,} boards, over max_boards={max_boards:,}")
        self.n_boards = found
        self.passes = passes
        self.b = &bits[0]
        self.r = &ranks[0]

    def __dealloc__(self):
        landings_free(&self.landings)

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
        values, moves, _, _ = self.greedy_steps(boards, W, scores, discount, slack)
        return values, moves

    def greedy_steps(self, const uint64_t[::1] boards, const double[::1] W, const double[::1] scores,
                     double discount, double slack=0.0):
        """:meth:`state_values`, and where each state's chosen move leads:
        ``(values, moves, after, lines)``, each ``(n, n_pieces)``: float64,
        int16 (-1: none fits), uint64 the board after the move (0 where none),
        uint8 the rows it clears."""
        cdef int P = self.g.n_pieces
        cdef Py_ssize_t n = boards.shape[0], i
        self._check(W, scores)
        for i in range(n):
            if boards[i] >> self.cells or not (self.b[boards[i] >> 6] >> (boards[i] & 63)) & 1:
                raise ValueError(f"boards[{i}] = {boards[i]} is not reachable")
        values = np.zeros((n, P))
        moves = np.full((n, P), -1, dtype=np.int16)
        after = np.zeros((n, P), dtype=np.uint64)
        cleared = np.zeros((n, P), dtype=np.uint8)
        cdef double[:, ::1] v = values
        cdef int16_t[:, ::1] m = moves
        cdef uint64_t[:, ::1] a = after
        cdef uint8_t[:, ::1] c = cleared
        cdef double q[MAX_PLACEMENTS]
        cdef int ok[MAX_PLACEMENTS]
        cdef int64_t j[MAX_PLACEMENTS]
        cdef int n_lines[MAX_PLACEMENTS]
        cdef board_t nb
        cdef int p, k, lines
        cdef double best
        for i in range(n):
            _move_values(self.g, self.b, self.r, boards[i], &W[0], &scores[0], discount, q, ok, j, n_lines)
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
                        drop(self.g, boards[i], smear_down(boards[i], self.g.width, self.g.height), k, &nb, &lines)
                        a[i, p] = nb
                        c[i, p] = <uint8_t>lines
                        break
        return values, moves, after, cleared

    cdef _check(self, const double[::1] W, const double[::1] scores):
        if W.shape[0] != self.n_boards:
            raise ValueError(f"W must have one value per board ({self.n_boards}), got {W.shape[0]}")
        cdef int k, tallest = 0
        for k in range(self.g.first[self.g.n_pieces]):
            tallest = max(tallest, <int>self.g.rows[k])
        if scores.shape[0] < tallest + 1:
            raise ValueError(f"scores must cover 0..{tallest} rows cleared (the tallest placement)")


cdef class LeanSweeper:
    """Sweeps over a :class:`LeanTable`, in place on the board values ``W``:
    layer by layer (boards grouped by ``layer_of_residue[cells mod len]``,
    no move leading into its own layer), threads sharing a layer; with one
    layer, from the largest board down on one thread.  ``combine``: 0 for
    drawn pieces (``probs``), 1 for an opponent giving the least valuable
    piece.  Rewards are ``scores[rows cleared]``; a state with no move is
    worth 0.

    ``keep``: what a greedy sweep keeps of each state's chosen move, so that
    evaluation sweeps (modified policy iteration) recompute little or
    nothing: ``"moves"`` the next board's index and the rows cleared (5
    bytes a state), ``"placements"`` the placement's number (a byte a state:
    the evaluation drops that one piece again and looks its board up),
    ``"none"`` nothing (value iteration only).  The kept arrays are
    :attr:`kept_placements`, :attr:`kept_next`, :attr:`kept_lines`
    (``(n_boards, n_pieces)``, or None), written by each greedy sweep.

    A lean shard's sweeper (``n_shards > 1``; :mod:`babytris.modes.sharded._lean_shard`):
    the table holds the shard's boards and its ghosts, and the sweeps back
    up only the boards shard ``me`` owns (``owner_of(b, key_mask, n_shards,
    owners)``: ``owners`` the split's owner table, int16, empty where the
    key is mixed), reading the ghosts' values as they are.  (:meth:`bellman_residual`
    checks every board.)"""

    cdef LeanTable table
    cdef object arrays
    cdef double* W
    cdef const double* scores
    cdef const double* probs
    cdef double discount
    cdef int combine
    cdef int n_layers
    cdef uint8_t layer_of[64]
    cdef uint64_t* layer_masks       # (n_layers, residues): a word's bits in a layer, by its high bits' residue
    cdef int residues
    cdef uint8_t residue_of[65]      # a count of cells modulo residues (no division per word of a sweep)
    cdef Kept kept
    cdef readonly int keep
    cdef readonly object kept_placements
    cdef readonly object kept_next
    cdef readonly object kept_lines
    cdef public int n_threads
    cdef bint sharded                 # only the boards owned by shard ``me`` are swept (owner_of)
    cdef uint64_t key_mask
    cdef uint64_t n_shards
    cdef const int16_t* owners        # (owner_of's table; NULL: the key mixed)
    cdef int me
    cdef uint64_t* own_masks          # a word's owned bits, by its bits under the key (NULL: tested per board)
    cdef uint64_t own_index

    def __init__(self, LeanTable table, double[::1] W, const double[::1] scores, const double[::1] probs,
                 double discount, const int64_t[::1] layer_of_residue, *, int combine=COMBINE_MEAN,
                 int n_threads=1, str keep="none", uint64_t key_mask=0, int n_shards=1, int me=0,
                 const int16_t[::1] owners=None):
        cdef int i, layer, s, bit, P = table.g.n_pieces
        cdef uint64_t j
        table._check(W, scores)
        if probs.shape[0] != P:
            raise ValueError("probs must have one entry per piece")
        if not 0.0 <= discount <= 1.0:
            raise ValueError(f"discount must be in [0, 1], got {discount}")
        if combine not in (COMBINE_MEAN, COMBINE_MIN):
            raise ValueError(f"combine must be 0 (drawn) or 1 (least valuable piece), got {combine}")
        if not 1 <= layer_of_residue.shape[0] <= 64:
            raise ValueError("layer_of_residue must have 1 to 64 entries")
        if n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        if n_shards < 1 or not 0 <= me < n_shards:
            raise ValueError(f"me must be in [0, n_shards), got {me} of {n_shards}")
        if keep not in KEEP:
            raise ValueError(f"keep must be one of {', '.join(map(repr, KEEP))}, got {keep!r}")
        for i in range(P):
            if table.g.first[i + 1] - table.g.first[i] > MAX_KEPT_PLACEMENTS and keep != "none":
                raise ValueError(f"keep={keep!r} holds at most {MAX_KEPT_PLACEMENTS} placements of a piece")
        if keep == "moves" and table.n_boards >= NO_NEXT:
            raise ValueError(f"keep='moves' holds boards' indices in 32 bits: at most {NO_NEXT - 1:,} boards")
        self.n_layers = 1
        for i in range(layer_of_residue.shape[0]):
            if not 0 <= layer_of_residue[i] < 64:
                raise ValueError("layer_of_residue: layers must be in [0, 64)")
            self.layer_of[i] = <uint8_t>layer_of_residue[i]
            self.n_layers = max(self.n_layers, <int>layer_of_residue[i] + 1)
        self.residues = layer_of_residue.shape[0]
        for i in range(65):
            self.residue_of[i] = i % self.residues
        # A board's cells are its word's (w = b >> 6) plus its bit's (b & 63): per layer and
        # residue of the word's cells, the bits whose boards are in the layer, so that a sweep
        # picks a layer's boards out of a word with one AND (no test per board).
        self.layer_masks = <uint64_t*>malloc(self.n_layers * self.residues * sizeof(uint64_t))
        if self.layer_masks == NULL:
            raise MemoryError("LeanSweeper: cannot allocate")
        for layer in range(self.n_layers):
            for s in range(self.residues):
                self.layer_masks[layer * self.residues + s] = 0
                for bit in range(64):
                    if self.layer_of[(s + popcount64(bit)) % self.residues] == layer:
                        self.layer_masks[layer * self.residues + s] |= (<uint64_t>1) << bit
        # A lean shard's sweeps (n_shards > 1) back up its own boards alone: where the owner's key has
        # few bits above a word's 6, a word's own bits by a table (one more AND), else a test per board.
        self.sharded, self.key_mask, self.n_shards, self.me = n_shards > 1, key_mask, n_shards, me
        self.owners = checked_owners(owners, key_mask, n_shards)
        self.own_index = key_mask >> 6
        if self.sharded and self.own_index < MAX_OWN_MASKS:
            self.own_masks = <uint64_t*>malloc((self.own_index + 1) * sizeof(uint64_t))
            if self.own_masks == NULL:
                raise MemoryError("LeanSweeper: cannot allocate")
            for j in range(self.own_index + 1):
                self.own_masks[j] = 0
                for bit in range(64):
                    if owner_of((j << 6) | <uint64_t>bit, key_mask, n_shards, self.owners) == me:
                        self.own_masks[j] |= (<uint64_t>1) << bit
        self.keep = KEEP[keep]
        self.kept_placements = self.kept_next = self.kept_lines = None
        self.kept.placement = NULL
        self.kept.next = NULL
        self.kept.lines = NULL
        cdef uint8_t[:, ::1] placements, lines
        cdef uint32_t[:, ::1] nexts
        if self.keep == KEEP_PLACEMENTS and table.n_boards:
            # (none until a greedy sweep keeps some: an evaluation sweep before it reads no move)
            self.kept_placements = np.full((table.n_boards, P), NO_PLACEMENT, dtype=np.uint8)
            placements = self.kept_placements
            self.kept.placement = &placements[0, 0]
        elif self.keep == KEEP_MOVES and table.n_boards:
            self.kept_next = np.full((table.n_boards, P), NO_NEXT, dtype=np.uint32)
            self.kept_lines = np.zeros((table.n_boards, P), dtype=np.uint8)
            nexts = self.kept_next
            lines = self.kept_lines
            self.kept.next = &nexts[0, 0]
            self.kept.lines = &lines[0, 0]
        self.table = table
        self.arrays = (W, scores, probs, owners)
        self.W = &W[0] if W.shape[0] else NULL
        self.scores = &scores[0]
        self.probs = &probs[0]
        self.discount = discount
        self.combine = combine
        self.n_threads = n_threads

    def __dealloc__(self):
        free(self.layer_masks)
        free(self.own_masks)

    cdef inline uint64_t _own_bits(self, Py_ssize_t w, uint64_t word) noexcept nogil:
        """The bits of word ``w`` (``word``: some of its marks) whose boards this sweeper's shard owns."""
        cdef uint64_t mine = 0, rest = word
        cdef int bit
        if self.own_masks != NULL:
            return word & self.own_masks[<uint64_t>w & self.own_index]
        while rest:
            bit = ctz64(rest)
            rest &= rest - 1
            if owner_of((<board_t>w << 6) | <board_t>bit, self.key_mask, self.n_shards, self.owners) == self.me:
                mine |= (<uint64_t>1) << bit
        return mine

    def greedy_sweep(self, V_prev=None, float[::1] changes=None, *, int layer=-1):
        """One sweep over every board, keeping each state's chosen move
        (``keep``); returns the largest change of a board's value.
        ``changes``, if given (float32, a board each), receives each board's
        change: the values before the sweep are the values after it minus
        these, to float32's precision, at half the memory of a copy
        (``V_prev``: no state values are kept; must be empty or None).
        ``layer`` (>= 0): that layer's boards alone (a sweep in parts, the
        sharded solve's, which exchanges values between its layers)."""
        if V_prev is not None and len(V_prev):
            raise ValueError("greedy_sweep: the lean sweeps keep no state values (V_prev must be empty)")
        return self._sweep(False, changes, layer)

    def evaluation_sweep(self, float[::1] changes=None, *, int layer=-1):
        """One sweep evaluating the moves the last greedy sweep kept (their
        values only: no move is chosen); returns the largest change of a
        board's value (``changes``, ``layer``: as for :meth:`greedy_sweep`).
        An opponent giving the least valuable piece still chooses it."""
        if self.keep == KEEP_NONE:
            raise ValueError("evaluation_sweep: this sweeper keeps no moves (keep='none': value iteration only)")
        return self._sweep(True, changes, layer)

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

    def bellman_residual(self):
        """The largest change one Bellman backup of every board would make to
        the values, each computed from the values as they are and written
        nowhere (a synchronous sweep's: a loaded file's proof), and the index
        of a board where it is largest: ``(change, index)`` (``(0.0, -1)``
        without boards).  A board where no piece fits is worth 0 (game
        over); a NaN counts as an infinite change.  Threads share blocks of
        the bitmap; Ctrl-C raises ``KeyboardInterrupt`` within a round."""
        cdef Py_ssize_t n_words = self.table.n_words
        cdef Py_ssize_t n_blocks = (n_words + WORDS_PER_BLOCK - 1) // WORDS_PER_BLOCK, k, first, last
        cdef double* block_change = <double*>malloc(n_blocks * sizeof(double))
        cdef int64_t* block_at = <int64_t*>malloc(n_blocks * sizeof(int64_t))
        cdef double change = 0.0
        cdef int64_t at = -1
        cdef bint stopped = False
        if block_change == NULL or block_at == NULL:
            free(block_change)
            free(block_at)
            raise MemoryError("bellman_residual cannot allocate")
        try:
            with nogil:
                first = 0
                while first < n_blocks and not stopped:
                    last = min(first + BLOCKS_PER_ROUND, n_blocks)
                    for k in prange(first, last, num_threads=self.n_threads, schedule="dynamic"):
                        self._check_block(k, &block_change[k], &block_at[k])
                    stopped = interrupted()
                    first = last
                if not stopped:
                    for k in range(n_blocks):
                        if block_at[k] >= 0 and (at < 0 or block_change[k] > change):
                            change = block_change[k]
                            at = block_at[k]
        finally:
            free(block_change)
            free(block_at)
        if stopped:
            raise KeyboardInterrupt
        return change, at

    cdef void _check_block(self, Py_ssize_t block, double* change, int64_t* at) noexcept nogil:
        """:meth:`bellman_residual` over the boards of a block of the bitmap's words."""
        cdef const uint64_t* bits = self.table.b
        cdef const uint32_t* ranks = self.table.r
        cdef Py_ssize_t w, last = min((block + 1) * WORDS_PER_BLOCK, self.table.n_words)
        cdef uint64_t word, rest
        cdef int bit
        cdef int64_t i
        cdef bint any_move
        cdef double d, largest = 0.0
        cdef int64_t where = -1
        cdef Kept nothing
        nothing.placement = NULL
        nothing.next = NULL
        nothing.lines = NULL
        for w in range(block * WORDS_PER_BLOCK, last):
            word = bits[w]
            rest = word
            while rest:
                bit = ctz64(rest)
                rest &= rest - 1
                i = ranks[w] + popcount64(word & (((<uint64_t>1) << bit) - 1))
                d = fabs(_bellman(self.table.g, &self.table.landings, bits, ranks,
                                  (<board_t>w << 6) | <board_t>bit, i, self.W, self.scores, self.probs, self.discount,
                                  self.combine, &nothing, &any_move)
                         - self.W[i])
                if d != d:
                    d = 1e308 * 10.0   # (inf: a NaN must not pass)
                if where < 0 or d > largest:
                    largest = d
                    where = i
        change[0] = largest
        at[0] = where

    cdef double _sweep(self, bint evaluation, float[::1] changes, int only) except? -1.0:
        if changes is not None and changes.shape[0] != self.table.n_boards:
            raise ValueError("the sweep's changes shape does not match")
        if not -1 <= only < self.n_layers:
            raise ValueError(f"layer must be -1 (every layer) or in [0, {self.n_layers}), got {only}")
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
            raise MemoryError("the sweep cannot allocate")
        try:
            with nogil:
                if self.n_layers == 1:
                    residual = self._descending(evaluation, prev, &stopped)
                else:
                    for layer in range(max(only, 0), self.n_layers if only < 0 else only + 1):
                        # In rounds, so that Ctrl-C is seen within a fraction of a second.
                        first = 0
                        while first < n_blocks and not stopped:
                            last = first + BLOCKS_PER_ROUND
                            if last > n_blocks:
                                last = n_blocks
                            for k in prange(first, last, num_threads=self.n_threads, schedule="dynamic"):
                                block_residual[k] = self._block(k, layer, evaluation, prev)
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

    cdef double _block(self, Py_ssize_t block, int layer, bint evaluation, float* prev) noexcept nogil:
        """Back up the boards of ``layer`` in a block of the bitmap's words;
        returns the largest change."""
        cdef const uint64_t* bits = self.table.b
        cdef const uint32_t* ranks = self.table.r
        cdef const uint64_t* masks = self.layer_masks + layer * self.residues
        cdef Py_ssize_t w, last = min((block + 1) * WORDS_PER_BLOCK, self.table.n_words)
        cdef uint64_t word, mine
        cdef int bit, n = 0, batch = max(1, BATCH_MOVES // self.table.g.n_pieces)
        cdef board_t b
        cdef board_t boards[BATCH_MOVES]
        if not evaluation:
            batch = min(BATCH_MOVES, max(1, BATCH_PLACEMENTS // self.table.g.first[self.table.g.n_pieces]))
        cdef int64_t index[BATCH_MOVES]
        cdef double residual = 0.0, d
        for w in range(block * WORDS_PER_BLOCK, last):
            word = bits[w]
            mine = word & masks[self.residue_of[popcount64(<uint64_t>w)]]
            if self.sharded:
                mine = self._own_bits(w, mine)
            while mine:
                bit = ctz64(mine)
                mine &= mine - 1
                b = (<board_t>w << 6) | <board_t>bit
                boards[n] = b
                index[n] = ranks[w] + popcount64(word & (((<uint64_t>1) << bit) - 1))
                n += 1
                if n == batch:
                    d = self._evaluate(boards, index, n, prev) if evaluation else self._greedy(boards, index, n, prev)
                    residual = d if d > residual else residual
                    n = 0
        if n:
            d = self._evaluate(boards, index, n, prev) if evaluation else self._greedy(boards, index, n, prev)
            residual = d if d > residual else residual
        return residual

    cdef double _greedy(self, const board_t* boards, const int64_t* index, int n, float* prev) noexcept nogil:
        """Back up ``n`` boards (no two of which read each other: one
        layer's), keeping each state's chosen move; returns the largest
        change.  In stages over the whole batch, so that each stage's random
        loads overlap: every move gathered (:func:`_gather`: its next
        board's bitmap word and rank fetched), then every next board's index
        (its value fetched), then each board's choice."""
        cdef const Geometry* g = self.table.g
        cdef const uint64_t* bits = self.table.b
        cdef const uint32_t* ranks = self.table.r
        cdef int t, m, c = 0
        cdef int start[BATCH_MOVES + 1]
        cdef double q[MAX_PLACEMENTS]                # (n * placements <= MAX_PLACEMENTS: see _block's batch)
        cdef uint8_t placement[MAX_PLACEMENTS]
        cdef int64_t j[MAX_PLACEMENTS]
        cdef int n_lines[MAX_PLACEMENTS]
        cdef board_t nb[MAX_PLACEMENTS]
        cdef double w, residual = 0.0, d
        cdef bint any_move
        for t in range(n):
            start[t] = c
            c += _gather(g, &self.table.landings, bits, ranks, boards[t], &placement[c], &nb[c],
                         &n_lines[c])
        start[n] = c
        for m in range(c):
            j[m] = index_of(bits, ranks, nb[m])
            prefetch(&self.W[j[m]])
        for m in range(c):
            q[m] = self.scores[n_lines[m]] + self.discount * self.W[j[m]]
        for t in range(n):
            m = start[t]
            w = _choose(g, &placement[m], &q[m], &j[m], &n_lines[m], start[t + 1] - m, index[t], self.probs,
                        self.combine, &self.kept, &any_move)
            if not any_move:
                if prev != NULL:
                    prev[index[t]] = 0.0
                continue
            d = _settle(w, index[t], self.W, prev)
            if d > residual:
                residual = d
        return residual

    cdef double _descending(self, bint evaluation, float* prev, bint* stopped) noexcept nogil:
        """Back up every board, from the largest down (one layer); returns the largest change."""
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
                if self.sharded and owner_of(b, self.key_mask, self.n_shards, self.owners) != self.me:
                    continue
                if evaluation:
                    d = self._evaluate(&b, &i, 1, prev)
                else:
                    d = _backup(self.table.g, &self.table.landings, bits, ranks, b, i, self.W, prev,
                                self.scores, self.probs, self.discount, self.combine, &self.kept)
                if d > residual:
                    residual = d
        return residual

    cdef double _evaluate(self, const board_t* boards, const int64_t* index, int n, float* prev) noexcept nogil:
        """Evaluate the kept moves of ``n`` boards (no two of which read
        each other: one layer's, or one board): :func:`_evaluate_kept`."""
        return _evaluate_kept(self.table.g, self.table.b, self.table.r, self.W, self.scores, self.probs,
                              self.discount, self.combine, &self.kept, self.keep == KEEP_MOVES, boards, index, n,
                              prev)
