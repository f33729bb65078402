"""Type stubs for the greedy backups from given board values (babytris/_greedy.pyx)."""

import numpy as np
import numpy.typing as npt

def state_values(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    lines: npt.NDArray[np.uint8],
    scores: npt.NDArray[np.float64],
    W: npt.NDArray[np.float64],
    discount: float,
    V: npt.NDArray[np.float64],
    *,
    dead_value: float = 0.0,
    move_reward: npt.NDArray[np.float64] | None = None,
    policy: npt.NDArray[np.int16] | None = None,
    n_threads: int = 1,
) -> None: ...
def first_best_moves(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    lines: npt.NDArray[np.uint8],
    scores: npt.NDArray[np.float64],
    W: npt.NDArray[np.float64],
    discount: float,
    policy: npt.NDArray[np.int16],
    slack: float,
    *,
    move_reward: npt.NDArray[np.float64] | None = None,
    best: npt.NDArray[np.float64] | None = None,
    n_threads: int = 1,
) -> int: ...
def chosen_rows(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    lines: npt.NDArray[np.uint8],
    scores: npt.NDArray[np.float64],
    W: npt.NDArray[np.float64],
    discount: float,
    placement: npt.NDArray[np.uint16],
    policy: npt.NDArray[np.int16],
    hint: npt.NDArray[np.int16],
    best: npt.NDArray[np.float64],
    rows: npt.NDArray[np.int16],
    *,
    sure: float = 0.0,
    move_reward: npt.NDArray[np.float64] | None = None,
    n_threads: int = 1,
) -> tuple[int, float, int, int, int]: ...
