# cython: language_level=3
"""The exact engine of babytris: bitboard placement, hard drop, line clears,
and the breadth-first enumeration of every reachable board into the CSR move
table (:class:`babytris.Transitions`): the rules of the game, once.  Raw
integers and numpy buffers in, loops without the GIL; the sweeps are in _sweep.pyx.
"""

from cython cimport view
from cython.parallel cimport prange, threadid
from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, uint8_t, uint16_t, INT32_MAX, SIZE_MAX
from libc.stdlib cimport malloc, realloc, free

import numpy as np

from babytris.engine._layers import bitmap_layered, layered

from babytris.engine._types cimport atomic_load, board_t, fetch_or, index_t, mix64, offset_t, populate_threads, prefetch
from babytris.engine.signals cimport interrupted
from babytris.engine._boardmap cimport BoardMap, MapSlot, map_init, map_free, map_get_or_insert
from babytris.engine._index cimport Index, has_board, index_of, slot_of, renumber, use_layer_ranks
from babytris.engine._soft cimport MAX_POSITIONS
from babytris.engine._search cimport (INTERRUPTED, NOT_CLOSED, OK, OUT_OF_MEMORY, OVER_BUDGET, REPEATED, TOO_MANY_BOARDS,
                                      TOO_MANY_MOVES, search_bitmap)
from babytris.engine._drop cimport drop, smear_down, soft_moves, topped_out
from babytris.engine._given cimport OFFSETS_DIFFER, OUT_OF_RANGE, fill_at_offsets, take_boards, walk_levels
from babytris.engine._vec cimport Vec, vec_init, vec_reserve, vec_free

cdef board_t ONE = 1


cdef object vec_to_numpy(Vec* v, str fmt, dtype):
    """Give the buffer to a numpy array (which frees it); the Vec is emptied."""
    cdef void* p
    cdef view.array arr
    if v.size == 0:
        vec_free(v)
        return np.empty(0, dtype=dtype)
    p = realloc(v.data, v.size * v.itemsize)  # trim the growth slack
    if p != NULL:
        v.data = p
    arr = view.array(shape=(v.size,), itemsize=v.itemsize, format=fmt, mode="c", allocate_buffer=False)
    arr.data = <char*>v.data
    arr.callback_free_data = free
    v.data = NULL
    vec_init(v, v.itemsize)
    return np.asarray(arr)


# ---- The enumeration (the placement rule itself is in _drop.pxd).


cdef enum:
    # Boards whose moves are generated before their map lookups start: enough
    # lookups in flight to hide memory latency.
    BATCH = 32
    MOVE_BYTES = 4 + 1 + 2      # next board, rows cleared, placement number
    RANKS_BY_LAYER_CELLS = 27   # bitmaps this big number boards by layer without a permutation (4x7+)
    PASS_SLICE = BATCH * 8192   # boards the table's passes write between two looks for Ctrl-C (about 50 ms)


# Boards of up to this many cells may be indexed by a bitmap over every
# possible board (at 30 cells: 128 MiB of bits and 64 MiB of ranks, one per
# 64-bit word) instead of the hash map: a set bit is a reachable board, its
# index the number of set bits before it.  No hashing, no sort, and the bitmap
# of a 4x6 board (2 MiB) stays in cache.
BITMAP_MAX_CELLS = 30


cdef class Engine:
    """Placement tables for one rule set (built by ``babytris.engine.placements.engine``)."""

    cdef Geometry geo
    cdef readonly object masks, rows, first, mirror_rows, turns, tops
    cdef const uint16_t[::1] mr
    cdef const int32_t[::1] tv

    def __init__(self, int width, int height, masks, rows, first, *, bint clears_only=False, mirror_rows=None,
                 bint no_holes=False, bint top_out=False, turns=None):
        """``turns`` (int32 ``(n_placements, 4)``), if given, makes the moves
        soft (see :func:`soft_moves`): each placement's neighbour one column
        left, right, a quarter turn clockwise and counter-clockwise, among the
        same piece's placements (-1: none)."""
        if width < 1 or height < 1 or width * height > 64:
            raise ValueError(f"width * height must be in [1, 64], got {width} * {height}")
        self.masks = np.ascontiguousarray(masks, dtype=np.uint64)
        self.rows = np.ascontiguousarray(rows, dtype=np.uint8)
        self.first = np.ascontiguousarray(first, dtype=np.int32)
        cdef const board_t[::1] m = self.masks
        cdef const uint8_t[::1] r = self.rows
        cdef const int32_t[::1] f = self.first
        cdef Py_ssize_t k
        if m.shape[0] != r.shape[0] or f.shape[0] < 2 or f[f.shape[0] - 1] != m.shape[0]:
            raise ValueError("Engine: inconsistent placement tables")
        for k in range(m.shape[0]):
            if not 1 <= r[k] <= height or (r[k] * width < 64 and (m[k] >> (r[k] * width)) != 0):
                raise ValueError(f"Engine: placement {k} does not fit a {width}x{height} board")
        self.geo.width = width
        self.geo.height = height
        self.geo.n_pieces = f.shape[0] - 1
        self.geo.full_row = (ONE << width) - 1 if width < 64 else ~(<board_t>0)
        self.geo.mask = &m[0] if m.shape[0] else NULL
        # (rows[k] <= height: the shift stays below 64)
        self.tops = self.masks << ((height - self.rows.astype(np.uint64)) * np.uint64(width))
        cdef const board_t[::1] t = self.tops
        self.geo.top = &t[0] if t.shape[0] else NULL
        self.geo.rows = &r[0] if r.shape[0] else NULL
        self.geo.first = &f[0]
        self.geo.clears_only = clears_only
        if top_out and clears_only:
            raise ValueError("Engine: top_out and clears_only cannot be combined")
        self.geo.no_holes = no_holes
        self.geo.top_out = top_out
        self.geo.lost = self.geo.full_row << ((height - 1) * width)
        self.geo.mirror_row = NULL
        if mirror_rows is not None:
            if width > 16:
                raise ValueError(f"mirror_rows: boards up to 16 wide, got {width}")
            self.mirror_rows = np.ascontiguousarray(mirror_rows, dtype=np.uint16)
            if self.mirror_rows.shape != (1 << width,):
                raise ValueError(f"mirror_rows must have 2**width = {1 << width} entries")
            self.mr = self.mirror_rows
            self.geo.mirror_row = &self.mr[0]
        self.geo.soft = turns is not None
        self.geo.turns = NULL
        self.geo.max_moves = f[f.shape[0] - 1]
        if turns is not None:
            self.turns = np.ascontiguousarray(turns, dtype=np.int32).reshape(-1)
            self.tv = self.turns
            owner = np.repeat(np.arange(self.geo.n_pieces), 4 * np.diff(self.first))
            if self.tv.shape[0] != 4 * m.shape[0] or np.any(
                (self.turns != -1) & ((self.turns < self.first[owner]) | (self.turns >= self.first[owner + 1]))
            ):
                raise ValueError("turns: 4 neighbours per placement, each one of its piece's placements or -1")
            if (np.diff(self.first) * (height + 1)).max(initial=0) > MAX_POSITIONS:
                raise ValueError(f"soft moves: a piece with over {MAX_POSITIONS} positions")
            if self.tv.shape[0]:
                self.geo.turns = &self.tv[0]
            self.geo.max_moves = f[f.shape[0] - 1] * height

    @property
    def n_pieces(self):
        return self.geo.n_pieces

    def successors(self, board, int piece):
        """Legal moves of ``piece`` on ``board`` as ``[(placement, next_board, lines), ...]``."""
        if not 0 <= piece < self.geo.n_pieces:
            raise ValueError(f"piece must be in [0, {self.geo.n_pieces - 1}], got {piece}")
        cells = self.geo.width * self.geo.height
        if isinstance(board, bool) or not isinstance(board, (int, np.integer)) or not 0 <= board < 2**cells:
            raise ValueError(f"board must be an integer in [0, 2**{cells}), got {board!r}")
        cdef board_t b = board
        cdef board_t sm = smear_down(b, self.geo.width, self.geo.height)
        cdef board_t nb
        cdef int k, lines, n, j
        cdef board_t found[MAX_POSITIONS]
        cdef uint8_t cleared[MAX_POSITIONS]
        cdef uint16_t numbers[MAX_POSITIONS]
        out = []
        if self.geo.soft:
            n = soft_moves(&self.geo, b, piece, found, cleared, numbers)
            return [(numbers[j], found[j], cleared[j]) for j in range(n)]
        for k in range(self.geo.first[piece], self.geo.first[piece + 1]):
            if drop(&self.geo, b, sm, k, &nb, &lines):
                out.append((k - self.geo.first[piece], nb, lines))
        return out

    def enumerate(self, uint64_t start, size_t max_bytes, size_t bytes_per_board_after, int n_threads=1,
                  Py_ssize_t min_boards_per_thread=0, int bitmap_max_cells=BITMAP_MAX_CELLS,
                  const int64_t[::1] layer_of_residue=None, int64_t[::1] progress=None,
                  size_t placements_up_to=SIZE_MAX, int ranks_by_layer_cells=RANKS_BY_LAYER_CELLS,
                  const uint64_t[::1] given=None, const offset_t[::1] given_offsets=None):
        """Every board reachable from ``start`` and the move table, boards
        numbered by layer, then in ascending order.

        ``given`` (uint64: a table's boards, in any order, each on the
        board's cells), if given, takes the search's place: the table of
        these boards, ``start`` unused.  Status ``NOT_CLOSED`` (with the
        first board having a move to a board not given) or ``REPEATED``
        (with the board given twice) in place of ``n_boards_so_far``; whether
        every board is reachable from the start is the caller's to check.
        ``given_offsets`` (a saved table's offsets, with ``given`` listed in
        the table's order, hard drops): the moves are written at them in
        place of a count, each row checked to hold its state's moves exactly;
        status ``OFFSETS_DIFFER`` (with the first offset that is not the
        rules' own, and the rules' own there) where one does not.  Where the
        boards are not in the table's order they are not used (the moves are
        counted: compare the boards).

        ``progress`` (int64, length 2), if given, receives the boards found and
        the boards expanded so far while the search runs, for another thread to read.

        A board with c filled cells is in layer ``layer_of_residue[c % m]``
        (m its length; default: every board in layer 0).
        Returns ``(status, boards, layer_starts, offsets, next_board, lines,
        placement)``: ``boards`` (uint64), layer ``i`` being
        ``boards[layer_starts[i]:layer_starts[i + 1]]`` (int64), sorted
        ascending within it; ``offsets`` (int32,
        ``n_boards * n_pieces + 1``) delimit the moves of state
        ``board * n_pieces + piece``; per move the next board's index (int32),
        rows cleared (uint8) and placement number within the piece (uint16).
        ``status`` is 0, or on failure ``(code, n_boards_so_far, bytes)`` and
        the arrays are None (TOO_MANY_MOVES, over 2**31 - 1 moves: the moves
        in place of the bytes).  ``placement`` is None where the moves are
        more than ``placements_up_to`` (hard drops only: see
        ``_moves.dropped_placements``).  The layers cost 13 bytes per board more while
        the table is built (4 with a bitmap; none where it has ``ranks_by_layer_cells`` cells or more:
        ``_layers.bitmap_layered``).  Everything held, plus ``bytes_per_board_after``
        per board (what the caller allocates next), stays under ``max_bytes``.

        Three passes: a breadth-first search that finds the boards and counts
        their moves (marking them in a bitmap if the board has at most
        ``bitmap_max_cells`` cells, its wide stretches shared by up to
        ``n_threads`` threads; else in a hash map, then sorting); a count
        of each state's moves; then the moves, written in sorted order by up
        to ``n_threads`` threads, each with at least ``min_boards_per_thread``
        boards.  The result depends on none of these settings (only where a
        search stops for ``max_bytes`` may, with threads, vary a little).
        """
        cdef Geometry* g = &self.geo
        cdef int P = g.n_pieces
        cdef int cells = g.width * g.height
        cdef BoardMap table
        cdef Index ix
        cdef Vec boards
        cdef size_t n_moves = 0, peak = 0
        cdef int64_t total = 0
        cdef Py_ssize_t first = 0, n_sorted = 0
        cdef board_t named = 0
        cdef int status
        cdef bint at_offsets
        cdef offset_t[::1] offsets_view
        cdef const board_t[::1] sorted_view
        cdef uint64_t[::1] bits_view
        cdef int32_t[::1] rank_view
        cdef int32_t[::1] next_view
        cdef board_t[::1] room_view
        cdef uint8_t[::1] lines_view
        cdef uint16_t[::1] placement_view
        cdef size_t n_words = 0, i
        cdef const int32_t[::1] perm_view
        cdef int64_t* seen = NULL
        if progress is not None:
            if progress.shape[0] < 2:
                raise ValueError(f"progress must have 2 entries, got {progress.shape[0]}")
            seen = &progress[0]
        table.slots = NULL
        ix.table = &table
        ix.bits = NULL
        ix.rank = NULL
        ix.perm = NULL
        ix.same_layer = NULL
        if n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        if cells < 64 and start >> cells:
            raise ValueError(f"start must be a board in [0, 2**{cells}), got {start}")
        if given is not None and given.shape[0] and cells < 64 and int(np.max(given)) >> cells:
            raise ValueError(f"given: every board must be in [0, 2**{cells}), got {int(np.max(given))}")
        vec_init(&boards, sizeof(board_t))
        if cells <= min(bitmap_max_cells, BITMAP_MAX_CELLS):
            # The bitmap costs 12 bytes per 64 possible boards, reachable or
            # not: above 24 cells (24 MiB), only if that is an eighth of the
            # budget at most; a thin board with few reachable ones gets the map.
            n_words = ((<size_t>1 << cells) + 63) // 64
            if cells > 24 and 8 * n_words * (sizeof(uint64_t) + sizeof(int32_t)) > max_bytes:
                n_words = 0
        if n_words:
            bits = np.zeros(n_words, dtype=np.uint64)
            bits_view = bits
            populate_threads(&bits_view[0], n_words * sizeof(uint64_t), n_threads)  # (read, then set: one fault)
            room = np.empty(n_threads * search_room(g), dtype=np.uint64)   # each thread's moves of a batch
            room_view = room
        try:
            with nogil:
                if given is not None:
                    status = take_boards(g, &given[0] if given.shape[0] else NULL, given.shape[0],
                                         &bits_view[0] if n_words else NULL, &table, &boards, &named)
                elif n_words:
                    status = search_bitmap(g, expand_boards, start, &bits_view[0], &boards, &n_moves, max_bytes,
                                           n_words * (sizeof(uint64_t) + sizeof(int32_t))
                                           + n_threads * search_room(g) * sizeof(board_t),
                                           sizeof(board_t) + sizeof(offset_t) * P + bytes_per_board_after,
                                           MOVE_BYTES, &peak, seen, &room_view[0], search_room(g), n_threads)
                else:
                    status = discover(g, start, &table, &boards, &n_moves, max_bytes, bytes_per_board_after,
                                      &peak, seen)
            if status == OK and n_moves > INT32_MAX:  # (the table's offsets are int32)
                status = TOO_MANY_MOVES
            if status != OK:
                n = named if status == REPEATED or status == NOT_CLOSED else boards.size
                vec_free(&boards)
                return (status, n, peak if status != TOO_MANY_MOVES else n_moves), None, None, None, None, None, None
            if n_words:
                # The bitmap lists the boards in order: write them by layer over the search queue,
                # which holds as many (big ones with ranks per layer, no permutation to look up).
                sorted_boards = vec_to_numpy(&boards, "Q", np.uint64)
                layer_starts, rank, new_index, same_layer = bitmap_layered(
                    bits, sorted_boards, layer_of_residue, cells >= ranks_by_layer_cells)
                rank_view = rank
                ix.bits = &bits_view[0]
                ix.rank = &rank_view[0]
                if same_layer is not None:
                    use_layer_ranks(&ix, same_layer, layer_of_residue)
            else:
                sorted_boards = np.sort(vec_to_numpy(&boards, "Q", np.uint64), kind="quicksort")
                sorted_view = sorted_boards
                with nogil:
                    renumber(&table, sorted_view)
                sorted_boards, layer_starts, new_index = layered(sorted_boards, layer_of_residue)
            if new_index is not None:
                perm_view = new_index
                if n_words:
                    ix.perm = &perm_view[0]
                else:
                    with nogil:
                        for i in range(table.capacity):
                            if table.slots[i].value >= 0:
                                table.slots[i].value = perm_view[table.slots[i].value]
            if min_boards_per_thread > 0:
                n_threads = max(1, min(n_threads, sorted_boards.shape[0] // min_boards_per_thread))
            n_sorted = sorted_boards.shape[0]
            sorted_view = sorted_boards
            # (a saved table's offsets in place of the count: checked row by row as the moves are written)
            at_offsets = bool(given is not None and given_offsets is not None and not g.soft
                          and given_offsets.shape[0] == n_sorted * P + 1
                          and np.array_equal(sorted_boards, np.asarray(given)))
            if at_offsets and not (given_offsets[0] == 0
                                   and 0 <= given_offsets[n_sorted * P] <= <int64_t>n_sorted * g.max_moves):
                return other_offset(g, sorted_view, n_threads, given_offsets)
            if at_offsets:
                offsets = np.array(given_offsets, dtype=np.int32)
                offsets_view = offsets
                total = offsets_view[n_sorted * P]
            else:
                counted = counted_offsets(g, sorted_view, n_threads)
                if counted is None:
                    return (INTERRUPTED, n_sorted, 0), None, None, None, None, None, None
                offsets, total = counted
                offsets_view = offsets
            if given is not None:
                if total > INT32_MAX:
                    return (TOO_MANY_MOVES, sorted_boards.shape[0], total), None, None, None, None, None, None
                n_moves = total
            if <size_t>total != n_moves:
                raise AssertionError("enumeration: move counts disagree between passes")
            next_board, lines = np.empty(n_moves, dtype=np.int32), np.empty(n_moves, dtype=np.uint8)
            placement = np.empty(n_moves if g.soft or n_moves <= placements_up_to else 0, dtype=np.uint16)
            for array in (next_board, lines, placement):  # (all written below: mapped in one call each)
                populate_threads(<void*><size_t>array.ctypes.data, array.nbytes, n_threads)
            next_view = next_board
            lines_view = lines
            placement_view = placement
            first = 0
            with nogil:
                while first < n_sorted and status == OK:
                    if at_offsets:
                        status = fill_at_offsets(g, &ix, &sorted_view[0], &offsets_view[0], n_moves,
                                                 &next_view[0] if n_moves else NULL, &lines_view[0] if n_moves else NULL,
                                                 &placement_view[0] if placement_view.shape[0] else NULL,
                                                 n_threads, BATCH, first, min(first + PASS_SLICE, n_sorted))
                    else:
                        status = fill_moves(g, &ix, sorted_view, offsets_view, next_view, lines_view, placement_view,
                                            n_threads, given is not None, first, min(first + PASS_SLICE, n_sorted))
                    first += PASS_SLICE
                    if status == OK and first < n_sorted and interrupted():
                        status = INTERRUPTED
            if status == INTERRUPTED:
                return (status, n_sorted, 0), None, None, None, None, None, None
            if status == OFFSETS_DIFFER:
                return other_offset(g, sorted_view, n_threads, given_offsets)
            if status != OK:
                raise MemoryError("enumeration: cannot allocate the threads' buffers")
            if given is not None and n_moves and next_board.min() < 0:  # (a move out of the boards given)
                e = int(np.argmin(next_board))
                board = int(sorted_boards[(np.searchsorted(offsets, e, side="right") - 1) // P])
                return (NOT_CLOSED, board, 0), None, None, None, None, None, None
        finally:
            map_free(&table)
            vec_free(&boards)       # emptied already unless an error came first
        return OK, sorted_boards, layer_starts, offsets, next_board, lines, (
            placement if placement.shape[0] == n_moves else None)


cdef inline size_t search_room(const Geometry* g) noexcept nogil:
    """Boards of room each searching thread has for the moves of BATCH
    boards: a whole number of cache lines, and one more, so that no two
    threads write to one line."""
    return (BATCH * <size_t>g.max_moves + 1 + 7) // 8 * 8 + 8


cdef int expand_boards(const Geometry* g, const board_t* queue, size_t lo, size_t hi, uint64_t* bits,
                       Vec* found, board_t* room, size_t* moves) noexcept nogil:
    """Every move of boards ``queue[lo:hi]``: the boards not marked in
    ``bits`` yet are marked and appended to ``found``; ``moves`` grows by
    the moves made (``room``: :func:`search_room` boards).  Returns
    OUT_OF_MEMORY if ``found`` cannot grow, else OK."""
    cdef size_t bi, top, made = 0, n_next, j
    cdef int k, lines, p
    cdef board_t b, nb, sm
    cdef uint64_t bit
    cdef Vec mine = found[0]     # (a local copy: the threads' vectors share cache lines)
    cdef int status = OK
    while lo < hi and status == OK:
        # The moves of a batch of boards first, prefetching their words of
        # the bitmap; then the tests, with those loads in flight.
        top = lo + BATCH if hi - lo > BATCH else hi
        n_next = 0
        for bi in range(lo, top):
            b = queue[bi]
            sm = smear_down(b, g.width, g.height)
            if g.soft:
                for p in range(g.n_pieces):
                    n_next += soft_moves(g, b, p, room + n_next, NULL, NULL)
            else:
                for k in range(g.first[g.n_pieces]):
                    if drop(g, b, sm, k, &nb, &lines):
                        room[n_next] = nb
                        prefetch(&bits[nb >> 6])
                        n_next += 1
        made += n_next
        for j in range(n_next):
            nb = room[j]
            bit = ONE << (nb & 63)
            # (a plain load first: most moves lead to boards found already)
            if atomic_load(&bits[nb >> 6]) & bit or fetch_or(&bits[nb >> 6], bit) & bit:
                continue
            if vec_reserve(&mine, mine.size + 1) != 0:
                status = OUT_OF_MEMORY
                break
            (<board_t*>mine.data)[mine.size] = nb
            mine.size += 1
        lo = top
    found[0] = mine
    moves[0] += made
    return status


cdef int discover(const Geometry* g, board_t start, BoardMap* table, Vec* boards,
                  size_t* n_moves, size_t max_bytes, size_t bytes_per_board_after,
                  size_t* peak, int64_t* seen) noexcept nogil:
    """Pass 1: breadth-first search.  Fills ``table`` (board -> discovery
    number) and ``boards`` (discovery order), counts the moves; returns a status
    (``seen``, if not NULL: boards found and expanded so far, for a progress bar)."""
    cdef int P = g.n_pieces
    cdef size_t head = 0, hi, bi, n_buf, e, moves = 0, n_states, held, later
    cdef int p, k, lines, status = OK
    cdef board_t b, nb, sm
    cdef index_t j
    cdef board_t* buf = <board_t*>malloc(BATCH * <size_t>g.max_moves * sizeof(board_t) + 8)
    if buf == NULL or map_init(table, 1024) != 0 or vec_reserve(boards, 1024) != 0:
        free(buf)
        return OUT_OF_MEMORY
    (<board_t*>boards.data)[0] = start
    boards.size = 1
    map_get_or_insert(table, start, 0)
    while head < boards.size:
        hi = head + BATCH
        if hi > boards.size:
            hi = boards.size
        # Every move of the batch first, prefetching its map slot; then the
        # lookups, in the order one board at a time would make them.
        n_buf = 0
        for bi in range(head, hi):
            b = (<board_t*>boards.data)[bi]
            sm = smear_down(b, g.width, g.height)
            if g.soft:
                for p in range(P):
                    n_buf += soft_moves(g, b, p, buf + n_buf, NULL, NULL)
                continue
            for k in range(g.first[P]):
                if drop(g, b, sm, k, &nb, &lines):
                    buf[n_buf] = nb
                    prefetch(&table.slots[mix64(nb) & (table.capacity - 1)])
                    n_buf += 1
        for e in range(n_buf):
            j = map_get_or_insert(table, buf[e], <index_t>boards.size)
            if j == -2:
                status = OUT_OF_MEMORY
                break
            if j == <index_t>boards.size:
                if boards.size >= 2147483646:
                    status = TOO_MANY_BOARDS
                    break
                if vec_reserve(boards, boards.size + 1) != 0:
                    status = OUT_OF_MEMORY
                    break
                (<board_t*>boards.data)[boards.size] = buf[e]
                boards.size += 1
        moves += n_buf
        head = hi
        if seen != NULL:
            seen[0] = <int64_t>boards.size
            seen[1] = <int64_t>head
        if status == OK and head % 4096 < BATCH and interrupted():
            status = INTERRUPTED
        if status != OK:
            break
        # Budget: what is held now (with the map's next doubling), or what
        # will be held once the table is built, whichever is more.
        n_states = boards.size * P
        held = boards.capacity * sizeof(board_t) + 3 * table.capacity * sizeof(MapSlot)
        later = (boards.size * (sizeof(board_t) + bytes_per_board_after) + n_states * sizeof(int64_t)
                 + moves * MOVE_BYTES + table.capacity * sizeof(MapSlot))
        peak[0] = held if held > later else later
        if peak[0] > max_bytes:
            status = OVER_BUDGET
            break
    free(buf)
    n_moves[0] = moves
    return status


cdef tuple other_offset(const Geometry* g, const board_t[::1] boards, int n_threads,
                         const offset_t[::1] given_offsets):
    """The enumeration's answer where ``given_offsets`` are not the rules'
    own: ``((OFFSETS_DIFFER, the first that differs, the rules' own there),
    None, ...)``, the moves counted to find it (INTERRUPTED on Ctrl-C)."""
    counted = counted_offsets(g, boards, n_threads)
    if counted is None:
        return (INTERRUPTED, boards.shape[0], 0), None, None, None, None, None, None
    own = counted[0]  # (up to the first over INT32_MAX, which no int32 offset can equal)
    at = int(np.flatnonzero(own != np.asarray(given_offsets))[0])
    return (OFFSETS_DIFFER, at, int(own[at])), None, None, None, None, None, None


cdef object counted_offsets(const Geometry* g, const board_t[::1] boards, int n_threads):
    """The offsets of the moves of ``boards`` (int32, ``len(boards) *
    n_pieces + 1``), counted, and the moves' total (int64); where that is
    over ``INT32_MAX``, the offsets from the first over it are the states'
    counts, not summed.  None on Ctrl-C (asked between slices of PASS_SLICE
    boards)."""
    cdef Py_ssize_t n = boards.shape[0], first = 0
    cdef size_t i
    cdef int64_t total = 0
    cdef bint stopped = False
    offsets = np.zeros(n * g.n_pieces + 1, dtype=np.int32)
    populate_threads(<void*><size_t>offsets.ctypes.data, offsets.nbytes, n_threads)
    cdef offset_t[::1] view = offsets
    with nogil:
        while first < n and not stopped:
            count_moves(g, boards, view[1:], n_threads, first, min(first + PASS_SLICE, n))
            first += PASS_SLICE
            stopped = first < n and interrupted()
        if not stopped:
            for i in range(1, <size_t>view.shape[0]):  # (numpy's cumsum: 2-3x as long)
                total += view[i]
                if total > INT32_MAX:  # (given boards: the moves were not counted before)
                    break
                view[i] = <offset_t>total
    return None if stopped else (offsets, total)


cdef void count_moves(const Geometry* g, const board_t[::1] boards, offset_t[::1] counts,
                      int n_threads, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    """``counts[i * P + p]``: legal moves of piece p on ``boards[i]``, for i in [first, last)."""
    cdef Py_ssize_t i
    cdef int p, k, lines
    cdef int64_t c
    cdef board_t sm, nb
    for i in prange(first, last, num_threads=n_threads, schedule="static"):
        nb = 0          # assigned here so that each thread has its own
        lines = 0
        sm = smear_down(boards[i], g.width, g.height)
        for p in range(g.n_pieces):
            c = 0
            if g.soft:
                c = soft_moves(g, boards[i], p, NULL, NULL, NULL)
            elif g.top_out:
                # Every placement is a move, but none from the lost board.
                if not topped_out(g, boards[i]):
                    c = g.first[p + 1] - g.first[p]
            elif g.clears_only:
                for k in range(g.first[p], g.first[p + 1]):
                    if drop(g, boards[i], sm, k, &nb, &lines):
                        c = c + 1
            else:  # (a placement is a move if it fits at its highest position: no branch)
                for k in range(g.first[p], g.first[p + 1]):
                    c = c + ((g.top[k] & sm) == 0)
            counts[i * g.n_pieces + p] = c


cdef int fill_moves(const Geometry* g, const Index* ix, const board_t[::1] boards,
                    const offset_t[::1] offsets, int32_t[::1] next_board, uint8_t[::1] lines,
                    uint16_t[::1] placement, int n_threads, bint closed_only, Py_ssize_t first,
                    Py_ssize_t last) noexcept nogil:
    """Pass 3: every move of boards ``first:last`` (``first`` a multiple of
    BATCH), at its row; threads share the boards (placement numbers only if
    ``placement`` has room: hard drops may leave them to be dropped again
    when asked).  ``closed_only``: a move to a board not in the index gets
    -1 (given boards, which may not be closed).

    Returns -1 if the threads' buffers cannot be allocated."""
    cdef Py_ssize_t n = last, chunk, lo, hi, i
    cdef Py_ssize_t n_chunks = (n + BATCH - 1) // BATCH
    cdef size_t per_thread = BATCH * <size_t>g.max_moves
    cdef int P = g.n_pieces, p, k, n_lines
    cdef int64_t e, e0
    cdef board_t b, sm, nb
    cdef board_t* keys
    cdef uint8_t* lines_at = &lines[0] if lines.shape[0] else NULL
    cdef uint16_t* numbers_at = &placement[0] if placement.shape[0] else NULL
    cdef int c, j
    cdef board_t* all_keys = <board_t*>malloc(n_threads * per_thread * sizeof(board_t) + 8)
    if all_keys == NULL:
        return -1
    for chunk in prange(first // BATCH, n_chunks, num_threads=n_threads, schedule="dynamic", chunksize=16):
        keys = all_keys + threadid() * per_thread
        nb = 0          # assigned here so that each thread has its own
        n_lines = 0
        lo = chunk * BATCH
        hi = lo + BATCH
        if hi > n:
            hi = n
        # The chunk's moves first, prefetching the map slot of each next
        # board; then the lookups.
        e0 = offsets[lo * P]
        e = e0
        for i in range(lo, hi):
            b = boards[i]
            sm = smear_down(b, g.width, g.height)
            for p in range(P):
                if g.soft:
                    c = soft_moves(g, b, p, keys + (e - e0), lines_at + e, numbers_at + e)
                    for j in range(c):
                        prefetch(slot_of(ix, keys[e - e0 + j]))
                    e = e + c
                    continue
                for k in range(g.first[p], g.first[p + 1]):
                    if drop(g, b, sm, k, &nb, &n_lines):
                        keys[e - e0] = nb
                        lines[e] = <uint8_t>n_lines
                        if numbers_at != NULL:
                            numbers_at[e] = <uint16_t>(k - g.first[p])
                        prefetch(slot_of(ix, nb))
                        e += 1
        for e in range(e0, offsets[hi * P]):
            next_board[e] = index_of(ix, keys[e - e0]) if not closed_only or has_board(ix, keys[e - e0]) else -1
    free(all_keys)
    return 0


def first_unreached(const offset_t[::1] offsets, const int32_t[::1] next_board, int n_pieces, int32_t start):
    """The first board (by number) that no play from board ``start`` reaches
    in a move table (``offsets``: ``n_boards * n_pieces + 1``), or -1 where
    play reaches every one: what makes the table of given boards
    (``Engine.enumerate(given=...)``) the reachable one.

    Returns:
        int: a board number, or -1.

    Raises:
        ValueError: the arrays do not agree, or a row the walk reads holds
            an offset or a next board out of range.
        KeyboardInterrupt: on Ctrl-C (asked about every million boards)."""
    cdef Py_ssize_t P = n_pieces, n = (offsets.shape[0] - 1) // max(n_pieces, 1)
    cdef int status
    if P < 1 or offsets.shape[0] < 1 or offsets.shape[0] != n * P + 1 or not 0 <= start < max(n, 1):
        raise ValueError("first_unreached: offsets, n_pieces and start do not agree")
    if n == 0:
        return -1
    seen = np.zeros(3 * ((n + 63) // 64), dtype=np.uint64)  # (then the walk's two levels)
    cdef uint64_t[::1] marks = seen
    with nogil:
        status = walk_levels(&offsets[0], &next_board[0] if next_board.shape[0] else NULL, next_board.shape[0],
                             n, P, start, &marks[0])
    if status == INTERRUPTED:
        raise KeyboardInterrupt
    if status == OUT_OF_RANGE:
        raise ValueError("first_unreached: an offset or a next board out of range")
    unseen = np.flatnonzero(np.unpackbits(seen[: (n + 63) // 64].view(np.uint8), bitorder="little")[:n] == 0)
    return int(unseen[0]) if len(unseen) else -1


cdef const Geometry* engine_geometry(object engine) except NULL:
    """The geometry of an :class:`Engine` (which must outlive its use)."""
    if not isinstance(engine, Engine):
        raise TypeError(f"engine must be a babytris.engine._core.Engine, got {type(engine).__name__}")
    return &(<Engine>engine).geo


cdef board_t smeared_board(const Geometry* g, board_t board) noexcept nogil:
    return smear_down(board, g.width, g.height)


cdef bint drop_piece(const Geometry* g, board_t board, board_t smeared, int k, board_t* after,
                     int* lines) noexcept nogil:
    return drop(g, board, smeared, k, after, lines)
