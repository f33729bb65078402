"""Tie rules: which of several equally good moves (or pieces) a solved side takes.

Values do not depend on it, but what a policy scores against another side
does: the max-min player's points against random pieces move with the rule
its ties were broken by.  A solve records the moves within
:attr:`~babytris.Solution.tie_slack` of the best as tied (what its values can
tell apart) and takes one by the rule:

==============  ============================================================
``"first"``     the first in the row's order; the default
``"last"``      the last
``"random"``    one drawn uniformly among the tied, seeded by ``tie_seed``
==============  ============================================================

A row lists a piece's moves by placement number (pieces by index); with hold,
the piece's own placements, then the held piece's (a swap), then the hold.
An optimising opponent's opening queue (previews, :meth:`Solution.opening`)
is taken among the tied start rows by the same rule.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..results.solution import Solution

__all__ = ["TIE_RULES", "check_ties", "break_ties"]

#: The tie rules a solve takes.
TIE_RULES = ("first", "last", "random")


def check_ties(ties: object, tie_seed: object) -> tuple[str, int | None]:
    """``(ties, tie_seed)`` checked: a rule of :data:`TIE_RULES`; a seed in
    [0, 2**63) with ``"random"`` (numpy integers accepted), else None."""
    if not isinstance(ties, str) or ties not in TIE_RULES:
        raise ValueError(f"ties must be one of {', '.join(map(repr, TIE_RULES))}, got {ties!r}")
    if ties != "random":
        if tie_seed is not None:
            raise ValueError(f"tie_seed: only ties='random' draws, got tie_seed={tie_seed!r} with ties={ties!r}")
        return ties, None
    if isinstance(tie_seed, bool) or not isinstance(tie_seed, (int, np.integer)) or not 0 <= tie_seed < 2**63:
        raise ValueError(f"tie_seed must be an integer in [0, 2**63) with ties='random', got {tie_seed!r}")
    return ties, int(tie_seed)


def break_ties(solution: Solution, ties: str, tie_seed: int | None) -> Solution:
    """``solution`` with its player's moves and its opponent's pieces taken
    among the tied by ``ties`` (``"first"``: returned as it is, the solve's
    own choice).

    A move's worth is its reward plus ``discount`` times the board value
    after it (:attr:`~babytris.Solution.board_values`); the moves within
    ``tie_slack`` of the best are tied.  A piece's worth to the opponent is
    the state's value (the least for ``"minimax"`` and ``"minavg"``, the most
    for ``"gaps"``).

    Returns:
        a new :class:`~babytris.Solution` with ``ties`` and ``tie_seed`` set.
    """
    if ties == "first":
        return solution
    t = solution.transitions
    if not t.placement_stored:
        raise ValueError("ties: tables that do not store placement numbers (4x7 and up) break ties by 'first' only")
    rng = np.random.default_rng(tie_seed)
    slack = solution.tie_slack
    policy = solution.policy
    if solution.player == "optimal":
        policy = _moves(solution, ties, rng, slack)
    pieces, opening_row = solution.opponent_policy, solution.opening_row
    if solution.opponent in ("minimax", "best_response", "minavg", "gaps"):
        pieces = _pieces(solution, ties, rng, slack)
        opening_row = _opening(solution, ties, rng, slack)
    return dataclasses.replace(
        solution, policy=policy, opponent_policy=pieces, opening_row=opening_row, ties=ties, tie_seed=tie_seed
    )


def _opening(solution: Solution, ties: str, rng: np.random.Generator, slack: float) -> int | None:
    """The start row an optimising opponent opens with, by the rule (None: a single start row)."""
    rows, _ = solution.transitions.start_nodes()
    if len(rows) < 2:
        return solution.opening_row
    values = solution.board_values[rows] * (-1.0 if solution.opponent == "gaps" else 1.0)
    tied = np.flatnonzero(values <= values.min() + slack)
    return int(rows[tied[-1] if ties == "last" else rng.choice(tied)])


def _moves(solution: Solution, ties: str, rng: np.random.Generator, slack: float) -> np.ndarray:
    """The placement numbers ``(n_boards, n_pieces)`` of the moves the rule takes among the tied."""
    t = solution.transitions
    counts = np.diff(t.offsets).astype(np.int64)
    live = np.flatnonzero(counts > 0)
    state = np.repeat(np.arange(t.n_states), counts)
    worth = _move_rewards(solution) + solution.discount * solution.board_values[t.next_board]
    best = np.full(t.n_states, -np.inf)
    np.maximum.at(best, state, worth)
    tied = worth >= best[state] - slack
    key = np.arange(t.n_moves, dtype=np.float64) if ties == "last" else rng.random(t.n_moves)
    key = np.where(tied, key, -1.0)
    chosen = np.full(t.n_states, -1, dtype=np.int64)
    order = np.lexsort((key, state))  # by state, then key: each state's last entry is its pick
    last = np.cumsum(counts)[live] - 1
    chosen[live] = order[last]
    policy = np.full(t.n_states, -1, dtype=np.int16)
    policy[live] = t.placement[chosen[live]]
    return policy.reshape(solution.values.shape)


def _move_rewards(solution: Solution) -> np.ndarray:
    """Each move's reward: the solution's own (a weighted reward, holes for gaps) or its points."""
    from .roles import Roles

    t = solution.transitions
    own = Roles(solution.opponent, solution.player, 0, 0, reward=solution.reward).move_rewards(t)
    return np.asarray(solution.rules.line_scores, dtype=np.float64)[t.lines] if own is None else own


def _pieces(solution: Solution, ties: str, rng: np.random.Generator, slack: float) -> np.ndarray:
    """The piece ``(n_boards,)`` the rule takes among those tied for the opponent."""
    values = solution.values if solution.opponent != "gaps" else -solution.values
    can_come = solution.transitions.draw_chances() > 0
    cost = np.where(can_come, values, np.inf)
    tied = cost <= cost.min(axis=1, keepdims=True) + slack
    key = np.broadcast_to(np.arange(values.shape[1], dtype=np.float64), values.shape)
    if ties == "random":
        key = rng.random(values.shape)
    return np.argmax(np.where(tied, key, -1.0), axis=1).astype(np.int16)
