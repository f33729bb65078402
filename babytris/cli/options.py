"""The options several ``babytris`` commands share: output (``--json``,
``--quiet``), the board, the rules and the solver."""

from __future__ import annotations

import argparse

from ..engine.resources import DEFAULT_MAX_MEMORY
from ..game.board import Board
from ..game.rules import MOVES, OBJECTIVES, RANDOMIZERS, Rules
from ..solvers.match import Match
from ..solvers.roles import OPPONENT_MODELS
from ..solvers.ties import TIE_RULES

__all__ = [
    "EXTRA_OF",
    "missing_extra",
    "output_arguments",
    "board_arguments",
    "rule_arguments",
    "rule_fields",
    "game_match",
    "game_rules",
    "solver_arguments",
    "tie_arguments",
    "tie_fields",
    "conflicts",
    "game_options",
    "file_path",
    "scheduler_address",
]

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
    """Every :class:`~babytris.Rules` field but the board's size (:func:`board_arguments`):
    ``--pieces``, ``--line-scores``, ``--probabilities``, ``--start``, ``--objective``,
    ``--preview``, ``--hold``, ``--hold-start``, ``--mirror``, ``--no-holes``, ``--top-out``,
    ``--moves``, ``--randomizer`` and ``--bag-copies``; defaults the Rules' own."""
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
    parser.add_argument(
        "--line-scores",
        type=float,
        nargs="+",
        default=None,
        metavar="POINTS",
        help="points for clearing 0, 1, 2, ... rows at once (default 0 1 3 6, then 10 for four)",
    )
    parser.add_argument(
        "--probabilities",
        type=float,
        nargs="+",
        default=None,
        metavar="P",
        help="each piece's chance, in --pieces order, summing to 1 (default equal)",
    )
    parser.add_argument(
        "--start",
        default="0",
        metavar="BOARD",
        help="the start board: its bits as an integer (bit row * width + col, row 0 at the bottom), or its rows "
        "top first joined by '/', '#' filled and '.' empty, e.g. '..../#..#' (default: empty)",
    )
    parser.add_argument(
        "--objective",
        choices=OBJECTIVES,
        default="points",
        help="points (default), or combo: the expected combo length (placements that each clear a row)",
    )
    parser.add_argument("--mirror", action="store_true", help="merge each board with its mirror image")
    parser.add_argument("--no-holes", action="store_true", help="cells under a landed piece fill (no holes)")
    parser.add_argument(
        "--top-out", action="store_true", help="a placement leaving a cell in the top row loses the game"
    )


def rule_fields(args: argparse.Namespace) -> dict:
    """The ``Rules`` fields :func:`rule_arguments` parsed, as keywords."""
    names = ("pieces", "preview", "hold", "hold_start", "moves", "randomizer", "bag_copies", "objective")
    fields = {name: getattr(args, name) for name in names}
    fields.update(mirror=args.mirror, no_holes=args.no_holes, top_out=args.top_out, start=_start(args))
    if args.line_scores is not None:
        fields["line_scores"] = args.line_scores
    if args.probabilities is not None:
        fields["probabilities"] = args.probabilities
    return fields


def game_rules(args: argparse.Namespace) -> Rules:
    """The :class:`Rules` every subcommand that builds a game reads from its
    options: ``--width``, ``--height`` and :func:`rule_arguments`'."""
    return Rules(width=args.width, height=args.height, **rule_fields(args))


def game_match(args: argparse.Namespace) -> Match:
    """The game a subcommand solves or plays, built in this one place: the
    rules (:func:`game_rules`) and ``--opponent`` (random pieces where the
    subcommand has no such option); the player is the optimal one.

    Returns:
        :class:`~babytris.Match`.
    """
    return Match(game_rules(args), opponent=getattr(args, "opponent", "random"))


def _start(args: argparse.Namespace) -> int | Board:
    """``--start`` as the board's bits, or as rows (top first, '/' between them)."""
    text = args.start.strip()
    if text.isdigit():
        return int(text)
    rows = text.split("/")
    if not all(rows) or any(set(row) - {"#", "."} for row in rows):
        raise ValueError(f"--start takes an integer or rows of '#' and '.' joined by '/', got {args.start!r}")
    try:
        return Board.from_rows(rows, height=args.height)
    except ValueError as err:
        raise ValueError(f"--start: {err}") from None


def solver_arguments(parser: argparse.ArgumentParser) -> None:
    """``--discount``, ``--tol``, ``--max-iter``, ``--opponent``, ``--method``, ``--max-memory`` and ``--jobs``."""
    parser.add_argument(
        "--discount",
        type=float,
        default=0.9,
        help="discount factor in [0, 1]; 1: the total reward until game over, where every game ends (default 0.9)",
    )
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
        "--accelerate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Aitken jumps along the slowest mode (default: on, but for --method jacobi, which runs plain as "
        "textbooks write it); --no-accelerate: plain sweeps, as textbooks count them",
    )
    parser.add_argument(
        "--max-memory",
        type=float,
        default=DEFAULT_MAX_MEMORY / 2**30,
        metavar="GIB",
        help=f"refuse work needing more memory than this, in GiB (default {DEFAULT_MAX_MEMORY / 2**30:g})",
    )
    parser.add_argument("--jobs", type=int, default=None, help="threads (default: all)")
    tie_arguments(parser)


def tie_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ties`` and ``--tie-seed``: which of equally good moves (and pieces) the policies take."""
    parser.add_argument(
        "--ties",
        choices=TIE_RULES,
        default="first",
        help="which of equally good moves (and an optimising opponent's pieces) to take: the first by placement "
        "number (default), the last, or one drawn at random (--tie-seed); values do not depend on it",
    )
    parser.add_argument("--tie-seed", type=int, default=None, help="the seed of --ties random")


def tie_fields(args: argparse.Namespace) -> dict:
    """The ``ties`` and ``tie_seed`` keywords :func:`tie_arguments` parsed; ``--ties random``
    needs its ``--tie-seed``, as ``ties="random"`` needs its ``tie_seed`` (no default seed)."""
    if args.ties == "random" and args.tie_seed is None:
        raise ValueError("--ties random draws among tied moves: give its --tie-seed, an integer in [0, 2**63)")
    return {"ties": args.ties, "tie_seed": args.tie_seed}


def conflicts(args: argparse.Namespace, options: dict[str, str], beside: str, why: str) -> None:
    """Refuse (ValueError naming both) any of ``options`` (``{dest: flag}``) the
    command line gives beside the option ``beside``, which makes them meaningless (``why``)."""
    clash = [flag for dest, flag in options.items() if dest in getattr(args, "given", ())]
    if clash:
        raise ValueError(f"{', '.join(clash)} and {beside} conflict: {why}")


def game_options() -> dict[str, str]:
    """The options that set the game a command builds, ``{dest: flag}``:
    :func:`board_arguments`', :func:`rule_arguments`' and :func:`solver_arguments`'
    (``--max-memory`` aside: it bounds any work)."""
    parser = argparse.ArgumentParser(add_help=False)
    board_arguments(parser)
    rule_arguments(parser)
    solver_arguments(parser)
    return {a.dest: a.option_strings[-1] for a in parser._actions if a.option_strings and a.dest != "max_memory"}


#: The extra of ``pip install 'babytris[EXTRA]'`` that brings each optional package.
EXTRA_OF = {
    "scipy": "export",
    "stormpy": "export",
    "quantecon": "export",
    "pandas": "table",
    "matplotlib": "plot",
    "resvg_py": "draw",
    "PIL": "draw",
    "gymnasium": "gym",
    "dask": "dask",
    "distributed": "dask",
}


def missing_extra(err: ImportError) -> str | None:
    """The one line the CLI prints for an optional package not installed
    (returns it: the library's own message where it names the extra, else
    the package and its extra), or None for another ImportError."""
    if "pip install 'babytris[" in str(err):
        return str(err)
    module = (getattr(err, "name", None) or "").split(".")[0]
    if not isinstance(err, ModuleNotFoundError) or module not in EXTRA_OF:
        return None
    return f"this needs {module}, which is not installed: pip install 'babytris[{EXTRA_OF[module]}]'"


def scheduler_address(text: str) -> str:
    """``--scheduler``'s address as given; an empty one is refused (it would solve locally, unasked)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the address is empty; give tcp://HOST:PORT or local:N")
    return text


def file_path(text: str) -> str:
    """A file option's path as given (the ``type`` of every file option); an
    empty one is refused, argparse naming the option."""
    if not text:
        raise argparse.ArgumentTypeError("the path is empty; give a file name")
    return text
