# cython: language_level=3
"""The opponent's best response to the player's recorded moves, by Howard's
policy iteration with exact evaluations: the inner loop of the strategy
iteration that ``babytris.solvers.sweeping.strategy_iteration`` runs for games
where an opponent gives the least valuable piece.

Once the player's move on every state and the opponent's piece on every
board are fixed, each board leads to one board: the game is a graph with
one edge out of each node, and the values solve ``U[b] = c[b] + discount *
U[f[b]]`` exactly, in one walk, each chain ending in a game over, a board
already solved or a cycle (summed in closed form).

Also :func:`chosen_pieces`, the pieces an opponent gives in a solution,
the first of those tied.
"""

from cython.parallel cimport prange
from libc.math cimport fabs, INFINITY
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset

from babytris.engine._types cimport offset_t, prefetch
from babytris.solvers._sweep cimport Sweeper, Sweep, chances, PIECES_WORST, MOVES_BEST

cdef enum:
    # Boards per block of the threads sharing a pass.
    BLOCK = 4096

cdef enum:
    # The walk starts the loads of the board this many ahead.
    AHEAD = 8

cdef enum:
    # A board's status in a walk: a live board is solved in walks of one
    # parity and unseen in the next (so no pass resets them), or on the path;
    # a board with no move is solved for good.
    SOLVED_EVEN = 0
    SOLVED_ODD = 1
    ON_PATH = 2
    SOLVED_ALWAYS = 255


cdef class OpponentResponse:
    """The piece the opponent gives on each live board of a
    :class:`~babytris.solvers._sweep.Sweeper` (``pieces=1``: the least valuable,
    ``moves=0``: the player's best move, discount below 1), improved
    against the moves the sweeper's last greedy sweep recorded.

    :meth:`start` takes the least valuable piece of each board by the state
    values ``V``; :meth:`step` evaluates the pieces given exactly (writing
    the board values ``W`` and the state values ``V`` that the player's
    moves then have) and moves each board to a piece that is worth less by
    more than the margin.  Steps until none moves give the opponent's best
    response to the player's moves, and its values: Howard's policy
    iteration for the opponent, which ends after finitely many steps, each
    lowering the values.
    """

    cdef Sweeper sweeper      # (its Sweep holds the piece given on each board, where its move
                              # leads and that move's reward: see Sweeper.record_least_pieces)
    cdef Sweep* sw
    cdef Py_ssize_t n_boards, n_live
    cdef uint8_t* status      # each board's status in a walk
    cdef uint8_t parity       # the parity of the next walk
    cdef int32_t* path        # the boards of the chain being walked
    cdef bint started
    cdef Py_ssize_t generation  # the sweeper's setup this was made for

    def __cinit__(self):
        self.status = NULL
        self.path = NULL

    def __dealloc__(self):
        free(self.status)
        free(self.path)

    def __init__(self, Sweeper sweeper not None):
        if sweeper.sw.pieces != PIECES_WORST or sweeper.sw.moves != MOVES_BEST:
            raise ValueError("OpponentResponse: only for a least-valuable-piece opponent and a best-move player")
        if not 0.0 <= sweeper.sw.discount < 1.0:
            raise ValueError(f"OpponentResponse: the discount must be in [0, 1), got {sweeper.sw.discount}")
        if sweeper.before is not None:
            raise ValueError("OpponentResponse: not for synchronous sweeps")
        if sweeper.sw.V == NULL and sweeper.n_boards:
            raise ValueError("OpponentResponse: the sweeper must keep state values (not V=None)")
        cdef Py_ssize_t n = max(sweeper.n_boards, 1), i
        self.sweeper = None  # (unusable until every step below has succeeded)
        self.sw = NULL
        self.started = False
        free(self.status)  # (__init__ called again)
        free(self.path)
        self.status = <uint8_t*>malloc(n)
        self.path = <int32_t*>malloc(n * sizeof(int32_t))
        if self.status == NULL or self.path == NULL:
            raise MemoryError("OpponentResponse: cannot allocate")
        sweeper.record_least_pieces()
        self.sweeper = sweeper
        self.generation = sweeper.generation
        self.sw = &sweeper.sw
        self.n_boards = sweeper.n_boards
        self.n_live = sweeper.layer_starts[sweeper.n_layers]
        self.parity = SOLVED_EVEN
        memset(self.status, SOLVED_ALWAYS, self.n_boards)
        for i in range(self.n_live):
            self.status[sweeper.sw.order[i]] = SOLVED_ODD  # unseen in the first walk

    @staticmethod
    def bytes_per_board():
        """Bytes allocated per board, here and in the sweeper (the piece
        given, where its move leads, that move's reward, a walk's status and path)."""
        return 1 + sizeof(int32_t) + sizeof(double) + 1 + sizeof(int32_t)

    @property
    def pieces(self):
        """The piece given on each board (a copy, int16; boards with no move: 0)."""
        import numpy as np
        out = np.empty(self.n_boards, dtype=np.int16)
        cdef int16_t[::1] o = out
        cdef Py_ssize_t b
        self._check()
        for b in range(self.n_boards):
            o[b] = self.sw.least_piece[b]
        return out

    def start(self):
        """Give on each live board its least valuable piece by ``V`` (the
        first of equals; only pieces of positive chance), against the moves
        the last greedy sweep recorded (which, for points, noted them already)."""
        self._check()
        if not self.sweeper.least_noted:
            with nogil:
                respond(self.sw, self.n_live, False, 0.0, self.sweeper.n_threads)
        self.started = True

    cdef _check(self):
        # (the arrays are the sweeper's: a sweeper set up anew has others, maybe of another size)
        if self.sweeper is None or self.sw == NULL or self.status == NULL or self.path == NULL:
            raise ValueError("OpponentResponse: not set up (its __init__ failed or was not called)")
        if self.sweeper.generation != self.generation or self.sw.least_piece == NULL:
            raise ValueError("OpponentResponse: the sweeper was set up anew; make a new OpponentResponse")

    def evaluate(self):
        """Evaluate the pieces given exactly: write ``W``, as :meth:`step`
        does, but leave ``V`` and the pieces alone (for a round that goes
        on by sweeps, which choose the pieces anew)."""
        if not self.started:
            raise ValueError("evaluate: call start() first, after a greedy sweep")
        self._check()
        with nogil:
            evaluate(self.sw, self.sweeper.layer_starts, self.sweeper.n_layers, self.status, self.path,
                     self.parity, self.sweeper.n_threads)
        self.parity = SOLVED_ODD if self.parity == SOLVED_EVEN else SOLVED_EVEN

    def step(self, double margin):
        """Evaluate the pieces given exactly, then move each board to a
        piece worth less than its own by more than ``margin`` times (1 + its
        value's size); returns how many boards moved."""
        if not margin >= 0.0:
            raise ValueError(f"step: margin must be >= 0, got {margin}")
        if not self.started:
            raise ValueError("step: call start() first, after a greedy sweep")
        cdef Py_ssize_t moved
        self.evaluate()
        with nogil:
            moved = respond(self.sw, self.n_live, True, margin, self.sweeper.n_threads)
        return moved


# The loops below copy the Sweep's fields into locals: the C compiler cannot
# tell that their stores leave *sw alone, and would reload each field per board.

cdef Py_ssize_t respond(const Sweep* sw, Py_ssize_t n_live, bint revalue, double margin, int n_threads) noexcept nogil:
    """:func:`respond_range` over every live board, on ``n_threads`` threads
    sharing blocks of boards; returns how many boards moved."""
    cdef Py_ssize_t k, n_blocks = (n_live + BLOCK - 1) // BLOCK, moved = 0, last
    if n_threads <= 1 or n_blocks < 2:
        return respond_range(sw, 0, n_live, revalue, margin)
    for k in prange(n_blocks, num_threads=n_threads, schedule="static"):
        last = (k + 1) * BLOCK
        if last > n_live:
            last = n_live
        moved += respond_range(sw, k * BLOCK, last, revalue, margin)
    return moved


cdef Py_ssize_t respond_range(const Sweep* sw, Py_ssize_t first, Py_ssize_t last, bint revalue,
                              double margin) noexcept nogil:
    """Give on live boards ``order[first:last]`` the least valuable piece by ``V``, and note
    where its move leads and that move's reward; with ``revalue``, first
    value the board's states by the moves recorded and ``W``, and move only
    to a piece worth less than the one given by more than the margin.
    Returns how many boards moved."""
    cdef uint8_t* piece = sw.least_piece
    cdef int32_t* leads_to = sw.least_next
    cdef double* gain = sw.least_gain
    cdef const int32_t* order = sw.order
    cdef const offset_t* offsets = sw.offsets
    cdef const int16_t* policy = sw.policy
    cdef const int32_t* nxt = sw.nxt
    cdef const uint8_t* lines = sw.lines
    cdef const double* scores = sw.scores
    cdef const double* move_reward = sw.move_reward
    cdef const double* probs = sw.probs
    cdef const int32_t* chance = sw.chance
    cdef const double* W = sw.W
    cdef double* V = sw.V
    cdef const double* pr = probs
    cdef double discount = sw.discount, dead = sw.dead, own, low
    cdef bint lower
    cdef const int32_t* chosen_next = sw.chosen_next
    cdef const uint8_t* chosen_lines = sw.chosen_lines
    cdef bint cached = sw.chosen_valid and chosen_next != NULL and move_reward == NULL
    cdef int32_t a
    cdef Py_ssize_t i, s, moved = 0
    cdef int32_t b
    cdef int64_t e
    cdef int p, P = sw.P, least
    for i in range(first, last):
        b = order[i]
        s = <Py_ssize_t>b * P
        if revalue and cached:  # (the greedy sweep's note of the moves: one random load a move less)
            for p in range(P):
                a = chosen_next[s + p]
                V[s + p] = dead if a < 0 else scores[chosen_lines[s + p]] + discount * W[a]
        elif revalue:
            for p in range(P):
                if policy[s + p] < 0:
                    V[s + p] = dead
                else:
                    e = offsets[s + p] + policy[s + p]
                    V[s + p] = (move_reward[e] if move_reward != NULL else scores[lines[e]]) + discount * W[nxt[e]]
        if chance != NULL:
            pr = probs + <Py_ssize_t>chance[b] * P
        # Branch-free: which piece is least is a coin toss to the branch predictor.
        least = 0
        low = INFINITY
        for p in range(P):
            lower = (pr[p] > 0.0) & (V[s + p] < low)
            low = V[s + p] if lower else low
            least = p if lower else least
        if revalue:
            own = V[s + piece[b]]
            if not V[s + least] < own - margin * (1.0 + fabs(own)):
                continue
            moved += 1
        piece[b] = <uint8_t>least
        s += least
        if policy[s] < 0:
            leads_to[b] = -1
            gain[b] = dead
        else:
            e = offsets[s] + policy[s]
            leads_to[b] = nxt[e]
            gain[b] = move_reward[e] if move_reward != NULL else scores[lines[e]]
    return moved


cdef void evaluate(const Sweep* sw, const int64_t* layer_starts, Py_ssize_t n_layers, uint8_t* status,
                   int32_t* path, uint8_t solved, int n_threads) noexcept nogil:
    """``W[b]`` = the value of each live board b with the pieces given and
    the moves recorded, exactly (boards with no move keep theirs).
    ``status``: each board's, the live ones unseen (the other parity than
    ``solved``, which they leave with); ``path``: scratch, one per board.

    Where no board leads to one of its own layer, most boards lead to one
    of a layer swept before theirs: after the walks from the first layer's
    boards, the layers that follow settle such boards in one pass each,
    threads sharing a layer (a board reads only another layer's entries),
    and the walks take what is left."""
    cdef Py_ssize_t layer, k, n_blocks, first, last
    cdef Py_ssize_t n_live = layer_starts[n_layers]
    cdef uint8_t unseen = SOLVED_ODD if solved == SOLVED_EVEN else SOLVED_EVEN
    if sw.independent_layers and n_layers > 1:
        walk(sw, status, path, 0, layer_starts[1], solved)
        for layer in range(1, n_layers):
            first = layer_starts[layer]
            n_blocks = (layer_starts[layer + 1] - first + BLOCK - 1) // BLOCK
            for k in prange(n_blocks, num_threads=max(n_threads, 1), schedule="static"):
                last = first + (k + 1) * BLOCK
                if last > layer_starts[layer + 1]:
                    last = layer_starts[layer + 1]
                settle(sw, status, first + k * BLOCK, last, solved, unseen)
    walk(sw, status, path, 0, n_live, solved)


cdef void settle(const Sweep* sw, uint8_t* status, Py_ssize_t first, Py_ssize_t last, uint8_t solved,
                 uint8_t unseen) noexcept nogil:
    """Solve each unseen board of ``order[first:last]`` whose piece ends
    the game or leads to a solved board; leave the others unseen."""
    cdef const int32_t* leads_to = sw.least_next
    cdef const double* gain = sw.least_gain
    cdef const int32_t* order = sw.order
    cdef double* W = sw.W
    cdef double discount = sw.discount
    cdef Py_ssize_t i
    cdef int32_t b, a
    for i in range(first, last):
        b = order[i]
        if status[b] != unseen:
            continue
        a = leads_to[b]
        if a < 0:
            W[b] = gain[b]
        elif status[a] == solved or status[a] == SOLVED_ALWAYS:
            W[b] = gain[b] + discount * W[a]
        else:
            continue
        status[b] = solved


cdef void walk(const Sweep* sw, uint8_t* status, int32_t* path, Py_ssize_t first, Py_ssize_t n_live,
               uint8_t solved) noexcept nogil:
    """Solve every unseen board of ``order[first:n_live]`` and the boards
    its chain leads through, walking each chain to its end."""
    cdef const int32_t* leads_to = sw.least_next
    cdef const double* gain = sw.least_gain
    cdef const int32_t* order = sw.order
    cdef double* W = sw.W
    cdef double discount = sw.discount, total, power
    cdef Py_ssize_t i, j, k, top
    cdef int32_t b, next_
    cdef uint8_t unseen = SOLVED_ODD if solved == SOLVED_EVEN else SOLVED_EVEN
    for i in range(first, n_live):
        if i + AHEAD < n_live:  # start the loads of a board a few ahead
            b = leads_to[order[i + AHEAD]]
            if b >= 0:
                prefetch(&W[b])
                prefetch(&status[b])
        if status[order[i]] != unseen:
            continue
        # Follow the chain from this board until it ends: in a game over
        # (b = -1), at a board already solved, or back on itself.
        top = 0
        b = order[i]
        while status[b] == unseen:
            status[b] = ON_PATH
            path[top] = b
            top += 1
            b = leads_to[b]
            if b < 0:
                break
        if b < 0:  # the last board's piece fits nowhere: it is worth the dead value
            top -= 1
            W[path[top]] = gain[path[top]]
            status[path[top]] = solved
            next_ = path[top]
        elif status[b] == ON_PATH:
            # A cycle path[k:top] back to path[k] = b: its first value in
            # closed form, then the others back round to it.
            k = top - 1
            while path[k] != b:
                k -= 1
            total = 0.0
            power = 1.0
            for j in range(k, top):
                total += power * gain[path[j]]
                power *= discount
            W[b] = total / (1.0 - power)
            status[b] = solved
            next_ = b
            while top > k + 1:
                top -= 1
                W[path[top]] = gain[path[top]] + discount * W[next_]
                status[path[top]] = solved
                next_ = path[top]
            top = k
            next_ = b
        else:
            next_ = b
        # Back down the chain: each board's value from the one it leads to.
        while top > 0:
            top -= 1
            W[path[top]] = gain[path[top]] + discount * W[next_]
            status[path[top]] = solved
            next_ = path[top]


def chosen_pieces(const double[:, ::1] values, double slack, bint least, const double[:, ::1] chances=None):
    """The piece an opponent gives on each board: the first whose value is
    within ``slack`` of the least (``least``) or the most of its row, among
    the pieces of positive chance (``chances``, the same shape as
    ``values``; None: all).  int16 array ``(len(values),)``; a row with a
    NaN or no piece of positive chance gives piece 0."""
    cdef Py_ssize_t n = values.shape[0], P = values.shape[1], b, p
    if chances is not None and (chances.shape[0] != n or chances.shape[1] != P):
        raise ValueError("chosen_pieces: chances must have the shape of values")
    if not slack >= 0.0:
        raise ValueError(f"chosen_pieces: slack must be >= 0, got {slack}")
    import numpy as np
    out = np.zeros(n, dtype=np.int16)
    cdef int16_t[::1] o = out
    cdef double extreme, v
    cdef bint any_
    with nogil:
        for b in range(n):
            any_ = False
            extreme = 0.0
            for p in range(P):
                if chances is not None and not chances[b, p] > 0.0:
                    continue
                v = values[b, p]
                if not any_ or v != v or (v < extreme if least else v > extreme):
                    extreme = v
                any_ = True
                if v != v:
                    break
            if not any_ or extreme != extreme:
                continue
            for p in range(P):
                if chances is not None and not chances[b, p] > 0.0:
                    continue
                if (values[b, p] <= extreme + slack) if least else (values[b, p] >= extreme - slack):
                    o[b] = <int16_t>p
                    break
    return out
