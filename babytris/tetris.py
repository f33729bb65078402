"""Moved to :mod:`babytris.big.tetris` (the board) and :mod:`babytris.big.playouts`
(games on it); these names stay importable.

Import from ``babytris.big`` in new code.
"""

from .big.playouts import BoardSample, GreedyChoices, Playouts, greedy_placements, play_greedy, sample_boards
from .big.tetris import FEATURES, MAX_HEIGHT, MAX_WIDTH, MOVE_FEATURES, Afterstates, Tetris, feature_codes, n_threads

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
    "feature_codes",
    "n_threads",
]
