"""Moved to :mod:`babytris.big.tetris`; this name stays importable.

Import from ``babytris.big.tetris`` (or ``babytris.big``) in new code.
"""

from .big.tetris import (
    FEATURES,
    MAX_HEIGHT,
    MAX_WIDTH,
    MOVE_FEATURES,
    Afterstates,
    BoardSample,
    GreedyChoices,
    Playouts,
    Tetris,
    greedy_placements,
    play_greedy,
    sample_boards,
)

__all__ = [
    "Afterstates",
    "BoardSample",
    "FEATURES",
    "GreedyChoices",
    "MAX_HEIGHT",
    "MAX_WIDTH",
    "MOVE_FEATURES",
    "Playouts",
    "Tetris",
    "greedy_placements",
    "play_greedy",
    "sample_boards",
]
