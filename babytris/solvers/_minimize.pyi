"""Type stubs for the refinement step of the state minimization (babytris/_minimize.pyx)."""

import numpy as np
import numpy.typing as npt

def relabel(
    starts: npt.NDArray[np.int32] | npt.NDArray[np.int64],
    codes: npt.NDArray[np.int64],
    previous: npt.NDArray[np.int64],
    as_set: bool = False,
) -> tuple[npt.NDArray[np.int64], int]: ...
