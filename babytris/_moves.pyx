# cython: language_level=3
"""Arrays with one entry per move of the CSR move table, in one compiled
pass each: the moves' rewards (``babytris.reward``) and the placement
numbers of chosen moves (``babytris.solve``)."""

from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t, uint16_t

from babytris._types cimport offset_t

import numpy as np


def move_values(const offset_t[::1] offsets, const int32_t[::1] next_board, const uint8_t[::1] lines,
                const double[::1] per_state, const double[::1] per_row, const double[::1] per_lines,
                const uint8_t[::1] final_rows=None, double final_value=0.0):
    """One value per move: ``per_state[s] + per_row[next_board[e]] +
    per_lines[lines[e]]`` for each move e of state s, or ``final_value`` where
    ``final_rows[next_board[e]]`` is set (float64 array; one pass, no
    temporaries: the rewards of tables of 10**8 moves)."""
    cdef Py_ssize_t n_states = offsets.shape[0] - 1, n_moves = next_board.shape[0], s, i
    cdef int64_t e
    if n_states < 0 or per_state.shape[0] != n_states or offsets[n_states] != n_moves or lines.shape[0] != n_moves:
        raise ValueError("move_values: array shapes do not match")
    for e in range(n_moves):
        if not 0 <= next_board[e] < per_row.shape[0] or lines[e] >= per_lines.shape[0]:
            raise ValueError(f"move_values: move {e} leads out of per_row or clears more rows than per_lines covers")
    if final_rows is not None and final_rows.shape[0] != per_row.shape[0]:
        raise ValueError("move_values: final_rows must have one entry per row")
    out = np.empty(n_moves, dtype=np.float64)
    cdef double[::1] o = out
    cdef const uint8_t* final = &final_rows[0] if final_rows is not None and final_rows.shape[0] else NULL
    with nogil:
        for s in range(n_states):
            for e in range(offsets[s], offsets[s + 1]):
                i = next_board[e]
                if final != NULL and final[i]:
                    o[e] = final_value
                else:
                    o[e] = per_state[s] + per_row[i] + per_lines[lines[e]]
    return out


def placement_numbers(const offset_t[::1] offsets, const uint16_t[::1] placement, const int16_t[::1] moves):
    """Each state's move given as its offset in the state's row (-1: none)
    as the move's placement number: int16 array like ``moves``, -1 where none."""
    cdef Py_ssize_t n = moves.shape[0], s
    cdef int64_t e
    if offsets.shape[0] != n + 1:
        raise ValueError("placement_numbers: offsets must have one entry per state, and one more")
    for s in range(n):
        if moves[s] >= 0 and not offsets[s] + moves[s] < offsets[s + 1]:
            raise ValueError(f"placement_numbers: moves[{s}] = {moves[s]} is not a move of its state")
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
