"""``babytris board``: solve a game (or load a saved solution) and serve the
analysis board for it on 127.0.0.1 (see :mod:`babytris.board`, docs/board.md)."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import webbrowser
from typing import Any

from ..game.validation import check_int
from .common import EPILOG, EXIT_OK, Output, solution_from
from .options import (
    board_arguments,
    conflicts,
    file_path,
    game_options,
    output_arguments,
    rule_arguments,
    solver_arguments,
)

__all__ = ["add_board_parser", "board_command"]

#: The port the board listens on unless told (0: any free one).
DEFAULT_PORT = 8765

#: How often (seconds) the serving loop looks for Ctrl-C between requests.
POLL_SECONDS = 0.2


def add_board_parser(commands: argparse._SubParsersAction) -> None:
    """The ``board`` command's options, under ``babytris``'s ``commands``."""
    board = commands.add_parser(
        "board",
        epilog=EPILOG,
        help="explore a solved game in the browser: every move's value, play, branches",
        description="Solve the game the options give (or load --solution) and serve the analysis board on "
        "127.0.0.1: the board, every legal placement of the piece with its exact value and regret, play "
        "against a chosen opponent, the game's moves and values. Prints its URL and serves until Ctrl-C.",
    )
    output_arguments(board, 'print one JSON object, {"url": ...}, once the board is served')
    board.add_argument(
        "--solution",
        type=file_path,
        metavar="FILE",
        help="a solution saved by `babytris solve --out` (a table, or a lean solve's: --mode lean), or the "
        "directory a sharded solve wrote "
        "(babytris.solve_sharded(..., out=DIR)); its rules, discount and opponent: the game options then conflict",
    )
    board.add_argument(
        "--no-verify",
        action="store_true",
        help="load --solution without its proof (babytris.load, load_lean or load_sharded with verify=False)",
    )
    board_arguments(board)
    rule_arguments(board)
    solver_arguments(board)
    board.add_argument(
        "--mode",
        choices=("auto", "table", "lean", "estimate"),
        default="auto",
        help="as for babytris solve: table (every move's value from the move table), lean (board values only, "
        "moves valued on demand; the plain game against random or minimax pieces); or estimate (no solve: "
        "Dellacherie's feature-based player's evaluations, labelled estimates, for boards too big to solve, "
        "up to 16 columns: --pieces, --probabilities and --line-scores only); auto (default): table, or lean "
        "where the table would exceed --max-memory, or estimate past 64 cells",
    )
    board.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"the port to listen on (default {DEFAULT_PORT}; 0: any free)"
    )
    board.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1, this machine only; another is warned about: "
        "anyone who can reach it can use the board)",
    )
    board.add_argument("--no-browser", action="store_true", help="print the URL only; open no browser")


def board_command(args: argparse.Namespace, out: Output) -> int:
    """Run ``babytris board``: solve or load, serve until Ctrl-C."""
    import babytris

    from ..board.analyst import Analyst
    from ..board.server import BoardServer, is_loopback
    from ..engine.resources import gib_to_bytes
    from ..files.persist import holds_lean_solution

    port = check_int("--port", args.port, 0, 65535)
    if args.solution:
        options = {**game_options(), "mode": "--mode"}
        conflicts(
            args, options, "--solution", "the file holds the game (rules, discount, opponent, ties) and its values"
        )
    elif "no_verify" in getattr(args, "given", ()):
        raise ValueError("--no-verify: only with --solution (a file loaded without its proof); here nothing is loaded")
    if args.mode == "estimate" or (args.mode == "auto" and args.width * args.height > 64 and not args.solution):
        analyst: Analyst = _estimates(args)
    elif args.solution and os.path.isdir(args.solution):  # a sharded solve's directory
        from ..board.on_demand import ShardedView

        sharded = babytris.load_sharded(args.solution, verify=not args.no_verify)
        analyst = Analyst(ShardedView(sharded), max_memory=gib_to_bytes(args.max_memory))
    elif args.solution and holds_lean_solution(args.solution):  # a lean solve's file (babytris solve --mode lean --out)
        from ..board.on_demand import LeanView

        lean = babytris.load_lean(args.solution, verify=not args.no_verify, max_memory=gib_to_bytes(args.max_memory))
        analyst = Analyst(LeanView(lean), max_memory=gib_to_bytes(args.max_memory))
    elif args.solution:
        solution = babytris.load(args.solution, verify=not args.no_verify, max_memory=gib_to_bytes(args.max_memory))
        analyst = Analyst(solution, max_memory=gib_to_bytes(args.max_memory))
    else:
        analyst = Analyst(_solved(args, out), max_memory=gib_to_bytes(args.max_memory))
    try:
        server = BoardServer(analyst, args.host, port)
    except OSError as err:
        if err.errno in (errno.EADDRINUSE, errno.EACCES):  # (the port taken, or one below 1024)
            raise ValueError(
                f"--port {port}: cannot listen on {args.host}:{port} ({err.strerror}); --port 0 takes any free one"
            ) from None
        raise ValueError(f"--host {args.host}: cannot listen there ({err.strerror or err})") from None
    if not is_loopback(args.host):
        print(
            f"babytris board: warning: --host {args.host} serves the board beyond this machine; anyone who can reach "
            "it can use it (and make it solve games)",
            file=sys.stderr,
        )
    with server:
        out.line(f"babytris board: {server.url}  (Ctrl-C stops it)")
        if args.json:
            print(json.dumps({"url": server.url}))
        sys.stdout.flush()
        if not args.no_browser:
            webbrowser.open(server.url)
        server.serve_forever(poll_interval=POLL_SECONDS)
    return EXIT_OK


#: The options a big board's estimates take beside the board's size (the big engine's game).
ESTIMATE_OPTIONS = ("width", "height", "pieces", "probabilities", "line_scores", "max_memory")


def _estimates(args: argparse.Namespace) -> Any:
    """The board of a game too big to solve: Dellacherie's player's evaluations (:mod:`babytris.board.estimates`)."""
    from ..board.estimates import EstimateAnalyst

    if args.solution:
        raise ValueError("--mode estimate: nothing is loaded (a big board's values are a feature player's)")
    unsupported = {dest: flag for dest, flag in game_options().items() if dest not in ESTIMATE_OPTIONS}
    why = "a board too big to solve plays the big engine's game, pieces drawn, values a feature player's"
    conflicts(args, unsupported, "--mode estimate" if "mode" in args.given else f"{args.width}x{args.height}", why)
    return EstimateAnalyst.of_game(
        args.width, args.height, pieces=args.pieces, probabilities=args.probabilities, line_scores=args.line_scores
    )


def _solved(args: argparse.Namespace, out: Output) -> Any:
    """The game solved as ``--mode`` says: a Solution, or a lean solve seen as one (:class:`LeanView`)."""
    from ..board.on_demand import LeanView
    from ..engine.resources import MemoryLimitError
    from .lean import lean_applies, lean_solution

    plain = lean_applies(argparse.Namespace(**vars(args), out=None, policy_csv=None))
    if args.mode == "lean":
        if not plain:
            raise ValueError(
                "--mode lean: solves the plain game (no --preview, --hold, --moves soft, --randomizer bag; "
                "--opponent random or minimax; --method mpi or vi)"
            )
        return LeanView(lean_solution(args, out))
    try:
        return solution_from(args, out)
    except MemoryLimitError:
        if args.mode == "auto" and plain:
            out.line("babytris board: the move table would not fit in --max-memory: solving in the lean mode")
            return LeanView(lean_solution(args, out))
        raise
