"""The ``babytris`` command (also ``python -m babytris``)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Sequence

from ._checks import OPPONENTS
from .states import DEFAULT_MAX_MEMORY

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="babytris", description="Solve small Tetris-like games exactly.")
    commands = parser.add_subparsers(dest="command", required=True)
    solve = commands.add_parser(
        "solve",
        help="optimal values and policy against random pieces",
        description="Enumerate every reachable board and solve the game by value iteration.",
    )
    _board_arguments(solve, height=5)
    solve.add_argument("--preview", type=int, default=0, help="pieces the player sees ahead (default 0)")
    solve.add_argument("--hold", action="store_true", help="the player may hold a piece")
    solve.add_argument("--pieces", nargs="+", default=["trominoes"],
                       help="piece names or groups: I L I4 O T S Z J L4, trominoes, tetrominoes (default trominoes)")
    solve.add_argument("--discount", type=float, default=0.9, help="discount factor in [0, 1) (default 0.9)")
    solve.add_argument("--tol", type=float, default=1e-8, help="stop when no value changes more (default 1e-8)")
    solve.add_argument("--max-iter", type=int, default=1000, help="at most this many sweeps (default 1000)")
    solve.add_argument("--opponent", choices=OPPONENTS, default="random",
                       help="who gives the pieces: drawn at random (default); minimax: the worst piece for an "
                            "optimal player; minavg: the worst for a random player; gaps: the most holes")
    solve.add_argument("--method", choices=("mpi", "vi"), default=None,
                       help="modified policy iteration (default where one side is random) or value "
                            "iteration; both accelerated")
    solve.add_argument("--max-memory", type=float, default=DEFAULT_MAX_MEMORY / 2**30, metavar="GIB",
                       help=f"refuse work needing more memory than this, in GiB "
                            f"(default {DEFAULT_MAX_MEMORY / 2**30:g})")
    solve.add_argument("--jobs", type=int, default=None, help="threads (default: all)")
    table = commands.add_parser(
        "tournament",
        help="players against opponents, in exact expected points",
        description="Solve the Baby Tetris study's players (optimal, random, max-min, max-min with weighted "
                    "rewards) and opponents (random pieces; minimax, minavg and gaps opponents solved with each "
                    "opponent discount), then print each player's exact expected points over --actions "
                    "placements against each opponent, checked against the mean of --games played games.",
    )
    _board_arguments(table, height=4)
    table.add_argument("--discount", type=float, default=0.9, help="the players' discount (default 0.9)")
    table.add_argument("--opponent-discounts", type=float, nargs="+", default=[0.1, 0.9], metavar="D",
                       help="discounts the opponents are solved with (default 0.1 0.9)")
    table.add_argument("--actions", type=int, default=10_000, help="placements counted (default 10000)")
    table.add_argument("--games", type=int, default=100, help="games played per pair as a check (default 100)")
    table.add_argument("--seed", type=int, default=0, help="the playouts' seed (default 0)")
    table.add_argument("--format", choices=("text", "markdown", "csv"), default="text",
                       help="text (default), a Markdown table, or CSV records")
    rate = commands.add_parser(
        "rate",
        help="optimal average points per placement in an endless game",
        description="The long-run rate against random pieces and against the minimax opponent, with bounds.",
    )
    _board_arguments(rate, height=5)
    rate.add_argument("--tol", type=float, default=1e-9, help="stop when the bounds are this close (default 1e-9)")
    shrink = commands.add_parser(
        "minimize",
        help="merge states that must share a value; solve the smaller game",
        description="Partition the states into groups of equal value (for each opponent model), and time the "
                    "full solve against the quotient's.",
    )
    _board_arguments(shrink, height=5)
    shrink.add_argument("--discount", type=float, default=0.9, help="discount factor in [0, 1) (default 0.9)")
    shrink.add_argument("--preview", type=int, default=0, help="pieces the player sees ahead (default 0)")
    shrink.add_argument("--hold", action="store_true", help="the player may hold a piece")
    return parser


def _board_arguments(parser: argparse.ArgumentParser, *, height: int) -> None:
    parser.add_argument("--width", type=int, default=4, help="board columns (default 4)")
    parser.add_argument("--height", type=int, default=height,
                        help=f"board rows (default {height}); width * height <= 64")


def _solve(args: argparse.Namespace) -> int:
    import babytris

    started = time.perf_counter()
    solution = babytris.solve(
        width=args.width,
        height=args.height,
        pieces=args.pieces,
        preview=args.preview,
        hold=args.hold,
        discount=args.discount,
        tol=args.tol,
        max_iter=args.max_iter,
        opponent=args.opponent,
        method=args.method,
        max_memory=_gib_to_bytes(args.max_memory),
        n_jobs=args.jobs,
    )
    elapsed = time.perf_counter() - started
    rules = solution.rules
    extras = "".join([f", preview {rules.preview}" if rules.preview else "", ", hold" if rules.hold else ""])
    print(f"rules        {rules.width}x{rules.height}, pieces {' '.join(rules.piece_names)}, "
          f"line scores {rules.line_scores}{extras}")
    rows = "boards" if not (rules.preview or rules.hold) else "(board, queue, slot) rows"
    print(f"boards       {solution.n_boards:,} reachable {rows} ({solution.n_states:,} states, "
          f"{solution.transitions.n_moves:,} moves)")
    print(f"solved       {solution.iterations} iterations ({solution.method}), residual {solution.residual:.2e}, "
          f"{'converged' if solution.converged else 'NOT converged'}")
    print(f"start value  {solution.start_value:.6f}  (discount {solution.discount}, opponent {solution.opponent})")
    print(f"mean value   {solution.values.mean():.6f}  over all (board, piece) states")
    print(f"time         {elapsed:.3f} s (enumerate {solution.seconds['enumerate']:.3f} s, "
          f"solve {solution.seconds['solve']:.3f} s)")
    print(f"memory       {solution.nbytes / 2**20:.1f} MiB in the solution")
    return 0 if solution.converged else 1


def _tournament(args: argparse.Namespace) -> int:
    import babytris

    table = babytris.standard_tournament(
        width=args.width,
        height=args.height,
        discount=args.discount,
        opponent_discounts=tuple(args.opponent_discounts),
        n_actions=args.actions,
        n_games=args.games,
        seed=args.seed,
    )
    if args.format == "csv":
        print(table.to_csv(), end="")
    elif args.format == "markdown":
        print(table.to_markdown())
        print(f"\n{args.width}x{args.height}: expected points of {table.n_actions:,} placements (exact); playouts "
              f"of {table.n_games:,} games agree within {table.largest_gap:.1f} standard errors; "
              f"{table.seconds:.1f} s including every solve.")
    else:
        print(table)
    return 0


def _rate(args: argparse.Namespace) -> int:
    import babytris

    t = babytris.enumerate_boards(babytris.Rules(width=args.width, height=args.height))
    print(f"{args.width}x{args.height}: {t.n_boards:,} boards; average points per placement, optimal play")
    converged = True
    for opponent in ("random", "minimax"):
        r = babytris.long_run_rate(t, opponent=opponent, tol=args.tol)
        converged &= r.converged
        print(f"  {opponent:8} {r.gain:.9f}  in [{r.lower:.9f}, {r.upper:.9f}]  {r.iterations} iterations, "
              f"{r.seconds:.3f} s, survival kernel {int(r.kernel.sum()):,} boards")
    return 0 if converged else 1


def _minimize(args: argparse.Namespace) -> int:
    import babytris

    t = babytris.enumerate_boards(
        babytris.Rules(width=args.width, height=args.height, preview=args.preview, hold=args.hold)
    )
    rows = "boards" if args.preview == 0 and not args.hold else \
        f"(board, queue, slot) rows (preview {args.preview}{', hold' if args.hold else ''})"
    print(f"{args.width}x{args.height}: {t.n_states:,} states, {t.n_boards:,} {rows} (discount {args.discount})")
    print("opponent   state groups  board groups   minimize   full solve   quotient solve (with minimize)")
    for opponent in ("random", "minimax", "minavg", "gaps"):
        p = babytris.minimize(t, opponent=opponent)
        started = time.perf_counter()
        babytris.solve_transitions(t, discount=args.discount, opponent=opponent)
        full = time.perf_counter() - started
        started = time.perf_counter()
        babytris.solve_transitions(t, discount=args.discount, opponent=opponent, minimize=True)
        quotient = time.perf_counter() - started
        print(f"{opponent:9} {p.n_classes:>13,} {p.n_board_classes:>13,} {p.seconds:>9.3f}s {full:>11.3f}s "
              f"{quotient:>15.3f}s")
    return 0


def _gib_to_bytes(gib: float) -> int:
    if not (math.isfinite(gib) and 2**-10 <= gib < 2**33):
        raise ValueError(f"--max-memory must be a number of GiB in [1/1024, 2**33), got {gib}")
    return int(gib * 2**30)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status: 0 ok, 1 not converged, 2 bad
    arguments, 3 over the memory budget."""
    args = _parser().parse_args(argv)
    try:
        command = {"tournament": _tournament, "rate": _rate, "minimize": _minimize}.get(args.command, _solve)
        return command(args)
    except ValueError as err:
        print(f"babytris: error: {err}", file=sys.stderr)
        return 2
    except MemoryError as err:
        print(f"babytris: error: {err}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
