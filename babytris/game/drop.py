"""Where a placement's piece comes to rest on a board, in plain Python, for
the pictures (``svg.board_picture``, ``babytris.draw``): the engine's drop is
``engine/_drop.pxd``'s ``drop``, and this one repeats it without the line
clear (the pictures show the piece landed, and strike through the rows it
fills).  The placements are numbered by :meth:`Piece.placed_shapes`, as the
engine numbers them.

>>> from babytris import Board, Placement
>>> sorted(landing(Board.from_rows(["....", "#...", "##.#"]), Placement("I", 1, 2, 4)))
[(2, 0), (2, 1), (2, 2)]
"""

from __future__ import annotations

from .board import Board
from .pieces import Placement
from .rules import Rules

__all__ = ["landing"]


def landing(board: Board, placement: Placement, rules: Rules | None = None) -> frozenset[tuple[int, int]]:
    """The cells where ``placement``'s piece comes to rest on ``board``.

    The piece falls from above the board, one row at a time, until the row
    below is blocked (so it cannot pass under an overhang), as the engine
    drops it; a soft placement (its ``row`` set, ``Rules(moves="soft")``)
    rests at its row instead.  Line clears are not applied.  ``rules``
    number the placements; default: the board's size with the placement's
    piece alone (catalogue pieces).

    Returns:
        frozenset of ``(col, row)`` cells, row 0 at the bottom.

    Raises:
        ValueError: for a board of another size than the rules, a placement
            that is not one of the rules' moves, or one that would come to
            rest with a cell above the top row (or, soft, on filled cells).
    """
    w, h = board.width, board.height
    if rules is None:
        moves = "hard" if placement.row is None else "soft"
        rules = Rules(width=w, height=h, pieces=(placement.piece,), moves=moves)
    if (w, h) != (rules.width, rules.height):
        raise ValueError(f"board is {w}x{h}, the rules are {rules.width}x{rules.height}")
    piece = rules.pieces[rules.piece_index(placement.piece)]
    shapes = piece.placed_shapes(w, h)
    soft = rules.moves == "soft"
    n, row = divmod(placement.index, h) if soft else (placement.index, None)
    if not (isinstance(placement.index, int) and 0 <= n < len(shapes)) or placement != Placement(
        piece.name, shapes[n][0], shapes[n][1], placement.index, row
    ):
        raise ValueError(
            f"placement {placement!r} is not a move of piece {placement.piece!r} on a "
            f"{w}x{h} board (its moves: indices 0-{len(shapes) * (h if soft else 1) - 1})"
        )
    _, column, shape = shapes[n]
    mask = sum(1 << (y * w + x + column) for x, y in shape)
    rows = 1 + max(y for _, y in shape)
    if row is not None:  # the piece locks where it was moved to
        y = row
        if y + rows <= h and (mask << (y * w)) & board.bits:
            raise ValueError(f"placement {placement!r} does not fit: the piece overlaps the board")
    else:
        y = h  # the piece's bottom row, starting wholly above the board
        while y > 0 and not (mask << ((y - 1) * w)) & board.bits:
            y -= 1
    if y + rows > h:
        raise ValueError(f"placement {placement!r} does not fit: the piece comes to rest above the top row")
    return frozenset((column + x, y + dy) for x, dy in shape)
