"""Declarations of the big-board playout kernels (babytris/big/_playout.pyx):
policies, whole games and the per-board work of the batch methods, all
without the GIL.  ``_engine`` (the Python-facing Engine) calls them."""

from libc.stdint cimport uint64_t, int64_t, int16_t, int8_t, uint16_t, uint8_t

from babytris.big._board cimport Geo, Board, C_MAX_WIDTH, N_SCALARS


cdef struct Policy:
    bint greedy                 # False: a uniformly random legal placement
    int needs
    # The weights by feature slot (0 for features not asked for), summed in
    # this order: the constant, the scalars, landing height, eroded cells,
    # then each column height and each difference.
    double constant
    double scalar[N_SCALARS]
    int8_t active[N_SCALARS]    # the scalar slots with a weight, in slot order
    int n_active
    double landing, eroded
    double heights[C_MAX_WIDTH]
    double differences[C_MAX_WIDTH]
    bint any_heights, any_differences
    const double* line_reward   # by rows cleared
    double discount
    double epsilon              # chance of a random placement instead of the greedy one
    bint random_ties            # among equally good placements, one at random (else the first)


cdef struct Game:
    const Geo* g
    const Policy* pol
    const double* cumulative    # cumulative piece probabilities (the last is never read)
    const double* scores        # points by rows cleared
    const uint16_t* start       # the start board's rows
    int64_t max_placements
    # Ctrl-C: the caller's thread (``watch``) looks for a signal every
    # WATCH_EVERY of its placements (``ticks`` counts them) and sets ``stop[0]``;
    # every game stops at its next placement once it is set.  NULL: no watch.
    int* stop
    int64_t* ticks


cdef struct Record:
    uint16_t* rows              # the boards before each placement, height rows each
    int16_t* pieces             # the piece drawn on each
    int64_t n, cap


cdef extern from *:
    """
    #define BABYTRIS_STOPPED(p) (*(volatile const int*)(p))
    """
    # ``*stop`` read from memory every time (another thread sets it).
    bint stopped "BABYTRIS_STOPPED"(const int* stop) noexcept nogil


cdef int make_policy(Policy* pol, const int8_t[::1] codes, const double[::1] weights,
                     const double[::1] line_reward, double discount, double epsilon, int width,
                     int max_rows) except -1
cdef int play_one(const Game* G, uint64_t seed, int64_t* placements, int64_t* lines, double* points,
                  Record* rec, bint watch) noexcept nogil
cdef int64_t count_moves(const Geo* g, const uint16_t* rows, int p) noexcept nogil
cdef void fill_moves(const Geo* g, const uint16_t* rows, int p, int64_t at, uint16_t* out_rows,
                     uint8_t* out_lines, int16_t* out_place, int16_t* out_landing, double* out_height,
                     int16_t* out_eroded) noexcept nogil
cdef void features_one(const Geo* g, const uint16_t* rows, const int8_t* codes, int n_codes,
                       const double* landing_height, const int16_t* eroded, Py_ssize_t i,
                       double* out) noexcept nogil
cdef int greedy_chunk(const Geo* g, const Policy* pol, const uint16_t* rows, const int16_t* pieces,
                      Py_ssize_t lo, Py_ssize_t hi, int16_t* placement, double* value) noexcept nogil
cdef void copy_record(const Record* rec, uint16_t[:, ::1] rows, int16_t[::1] pieces, int height)
