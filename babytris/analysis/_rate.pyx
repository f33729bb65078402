# cython: language_level=3
"""Compiled kernels of the long-run rate (``babytris.analysis.rate``).

Over the CSR move table (state ``s = board * P + piece``, moves
``offsets[s]:offsets[s+1]``): :func:`survival_kernel` finds the boards from
which the player can keep playing forever whatever pieces come, with every
other board's rank (how many placements it surely still allows);
:func:`restrict` copies the moves that stay in that kernel into a compact
table, over which :func:`relative_value_iteration` runs the undiscounted
Bellman sweeps with their certified bounds; :func:`reach` gives the largest
chance of reaching the kernel from the other boards, :func:`fill_policy`
their moves.  The loops hold no Python objects and run without the GIL;
where threads share a pass, every value is computed by the same operations
whatever their number, so results do not depend on it.
"""

from cython.parallel cimport prange
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t
from libc.math cimport INFINITY

from babytris.engine._types cimport offset_t
from babytris.engine.signals cimport interrupted

import numpy as np

cdef enum:
    # Boards per block of a parallel pass.
    BLOCK = 4096
    # Against the opponent, the bound over the boards its choices let the
    # player reach is computed every this many iterations (and at the last):
    # the bound over the whole kernel, computed at every iteration, is
    # usually as good and costs nothing.
    CLOSURE_EVERY = 8

# The rank of a kernel board in comparisons: above every finite rank.
cdef int64_t FOREVER = (<int64_t>1) << 40


# --------------------------------------------------------------------------
# The survival kernel and the ranks of the other boards
# --------------------------------------------------------------------------

cdef inline bint doomed(const offset_t* offsets, const int32_t* next_board, const int32_t* rank,
                        int P, int32_t b, int32_t k) noexcept nogil:
    """Whether some piece has no move on board b into a board alive before
    pass k (rank -1, or k: marked in this pass)."""
    cdef int p
    cdef int64_t e, s
    cdef int32_t r
    cdef bint ok
    for p in range(P):
        s = <int64_t>b * P + p
        ok = False
        for e in range(offsets[s], offsets[s + 1]):
            r = rank[next_board[e]]
            if r < 0 or r >= k:
                ok = True
                break
        if not ok:
            return True
    return False


def survival_kernel(const offset_t[::1] offsets, const int32_t[::1] next_board, int n_pieces,
                    int32_t[::1] rank, int n_threads=1):
    """The greatest set S of boards where every piece has a move into S.

    Writes ``rank[b]`` (int32, one per board): -1 for the boards of S; for
    the others, the number of placements the player can surely make from b
    whatever pieces come (0: some piece fits nowhere on b), which is the
    pass that removed b: pass k drops the boards where some piece has no
    move into a board still alive before it.  Each pass reads the ranks of
    the passes before (Jacobi), so threads sharing it give the same result.
    Returns the number of passes (the last removes nothing).
    """
    cdef int P = n_pieces
    cdef Py_ssize_t n_states = offsets.shape[0] - 1
    cdef Py_ssize_t n, m, i, kept, blk, lo, hi, n_blocks
    cdef int32_t k = 0
    cdef int threads
    if P < 1 or n_states < 0 or n_states % P or offsets[n_states] != next_board.shape[0]:
        raise ValueError("survival_kernel: offsets do not match the moves or the number of pieces")
    n = n_states // P
    if rank.shape[0] != n:
        raise ValueError("survival_kernel: rank needs one entry per board")
    if n == 0:
        return 0
    alive_list = np.arange(n, dtype=np.int32)
    flags = np.zeros(n, dtype=np.uint8)
    cdef int32_t[::1] alive = alive_list
    cdef uint8_t[::1] flag = flags
    cdef const offset_t* off = &offsets[0]
    cdef const int32_t* nxt = &next_board[0] if next_board.shape[0] else NULL
    cdef int32_t* rk = &rank[0]
    m = n
    with nogil:
        for i in range(n):
            rk[i] = -1
        while True:
            n_blocks = (m + BLOCK - 1) // BLOCK
            threads = n_threads if n_threads < n_blocks else <int>n_blocks
            if threads <= 1:
                for i in range(m):
                    flag[i] = doomed(off, nxt, rk, P, alive[i], k)
            else:
                for blk in prange(n_blocks, num_threads=threads, schedule="static"):
                    lo = blk * BLOCK
                    hi = lo + BLOCK if lo + BLOCK < m else m
                    for i in range(lo, hi):
                        flag[i] = doomed(off, nxt, rk, P, alive[i], k)
            kept = 0
            for i in range(m):
                if flag[i]:
                    rk[alive[i]] = k
                else:
                    alive[kept] = alive[i]
                    kept = kept + 1
            k = k + 1
            if kept == m:
                break
            m = kept
    return int(k)


def restrict(const offset_t[::1] offsets, const int32_t[::1] next_board, const uint8_t[::1] lines, int n_pieces,
             const int32_t[::1] boards, const int32_t[::1] index):
    """The moves between the boards of a set, in a compact table.

    ``boards``: the set (int32, ascending board indices); ``index[b]``: b's
    number in it, or -1 outside.  Returns ``(offsets, next_board, lines,
    row)``: for compact state ``i * P + p`` (``i`` the number of
    ``boards[i]``), its moves into the set, in table order: the next board's
    number (int32), rows cleared (uint8) and the move's offset in the
    state's row of the full table (int16).
    """
    cdef int P = n_pieces
    cdef Py_ssize_t m = boards.shape[0], i, n_states = offsets.shape[0] - 1
    cdef int p
    cdef int64_t s, e, count = 0, at = 0
    if P < 1 or n_states % P or index.shape[0] != n_states // P or offsets[n_states] != next_board.shape[0]:
        raise ValueError("restrict: array shapes do not match")
    new_offsets = np.zeros(m * P + 1, dtype=np.int32)
    cdef offset_t[::1] c_off = new_offsets
    with nogil:
        for i in range(m):
            for p in range(P):
                s = <int64_t>boards[i] * P + p
                for e in range(offsets[s], offsets[s + 1]):
                    if index[next_board[e]] >= 0:
                        count = count + 1
                c_off[i * P + p + 1] = count
    new_next = np.empty(count, dtype=np.int32)
    new_lines = np.empty(count, dtype=np.uint8)
    new_row = np.empty(count, dtype=np.int16)
    cdef int32_t[::1] c_next = new_next
    cdef uint8_t[::1] c_lines = new_lines
    cdef int16_t[::1] c_row = new_row
    with nogil:
        for i in range(m):
            for p in range(P):
                s = <int64_t>boards[i] * P + p
                for e in range(offsets[s], offsets[s + 1]):
                    if index[next_board[e]] >= 0:
                        c_next[at] = index[next_board[e]]
                        c_lines[at] = lines[e]
                        c_row[at] = <int16_t>(e - offsets[s])
                        at = at + 1
    return new_offsets, new_next, new_lines, new_row


# --------------------------------------------------------------------------
# Relative value iteration with the aperiodicity transform, and its bounds
# --------------------------------------------------------------------------

cdef struct Game:
    int P
    bint worst                  # pieces: the opponent's least valuable (else drawn with `probabilities`)
    const offset_t* offsets     # compact state i * P + p: moves offsets[s]:offsets[s+1]
    const int32_t* next_board
    const uint8_t* lines
    const double* scores        # points by rows cleared
    const double* probabilities


cdef inline void sweep(const Game* g, const double* U, double* delta, int16_t* rows, int16_t* pieces,
                       Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """For boards i in [lo, hi): ``delta[i] = (T U)(i) - U[i]``, with
    ``(T U)(i) = combine_p max_moves [score + U(next)]``; each state's first
    best move (its offset in the compact row) into ``rows``, the board's
    first least valuable piece into ``pieces``."""
    cdef int P = g.P, p
    cdef Py_ssize_t i
    cdef int64_t s, e, first
    cdef double best, v, total, least
    cdef int16_t arg, worst_piece
    for i in range(lo, hi):
        total = 0.0
        least = INFINITY
        worst_piece = 0
        for p in range(P):
            s = <int64_t>i * P + p
            first = g.offsets[s]
            best = -INFINITY
            arg = -1
            for e in range(first, g.offsets[s + 1]):
                v = g.scores[g.lines[e]] + U[g.next_board[e]]
                if v > best:
                    best = v
                    arg = <int16_t>(e - first)
            rows[s] = arg
            if best < least:
                least = best
                worst_piece = <int16_t>p
            total = total + g.probabilities[p] * best
        pieces[i] = worst_piece
        delta[i] = (least if g.worst else total) - U[i]


cdef double closure_extreme(const Game* g, const double* delta, const int16_t* rows, const int16_t* pieces,
                            const int32_t* seeds, Py_ssize_t n_seeds, int64_t* mark, int64_t stamp,
                            int32_t* queue, bint largest) noexcept nogil:
    """The least (or with ``largest`` the greatest) ``delta`` over the boards
    reachable from ``seeds``, along every piece and the move in ``rows``
    (``rows`` not NULL), or along the piece in ``pieces`` and every move
    (``pieces`` not NULL).  ``mark`` holds the stamp of the last closure
    that met each board; ``stamp`` must be new."""
    cdef Py_ssize_t head = 0, tail = 0, k
    cdef int P = g.P, p
    cdef int32_t b, j
    cdef int64_t s, e, lo, hi
    cdef double out = -INFINITY if largest else INFINITY
    for k in range(n_seeds):
        b = seeds[k]
        if mark[b] != stamp:
            mark[b] = stamp
            queue[tail] = b
            tail = tail + 1
    while head < tail:
        b = queue[head]
        head = head + 1
        if (delta[b] > out) if largest else (delta[b] < out):
            out = delta[b]
        for p in range(P):
            if pieces != NULL and p != pieces[b]:
                continue
            s = <int64_t>b * P + p
            lo = g.offsets[s]
            hi = g.offsets[s + 1]
            if rows != NULL:
                lo = lo + rows[s]
                hi = lo + 1
            for e in range(lo, hi):
                j = g.next_board[e]
                if mark[j] != stamp:
                    mark[j] = stamp
                    queue[tail] = j
                    tail = tail + 1
    return out


def relative_value_iteration(const offset_t[::1] offsets, const int32_t[::1] next_board, const uint8_t[::1] lines,
                             const double[::1] scores, const double[::1] probabilities, bint worst, double tau,
                             double tol, int64_t max_iter, const int32_t[::1] lower_seeds, int32_t upper_start,
                             int32_t reference, double[::1] U, double[::1] delta, int16_t[::1] rows,
                             int16_t[::1] pieces, int n_threads=1):
    """Relative value iteration on a compact table where every state has a
    move, from the values in ``U`` (float64, one per board).

    Each iteration sweeps (Jacobi): ``delta = T U - U``, with each state's
    first greedy move in ``rows`` (int16, offset in its compact row) and
    each board's first least valuable piece in ``pieces`` (int16).  Then the
    bounds: ``lower``, the least ``delta`` over the boards reachable from
    ``lower_seeds`` when the player plays ``rows`` and any piece comes;
    ``upper``, the greatest ``delta`` over every board, or, if less and
    ``upper_start`` is not -1, over those reachable from board
    ``upper_start`` when the opponent gives ``pieces`` and the player moves
    anyhow (computed every ``CLOSURE_EVERY`` = 8 iterations and at the last,
    while the bounds are more than ``tol`` apart).  It stops once ``upper -
    lower <= tol`` or after ``max_iter`` iterations, leaving ``U``,
    ``delta``, ``rows`` and ``pieces`` as that last sweep saw or made them;
    else ``U += tau * delta``, less the same for board ``reference`` (whose
    value so stays put).  Returns ``(iterations, lower, upper)``.
    """
    cdef Game g
    cdef Py_ssize_t m = U.shape[0], n_blocks, blk, lo, hi, i
    cdef int64_t it = 0, stamp = 0
    cdef double lower = -INFINITY, upper = INFINITY, closed, shift
    cdef int threads
    g.P = probabilities.shape[0]
    if g.P < 1 or offsets.shape[0] != m * g.P + 1 or offsets[m * g.P] != next_board.shape[0]:
        raise ValueError("relative_value_iteration: offsets do not match the boards, pieces or moves")
    if next_board.shape[0] != lines.shape[0] or delta.shape[0] != m or rows.shape[0] != m * g.P or pieces.shape[0] != m:
        raise ValueError("relative_value_iteration: array shapes do not match")
    if m == 0 or lower_seeds.shape[0] == 0 or not -1 <= upper_start < m or not 0 <= reference < m:
        raise ValueError("relative_value_iteration: no boards, no seeds, or a start out of range")
    if max_iter < 1:
        raise ValueError("relative_value_iteration: max_iter must be >= 1")
    g.worst = worst
    g.offsets = &offsets[0]
    g.next_board = &next_board[0] if next_board.shape[0] else NULL
    g.lines = &lines[0] if lines.shape[0] else NULL
    g.scores = &scores[0]
    g.probabilities = &probabilities[0]
    marks = np.full(m, -1, dtype=np.int64)
    queue_array = np.empty(m, dtype=np.int32)
    cdef int64_t[::1] mark = marks
    cdef int32_t[::1] queue = queue_array
    n_blocks = (m + BLOCK - 1) // BLOCK
    threads = n_threads if n_threads < n_blocks else <int>n_blocks
    cdef bint stopped = False
    with nogil:
        while True:
            it = it + 1
            if threads <= 1:
                sweep(&g, &U[0], &delta[0], &rows[0], &pieces[0], 0, m)
            else:
                for blk in prange(n_blocks, num_threads=threads, schedule="static"):
                    lo = blk * BLOCK
                    hi = lo + BLOCK if lo + BLOCK < m else m
                    sweep(&g, &U[0], &delta[0], &rows[0], &pieces[0], lo, hi)
            lower = closure_extreme(&g, &delta[0], &rows[0], NULL, &lower_seeds[0], lower_seeds.shape[0],
                                    &mark[0], stamp, &queue[0], False)
            stamp = stamp + 1
            upper = -INFINITY
            for i in range(m):
                if delta[i] > upper:
                    upper = delta[i]
            if upper_start >= 0 and upper - lower > tol and (it % CLOSURE_EVERY == 0 or it >= max_iter):
                closed = closure_extreme(&g, &delta[0], NULL, &pieces[0], &upper_start, 1,
                                         &mark[0], stamp, &queue[0], True)
                stamp = stamp + 1
                if closed < upper:
                    upper = closed
            if upper - lower <= tol or it >= max_iter:
                break
            if interrupted():  # (a sweep reads every move: a check per sweep costs nothing)
                stopped = True
                break
            shift = tau * delta[reference]
            for i in range(m):
                U[i] = U[i] + (tau * delta[i] - shift)
    if stopped:
        raise KeyboardInterrupt
    return int(it), float(lower), float(upper)


# --------------------------------------------------------------------------
# Off the kernel: the chance of reaching it, and the moves
# --------------------------------------------------------------------------

cdef inline void reach_pass(const offset_t* offsets, const int32_t* next_board, const double* probabilities, int P,
                            const int32_t* outside, const double* x_lo, const double* x_hi,
                            double* new_lo, double* new_hi, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef Py_ssize_t k
    cdef int p
    cdef int64_t s, e
    cdef int32_t j
    cdef double best_lo, best_hi, sum_lo, sum_hi
    for k in range(lo, hi):
        sum_lo = 0.0
        sum_hi = 0.0
        for p in range(P):
            s = <int64_t>outside[k] * P + p
            best_lo = 0.0
            best_hi = 0.0
            for e in range(offsets[s], offsets[s + 1]):
                j = next_board[e]
                if x_lo[j] > best_lo:
                    best_lo = x_lo[j]
                if x_hi[j] > best_hi:
                    best_hi = x_hi[j]
            sum_lo = sum_lo + probabilities[p] * best_lo
            sum_hi = sum_hi + probabilities[p] * best_hi
        new_lo[k] = sum_lo
        new_hi[k] = sum_hi


def reach(const offset_t[::1] offsets, const int32_t[::1] next_board, const double[::1] probabilities,
          const int32_t[::1] outside, double[::1] x_lo, double[::1] x_hi, double tol, int64_t max_iter,
          int n_threads=1):
    """The largest chance, against pieces drawn with ``probabilities``, of
    reaching the kernel from each board of ``outside`` (int32 board indices:
    every board off the kernel), bracketed.

    ``x_lo`` and ``x_hi`` (float64, one per board) come in as 1 on the
    kernel; on ``outside``, ``x_lo`` starts at 0 and ``x_hi`` at 1, and
    both follow ``x(b) = sum_p prob(p) max_moves x(next)`` (0 where p fits
    nowhere), Jacobi: after k passes ``x_lo`` is the largest chance of
    reaching the kernel within k placements and ``x_hi`` that of not having
    lost within k, so ``x_lo <= x <= x_hi``.  Off the kernel the opponent
    can force the end within a bounded number of placements, so both meet.
    Stops once ``max(x_hi - x_lo) <= tol`` over ``outside`` or after
    ``max_iter`` passes.  Returns ``(passes, gap)``.
    """
    cdef int P = probabilities.shape[0]
    cdef Py_ssize_t n = x_lo.shape[0], m = outside.shape[0], k, n_blocks, blk, lo, hi
    cdef int64_t it = 0
    cdef double gap = 0.0
    cdef int threads
    if P < 1 or offsets.shape[0] != n * P + 1 or x_hi.shape[0] != n or offsets[n * P] != next_board.shape[0]:
        raise ValueError("reach: array shapes do not match")
    if m == 0:
        return 0, 0.0
    buffers = np.empty((2, m))
    cdef double[:, ::1] new = buffers
    n_blocks = (m + BLOCK - 1) // BLOCK
    threads = n_threads if n_threads < n_blocks else <int>n_blocks
    with nogil:
        while it < max_iter:
            it = it + 1
            if threads <= 1:
                reach_pass(&offsets[0], &next_board[0], &probabilities[0], P, &outside[0], &x_lo[0], &x_hi[0],
                           &new[0, 0], &new[1, 0], 0, m)
            else:
                for blk in prange(n_blocks, num_threads=threads, schedule="static"):
                    lo = blk * BLOCK
                    hi = lo + BLOCK if lo + BLOCK < m else m
                    reach_pass(&offsets[0], &next_board[0], &probabilities[0], P, &outside[0], &x_lo[0], &x_hi[0],
                               &new[0, 0], &new[1, 0], lo, hi)
            gap = 0.0
            for k in range(m):
                x_lo[outside[k]] = new[0, k]
                x_hi[outside[k]] = new[1, k]
                if new[1, k] - new[0, k] > gap:
                    gap = new[1, k] - new[0, k]
            if gap <= tol:
                break
    return int(it), float(gap)


def fill_policy(const offset_t[::1] offsets, const int32_t[::1] next_board, int n_pieces, const int32_t[::1] rank,
                const double[::1] chance, int16_t[::1] rows, int16_t[::1] pieces):
    """Moves and pieces on the boards off the kernel (``rank[b] >= 0``).

    The player's move (``rows[s]``, its offset in the state's row; -1 where
    the piece fits nowhere) leads to the board with the greatest ``chance``
    (float64, or None: every board alike), then the greatest rank, a
    kernel board counting above every rank: the first such move.  The
    opponent's piece (``pieces[b]``) is the one whose best move, so
    compared, is the least (no move counting least): with ``chance`` None,
    the piece that ends the game soonest.  Boards of the kernel are left
    as they are.
    """
    cdef int P = n_pieces, p
    cdef Py_ssize_t n = rank.shape[0], b
    cdef int64_t s, e, r, best_rank, least_rank
    cdef double c, best_chance, least_chance
    cdef int16_t arg, worst_piece
    cdef bint use_chance = chance is not None
    if P < 1 or offsets.shape[0] != n * P + 1 or rows.shape[0] != n * P or pieces.shape[0] != n:
        raise ValueError("fill_policy: array shapes do not match")
    if use_chance and chance.shape[0] != n:
        raise ValueError("fill_policy: chance needs one entry per board")
    cdef const double* ch = &chance[0] if use_chance else NULL
    with nogil:
        for b in range(n):
            if rank[b] < 0:
                continue
            least_chance = INFINITY
            least_rank = FOREVER + 1
            worst_piece = 0
            for p in range(P):
                s = <int64_t>b * P + p
                arg = -1
                best_chance = -1.0
                best_rank = -1
                for e in range(offsets[s], offsets[s + 1]):
                    r = rank[next_board[e]]
                    if r < 0:
                        r = FOREVER
                    c = ch[next_board[e]] if use_chance else 0.0
                    if c > best_chance or (c == best_chance and r > best_rank):
                        best_chance = c
                        best_rank = r
                        arg = <int16_t>(e - offsets[s])
                rows[s] = arg
                if best_chance < least_chance or (best_chance == least_chance and best_rank < least_rank):
                    least_chance = best_chance
                    least_rank = best_rank
                    worst_piece = <int16_t>p
            pieces[b] = worst_piece


def reachable(const offset_t[::1] offsets, const int32_t[::1] next_board, int n_pieces, const uint8_t[::1] expand,
              int32_t start):
    """uint8 array ``(n_boards,)``: the boards reachable from ``start`` by
    any pieces and moves, going on only from boards with ``expand[b]``
    (the others are reached but not left)."""
    cdef int P = n_pieces, p
    cdef Py_ssize_t n = expand.shape[0], head = 0, tail = 1
    cdef int64_t s, e
    cdef int32_t b, j
    if P < 1 or offsets.shape[0] != n * P + 1 or not 0 <= start < n or offsets[n * P] != next_board.shape[0]:
        raise ValueError("reachable: start or array shapes out of range")
    seen = np.zeros(n, dtype=np.uint8)
    queue_array = np.empty(n, dtype=np.int32)
    cdef uint8_t[::1] mark = seen
    cdef int32_t[::1] queue = queue_array
    mark[start] = 1
    queue[0] = start
    with nogil:
        while head < tail:
            b = queue[head]
            head = head + 1
            if not expand[b]:
                continue
            for s in range(<int64_t>b * P, <int64_t>b * P + P):
                for e in range(offsets[s], offsets[s + 1]):
                    j = next_board[e]
                    if not mark[j]:
                        mark[j] = 1
                        queue[tail] = j
                        tail = tail + 1
    return seen
