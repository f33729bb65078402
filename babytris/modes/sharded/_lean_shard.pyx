# cython: language_level=3
"""Lean shards of the sharded solve (:mod:`babytris.modes.sharded.lean_shard`): one
shard's boards and its ghosts (the other shards' boards its moves reach)
marked in one bitmap over every possible board, with ranks, and no move
table.  The search expands the shard's own boards and lists the others'
it finds, for their owners; the sweeps back up the shard's own boards
alone (a board's owner is a function of its bits, :func:`owner_of`),
reading the ghosts' values as the last exchange left them.  A board's
backup, its evaluation by the kept placements and its rank are the lean
mode's own (``_lean_backup.pxd``), its landings table too."""

from cython.parallel cimport prange
from libc.stdint cimport uint64_t, uint32_t, int64_t, int16_t, uint8_t
from libc.stdlib cimport malloc, realloc, free

import numpy as np

from babytris.engine._types cimport board_t
from babytris.engine.signals cimport interrupted
from babytris.engine._core cimport engine_geometry
from babytris.engine._drop cimport drop, smear_down
from babytris.engine._geometry cimport Geometry
from babytris.modes._lean_search cimport (
    BLOCKS_PER_ROUND, WORDS_PER_BLOCK, Landings, ctz64, landings_build, landings_free, owner_of, popcount64, top64,
)
from babytris.modes._lean_backup cimport (
    COMBINE_MEAN, COMBINE_MIN, MAX_PLACEMENTS, NO_PLACEMENT, Kept, _backup, _evaluate_kept, _move_values, index_of,
)

cdef enum:
    CHECK_WORDS = 65536        # words of the bitmap between two checks for Ctrl-C on one thread
    BATCH_MOVES = 64           # kept moves an evaluation sweep reads per batch (loads started first)
    MAX_OWN_MASKS = 65536      # own-board masks kept per word pattern (a low_rows key up to 22 bits)

cdef const Geometry* _geometry(engine) except NULL:
    cdef const Geometry* g = engine_geometry(engine)
    if g.soft:
        raise ValueError("lean shards drop pieces: soft moves are not supported")
    if g.first[g.n_pieces] > MAX_PLACEMENTS:
        raise ValueError(f"lean shards take at most {MAX_PLACEMENTS} placements of all pieces together")
    return g


def mark(uint64_t[::1] bits, uint64_t[::1] todo, const uint64_t[::1] boards):
    """Mark ``boards`` (uint64, this shard's) in ``bits`` and, those not
    marked yet, in ``todo`` (to be expanded); returns how many were new."""
    cdef Py_ssize_t i
    cdef uint64_t b, bit
    cdef int64_t new = 0
    for i in range(boards.shape[0]):
        b = boards[i]
        if (b >> 6) >= <uint64_t>bits.shape[0]:
            raise ValueError(f"boards[{i}] = {b} is not a board of these rules")
        bit = (<uint64_t>1) << (b & 63)
        if not bits[b >> 6] & bit:
            bits[b >> 6] |= bit
            todo[b >> 6] |= bit
            new += 1
    return new


def expand(engine, uint64_t[::1] bits, uint64_t[::1] todo, uint64_t key_mask, int n_shards, int me):
    """Expand every board waiting in ``todo`` (all this shard's, ``me``), in
    passes until none waits: the boards after their moves owned here are
    marked in ``bits`` and, where new, in ``todo``; those owned by another
    shard (ghosts), where new, in ``bits`` alone and listed.

    Returns:
        ``(ghosts, moves, at_home)``: the ghosts found (uint64, each once),
        the moves of the boards expanded and how many lead to a board owned here.
    """
    cdef const Geometry* g = _geometry(engine)
    cdef Py_ssize_t n_words = bits.shape[0], w
    cdef uint64_t word, bit
    cdef int k, lines, n = g.first[g.n_pieces]
    cdef board_t b, nb, sm
    cdef int64_t moves = 0, at_home = 0, pending = 1, n_ghosts = 0, room = 1 << 16
    cdef uint64_t* ghosts = <uint64_t*>malloc(room * sizeof(uint64_t))
    cdef uint64_t* grown
    cdef bint stopped = False, short = False
    if ghosts == NULL:
        raise MemoryError("expand: cannot allocate")
    if todo.shape[0] != n_words:
        free(ghosts)
        raise ValueError("expand: bits and todo must have as many words")
    try:
        with nogil:
            while pending and not stopped and not short:
                pending = 0
                for w in range(n_words):
                    if w % CHECK_WORDS == 0 and interrupted():
                        stopped = True
                        break
                    word = todo[w]
                    if not word:
                        continue
                    todo[w] = 0
                    while word:
                        b = (<board_t>w << 6) | <board_t>ctz64(word)
                        word &= word - 1
                        sm = smear_down(b, g.width, g.height)
                        for k in range(n):
                            if not drop(g, b, sm, k, &nb, &lines):
                                continue
                            moves += 1
                            bit = (<uint64_t>1) << (nb & 63)
                            if owner_of(nb, key_mask, n_shards) == me:
                                at_home += 1
                                if not bits[nb >> 6] & bit:
                                    bits[nb >> 6] |= bit
                                    todo[nb >> 6] |= bit
                                    pending += 1
                            elif not bits[nb >> 6] & bit:
                                bits[nb >> 6] |= bit
                                if n_ghosts == room:
                                    grown = <uint64_t*>realloc(ghosts, 2 * room * sizeof(uint64_t))
                                    if grown == NULL:
                                        short = True
                                        break
                                    ghosts, room = grown, 2 * room
                                ghosts[n_ghosts] = nb
                                n_ghosts += 1
                        if short:
                            break
                    if short:
                        break
        if stopped:
            raise KeyboardInterrupt
        if short:
            raise MemoryError(f"expand: cannot list {2 * room:,} ghosts")
        out = np.asarray(<uint64_t[:n_ghosts]>ghosts).copy() if n_ghosts else np.zeros(0, dtype=np.uint64)
    finally:
        free(ghosts)
    return out, moves, at_home


cdef class LeanShardSweeper:
    """One lean shard's values and sweeps: ``bits`` (uint64, a word per 64
    possible boards) marks its own boards and its ghosts, a row each, in
    board order (:meth:`rows`); :attr:`W` (float64, a row each) holds their
    values.  :meth:`greedy_sweep` backs up every own board from its moves
    and keeps each state's chosen placement (a byte a state, as the lean
    mode's ``keep="placements"``); :meth:`evaluation_sweep` values the kept
    ones; the ghosts' rows are never written here.  Sweeps run in place,
    layer by layer (``layer_of_residue``, as :class:`~babytris.modes._lean.LeanSweeper`),
    ``n_threads`` sharing a layer, or with one layer from the largest board
    down on one thread.  ``combine``: 0 for drawn pieces (``probs``), 1 for
    an opponent giving the least valuable piece.  Board b is this shard's
    where :func:`owner_of` ``(b, key_mask, n_shards) == me``."""

    cdef object engine
    cdef const Geometry* g
    cdef readonly object bits
    cdef readonly object ranks          # uint32: the rows before each word
    cdef readonly object W
    cdef readonly object kept           # uint8 (rows, n_pieces): each state's chosen placement
    cdef readonly int64_t n_rows
    cdef readonly int64_t n_own
    cdef readonly Py_ssize_t n_words
    cdef object arrays
    cdef const uint64_t* b
    cdef const uint32_t* r
    cdef double* w
    cdef uint8_t* k
    cdef const double* scores
    cdef const double* probs
    cdef double discount
    cdef int combine
    cdef uint64_t key_mask
    cdef uint64_t n_shards
    cdef int me
    cdef int n_layers
    cdef int residues
    cdef uint8_t layer_of[64]
    cdef uint64_t* layer_masks       # (n_layers, residues): a word's bits in a layer, by its high bits' residue
    cdef uint64_t* own_masks         # a word's own boards, by its bits under the key (NULL: tested per board)
    cdef uint64_t own_index
    cdef Landings landings           # where each placement lands, by column profile (landings_build)
    cdef Kept kept_moves             # the kept placements, for the shared backup (no next boards kept)
    cdef public int n_threads

    def __init__(self, engine, const uint64_t[::1] bits, const double[::1] scores, const double[::1] probs,
                 double discount, const int64_t[::1] layer_of_residue, uint64_t key_mask, int n_shards, int me,
                 *, int combine=COMBINE_MEAN, int n_threads=1):
        cdef int i, tallest = 0, P
        self.engine = engine
        self.g = _geometry(engine)
        P = self.g.n_pieces
        for i in range(self.g.first[P]):
            tallest = max(tallest, <int>self.g.rows[i])
        for i in range(P):
            if self.g.first[i + 1] - self.g.first[i] > NO_PLACEMENT:
                raise ValueError(f"lean shards keep a placement in a byte: at most {NO_PLACEMENT} a piece")
        if scores.shape[0] < tallest + 1:
            raise ValueError(f"scores must cover 0..{tallest} rows cleared (the tallest placement)")
        if probs.shape[0] != P:
            raise ValueError("probs must have one entry per piece")
        if not 0.0 <= discount <= 1.0:
            raise ValueError(f"discount must be in [0, 1], got {discount}")
        if combine not in (COMBINE_MEAN, COMBINE_MIN):
            raise ValueError(f"combine must be 0 (drawn) or 1 (least valuable piece), got {combine}")
        if not 1 <= layer_of_residue.shape[0] <= 64:
            raise ValueError("layer_of_residue must have 1 to 64 entries")
        if not 1 <= n_shards or not 0 <= me < n_shards:
            raise ValueError(f"me must be in [0, n_shards), got {me} of {n_shards}")
        if n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        cells = self.g.width * self.g.height
        if bits.shape[0] != max(1, (1 << cells) // 64):
            raise ValueError(f"bits must hold {max(1, (1 << cells) // 64):,} words (2**cells / 64)")
        self.n_layers = 1
        for i in range(layer_of_residue.shape[0]):
            if not 0 <= layer_of_residue[i] < 64:
                raise ValueError("layer_of_residue: layers must be in [0, 64)")
            self.layer_of[i] = <uint8_t>layer_of_residue[i]
            self.n_layers = max(self.n_layers, <int>layer_of_residue[i] + 1)
        self.residues = layer_of_residue.shape[0]
        self._masks(key_mask, n_shards, me)
        self.bits = bits
        self.n_words = bits.shape[0]
        self.ranks = np.empty(self.n_words, dtype=np.uint32)
        cdef uint32_t[::1] ranks = self.ranks
        cdef Py_ssize_t w
        cdef uint64_t running = 0, word
        cdef int64_t own = 0
        with nogil:
            for w in range(self.n_words):
                ranks[w] = <uint32_t>running
                word = bits[w]
                running += popcount64(word)
                while word:
                    own += owner_of((<board_t>w << 6) | <board_t>ctz64(word), key_mask, n_shards) == me
                    word &= word - 1
        if running >= (<uint64_t>1) << 32:
            raise ValueError(f"a lean shard ranks its rows in 32 bits: {running:,} are too many")
        self.n_rows, self.n_own = running, own
        self.W = np.zeros(self.n_rows)
        self.kept = np.full((self.n_rows, P), NO_PLACEMENT, dtype=np.uint8)
        self.arrays = (scores, probs)
        cdef double[::1] W = self.W
        cdef uint8_t[:, ::1] kept = self.kept
        self.b = &bits[0]
        self.r = &ranks[0]
        self.w = &W[0] if self.n_rows else NULL
        self.k = &kept[0, 0] if self.n_rows else NULL
        self.scores = &scores[0]
        self.probs = &probs[0]
        self.discount = discount
        self.combine = combine
        self.key_mask, self.n_shards, self.me = key_mask, n_shards, me
        self.n_threads = n_threads
        self.kept_moves.placement = self.k
        self.kept_moves.next = NULL
        self.kept_moves.lines = NULL
        landings_build(self.g, &self.landings)   # (not built: every placement dropped, the same moves)

    def __dealloc__(self):
        free(self.layer_masks)
        free(self.own_masks)
        landings_free(&self.landings)

    cdef _masks(self, uint64_t key_mask, int n_shards, int me):
        """Per layer and residue of a word's own cells, the bits of the word in
        the layer (as :class:`~babytris.modes._lean.LeanSweeper`); and where the
        owner's key has few bits above a word's 6, per pattern of them, the
        bits of the word owned here: a word's own boards of a layer are two ANDs."""
        cdef int layer, r, bit
        cdef uint64_t j
        self.layer_masks = <uint64_t*>malloc(self.n_layers * self.residues * sizeof(uint64_t))
        self.own_index = key_mask >> 6
        self.own_masks = NULL
        if self.own_index < MAX_OWN_MASKS:
            self.own_masks = <uint64_t*>malloc((self.own_index + 1) * sizeof(uint64_t))
        if self.layer_masks == NULL or (self.own_index < MAX_OWN_MASKS and self.own_masks == NULL):
            raise MemoryError("LeanShardSweeper: cannot allocate")
        for layer in range(self.n_layers):
            for r in range(self.residues):
                self.layer_masks[layer * self.residues + r] = 0
                for bit in range(64):
                    if self.layer_of[(r + popcount64(bit)) % self.residues] == layer:
                        self.layer_masks[layer * self.residues + r] |= (<uint64_t>1) << bit
        if self.own_masks != NULL:
            for j in range(self.own_index + 1):
                self.own_masks[j] = 0
                for bit in range(64):
                    if owner_of((j << 6) | <uint64_t>bit, key_mask, n_shards) == me:
                        self.own_masks[j] |= (<uint64_t>1) << bit

    cdef inline uint64_t _own_bits(self, Py_ssize_t w, uint64_t word) noexcept nogil:
        """The bits of word ``w`` (``word``: some of its marks) that are this shard's boards."""
        cdef uint64_t mine = 0, rest
        cdef int bit
        if self.own_masks != NULL:
            return word & self.own_masks[<uint64_t>w & self.own_index]
        rest = word
        while rest:
            bit = ctz64(rest)
            rest &= rest - 1
            if self._mine((<board_t>w << 6) | <board_t>bit):
                mine |= (<uint64_t>1) << bit
        return mine

    cdef inline bint _mine(self, board_t b) noexcept nogil:
        return owner_of(b, self.key_mask, self.n_shards) == self.me

    def rows(self, const uint64_t[::1] boards):
        """Each board's row (int64), -1 where it is neither this shard's nor a ghost."""
        out = np.empty(boards.shape[0], dtype=np.int64)
        cdef int64_t[::1] o = out
        cdef Py_ssize_t i
        cdef board_t x
        for i in range(boards.shape[0]):
            x = boards[i]
            if (x >> 6) >= <uint64_t>self.n_words or not (self.b[x >> 6] >> (x & 63)) & 1:
                o[i] = -1
            else:
                o[i] = index_of(self.b, self.r, x)
        return out

    def boards(self, bint own):
        """This shard's boards (``own``) or its ghosts, ascending (uint64), and their rows (int64)."""
        n = self.n_own if own else self.n_rows - self.n_own
        boards = np.empty(n, dtype=np.uint64)
        rows = np.empty(n, dtype=np.int64)
        cdef uint64_t[::1] out = boards
        cdef int64_t[::1] at = rows
        cdef Py_ssize_t w, i = 0
        cdef int64_t row
        cdef uint64_t word
        cdef board_t x
        with nogil:
            for w in range(self.n_words):
                word = self.b[w]
                row = self.r[w]
                while word:
                    x = (<board_t>w << 6) | <board_t>ctz64(word)
                    word &= word - 1
                    if self._mine(x) == own:
                        out[i] = x
                        at[i] = row
                        i += 1
                    row += 1
        return boards, rows

    def state_values(self, const uint64_t[::1] boards, double slack=0.0):
        """``(values, moves)`` of this shard's ``boards``, each ``(n, n_pieces)``:
        a state's value, the best of its moves' values from :attr:`W` (0
        where none fits), and the first move (its number among the piece's
        placements) within ``slack`` of it (-1 where none), as
        :meth:`babytris.modes._lean.LeanTable.state_values` gives them."""
        cdef const Geometry* g = self.g
        cdef int P = g.n_pieces, p, kk
        cdef Py_ssize_t n = boards.shape[0], i
        cdef board_t x
        for i in range(n):
            x = boards[i]
            if (x >> 6) >= <uint64_t>self.n_words or not (self.b[x >> 6] >> (x & 63)) & 1 or not self._mine(x):
                raise ValueError(f"boards[{i}] = {x} is not a board of this shard")
        values = np.zeros((n, P))
        moves = np.full((n, P), -1, dtype=np.int16)
        cdef double[:, ::1] v = values
        cdef int16_t[:, ::1] m = moves
        cdef double q[MAX_PLACEMENTS]
        cdef int ok[MAX_PLACEMENTS]
        cdef int64_t j[MAX_PLACEMENTS]
        cdef int n_lines[MAX_PLACEMENTS]
        cdef double best
        for i in range(n):
            _move_values(g, self.b, self.r, boards[i], self.w, self.scores, self.discount, q, ok, j, n_lines)
            for p in range(P):
                best = 0.0
                for kk in range(g.first[p], g.first[p + 1]):
                    if ok[kk] and (m[i, p] < 0 or q[kk] > best):
                        best = q[kk]
                        m[i, p] = kk - g.first[p]
                v[i, p] = best
                for kk in range(g.first[p], g.first[p + 1]):
                    if ok[kk] and q[kk] >= best - slack:
                        m[i, p] = kk - g.first[p]
                        break
        return values, moves

    def greedy_sweep(self, V_prev=None, float[::1] changes=None):
        """Back up every own board from its moves, keeping each state's first
        best placement; returns the largest change of a value.  ``changes``,
        if given (float32, a row each), receives each own board's change
        (``V_prev``: no state values are kept; must be empty or None)."""
        if V_prev is not None and len(V_prev):
            raise ValueError("greedy_sweep: lean shards keep no state values (V_prev must be empty)")
        return self._sweep(False, changes)

    def evaluation_sweep(self, float[::1] changes=None):
        """Value every own board by the placements the last greedy sweep kept
        (an opponent giving the least valuable piece still chooses it);
        returns the largest change (``changes``: as :meth:`greedy_sweep`'s)."""
        return self._sweep(True, changes)

    cdef double _sweep(self, bint evaluation, float[::1] changes) except? -1.0:
        if changes is not None and changes.shape[0] != self.n_rows:
            raise ValueError("the sweep's changes must have a row each")
        if self.n_own == 0:
            return 0.0
        cdef float* prev = &changes[0] if changes is not None else NULL
        cdef Py_ssize_t n_blocks = (self.n_words + WORDS_PER_BLOCK - 1) // WORDS_PER_BLOCK, kb, first, last
        cdef double* block_residual = <double*>malloc(n_blocks * sizeof(double))
        cdef double residual = 0.0
        cdef int layer
        cdef bint stopped = False
        if block_residual == NULL:
            raise MemoryError("the sweep cannot allocate")
        try:
            with nogil:
                if self.n_layers == 1:
                    residual = self._descending(evaluation, prev, &stopped)
                else:
                    for layer in range(self.n_layers):
                        # (in rounds of blocks, so that Ctrl-C is seen within a fraction of a second)
                        first = 0
                        while first < n_blocks and not stopped:
                            last = min(first + BLOCKS_PER_ROUND, n_blocks)
                            for kb in prange(first, last, num_threads=self.n_threads, schedule="dynamic"):
                                block_residual[kb] = self._block(kb, layer, evaluation, prev)
                            for kb in range(first, last):
                                if block_residual[kb] > residual:
                                    residual = block_residual[kb]
                            stopped = interrupted()
                            first = last
                        if stopped:
                            break
        finally:
            free(block_residual)
        if stopped:
            raise KeyboardInterrupt
        return residual

    cdef double _block(self, Py_ssize_t block, int layer, bint evaluation, float* prev) noexcept nogil:
        """Back up the own boards of ``layer`` in a block of the bitmap's words
        (an evaluation in batches: no two boards of a layer read each other);
        returns the largest change."""
        cdef Py_ssize_t w, last = min((block + 1) * WORDS_PER_BLOCK, self.n_words)
        cdef uint64_t word, mine
        cdef int bit, n = 0, batch = max(1, BATCH_MOVES // self.g.n_pieces)
        cdef board_t boards[BATCH_MOVES]
        cdef int64_t rows[BATCH_MOVES]
        cdef int64_t i
        cdef double residual = 0.0, d
        for w in range(block * WORDS_PER_BLOCK, last):
            word = self.b[w]
            if not word:
                continue
            mine = self._own_bits(w, word & self.layer_masks[layer * self.residues + popcount64(<uint64_t>w) % self.residues])
            while mine:
                bit = ctz64(mine)
                mine &= mine - 1
                i = self.r[w] + popcount64(word & (((<uint64_t>1) << bit) - 1))
                if evaluation:
                    boards[n] = (<board_t>w << 6) | <board_t>bit
                    rows[n] = i
                    n += 1
                    if n == batch:
                        d = self._evaluate(boards, rows, n, prev)
                        residual = d if d > residual else residual
                        n = 0
                else:
                    d = self._greedy((<board_t>w << 6) | <board_t>bit, i, prev)
                    residual = d if d > residual else residual
        if n:
            d = self._evaluate(boards, rows, n, prev)
            residual = d if d > residual else residual
        return residual

    cdef double _descending(self, bint evaluation, float* prev, bint* stopped) noexcept nogil:
        """Back up every own board from the largest down (one layer, one thread); returns the largest change."""
        cdef Py_ssize_t w
        cdef uint64_t word
        cdef int64_t i
        cdef int top
        cdef board_t x
        cdef double residual = 0.0, d
        for w in range(self.n_words - 1, -1, -1):
            if w % CHECK_WORDS == 0 and interrupted():
                stopped[0] = True
                return residual
            word = self.b[w]
            i = self.r[w] + popcount64(word)
            while word:
                top = top64(word)
                word &= ~((<uint64_t>1) << top)
                i -= 1
                x = (<board_t>w << 6) | <board_t>top
                if not self._mine(x):
                    continue
                d = self._evaluate(&x, &i, 1, prev) if evaluation else self._greedy(x, i, prev)
                if d > residual:
                    residual = d
        return residual

    cdef inline double _greedy(self, board_t x, int64_t i, float* prev) noexcept nogil:
        """One greedy backup of own board x (row i) in place, each piece's
        first best placement kept: the lean mode's (``_backup``)."""
        return _backup(self.g, &self.landings, self.b, self.r, x, i, self.w, prev, self.scores, self.probs,
                       self.discount, self.combine, &self.kept_moves)

    cdef inline double _evaluate(self, const board_t* boards, const int64_t* rows, int n, float* prev) noexcept nogil:
        """Value ``n`` own boards (rows ``rows``; none reading another) by
        their kept placements, in place: the lean mode's (``_evaluate_kept``)."""
        return _evaluate_kept(self.g, self.b, self.r, self.w, self.scores, self.probs, self.discount, self.combine,
                              &self.kept_moves, False, boards, rows, n, prev)
