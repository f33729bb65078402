# cython: language_level=3
"""Greedy in given board values: each state's best value, and its first best
move, from the board values W alone (W is left as it is), on threads.

A solve runs these once its sweeps have converged (``babytris.solve``).
Unlike the :class:`~babytris.solvers._sweep.Sweeper`'s sweeps they visit the states
in their own order, so the solve lets the sweep order go first: on 4x7 that
is what brings its peak under 2 GiB.  The inner loops run without the GIL.
"""

from cython.parallel cimport prange
from libc.math cimport INFINITY
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t

from babytris.engine._types cimport check_move_table, offset_t, populate_threads, prefetch
from babytris.solvers._greedy cimport Backup


cdef enum:
    # States per block shared out to the threads.
    BLOCK = 8192
    # A pass prefetches the values a state this many states ahead will read.
    AHEAD = 8


cdef inline double move_value(const Backup* m, int64_t e) noexcept nogil:
    """A move's reward plus the discounted value of the board it leads to."""
    return (m.move_reward[e] if m.move_reward != NULL else m.scores[m.lines[e]]) + m.discount * m.W[m.nxt[e]]


cdef void values_range(const Backup* m, double* V, int16_t* policy, double dead, Py_ssize_t first,
                       Py_ssize_t last, Py_ssize_t n) noexcept nogil:
    """``V[s]`` for states ``first:last`` (of n): the best move's value, ``dead``
    where none; and if ``policy`` is not NULL, the first best move (-1: none)."""
    cdef Py_ssize_t s
    cdef int64_t e, lo, hi
    cdef double best, q
    cdef int16_t arg
    for s in range(first, last):
        if s + AHEAD < n:
            for e in range(m.offsets[s + AHEAD], m.offsets[s + AHEAD + 1]):
                prefetch(&m.W[m.nxt[e]])
        lo = m.offsets[s]
        hi = m.offsets[s + 1]
        best = dead
        arg = -1
        if lo < hi:
            best = move_value(m, lo)
            arg = 0
            for e in range(lo + 1, hi):
                q = move_value(m, e)
                arg = <int16_t>(e - lo) if q > best else arg
                best = q if q > best else best  # (as the sweeps take their max)
        V[s] = best
        if policy != NULL:
            policy[s] = arg


cdef Py_ssize_t first_within_range(const Backup* m, int16_t* policy, double slack, const double* known,
                                   Py_ssize_t first, Py_ssize_t last, bint earlier_only) noexcept nogil:
    """Re-choose the move of states ``first:last`` as the first in row order
    whose value is within ``slack`` of the row's best (``known[s]`` if not
    NULL; ``earlier_only``: among the moves before the state's own, which is
    kept where none is); returns how many changed."""
    cdef Py_ssize_t s, changed = 0
    cdef int64_t e, lo, hi, scan
    cdef double best, q
    cdef int16_t arg
    for s in range(first, last):
        lo = m.offsets[s]
        hi = m.offsets[s + 1]
        if lo == hi or (earlier_only and policy[s] <= 0):
            continue
        if known != NULL:
            best = known[s]
        else:
            best = -INFINITY
            for e in range(lo, hi):
                q = move_value(m, e)
                if q > best:
                    best = q
        arg = policy[s] if earlier_only else 0
        scan = lo + policy[s] if earlier_only else hi
        for e in range(lo, scan):
            if move_value(m, e) >= best - slack:
                arg = <int16_t>(e - lo)
                break
        if arg != policy[s]:
            changed += 1
            policy[s] = arg
    return changed


cdef int setup(Backup* m, str who, const offset_t[::1] offsets, const int32_t[::1] next_board,
               const uint8_t[::1] lines, const double[::1] scores, const double[::1] W, double discount,
               const double[::1] move_reward, const int16_t* policy, int n_threads) except -1:
    """Check the arguments (the loops index by them unchecked) and fill ``m``."""
    if scores.shape[0] < 1:
        raise ValueError(f"{who}: scores must hold at least one entry (no rows cleared)")
    if move_reward is not None and move_reward.shape[0] != next_board.shape[0]:
        raise ValueError(f"{who}: move_reward must have one entry per move")
    if n_threads < 1:
        raise ValueError(f"{who}: n_threads must be >= 1, got {n_threads}")
    check_move_table(who, offsets, policy, next_board, lines, W.shape[0], scores.shape[0])
    m.offsets = &offsets[0]
    m.nxt = &next_board[0] if next_board.shape[0] else NULL
    m.lines = &lines[0] if lines.shape[0] else NULL
    m.scores = &scores[0]
    m.move_reward = &move_reward[0] if move_reward is not None and move_reward.shape[0] else NULL
    m.W = &W[0] if W.shape[0] else NULL
    m.discount = discount
    return 0


def state_values(const offset_t[::1] offsets, const int32_t[::1] next_board, const uint8_t[::1] lines,
                 const double[::1] scores, const double[::1] W, double discount, double[::1] V, *,
                 double dead_value=0.0, const double[::1] move_reward=None, int16_t[::1] policy=None,
                 int n_threads=1):
    """Write each state's value from the board values ``W`` into ``V``
    (float64, one per state: ``len(offsets) - 1``): its best move's reward
    (``scores[lines]``, or ``move_reward``) plus ``discount`` times the value
    of the board it leads to, ``dead_value`` where no move fits; and into
    ``policy`` (int16, one per state), if given, the first of its best
    moves (its offset in the row, -1 where none).  One Bellman backup per
    state that leaves W alone; the result does not depend on ``n_threads``."""
    cdef Backup m
    cdef Py_ssize_t n = offsets.shape[0] - 1, n_blocks, k
    cdef int16_t* chosen = &policy[0] if policy is not None and n > 0 else NULL
    if n < 0:
        raise ValueError("state_values: offsets must hold one entry more than the states, got none")
    if V.shape[0] != n:
        raise ValueError(f"state_values: V must have one entry per state ({n}), got {V.shape[0]}")
    if policy is not None and policy.shape[0] != n:
        raise ValueError(f"state_values: policy must have one entry per state ({n}), got {policy.shape[0]}")
    setup(&m, "state_values", offsets, next_board, lines, scores, W, discount, move_reward, NULL, n_threads)
    n_blocks = (n + BLOCK - 1) // BLOCK
    with nogil:
        if n:  # (all written below: mapped first, see populate)
            populate_threads(&V[0], n * sizeof(double), n_threads)
            populate_threads(chosen, n * sizeof(int16_t) if chosen != NULL else 0, n_threads)
        if n_threads > 1 and n_blocks > 1:
            for k in prange(n_blocks, num_threads=n_threads, schedule="static"):
                values_range(&m, &V[0], chosen, dead_value, k * BLOCK, min((k + 1) * BLOCK, n), n)
        elif n:
            values_range(&m, &V[0], chosen, dead_value, 0, n, n)


def first_best_moves(const offset_t[::1] offsets, const int32_t[::1] next_board, const uint8_t[::1] lines,
                     const double[::1] scores, const double[::1] W, double discount, int16_t[::1] policy,
                     double slack, *, const double[::1] move_reward=None, const double[::1] best=None,
                     int n_threads=1, bint earlier_only=False):
    """Break ties the same way whatever the path to the values: every state's
    move (``policy``, int16, its offset in the state's row, -1 where none)
    becomes the first in row order whose value with the board values ``W``
    is within ``slack`` (>= 0) of its best; returns how many states changed.
    For a player taking the best move.  ``best``, if given, holds each
    state's best value as :func:`state_values` wrote it from the same W and
    rewards (the pass then only looks for the first move near it).
    ``earlier_only``: where each state's move is known to be within ``slack``
    already (a check that no earlier one is), only the moves before it are
    valued, and a state whose move is its row's first is not read.  Each
    state alone: the result does not depend on ``n_threads``."""
    cdef Backup m
    cdef Py_ssize_t n = offsets.shape[0] - 1, changed = 0
    if n < 0:
        raise ValueError("first_best_moves: offsets must hold one entry more than the states, got none")
    if not slack >= 0.0:
        raise ValueError(f"first_best_moves: slack must be >= 0, got {slack}")
    if policy.shape[0] != n:
        raise ValueError(f"first_best_moves: policy must have one entry per state ({n}), got {policy.shape[0]}")
    if best is not None and best.shape[0] != n:
        raise ValueError(f"first_best_moves: best must have one entry per state ({n}), got {best.shape[0]}")
    setup(&m, "first_best_moves", offsets, next_board, lines, scores, W, discount, move_reward,
          &policy[0] if n else NULL, n_threads)
    with nogil:
        changed = first_best(&m, &policy[0] if n else NULL, slack, &best[0] if best is not None and n else NULL,
                             n, n_threads, earlier_only)
    return changed


cdef Py_ssize_t first_best(const Backup* m, int16_t* policy, double slack, const double* known, Py_ssize_t n,
                           int n_threads, bint earlier_only=False) noexcept nogil:
    """:func:`first_best_moves` on checked arrays, states ``0:n`` (``known``: NULL, or their best values)."""
    cdef Py_ssize_t n_blocks = (n + BLOCK - 1) // BLOCK, k, changed = 0
    if n_threads > 1 and n_blocks > 1:
        for k in prange(n_blocks, num_threads=n_threads, schedule="static"):
            changed += first_within_range(m, policy, slack, known, k * BLOCK, min((k + 1) * BLOCK, n), earlier_only)
    elif n:
        changed = first_within_range(m, policy, slack, known, 0, n, earlier_only)
    return changed
