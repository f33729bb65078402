# cython: language_level=3
"""Bellman backups over the CSR move table of babytris: greedy (optimality)
sweeps and policy-evaluation sweeps, in place, layer by layer, threaded, and
the :class:`Sweeper` that runs them for ``babytris.solvers.sweeping``.

The inner loops hold no Python objects and run without the GIL.
"""

from cython.parallel cimport prange, threadid
from libc.math cimport fabs, INFINITY
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy

import numpy as np

from babytris.solvers._greedy cimport Backup, first_best
from babytris.engine._types cimport check_move_table, check_room, offset_t, populate_threads, prefetch


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
    # Live boards per block of a layer swept by several threads.
    BLOCK = 1024
    # Sweeps prefetch the values a board this many boards ahead will read.
    AHEAD = 6


cdef inline double combine_pieces(const Sweep* sw, int32_t b, const double* v) noexcept nogil:
    """A board's value from its states' values ``v[0:P]``; an opponent gives
    only pieces of positive chance (those left in the bag)."""
    cdef int p
    cdef double w
    cdef bint first = True
    cdef const double* pr = chances(sw, b)
    if sw.pieces == PIECES_RANDOM:
        w = 0.0
        for p in range(sw.P):
            w += pr[p] * v[p]
        return w
    if sw.pieces == PIECES_FIXED:
        return v[sw.piece_choice[b]]
    w = 0.0
    for p in range(sw.P):
        if pr[p] > 0.0 and (first or ((v[p] < w) if sw.pieces == PIECES_WORST else (v[p] > w))):
            w = v[p]
            first = False
    return w


cdef inline double store_value(double* V, double* V_prev, Py_ssize_t s, double best, double residual) noexcept nogil:
    """Write entry s's new value (a state's in V, or a board's in W), and its
    old one to ``V_prev`` if not NULL; returns the residual grown by its
    change (a NaN, from inf - inf, must not pass as converged)."""
    cdef double delta = fabs(best - V[s])
    if delta > residual or delta != delta:
        residual = delta
    if V_prev != NULL:
        V_prev[s] = V[s]
    V[s] = best
    return residual


cdef inline double store_board(const Sweep* sw, int32_t b, double w, double residual) noexcept nogil:
    """Write board b's new value (and its change to ``W_change`` if not
    NULL); returns the residual grown by its change."""
    if sw.W_change != NULL:
        sw.W_change[b] = <float>(w - sw.W[b])
    return store_value(sw.W, sw.W_prev, b, w, residual)


cdef double greedy_range_drawn(const Sweep* sw, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """:func:`greedy_range` for the common games: the best move, points by
    rows cleared, pieces drawn (one accumulation per state, no branches but
    the loop's) or given by an opponent, the least valuable of those it may
    give.  The only sweep that runs with V NULL: it then writes board values
    alone, and its residual is their largest change."""
    # Locals, not sw.*: the C compiler cannot tell that the stores into V, W
    # and the policy leave *sw alone, and would reload every field per move.
    cdef const offset_t* offsets = sw.offsets
    cdef const int32_t* nxt = sw.nxt
    cdef const uint8_t* lines = sw.lines
    cdef const double* scores = sw.scores
    cdef const double* pr
    cdef const int32_t* order = sw.order
    cdef double* W = sw.W
    cdef const double* R = sw.R
    cdef double* V = sw.V
    cdef double* V_prev = sw.V_prev
    cdef double* W_prev = sw.W_prev
    cdef int16_t* policy = sw.policy
    cdef double discount = sw.discount, dead = sw.dead
    cdef int P = sw.P
    cdef Py_ssize_t i, s
    cdef int64_t e, lo, hi
    cdef int p
    cdef int16_t arg
    cdef int32_t b
    cdef double best, q, w, residual = 0.0
    cdef bint better, worst = sw.pieces == PIECES_WORST
    cdef bint note = worst and sw.least_piece != NULL
    cdef uint8_t* least_piece = sw.least_piece
    cdef int32_t* least_next = sw.least_next
    cdef double* least_gain = sw.least_gain
    cdef int32_t* chosen_next = sw.chosen_next
    cdef uint8_t* chosen_lines = sw.chosen_lines
    cdef int least
    cdef int64_t least_move, mask
    for i in range(first, last):
        b = order[i]
        if i + AHEAD < last:
            # Start the random loads of a board a few steps ahead.
            s = <Py_ssize_t>order[i + AHEAD] * P
            for e in range(offsets[s], offsets[s + P]):
                prefetch(&R[nxt[e]])
        pr = chances(sw, b)
        w = INFINITY if worst else 0.0
        least = 0
        least_move = -1
        for p in range(P):
            s = <Py_ssize_t>b * P + p
            lo = offsets[s]
            hi = offsets[s + 1]
            best = dead         # no move fits: game over
            arg = -1
            if lo < hi:
                best = scores[lines[lo]] + discount * R[nxt[lo]]
                arg = 0
                for e in range(lo + 1, hi):
                    q = scores[lines[e]] + discount * R[nxt[e]]
                    # Branch-free max: a mispredicted branch would stall the loads in
                    # flight, and the compiler branches on a select of two values.
                    mask = -<int64_t>(q > best)
                    best = q if q > best else best
                    arg = <int16_t>((arg & ~mask) | ((e - lo) & mask))
            if policy != NULL:  # (NULL: board values only, the chosen moves noted below)
                policy[s] = arg
            if chosen_next != NULL:
                chosen_next[s] = nxt[lo + arg] if arg >= 0 else -1
                chosen_lines[s] = lines[lo + arg] if arg >= 0 else 0
            if V != NULL:   # (NULL: board values only, see Sweeper)
                residual = store_value(V, V_prev, s, best, residual)
            if not worst:
                w += pr[p] * best
            else:  # (branch-free too: which piece is least is a coin toss)
                q = best if pr[p] > 0.0 else INFINITY
                mask = -<int64_t>(q < w)
                w = q if q < w else w
                least = <int>((least & ~mask) | (p & mask))
                least_move = (least_move & ~mask) | ((lo + arg if arg >= 0 else -1) & mask)
        if note:
            least_piece[b] = <uint8_t>least
            least_next[b] = nxt[least_move] if least_move >= 0 else -1
            least_gain[b] = scores[lines[least_move]] if least_move >= 0 else dead
        residual = store_value(W, W_prev, b, w, residual)
    return residual


cdef double greedy_range(const Sweep* sw, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """Bellman backups of the states of boards ``order[first:last]``,
    recording each state's move; returns the largest |change| of V or W."""
    # Locals, not sw.*: the C compiler cannot tell that the stores into V, W
    # and the policy leave *sw alone, and would reload every field per move.
    cdef const offset_t* offsets = sw.offsets
    cdef const int32_t* nxt = sw.nxt
    cdef const uint8_t* lines = sw.lines
    cdef const double* scores = sw.scores
    cdef const double* move_reward = sw.move_reward
    cdef const int32_t* order = sw.order
    cdef const double* W = sw.R
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
    cdef double best, q, residual = 0.0
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
            residual = store_value(V, V_prev, s, best, residual)
            v[p] = best
        # The board value counts too: after an extrapolation (or evaluation
        # sweeps) it need not agree with its states' values, and a sweep that
        # leaves V alone while it moves W has not reached the fixed point.
        residual = store_board(sw, b, combine_pieces(sw, b, v), residual)
    return residual


cdef double evaluation_range(const Sweep* sw, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """Backups of boards ``order[first:last]`` under the moves the last
    greedy sweep chose (``policy``); returns the largest |change| of W.  Only
    W is kept: V is recomputed by the next greedy sweep, so this pass reads
    one move per state where a greedy sweep reads a row (the chosen moves
    lie in the rows in order, so their loads run ahead of the random ones)."""
    cdef const offset_t* offsets = sw.offsets
    cdef const int32_t* nxt = sw.nxt
    cdef const uint8_t* lines = sw.lines
    cdef const double* move_reward = sw.move_reward
    cdef const int16_t* policy = sw.policy
    cdef const int32_t* order = sw.order
    cdef const double* scores = sw.scores
    cdef const double* W = sw.R
    cdef double discount = sw.discount
    cdef bint custom = sw.move_reward != NULL
    cdef int P = sw.P
    cdef Py_ssize_t i, s
    cdef int p
    cdef int32_t b
    cdef int64_t e
    cdef double residual = 0.0
    cdef double v[64]
    cdef const double* probs
    cdef double w, q
    cdef bint drawn = sw.pieces == PIECES_RANDOM and not custom
    cdef bint worst = sw.pieces == PIECES_WORST and not custom
    cdef const int32_t* chosen_next = sw.chosen_next
    cdef const uint8_t* chosen_lines = sw.chosen_lines
    cdef bint cached = sw.chosen_valid and chosen_next != NULL and (drawn or worst) and sw.moves == MOVES_BEST
    cdef Py_ssize_t t
    for i in range(first, last):
        b = order[i]
        s = <Py_ssize_t>b * P
        if cached:
            # The common games with the chosen moves noted: one random load a move.
            if i + AHEAD < last:
                t = <Py_ssize_t>order[i + AHEAD] * P
                for p in range(P):
                    if chosen_next[t + p] >= 0:
                        prefetch(&W[chosen_next[t + p]])
            probs = chances(sw, b)
            w = 0.0 if drawn else INFINITY
            for p in range(P):
                q = sw.dead
                if chosen_next[s + p] >= 0:
                    q = scores[chosen_lines[s + p]] + discount * W[chosen_next[s + p]]
                if drawn:
                    w += probs[p] * q
                elif probs[p] > 0.0 and q < w:
                    w = q
        elif drawn:
            # The common case, kept to one accumulation per state.
            probs = chances(sw, b)
            w = 0.0
            for p in range(P):
                if policy[s + p] >= 0:
                    e = offsets[s + p] + policy[s + p]
                    w += probs[p] * (scores[lines[e]] + discount * W[nxt[e]])
                else:
                    w += probs[p] * sw.dead
        elif worst:
            # The robust player's game: the least valuable piece the opponent may give.
            probs = chances(sw, b)
            w = INFINITY
            for p in range(P):
                if probs[p] > 0.0:
                    q = sw.dead
                    if policy[s + p] >= 0:
                        e = offsets[s + p] + policy[s + p]
                        q = scores[lines[e]] + discount * W[nxt[e]]
                    w = q if q < w else w
        else:
            for p in range(P):
                v[p] = sw.dead
                if policy[s + p] >= 0:
                    e = offsets[s + p] + policy[s + p]
                    v[p] = (move_reward[e] if custom else scores[lines[e]]) + discount * W[nxt[e]]
            w = combine_pieces(sw, b, v)
        residual = store_board(sw, b, w, residual)
    return residual


cdef inline bint drawn_games(const Sweep* sw) noexcept nogil:
    """Whether greedy sweeps take :func:`greedy_range_drawn`."""
    return ((sw.pieces == PIECES_RANDOM or sw.pieces == PIECES_WORST) and sw.moves == MOVES_BEST
            and sw.move_reward == NULL)


cdef double sweep_layers(const Sweep* sw, bint greedy, const int64_t* layer_starts, Py_ssize_t n_layers,
                         int n_threads, double* block_residual) noexcept nogil:
    """One sweep, layer after layer; a layer's blocks are shared by
    ``n_threads`` threads (``block_residual``: scratch, one per block)."""
    cdef Py_ssize_t layer, k, first, last, n_blocks
    cdef double residual = 0.0, r
    cdef bint drawn = drawn_games(sw)
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


cdef class Sweeper:
    """In-place Bellman sweeps over a CSR move table (afterstate form).

    Holds views of the caller's arrays: ``V`` (float64, ``n_boards * P``),
    ``W`` (float64, ``n_boards``), ``policy`` (int16, ``n_boards * P``: the
    chosen move's offset in its row, -1 where no move fits); each sweep
    updates them in place.  ``V=None`` keeps board values alone (for the
    common games: ``pieces`` 0 or 1, ``moves=0``, no ``move_reward``): a
    greedy sweep's residual is then the largest change of W, and
    :func:`babytris.solvers._greedy.state_values` gives the state values after;
    with ``policy=None`` too, the moves chosen are kept only in the cache
    of :meth:`cache_chosen_moves` (in ``chosen_room`` if given), which the
    evaluation sweeps read.  ``order`` (int32) lists the boards with a move in
    the order to sweep them, ``layer_starts`` (int64) cuts it into layers.
    With ``independent_layers`` (no board leads to another of its own layer:
    the caller vouches for it) up to ``n_threads`` threads share each layer;
    otherwise sweeps run on one thread, whatever ``n_threads`` says.

    ``pieces`` says how a board's value combines its states' (0: the mean
    weighted by ``probs``; 1: the least, 2: the most, as an opponent giving
    the piece would; 3: the state of the piece ``piece_choice[board]``);
    ``moves`` how a state's value combines its moves' (0: the best; 1: the
    mean, a player placing at random; 2: the move ``fixed_move[state]``).
    With ``chance`` (int32, one per board) the chances differ by board:
    board b's are ``probs[chance[b] * P:(chance[b] + 1) * P]`` (a bag's
    contents), and an opponent gives only pieces of positive chance.
    A move's reward is ``scores[lines]``, or ``move_reward[move]`` if given;
    a state with no move is worth ``dead_value`` (the caller gives the
    boards with no move at all that value in ``V`` and ``W``: they are not swept).
    """

    # (its fields are declared in _sweep.pxd, where other compiled modules read them)

    def __cinit__(self):
        self.block_residual = NULL
        self.sw.W_change = NULL
        self.sw.chosen_next = NULL
        self.sw.chosen_lines = NULL
        self.sw.chosen_valid = False
        self.sw.least_piece = NULL
        self.sw.least_next = NULL
        self.sw.least_gain = NULL

    def __dealloc__(self):
        free(self.block_residual)
        self._free_least()
        self._free_chosen()

    cdef void _free_chosen(self) noexcept:
        # (a C flag, not chosen_room is None: the garbage collector may clear chosen_room first)
        if not self.chosen_borrowed:
            free(self.sw.chosen_next)
            free(self.sw.chosen_lines)
        self.chosen_borrowed = False
        self.chosen_room = None
        self.sw.chosen_next = NULL
        self.sw.chosen_lines = NULL
        self.sw.chosen_valid = False

    def cache_chosen_moves(self, uint8_t[::1] room=None):
        """From now on, greedy sweeps of the common games (the best move,
        points, pieces drawn or the least valuable given) note each state's
        chosen move as the board it leads to and its rows cleared, and the
        evaluation sweeps after them read these: one random load a move
        less (5 bytes a state).  ``room``, if given, holds the cache (at
        least 5 bytes a state, starting 4-byte aligned; kept alive by the
        sweeper): memory the caller uses only once the sweeps are done."""
        cdef Py_ssize_t n = max(self.n_boards * self.sw.P, 1)
        if room is not None:
            check_room("cache_chosen_moves: room", room, n)
        if self.sw.chosen_next != NULL:
            if room is not None:
                raise ValueError("cache_chosen_moves: the cache is set up already; no room can be given now")
            return
        if room is not None:
            self.chosen_room = room
            self.chosen_borrowed = True
            self.sw.chosen_next = <int32_t*>&room[0]
            self.sw.chosen_lines = &room[4 * n]
            return
        self.sw.chosen_next = <int32_t*>malloc(n * sizeof(int32_t))
        self.sw.chosen_lines = <uint8_t*>malloc(n)
        if self.sw.chosen_next == NULL or self.sw.chosen_lines == NULL:
            self._free_chosen()
            raise MemoryError("cache_chosen_moves: cannot allocate")

    cdef void _free_least(self) noexcept:
        free(self.sw.least_piece)
        free(self.sw.least_next)
        free(self.sw.least_gain)
        self.sw.least_piece = NULL
        self.sw.least_next = NULL
        self.sw.least_gain = NULL
        self.least_noted = False

    def record_least_pieces(self):
        """From now on, greedy sweeps with an opponent giving the least
        valuable piece (``pieces=1``), the best move and points note on each
        board that piece, where its move leads and that move's reward, for
        :class:`babytris.solvers._strategy.OpponentResponse` (:attr:`least_noted`
        says whether the last greedy sweep did)."""
        if self.sw.least_piece != NULL:
            return
        cdef Py_ssize_t n = max(self.n_boards, 1)
        # calloc: zeros (piece 0, board 0, reward 0) the pages get only when first written; the boards
        # with no move are never written, and nothing reads their entries but as a valid board or piece.
        self.sw.least_piece = <uint8_t*>calloc(n, 1)
        self.sw.least_next = <int32_t*>calloc(n, sizeof(int32_t))
        self.sw.least_gain = <double*>calloc(n, sizeof(double))
        if self.sw.least_piece == NULL or self.sw.least_next == NULL or self.sw.least_gain == NULL:
            self._free_least()
            raise MemoryError("record_least_pieces: cannot allocate")

    def __init__(self, const offset_t[::1] offsets, const int32_t[::1] next_board,
                 const uint8_t[::1] lines, const double[::1] scores, const double[::1] probs,
                 double discount, double[::1] V, double[::1] W, int16_t[::1] policy,
                 const int32_t[::1] order, const int64_t[::1] layer_starts, *, int pieces=PIECES_RANDOM,
                 int moves=MOVES_BEST, const int16_t[::1] piece_choice=None, const int16_t[::1] fixed_move=None,
                 const double[::1] move_reward=None, bint independent_layers=False, int n_threads=1,
                 double dead_value=0.0, bint synchronous=False, const int32_t[::1] chance=None,
                 uint8_t[::1] chosen_room=None):
        cdef Py_ssize_t n_boards = W.shape[0], n_moves = next_board.shape[0], i, widest = 1
        cdef int P = probs.shape[0] if chance is None or n_boards == 0 else (offsets.shape[0] - 1) // n_boards
        if not 1 <= P <= 64 or offsets.shape[0] != n_boards * P + 1 or (V is not None and V.shape[0] != n_boards * P):
            raise ValueError("Sweeper: array shapes do not match")
        if probs.shape[0] % P or (chance is None and probs.shape[0] != P):
            raise ValueError("Sweeper: probs must hold P chances (and P per class with chance)")
        if chance is not None:
            if chance.shape[0] != n_boards:
                raise ValueError("Sweeper: chance must have one entry per board")
            for i in range(n_boards):
                if not 0 <= chance[i] < probs.shape[0] // P:
                    raise ValueError(f"Sweeper: chance[{i}] = {chance[i]} is not a chance class")
        if (policy is not None and policy.shape[0] != n_boards * P) or scores.shape[0] < 1:
            raise ValueError("Sweeper: array shapes do not match")
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
        if V is None and not ((pieces == PIECES_RANDOM or pieces == PIECES_WORST) and moves == MOVES_BEST
                              and move_reward is None):
            raise ValueError("Sweeper: V=None (board values only) needs pieces=0 or 1, moves=0 and no move_reward")
        if policy is None and V is not None:
            raise ValueError("Sweeper: policy=None only with V=None (board values and the chosen moves' cache)")
        if chosen_room is not None and policy is not None:
            raise ValueError("Sweeper: chosen_room only with policy=None (give a cache's room to cache_chosen_moves)")
        if chosen_room is not None:
            check_room("Sweeper: chosen_room", chosen_room, max(n_boards * P, 1))
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
        # The sweeps index V, W and the move arrays by these without checks (the evaluation
        # sweeps read the policy, so it must hold moves of its states).
        check_move_table("Sweeper", offsets, &policy[0] if policy is not None and n_boards else NULL, next_board,
                         lines, n_boards, scores.shape[0])
        self.arrays = (offsets, next_board, lines, scores, probs, V, W, policy, order, layer_starts, piece_choice,
                       fixed_move, move_reward, chance)
        # The one allocation, after every check: a failed __init__ holds nothing
        # (and __init__ called again frees the buffer of the first call).
        free(self.block_residual)
        self._free_least()
        self._free_chosen()
        self.block_residual = <double*>malloc(((widest + BLOCK - 1) // BLOCK + 1) * sizeof(double))
        if self.block_residual == NULL:
            raise MemoryError("Sweeper: cannot allocate")
        self.n_boards = n_boards
        self.mapped = False
        self.generation += 1  # (whatever holds pointers into the last setup must not use them)
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
        self.sw.chance = &chance[0] if chance is not None and n_boards else NULL
        self.sw.discount = discount
        self.sw.dead = dead_value
        self.sw.pieces = pieces
        self.sw.moves = moves
        self.sw.piece_choice = &piece_choice[0] if piece_choice is not None and n_boards else NULL
        self.sw.fixed_move = &fixed_move[0] if fixed_move is not None and n_boards else NULL
        self.sw.order = &order[0] if order.shape[0] else NULL
        self.sw.independent_layers = independent_layers
        self.sw.V = &V[0] if V is not None and n_boards else NULL
        self.sw.W = &W[0] if n_boards else NULL
        self.sw.V_prev = NULL
        self.sw.W_prev = NULL
        self.sw.R = self.sw.W
        self.before = None
        if synchronous:
            self.before = np.array(W, dtype=np.float64)
            self.sw.R = &self.before[0] if n_boards else NULL
        self.sw.policy = &policy[0] if policy is not None and n_boards else NULL
        if move_reward is not None and n_moves == 0:
            self.sw.move_reward = &scores[0]   # never read, but marks the custom rewards
        if policy is None:
            self.cache_chosen_moves(chosen_room)  # (the evaluation sweeps' only record of the moves)

    @property
    def n_live(self):
        """Boards with at least one move (the others keep their values)."""
        return self.layer_starts[self.n_layers]

    def greedy_sweep(self, double[::1] V_prev=None, double[::1] W_prev=None, *, Py_ssize_t layer=-1):
        """One Bellman sweep over every live board, recording each state's
        move; returns the largest |change| of V or W.  ``V_prev``,
        ``W_prev``, if given, receive the values as they were before it.
        ``layer`` (>= 0): that layer's boards alone (the sharded solve's sweep in parts)."""
        cdef double residual = 0.0
        cdef Py_ssize_t first_layer = self._first_layer(layer), n_layers = self.n_layers if layer < 0 else 1
        if (V_prev is None) != (W_prev is None):
            raise ValueError("greedy_sweep: give both V_prev and W_prev, or neither")
        if V_prev is not None and self.sw.V == NULL and self.n_boards:
            raise ValueError("greedy_sweep: no V_prev where the sweeps keep no state values (V=None)")
        if V_prev is not None:
            if V_prev.shape[0] != self.n_boards * self.sw.P or W_prev.shape[0] != self.n_boards:
                raise ValueError("greedy_sweep: V_prev / W_prev shapes do not match")
            self.sw.V_prev = &V_prev[0] if self.n_boards else NULL
            self.sw.W_prev = &W_prev[0] if self.n_boards else NULL
        self._remember()
        cdef Py_ssize_t n = self.n_boards, P = self.sw.P
        with nogil:
            if not self.mapped and n:  # (it writes them all: their pages mapped first, see populate)
                populate_threads(self.sw.W, n * sizeof(double), self.n_threads)
                populate_threads(self.sw.V, n * P * sizeof(double) if self.sw.V != NULL else 0, self.n_threads)
                if self.sw.chosen_next != NULL:
                    populate_threads(self.sw.chosen_next, n * P * sizeof(int32_t), self.n_threads)
                    populate_threads(self.sw.chosen_lines, n * P, self.n_threads)
            self.mapped = True
            residual = sweep_layers(&self.sw, True, self.layer_starts + first_layer, n_layers, self.n_threads,
                                    self.block_residual)
        self.least_noted = self.sw.least_piece != NULL and drawn_games(&self.sw)
        # (only live boards' states are noted; the evaluation sweeps read no other)
        self.sw.chosen_valid = self.sw.chosen_next != NULL and drawn_games(&self.sw)
        self.sw.V_prev = self.sw.W_prev = NULL
        return residual

    cdef Py_ssize_t _first_layer(self, Py_ssize_t layer) except -1:
        if not -1 <= layer < self.n_layers:
            raise ValueError(f"layer must be -1 (every layer) or in [0, {self.n_layers}), got {layer}")
        return max(layer, 0)

    @property
    def synchronous(self):
        """Whether every sweep reads the board values of the sweep before (Jacobi)."""
        return self.before is not None

    cdef void _remember(self) noexcept:
        """(synchronous sweeps) W as it is now, for the sweep to read."""
        if self.before is not None and self.n_boards:
            memcpy(&self.before[0], self.sw.W, self.n_boards * sizeof(double))

    def first_best_moves(self, double slack):
        """Break ties the same way whatever the path to the values: every
        state's move becomes the first (in row order) whose value, with the
        current board values, is within ``slack`` (>= 0) of its best.  Only
        for ``moves=0`` (the best move); returns how many states changed.
        Runs on ``n_threads`` (each state alone: the result does not depend
        on them); see :func:`babytris.solvers._greedy.first_best_moves`, the same on given arrays."""
        cdef Backup m
        cdef Py_ssize_t changed = 0
        if self.sw.moves != MOVES_BEST:
            raise ValueError("first_best_moves: only where the player takes the best move (moves=0)")
        if self.sw.policy == NULL and self.n_boards:
            raise ValueError("first_best_moves: this sweeper keeps no policy (policy=None)")
        if not slack >= 0.0:
            raise ValueError(f"first_best_moves: slack must be >= 0, got {slack}")
        self.sw.chosen_valid = False  # (the moves change under the cache)
        m.offsets, m.nxt, m.lines, m.scores = self.sw.offsets, self.sw.nxt, self.sw.lines, self.sw.scores
        m.move_reward, m.W, m.discount = self.sw.move_reward, self.sw.W, self.sw.discount
        with nogil:
            changed = first_best(&m, self.sw.policy, slack, NULL, self.n_boards * self.sw.P, self.n_threads)
        return changed

    def evaluation_sweep(self, float[::1] changes=None, *, Py_ssize_t layer=-1):
        """One sweep evaluating the moves the last greedy sweep chose (before any greedy
        sweep: none, so every board gets the dead value); updates W only and returns its largest
        change.  ``changes`` (float32), if given, receives each swept board's change of W (an
        Aitken jump's direction, 4 bytes a board); ``layer``: as :meth:`greedy_sweep`'s."""
        cdef double residual = 0.0
        cdef Py_ssize_t first_layer = self._first_layer(layer), n_layers = self.n_layers if layer < 0 else 1
        if self.sw.policy == NULL and not self.sw.chosen_valid and self.n_boards:
            raise ValueError("evaluation_sweep: no move chosen yet (policy=None): run a greedy sweep first")
        if changes is not None:
            if changes.shape[0] != self.n_boards:
                raise ValueError("evaluation_sweep: changes shape does not match")
            self.sw.W_change = &changes[0] if self.n_boards else NULL
        self._remember()
        self.least_noted = False  # (the values change under the pieces noted)
        with nogil:
            residual = sweep_layers(&self.sw, False, self.layer_starts + first_layer, n_layers, self.n_threads,
                                    self.block_residual)
        self.sw.W_change = NULL
        return residual

