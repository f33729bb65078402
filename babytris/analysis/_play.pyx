# cython: language_level=3
"""Compiled playouts and finite-horizon evaluation over the CSR move table.

Two kernels, both over plain arrays (``babytris.evaluate`` builds and checks
them): :func:`play_games` samples whole games, one per seed, threads sharing
the games; :func:`horizon_values` computes the exact expected points of the
next n placements for every board by backward induction.  The loops hold no
Python objects and run without the GIL.

Random numbers: each game owns a xoshiro256** generator whose state is four
splitmix64 outputs from the game's 64-bit seed, so a game's course depends on
its seed alone, never on the threads.  :func:`game_seeds` derives the seeds of
games ``0..n-1`` from one seed.
"""

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport fabs
from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, uint16_t, uint8_t
from libc.string cimport memcpy

import numpy as np


cdef enum:
    # Games a thread takes at a time (they differ in length: some end early).
    GAMES_PER_CHUNK = 4
    # Steps between two looks for Ctrl-C (about a millisecond at 5 ns a step;
    # a look costs a microsecond or so).
    WATCH_EVERY = 1 << 18
    # Boards per block of a backup pass; threads share the blocks.
    BLOCK = 4096


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define BABYTRIS_PLAY_TAKE(p, n) __atomic_fetch_add((p), (n), __ATOMIC_SEQ_CST)
    #define BABYTRIS_PLAY_READ(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
    #define BABYTRIS_PLAY_ATOMICS 1
    #else
    #define BABYTRIS_PLAY_TAKE(p, n) ((*(p) += (n)) - (n))
    #define BABYTRIS_PLAY_READ(p) (*(volatile const long long*)(p))
    #define BABYTRIS_PLAY_ATOMICS 0
    #endif
    #if defined(_WIN32)
    #include <windows.h>
    static void babytris_pause(void) { Sleep(1); }
    #else
    #include <time.h>
    static void babytris_pause(void) { struct timespec t = {0, 100000}; nanosleep(&t, NULL); }
    #endif
    """
    # ``*p += n`` as one step shared by threads, returning the value before;
    # ``*p`` as another thread last wrote it.  Without atomics (not GCC or
    # Clang), play_games runs one thread.
    int64_t take "BABYTRIS_PLAY_TAKE"(int64_t* p, int64_t n) noexcept nogil
    int64_t read_shared "BABYTRIS_PLAY_READ"(const int64_t* p) noexcept nogil
    const bint HAVE_ATOMICS "BABYTRIS_PLAY_ATOMICS"
    # A tenth of a millisecond's sleep (a millisecond on Windows).
    void pause "babytris_pause"() noexcept nogil


# --------------------------------------------------------------------------
# Random numbers: splitmix64 (seeding), xoshiro256** (the games), in rng.pxd.
# --------------------------------------------------------------------------

from babytris.engine.rng cimport Rng, splitmix64, rng_seed, rng_uniform, rng_below
from babytris.engine._types cimport offset_t
from babytris.engine.signals cimport interrupted


def game_seeds(seed, Py_ssize_t n):
    """uint64 array ``(n,)``: the seeds of games ``0..n-1`` of a run seeded
    with ``seed`` (an integer in [0, 2**64)): the first n outputs of
    splitmix64 started from ``seed``, each game's seed being its own."""
    cdef uint64_t x = <uint64_t>seed
    cdef Py_ssize_t i
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    with nogil:
        for i in range(n):
            view[i] = splitmix64(&x)
    return out


# --------------------------------------------------------------------------
# Playouts.
# --------------------------------------------------------------------------

cdef struct Game:
    int P
    const offset_t* offsets       # state s = board * P + piece has moves offsets[s]:offsets[s+1]
    const int32_t* next_board
    const uint8_t* lines
    const double* scores          # points by rows cleared
    const int16_t* pieces         # NULL: draw the piece; else the piece given on each board
    const double* cumulative      # cumulative piece probabilities, P per chance class (the last never read)
    const int32_t* chance         # NULL: class 0 everywhere; else each board's chance class (its bag)
    const int16_t* rows           # NULL: a uniformly random move; else each state's move, as its row offset
    const uint8_t* holds          # NULL: no hold; else 1 for each move that puts the piece on hold
    const int32_t* starts         # the rows a game may start on (a preview game's opening queues)
    const double* start_cumulative  # their cumulative chances (the last never read)
    Py_ssize_t n_starts
    int64_t n_placements


cdef struct Watch:
    # Shared by the threads of play_games.
    int64_t next_game           # the first game not yet taken
    int64_t stop                # 1 once Ctrl-C came: every game stops at its next look
    int64_t joined, finished    # the helper threads (not the caller's) that took games, and that are done


cdef inline void play_one(const Game* g, uint64_t seed, double* points, int64_t* placements,
                          Watch* w, int64_t* until_look, bint caller) noexcept nogil:
    """One game from one of ``g.starts`` (drawn by its chance where there are
    several, else no draw): up to ``g.n_placements`` placements, ending early when
    the piece fits nowhere.  A hold (``g.holds``) is a step that places
    nothing: it counts no placement (the slot it locks allows no second in a
    row).  Writes its points and placements made.

    Every WATCH_EVERY steps of the thread (``*until_look`` counts down, across
    games) it looks at ``w.stop``, and stops there if set; on the caller's
    thread (``caller``, the one that may take Python's signals) it first
    looks for Ctrl-C and sets ``w.stop``."""
    cdef Rng rng
    cdef int32_t b = g.starts[0]
    cdef int P = g.P
    cdef int p, j
    cdef Py_ssize_t s
    cdef int64_t k, e, lo, hi, countdown = until_look[0]
    cdef double u, total = 0.0
    cdef const double* cum
    rng_seed(&rng, seed)
    if g.n_starts > 1:
        u = rng_uniform(&rng)
        for j in range(g.n_starts - 1):
            b = g.starts[j + 1] if u >= g.start_cumulative[j] else b
    k = 0
    while k < g.n_placements:
        countdown -= 1
        if countdown == 0:
            countdown = WATCH_EVERY
            if caller and interrupted():
                take(&w.stop, 1)
            if read_shared(&w.stop):
                break
        if g.pieces != NULL:
            p = g.pieces[b]
        else:
            u = rng_uniform(&rng)
            p = 0
            cum = g.cumulative if g.chance == NULL else g.cumulative + <Py_ssize_t>g.chance[b] * P
            for j in range(P - 1):      # branch-free: the first j with u < cumulative[j]
                p += u >= cum[j]
        s = <Py_ssize_t>b * P + p
        lo = g.offsets[s]
        hi = g.offsets[s + 1]
        if lo == hi:             # the piece fits nowhere: game over
            break
        if g.rows != NULL:
            e = lo + g.rows[s]
        else:
            e = lo + rng_below(&rng, hi - lo)
        total += g.scores[g.lines[e]]
        b = g.next_board[e]
        if g.holds == NULL or not g.holds[e]:
            k += 1
    until_look[0] = countdown
    placements[0] = k
    points[0] = total


cdef void play_share(const Game* g, const uint64_t* seeds, Py_ssize_t n_games, double* points,
                     int64_t* placements, Watch* w, bint caller) noexcept nogil:
    """One thread's share of the games: chunks of GAMES_PER_CHUNK taken from
    ``w.next_game`` until none is left or ``w.stop`` is set.  The caller's
    thread then keeps looking for Ctrl-C until the helpers are done (their
    last games may be long)."""
    cdef int64_t until_look = WATCH_EVERY, first, i
    if not caller:
        take(&w.joined, 1)
    while not read_shared(&w.stop):
        first = take(&w.next_game, GAMES_PER_CHUNK)
        if first >= n_games:
            break
        for i in range(first, min(first + GAMES_PER_CHUNK, n_games)):
            play_one(g, seeds[i], &points[i], &placements[i], w, &until_look, caller)
    if not caller:
        take(&w.finished, 1)
        return
    # (a helper that joins after this look finds no game left)
    while read_shared(&w.finished) < read_shared(&w.joined) and not read_shared(&w.stop):
        if interrupted():
            take(&w.stop, 1)
        else:
            pause()


def play_games(const offset_t[::1] offsets, const int32_t[::1] next_board, const uint8_t[::1] lines,
               const double[::1] scores, const double[::1] probabilities, const int32_t[::1] starts,
               const double[::1] start_chances, int64_t n_placements,
               const uint64_t[::1] seeds, const int16_t[::1] pieces, const int16_t[::1] rows,
               double[::1] points, int64_t[::1] placements, int n_threads=1, const int32_t[::1] chance=None,
               const uint8_t[::1] holds=None):
    """Play ``len(seeds)`` independent games on the move table, each from one
    of the rows ``starts`` (int32), drawn with ``start_chances`` (float64, one
    per start, summing to 1; one start: no draw); game i uses ``seeds[i]`` and writes ``points[i]`` (float64) and
    ``placements[i]`` (int64, < ``n_placements`` when the game ended early).

    ``pieces``: int16 ``(n_boards,)``, the piece the opponent gives on each
    board, or None to draw it with ``probabilities`` (float64, one per piece;
    with ``chance``, int32 ``(n_boards,)``, one per piece per chance class,
    board b drawing with class ``chance[b]``'s: a bag's contents).
    ``rows``: int16 ``(n_boards * P,)``, each state's move as its offset in
    the state's row (any value where the state has no move), or None for a
    player choosing uniformly among the legal moves.  ``holds``: uint8 per
    move, 1 for a hold (a step that counts no placement), or None.  Shapes
    are checked here; values (pieces in range, rows inside their row) by the caller.
    """
    cdef Py_ssize_t n_states = offsets.shape[0] - 1, b
    cdef int P = probabilities.shape[0] if chance is None or chance.shape[0] == 0 else <int>(n_states // chance.shape[0])
    cdef Py_ssize_t n_boards, n_games = seeds.shape[0], i
    cdef Game g
    if P < 1 or n_states < 0 or n_states % P:
        raise ValueError("play_games: offsets do not match the number of pieces")
    n_boards = n_states // P
    if next_board.shape[0] != lines.shape[0] or offsets[n_states] != next_board.shape[0]:
        raise ValueError("play_games: offsets do not match the moves")
    if starts.shape[0] < 1 or starts.shape[0] != start_chances.shape[0] or n_placements < 0:
        raise ValueError("play_games: starts, start_chances or n_placements out of range")
    for i in range(starts.shape[0]):
        if not 0 <= starts[i] < n_boards:
            raise ValueError(f"play_games: starts[{i}] = {starts[i]} is not a row")
    if (pieces is not None and pieces.shape[0] != n_boards) or (rows is not None and rows.shape[0] != n_states):
        raise ValueError("play_games: pieces or rows have the wrong length")
    if holds is not None and holds.shape[0] != next_board.shape[0]:
        raise ValueError("play_games: holds needs one entry per move")
    if points.shape[0] != n_games or placements.shape[0] != n_games:
        raise ValueError("play_games: points and placements need one entry per seed")
    if probabilities.shape[0] % P or (chance is None and probabilities.shape[0] != P):
        raise ValueError("play_games: probabilities must hold P chances (P per class with chance)")
    if chance is not None:
        if chance.shape[0] != n_boards:
            raise ValueError("play_games: chance must have one entry per board")
        for b in range(n_boards):
            if not 0 <= chance[b] < probabilities.shape[0] // P:
                raise ValueError(f"play_games: chance[{b}] = {chance[b]} is not a chance class")
    cumulative = np.cumsum(np.asarray(probabilities, dtype=np.float64).reshape(-1, P), axis=1).ravel()
    cdef const double[::1] cum = cumulative
    start_cumulative = np.cumsum(np.asarray(start_chances, dtype=np.float64))
    cdef const double[::1] start_cum = start_cumulative
    g.P = P
    g.offsets = &offsets[0]
    g.next_board = &next_board[0] if next_board.shape[0] else NULL
    g.lines = &lines[0] if lines.shape[0] else NULL
    g.scores = &scores[0]
    g.pieces = &pieces[0] if pieces is not None else NULL
    g.cumulative = &cum[0]
    g.chance = &chance[0] if chance is not None and n_boards else NULL
    g.rows = &rows[0] if rows is not None else NULL
    g.holds = &holds[0] if holds is not None and holds.shape[0] else NULL
    g.starts = &starts[0]
    g.start_cumulative = &start_cum[0]
    g.n_starts = starts.shape[0]
    g.n_placements = n_placements
    if n_games == 0:
        return
    cdef Watch w
    w.next_game = w.stop = w.joined = w.finished = 0
    cdef Py_ssize_t n_chunks = (n_games + GAMES_PER_CHUNK - 1) // GAMES_PER_CHUNK
    if n_threads > n_chunks:
        n_threads = <int>n_chunks
    if not HAVE_ATOMICS or n_threads < 1:
        n_threads = 1
    if n_threads == 1:
        with nogil:
            play_share(&g, &seeds[0], n_games, &points[0], &placements[0], &w, True)
    else:
        # The caller's thread is thread 0 of the team (OpenMP's rule), the one Python's signals reach.
        with nogil, parallel(num_threads=n_threads):
            play_share(&g, &seeds[0], n_games, &points[0], &placements[0], &w, threadid() == 0)
    if w.stop:
        raise KeyboardInterrupt


# --------------------------------------------------------------------------
# Finite-horizon values: U_k = reward + M U_{k-1} from U_0 = 0, M a sparse
# non-negative matrix over boards whose row sums are at most 1 (the chance
# that the game goes on), in CSR form.
# --------------------------------------------------------------------------

# How horizon_values stopped.
cdef enum:
    RAN_ALL = 0         # all n backups
    FIXED_POINT = 1     # a backup changed nothing: every later one would repeat it
    EXTRAPOLATED = 2    # the lag-L increments stopped changing: the rest extrapolated
    STOPPED = 3         # Ctrl-C: KeyboardInterrupt is raised
    # reachable_rows looks for Ctrl-C every this many rows (a millisecond or less).
    WALK_CHECK = 1 << 16


def reachable_rows(const offset_t[::1] offsets, const int32_t[::1] next_board, int n_pieces,
                   const int64_t[::1] starts, const uint8_t[::1] can_come, const int16_t[::1] pieces=None,
                   const int16_t[::1] rows=None):
    """bool array ``(n_rows,)``: the rows a game reaches from ``starts``
    (included) when on row b the piece ``pieces[b]`` comes (None: each piece
    p with ``can_come[b * n_pieces + p]``) and the player makes the move
    ``rows[s]`` of state s (an offset in its row; None: every move).  One
    walk over the reachable states only: an evaluation pays for the rows a
    game meets, not for the whole table."""
    cdef Py_ssize_t n_states = offsets.shape[0] - 1, n_rows, head = 0, tail = 0, i
    cdef Py_ssize_t P = n_pieces
    cdef int64_t b, s, e, lo, hi, nxt
    cdef int p
    cdef bint given = pieces is not None, fixed = rows is not None
    if P < 1 or n_states % P or can_come.shape[0] != n_states or next_board.shape[0] != offsets[n_states]:
        raise ValueError("reachable_rows: array shapes do not match")
    n_rows = n_states // P
    if (pieces is not None and pieces.shape[0] != n_rows) or (rows is not None and rows.shape[0] != n_states):
        raise ValueError("reachable_rows: pieces or rows have the wrong length")
    seen = np.zeros(n_rows, dtype=np.uint8)
    queue = np.empty(max(n_rows, 1), dtype=np.int64)
    cdef uint8_t[::1] mark = seen
    cdef int64_t[::1] q = queue
    for i in range(starts.shape[0]):
        b = starts[i]
        if not 0 <= b < n_rows:
            raise ValueError(f"reachable_rows: start {b} is not a row")
        if not mark[b]:
            mark[b] = 1
            q[tail] = b
            tail += 1
    cdef bint stopped = False
    with nogil:
        while head < tail:
            if head % WALK_CHECK == 0 and interrupted():
                stopped = True
                break
            b = q[head]
            head += 1
            for p in range(P):
                if (given and p != pieces[b]) or (not given and not can_come[b * P + p]):
                    continue
                s = b * P + p
                lo = offsets[s]
                hi = offsets[s + 1]
                if lo == hi:
                    continue
                if fixed:
                    lo = lo + rows[s]
                    hi = lo + 1
                for e in range(lo, hi):
                    nxt = next_board[e]
                    if not mark[nxt]:
                        mark[nxt] = 1
                        q[tail] = nxt
                        tail += 1
    if stopped:
        raise KeyboardInterrupt
    return seen.view(bool)


cdef struct Chain:
    const int64_t* ptr            # board b's entries: ptr[b]:ptr[b+1] (with groups: row r's)
    const int32_t* col            # the next board
    const double* weight          # its probability
    const double* reward          # expected points of the board's next placement (with groups: the row's)
    const int64_t* groups         # if not NULL, board b's rows: groups[b]:groups[b+1], of which it takes the least


cdef inline bint backup(const Chain* c, const double* before, double* after,
                        Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """``after[b] = reward[b] + sum_e weight[e] * before[col[e]]`` for b in
    [lo, hi); returns whether some ``after[b]`` differs from ``before[b]``."""
    cdef const int64_t* ptr = c.ptr
    cdef const int32_t* col = c.col
    cdef const double* weight = c.weight
    cdef const double* reward = c.reward
    cdef Py_ssize_t b
    cdef int64_t e
    cdef double acc
    cdef bint moved = False
    cdef int64_t r
    cdef double least
    if c.groups != NULL:
        for b in range(lo, hi):
            # An opponent choosing the row: the least (a board with no row: 0, the game is over).
            least = 0.0
            for r in range(c.groups[b], c.groups[b + 1]):
                acc = 0.0
                for e in range(ptr[r], ptr[r + 1]):
                    acc += weight[e] * before[col[e]]
                acc = reward[r] + acc
                if r == c.groups[b] or acc < least:
                    least = acc
            moved |= least != before[b]
            after[b] = least
        return moved
    for b in range(lo, hi):
        acc = 0.0
        for e in range(ptr[b], ptr[b + 1]):
            acc += weight[e] * before[col[e]]
        acc = reward[b] + acc
        moved |= acc != before[b]
        after[b] = acc
    return moved


cdef inline double second_difference(const double* now, const double* last, const double* before_last,
                                     Py_ssize_t lo, Py_ssize_t hi, double* largest) noexcept nogil:
    """Over b in [lo, hi): the largest ``|now - 2 last + before_last|``
    (returned; NaN wins) and the largest ``|now|`` (into ``*largest``)."""
    cdef Py_ssize_t b
    cdef double change = 0.0, size = 0.0, x
    for b in range(lo, hi):
        x = fabs(now[b] - 2.0 * last[b] + before_last[b])
        if x > change or x != x:
            change = x
        x = fabs(now[b])
        if x > size:
            size = x
    largest[0] = size
    return change


def horizon_values(const int64_t[::1] ptr, const int32_t[::1] col, const double[::1] weight,
                   const double[::1] reward, int64_t n_steps, double[::1] out, int64_t lag=0,
                   double tol=0.0, int patience=3, int n_threads=1, const int64_t[::1] groups=None):
    """``U_n = reward + M U_{n-1}`` from ``U_0 = 0``, n = ``n_steps``, into
    ``out`` (float64, one per board); M's row b has its entries at
    ``ptr[b]:ptr[b+1]`` (``col``: the next board, ``weight``: its chance).
    Returns ``(steps, status, change)``: the backups run; 0 if they were
    all n, 1 if backup ``steps`` changed no value (a fixed point in floating
    point: every later backup repeats it, so ``U_n = U_steps`` exactly), 2 if
    the end was extrapolated; and the last checkpoint's change (-1 if none).

    With ``lag`` = L >= 1, an early exit.  At the steps k with ``n - k``
    divisible by L (checkpoints) it measures how much the L-step increment
    ``D_k = U_k - U_{k-L}`` changed since the last checkpoint:
    ``change = max |U_k - 2 U_{k-L} + U_{k-2L}|``.  Once the change is at
    most ``tol * max(1, max |U_k|)`` at ``patience`` checkpoints in a row,
    ``U_n = U_k + (n - k) / L * D_k``.  M^L having row sums <= 1, the change
    never grows from one checkpoint to the next, so in exact arithmetic the
    extrapolation is off by at most ``change * q * (q + 1) / 2``,
    ``q = (n - k) / L``.  ``lag=0``: no extrapolation.

    Threads share blocks of boards within each backup; each value is
    computed by the same operations whatever ``n_threads``, so the result
    does not depend on it.

    With ``groups`` (int64, one more than ``out``), M's rows are states and
    board b takes the least of its rows ``groups[b]:groups[b+1]`` (an
    opponent choosing the piece, with ``n_steps`` placements left; 0 with no
    row): ``U_n = min_rows (reward + M U_{n-1})``.  Not linear: give ``lag=0``.
    """
    cdef Chain c
    cdef Py_ssize_t n = out.shape[0], n_blocks, blk, lo, hi, b
    cdef int64_t k = 0, first, q
    cdef double change = -1.0, size
    cdef int calm = 0, seen = 0, status = RAN_ALL
    cdef bint moved
    cdef Py_ssize_t rows = n if groups is None else (groups[groups.shape[0] - 1] if groups.shape[0] else -1)
    if groups is not None:
        if groups.shape[0] != n + 1 or groups[0] != 0 or lag != 0:
            raise ValueError("horizon_values: groups must have one entry per board and one more, from 0; lag=0")
        for b in range(n):
            if groups[b + 1] < groups[b]:
                raise ValueError("horizon_values: groups must not decrease")
    if (ptr.shape[0] != rows + 1 or reward.shape[0] != rows or col.shape[0] != weight.shape[0]
            or ptr[rows] != col.shape[0]):
        raise ValueError("horizon_values: array shapes do not match")
    for b in range(col.shape[0]):
        if not 0 <= col[b] < n:
            raise ValueError(f"horizon_values: col[{b}] = {col[b]} is not a board")
    if n_steps < 0 or lag < 0 or patience < 1:
        raise ValueError("horizon_values: n_steps, lag or patience out of range")
    if n == 0:
        return 0, RAN_ALL, change
    c.ptr = &ptr[0]
    c.col = &col[0] if col.shape[0] else NULL
    c.weight = &weight[0] if weight.shape[0] else NULL
    c.reward = &reward[0] if reward.shape[0] else NULL
    c.groups = &groups[0] if groups is not None else NULL
    # Two buffers for the backups (Jacobi), two for the last checkpoints.
    buffers = np.zeros((4 if lag else 2, n))
    cdef double[:, ::1] buf = buffers
    cdef double* before = &buf[0, 0]
    cdef double* after = &buf[1, 0]
    cdef double* last = &buf[2, 0] if lag else NULL
    cdef double* before_last = &buf[3, 0] if lag else NULL
    cdef double* swap
    n_blocks = (n + BLOCK - 1) // BLOCK
    if n_threads > n_blocks:
        n_threads = <int>n_blocks
    if n_threads < 1:
        n_threads = 1
    per_block = np.zeros((3, n_blocks))
    cdef double[:, ::1] block = per_block     # rows: moved, change, largest |U|
    first = n_steps % lag if lag else 0
    # Look for Ctrl-C about every 10**6 entries read (a millisecond or so).
    cdef int64_t check_every = max(1, 1_000_000 // (n + col.shape[0] + 1))
    with nogil:
        while True:
            # U_k is in `before`.
            if lag and k >= first and (k - first) % lag == 0:
                if seen >= 2:
                    for blk in prange(n_blocks, num_threads=n_threads, schedule="static"):
                        lo = blk * BLOCK
                        hi = lo + BLOCK if lo + BLOCK < n else n
                        block[1, blk] = second_difference(before, last, before_last, lo, hi, &block[2, blk])
                    change = 0.0
                    size = 1.0
                    for blk in range(n_blocks):
                        if block[1, blk] > change or block[1, blk] != block[1, blk]:
                            change = block[1, blk]
                        if block[2, blk] > size:
                            size = block[2, blk]
                    calm = calm + 1 if change <= tol * size else 0
                swap = before_last      # before_last <- last <- U_k
                before_last = last
                last = swap
                memcpy(last, before, n * sizeof(double))
                seen = seen + 1
                if calm >= patience and k < n_steps:
                    q = (n_steps - k) // lag
                    for b in range(n):
                        before[b] = last[b] + <double>q * (last[b] - before_last[b])
                    status = EXTRAPOLATED
                    break
            if k == n_steps:
                break
            if n_threads == 1:          # no parallel region: a small chain's pass takes microseconds
                moved = backup(&c, before, after, 0, n)
            else:
                for blk in prange(n_blocks, num_threads=n_threads, schedule="static"):
                    lo = blk * BLOCK
                    hi = lo + BLOCK if lo + BLOCK < n else n
                    block[0, blk] = backup(&c, before, after, lo, hi)
                moved = False
                for blk in range(n_blocks):
                    moved = moved or block[0, blk] != 0.0
            swap = before
            before = after
            after = swap
            k = k + 1
            if k % check_every == 0 and interrupted():
                status = STOPPED
                break
            if not moved and k < n_steps:
                status = FIXED_POINT
                break
    if status == STOPPED:
        raise KeyboardInterrupt
    memcpy(&out[0], before, n * sizeof(double))
    return k, status, change
