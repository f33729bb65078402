"""``babytris solve`` in the lean mode (:mod:`babytris.modes.lean`): chosen with
``--mode lean``, or by ``--mode auto`` where the move table would not fit; the
lean solve of the options given, which ``babytris board`` builds too."""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
from typing import TYPE_CHECKING

from ..engine.resources import gib_to_bytes
from ..modes.checkpoint import DEFAULT_CHECKPOINT_SECONDS
from .common import EXIT_NOT_CONVERGED, EXIT_OK, Output, rules_record
from .options import conflicts, game_rules

if TYPE_CHECKING:
    from ..modes.lean import LeanSolution

__all__ = ["lean_applies", "lean_solution", "solve_lean_command", "SweepProgress"]


def lean_applies(args: argparse.Namespace) -> bool:
    """Whether the lean mode can solve what ``babytris solve`` was asked."""
    from ..modes.lean import LEAN_MAX_CELLS, LEAN_OPPONENTS

    plain = not (
        args.preview
        or args.hold
        or args.policy_csv
        or args.method in ("jacobi", "strategy")
        or args.ties != "first"
        or args.moves != "hard"
        or args.randomizer != "iid"
    )
    return plain and args.width * args.height <= LEAN_MAX_CELLS and args.opponent in LEAN_OPPONENTS


def lean_solution(
    args: argparse.Namespace,
    out: Output,
    *,
    checkpoint: str | None = None,
    checkpoint_seconds: float = DEFAULT_CHECKPOINT_SECONDS,
) -> LeanSolution:
    """:func:`~babytris.modes.lean.solve_lean` of the game and solver options
    ``args`` give (``babytris solve``'s and ``babytris board``'s: one reading
    of them), with a line of progress a greedy sweep on a terminal; the
    checkpoint is ``babytris solve``'s alone.  Returns the :class:`~babytris.LeanSolution`."""
    from ..modes.lean import solve_lean

    return solve_lean(
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
        progress=SweepProgress(args.tol) if out.chatty and sys.stderr.isatty() else None,
        checkpoint=checkpoint,
        checkpoint_seconds=checkpoint_seconds,
    )


def solve_lean_command(args: argparse.Namespace, out: Output, why: str) -> int:
    if args.policy_csv:
        raise ValueError(
            "--policy-csv: a lean solution holds board values only (its moves are computed on demand, not "
            "every state's at once); use --mode table (or LeanSolution.policy_table(boards) in Python)"
        )
    if args.preview or args.hold or args.randomizer != "iid":
        raise ValueError("--mode lean: solves the plain game (no --preview, no --hold, no --randomizer bag)")
    if args.method not in (None, "mpi", "vi"):
        raise ValueError(
            f"--method: the lean mode runs modified policy iteration (mpi) or value iteration (vi), got {args.method!r}"
        )
    if args.checkpoint and args.method == "vi":
        raise ValueError("--checkpoint: only modified policy iteration checkpoints; not with --method vi")
    if args.mode == "lean":
        mode = "--mode lean"
    elif args.checkpoint:
        mode = "--checkpoint (lean mode only)"
    else:
        mode = "the lean mode (--mode auto: the move table would not fit)"
    conflicts(
        args,
        {"ties": "--ties", "tie_seed": "--tie-seed"},
        mode,
        "a lean solve keeps the values only, no policy whose ties to break",
    )
    started = time.perf_counter()
    seconds = DEFAULT_CHECKPOINT_SECONDS if args.checkpoint_seconds is None else args.checkpoint_seconds
    solution = lean_solution(args, out, checkpoint=args.checkpoint, checkpoint_seconds=seconds)
    elapsed = time.perf_counter() - started
    if args.out:
        solution.save(args.out)
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
            "checkpoint": args.checkpoint,
            "resumed_after_greedy_sweeps": solution.resumed,
            "saved": args.out,
        }
    )
    out.line(f"mode         lean: {why}")
    out.line(
        f"rules        {rules.width}x{rules.height}, pieces {' '.join(rules.piece_names)}, "
        f"line scores {rules.line_scores}"
    )
    out.line(f"boards       {solution.n_boards:,} reachable boards")
    if args.checkpoint:
        out.line(
            f"checkpoint   {args.checkpoint}: "
            + (f"went on after greedy sweep {solution.resumed}" if solution.resumed else "started afresh")
        )
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
    if args.out:
        out.line(f"saved        {args.out} (read it back with babytris.load_lean)")
    return EXIT_OK if solution.converged else EXIT_NOT_CONVERGED


class SweepProgress:
    """``progress(iteration, residual)`` for a long lean solve: a line on
    stderr after each greedy sweep with its residual and, once the residuals
    fall, an estimate of the time left (the sweeps to ``tol`` at the last
    ratio, each as long as the last round of sweeps)."""

    def __init__(self, tol: float, stream=None) -> None:
        self.tol = tol
        self.stream = stream
        self.last: tuple[float, float] | None = None  # (perf_counter, residual) at the last sweep

    def __call__(self, iteration: int, residual: float) -> None:
        now = time.perf_counter()
        line = f"greedy sweep {iteration}: residual {residual:.2e}"
        if self.last is not None and self.tol < residual < self.last[1]:
            sweeps = math.ceil(math.log(self.tol / residual) / math.log(residual / self.last[1]))
            line += f", about {sweeps * (now - self.last[0]):.0f} s left ({sweeps} greedy sweeps)"
        self.last = (now, residual)
        print(line, file=self.stream or sys.stderr, flush=True)
