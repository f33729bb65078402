"""Board features for approximate value functions, vectorised over many boards.

A board here is an array of row bitmasks: ``rows[..., r]`` holds row ``r``
(row 0 at the bottom), bit ``c`` its column ``c``; a stack of ``n`` boards
is an ``(n, height)`` unsigned array.  :func:`rows_from_bits` converts the
exact engine's packed boards.  Every function returns one value per board
(int64 ``(n,)``) unless stated otherwise.

The classic hand-made features of Tetris agents (Bodoia & Puranik; Dellacherie;
Thiery & Scherrer's survey) are here; :func:`feature_matrix` stacks a chosen
set into the ``(n, k)`` design matrix of a linear value function.

Dellacherie's six features (``landing_height``, ``eroded_cells``,
``row_transitions``, ``column_transitions``, ``holes``, ``wells``) are
defined as in Thiery & Scherrer's mdptetris (``src/feature_functions.c``),
so that weights ``(-1, 1, -1, -1, -4, -1)`` on them are Dellacherie's
controller.  Two variants that differ from those definitions keep names of
their own: ``well_runs`` and ``column_transitions_open_top``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "BOARD_FEATURES",
    "cells",
    "column_heights",
    "column_transitions",
    "column_transitions_open_top",
    "covers",
    "eroded_cells",
    "feature_matrix",
    "height_differences",
    "holes",
    "landing_height",
    "max_height",
    "row_transitions",
    "rows_from_bits",
    "well_runs",
    "wells",
]


def rows_from_bits(boards: np.ndarray, width: int, height: int) -> np.ndarray:
    """Packed boards (bit ``row * width + col``) as row bitmasks: uint32 ``(n, height)``."""
    _check_size(width, height)
    boards = np.asarray(boards, dtype=np.uint64).reshape(-1)
    shifts = (np.arange(height, dtype=np.uint64) * np.uint64(width))[None, :]
    return ((boards[:, None] >> shifts) & np.uint64((1 << width) - 1)).astype(np.uint32)


def cells(rows: np.ndarray, width: int) -> np.ndarray:
    """The filled cells: bool ``(n, height, width)``, ``[b, r, c]`` for row r, column c."""
    rows = _rows(rows, width)
    return ((rows[:, :, None] >> np.arange(width, dtype=np.uint32)) & 1).astype(bool)


def column_heights(rows: np.ndarray, width: int) -> np.ndarray:
    """Height of each column: its highest filled row, counted from 1 (0 if empty); int64 ``(n, width)``."""
    filled = cells(rows, width)
    height = filled.shape[1]
    top_down = filled[:, ::-1, :]
    return np.where(top_down.any(axis=1), height - top_down.argmax(axis=1), 0).astype(np.int64)


def max_height(rows: np.ndarray, width: int) -> np.ndarray:
    """Max-Height: the height of the tallest column."""
    rows = _rows(rows, width)
    occupied = rows != 0
    height = rows.shape[1]
    return np.where(occupied.any(axis=1), height - occupied[:, ::-1].argmax(axis=1), 0).astype(np.int64)


def holes(rows: np.ndarray, width: int) -> np.ndarray:
    """Num-Holes: empty cells with a filled cell higher up in their column."""
    return column_heights(rows, width).sum(axis=1) - cells(rows, width).sum(axis=(1, 2))


def covers(rows: np.ndarray, width: int) -> np.ndarray:
    """Num-Covers: filled cells with an empty cell lower down in their column."""
    filled = cells(rows, width)
    empty_below = np.logical_or.accumulate(~filled, axis=1)  # at or below each row
    empty_strictly_below = np.zeros_like(empty_below)
    empty_strictly_below[:, 1:, :] = empty_below[:, :-1, :]
    return (filled & empty_strictly_below).sum(axis=(1, 2)).astype(np.int64)


def height_differences(rows: np.ndarray, width: int) -> np.ndarray:
    """``|h[c + 1] - h[c]|`` of neighbouring column heights: int64 ``(n, width - 1)``."""
    return np.abs(np.diff(column_heights(rows, width), axis=1))


def _well_cells(filled: np.ndarray) -> np.ndarray:
    """Well cells: empty, with the left and right neighbours filled (walls count as filled)."""
    n, height, width = filled.shape
    walled = np.ones((n, height, width + 2), dtype=bool)
    walled[:, :, 1:-1] = filled
    return ~filled & walled[:, :, :-2] & walled[:, :, 2:]


def wells(rows: np.ndarray, width: int) -> np.ndarray:
    """Dellacherie's wells, as mdptetris computes them: each well cell (empty,
    its left and right neighbours filled, the walls counting as filled) below
    the top of the stack counts 1 plus the number of empty cells right under
    it in its column, down to the first filled cell.  A well of d cells on a
    filled bottom counts d + (d - 1) + ... + 1."""
    filled = cells(rows, width)
    n, height, _ = filled.shape
    well = _well_cells(filled)
    below_top = np.arange(height)[None, :] < max_height(rows, width)[:, None]  # (n, height)
    total = np.zeros(n, dtype=np.int64)
    empty_run = np.zeros((n, width), dtype=np.int64)  # empty cells right under the current row
    for r in range(height):
        total += np.where(well[:, r, :] & below_top[:, r, None], 1 + empty_run, 0).sum(axis=1)
        empty_run = np.where(filled[:, r, :], 0, empty_run + 1)
    return total


def well_runs(rows: np.ndarray, width: int) -> np.ndarray:
    """Runs of well cells (not Dellacherie's ``wells``): each empty cell whose
    left and right neighbours are filled (walls count as filled), weighted by
    its depth in its run of such cells from the top (a run of d counts
    1 + 2 + ... + d); empty cells under a run that are not well cells add nothing."""
    filled = cells(rows, width)
    n, height, _ = filled.shape
    well_cell = _well_cells(filled)
    total = np.zeros(n, dtype=np.int64)
    depth = np.zeros((n, width), dtype=np.int64)
    for r in range(height - 1, -1, -1):  # top down: a run of well cells deepens the well
        depth = np.where(well_cell[:, r, :], depth + 1, 0)
        total += depth.sum(axis=1)
    return total


def row_transitions(rows: np.ndarray, width: int) -> np.ndarray:
    """Changes between filled and empty along each row, the side walls filled, summed over rows."""
    filled = cells(rows, width)
    n, height, _ = filled.shape
    walled = np.ones((n, height, width + 2), dtype=bool)
    walled[:, :, 1:-1] = filled
    return (walled[:, :, 1:] != walled[:, :, :-1]).sum(axis=(1, 2)).astype(np.int64)


def column_transitions(rows: np.ndarray, width: int) -> np.ndarray:
    """Changes between filled and empty up each column, summed over columns,
    as mdptetris counts them: the floor filled, and an empty row above the
    stack, above the board too when the stack reaches its top row."""
    filled = cells(rows, width)
    n, height, _ = filled.shape
    framed = np.zeros((n, height + 2, width), dtype=bool)
    framed[:, 0, :] = True
    framed[:, 1:-1, :] = filled
    return (framed[:, 1:, :] != framed[:, :-1, :]).sum(axis=(1, 2)).astype(np.int64)


def column_transitions_open_top(rows: np.ndarray, width: int) -> np.ndarray:
    """:func:`column_transitions` with the top of the board open (not
    Dellacherie's): a filled cell in the top row makes no transition above it."""
    filled = cells(rows, width)
    n, height, _ = filled.shape
    floored = np.ones((n, height + 1, width), dtype=bool)
    floored[:, 1:, :] = filled
    return (floored[:, 1:, :] != floored[:, :-1, :]).sum(axis=(1, 2)).astype(np.int64)


def landing_height(piece_rows: np.ndarray) -> np.ndarray:
    """Landing height of a placed piece as mdptetris defines it: its bottom
    row (counted from 0) plus half its height less one, the mean of its
    lowest and highest rows, given the piece's cells where it landed as row
    bitmasks ``(n, height)``; float64 ``(n,)``."""
    piece_rows = np.asarray(piece_rows)
    occupied = piece_rows != 0
    height = piece_rows.shape[1]
    low = occupied.argmax(axis=1)
    high = height - 1 - occupied[:, ::-1].argmax(axis=1)
    return (low + high) / 2


def eroded_cells(placed_rows: np.ndarray, piece_rows: np.ndarray, width: int) -> np.ndarray:
    """Eroded piece cells: rows cleared by the placement times the piece's
    cells in them, from the board with the piece landed (before clearing)
    and the piece's cells, both ``(n, height)`` row bitmasks."""
    placed_rows = _rows(placed_rows, width)
    full = placed_rows == (1 << width) - 1
    in_full_rows = np.where(full, _popcount(np.asarray(piece_rows, dtype=np.uint32)), 0).sum(axis=1)
    return full.sum(axis=1) * in_full_rows


#: Features of a board alone, by name (each a function ``(rows, width) -> (n,)``).
BOARD_FEATURES = {
    "max_height": max_height,
    "holes": holes,
    "covers": covers,
    "bumpiness": lambda rows, width: height_differences(rows, width).sum(axis=1),
    "well_runs": well_runs,
    "row_transitions": row_transitions,
    "column_transitions_open_top": column_transitions_open_top,
    "filled": lambda rows, width: cells(rows, width).sum(axis=(1, 2)),
    "wells": wells,
    "column_transitions": column_transitions,
}


def feature_matrix(rows: np.ndarray, width: int, names: Sequence[str]) -> np.ndarray:
    """The design matrix of a linear value function: float64 ``(n, 1 + k)``,
    a constant 1 then the ``k`` named features (keys of :data:`BOARD_FEATURES`,
    or ``"heights"`` for the ``width`` column heights and ``"differences"``
    for the ``width - 1`` height differences)."""
    rows = _rows(rows, width)
    columns = [np.ones((rows.shape[0], 1))]
    for name in names:
        if name == "heights":
            columns.append(column_heights(rows, width))
        elif name == "differences":
            columns.append(height_differences(rows, width))
        elif name in BOARD_FEATURES:
            columns.append(BOARD_FEATURES[name](rows, width)[:, None])
        else:
            known = ", ".join([*BOARD_FEATURES, "heights", "differences"])
            raise ValueError(f"names: unknown feature {name!r}; known are {known}")
    return np.hstack(columns).astype(np.float64)


def _popcount(values: np.ndarray) -> np.ndarray:
    counts = np.zeros(values.shape, dtype=np.int64)
    for bit in range(32):
        counts += (values >> np.uint32(bit)) & 1
    return counts


def _rows(rows: np.ndarray, width: int) -> np.ndarray:
    rows = np.asarray(rows)
    if rows.ndim == 1:
        rows = rows[None, :]
    if rows.ndim != 2 or rows.dtype.kind not in "ui":
        raise ValueError(f"rows must be an integer array (n, height) of row bitmasks, got {rows.dtype} {rows.shape}")
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or not 1 <= width <= 32:
        raise ValueError(f"width must be an integer in [1, 32], got {width!r}")
    if rows.size and (rows.min() < 0 or rows.max() >= (1 << width)):
        raise ValueError(f"rows: every row must be a bitmask in [0, 2**{width})")
    return rows.astype(np.uint32, copy=False)


def _check_size(width: int, height: int) -> None:
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if width * height > 64:
        raise ValueError(f"width * height must be <= 64 for packed boards, got {width} * {height}")
