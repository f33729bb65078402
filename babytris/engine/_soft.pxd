# Soft moves: every position a piece reaches from above the board by moving
# down, left, right and turning, inline.  _drop.pxd (soft_moves) settles the
# positions where it locks as it settles a hard drop.

from libc.stdint cimport uint8_t, int16_t, int32_t
from libc.string cimport memset

from babytris.engine._types cimport board_t


cdef enum:
    # Positions of one piece: at most 4 rotations x width columns x (height + 1)
    # rows, and width * (height + 1) <= 128 on a board of at most 64 cells.
    MAX_POSITIONS = 512


cdef inline bint free_at(const board_t* mask, int width, int height, board_t board, int k, int y) noexcept nogil:
    """Whether shape k fits with its bottom at row ``y`` (cells above the top row are free)."""
    return y >= height or not ((mask[k] << (y * width)) & board)


cdef inline void reach(const board_t* mask, const int32_t* turns, int width, int height, int k0, int n_k,
                       board_t board, uint8_t* seen) noexcept nogil:
    """Mark ``seen[(k - k0) * (height + 1) + y]`` for every position (shape k
    of ``k0 .. k0 + n_k - 1``, bottom row y) the piece reaches: it enters
    wholly above the board (row ``height``) in any shape, then steps to a
    free position one row down, or to ``turns[4 * k + d]`` at the same row
    (a column left or right, a quarter turn either way about the bounding
    box's bottom-left corner, no kicks; -1: none).  Breadth-first."""
    cdef int16_t queue[MAX_POSITIONS]
    cdef int stride = height + 1, head = 0, tail = 0, pos, k, y, d, nk, j
    memset(seen, 0, n_k * stride)
    for k in range(n_k):
        seen[k * stride + height] = 1
        queue[tail] = <int16_t>(k * stride + height)
        tail += 1
    while head < tail:
        pos = queue[head]
        head += 1
        k = pos // stride
        y = pos - k * stride
        if y > 0 and not seen[pos - 1] and free_at(mask, width, height, board, k0 + k, y - 1):
            seen[pos - 1] = 1
            queue[tail] = <int16_t>(pos - 1)
            tail += 1
        for d in range(4):
            nk = turns[4 * (k0 + k) + d]
            if nk >= 0:
                j = (nk - k0) * stride + y
                if not seen[j] and free_at(mask, width, height, board, nk, y):
                    seen[j] = 1
                    queue[tail] = <int16_t>j
                    tail += 1
