"""Type stubs for the boards' layers (babytris/_layers.pyx)."""

import numpy as np
import numpy.typing as npt

def layered(
    sorted_boards: npt.NDArray[np.uint64], layer_of_residue: npt.NDArray[np.int64] | None
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int32] | None]: ...
def bitmap_layered(
    bits: npt.NDArray[np.uint64],
    boards: npt.NDArray[np.uint64],
    layer_of_residue: npt.NDArray[np.int64] | None,
    by_layer: bool = False,
) -> tuple[
    npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int32] | None, npt.NDArray[np.uint64] | None
]: ...
def popcounts(boards: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint8]: ...
def live_boards(
    offsets: npt.NDArray[np.int32],
    n_pieces: int,
    layer_starts: npt.NDArray[np.int64],
    out: npt.NDArray[np.int32] | None = None,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]: ...
