# C-level declarations of the babytris core, shared by the .pyx and by any
# Cython code that wants to call the engine without Python objects.

from libc.stdint cimport uint64_t, int64_t, int32_t, uint8_t, uint16_t

ctypedef uint64_t board_t      # bit row * width + col, row 0 at the bottom
ctypedef int32_t index_t       # dense board index; -1 = none


cdef inline uint64_t mix64(uint64_t x) noexcept nogil:
    # splitmix64 finaliser: raw boards have structured low bits that would
    # cluster under a plain mask.
    x ^= x >> 30
    x *= <uint64_t>0xbf58476d1ce4e5b9ULL
    x ^= x >> 27
    x *= <uint64_t>0x94d049bb133111ebULL
    x ^= x >> 31
    return x


cdef struct MapSlot:
    board_t key
    index_t value              # -1 marks an empty slot (board 0 is a valid key)


cdef struct BoardMap:
    # Open addressing, linear probing, power-of-two capacity, load <= 7/10.
    MapSlot* slots
    size_t capacity
    size_t size


cdef struct Geometry:
    # One row per (piece, rotation, column): the cells at row 0 and how many
    # rows the shape spans.  Placements of piece p are [first[p], first[p+1]).
    int width
    int height
    int n_pieces
    board_t full_row           # the bits of row 0
    const board_t* mask
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


cdef int map_init(BoardMap* m, size_t expected) noexcept nogil
cdef void map_free(BoardMap* m) noexcept nogil
cdef index_t map_get(const BoardMap* m, board_t key) noexcept nogil
cdef index_t map_get_or_insert(BoardMap* m, board_t key, index_t value) noexcept nogil

