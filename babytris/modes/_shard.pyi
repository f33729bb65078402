"""Type stubs for the batch expansion of the sharded solve (babytris/_shard.pyx)."""

import numpy as np
import numpy.typing as npt

from ..engine._core import Engine

def expand(
    engine: Engine, boards: npt.NDArray[np.uint64], n_threads: int = 1
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint64], npt.NDArray[np.uint8], npt.NDArray[np.uint16]]: ...
