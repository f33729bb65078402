"""babytris: exact solutions of small Tetris-like games as Markov decision processes.

>>> import babytris
>>> solution = babytris.solve(width=4, height=4, discount=0.9)
>>> solution.n_boards
12978
"""

try:
    from .engine import _core  # noqa: F401  (fail here, clearly, on an unbuilt tree)
except ImportError as err:  # no silent fallback: the compiled core is the library
    raise ImportError(
        f"babytris's compiled core is missing from {__path__[0]}: this is an unbuilt source tree. "
        "Install with `pip install .` and import from outside the repository, or build in place "
        "with `python setup.py build_ext --inplace`."
    ) from err
from ._version import __version__
from .analysis.evaluate import PlayResult, evaluate, expected_points, play
from .analysis.horizon import HorizonValues, horizon_values
from .analysis.learning import PolicyRegret, policy_of, policy_regret
from .analysis.rate import Rate, long_run_rate
from .analysis.tournament import Tournament, standard_tournament, tournament
from .engine.enumeration import enumerate_boards
from .engine.resources import DEFAULT_MAX_MEMORY, MemoryLimitError
from .engine.reward import Reward
from .engine.transitions import Transitions
from .files.persist import load
from .formats.export import explicit_model, to_drn, to_prism
from .formats.interop import to_mdptoolbox, to_quantecon
from .game.board import Board
from .game.pieces import CATALOGUE, Piece, Placement
from .game.rules import Rules, RulesError
from .modes.distributed import ShardedSolve, ShardedValues, load_sharded, solve_sharded
from .modes.lean import LeanSolution, solve_lean
from .results.solution import Solution
from .solvers.match import Match
from .solvers.minimize import Partition, minimize
from .solvers.models import Model, block_drop, no_holes_tetris
from .solvers.solve import solve, solve_transitions

__all__ = [
    "Board",
    "CATALOGUE",
    "DEFAULT_MAX_MEMORY",
    "HorizonValues",
    "LeanSolution",
    "Match",
    "MemoryLimitError",
    "Model",
    "Partition",
    "Piece",
    "Placement",
    "PlayResult",
    "PolicyRegret",
    "Reward",
    "Rate",
    "Rules",
    "RulesError",
    "Solution",
    "Tournament",
    "Transitions",
    "enumerate_boards",
    "evaluate",
    "expected_points",
    "horizon_values",
    "load",
    "block_drop",
    "no_holes_tetris",
    "minimize",
    "long_run_rate",
    "play",
    "policy_of",
    "policy_regret",
    "solve",
    "solve_lean",
    "solve_sharded",
    "load_sharded",
    "ShardedSolve",
    "ShardedValues",
    "solve_transitions",
    "standard_tournament",
    "to_mdptoolbox",
    "to_quantecon",
    "to_drn",
    "to_prism",
    "explicit_model",
    "tournament",
    "__version__",
]
