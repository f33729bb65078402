"""Type stubs for the compiled playouts and finite-horizon values (babytris/_play.pyx)."""

import numpy as np
import numpy.typing as npt

def game_seeds(seed: int, n: int) -> npt.NDArray[np.uint64]: ...
def play_games(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    lines: npt.NDArray[np.uint8],
    scores: npt.NDArray[np.float64],
    probabilities: npt.NDArray[np.float64],
    starts: npt.NDArray[np.int32],
    start_chances: npt.NDArray[np.float64],
    n_placements: int,
    seeds: npt.NDArray[np.uint64],
    pieces: npt.NDArray[np.int16] | None,
    rows: npt.NDArray[np.int16] | None,
    points: npt.NDArray[np.float64],
    placements: npt.NDArray[np.int64],
    n_threads: int = 1,
    chance: npt.NDArray[np.int32] | None = None,
    holds: npt.NDArray[np.uint8] | None = None,
) -> None: ...
def reachable_rows(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    n_pieces: int,
    starts: npt.NDArray[np.int64],
    can_come: npt.NDArray[np.uint8],
    pieces: npt.NDArray[np.int16] | None = None,
    rows: npt.NDArray[np.int16] | None = None,
) -> npt.NDArray[np.bool_]: ...
def horizon_values(
    ptr: npt.NDArray[np.int64],
    col: npt.NDArray[np.int32],
    weight: npt.NDArray[np.float64],
    reward: npt.NDArray[np.float64],
    n_steps: int,
    out: npt.NDArray[np.float64],
    lag: int = 0,
    tol: float = 0.0,
    patience: int = 3,
    n_threads: int = 1,
    groups: npt.NDArray[np.int64] | None = None,
) -> tuple[int, int, float]: ...
