"""Moved to :mod:`babytris.big.fitted`; this name stays importable.

Import from ``babytris.big.fitted`` (or ``babytris.big``) in new code.
"""

from .big.fitted import (
    FittedValueIteration,
    LinearValue,
    Regret,
    fitted_value_iteration,
    greedy_policy,
    regret,
)
from .big.lookahead import LookaheadGames, lookahead_placement, play_lookahead

__all__ = [
    "LinearValue",
    "FittedValueIteration",
    "fitted_value_iteration",
    "greedy_policy",
    "regret",
    "Regret",
    "LookaheadGames",
    "lookahead_placement",
    "play_lookahead",
]
