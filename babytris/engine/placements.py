"""The rules as the compiled engine's tables: every (piece, rotation, column)
placement, the engine built from them, mirror images and the lost board."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from ..game.pieces import Placement
from ..game.rules import Rules
from . import _core

__all__ = [
    "PlacementTable",
    "placement_table",
    "most_moves",
    "engine",
    "lost_board",
    "mirror_rows",
    "mirror_boards",
    "canonical_boards",
]


@dataclass(frozen=True)
class PlacementTable:
    """Every (piece, rotation, column) shape as flat arrays, grouped by piece,
    and every placement number of each piece.

    ``masks[k]``: cells at row 0 (uint64); ``rows[k]``: rows spanned;
    ``first[p]:first[p+1]``: the shapes of piece p (rotation-major).
    ``placements[p][number]``: the :class:`Placement` of each number of piece
    p: one per shape with hard drops, one per (shape, row) with soft moves
    (``number = (k - first[p]) * height + row``); ``number_first[p]``: the
    numbers of the pieces before p (the numbering over all pieces that hold
    uses).  With soft moves, ``turns[k]`` (int32 ``(4,)``): the shape one
    column left, right, turned clockwise, counter-clockwise (-1: none).
    """

    masks: np.ndarray
    rows: np.ndarray
    first: np.ndarray
    placements: tuple[tuple[Placement, ...], ...]
    number_first: np.ndarray
    height: int
    turns: np.ndarray | None = None

    @property
    def soft(self) -> bool:
        """Whether the moves are soft (numbers count (shape, row) pairs)."""
        return self.turns is not None

    def shapes(self, piece: npt.ArrayLike, number: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """``(k, row)`` of placement ``number`` of ``piece`` (arrays alike):
        the shape's index into ``masks`` and the row it locks at (-1 with
        hard drops: where the drop takes it)."""
        piece, number = np.asarray(piece, dtype=np.int64), np.asarray(number, dtype=np.int64)
        if not self.soft:
            return self.first[piece] + number, np.full(number.shape, -1, dtype=np.int64)
        return self.first[piece] + number // self.height, number % self.height


@lru_cache(maxsize=64)
def placement_table(rules: Rules) -> PlacementTable:
    """The :class:`PlacementTable` of ``rules`` (cached)."""
    masks: list[int] = []
    rows: list[int] = []
    first = [0]
    placements = []
    turns: list[list[int]] = []
    soft = rules.moves == "soft"
    for piece in rules.pieces:
        mine: list[Placement] = []
        where: dict[tuple[int, int], int] = {}  # (rotation, column) -> shape index
        spun = piece.orientations()
        for rotation, column, shape in piece.placed_shapes(rules.width, rules.height):
            where[rotation, column] = len(masks)
            masks.append(sum(1 << (y * rules.width + x + column) for x, y in shape))
            rows.append(1 + max(y for _, y in shape))
            if soft:
                n = len(mine) // rules.height
                mine.extend(
                    Placement(piece.name, rotation, column, n * rules.height + row, row) for row in range(rules.height)
                )
            else:
                mine.append(Placement(piece.name, rotation, column, len(mine)))
        for rotation, column in where:
            # Neighbours in the soft moves: a column left or right; a quarter
            # turn either way about the bounding box's bottom-left corner.
            r = len(spun)
            steps = [(rotation, column - 1), (rotation, column + 1)]
            steps += [((rotation + 1) % r, column), ((rotation - 1) % r, column)]
            turns.append([where.get(step, -1) if step != (rotation, column) else -1 for step in steps])
        first.append(len(masks))
        placements.append(tuple(mine))
    return PlacementTable(
        np.array(masks, dtype=np.uint64),
        np.array(rows, dtype=np.uint8),
        np.array(first, dtype=np.int32),
        tuple(placements),
        np.cumsum([0] + [len(mine) for mine in placements]).astype(np.int32),
        rules.height,
        np.array(turns, dtype=np.int32).reshape(-1, 4) if soft else None,
    )


def most_moves(rules: Rules) -> int:
    """The most moves one board can have, over all pieces: one per placement
    number (with soft moves, a shape can lock at any row)."""
    return int(placement_table(rules).number_first[-1])


@lru_cache(maxsize=64)
def engine(rules: Rules) -> _core.Engine:
    """The compiled placement engine for ``rules`` (cached)."""
    t = placement_table(rules)
    return _core.Engine(
        rules.width,
        rules.height,
        t.masks,
        t.rows,
        t.first,
        clears_only=rules.objective == "combo",
        mirror_rows=mirror_rows(rules.width) if rules.mirror else None,
        no_holes=rules.no_holes,
        top_out=rules.top_out,
        turns=t.turns,
    )


def lost_board(rules: Rules) -> int:
    """The board a placement that tops out leads to (``rules.top_out``): the
    top row full, which no other board has; nothing is a move on it."""
    return ((1 << rules.width) - 1) << ((rules.height - 1) * rules.width)


def mirror_rows(width: int) -> np.ndarray:
    """uint16 array ``(2**width,)``: each row pattern reflected left-right."""
    rows = np.arange(1 << width, dtype=np.int64)
    out = np.zeros_like(rows)
    for col in range(width):
        out |= ((rows >> col) & 1) << (width - 1 - col)
    return out.astype(np.uint16)


def mirror_boards(boards: np.ndarray, width: int, height: int) -> np.ndarray:
    """Each board of a uint64 array reflected left-right."""
    boards = np.asarray(boards, dtype=np.uint64)
    table = mirror_rows(width).astype(np.uint64)
    row = np.uint64((1 << width) - 1)
    out = np.zeros_like(boards)
    for r in range(height):
        shift = np.uint64(r * width)
        out |= table[((boards >> shift) & row).astype(np.int64)] << shift
    return out


def canonical_boards(boards: np.ndarray, rules: Rules) -> np.ndarray:
    """Each board, or its mirror image where that is less (``rules.mirror``); as is otherwise."""
    boards = np.asarray(boards, dtype=np.uint64)
    if not rules.mirror:
        return boards
    return np.minimum(boards, mirror_boards(boards, rules.width, rules.height))
