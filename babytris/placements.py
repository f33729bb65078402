"""The rules as the compiled engine's tables: every (piece, rotation, column)
placement, the engine built from them, mirror images and the lost board."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import _core
from .pieces import Placement
from .rules import Rules

__all__ = [
    "PlacementTable",
    "placement_table",
    "engine",
    "lost_board",
    "mirror_rows",
    "mirror_boards",
    "canonical_boards",
]


@dataclass(frozen=True)
class PlacementTable:
    """Every (piece, rotation, column) move as flat arrays, grouped by piece.

    ``masks[k]``: cells at row 0 (uint64); ``rows[k]``: rows spanned;
    ``first[p]:first[p+1]``: the moves of piece p (rotation-major).
    """

    masks: np.ndarray
    rows: np.ndarray
    first: np.ndarray
    placements: tuple[tuple[Placement, ...], ...]


@lru_cache(maxsize=64)
def placement_table(rules: Rules) -> PlacementTable:
    """The :class:`PlacementTable` of ``rules`` (cached)."""
    masks: list[int] = []
    rows: list[int] = []
    first = [0]
    placements = []
    for piece in rules.pieces:
        mine: list[Placement] = []
        for rotation, shape in enumerate(piece.orientations()):
            shape_width = 1 + max(x for x, _ in shape)
            shape_rows = 1 + max(y for _, y in shape)
            if shape_rows > rules.height:
                continue
            for column in range(rules.width - shape_width + 1):
                masks.append(sum(1 << (y * rules.width + x + column) for x, y in shape))
                rows.append(shape_rows)
                mine.append(Placement(piece.name, rotation, column, len(mine)))
        first.append(len(masks))
        placements.append(tuple(mine))
    return PlacementTable(
        np.array(masks, dtype=np.uint64),
        np.array(rows, dtype=np.uint8),
        np.array(first, dtype=np.int32),
        tuple(placements),
    )


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
