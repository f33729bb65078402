"""babytris: exact solutions of small Tetris-like games as Markov decision processes.

>>> import babytris
>>> solution = babytris.solve(width=4, height=4, discount=0.9)
>>> solution.n_boards
12978
"""

import sys as _sys


def _starting_the_cli() -> bool:
    """Whether this import is the start of the ``babytris`` command (its
    script, or ``python -m babytris``): Ctrl-C while the modules load then
    ends it as ``babytris.cli.main`` would, one line and exit status 130."""
    if _sys.argv and _sys.argv[0].replace("\\", "/").rsplit("/", 1)[-1] in ("babytris", "babytris.exe"):
        return True
    argv = getattr(_sys, "orig_argv", [])
    return "-m" in argv and argv.index("-m") + 1 < len(argv) and argv[argv.index("-m") + 1] == "babytris"


def _interrupted_while_loading(signum: int, frame: object) -> None:
    """The command's SIGINT handler while its modules load: one line, exit
    130 at once (a KeyboardInterrupt there could surface as an ImportError:
    numpy's C imports replace it), nothing to clean up yet."""
    import os

    os.write(2, b"babytris: interrupted\n")
    os._exit(130)  # babytris.cli.commands.EXIT_INTERRUPTED (not imported: it may be half loaded)


_loading_handler = False
if _starting_the_cli():
    import signal as _signal

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:  # (not where SIGINT is ignored)
        _signal.signal(_signal.SIGINT, _interrupted_while_loading)
        _loading_handler = True

try:
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
    from .engine.stepped import Game
    from .engine.transitions import Transitions
    from .files.lean import load_lean
    from .files.persist import SolutionFileError, load
    from .files.sharded import ShardedValues, load_sharded
    from .formats.export import explicit_model, to_drn, to_prism
    from .formats.interop import to_mdptoolbox, to_quantecon
    from .game.board import Board
    from .game.pieces import CATALOGUE, Piece, Placement
    from .game.rules import Rules, RulesError
    from .modes.lean import LeanSolution, solve_lean
    from .modes.sharded.distributed import LostWorkerError, ShardedSolve, solve_sharded
    from .results.solution import Solution
    from .solvers.match import Match
    from .solvers.minimize import Partition, minimize
    from .solvers.models import Model, block_drop, no_holes_tetris
    from .solvers.solve import solve, solve_transitions
    from .solvers.termination import GamesDoNotEnd
except KeyboardInterrupt:
    if not _starting_the_cli():
        raise
    print("babytris: interrupted", file=_sys.stderr)
    raise SystemExit(130) from None  # babytris.cli.commands.EXIT_INTERRUPTED (not imported: it may be half loaded)
# (The loading handler stays while the command's own modules load: babytris.cli.commands.main
# hands SIGINT back to Python's handler when it starts, and turns Ctrl-C into its one line.)

__all__ = [
    "Board",
    "CATALOGUE",
    "DEFAULT_MAX_MEMORY",
    "HorizonValues",
    "LeanSolution",
    "Match",
    "MemoryLimitError",
    "LostWorkerError",
    "Game",
    "GamesDoNotEnd",
    "SolutionFileError",
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
    "load_lean",
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
