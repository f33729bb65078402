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
    method: str = "mpi",
    eval_sweeps: int = 16,
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
        method: ``"mpi"`` (default): after each optimality sweep,
            ``eval_sweeps`` cheap sweeps evaluating its greedy policy; ``"vi"``:
            plain value iteration.  Both are in place (Gauss-Seidel) and stop on
            the same test, so they agree to within the tolerance.
        eval_sweeps: policy-evaluation sweeps per iteration for ``"mpi"`` (>= 0).
        max_memory: refuse, with :class:`~babytris.MemoryLimitError`, work
            needing more bytes than this (default 8 GiB).

    Returns:
        :class:`Solution` with ``values`` of shape ``(n_boards, n_pieces)``.
    """
    rules = make_rules(rules, rule_fields)
    check_solver_args(discount, tol, max_iter, method, eval_sweeps)
    transitions = enumerate_boards(rules, max_memory=max_memory, solver_bytes_per_state=SOLVER_BYTES_PER_STATE)
    return solve_transitions(
        transitions, discount=discount, tol=tol, max_iter=max_iter, method=method, eval_sweeps=eval_sweeps
    )


def solve_transitions(
    transitions: Transitions,
    *,
    discount: float = 0.9,
    tol: float = 1e-8,
    max_iter: int = 1000,
    method: str = "mpi",
    eval_sweeps: int = 16,
) -> Solution:
    """:func:`solve` on an already enumerated game graph (skips the search)."""
    check_solver_args(discount, tol, max_iter, method, eval_sweeps)
    rules = transitions.rules
    n, n_pieces = transitions.n_boards, rules.n_pieces
    values = np.zeros(n * n_pieces)
    board_values = np.zeros(n)
    policy = np.full(n * n_pieces, -1, dtype=np.int16)
    residuals = np.zeros(max_iter)
    started = time.perf_counter()
    iterations = _core.value_iteration(
        transitions.offsets,
        transitions.next_board,
        transitions.lines,
        np.asarray(rules.line_scores, dtype=np.float64),
        np.asarray(rules.probabilities, dtype=np.float64),
        float(discount),
        float(tol),
        int(max_iter),
        int(eval_sweeps) if method == "mpi" else 0,
        True,  # largest boards first: a move without a clear leads to a larger board
        values,
        board_values,
        policy,
        residuals,
    )
    # The policy holds each move's offset in its row; report the placement number.
    offsets = transitions.offsets[:-1]
    has_move = policy >= 0
    placement = np.full(n * n_pieces, -1, dtype=np.int16)
    placement[has_move] = transitions.placement[offsets[has_move] + policy[has_move]]
    residual = float(residuals[iterations - 1]) if iterations else 0.0
    return Solution(
        rules=rules,
        discount=float(discount),
        values=values.reshape(n, n_pieces),
        policy=placement.reshape(n, n_pieces),
        iterations=iterations,
        residual=residual,
        converged=residual <= tol,
        residuals=residuals[:iterations].copy(),
        transitions=transitions,
        method=method,
        tol=float(tol),
        max_iter=int(max_iter),
        seconds={"enumerate": transitions.seconds, "solve": time.perf_counter() - started},
    )
