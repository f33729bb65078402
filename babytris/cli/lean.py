"""``babytris solve`` in the lean mode (:mod:`babytris.modes.lean`): chosen with
``--mode lean``, or by ``--mode auto`` where the move table would not fit."""

from __future__ import annotations

import argparse
import resource
import sys
import time

from ..engine.resources import gib_to_bytes
from .common import EXIT_NOT_CONVERGED, EXIT_OK, Output, rules_record
from .options import game_rules

__all__ = ["lean_applies", "solve_lean_command"]


def lean_applies(args: argparse.Namespace) -> bool:
    """Whether the lean mode can solve what ``babytris solve`` was asked."""
    from ..modes.lean import LEAN_MAX_CELLS, LEAN_OPPONENTS

    plain = not (
        args.preview
        or args.hold
        or args.out
        or args.policy_csv
        or args.method in ("jacobi", "strategy")
        or args.ties != "first"
        or args.moves != "hard"
        or args.randomizer != "iid"
    )
    return plain and args.width * args.height <= LEAN_MAX_CELLS and args.opponent in LEAN_OPPONENTS


def solve_lean_command(args: argparse.Namespace, out: Output, why: str) -> int:
    from ..modes.lean import solve_lean

    if args.out or args.policy_csv:
        option = "--out" if args.out else "--policy-csv"
        raise ValueError(f"{option}: a lean solution holds board values only; use --mode table")
    if args.preview or args.hold or args.randomizer != "iid":
        raise ValueError("--mode lean: solves the plain game (no --preview, no --hold, no --randomizer bag)")
    if args.method not in (None, "mpi", "vi"):
        raise ValueError(
            f"--method: the lean mode runs modified policy iteration (mpi) or value iteration (vi), got {args.method!r}"
        )
    started = time.perf_counter()
    solution = solve_lean(
        game_rules(args),
        accelerate=args.accelerate,
        discount=args.discount,
        tol=args.tol,
        max_iter=args.max_iter,
        opponent=args.opponent,
        keep="none" if args.method == "vi" else None,
        ties=args.ties,
        max_memory=gib_to_bytes(args.max_memory),
        n_jobs=args.jobs,
        progress=(lambda i, r: print(f"sweep {i}: residual {r:.2e}", file=sys.stderr, flush=True))
        if out.chatty and sys.stderr.isatty()
        else None,
    )
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    rules = solution.rules
    out.result(
        {
            "mode": "lean",
            "why": why,
            "rules": rules_record(rules),
            "discount": solution.discount,
            "opponent": solution.opponent,
            "boards": solution.n_boards,
            "iterations": solution.iterations,
            "evaluation_sweeps": solution.evaluations,
            "method": solution.method,
            "kept": solution.plan.keep,
            "aitken": solution.plan.accelerate,
            "plan": solution.plan.why,
            "residual": solution.residual,
            "error_bound": solution.error_bound,
            "converged": solution.converged,
            "start_value": solution.start_value,
            "seconds": {"total": elapsed, **solution.seconds},
            "peak_memory_bytes": peak,
        }
    )
    out.line(f"mode         lean: {why}")
    out.line(
        f"rules        {rules.width}x{rules.height}, pieces {' '.join(rules.piece_names)}, "
        f"line scores {rules.line_scores}"
    )
    out.line(f"boards       {solution.n_boards:,} reachable boards")
    plan = solution.plan
    out.line(
        f"kept         {plan.keep} ({'' if plan.accelerate else 'no '}Aitken jumps, "
        f"{plan.bytes / 2**30:.2f} GiB estimated): {plan.why}"
    )
    out.line(
        f"solved       {solution.iterations} greedy + {solution.evaluations} evaluation sweeps ({solution.method}), "
        f"residual {solution.residual:.2e}, "
        f"{'converged' if solution.converged else 'NOT converged'}"
    )
    out.line(
        f"start value  {solution.start_value:.9f}  (error <= {solution.error_bound:.1e}; discount "
        f"{solution.discount}, opponent {solution.opponent})"
    )
    out.line(
        f"time         {elapsed:.3f} s (search {solution.seconds['search']:.3f} s, "
        f"solve {solution.seconds['solve']:.3f} s)"
    )
    out.line(f"memory       {peak / 2**30:.2f} GiB peak (the process)")
    return EXIT_OK if solution.converged else EXIT_NOT_CONVERGED
