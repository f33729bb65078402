# The geometry of one rule set, which every compiled module reading the
# placement rule shares: _core.pyx builds it (Engine), _drop.pxd places
# pieces by it, _search.pxd, _moves.pyx and the lean and sharded sweeps read it.

from libc.stdint cimport uint8_t, uint16_t, int32_t

from babytris.engine._types cimport board_t


cdef struct Geometry:
    # One row per (piece, rotation, column): the cells at row 0 and how many
    # rows the shape spans.  Placements of piece p are [first[p], first[p+1]).
    int width
    int height
    int n_pieces
    board_t full_row           # the bits of row 0
    const board_t* mask
    const board_t* top         # each mask at its highest position wholly on the board
    const uint8_t* rows
    const int32_t* first
    bint clears_only           # a placement that clears no row is no move (the combo objective)
    bint no_holes              # a landed piece fills every empty cell under it (boards are column heights)
    bint top_out               # a placement leaving a cell in the top row (after its clears), or one that
                               # would rest above it, leads to ``lost``, the board with its top row full,
                               # where nothing is a move; every other placement is a move
    board_t lost               # (top_out) the lost board
    const uint16_t* mirror_row # if not NULL, each row pattern reflected: boards become the lesser of
                               # themselves and their mirror image (width <= 16)
    bint soft                  # soft moves: a piece may move down, left, right and turn before it locks
    const int32_t* turns       # (soft) per placement: the placement one step left, right, clockwise,
                               # counter-clockwise at the same row (4 entries each; -1: none)
    int max_moves              # the most moves one board can have, over all pieces
