"""babytris: exact solutions of small Tetris-like games as Markov decision processes.

>>> import babytris
>>> solution = babytris.solve(width=4, height=4, discount=0.9)
>>> solution.n_boards
12978
"""

from . import _core
from .board import Board
from .pieces import CATALOGUE, Piece, Placement
from .rules import Rules, RulesError
from .solution import Solution
from .solve import solve, solve_transitions
from .states import DEFAULT_MAX_MEMORY, MemoryLimitError, Transitions, enumerate_boards

__version__ = "0.1.0"

__all__ = [
    "Board",
    "CATALOGUE",
    "DEFAULT_MAX_MEMORY",
    "MemoryLimitError",
    "Piece",
    "Placement",
    "Rules",
    "RulesError",
    "Solution",
    "Transitions",
    "enumerate_boards",
    "solve",
    "solve_transitions",
    "__version__",
]
