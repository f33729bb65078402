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
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t, uint16_t
from libc.stdlib cimport free, malloc

from babytris.engine._types cimport check_move_table, offset_t, populate_threads, prefetch
from babytris.solvers._greedy cimport Backup


cdef enum:
    # States per block shared out to the threads.
    BLOCK = 8192
    # A pass prefetches the values a state this many states ahead will read.
    AHEAD = 8


cdef struct Chosen:
    # What :func:`chosen_range` found in its states (-1: no state).
    Py_ssize_t unknown      # the first whose placement is none of its row's (or not -1 where it has no move)
    double short            # the most a chosen move not the hint is worth below its state's best (NaN sticks)
    Py_ssize_t short_at
    Py_ssize_t tied_at      # the first with a move before its chosen one within ``sure`` of its best
    int16_t tied_move       # that state's first such move (its offset in the row)


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
                                   Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """Re-choose the move of states ``first:last`` as the first in row order
    whose value is within ``slack`` of the row's best (``known[s]`` if not
    NULL); returns how many changed."""
    cdef Py_ssize_t s, changed = 0
    cdef int64_t e, lo, hi
    cdef double best, q
    cdef int16_t arg
    for s in range(first, last):
        lo = m.offsets[s]
        hi = m.offsets[s + 1]
        if lo == hi:
            continue
        if known != NULL:
            best = known[s]
        else:
            best = -INFINITY
            for e in range(lo, hi):
                q = move_value(m, e)
                if q > best:
                    best = q
        arg = 0
        for e in range(lo, hi):
            if move_value(m, e) >= best - slack:
                arg = <int16_t>(e - lo)
                break
        if arg != policy[s]:
            changed += 1
            policy[s] = arg
    return changed


cdef void chosen_range(const Backup* m, const uint16_t* placement, const int16_t* policy, const int16_t* hint,
                       const double* best, int16_t* rows, double sure, Py_ssize_t first, Py_ssize_t last,
                       Chosen* out) noexcept nogil:
    """:func:`chosen_rows` on states ``first:last``, into ``out``; stops at a placement not in its row."""
    cdef Py_ssize_t s
    cdef int64_t e, lo, hi, at
    cdef double short
    out.unknown = out.short_at = out.tied_at = -1
    out.short = -INFINITY
    out.tied_move = -1
    for s in range(first, last):
        lo = m.offsets[s]
        hi = m.offsets[s + 1]
        rows[s] = -1
        if lo == hi:
            if policy[s] != -1:
                out.unknown = s
                return
            continue
        # (the hint first: mostly the chosen move, found without a look along the row)
        at = lo + hint[s] if 0 <= hint[s] < hi - lo else lo
        if placement[at] != <uint16_t>policy[s] or policy[s] < 0:
            at = lo
            while at < hi and (placement[at] != <uint16_t>policy[s] or policy[s] < 0):
                at += 1
            if at == hi:
                out.unknown = s
                return
        rows[s] = <int16_t>(at - lo)
        if at - lo != hint[s]:
            short = best[s] - move_value(m, at)
            if out.short == out.short and not short <= out.short:
                out.short = short
                out.short_at = s
        if sure > 0.0 and out.tied_at < 0:
            for e in range(lo, at):
                if move_value(m, e) >= best[s] - sure:
                    out.tied_at = s
                    out.tied_move = <int16_t>(e - lo)
                    break


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
                     int n_threads=1):
    """Break ties the same way whatever the path to the values: every state's
    move (``policy``, int16, its offset in the state's row, -1 where none)
    becomes the first in row order whose value with the board values ``W``
    is within ``slack`` (>= 0) of its best; returns how many states changed.
    For a player taking the best move.  ``best``, if given, holds each
    state's best value as :func:`state_values` wrote it from the same W and
    rewards (the pass then only looks for the first move near it).  Each
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
                             n, n_threads)
    return changed


cdef Py_ssize_t first_best(const Backup* m, int16_t* policy, double slack, const double* known, Py_ssize_t n,
                           int n_threads) noexcept nogil:
    """:func:`first_best_moves` on checked arrays, states ``0:n`` (``known``: NULL, or their best values)."""
    cdef Py_ssize_t n_blocks = (n + BLOCK - 1) // BLOCK, k, changed = 0
    if n_threads > 1 and n_blocks > 1:
        for k in prange(n_blocks, num_threads=n_threads, schedule="static"):
            changed += first_within_range(m, policy, slack, known, k * BLOCK, min((k + 1) * BLOCK, n))
    elif n:
        changed = first_within_range(m, policy, slack, known, 0, n)
    return changed


def chosen_rows(const offset_t[::1] offsets, const int32_t[::1] next_board, const uint8_t[::1] lines,
                const double[::1] scores, const double[::1] W, double discount, const uint16_t[::1] placement,
                const int16_t[::1] policy, const int16_t[::1] hint, const double[::1] best, int16_t[::1] rows,
                *, double sure=0.0, const double[::1] move_reward=None, int n_threads=1):
    """A policy of placement numbers checked against the values, in one pass:
    each state's chosen move (``policy``, int16, its placement number, -1
    where none) written into ``rows`` (int16) as its offset in the state's
    row, looked for first at ``hint`` (each state's best move, as a backup
    of W found it: an offset in the row; any other value, nowhere); each chosen move not the
    hint valued (its reward plus ``discount`` times W of the board after)
    against the state's best value ``best``; and if ``sure`` > 0, each move
    before the chosen one too, for the first within ``sure`` of ``best``
    (the tie rule "first" takes none such).  Each state alone: the result
    does not depend on ``n_threads``.

    Returns:
        ``(unknown, short, short_at, tied_at, tied_move)``: the first state
        whose placement is not a move of its row, or that gives one where
        the row is empty (-1: none; then nothing else is meaningful); the
        most a chosen move falls short of its state's best (-inf where
        every one is the hint; NaN if any is) and the first state where it
        does (-1: none); the first state with a move before its chosen one
        within ``sure`` of its best (-1: none, or ``sure`` <= 0) and that
        move's offset in the row."""
    cdef Backup m
    cdef Py_ssize_t n = offsets.shape[0] - 1, n_blocks, k
    cdef Chosen* found
    cdef Chosen total
    cdef const uint16_t* numbers = &placement[0] if placement.shape[0] else NULL
    if n < 0:
        raise ValueError("chosen_rows: offsets must hold one entry more than the states, got none")
    for name, size in (("policy", policy.shape[0]), ("hint", hint.shape[0]), ("best", best.shape[0]),
                       ("rows", rows.shape[0])):
        if size != n:
            raise ValueError(f"chosen_rows: {name} must have one entry per state ({n}), got {size}")
    if placement.shape[0] != next_board.shape[0]:
        raise ValueError(f"chosen_rows: placement must have one entry per move ({next_board.shape[0]}), "
                         f"got {placement.shape[0]}")
    setup(&m, "chosen_rows", offsets, next_board, lines, scores, W, discount, move_reward, NULL, n_threads)
    total.unknown = total.short_at = total.tied_at = -1
    total.short = -INFINITY
    total.tied_move = -1
    n_blocks = (n + BLOCK - 1) // BLOCK
    found = <Chosen*>malloc(max(n_blocks, 1) * sizeof(Chosen))
    if found == NULL:
        raise MemoryError("chosen_rows: out of memory")
    try:
        with nogil:
            if n_threads > 1 and n_blocks > 1:
                for k in prange(n_blocks, num_threads=n_threads, schedule="static"):
                    chosen_range(&m, numbers, &policy[0], &hint[0], &best[0], &rows[0], sure, k * BLOCK,
                                 min((k + 1) * BLOCK, n), &found[k])
            elif n:
                for k in range(n_blocks):  # (one block at a time, as the threads take them)
                    chosen_range(&m, numbers, &policy[0], &hint[0], &best[0], &rows[0], sure, k * BLOCK,
                                 min((k + 1) * BLOCK, n), &found[k])
            for k in range(n_blocks):  # (each the first state's in its block: the first block's is the first)
                if found[k].unknown >= 0:
                    total.unknown = found[k].unknown
                    break
                if total.short == total.short and not found[k].short <= total.short:
                    total.short = found[k].short
                    total.short_at = found[k].short_at
                if total.tied_at < 0 and found[k].tied_at >= 0:
                    total.tied_at = found[k].tied_at
                    total.tied_move = found[k].tied_move
    finally:
        free(found)
    return total.unknown, total.short, total.short_at, total.tied_at, total.tied_move
