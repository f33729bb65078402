# cython: language_level=3
"""Arrays with one entry per move of the CSR move table, in one compiled
pass each: the moves' rewards (``babytris.engine.reward``), the placement numbers
of chosen moves (``babytris.solve``), and the placement numbers recomputed
by the engine instead of stored (``Transitions.placement``)."""

from cython.parallel cimport prange
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t, uint16_t, uint64_t

from babytris.engine._types cimport board_t, first_bad_move, offset_t, populate
from babytris.engine._core cimport engine_geometry, smeared_board, drop_piece
from babytris.engine._geometry cimport Geometry
from babytris.engine.signals cimport interrupted


cdef enum:
    # Boards a pass over a whole table writes between two looks for Ctrl-C (tens of milliseconds).
    SLICE = 262144

import numpy as np


def move_values(const offset_t[::1] offsets, const int32_t[::1] next_board, const uint8_t[::1] lines,
                const double[::1] per_state, const double[::1] per_row, const double[::1] per_lines,
                const uint8_t[::1] final_rows=None, double final_value=0.0, int states_per_entry=1):
    """One value per move: ``per_state[s // states_per_entry] +
    per_row[next_board[e]] + per_lines[lines[e]]`` for each move e of state
    s, or ``final_value`` where ``final_rows[next_board[e]]`` is set (float64
    array; one pass, no temporaries: the rewards of tables of 10**8 moves).
    ``states_per_entry``: P gives ``per_state`` one entry per row (the
    states of a row are consecutive), with no copy repeated P times."""
    cdef Py_ssize_t n_states = offsets.shape[0] - 1, n_moves = next_board.shape[0], s, i
    cdef int64_t e
    if states_per_entry < 1:
        raise ValueError(f"move_values: states_per_entry must be >= 1, got {states_per_entry}")
    if (n_states < 0 or per_state.shape[0] != (n_states + states_per_entry - 1) // states_per_entry
            or offsets[n_states] != n_moves or lines.shape[0] != n_moves):
        raise ValueError("move_values: array shapes do not match")
    e = first_bad_move(&next_board[0] if n_moves else NULL, &lines[0] if n_moves else NULL, n_moves,
                       per_row.shape[0], per_lines.shape[0])
    if e >= 0:
        raise ValueError(f"move_values: move {e} leads out of per_row or clears more rows than per_lines covers")
    if final_rows is not None and final_rows.shape[0] != per_row.shape[0]:
        raise ValueError("move_values: final_rows must have one entry per row")
    out = np.empty(n_moves, dtype=np.float64)
    cdef double[::1] o = out
    populate(<void*><size_t>out.ctypes.data, out.nbytes)  # (all written below: mapped in one call)
    cdef const uint8_t* final = &final_rows[0] if final_rows is not None and final_rows.shape[0] else NULL
    with nogil:
        for s in range(n_states):
            for e in range(offsets[s], offsets[s + 1]):
                i = next_board[e]
                if final != NULL and final[i]:
                    o[e] = final_value
                else:
                    o[e] = per_state[s // states_per_entry] + per_row[i] + per_lines[lines[e]]
    return out


def placement_numbers(const offset_t[::1] offsets, const uint16_t[::1] placement, const int16_t[::1] moves):
    """Each state's move given as its offset in the state's row (-1: none)
    as the move's placement number: int16 array like ``moves``, -1 where none."""
    cdef Py_ssize_t n = moves.shape[0], s
    cdef int64_t e
    if offsets.shape[0] != n + 1:
        raise ValueError("placement_numbers: offsets must have one entry per state, and one more")
    for s in range(n):
        if not -1 <= moves[s] < offsets[s + 1] - offsets[s]:
            raise ValueError(f"placement_numbers: moves[{s}] = {moves[s]} is not a move of its state: "
                             f"must be in [-1, {offsets[s + 1] - offsets[s]})")
    if n and offsets[n] > placement.shape[0]:
        raise ValueError("placement_numbers: offsets run past the placements")
    out = np.empty(n, dtype=np.int16)
    cdef int16_t[::1] o = out
    with nogil:
        for s in range(n):
            if moves[s] >= 0:
                o[s] = <int16_t>placement[offsets[s] + moves[s]]
            else:
                o[s] = -1
    return out


cdef int64_t renumber_state(const Geometry* g, board_t board, board_t smeared, int p, int64_t row,
                            uint16_t* out, int64_t wanted, int16_t* number) noexcept nogil:
    """How many placements of piece p are moves on ``board``; their numbers,
    in the order the engine's table lists them, go into ``out[0:row]`` (if
    ``out`` is not NULL), and the ``wanted``-th's into ``number`` (if
    ``wanted`` >= 0; -1 if there is none or ``wanted`` is -1).  The caller compares the count
    with the row, so a table of other rules cannot pass."""
    cdef int k, lines
    cdef board_t after
    cdef int64_t found = 0
    # (as the engine counts them: with plain rules a placement is a move if it
    # fits at its highest position, no drop needed; otherwise the drop says)
    cdef bint plain = not (g.top_out or g.clears_only)
    cdef int16_t at = -1
    cdef int64_t legal
    if number != NULL:
        number[0] = -1
    if plain and out == NULL:  # (the chosen moves, counting every row: no branch but the loop's)
        for k in range(g.first[p], g.first[p + 1]):
            legal = (g.top[k] & smeared) == 0
            at = <int16_t>(k - g.first[p]) if legal and found == wanted else at
            found += legal
        if number != NULL:
            number[0] = at
        return found
    for k in range(g.first[p], g.first[p + 1]):
        if ((g.top[k] & smeared) == 0) if plain else drop_piece(g, board, smeared, k, &after, &lines):
            if found == wanted:
                number[0] = <int16_t>(k - g.first[p])
            if out != NULL and found < row:
                out[found] = <uint16_t>(k - g.first[p])
            found += 1
    return found


def dropped_placements(engine, const uint64_t[::1] boards, const offset_t[::1] offsets,
                       const int16_t[::1] moves=None, int n_threads=1):
    """The placement numbers of the moves of a table of hard drops, dropped
    again by ``engine`` instead of stored: the table's boards and offsets
    (one row per (board, piece), as :meth:`Engine.enumerate` builds them).

    Returns:
        with ``moves`` None, uint16 per move (the table's ``placement``);
        else each state's move given as its offset in the state's row (-1:
        none) as its placement number, int16 like ``moves``, -1 where none.

    Raises ValueError if a row does not hold the moves the engine finds (a
    table of other rules, or of soft moves, whose numbers come from a search).
    """
    cdef const Geometry* g = engine_geometry(engine)
    cdef Py_ssize_t n = boards.shape[0], n_states, i, s
    cdef int P = g.n_pieces, p
    cdef int64_t row, found
    cdef board_t smeared
    if g.soft:
        raise ValueError("dropped_placements: soft moves are numbered by their search, which the table keeps")
    n_states = n * P
    if offsets.shape[0] != n_states + 1 or offsets[0] != 0:
        raise ValueError(f"dropped_placements: offsets must hold len(boards) * n_pieces + 1 = {n_states + 1:,} "
                         f"entries from 0, got {offsets.shape[0]:,}")
    for s in range(n_states):
        if offsets[s + 1] < offsets[s]:
            raise ValueError(f"dropped_placements: offsets[{s + 1}] = {offsets[s + 1]} falls below "
                             f"offsets[{s}] = {offsets[s]}")
    if moves is not None:
        if moves.shape[0] != n_states:
            raise ValueError(f"dropped_placements: moves must hold one entry per state ({n_states:,}), "
                             f"got {moves.shape[0]:,}")
        for s in range(n_states):
            if not -1 <= moves[s] < offsets[s + 1] - offsets[s]:
                raise ValueError(f"dropped_placements: moves[{s}] = {moves[s]} is not a move of its state: "
                                 f"must be in [-1, {offsets[s + 1] - offsets[s]})")
    # (a state the engine disagrees on, written by whichever thread finds one: shared, unlike a local)
    problem = np.full(1, -1, dtype=np.int64)
    cdef int64_t[::1] bad = problem
    numbers = np.empty(offsets[n_states] if moves is None else n_states, dtype=np.uint16 if moves is None else np.int16)
    cdef uint16_t[::1] all_out
    cdef int16_t[::1] chosen_out
    cdef uint16_t* at = NULL
    if moves is None:
        all_out = numbers
        at = &all_out[0] if all_out.shape[0] else NULL
    else:
        chosen_out = numbers
    for i in prange(n, nogil=True, num_threads=n_threads, schedule="static"):
        smeared = smeared_board(g, boards[i])
        for p in range(P):
            s = i * P + p
            row = offsets[s + 1] - offsets[s]
            if moves is None:
                found = renumber_state(g, boards[i], smeared, p, row, at + offsets[s] if at != NULL else NULL,
                                       -1, NULL)
            else:
                found = renumber_state(g, boards[i], smeared, p, row, NULL, moves[s], &chosen_out[s])
            if found != row:
                bad[0] = s
    if bad[0] >= 0:
        raise ValueError(f"dropped_placements: state {bad[0]} has {offsets[bad[0] + 1] - offsets[bad[0]]} moves in "
                         "the table, not the ones the engine drops")
    return numbers


def preview_moves(const offset_t[::1] offsets, const int32_t[::1] next_board, const uint8_t[::1] lines,
                  const uint16_t[::1] placement, int n_pieces, int64_t queues, int n_threads=1):
    """The move table of a game with previews (no hold, no bag) from the
    table of the same boards without them, in two compiled passes.

    Node ``b * queues + q`` (queue ``q``, ``k`` base-``n_pieces`` digits, the
    next to place first) with piece ``d`` drawn is state ``(b * queues + q)
    * n_pieces + d``: it places the queue's first piece (base row ``b *
    n_pieces + q // (queues / n_pieces)``) and each move leads to node
    ``next_board * queues + rest``, ``rest`` the queue after it with ``d`` at
    its end.  The table holds ``queues`` times the base's moves (each base
    row serves ``queues / n_pieces`` queues and ``n_pieces`` drawn pieces):
    the caller refuses one too big from that count first.

    Returns:
        ``(offsets, next_node, lines, placement)``: int32 offsets (one per
        state, plus one) and int32, uint8 and uint16 arrays, one entry per
        move of the expanded table.

    Raises:
        KeyboardInterrupt: on Ctrl-C (asked between slices of SLICE boards).
    """
    cdef Py_ssize_t P = n_pieces, n = (offsets.shape[0] - 1) // n_pieces
    cdef Py_ssize_t n_states = n * queues * P, s, b, j, base_row
    cdef int64_t shift = queues // P, q, d, at, lo, hi, count
    if P < 1 or queues < P or queues % P or offsets.shape[0] != n * P + 1:
        raise ValueError("preview_moves: array shapes do not match")
    if next_board.shape[0] != offsets[offsets.shape[0] - 1] or lines.shape[0] != next_board.shape[0]:
        raise ValueError("preview_moves: offsets do not match the moves")
    if placement.shape[0] != next_board.shape[0]:
        raise ValueError("preview_moves: placement must have one entry per move")
    cdef int64_t total = queues * <int64_t>next_board.shape[0]
    if total > 2**31 - 1 or n * queues > 2**31 - 1:
        raise ValueError("preview_moves: over 2**31 - 1 moves or nodes")
    # (per queue, its first piece and the rest's digits: no division per state in the passes)
    placed_of = np.arange(queues, dtype=np.int64) // shift
    rest_of = (np.arange(queues, dtype=np.int64) % shift) * P
    cdef const int64_t[::1] placed = placed_of
    cdef const int64_t[::1] rest = rest_of
    new_offsets = np.empty(n_states + 1, dtype=np.int32)
    next_node = np.empty(total, dtype=np.int32)
    new_lines = np.empty(total, dtype=np.uint8)
    new_placement = np.empty(total, dtype=np.uint16)
    cdef offset_t[::1] no = new_offsets
    cdef int32_t[::1] nn = next_node
    cdef uint8_t[::1] nl = new_lines
    cdef uint16_t[::1] np_ = new_placement
    cdef int64_t written = 0
    cdef Py_ssize_t state = 0, first = 0, last
    cdef bint stopped = False
    with nogil:
        for b in range(n):  # the offsets: a running count, state by state
            if b % SLICE == SLICE - 1 and interrupted():
                stopped = True
                break
            for q in range(queues):
                count = offsets[b * P + placed[q] + 1] - offsets[b * P + placed[q]]
                for d in range(P):
                    no[state] = <offset_t>written
                    written = written + count
                    state = state + 1
        no[n_states] = <offset_t>written
        while first < n and not stopped:  # (a slice of boards at a time, asking for Ctrl-C between)
            last = first + SLICE if first + SLICE < n else n
            for b in prange(first, last, num_threads=n_threads, schedule="static"):
                for q in range(queues):
                    base_row = b * P + placed[q]
                    lo = offsets[base_row]
                    hi = offsets[base_row + 1]
                    for d in range(P):
                        s = (b * queues + q) * P + d
                        at = no[s]
                        for j in range(hi - lo):
                            nn[at + j] = <int32_t>(next_board[lo + j] * queues + rest[q] + d)
                            nl[at + j] = lines[lo + j]
                            np_[at + j] = placement[lo + j]
            first += SLICE
            if first < n and interrupted():
                stopped = True
    if stopped:
        raise KeyboardInterrupt
    return new_offsets, next_node, new_lines, new_placement


# --------------------------------------------------------------------------
# Policies: from placement numbers to offsets into the states' rows (a given
# player's moves, as every door that plays or evaluates it reads them).
# --------------------------------------------------------------------------

def placement_rows(const offset_t[::1] offsets, const uint16_t[::1] placement, const int64_t[::1] policy,
                   int16_t[::1] rows):
    """A policy of placement numbers as offsets into the states' rows:
    ``rows[s] = e - offsets[s]`` for the move e of state s with
    ``placement[e] == policy[s]``, and -1 where s has no move.  Returns the
    first state where that fails (no such move, or ``policy[s] != -1`` on a
    state without moves), or -1 if none does."""
    cdef Py_ssize_t n_states = offsets.shape[0] - 1, s
    cdef Py_ssize_t bad = -1
    cdef int64_t e, lo, hi, want
    if policy.shape[0] != n_states or rows.shape[0] != n_states or offsets[n_states] != placement.shape[0]:
        raise ValueError("placement_rows: array shapes do not match")
    with nogil:
        for s in range(n_states):
            lo = offsets[s]
            hi = offsets[s + 1]
            want = policy[s]
            rows[s] = -1
            if lo == hi:
                if want != -1:
                    bad = s
                    break
                continue
            for e in range(lo, hi):
                if placement[e] == want:
                    rows[s] = <int16_t>(e - lo)
                    break
            if rows[s] < 0:
                bad = s
                break
    return bad
