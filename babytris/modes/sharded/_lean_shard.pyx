# cython: language_level=3
"""Lean shards of the sharded solve (:mod:`babytris.modes.sharded.lean_shard`): one
shard's boards and its ghosts (the other shards' boards its moves reach)
marked in one bitmap over every possible board, with ranks, and no move
table.  The search expands the shard's own boards and lists the others'
it finds, for their owners; the sweeps back up the shard's own boards
alone (a board's owner is a function of its bits and the split's owner
table, :func:`owner_of`),
reading the ghosts' values as the last exchange left them: the lean mode's
own sweeps (:class:`~babytris.modes._lean.LeanSweeper` told the shard's
owner), over a :class:`~babytris.modes._lean.LeanTable` of the shard's
bitmap."""

from libc.stdint cimport uint64_t, uint32_t, int64_t, int16_t, uint8_t
from libc.stdlib cimport malloc, realloc, free

import numpy as np

from babytris.engine._types cimport board_t
from babytris.engine.signals cimport interrupted
from babytris.engine._core cimport engine_geometry
from babytris.engine._drop cimport drop, smear_down
from babytris.engine._geometry cimport Geometry
from babytris.modes._lean_search cimport checked_owners, ctz64, owner_of, popcount64
from babytris.modes._lean_backup cimport COMBINE_MEAN, MAX_PLACEMENTS, _move_values, index_of

from babytris.modes._lean import LeanSweeper, LeanTable

cdef enum:
    CHECK_WORDS = 65536        # words of the bitmap between two checks for Ctrl-C on one thread

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


def expand(engine, uint64_t[::1] bits, uint64_t[::1] todo, uint64_t key_mask, const int16_t[::1] owners, int n_shards,
           int me):
    """Expand every board waiting in ``todo`` (all this shard's, ``me``: :func:`owner_of` of
    ``key_mask``, ``owners``, ``n_shards``), in
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
    cdef const int16_t* table = checked_owners(owners, key_mask, n_shards)
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
                            if owner_of(nb, key_mask, n_shards, table) == me:
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
    and keeps each state's chosen placement (:attr:`kept`, a byte a state);
    :meth:`evaluation_sweep` values the kept ones; the ghosts' rows are
    never written here.  The sweeps are the lean mode's
    (:class:`~babytris.modes._lean.LeanSweeper` with ``keep="placements"``,
    told the shard's owner: ``layer_of_residue``, ``n_threads``,
    ``combine`` as there).  Board b is this shard's where :func:`owner_of`
    ``(b, key_mask, n_shards, owners) == me`` (``owners``: the split's owner
    table, int16, empty where the key is mixed)."""

    cdef object engine
    cdef const Geometry* g
    cdef readonly object bits
    cdef readonly object ranks          # uint32: the rows before each word
    cdef readonly object W
    cdef readonly object kept           # uint8 (rows, n_pieces): each state's chosen placement
    cdef readonly int64_t n_rows
    cdef readonly int64_t n_own
    cdef readonly Py_ssize_t n_words
    cdef object table
    cdef object sweeper
    cdef const uint64_t* b
    cdef const uint32_t* r
    cdef double* w
    cdef const double* scores
    cdef double discount
    cdef uint64_t key_mask
    cdef uint64_t n_shards
    cdef object owners_kept             # (the owner table owners points into)
    cdef const int16_t* owners
    cdef int me

    def __init__(self, engine, uint64_t[::1] bits, const double[::1] scores, const double[::1] probs,
                 double discount, const int64_t[::1] layer_of_residue, uint64_t key_mask, const int16_t[::1] owners,
                 int n_shards, int me, *, int combine=COMBINE_MEAN, int n_threads=1):
        self.engine = engine
        self.g = _geometry(engine)
        cdef int P = self.g.n_pieces
        if not 1 <= n_shards or not 0 <= me < n_shards:
            raise ValueError(f"me must be in [0, n_shards), got {me} of {n_shards}")
        self.owners = checked_owners(owners, key_mask, n_shards)
        self.owners_kept = owners
        cells = self.g.width * self.g.height
        if bits.shape[0] != max(1, (1 << cells) // 64):
            raise ValueError(f"bits must hold {max(1, (1 << cells) // 64):,} words (2**cells / 64)")
        self.table = LeanTable(engine, 0, 1 << 62, 1, np.asarray(bits), False)
        if self.table.n_boards >= (<int64_t>1) << 32:
            raise ValueError(f"a lean shard ranks its rows in 32 bits: {self.table.n_boards:,} are too many")
        self.bits = self.table.bits
        self.ranks = self.table.ranks
        self.n_words = bits.shape[0]
        self.n_rows = self.table.n_boards
        self.W = np.zeros(self.n_rows)
        self.sweeper = LeanSweeper(self.table, self.W, scores, probs, discount, layer_of_residue, combine=combine,
                                   n_threads=n_threads, keep="placements", key_mask=key_mask, n_shards=n_shards,
                                   me=me, owners=owners)
        kept = self.sweeper.kept_placements
        self.kept = kept if kept is not None else np.zeros((0, P), dtype=np.uint8)
        cdef uint32_t[::1] ranks = self.ranks
        cdef double[::1] W = self.W
        self.b = &bits[0]
        self.r = &ranks[0]
        self.w = &W[0] if self.n_rows else NULL
        self.scores = &scores[0]
        self.discount = discount
        self.key_mask, self.n_shards, self.me = key_mask, n_shards, me
        cdef Py_ssize_t w
        cdef uint64_t word
        cdef int64_t own = 0
        cdef bint stopped = False
        with nogil:
            for w in range(self.n_words):
                if w % CHECK_WORDS == 0 and interrupted():
                    stopped = True
                    break
                word = bits[w]
                while word:
                    own += owner_of((<board_t>w << 6) | <board_t>ctz64(word), key_mask, n_shards, self.owners) == me
                    word &= word - 1
        if stopped:
            raise KeyboardInterrupt
        self.n_own = own

    @property
    def n_threads(self):
        """The threads the sweeps share a layer among (the lean sweeper's; a ThreadTuner sets it)."""
        return self.sweeper.n_threads

    @n_threads.setter
    def n_threads(self, int value):
        self.sweeper.n_threads = value

    cdef inline bint _mine(self, board_t b) noexcept nogil:
        return owner_of(b, self.key_mask, self.n_shards, self.owners) == self.me

    def rows(self, const uint64_t[::1] boards):
        """Each board's row (int64), -1 where it is neither this shard's nor a ghost."""
        out = np.empty(boards.shape[0], dtype=np.int64)
        cdef int64_t[::1] o = out
        cdef Py_ssize_t i
        cdef board_t x
        with nogil:  # (a worker's lookups of many boards: its event loop and heartbeats go on)
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
        cdef bint stopped = False
        with nogil:
            for w in range(self.n_words):
                if w % CHECK_WORDS == 0 and interrupted():
                    stopped = True
                    break
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
        if stopped:
            raise KeyboardInterrupt
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
        with nogil:  # (a shard's saved values at 4x8: minutes that must not hold its worker's event loop)
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

    def greedy_sweep(self, V_prev=None, float[::1] changes=None, *, int layer=-1):
        """Back up every own board from its moves, keeping each state's first
        best placement; returns the largest change of a value.  ``changes``,
        if given (float32, a row each), receives each own board's change
        (``V_prev``: no state values are kept; must be empty or None);
        ``layer`` (>= 0): that layer's boards alone."""
        return self.sweeper.greedy_sweep(V_prev, changes, layer=layer)

    def evaluation_sweep(self, float[::1] changes=None, *, int layer=-1):
        """Value every own board by the placements the last greedy sweep kept
        (an opponent giving the least valuable piece still chooses it);
        returns the largest change (``changes``, ``layer``: as :meth:`greedy_sweep`'s)."""
        return self.sweeper.evaluation_sweep(changes, layer=layer)
