"""solve(): optimal play against randomly drawn pieces, by value iteration."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from . import _core
from ._checks import METHODS, check_solver_args, make_rules
from .rules import Rules
from .solution import Solution
from .states import DEFAULT_MAX_MEMORY, Transitions, enumerate_boards

__all__ = ["solve", "solve_transitions", "METHODS"]

# Bytes the solver keeps per (board, piece) state: value (float64) and move (int16).
SOLVER_BYTES_PER_STATE = 8 + 2


def solve(
    rules: Rules | None = None,
    /,
    *,
    discount: float = 0.9,
    tol: float = 1e-8,
    max_iter: int = 1000,
    method: str = "vi",
    accelerate: bool = True,
    eval_sweeps: int = 4,
    n_jobs: int | None = None,
    max_memory: int = DEFAULT_MAX_MEMORY,
    **rule_fields: Any,
) -> Solution:
    """Optimal values and policy for a player facing randomly drawn pieces.

    Solves ``V(b, p) = max_a [points(a) + discount * sum_q prob(q) V(b', q)]``
    over every (board, piece) reachable from the empty board, with ``V = 0``
    where piece ``p`` fits nowhere (game over).

    Args:
        rules: a :class:`Rules`; or give its fields as keywords instead,
            e.g. ``solve(width=4, height=5)``.
        discount: in [0, 1).
        tol: stop once a Bellman optimality sweep changes no value by more
            than ``tol`` (> 0).
        max_iter: at most this many optimality sweeps (>= 1).
        method: ``"vi"`` (default): value iteration; ``"mpi"``: modified
            policy iteration, where each optimality sweep is followed by
            ``eval_sweeps`` cheaper sweeps evaluating its greedy policy.  Both
            sweep in place (Gauss-Seidel), largest boards first, and stop on
            the same test, so they agree to within the tolerance.
        accelerate: for ``"vi"``, extrapolate along the slowest mode once the
            residual falls by a steady ratio (Aitken); about halves the sweeps.
        eval_sweeps: policy-evaluation sweeps per iteration for ``"mpi"`` (>= 0).
        n_jobs: threads building the move table (default: every core); the
            result does not depend on it.  Sweeps run on one thread: their
            Gauss-Seidel order is what makes them converge fast.
        max_memory: refuse, with :class:`~babytris.MemoryLimitError`, work
            needing more bytes than this (default 8 GiB).

    Returns:
        :class:`Solution` with ``values`` of shape ``(n_boards, n_pieces)``.
    """
    rules = make_rules(rules, rule_fields)
    check_solver_args(discount, tol, max_iter, method, eval_sweeps)
    transitions = enumerate_boards(
        rules, max_memory=max_memory, n_jobs=n_jobs, solver_bytes_per_state=SOLVER_BYTES_PER_STATE
    )
    return solve_transitions(
        transitions,
        discount=discount,
        tol=tol,
        max_iter=max_iter,
        method=method,
        accelerate=accelerate,
        eval_sweeps=eval_sweeps,
    )


def solve_transitions(
    transitions: Transitions,
    *,
    discount: float = 0.9,
    tol: float = 1e-8,
    max_iter: int = 1000,
    method: str = "vi",
    accelerate: bool = True,
    eval_sweeps: int = 4,
) -> Solution:
    """:func:`solve` on an already enumerated game graph (skips the search)."""
    check_solver_args(discount, tol, max_iter, method, eval_sweeps)
    rules = transitions.rules
    n, n_pieces = transitions.n_boards, rules.n_pieces
    values = np.zeros(n * n_pieces)
    board_values = np.zeros(n)
    policy = np.full(n * n_pieces, -1, dtype=np.int16)
    started = time.perf_counter()
    sweeper = _core.Sweeper(
        transitions.offsets,
        transitions.next_board,
        transitions.lines,
        np.asarray(rules.line_scores, dtype=np.float64),
        np.asarray(rules.probabilities, dtype=np.float64),
        float(discount),
        values,
        board_values,
        policy,
    )
    if method == "mpi":
        residuals = _modified_policy_iteration(sweeper, tol, max_iter, eval_sweeps)
    else:
        residuals = _value_iteration(sweeper, values, board_values, tol, max_iter, accelerate=accelerate)
    iterations = len(residuals)
    # The policy holds each move's offset in its row; report the placement number.
    offsets = transitions.offsets[:-1]
    has_move = policy >= 0
    placement = np.full(n * n_pieces, -1, dtype=np.int16)
    placement[has_move] = transitions.placement[offsets[has_move] + policy[has_move]]
    residual = residuals[-1] if residuals else 0.0
    return Solution(
        rules=rules,
        discount=float(discount),
        values=values.reshape(n, n_pieces),
        policy=placement.reshape(n, n_pieces),
        iterations=iterations,
        residual=residual,
        converged=residual <= tol,
        residuals=np.array(residuals),
        transitions=transitions,
        method=method,
        tol=float(tol),
        max_iter=int(max_iter),
        seconds={"enumerate": transitions.seconds, "solve": time.perf_counter() - started},
    )


def _modified_policy_iteration(sweeper: _core.Sweeper, tol: float, max_iter: int, eval_sweeps: int) -> list[float]:
    """Greedy sweeps, each followed (until converged) by ``eval_sweeps`` sweeps
    evaluating its policy; returns the greedy sweeps' residuals."""
    residuals: list[float] = []
    while len(residuals) < max_iter:
        residuals.append(sweeper.sweep(True))
        if residuals[-1] <= tol:
            break
        for _ in range(eval_sweeps):
            sweeper.sweep(False)
    return residuals


# Extrapolate when the last two residual ratios agree this closely...
RATIO_AGREEMENT = 0.02
# ... and at most once every this many sweeps.
EXTRAPOLATION_GAP = 3
# Jumps that may raise the residual before acceleration is given up.
MAX_MISSED_JUMPS = 3


def _value_iteration(
    sweeper: _core.Sweeper, values: np.ndarray, board_values: np.ndarray, tol: float, max_iter: int,
    *, accelerate: bool
) -> list[float]:
    """Greedy sweeps until one changes no value by more than ``tol``.

    With ``accelerate``, once the residual shrinks by a steady ratio ``r`` per
    sweep (one slow mode dominates the error), jump ahead along the last
    change: ``V += r / (1 - r) * (V - V_before)`` (Aitken extrapolation).  A
    jump after which the residual grows counts as a miss; after
    ``MAX_MISSED_JUMPS`` misses acceleration is off for good, so the run ends
    as plain value iteration would, after a few wasted sweeps at most.
    A jump is never the last step: the loop stops only on a sweep's residual,
    the plain value iteration's test.
    """
    residuals: list[float] = []
    values_before = np.zeros_like(values) if accelerate else None
    board_values_before = np.zeros_like(board_values) if accelerate else None
    last_jump = -EXTRAPOLATION_GAP
    missed = 0
    while len(residuals) < max_iter:
        residuals.append(sweeper.sweep(True, values_before, board_values_before))
        if residuals[-1] <= tol:
            break
        if not accelerate or len(residuals) < 3:
            continue
        if len(residuals) == last_jump + 1 and residuals[-1] > residuals[-2]:
            missed += 1  # the jump overshot: the error is not one steady mode (yet)
            if missed == MAX_MISSED_JUMPS:
                accelerate = False
                values_before = board_values_before = None
            continue
        if len(residuals) - last_jump < EXTRAPOLATION_GAP:
            continue
        r0, r1, r2 = residuals[-3:]
        if r0 <= 0 or r1 <= 0:
            continue
        ratio, previous = r2 / r1, r1 / r0
        if ratio < 0.99 and abs(ratio - previous) <= RATIO_AGREEMENT * ratio:
            step = ratio / (1.0 - ratio)
            for now, before in ((values, values_before), (board_values, board_values_before)):
                np.subtract(now, before, out=before)
                before *= step
                now += before
            last_jump = len(residuals)
    return residuals
