"""Type stubs for the lean shards' search and sweeps (babytris/modes/sharded/_lean_shard.pyx)."""

import numpy as np
import numpy.typing as npt

from ...engine._core import Engine

def mark(bits: npt.NDArray[np.uint64], todo: npt.NDArray[np.uint64], boards: npt.NDArray[np.uint64]) -> int: ...
def expand(
    engine: Engine,
    bits: npt.NDArray[np.uint64],
    todo: npt.NDArray[np.uint64],
    key_mask: int,
    owners: npt.NDArray[np.int16],
    n_shards: int,
    me: int,
) -> tuple[npt.NDArray[np.uint64], int, int]: ...

class LeanShardSweeper:
    bits: npt.NDArray[np.uint64]
    ranks: npt.NDArray[np.uint32]
    W: npt.NDArray[np.float64]
    kept: npt.NDArray[np.uint8]
    n_rows: int
    n_own: int
    n_words: int
    n_threads: int
    def __init__(
        self,
        engine: Engine,
        bits: npt.NDArray[np.uint64],
        scores: npt.NDArray[np.float64],
        probs: npt.NDArray[np.float64],
        discount: float,
        layer_of_residue: npt.NDArray[np.int64],
        key_mask: int,
        owners: npt.NDArray[np.int16],
        n_shards: int,
        me: int,
        *,
        combine: int = 0,
        n_threads: int = 1,
    ) -> None: ...
    def rows(self, boards: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]: ...
    def boards(self, own: bool) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]: ...
    def state_values(
        self, boards: npt.NDArray[np.uint64], slack: float = 0.0
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int16]]: ...
    def greedy_sweep(
        self,
        V_prev: npt.NDArray[np.float64] | None = None,
        changes: npt.NDArray[np.float32] | None = None,
        *,
        layer: int = -1,
    ) -> float: ...
    def evaluation_sweep(self, changes: npt.NDArray[np.float32] | None = None, *, layer: int = -1) -> float: ...
