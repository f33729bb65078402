# cython: language_level=3
"""TD(lambda) training games of a one-hidden-layer value network on big
boards (babytris.big.td), compiled: the same updates as the numpy loop of
``babytris.big.td._play_and_learn``, without Python between placements.

The network's inputs are the board's cells (0/1), so ``W1 x`` is a sum of
the weight columns of the filled cells, and an afterstate that clears no
row is the board plus the piece's cells: its hidden sums are the board's
plus the piece's columns.  ``W1`` is held transposed so that a cell's
weights are contiguous.

Random draws come from one xoshiro256** stream (babytris/rng.pxd) whose
state the caller keeps between blocks of games: per placement one uniform
for the piece (the first j with ``u < cumulative[j]``, as the playouts do),
then, when exploring, one uniform for the move (or one integer below the
number of moves when every move scores the same).  :class:`Draws` gives the
same stream to the numpy loop, which then plays the same games.
"""

from libc.stdint cimport uint64_t, int64_t, uint32_t, uint16_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from libc.math cimport exp

import numpy as np

from babytris.engine.rng cimport Rng, rng_seed, rng_uniform, rng_below
from babytris.engine.signals cimport interrupted
from babytris.big._board cimport *


cdef inline double sigmoid(double z) noexcept nogil:
    return 1.0 / (1.0 + exp(-z))  # as the numpy loop computes it (near-ties round alike); exp is 2x tanh's speed


cdef inline void set_board(const Geo* g, Board* b) noexcept nogil:
    """The top and column heights of ``b``'s rows, written in place."""
    b.top = board_top(b.rows, g.height)
    heights_of(b.rows, b.top, g.width, g.full, b.heights)


cdef inline double output(const TDNet* net, const double* z) noexcept nogil:
    """``w2 . sigmoid(z) + b2`` for hidden sums ``z``."""
    cdef double v = 0.0
    cdef int h
    for h in range(net.hidden):
        v += net.w2[h] * sigmoid(z[h])
    return v + net.b2[0]


cdef inline int board_sums(const TDNet* net, const uint16_t* rows, int top, int width, double* z,
                           int* cells) noexcept nogil:
    """``z = W1 x + b1`` of the board ``rows`` (rows below ``top``); writes
    its filled cells to ``cells`` and returns how many."""
    cdef int r, c, h, n = 0, H = net.hidden
    cdef uint32_t bits
    cdef const double* col
    memcpy(z, net.b1, H * sizeof(double))
    for r in range(top):
        bits = rows[r]
        while bits:
            c = lowest_bit(bits)
            bits &= bits - 1
            cells[n] = r * width + c
            col = net.W1T + <Py_ssize_t>cells[n] * H
            for h in range(H):
                z[h] += col[h]
            n += 1
    return n


cdef inline void add_piece(const Geo* g, const TDNet* net, int k, int y, const double* base, double* z) noexcept nogil:
    """``z = base`` plus the weight columns of placement k's cells landed at row y."""
    cdef int i, c, h, H = net.hidden
    cdef uint32_t bits
    cdef const double* col
    memcpy(z, base, H * sizeof(double))
    for i in range(g.n_rows[k]):
        bits = g.shape[<Py_ssize_t>k * g.max_rows + i]
        while bits:
            c = lowest_bit(bits)
            bits &= bits - 1
            col = net.W1T + <Py_ssize_t>((y + i) * g.width + c) * H
            for h in range(H):
                z[h] += col[h]


cdef inline void step(TDNet* net, double size, double eb2) noexcept nogil:
    """Weights += ``size`` * traces."""
    cdef Py_ssize_t i, n = <Py_ssize_t>net.n_in * net.hidden
    cdef int h
    for i in range(n):
        net.W1T[i] += size * net.eW1T[i]
    for h in range(net.hidden):
        net.b1[h] += size * net.eb1[h]
        net.w2[h] += size * net.ew2[h]
    net.b2[0] += size * eb2


cdef inline int choose_move(const double* q, int n, Rng* rng) noexcept nogil:
    """The paper's exploration (eq. 5-6): move k with chance proportional to
    ``q[k] - min q`` (uniformly at random if all are equal); ``q`` the
    afterstates' values, or their scores ``r + gamma V`` (``as_written`` off)."""
    cdef double low = q[0], total = 0.0, u
    cdef int k
    for k in range(1, n):
        if q[k] < low:
            low = q[k]
    for k in range(n):
        total += q[k] - low
    if not total > 0:
        return <int>rng_below(rng, n)
    u = rng_uniform(rng) * total
    total = 0.0
    for k in range(n):
        total += q[k] - low
        if total > u:
            return k
    return n - 1


cdef int td_games(const Geo* g, TDNet* net, const TDSettings* s, uint64_t* rng_state, int64_t n_games,
                  int64_t* lines, int64_t* placements, int64_t* explored) noexcept nogil:
    """Play and learn ``n_games`` games from the empty board, writing each
    one's rows cleared, placements and explored moves; the generator's state
    is read from and written back to ``rng_state``.  -1 if out of memory,
    1 if stopped by Ctrl-C (looked for every 64 placements: a few ms)."""
    cdef int H = net.hidden, P = g.n_pieces, W = g.width, height = g.height
    cdef int p, j, k, y, n, m, best, choice, n_cells, h, top, eroded, max_moves = 0
    cdef int64_t game, placed, total_lines, n_explored, ticks = 0
    cdef int status = 0
    cdef Py_ssize_t i, n_weights = <Py_ssize_t>net.n_in * H
    cdef double value, u, v, reward, eb2, lam = s.trace
    cdef Rng rng
    cdef Board b
    for p in range(P):
        if g.first[p + 1] - g.first[p] > max_moves:
            max_moves = g.first[p + 1] - g.first[p]
    # The board, the afterstates' rows, their rows cleared and scores, the
    # board's hidden sums, activations and slopes, a move's sums, the filled cells.
    cdef uint16_t* rows = <uint16_t*>malloc((<size_t>max_moves + 1) * height * sizeof(uint16_t))
    cdef int* move_lines = <int*>malloc((<size_t>max_moves + 1) * sizeof(int))
    cdef double* q = <double*>malloc(3 * (<size_t>max_moves + 1) * sizeof(double))  # greedy scores, rewards, V
    cdef double* zb = <double*>malloc(4 * <size_t>H * sizeof(double))
    cdef int* cells = <int*>malloc(2 * <size_t>net.n_in * sizeof(int))  # the board's, then an afterstate's
    if rows == NULL or move_lines == NULL or q == NULL or zb == NULL or cells == NULL:
        free(rows); free(move_lines); free(q); free(zb); free(cells)
        return -1
    cdef double* act = zb + H
    cdef double* slope = zb + 2 * H
    cdef double* z = zb + 3 * H
    cdef uint16_t* after = rows + height
    cdef double* move_reward = q + max_moves + 1
    cdef double* move_value = q + 2 * (max_moves + 1)
    b.rows = rows
    rng.s0, rng.s1, rng.s2, rng.s3 = rng_state[0], rng_state[1], rng_state[2], rng_state[3]
    for game in range(n_games):
        memset(rows, 0, height * sizeof(uint16_t))
        set_board(g, &b)
        memset(net.eW1T, 0, n_weights * sizeof(double))
        memset(net.eb1, 0, H * sizeof(double))
        memset(net.ew2, 0, H * sizeof(double))
        eb2 = 0.0
        placed = total_lines = n_explored = 0
        # V(board) and its gradient: dV/dW1 = slope x^T, dV/db1 = slope, dV/dw2 = act, dV/db2 = 1.
        n_cells = board_sums(net, b.rows, b.top, W, zb, cells)
        value = net.b2[0]
        for h in range(H):
            act[h] = sigmoid(zb[h])
            slope[h] = net.w2[h] * act[h] * (1.0 - act[h])
            value += net.w2[h] * act[h]
        while placed < s.max_placements:
            u = rng_uniform(&rng)
            p = 0
            for j in range(P - 1):
                p += u >= s.cumulative[j]
            # traces <- lambda * traces + gradient
            for i in range(n_weights):
                net.eW1T[i] *= lam
            for j in range(n_cells):
                for h in range(H):
                    net.eW1T[<Py_ssize_t>cells[j] * H + h] += slope[h]
            for h in range(H):
                net.eb1[h] = lam * net.eb1[h] + slope[h]
                net.ew2[h] = lam * net.ew2[h] + act[h]
            eb2 = lam * eb2 + 1.0
            # every placement's reward and afterstate value, and the score the best is taken by
            n = 0
            for k in range(g.first[p], g.first[p + 1]):
                y = landing(g, b.heights, k)
                if y < 0:
                    continue
                m = place(g, b.rows, b.top, k, y, after + n * height, &top, &eroded)
                for j in range(top, height):
                    after[n * height + j] = 0
                if m == 0:
                    add_piece(g, net, k, y, zb, z)
                else:
                    board_sums(net, after + n * height, top, W, z, cells + net.n_in)
                v = output(net, z)
                reward = s.scores[m] if s.scores != NULL else s.placement_reward + s.line_reward * m
                move_reward[n], move_value[n] = reward, v
                q[n] = reward + v if s.as_written else reward + s.discount * v
                move_lines[n] = m
                n += 1
            if n == 0:
                step(net, s.rate * (s.game_over - value), eb2)
                break
            best = 0
            for k in range(1, n):
                if q[k] > q[best]:
                    best = k
            if s.explore:
                choice = choose_move(move_value if s.as_written else q, n, &rng)
            else:
                choice = best
            n_explored += choice != best
            # (the paper's eq. 1 steps toward r + gamma V of the best move, whichever is played)
            k = best if s.toward_best else choice
            step(net, s.rate * (move_reward[k] + s.discount * move_value[k] - value), eb2)
            memcpy(rows, after + choice * height, height * sizeof(uint16_t))
            set_board(g, &b)
            total_lines += move_lines[choice]
            placed += 1
            ticks += 1
            if ticks % 64 == 0 and interrupted():
                status = 1
                break
            n_cells = board_sums(net, b.rows, b.top, W, zb, cells)
            value = net.b2[0]
            for h in range(H):
                act[h] = sigmoid(zb[h])
                slope[h] = net.w2[h] * act[h] * (1.0 - act[h])
                value += net.w2[h] * act[h]
        lines[game] = total_lines
        placements[game] = placed
        explored[game] = n_explored
        if status:
            break
    rng_state[0], rng_state[1], rng_state[2], rng_state[3] = rng.s0, rng.s1, rng.s2, rng.s3
    free(rows); free(move_lines); free(q); free(zb); free(cells)
    return status


def seeded_state(uint64_t seed):
    """The generator state ``td_games`` starts from for ``seed``: uint64 ``(4,)``."""
    cdef Rng rng
    rng_seed(&rng, seed)
    return np.array([rng.s0, rng.s1, rng.s2, rng.s3], dtype=np.uint64)


cdef class Draws:
    """The kernel's random stream for ``seed``, one draw at a time (for the
    numpy loop, so that it plays the kernel's games).

    Args:
        seed: as given to the kernel.
        probabilities: the pieces' chances.
    """

    cdef Rng rng
    cdef double[::1] cumulative

    def __init__(self, uint64_t seed, probabilities):
        rng_seed(&self.rng, seed)
        self.cumulative = np.cumsum(np.asarray(probabilities, dtype=np.float64))

    def piece(self):
        """A piece: the first j with ``u < cumulative[j]`` (the last if none)."""
        cdef double u = rng_uniform(&self.rng)
        cdef int j, p = 0
        for j in range(self.cumulative.shape[0] - 1):
            p += u >= self.cumulative[j]
        return p

    def uniform(self):
        """A float in [0, 1)."""
        return rng_uniform(&self.rng)

    def below(self, int64_t n):
        """An integer in [0, n)."""
        if not 1 <= n < 2**32:
            raise ValueError(f"n must be in [1, 2**32), got {n}")
        return rng_below(&self.rng, n)
