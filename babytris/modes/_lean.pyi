import numpy as np
import numpy.typing as npt

MAX_CELLS: int
KEEP: dict[str, int]
MAX_KEPT_PLACEMENTS: int

class LeanTable:
    bits: npt.NDArray[np.uint64]
    ranks: npt.NDArray[np.uint32]
    n_boards: int
    n_words: int
    cells: int
    status: int
    passes: int
    def __init__(
        self,
        engine: object,
        start: int,
        max_boards: int,
        n_threads: int = 1,
        given: npt.NDArray[np.uint64] | None = None,
        from_start: bool = True,
    ) -> None: ...
    def index(self, boards: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]: ...
    def boards(self) -> npt.NDArray[np.uint64]: ...
    def state_values(
        self,
        boards: npt.NDArray[np.uint64],
        W: npt.NDArray[np.float64],
        scores: npt.NDArray[np.float64],
        discount: float,
        slack: float = 0.0,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int16]]: ...
    def greedy_steps(
        self,
        boards: npt.NDArray[np.uint64],
        W: npt.NDArray[np.float64],
        scores: npt.NDArray[np.float64],
        discount: float,
        slack: float = 0.0,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int16], npt.NDArray[np.uint64], npt.NDArray[np.uint8]]: ...

class LeanSweeper:
    n_threads: int
    keep: int
    kept_placements: npt.NDArray[np.uint8] | None
    kept_next: npt.NDArray[np.uint32] | None
    kept_lines: npt.NDArray[np.uint8] | None
    def __init__(
        self,
        table: LeanTable,
        W: npt.NDArray[np.float64],
        scores: npt.NDArray[np.float64],
        probs: npt.NDArray[np.float64],
        discount: float,
        layer_of_residue: npt.NDArray[np.int64],
        *,
        combine: int = 0,
        n_threads: int = 1,
        keep: str = "none",
        key_mask: int = 0,
        n_shards: int = 1,
        me: int = 0,
        owners: npt.NDArray[np.int16] | None = None,
    ) -> None: ...
    def greedy_sweep(
        self,
        V_prev: npt.NDArray[np.float64] | None = None,
        changes: npt.NDArray[np.float32] | None = None,
        *,
        layer: int = -1,
    ) -> float: ...
    def jump(self, step: float, changes: npt.NDArray[np.float32]) -> None: ...
    def bellman_residual(self) -> tuple[float, int]: ...
    def evaluation_sweep(self, changes: npt.NDArray[np.float32] | None = None, *, layer: int = -1) -> float: ...
