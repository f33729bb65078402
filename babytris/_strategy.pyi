"""Type stubs for the opponent's exact best response (babytris/_strategy.pyx)."""

import numpy as np
import numpy.typing as npt

from ._sweep import Sweeper

class OpponentResponse:
    """The piece the opponent gives on each live board of a Sweeper, improved by exact evaluations."""

    def __init__(self, sweeper: Sweeper) -> None: ...
    @staticmethod
    def bytes_per_board() -> int: ...
    @property
    def pieces(self) -> npt.NDArray[np.int16]: ...
    def start(self) -> None: ...
    def step(self, margin: float) -> int: ...

def chosen_pieces(
    values: npt.NDArray[np.float64], slack: float, least: bool, chances: npt.NDArray[np.float64] | None = None
) -> npt.NDArray[np.int16]: ...
