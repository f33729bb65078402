# cython: language_level=3
"""One Bellman backup of a lean board, inline for the sweeps of
:mod:`babytris.modes._lean`: its moves gathered from the rules (only those
that fit, where the landing table is built), their values, each piece's
first best move kept, the pieces combined; a board's index (its rank);
and an evaluation of the kept moves.  The lean shards
(:mod:`babytris.modes.sharded._lean_shard`) back up their own boards with these."""

from libc.math cimport fabs
from libc.stdint cimport uint64_t, uint32_t, int64_t, uint8_t

from babytris.engine._types cimport board_t, prefetch
from babytris.engine._drop cimport drop, settle, smear_down
from babytris.engine._geometry cimport Geometry
from babytris.modes._lean_search cimport Landings, ctz64, landings_of, popcount64


cdef extern from *:
    """
    #define BABYTRIS_NO_PLACEMENT ((unsigned char)255)
    #define BABYTRIS_NO_NEXT ((unsigned int)0xFFFFFFFFu)
    """
    # A kept placement (or next board) meaning "no placement of this piece fits".
    const uint8_t NO_PLACEMENT "BABYTRIS_NO_PLACEMENT"
    const uint32_t NO_NEXT "BABYTRIS_NO_NEXT"


cdef enum:
    MAX_PLACEMENTS = 256       # of all pieces together (one board's moves are gathered first)
    COMBINE_MEAN = 0           # pieces drawn: the mean weighted by the probabilities
    COMBINE_MIN = 1            # an opponent gives the least valuable piece


cdef inline int64_t index_of(const uint64_t* bits, const uint32_t* ranks, board_t b) noexcept nogil:
    """The index of reachable board b: the reachable boards below it."""
    cdef uint64_t w = b >> 6
    return <int64_t>ranks[w] + popcount64(bits[w] & ((<uint64_t>1 << (b & 63)) - 1))


cdef inline void _move_values(const Geometry* g, const uint64_t* bits, const uint32_t* ranks, board_t b,
                              const double* W, const double* scores, double discount, double* q,
                              int* ok, int64_t* j, int* n_lines) noexcept nogil:
    """Every placement k on b: ``ok[k]`` whether it is a move, and if so
    ``q[k]`` its value, ``j[k]`` the next board's index and ``n_lines[k]``
    the rows it clears; the loads of the next boards' ranks and values are
    started early."""
    cdef int k, n = g.first[g.n_pieces]
    cdef board_t sm = smear_down(b, g.width, g.height)
    cdef board_t nb[MAX_PLACEMENTS]
    for k in range(n):
        ok[k] = drop(g, b, sm, k, &nb[k], &n_lines[k])
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


cdef struct Kept:
    # What a greedy sweep keeps of each state's chosen move, for the evaluation
    # sweeps, (n_boards, n_pieces) row-major; NULL where not kept.
    uint8_t* placement    # the placement's number among the piece's (NO_PLACEMENT: none fits)
    uint32_t* next        # the next board's index (NO_NEXT: none fits)
    uint8_t* lines        # the rows it clears


cdef inline int _gather(const Geometry* g, const Landings* landings, const uint64_t* bits, const uint32_t* ranks,
                        board_t b, uint8_t* placement, board_t* nb, int* n_lines) noexcept nogil:
    """Drop every placement on b that is a move, in placement order: its
    number, the next board and the rows it clears to ``placement``, ``nb``,
    ``n_lines``, the loads of the next board's bitmap word and rank
    started; returns how many.  With ``landings`` (where built: its
    ``fits`` not NULL), only the placements that fit are settled, at the
    rows it gives."""
    cdef board_t sm = smear_down(b, g.width, g.height)
    cdef int k, lines, c = 0, n = g.first[g.n_pieces]
    cdef uint64_t fits
    cdef const uint8_t* rows
    if landings.fits != NULL:
        fits = landings_of(landings, sm, &rows)
        while fits:
            k = ctz64(fits)
            fits &= fits - 1
            if settle(g, b, k, rows[k], &nb[c], &lines):
                placement[c] = <uint8_t>k
                n_lines[c] = lines
                prefetch(&bits[nb[c] >> 6])
                prefetch(&ranks[nb[c] >> 6])
                c += 1
        return c
    for k in range(n):
        if drop(g, b, sm, k, &nb[c], &lines):
            placement[c] = <uint8_t>k
            n_lines[c] = lines
            prefetch(&bits[nb[c] >> 6])
            prefetch(&ranks[nb[c] >> 6])
            c += 1
    return c


cdef inline double _choose(const Geometry* g, const uint8_t* placement, const double* q, const int64_t* j,
                           const int* n_lines, int c, int64_t i, const double* probs, int combine, const Kept* kept,
                           bint* any_moves) noexcept nogil:
    """Board i's value from its ``c`` moves (as :func:`_gather` lists
    them, in placement order; ``q`` their values, ``j`` their next boards'
    indices): each piece's first best move, kept in ``kept``, its value
    combined over the pieces; ``any_moves`` receives whether any piece fits
    (where none does, the value returned is 0)."""
    cdef int p, m = 0, chosen, P = g.n_pieces
    cdef double best, w = 0.0
    for p in range(P):
        best = 0.0     # no move fits: game over, worth 0
        chosen = -1
        while m < c and placement[m] < g.first[p + 1]:
            if chosen < 0 or q[m] > best:
                best = q[m]
                chosen = m
            m += 1
        if kept.placement != NULL:
            kept.placement[i * P + p] = NO_PLACEMENT if chosen < 0 else <uint8_t>(placement[chosen] - g.first[p])
        if kept.next != NULL:
            kept.next[i * P + p] = NO_NEXT if chosen < 0 else <uint32_t>j[chosen]
            kept.lines[i * P + p] = 0 if chosen < 0 else <uint8_t>n_lines[chosen]
        if combine == COMBINE_MEAN:
            w += probs[p] * best
        elif p == 0 or best < w:
            w = best
    any_moves[0] = c > 0
    return w if c > 0 else 0.0


cdef inline double _settle(double w, int64_t i, double* W, float* change) noexcept nogil:
    """Write board i's new value w in place; returns |change| (``change``, if
    not NULL, receives new - old)."""
    cdef double delta = fabs(w - W[i])
    if change != NULL:
        change[i] = <float>(w - W[i])
    W[i] = w
    return delta if delta == delta else 1e308   # a NaN must not pass as converged


cdef inline double _backup(const Geometry* g, const Landings* landings, const uint64_t* bits, const uint32_t* ranks,
                           board_t b, int64_t i, double* W, float* change,
                           const double* scores, const double* probs, double discount, int combine,
                           const Kept* kept) noexcept nogil:
    """One Bellman backup of board b (index i) in place; returns |change|
    (0 for a board where nothing fits: it keeps its value).  ``change``, if
    not NULL, receives the change (new - old; 0 where nothing fits).  The
    first best move of each piece goes to ``kept``."""
    cdef bint any_move
    cdef double w = _bellman(g, landings, bits, ranks, b, i, W, scores, probs, discount, combine, kept,
                             &any_move)
    if not any_move:
        if change != NULL:
            change[i] = 0.0
        return 0.0
    return _settle(w, i, W, change)


cdef inline double _bellman(const Geometry* g, const Landings* landings, const uint64_t* bits, const uint32_t* ranks,
                            board_t b, int64_t i, const double* W, const double* scores,
                            const double* probs, double discount, int combine, const Kept* kept,
                            bint* any_moves) noexcept nogil:
    """Board b's (index i) Bellman backup from ``W``, written nowhere but to
    ``kept`` (each piece's first best move); ``any_moves`` receives whether
    any piece fits (where none does, the value returned is 0, game over)."""
    cdef double q[MAX_PLACEMENTS]
    cdef uint8_t placement[MAX_PLACEMENTS]
    cdef board_t nb[MAX_PLACEMENTS]
    cdef int64_t j[MAX_PLACEMENTS]
    cdef int n_lines[MAX_PLACEMENTS]
    cdef int m, c = _gather(g, landings, bits, ranks, b, placement, nb, n_lines)
    for m in range(c):
        j[m] = index_of(bits, ranks, nb[m])
        prefetch(&W[j[m]])
    for m in range(c):
        q[m] = scores[n_lines[m]] + discount * W[j[m]]
    return _choose(g, placement, q, j, n_lines, c, i, probs, combine, kept, any_moves)


cdef inline double _evaluate_kept(const Geometry* g, const uint64_t* bits, const uint32_t* ranks, double* W,
                                  const double* scores, const double* probs, double discount, int combine,
                                  const Kept* kept, bint moves, const board_t* boards, const int64_t* index, int n,
                                  float* change) noexcept nogil:
    """Value ``n`` boards (indices ``index``; no two of which read each
    other: one layer's, or one board) by the moves a greedy sweep kept, in
    place: with ``moves``, ``kept.next`` and ``kept.lines``; else
    ``kept.placement``, each dropped again and its board looked up.  At
    most :data:`MAX_PLACEMENTS` states (n times the pieces).  Returns the
    largest change (``change``: as :func:`_backup`'s); the loads of the
    next boards' ranks, then values, are all started first."""
    cdef int P = g.n_pieces, t, p, m, k, lines
    cdef int64_t next_index[MAX_PLACEMENTS]
    cdef uint8_t next_lines[MAX_PLACEMENTS]
    cdef board_t nb[MAX_PLACEMENTS]
    cdef board_t sm
    cdef double q, w, residual = 0.0, d
    cdef bint any_move
    for t in range(n):
        if moves:
            for p in range(P):
                m = t * P + p
                k = index[t] * P + p
                next_index[m] = -1 if kept.next[k] == NO_NEXT else <int64_t>kept.next[k]
                next_lines[m] = kept.lines[k]
                if next_index[m] >= 0:
                    prefetch(&W[next_index[m]])
        else:
            sm = smear_down(boards[t], g.width, g.height)
            for p in range(P):
                m = t * P + p
                k = kept.placement[index[t] * P + p]
                next_index[m] = -1
                if k != NO_PLACEMENT and drop(g, boards[t], sm, g.first[p] + k, &nb[m], &lines):
                    next_index[m] = 0
                    next_lines[m] = <uint8_t>lines
                    prefetch(&bits[nb[m] >> 6])
                    prefetch(&ranks[nb[m] >> 6])
    if not moves:
        for m in range(n * P):
            if next_index[m] >= 0:
                next_index[m] = index_of(bits, ranks, nb[m])
                prefetch(&W[next_index[m]])
    for t in range(n):
        w = 0.0
        any_move = False
        for p in range(P):
            m = t * P + p
            q = 0.0     # no move fits: game over, worth 0
            if next_index[m] >= 0:
                q = scores[next_lines[m]] + discount * W[next_index[m]]
                any_move = True
            if combine == COMBINE_MEAN:
                w += probs[p] * q
            elif p == 0 or q < w:
                w = q
        if not any_move:
            if change != NULL:
                change[index[t]] = 0.0
            continue
        d = _settle(w, index[t], W, change)
        if d > residual:
            residual = d
    return residual
