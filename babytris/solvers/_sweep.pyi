"""Type stubs for the Bellman sweeps (babytris/_sweep.pyx)."""

import numpy as np
import numpy.typing as npt

# How a board's value combines its pieces' values (who gives the next piece).
PIECES_RANDOM: int
PIECES_WORST: int
PIECES_BEST: int
PIECES_FIXED: int
# How a state's value combines its moves' values (how the player places).
MOVES_BEST: int
MOVES_MEAN: int
MOVES_FIXED: int

class Sweeper:
    """In-place Bellman sweeps over a CSR move table (afterstate form)."""

    n_threads: int
    def __init__(
        self,
        offsets: npt.NDArray[np.int32],
        next_board: npt.NDArray[np.int32],
        lines: npt.NDArray[np.uint8],
        scores: npt.NDArray[np.float64],
        probs: npt.NDArray[np.float64],
        discount: float,
        V: npt.NDArray[np.float64] | None,
        W: npt.NDArray[np.float64],
        policy: npt.NDArray[np.int16] | None,
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
        synchronous: bool = False,
        chance: npt.NDArray[np.int32] | None = None,
        chosen_room: npt.NDArray[np.uint8] | None = None,
    ) -> None: ...
    @property
    def n_live(self) -> int: ...
    def greedy_sweep(
        self,
        V_prev: npt.NDArray[np.float64] | None = None,
        W_prev: npt.NDArray[np.float64] | None = None,
        *,
        layer: int = -1,
    ) -> float: ...
    @property
    def synchronous(self) -> bool: ...
    def first_best_moves(self, slack: float) -> int: ...
    def cache_chosen_moves(self, room: npt.NDArray[np.uint8] | None = None) -> None: ...
    def record_least_pieces(self) -> None: ...
    least_noted: bool
    @property
    def generation(self) -> int: ...
    def evaluation_sweep(self, changes: npt.NDArray[np.float32] | None = None, *, layer: int = -1) -> float: ...
