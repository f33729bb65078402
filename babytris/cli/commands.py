"""The ``babytris`` command (also ``python -m babytris``).

Every command prints a readable summary, or with ``--json`` one JSON object
on stdout, or with ``--quiet`` nothing (the exit status tells).  Progress
bars go to stderr, and only when it is a terminal.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from ..modes.sharded.distributed import LostWorkerError
from .common import (  # the one table of exit statuses: cli.EXIT_*
    EPILOG,
    EPILOG_NO_SOLVE,
    EXIT_BAD_ARGUMENTS,
    EXIT_BAD_FILE,
    EXIT_INTERRUPTED,
    EXIT_LOST_WORKER,
    EXIT_MISSING_EXTRA,
    EXIT_NOT_CONVERGED,
    EXIT_OK,
    EXIT_OVER_MEMORY,
    Output,
    check_writable,
    rules_record,
    solution_from,
)
from .options import (
    board_arguments,
    file_path,
    game_rules,
    missing_extra,
    output_arguments,
    rule_arguments,
    scheduler_address,
    solver_arguments,
    tie_arguments,
    tie_fields,
)

__all__ = ["main", "EXIT_OK", "EXIT_NOT_CONVERGED", "EXIT_BAD_ARGUMENTS", "EXIT_OVER_MEMORY"]
__all__ += ["EXIT_MISSING_EXTRA", "EXIT_LOST_WORKER", "EXIT_BAD_FILE", "EXIT_INTERRUPTED"]


class _Parser(argparse.ArgumentParser):
    """argparse's parser with usage errors in one line, naming the (sub)command and its --help,
    instead of the whole usage first (the subcommands' parsers are of this class too)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)  # (a prefix would take a typo for another option)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_ARGUMENTS, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="babytris",
        description="Solve small Tetris-like games exactly, and play, compare and time them.",
        epilog=EPILOG,
    )
    from .._version import __version__

    parser.add_argument("--version", action="version", version=f"babytris {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    solve = commands.add_parser(
        "solve",
        epilog=EPILOG,
        help="optimal values and policy (against random pieces or an opponent)",
        description="Enumerate every reachable board and solve the game exactly; print boards, iterations, "
        "residual, start value, time and memory, and optionally save the solution.",
    )
    output_arguments(solve)
    board_arguments(solve)
    rule_arguments(solve)
    solver_arguments(solve)
    solve.add_argument(
        "--out",
        type=file_path,
        metavar="FILE",
        help="save the solution (.npz; read back with babytris.load, or a lean one with babytris.load_lean)",
    )
    solve.add_argument(
        "--policy-csv",
        type=file_path,
        metavar="FILE",
        help="write the policy as CSV: one line per state (board rows, piece, rotation, column, value, ...)",
    )
    solve.add_argument(
        "--mode",
        choices=("auto", "table", "lean"),
        default="auto",
        help="table: store the move table (fast); lean: recompute moves each sweep, boards up to 32 cells, "
        "in a fraction of the memory (babytris.solve_lean); auto (default): table, or lean where the table "
        "would exceed --max-memory",
    )
    solve.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="lean mode: write the values to DIR between sweeps (every --checkpoint-seconds), and go on from "
        "the last checkpoint there if the same solve was stopped (Ctrl-C, kill); implies --mode lean",
    )
    solve.add_argument(
        "--checkpoint-seconds",
        type=float,
        default=None,
        metavar="S",
        help="least seconds between two checkpoints (default 120; 0: before every greedy sweep)",
    )
    solve.add_argument(
        "--scheduler",
        type=scheduler_address,
        metavar="ADDRESS",
        help="shard the boards over the dask.distributed cluster at ADDRESS (e.g. tcp://host:8786), or over "
        "N local worker processes with local:N (needs '.[dask]'; plain rules, modified policy iteration in each shard)",
    )
    solve.add_argument(
        "--plan",
        metavar="WxH",
        default=None,
        help="with --scheduler: do not solve; size the sharded solve on that cluster (shards, memory per worker, "
        "traffic a round, expected time) from a solve of the smaller board WxH run there first (e.g. 4x6)",
    )

    play = commands.add_parser(
        "play",
        epilog=EPILOG,
        help="watch a policy play a game, placement by placement",
        description="Play one game with a saved solution (--solution) or one solved now from the board "
        "options, drawing the board before each placement with '@' where the piece lands. "
        "Pieces are drawn at random, or given by the solution's opponent (minimax, ...).",
    )
    output_arguments(play)
    play.add_argument(
        "--solution",
        type=file_path,
        metavar="FILE",
        help="a solution saved by `babytris solve --out`, with its "
        "rules and opponent (default: solve the game the other "
        "options give; with --solution they are ignored)",
    )
    play.add_argument(
        "--no-verify",
        action="store_true",
        help="load --solution without recomputing it (babytris.load(verify=False): the table, one sweep, the "
        'policy); the --json output says "verified": false',
    )
    board_arguments(play)
    rule_arguments(play)
    solver_arguments(play)
    play.add_argument("--placements", type=int, default=20, help="stop after this many placements (default 20)")
    play.add_argument(
        "--gif", type=file_path, metavar="FILE", help="write the game as an animated GIF (the draw extra: '.[draw]')"
    )
    play.add_argument(
        "--html", type=file_path, metavar="FILE", help="write the game as a self-contained HTML page with the animation"
    )
    play.add_argument("--strip", type=file_path, metavar="FILE", help="write the game as a film strip, one PNG image")
    play.add_argument("--seed", type=int, default=0, help="seed of the random pieces (default 0)")
    play.add_argument(
        "--delay",
        type=float,
        default=None,
        metavar="SECONDS",
        help="pause between placements (default 0.3 s on a terminal, else 0)",
    )

    table = commands.add_parser(
        "tournament",
        epilog=EPILOG_NO_SOLVE,
        help="players against opponents, in exact expected points",
        description="Solve the Baby Tetris study's players (optimal, random, max-min, max-min with weighted "
        "rewards) and opponents (random pieces; minimax, minavg and gaps opponents solved with each "
        "opponent discount), then print each player's exact expected points over --placements "
        "placements against each opponent, checked against the mean of --games played games, the least "
        "over those opponents (min) and the true worst case (an opponent who knows the player's policy "
        "and the placements left).",
    )
    output_arguments(table)
    board_arguments(table)
    rule_arguments(table)
    tie_arguments(table)
    table.add_argument("--discount", type=float, default=0.9, help="the players' discount (default 0.9)")
    table.add_argument(
        "--opponent-discounts",
        type=float,
        nargs="+",
        default=[0.1, 0.9],
        metavar="D",
        help="discounts the opponents are solved with (default 0.1 0.9)",
    )
    table.add_argument(
        "--placements",
        dest="placements",
        type=int,
        default=10_000,
        help="placements counted (default 10000)",
    )
    table.add_argument("--games", type=int, default=100, help="games played per pair as a check (default 100)")
    table.add_argument("--seed", type=int, default=0, help="the playouts' seed (default 0)")
    table.add_argument(
        "--format",
        choices=("text", "markdown", "csv"),
        default="text",
        help='text (default), a Markdown table, or CSV records (--json: an object, its "records" one per pair)',
    )

    bench = commands.add_parser(
        "bench",
        epilog=EPILOG_NO_SOLVE,
        help="a quick benchmark of the solvers on this machine",
        description="Median times of enumeration, the solve against random pieces (MPI), the minimax solve "
        "(VI) and playouts, per board size; and the pure-Python reference against the core on 4x3. "
        "For the README's figures use the pytest-benchmark suites in bench/.",
    )
    output_arguments(bench)
    bench.add_argument(
        "--sizes",
        nargs="+",
        default=["4x4", "4x5"],
        metavar="WxH",
        help="board sizes, width x height, at most 30 cells (default 4x4 4x5)",
    )
    bench.add_argument("--repeat", type=int, default=3, help="runs per median, 1-100 (default 3)")
    bench.add_argument("--no-reference", action="store_true", help="skip the pure-Python reference (about 1 s a run)")
    bench.add_argument("--jobs", type=int, default=None, help="threads (default: all)")

    rate = commands.add_parser(
        "rate",
        epilog=EPILOG_NO_SOLVE,
        help="optimal average points per placement in an endless game",
        description="The long-run rate against random pieces and against the minimax opponent, with bounds.",
    )
    output_arguments(rate)
    board_arguments(rate)
    rule_arguments(rate)
    rate.add_argument("--tol", type=float, default=1e-9, help="stop when the bounds are this close (default 1e-9)")

    shrink = commands.add_parser(
        "minimize",
        epilog=EPILOG_NO_SOLVE,
        help="merge states that must share a value; solve the smaller game",
        description="Partition the states into groups of equal value (for each opponent model), and time the "
        "full solve against the quotient's.",
    )
    output_arguments(shrink)
    board_arguments(shrink)
    rule_arguments(shrink)
    shrink.add_argument("--discount", type=float, default=0.9, help="discount factor in [0, 1) (default 0.9)")

    from .export import add_export_parser

    add_export_parser(commands)  # (babytris/cli_export.py)
    from .board import add_board_parser

    add_board_parser(commands)  # (babytris/cli/board.py)

    again = commands.add_parser(
        "reproduce",
        epilog=EPILOG_NO_SOLVE,
        help="recompute every published number babytris can, in its source's setup",
        description="Recompute the numbers the source documents publish, each in its source's own setup, "
        "and say whether babytris agrees (see docs/results.md).",
    )
    output_arguments(again, "print a JSON list instead of text: one object per row (with --list: per claim)")
    again.add_argument("names", nargs="*", metavar="NAME", help="claims to run (default: all)")
    again.add_argument("--list", action="store_true", help="name the claims and their sources, run nothing")
    again.add_argument("--fast", action="store_true", help="only the quick claims, with fewer games")
    again.add_argument(
        "--summary",
        action="store_true",
        help="print the verdicts' counts (the source documents' claims apart from cross-checks against programs) "
        "instead of the table (with --record: of every recorded row)",
    )
    again.add_argument(
        "--record", type=file_path, metavar="JSON", help="merge the rows into this record of earlier runs"
    )
    again.add_argument(
        "--write",
        type=file_path,
        metavar="FILE",
        help="rewrite the table between the reproduce markers of FILE (with --record: every recorded row)",
    )
    return parser


def _solve(args: argparse.Namespace, out: Output) -> int:
    from ..engine.resources import MemoryLimitError

    if args.out:
        check_writable("--out", args.out)
    if args.policy_csv:
        check_writable("--policy-csv", args.policy_csv)
    from .lean import lean_applies, solve_lean_command

    if args.checkpoint_seconds is not None and not args.checkpoint:
        raise ValueError("--checkpoint-seconds: give --checkpoint DIR too (only a checkpointed solve uses it)")
    if args.checkpoint and args.mode == "table":
        raise ValueError("--checkpoint: only the lean mode checkpoints; not with --mode table")
    if args.mode == "lean" or args.checkpoint:
        if args.scheduler is not None:
            option = "--mode lean" if args.mode == "lean" else "--checkpoint"
            raise ValueError(
                "--scheduler: the command gathers the sharded solve into one Solution, and lean shards gather "
                "nothing (in Python: babytris.solve_sharded(rules, client, lean=True, out=DIR), read back with "
                f"babytris.load_sharded); not with {option}"
            )
        why = "asked for (--mode lean)" if args.mode == "lean" else "asked for (--checkpoint: lean mode only)"
        return solve_lean_command(args, out, why)
    if args.plan is not None:
        from .plan import plan_command

        return plan_command(args, out)
    started = time.perf_counter()
    sharding = None
    try:
        if args.scheduler is not None:
            from .sharded import sharded_solution

            solution, sharding = sharded_solution(args)
        else:
            solution = solution_from(args, out)
    except MemoryLimitError as refused:
        if args.mode == "auto" and lean_applies(args):
            return solve_lean_command(args, out, f"the move table would not fit ({refused})")
        raise
    elapsed = time.perf_counter() - started
    if args.out:
        solution.save(args.out)
    if args.policy_csv:
        from ..results.tables import write_policy_csv

        write_policy_csv(solution, args.policy_csv)
    rules = solution.rules
    summary = {
        "rules": rules_record(rules),
        "discount": solution.discount,
        "opponent": solution.opponent,
        # Rows are (board, queue, hold slot) nodes with previews or hold, else
        # distinct boards already (a unique() of 35 M boards takes 40 s).
        "boards": int(np.unique(solution.boards).size) if rules.node_tables else solution.n_boards,
        "rows": solution.n_boards,
        # (node tables hold every board x bag x queue x slot; play meets fewer)
        "rows_reached": int(solution.transitions.reachable().sum()) if rules.node_tables else solution.n_boards,
        "states": solution.n_states,
        "moves": solution.transitions.n_moves,
        "iterations": solution.iterations,
        "method": solution.method,
        "residual": solution.residual,
        "error_bound": solution.error_bound,
        "converged": solution.converged,
        "start_value": solution.start_value,
        "counts": _what_values_count(solution),
        "mean_value": float(solution.values.mean()),
        "seconds": {"total": elapsed, **solution.seconds},
        "memory_bytes": solution.nbytes,
        "saved": args.out,
        "policy_csv": args.policy_csv,
    }
    if sharding is not None:
        summary["sharding"] = sharding
    out.result(summary)
    extras = "".join(
        [
            f", preview {rules.preview}" if rules.preview else "",
            ", hold" if rules.hold else "",
            ", soft moves" if rules.moves == "soft" else "",
            f", a bag of {rules.bag_copies} of each piece" if rules.randomizer == "bag" else "",
        ]
    )
    out.line(
        f"rules        {rules.width}x{rules.height}, pieces {' '.join(rules.piece_names)}, "
        f"line scores {rules.line_scores}{extras}"
    )
    rows = "reachable boards"
    if rules.node_tables:
        rows = f"(board, bag, queue, slot) rows, {summary['rows_reached']:,} met in play"
    out.line(
        f"boards       {solution.n_boards:,} {rows} ({solution.n_states:,} states, "
        f"{solution.transitions.n_moves:,} moves)"
    )
    out.line(
        f"solved       {solution.iterations} iterations ({solution.method}), residual {solution.residual:.2e}, "
        f"{'converged' if solution.converged else 'NOT converged'}"
    )
    bound = "no error bound (undiscounted)" if solution.error_bound is None else f"error <= {solution.error_bound:.1e}"
    out.line(
        f"start value  {solution.start_value:.6f} {_what_values_count(solution)}  ({bound}; discount "
        f"{solution.discount}, opponent {solution.opponent})"
    )
    out.line(f"mean value   {solution.values.mean():.6f}  over all (board, piece) states")
    out.line(
        f"time         {elapsed:.3f} s (enumerate {solution.seconds['enumerate']:.3f} s, "
        f"solve {solution.seconds['solve']:.3f} s)"
    )
    out.line(f"memory       {solution.nbytes / 2**20:.1f} MiB in the solution")
    if sharding is not None:
        out.line(
            f"sharded      {sharding['shards']} shards ({sharding['split']}), {sharding['rounds']} rounds "
            f"({sharding['greedy_sweeps']} greedy sweeps), {sharding['bytes_per_round'] / 2**20:.2f} MiB and "
            f"{sharding['seconds_per_round']:.3f} s per round (medians), "
            f"{sharding['moves_at_home']:.0%} of moves at home"
        )
    if args.out:
        out.line(f"saved        {args.out}")
    if args.policy_csv:
        out.line(f"policy       {args.policy_csv} ({solution.n_states:,} states)")
    return EXIT_OK if solution.converged else EXIT_NOT_CONVERGED


def _what_values_count(solution) -> str:
    """What a solution's values are a discounted sum of: ``"points"``, ``"holes"``
    (the gaps opponent's: holes a random player creates) or ``"reward"`` (weighted)."""
    if solution.opponent == "gaps":
        return "holes"
    return "points" if solution.reward is None else "reward"


def _play(args: argparse.Namespace, out: Output) -> int:
    from .play import play_command

    return play_command(args, out)


def _tournament(args: argparse.Namespace, out: Output) -> int:
    import babytris

    from ..solvers.termination import GamesDoNotEnd

    for discount in args.opponent_discounts:  # (named here: the solves would name discount, the players')
        if not 0 <= discount <= 1:  # (NaN too)
            raise ValueError(
                "--opponent-discounts must be numbers in [0, 1] (1: the total reward until game over, where every "
                f"game ends), got {discount:g}"
            )
    try:
        table = babytris.standard_tournament(
            game_rules(args),
            **tie_fields(args),
            discount=args.discount,
            opponent_discounts=tuple(args.opponent_discounts),
            n_placements=args.placements,
            n_games=args.games,
            seed=args.seed,
        )
    except GamesDoNotEnd as err:
        if args.discount == 1:  # (the players are solved first: theirs)
            raise
        raise ValueError(f"--opponent-discounts 1: the opponents solved with it: {err}") from None
    out.result(
        {
            "players": list(table.players),
            "opponents": list(table.opponents),
            "n_placements": table.n_placements,
            "n_games": table.n_games,
            "largest_gap": table.largest_gap,
            "agreement_threshold": table.agreement_threshold,
            "playouts_agree": table.playouts_agree,
            "check": table.check_text(),
            "rules": rules_record(table.rules) if table.rules is not None else None,
            "setup": table.setup_text(),
            "seconds": table.seconds,
            "records": table.to_records(),
        }
    )
    if args.format == "csv":
        out.line(table.to_csv(), end="")
    elif args.format == "markdown":
        out.line(table.to_markdown())  # (its paragraph states the check, the rules, the timing and the ties)
        out.line(f"\n{args.width}x{args.height}: {table.seconds:.1f} s including every solve.")
    else:
        out.line(str(table))
    return EXIT_OK


def _bench(args: argparse.Namespace, out: Output) -> int:
    from ..claims.benchmark import quick_benchmark

    sizes = [_size(text) for text in args.sizes]
    result = quick_benchmark(sizes, repeat=args.repeat, reference=not args.no_reference, n_jobs=args.jobs)
    out.result(result.to_records())
    out.line(str(result))
    return EXIT_OK


def _size(text: str) -> tuple[int, int]:
    width, sep, height = text.lower().partition("x")
    if not (sep and width.isdigit() and height.isdigit()):
        raise ValueError(f"--sizes takes WxH, e.g. 4x5, got {text!r}")
    return int(width), int(height)


def _rate(args: argparse.Namespace, out: Output) -> int:
    import babytris

    t = babytris.enumerate_boards(game_rules(args))
    out.line(f"{args.width}x{args.height}: {t.n_boards:,} boards; average points per placement, optimal play")
    converged, records = True, []
    for opponent in ("random", "minimax"):
        r = babytris.long_run_rate(t, opponent=opponent, tol=args.tol)
        converged &= r.converged
        records.append(
            {
                "opponent": opponent,
                "gain": r.gain,
                "lower": r.lower,
                "upper": r.upper,
                "iterations": r.iterations,
                "converged": r.converged,
                "seconds": r.seconds,
                "kernel_boards": int(r.kernel.sum()),
            }
        )
        out.line(
            f"  {opponent:8} {r.gain:.9f}  in [{r.lower:.9f}, {r.upper:.9f}]  {r.iterations} iterations, "
            f"{r.seconds:.3f} s, survival kernel {int(r.kernel.sum()):,} boards"
        )
    out.result({"width": args.width, "height": args.height, "boards": t.n_boards, "rates": records})
    return EXIT_OK if converged else EXIT_NOT_CONVERGED


def _minimize(args: argparse.Namespace, out: Output) -> int:
    from .minimize import minimize_command

    return minimize_command(args, out)


def _reproduce(args: argparse.Namespace, out: Output) -> int:
    from ..claims import published as claims  # noqa: F401  (registers the claims)
    from ..claims.registry import CLAIMS
    from ..claims.reproduce import markdown_table, merge_record, reproduce, summary, summary_lines, write_table

    if args.list:
        for c in CLAIMS:
            out.line(f"{c.name:45} {c.source:7} {'fast' if c.fast else 'slow'}  {c.quantity}")
        out.result([{"name": c.name, "source": c.source, "quantity": c.quantity} for c in CLAIMS])
        return EXIT_OK
    if args.write and not Path(args.write).is_file():
        raise ValueError(f"--write: {args.write} is not a file")
    for option, path in (("--write", args.write), ("--record", args.record)):
        if path:
            check_writable(option, path)
    results = reproduce(args.names or None, fast=args.fast, progress=out.chatty and sys.stderr.isatty())
    rows = merge_record(results, args.record) if args.record else results
    if args.write:
        write_table(rows, args.write)
    if args.summary:
        for line in summary_lines(rows):
            out.line(line)
        out.result(summary(rows))
        return EXIT_OK
    out.line(markdown_table(results).rstrip())
    out.result([r.to_dict() for r in results])
    return EXIT_OK


def _export(args: argparse.Namespace, out: Output) -> int:
    from .export import export_command  # (imports the exports only when asked for)

    return export_command(args, out)


def _board(args: argparse.Namespace, out: Output) -> int:
    from .board import board_command  # (imports the board only when asked for)

    return board_command(args, out)


COMMANDS = {
    "solve": _solve,
    "play": _play,
    "tournament": _tournament,
    "bench": _bench,
    "rate": _rate,
    "minimize": _minimize,
    "reproduce": _reproduce,
    "export": _export,
    "board": _board,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status, one of the EXIT_* table
    above (130 on Ctrl-C: one line on stderr, no traceback)."""
    _take_back_sigint()
    try:
        return _run(argv)
    except KeyboardInterrupt:
        if sys.stderr.isatty():
            print(file=sys.stderr)  # a progress bar may have left its line open
        print("babytris: interrupted", file=sys.stderr)
        # The command ends: the interpreter's last collections over what it loaded (dask's objects,
        # with --scheduler) took 0.17-0.28 s of the exit on 2 loaded cores, 0.02 s with them frozen.
        gc.freeze()
        return EXIT_INTERRUPTED


def _take_back_sigint() -> None:
    """Python's SIGINT handler again, where babytris's loading one (one line,
    exit 130 while the command's modules load) is still set: from here Ctrl-C
    is a KeyboardInterrupt that :func:`main` turns into its one line."""
    import signal

    import babytris

    if signal.getsignal(signal.SIGINT) is getattr(babytris, "_interrupted_while_loading", None):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _run(argv: Sequence[str] | None) -> int:
    parser = _parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        command = parser._subparsers._group_actions[0].choices[args.command]  # type: ignore[union-attr,index]
        if unknown:  # named by the subcommand they were given to, not by the top level
            command.error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as done:  # --help, --version (0) and usage errors (2)
        return int(done.code or 0)
    args.given = _given(command, sys.argv[1:] if argv is None else argv)
    where, flags = f"babytris {args.command}", _flags(command)
    from ..files.persist import SolutionFileError

    try:
        return COMMANDS[args.command](args, Output(args))
    except BrokenPipeError:  # the reader left (`babytris ... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except SolutionFileError as err:
        print(f"{where}: error: {err}", file=sys.stderr)
        return EXIT_BAD_FILE
    except (ValueError, OSError) as err:
        print(f"{where}: error: {_in_flags(str(err), flags)}", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    except MemoryError as err:
        print(f"{where}: error: {_in_flags(str(err), flags)}", file=sys.stderr)
        return EXIT_OVER_MEMORY
    except ImportError as err:  # an optional extra not installed (any other: a broken install, raised)
        if (line := missing_extra(err)) is None:
            raise
        print(f"{where}: error: {line}", file=sys.stderr)
        return EXIT_MISSING_EXTRA
    except LostWorkerError as err:
        print(f"{where}: error: --scheduler: {err}", file=sys.stderr)
        return EXIT_LOST_WORKER


def _given(command: argparse.ArgumentParser, argv: Sequence[str]) -> frozenset[str]:
    """The destinations of the options the command line names (``{"width", ...}``):
    an option left at its default is not given, one written with its default value is."""
    tokens = [token for token in argv if token.startswith("-")]
    return frozenset(
        action.dest
        for action in command._actions
        for flag in action.option_strings
        if any(token == flag or token.startswith(flag + "=") for token in tokens)
    )


#: Python argument names whose command-line flag is not the name with dashes.
_FLAG_OF = {"n_jobs": "jobs", "n_placements": "placements", "n_games": "games", "policy_table": "policy_csv"}


def _flags(command: argparse.ArgumentParser) -> dict[str, str]:
    """The command's options by the Python name an error message uses: ``{"width": "--width", ...}``."""
    by_dest = {a.dest: a.option_strings[-1] for a in command._actions if a.option_strings}
    flags = {dest: flag for dest, flag in by_dest.items()}
    flags.update({name: by_dest[dest] for name, dest in _FLAG_OF.items() if dest in by_dest})
    return flags


def _in_flags(message: str, flags: dict[str, str]) -> str:
    """``message`` with its first word, where it names an argument in Python's words
    (``n_jobs must be ...``, ``width: ...``), in the command line's (``--jobs must be ...``)."""
    word = message.split(" ", 1)[0].rstrip(":")
    return flags[word] + message[len(word) :] if word in flags else message


if __name__ == "__main__":
    sys.exit(main())
