# The placement rule, inline: hard drop, line clears, the mirror image and
# soft moves.  _core.pyx (the enumeration) and the lean sweeps inline it; the
# sharded expansion calls the copy _core.pxd exports (drop_piece), so the rule lives here once.

from libc.stdint cimport uint8_t, uint16_t

from babytris.engine._geometry cimport Geometry
from babytris.engine._soft cimport MAX_POSITIONS, free_at, reach
from babytris.engine._types cimport board_t


cdef inline board_t remove_row(board_t b, int row, int width) noexcept nogil:
    """Delete row ``row`` and shift the rows above it down by one."""
    cdef int lo_bits = row * width
    cdef int hi_bits = lo_bits + width
    cdef board_t low = b & (((<board_t>1) << lo_bits) - 1)
    cdef board_t high = 0
    if hi_bits < 64:
        high = (b >> hi_bits) << lo_bits
    return low | high


cdef inline board_t smear_down(board_t b, int width, int height) noexcept nogil:
    """Every cell at or below a filled cell of its column: where a piece
    falling from above cannot be, as it would have passed through a filled cell."""
    cdef int shift = width
    while shift < width * height:
        b |= b >> shift
        shift <<= 1
    return b


cdef inline board_t canonical(const Geometry* g, board_t b) noexcept nogil:
    """The lesser of ``b`` and its mirror image (row patterns reflected by table)."""
    cdef board_t image = 0
    cdef int r, w = g.width
    for r in range(g.height):
        image |= (<board_t>g.mirror_row[(b >> (r * w)) & g.full_row]) << (r * w)
    return image if image < b else b


cdef inline bint topped_out(const Geometry* g, board_t b) noexcept nogil:
    """Whether ``b`` has a filled cell in the top row."""
    return (b >> ((g.height - 1) * g.width)) != 0


cdef inline bint drop(const Geometry* g, board_t board, board_t smeared, int k,
                      board_t* after, int* lines) noexcept nogil:
    """Hard-drop placement k on ``board``, given ``smeared = smear_down(board)``.

    The piece falls from above the board, so it cannot pass under an
    overhang.  False if it comes to rest with a cell above the top row (or,
    with ``clears_only``, clears no row); otherwise writes the board after
    line clears and the rows cleared.  With ``no_holes`` the empty cells
    under the piece are filled before rows are cleared.  With ``top_out``
    a placement that would rest above the top row, or leaves a cell in the
    top row after its clears, is a move to ``g.lost`` clearing no row, and
    a board with a cell in the top row (the lost board) has no move.
    """
    cdef board_t m = g.mask[k]
    cdef int w = g.width
    cdef int y = g.height - g.rows[k]   # highest position wholly on the board
    if g.top_out and topped_out(g, board):
        return False
    if g.top[k] & smeared:
        if g.top_out:
            after[0] = g.lost
            lines[0] = 0
            return True
        return False
    # The positions where the piece meets ``smeared`` are those below where it
    # rests (smeared is closed downwards): count them, without a branch.
    cdef int below = 0, j
    for j in range(y):
        below += ((m << (j * w)) & smeared) != 0
    return settle(g, board, k, below, after, lines)


cdef inline bint settle(const Geometry* g, board_t board, int k, int y, board_t* after, int* lines) noexcept nogil:
    """Lock placement k with its bottom at row ``y`` (a free position where
    it cannot move down): the board after line clears and the rows cleared,
    as :func:`drop` describes; False if it is no move.  A piece locked with a
    cell above the top row is no move (with ``top_out``: a move to ``g.lost``)."""
    cdef board_t m = g.mask[k]
    cdef int w = g.width
    cdef int r, n = 0, lowest
    cdef board_t b, full
    if y + g.rows[k] > g.height:
        if g.top_out:
            after[0] = g.lost
            lines[0] = 0
            return True
        return False
    b = board | (m << (y * w))
    lowest = y
    if g.no_holes:
        # Filling under the piece can complete rows below it too.
        b = smear_down(b, w, g.height)
        lowest = 0
    # Top row first, so the rows still to check keep their numbers.
    for r in range(y + g.rows[k] - 1, lowest - 1, -1):
        full = g.full_row << (r * w)
        if (b & full) == full:
            b = remove_row(b, r, w)
            n += 1
    if n == 0 and g.clears_only:
        return False
    if g.top_out and topped_out(g, b):
        after[0] = g.lost
        lines[0] = 0
        return True
    if g.mirror_row != NULL:
        b = canonical(g, b)
    after[0] = b
    lines[0] = n
    return True


cdef inline int soft_moves(const Geometry* g, board_t board, int p, board_t* after, uint8_t* lines,
                    uint16_t* numbers) noexcept nogil:
    """The moves of piece p on ``board`` with soft moves; returns how many.

    Every position the piece reaches (:func:`babytris.engine._soft.reach`) where it
    cannot move down is settled as a hard drop is (:func:`settle`); each
    distinct (board after, rows cleared) is one move, numbered ``(k -
    first[p]) * height + row`` by its first lock position in that order.
    Writes each move to ``after``, ``lines``, ``numbers`` (each may be NULL).
    """
    cdef int h = g.height, k0 = g.first[p], n_k = g.first[p + 1] - g.first[p], stride = g.height + 1
    cdef uint8_t seen[MAX_POSITIONS]
    cdef board_t found[MAX_POSITIONS]
    cdef uint8_t found_lines[MAX_POSITIONS]
    cdef int n = 0, k, y, j, n_lines = 0
    cdef bint fresh
    cdef board_t nb = 0
    if g.top_out and topped_out(g, board):
        return 0
    reach(g.mask, g.turns, g.width, h, k0, n_k, board, seen)
    for k in range(n_k):
        for y in range(h):
            if not seen[k * stride + y] or (y > 0 and free_at(g.mask, g.width, h, board, k0 + k, y - 1)):
                continue
            if not settle(g, board, k0 + k, y, &nb, &n_lines):
                continue
            fresh = True
            for j in range(n):
                if found[j] == nb and found_lines[j] == n_lines:
                    fresh = False
                    break
            if not fresh:
                continue
            found[n] = nb
            found_lines[n] = <uint8_t>n_lines
            if after != NULL:
                after[n] = nb
            if lines != NULL:
                lines[n] = <uint8_t>n_lines
            if numbers != NULL:
                numbers[n] = <uint16_t>(k * h + y)
            n += 1
    return n
