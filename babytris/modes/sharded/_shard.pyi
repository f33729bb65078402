"""Type stubs for the batch expansion of the sharded solve (babytris/modes/sharded/_shard.pyx)."""

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
    key_mask: int,
    owners: npt.NDArray[np.int16],
    n_shards: int,
    index: int,
    n_threads: int = 1,
) -> tuple[
    npt.NDArray[np.int32], npt.NDArray[np.uint64], npt.NDArray[np.int32], npt.NDArray[np.uint8], npt.NDArray[np.uint16]
]: ...
def first_seen(boards: npt.NDArray[np.uint64], bits: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]: ...
def listed(bits: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]: ...
