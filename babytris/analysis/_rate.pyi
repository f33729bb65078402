"""Type stubs for the compiled kernels of the long-run rate (babytris/_rate.pyx)."""

import numpy as np
import numpy.typing as npt

def survival_kernel(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    n_pieces: int,
    rank: npt.NDArray[np.int32],
    n_threads: int = 1,
) -> int: ...
def restrict(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    lines: npt.NDArray[np.uint8],
    n_pieces: int,
    boards: npt.NDArray[np.int32],
    index: npt.NDArray[np.int32],
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.uint8], npt.NDArray[np.int16]]: ...
def relative_value_iteration(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    lines: npt.NDArray[np.uint8],
    scores: npt.NDArray[np.float64],
    probabilities: npt.NDArray[np.float64],
    worst: bool,
    tau: float,
    tol: float,
    max_iter: int,
    lower_seeds: npt.NDArray[np.int32],
    upper_start: int,
    reference: int,
    U: npt.NDArray[np.float64],
    delta: npt.NDArray[np.float64],
    rows: npt.NDArray[np.int16],
    pieces: npt.NDArray[np.int16],
    n_threads: int = 1,
) -> tuple[int, float, float]: ...
def reach(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    probabilities: npt.NDArray[np.float64],
    outside: npt.NDArray[np.int32],
    x_lo: npt.NDArray[np.float64],
    x_hi: npt.NDArray[np.float64],
    tol: float,
    max_iter: int,
    n_threads: int = 1,
) -> tuple[int, float]: ...
def fill_policy(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    n_pieces: int,
    rank: npt.NDArray[np.int32],
    chance: npt.NDArray[np.float64] | None,
    rows: npt.NDArray[np.int16],
    pieces: npt.NDArray[np.int16],
) -> None: ...
def reachable(
    offsets: npt.NDArray[np.int32],
    next_board: npt.NDArray[np.int32],
    n_pieces: int,
    expand: npt.NDArray[np.uint8],
    start: int,
) -> npt.NDArray[np.uint8]: ...
