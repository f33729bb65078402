# cython: language_level=3
"""The Bellman sweeps' shared declarations: the codes of who chooses, the
:c:type:`Sweep` a sweep reads, and :class:`Sweeper`'s fields, so that other
compiled modules (``_strategy.pyx``) work on a Sweeper's validated arrays."""

from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t

from babytris.engine._types cimport offset_t

# The two enums below are the codes babytris.solvers.roles passes to the Sweeper:
# cpdef, so that roles imports them from here rather than retyping them.
cpdef enum:
    # How a board's value combines its pieces' (who gives the next piece).
    PIECES_RANDOM = 0          # drawn: the mean weighted by the probabilities
    PIECES_WORST = 1           # an opponent gives the piece with the least value
    PIECES_BEST = 2            # an opponent gives the piece with the most value
    PIECES_FIXED = 3           # a given piece per board

cpdef enum:
    # How a state's value combines its moves' (how the player places).
    MOVES_BEST = 0             # the best move
    MOVES_MEAN = 1             # uniformly at random: the mean
    MOVES_FIXED = 2            # a given move per state

cdef struct Sweep:
    int P
    const offset_t* offsets
    const int32_t* nxt
    const uint8_t* lines
    const double* scores       # points per rows cleared
    const double* move_reward  # if not NULL, each move's reward (instead of scores[lines])
    const double* probs        # the pieces' chances: P per chance class
    const int32_t* chance      # if not NULL, each board's chance class (its bag); else class 0
    double discount
    double dead                # the value of a state with no move (game over)
    int pieces                 # PIECES_*
    int moves                  # MOVES_*
    const int16_t* piece_choice    # PIECES_FIXED: the piece given on each board
    const int16_t* fixed_move      # MOVES_FIXED: each state's move (offset in its row, -1: none)
    const int32_t* order       # live boards in the order swept
    bint independent_layers    # no board leads to one of its own layer: threads may share a layer
    double* V
    double* W
    const double* R            # the board values moves read: W itself (Gauss-Seidel, in place) or, with
                               # synchronous sweeps (Jacobi), W as it was before the sweep
    double* V_prev             # if not NULL, receives V as it was (for extrapolation)
    double* W_prev
    float* W_change            # if not NULL, receives each board's change of W (float32: an Aitken jump's direction)
    int16_t* policy            # each state's chosen move (offset in its row), -1 where none
    # If not NULL (PIECES_WORST, see Sweeper.record_least_pieces), greedy sweeps of the common
    # games note for each board the least valuable piece, where its move leads (-1: none) and that
    # move's reward (the dead value where none).
    uint8_t* least_piece
    int32_t* least_next
    double* least_gain
    # If not NULL (see Sweeper.cache_chosen_moves), greedy sweeps of the common games note each
    # state's chosen move as the board it leads to (-1: none) and its rows cleared, and evaluation
    # sweeps read these (one random load a move less) while chosen_valid says they hold.
    int32_t* chosen_next
    uint8_t* chosen_lines
    bint chosen_valid


cdef inline const double* chances(const Sweep* sw, int32_t b) noexcept nogil:
    """The chances of the pieces on board b (P of them)."""
    if sw.chance == NULL:
        return sw.probs
    return sw.probs + <Py_ssize_t>sw.chance[b] * sw.P


cdef class Sweeper:
    cdef Sweep sw
    cdef Py_ssize_t n_boards
    cdef Py_ssize_t n_layers
    cdef const int64_t* layer_starts
    cdef double* block_residual
    cdef public int n_threads
    cdef object arrays           # keeps every array the pointers point into alive
    cdef object chosen_room      # the caller's buffer holding the chosen moves' cache, or None
    cdef bint chosen_borrowed    # whether the cache lies in chosen_room (not the sweeper's to free)
    cdef bint mapped             # whether a greedy sweep has mapped the pages of V, W and the cache
    cdef double[::1] before      # synchronous sweeps: W as it was before the sweep
    cdef public bint least_noted  # whether the last greedy sweep noted the least valuable pieces
    cdef readonly Py_ssize_t generation  # how many times __init__ has set the arrays up

    cdef void _remember(self) noexcept
    cdef Py_ssize_t _first_layer(self, Py_ssize_t layer) except -1
    cdef void _free_least(self) noexcept
    cdef void _free_chosen(self) noexcept
