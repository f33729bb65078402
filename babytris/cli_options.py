"""The options several ``babytris`` commands share: output (``--json``,
``--quiet``), the board, the rules and the solver."""

from __future__ import annotations

import argparse

from .resources import DEFAULT_MAX_MEMORY
from .roles import OPPONENT_MODELS
from .rules import MOVES, RANDOMIZERS

__all__ = ["output_arguments", "board_arguments", "rule_arguments", "rule_fields", "solver_arguments"]

JSON_OBJECT = "print one JSON object instead of text"


def output_arguments(parser: argparse.ArgumentParser, json_help: str = JSON_OBJECT) -> None:
    """``--json`` (saying what it prints) or ``-q``/``--quiet``."""
    quiet_or_json = parser.add_mutually_exclusive_group()
    quiet_or_json.add_argument("--json", action="store_true", help=json_help)
    quiet_or_json.add_argument("-q", "--quiet", action="store_true", help="print nothing (the exit status tells)")


def board_arguments(parser: argparse.ArgumentParser) -> None:
    """``--width`` and ``--height``, defaulting, in every command, to the Rules' own 4x4."""
    parser.add_argument("--width", type=int, default=4, help="board columns (default 4)")
    parser.add_argument("--height", type=int, default=4, help="board rows (default 4); width * height <= 64")


def rule_arguments(parser: argparse.ArgumentParser) -> None:
    """``--preview``, ``--hold``, ``--hold-start``, ``--moves``, ``--randomizer``,
    ``--bag-copies`` and ``--pieces``."""
    parser.add_argument("--preview", type=int, default=0, help="pieces the player sees ahead (default 0)")
    parser.add_argument("--hold", action="store_true", help="the player may hold a piece")
    parser.add_argument(
        "--hold-start",
        choices=("empty", "drawn"),
        default="empty",
        help="with --hold: the slot starts empty (default), or drawn: filled by the first piece, as in c4w",
    )
    parser.add_argument(
        "--moves",
        choices=MOVES,
        default="hard",
        help="hard: pieces hard-drop from above (default, Baby Tetris); soft: they may also move down, "
        "left, right and turn on the board before they lock (tucks under overhangs)",
    )
    parser.add_argument(
        "--randomizer",
        choices=RANDOMIZERS,
        default="iid",
        help="iid: each piece drawn independently (default); bag: dealt from a shuffled bag of every piece, "
        "refilled when empty (what is left in it is part of the state)",
    )
    parser.add_argument(
        "--bag-copies",
        type=int,
        default=1,
        help="with --randomizer bag: copies of each piece in a bag (default 1)",
    )
    parser.add_argument(
        "--pieces",
        nargs="+",
        default=["trominoes"],
        help="piece names or groups: I L I4 O T S Z J L4, trominoes, tetrominoes (default trominoes)",
    )


def rule_fields(args: argparse.Namespace) -> dict:
    """The ``Rules`` fields :func:`rule_arguments` parsed, as keywords."""
    names = ("pieces", "preview", "hold", "hold_start", "moves", "randomizer", "bag_copies")
    return {name: getattr(args, name) for name in names}


def solver_arguments(parser: argparse.ArgumentParser) -> None:
    """``--discount``, ``--tol``, ``--max-iter``, ``--opponent``, ``--method``, ``--max-memory`` and ``--jobs``."""
    parser.add_argument("--discount", type=float, default=0.9, help="discount factor in [0, 1) (default 0.9)")
    parser.add_argument("--tol", type=float, default=1e-8, help="stop when no value changes more (default 1e-8)")
    parser.add_argument("--max-iter", type=int, default=1000, help="at most this many sweeps (default 1000)")
    parser.add_argument(
        "--opponent",
        choices=OPPONENT_MODELS,
        default="random",
        help="who gives the pieces: drawn at random (default); minimax: the worst piece for an "
        "optimal player; minavg: the worst for a random player; gaps: the most holes",
    )
    parser.add_argument(
        "--method",
        choices=("mpi", "vi", "jacobi", "strategy"),
        default=None,
        help="modified policy iteration (default, but for a player placing at random and against minimax), "
        "value iteration in place (vi: Gauss-Seidel), synchronous value iteration (jacobi: each sweep reads the "
        "last one's values) or strategy iteration (default against minimax: the opponent evaluated exactly)",
    )
    parser.add_argument(
        "--no-accelerate",
        dest="accelerate",
        action="store_false",
        help="no Aitken jumps: plain sweeps, as textbooks count them",
    )
    parser.add_argument(
        "--max-memory",
        type=float,
        default=DEFAULT_MAX_MEMORY / 2**30,
        metavar="GIB",
        help=f"refuse work needing more memory than this, in GiB (default {DEFAULT_MAX_MEMORY / 2**30:g})",
    )
    parser.add_argument("--jobs", type=int, default=None, help="threads (default: all)")
