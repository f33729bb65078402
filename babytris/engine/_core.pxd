# C-level declarations of the exact engine (babytris/_core.pyx).

from babytris.engine._geometry cimport Geometry
from babytris.engine._types cimport board_t


# The placement rule (_drop.pxd), exported for the lean sweeps (_lean.pyx), which
# recompute every move instead of storing it: one copy of the rules, called, not inlined.
cdef const Geometry* engine_geometry(object engine) except NULL
cdef board_t smeared_board(const Geometry* g, board_t board) noexcept nogil
cdef bint drop_piece(const Geometry* g, board_t board, board_t smeared, int k, board_t* after,
                     int* lines) noexcept nogil
