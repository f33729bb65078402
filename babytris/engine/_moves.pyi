"""Type stubs for the per-move arrays (babytris/_moves.pyx)."""

import numpy as np
import numpy.typing as npt

from babytris.engine._core import Engine

def move_values(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    lines: npt.NDArray[np.uint8],
    per_state: npt.NDArray[np.float64],
    per_row: npt.NDArray[np.float64],
    per_lines: npt.NDArray[np.float64],
    final_rows: npt.NDArray[np.uint8] | None = None,
    final_value: float = 0.0,
    states_per_entry: int = 1,
) -> npt.NDArray[np.float64]: ...
def placement_numbers(
    offsets: npt.NDArray[np.int32], placement: npt.NDArray[np.uint16], moves: npt.NDArray[np.int16]
) -> npt.NDArray[np.int16]: ...
def dropped_placements(
    engine: Engine,
    boards: npt.NDArray[np.uint64],
    offsets: npt.NDArray[np.int32],
    moves: npt.NDArray[np.int16] | None = None,
    n_threads: int = 1,
) -> npt.NDArray[np.uint16] | npt.NDArray[np.int16]: ...
def preview_moves(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    lines: npt.NDArray[np.uint8],
    placement: npt.NDArray[np.uint16],
    n_pieces: int,
    queues: int,
    n_threads: int = 1,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.uint8], npt.NDArray[np.uint16]]: ...
def placement_rows(
    offsets: npt.NDArray[np.int32],
    placement: npt.NDArray[np.uint16],
    policy: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int16],
) -> int: ...
