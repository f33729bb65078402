"""The ``babytris`` command (also ``python -m babytris``)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Sequence

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
    solve.add_argument("--width", type=int, default=4, help="board columns (default 4)")
    solve.add_argument("--height", type=int, default=5, help="board rows (default 5); width * height <= 64")
    solve.add_argument("--pieces", nargs="+", default=["trominoes"],
                       help="piece names or groups: I L I4 O T S Z J L4, trominoes, tetrominoes (default trominoes)")
    solve.add_argument("--discount", type=float, default=0.9, help="discount factor in [0, 1) (default 0.9)")
    solve.add_argument("--tol", type=float, default=1e-8, help="stop when no value changes more (default 1e-8)")
    solve.add_argument("--max-iter", type=int, default=1000, help="at most this many sweeps (default 1000)")
    solve.add_argument("--method", choices=("mpi", "vi"), default="mpi",
                       help="modified policy iteration (default) or value iteration; both accelerated")
    solve.add_argument("--max-memory", type=float, default=DEFAULT_MAX_MEMORY / 2**30, metavar="GIB",
                       help=f"refuse work needing more memory than this, in GiB "
                            f"(default {DEFAULT_MAX_MEMORY / 2**30:g})")
    solve.add_argument("--jobs", type=int, default=None, help="threads building the move table (default: all)")
    return parser


def _solve(args: argparse.Namespace) -> int:
    import babytris

    started = time.perf_counter()
    solution = babytris.solve(
        width=args.width,
        height=args.height,
        pieces=args.pieces,
        discount=args.discount,
        tol=args.tol,
        max_iter=args.max_iter,
        method=args.method,
        max_memory=_gib_to_bytes(args.max_memory),
        n_jobs=args.jobs,
    )
    elapsed = time.perf_counter() - started
    rules = solution.rules
    print(f"rules        {rules.width}x{rules.height}, pieces {' '.join(rules.piece_names)}, "
          f"line scores {rules.line_scores}")
    print(f"boards       {solution.n_boards:,} reachable ({solution.n_states:,} states, "
          f"{solution.transitions.n_moves:,} moves)")
    print(f"solved       {solution.iterations} iterations ({solution.method}), residual {solution.residual:.2e}, "
          f"{'converged' if solution.converged else 'NOT converged'}")
    print(f"start value  {solution.start_value:.6f}  (discount {solution.discount})")
    print(f"mean value   {solution.values.mean():.6f}  over all (board, piece) states")
    print(f"time         {elapsed:.3f} s (enumerate {solution.seconds['enumerate']:.3f} s, "
          f"solve {solution.seconds['solve']:.3f} s)")
    print(f"memory       {solution.nbytes / 2**20:.1f} MiB in the solution")
    return 0 if solution.converged else 1


def _gib_to_bytes(gib: float) -> int:
    if not (math.isfinite(gib) and 2**-10 <= gib < 2**33):
        raise ValueError(f"--max-memory must be a number of GiB in [1/1024, 2**33), got {gib}")
    return int(gib * 2**30)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status: 0 ok, 1 not converged, 2 bad
    arguments, 3 over the memory budget."""
    args = _parser().parse_args(argv)
    try:
        return _solve(args)
    except ValueError as err:
        print(f"babytris: error: {err}", file=sys.stderr)
        return 2
    except MemoryError as err:
        print(f"babytris: error: {err}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
