"""Type stubs for the compiled big-board engine (babytris/big/_engine.pyx)."""

import numpy as np
import numpy.typing as npt

#: The tallest board.
MAX_HEIGHT: int
#: The widest board.
MAX_WIDTH: int

class Engine:
    """Placement tables of one big-board game (built by ``babytris.big.tetris``)."""

    first: npt.NDArray[np.int32]
    column: npt.NDArray[np.int16]
    n_rows: npt.NDArray[np.int16]
    n_cols: npt.NDArray[np.int16]
    shape: npt.NDArray[np.uint16]
    bottom: npt.NDArray[np.int16]
    top: npt.NDArray[np.int16]
    cells: npt.NDArray[np.int16]
    col_cells: npt.NDArray[np.int16]
    inner_covers: npt.NDArray[np.int16]
    row_cells: npt.NDArray[np.uint8]
    row_transitions: npt.NDArray[np.uint8]
    row_wells: npt.NDArray[np.uint16]
    hole_base: npt.NDArray[np.int16]
    def __init__(
        self,
        width: int,
        height: int,
        first: npt.ArrayLike,
        column: npt.ArrayLike,
        n_rows: npt.ArrayLike,
        n_cols: npt.ArrayLike,
        shape: npt.ArrayLike,
        bottom: npt.ArrayLike,
        top: npt.ArrayLike,
    ) -> None: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def n_pieces(self) -> int: ...
    def successors(self, rows: npt.NDArray[np.uint16], piece: int) -> list[tuple[int, tuple[int, ...], int]]: ...
    def check_board(self, rows: npt.NDArray[np.uint16]) -> int: ...
    def afterstates_one(
        self, rows: npt.NDArray[np.uint16], piece: int
    ) -> tuple[
        npt.NDArray[np.int64],
        npt.NDArray[np.uint16],
        npt.NDArray[np.uint8],
        npt.NDArray[np.int16],
        npt.NDArray[np.int16],
        npt.NDArray[np.float64],
        npt.NDArray[np.int16],
    ]: ...
    def afterstates(
        self, rows: npt.NDArray[np.uint16], pieces: npt.NDArray[np.int16], n_threads: int = 1
    ) -> tuple[
        npt.NDArray[np.int64],
        npt.NDArray[np.uint16],
        npt.NDArray[np.uint8],
        npt.NDArray[np.int16],
        npt.NDArray[np.int16],
        npt.NDArray[np.float64],
        npt.NDArray[np.int16],
    ]: ...
    def features(
        self,
        rows: npt.NDArray[np.uint16],
        codes: npt.NDArray[np.int8],
        landing_height: npt.NDArray[np.float64] | None,
        eroded: npt.NDArray[np.int16] | None,
        out: npt.NDArray[np.float64],
        n_threads: int = 1,
    ) -> None: ...
    def greedy(
        self,
        rows: npt.NDArray[np.uint16],
        pieces: npt.NDArray[np.int16],
        codes: npt.NDArray[np.int8],
        weights: npt.NDArray[np.float64],
        line_reward: npt.NDArray[np.float64],
        discount: float,
        placement: npt.NDArray[np.int16],
        value: npt.NDArray[np.float64],
        n_threads: int = 1,
    ) -> None: ...
    def play(
        self,
        start: npt.NDArray[np.uint16],
        seeds: npt.NDArray[np.uint64],
        max_placements: int,
        probabilities: npt.NDArray[np.float64],
        scores: npt.NDArray[np.float64],
        codes: npt.NDArray[np.int8] | None,
        weights: npt.NDArray[np.float64] | None,
        line_reward: npt.NDArray[np.float64] | None,
        discount: float,
        epsilon: float,
        placements: npt.NDArray[np.int64],
        lines: npt.NDArray[np.int64],
        points: npt.NDArray[np.float64],
        n_threads: int = 1,
        random_ties: bool = False,
    ) -> None: ...
    def sample(
        self,
        start: npt.NDArray[np.uint16],
        seeds: npt.NDArray[np.uint64],
        max_placements: int,
        probabilities: npt.NDArray[np.float64],
        scores: npt.NDArray[np.float64],
        codes: npt.NDArray[np.int8] | None,
        weights: npt.NDArray[np.float64] | None,
        line_reward: npt.NDArray[np.float64] | None,
        discount: float,
        epsilon: float,
        n_threads: int = 1,
    ) -> list[tuple[npt.NDArray[np.uint16], npt.NDArray[np.int16]]]: ...
    def td_train(
        self,
        W1T: npt.NDArray[np.float64],
        b1: npt.NDArray[np.float64],
        w2: npt.NDArray[np.float64],
        b2: npt.NDArray[np.float64],
        rng_state: npt.NDArray[np.uint64],
        probabilities: npt.NDArray[np.float64],
        scores: npt.NDArray[np.float64] | None,
        rate: float,
        trace: float,
        discount: float,
        placement_reward: float,
        line_reward: float,
        game_over: float,
        explore: bool,
        max_placements: int,
        lines: npt.NDArray[np.int64],
        placements: npt.NDArray[np.int64],
        explored: npt.NDArray[np.int64],
        toward_best: bool = True,
        as_written: bool = True,
    ) -> None: ...
