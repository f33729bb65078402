"""Type stubs for a shard's moves and move table (babytris/modes/sharded/_shard.pyx)."""

import numpy as np
import numpy.typing as npt

from ...engine._core import Engine

def expand(
    engine: Engine, boards: npt.NDArray[np.uint64], n_threads: int = 1
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint64], npt.NDArray[np.uint8], npt.NDArray[np.uint16]]: ...
def table(
    engine: Engine,
    boards: npt.NDArray[np.uint64],
    words: npt.NDArray[np.uint64],
    before: npt.NDArray[np.int64],
    masks: npt.NDArray[np.uint64],
    layer_of_residue: npt.NDArray[np.int64],
    key_mask: int,
    owners: npt.NDArray[np.int16],
    n_shards: int,
    index: int,
    n_threads: int = 1,
    n_moves: int = -1,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.uint8], npt.NDArray[np.uint16]]: ...
def away_moves(
    engine: Engine, boards: npt.NDArray[np.uint64], offsets: npt.NDArray[np.int32], rows: npt.NDArray[np.int32]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]: ...
def listed(bits: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]: ...
def unmark(bits: npt.NDArray[np.uint64], boards: npt.NDArray[np.uint64]) -> None: ...
def live_by_layer(
    offsets: npt.NDArray[np.int32],
    boards: npt.NDArray[np.uint64],
    n_pieces: int,
    layer_of_residue: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]: ...
def listed_by_layer(
    bits: npt.NDArray[np.uint64], masks: npt.NDArray[np.uint64], residues: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
