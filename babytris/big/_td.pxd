"""Declarations of the compiled TD(lambda) kernel (babytris/big/_td.pyx)."""

from libc.stdint cimport uint64_t, int64_t

from babytris.big._board cimport Geo


cdef struct TDNet:
    # V(x) = w2 . sigmoid(W1 x + b1) + b2 over the board's cells x (0/1, cell r * width + c).
    int n_in, hidden
    double* W1T                 # W1 transposed, (n_in, hidden): a cell's weights are contiguous
    double* b1
    double* w2
    double* b2                  # one value
    # The eligibility traces, same shapes (scratch: zeroed at the start of each game).
    double* eW1T
    double* eb1
    double* ew2


cdef struct TDSettings:
    double rate, trace, discount, placement_reward, line_reward, game_over
    const double* scores        # points by rows cleared; NULL: placement_reward + line_reward * lines
    const double* cumulative    # cumulative piece probabilities (the last is never read)
    bint explore
    bint toward_best            # the step's target: the best move's score (the paper's eq. 1), else the one played
    bint as_written             # eq. 1 and 5 as written: the best by r + V(s'), exploring by V(s'); else by r + gamma V(s')
    int64_t max_placements


cdef int td_games(const Geo* g, TDNet* net, const TDSettings* s, uint64_t* rng_state, int64_t n_games,
                  int64_t* lines, int64_t* placements, int64_t* explored) noexcept nogil
