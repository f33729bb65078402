"""Type stubs for the compiled core (babytris/_core.pyx)."""

from typing import Any

import numpy as np
import numpy.typing as npt

#: Boards with at most this many cells are indexed by a bitmap rather than the hash map.
BITMAP_MAX_CELLS: int

class BoardIndex:
    """Board -> dense index lookups (open addressing, mixed keys)."""

    @staticmethod
    def from_boards(boards: npt.NDArray[np.uint64]) -> BoardIndex: ...
    def __len__(self) -> int: ...
    def get(self, board: int, default: int = -1) -> int: ...
    def __contains__(self, board: int) -> bool: ...
    def lookup(self, boards: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]: ...
    @property
    def nbytes(self) -> int: ...

class Engine:
    """Placement tables for one rule set."""

    masks: npt.NDArray[np.uint64]
    rows: npt.NDArray[np.uint8]
    first: npt.NDArray[np.int32]
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
    ) -> tuple[Any, ...]: ...

def popcounts(boards: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint8]: ...
def move_values(
    offsets: npt.NDArray[np.int64],
    next_board: npt.NDArray[np.int32],
    lines: npt.NDArray[np.uint8],
    per_state: npt.NDArray[np.float64],
    per_row: npt.NDArray[np.float64],
    per_lines: npt.NDArray[np.float64],
    final_rows: npt.NDArray[np.uint8] | None = None,
    final_value: float = 0.0,
) -> npt.NDArray[np.float64]: ...

class Sweeper:
    """In-place Bellman sweeps over a CSR move table (afterstate form)."""

    n_threads: int
    def __init__(
        self,
        offsets: npt.NDArray[np.int64],
        next_board: npt.NDArray[np.int32],
        lines: npt.NDArray[np.uint8],
        scores: npt.NDArray[np.float64],
        probs: npt.NDArray[np.float64],
        discount: float,
        V: npt.NDArray[np.float64],
        W: npt.NDArray[np.float64],
        policy: npt.NDArray[np.int16],
        order: npt.NDArray[np.int32],
        layer_starts: npt.NDArray[np.int64],
        *,
        pieces: int = 0,
        moves: int = 0,
        piece_choice: npt.NDArray[np.int16] | None = None,
        fixed_move: npt.NDArray[np.int16] | None = None,
        move_reward: npt.NDArray[np.float64] | None = None,
        independent_layers: bool = False,
        n_threads: int = 1,
        dead_value: float = 0.0,
    ) -> None: ...
    @property
    def n_live(self) -> int: ...
    def greedy_sweep(
        self,
        V_prev: npt.NDArray[np.float64] | None = None,
        W_prev: npt.NDArray[np.float64] | None = None,
    ) -> float: ...
    def evaluation_sweep(self, W_prev: npt.NDArray[np.float64] | None = None) -> float: ...
