"""Type stubs for the exact engine (babytris/_core.pyx)."""

from typing import Any

import numpy as np
import numpy.typing as npt

#: Boards with at most this many cells are indexed by a bitmap rather than the hash map.
BITMAP_MAX_CELLS: int

class Engine:
    """Placement tables for one rule set."""

    masks: npt.NDArray[np.uint64]
    rows: npt.NDArray[np.uint8]
    first: npt.NDArray[np.int32]
    turns: npt.NDArray[np.int32] | None
    def __init__(
        self,
        width: int,
        height: int,
        masks: npt.ArrayLike,
        rows: npt.ArrayLike,
        first: npt.ArrayLike,
        *,
        clears_only: bool = False,
        mirror_rows: npt.ArrayLike | None = None,
        no_holes: bool = False,
        top_out: bool = False,
        turns: npt.ArrayLike | None = None,
    ) -> None: ...
    @property
    def n_pieces(self) -> int: ...
    def successors(self, board: int, piece: int) -> list[tuple[int, int, int]]: ...
    def enumerate(
        self,
        start: int,
        max_bytes: int,
        bytes_per_board_after: int,
        n_threads: int = 1,
        min_boards_per_thread: int = 0,
        bitmap_max_cells: int = ...,
        layer_of_residue: npt.NDArray[np.int64] | None = None,
        progress: npt.NDArray[np.int64] | None = None,
        placements_up_to: int = ...,
        ranks_by_layer_cells: int = ...,
        given: npt.NDArray[np.uint64] | None = None,
    ) -> tuple[Any, ...]: ...

def first_unreached(
    offsets: npt.NDArray[np.int32], next_board: npt.NDArray[np.int32], n_pieces: int, start: int
) -> int: ...
