"""Big boards: Tetris on boards up to 16 wide and of any height (up to 1,024 rows),
far past what the exact solvers can enumerate.

A compiled engine (boards as rows of bitmasks) plays games and lists
afterstates (:mod:`babytris.big.tetris`); board features are computed in
numpy and, without the GIL, in the engine (:mod:`babytris.big.features`);
values are approximated by fitted value iteration over linear features
(:mod:`babytris.big.fitted`) or learned by TD(lambda) with a small network
(:mod:`babytris.big.td`), and a fitted value plays with look-ahead over
previewed pieces (:mod:`babytris.big.lookahead`).  Fitted value iteration
and TD(lambda) also run on an enumerated Baby Tetris table, where the exact
solution measures what they lose (:func:`regret`).

This package imports only public names of the rest of babytris, and of the
rest only the claims and the analysis board's estimates (``babytris.board.estimates``) import it.
"""

from .features import BOARD_FEATURES, feature_matrix, rows_from_bits
from .fitted import (
    FittedValueIteration,
    LinearValue,
    Regret,
    fitted_value_iteration,
    greedy_policy,
    regret,
)
from .games import BigGame, ExactGame, game_model
from .lookahead import LookaheadGames, lookahead_placement, play_lookahead
from .playouts import BoardSample, GreedyChoices, Playouts, greedy_placements, play_greedy, sample_boards
from .td import TDResult, ValueNetwork, td_lambda
from .tetris import FEATURES, MAX_HEIGHT, MAX_WIDTH, MOVE_FEATURES, Afterstates, Tetris

__all__ = [
    # the engine and its playouts
    "Tetris",
    "Afterstates",
    "GreedyChoices",
    "Playouts",
    "BoardSample",
    "greedy_placements",
    "play_greedy",
    "sample_boards",
    "FEATURES",
    "MOVE_FEATURES",
    "MAX_WIDTH",
    "MAX_HEIGHT",
    # features
    "BOARD_FEATURES",
    "feature_matrix",
    "rows_from_bits",
    # fitted value iteration
    "LinearValue",
    "FittedValueIteration",
    "fitted_value_iteration",
    "greedy_policy",
    "regret",
    "Regret",
    # the games they learn on
    "ExactGame",
    "BigGame",
    "game_model",
    # look-ahead play
    "LookaheadGames",
    "lookahead_placement",
    "play_lookahead",
    # TD(lambda)
    "ValueNetwork",
    "TDResult",
    "td_lambda",
]
