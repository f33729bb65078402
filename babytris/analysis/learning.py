"""Learning against the exact answer: a learned policy's exact values and regret.

An agent's policy (a Q-table, a network, a rule of thumb) chooses a placement
in each state.  :func:`policy_of` reads that choice over every reachable state
into a policy array; :func:`policy_regret` evaluates the array exactly (policy
evaluation, in the game the exact solution was solved for) and compares it
with the optimum, state by state.

>>> import babytris
>>> optimal = babytris.solve(width=4, height=4)
>>> lowest = babytris.policy_of(optimal, lambda board, piece, legal: min(legal))  # always the first placement
>>> result = babytris.policy_regret(optimal, lowest)
>>> round(result.start_value, 4), round(result.optimal_start_value, 4), round(result.start_regret, 4)
(1.6711, 9.1186, 7.4475)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..engine.transitions import Transitions
from ..results.solution import Solution
from ..solvers.roles import transitions_of
from ..solvers.solve import solve_transitions

__all__ = ["policy_of", "policy_regret", "PolicyRegret"]

#: An agent's choice: called with the board (bits), the piece index and the
#: legal placement numbers (a list, never empty), returns one of them.
Chooser = Callable[[int, int, list[int]], int]


def policy_of(game: Solution | Transitions, choose: Chooser) -> np.ndarray:
    """An agent's choice in every reachable state, as a policy array.

    Args:
        game: a :class:`~babytris.Solution` or :class:`~babytris.Transitions`
            of a game without previews, hold or a bag (a state is a board and
            the piece to place).
        choose: ``choose(board, piece, legal) -> placement number``, asked
            once per state where the piece fits (``legal``, the state's
            placement numbers in order).

    Returns:
        int16 array ``(n_boards, n_pieces)``: the placement chosen in each
        state, -1 where the piece fits nowhere (like :attr:`Solution.policy`;
        the ``player=`` of every solver and evaluation).

    Raises:
        ValueError: for games with previews, hold or a bag, or a choice that
            is not one of the legal placements (naming the state).
    """
    t = transitions_of(game)
    if t.rules.node_tables:
        raise ValueError("policy_of: games with previews, hold or a bag have states beyond (board, piece)")
    if not callable(choose):
        raise ValueError(f"choose must be a callable(board, piece, legal) -> placement number, got {choose!r}")
    P = t.rules.n_pieces
    policy = np.full(t.n_states, -1, dtype=np.int16)
    boards = t.boards.tolist()
    for state in range(t.n_states):
        legal = t.state_placements(state).tolist()
        if not legal:
            continue
        board, piece = boards[state // P], state % P
        chosen = choose(board, piece, legal)
        if isinstance(chosen, (bool, np.bool_)) or not isinstance(chosen, (int, np.integer)) or chosen not in legal:
            raise ValueError(
                f"choose: returned {chosen!r} for piece {t.rules.piece_names[piece]!r} on board {board}; "
                f"legal placements: {legal}"
            )
        policy[state] = chosen
    return policy.reshape(t.n_boards, P)


@dataclass(frozen=True, repr=False, eq=False)
class PolicyRegret:
    """Result of :func:`policy_regret`.

    Attributes:
        values: float64 ``(n_boards, n_pieces)``, the policy's exact values.
        optimal: float64 ``(n_boards, n_pieces)``, the optimum's (the solution's values).
        regret: ``optimal - values``, state by state (>= 0 up to the solves'
            error bounds).
        start_value, optimal_start_value: from the start, as
            :attr:`Solution.start_value` counts it.
        has_choice: bool ``(n_boards, n_pieces)``, the states with two
            legal placements or more (where a policy can go wrong).
    """

    values: np.ndarray
    optimal: np.ndarray
    regret: np.ndarray
    start_value: float
    optimal_start_value: float
    has_choice: np.ndarray

    @property
    def start_regret(self) -> float:
        """The value the policy loses from the start: ``optimal_start_value - start_value``."""
        return self.optimal_start_value - self.start_value

    @property
    def max_regret(self) -> float:
        """The largest regret over the states (0.0 for none)."""
        return float(self.regret.max(initial=0.0))

    @property
    def optimal_share(self) -> float:
        """The share, in [0, 1], of the states with a choice where it loses nothing (within 1e-9)."""
        chosen = self.regret[self.has_choice]
        return float(np.mean(chosen <= 1e-9)) if chosen.size else 1.0

    def __repr__(self) -> str:
        return (
            f"<PolicyRegret start {self.start_value:.6g} vs optimal {self.optimal_start_value:.6g} "
            f"(regret {self.start_regret:.6g}); largest regret in a state {self.max_regret:.6g}; "
            f"optimal in {self.optimal_share:.1%} of the states with a choice>"
        )


def policy_regret(solution: Solution, policy: object, *, tol: float = 1e-10) -> PolicyRegret:
    """The exact values of ``policy`` (placement numbers ``(n_boards,
    n_pieces)``, e.g. from :func:`policy_of`) in the game ``solution`` was
    solved for (its rules, discount, reward and opponent: drawn pieces, or
    against an optimising opponent that opponent's best response to the
    policy), and its regret against the solution, state by state.

    Returns:
        :class:`PolicyRegret`.
    """
    if not isinstance(solution, Solution) or solution.player != "optimal":
        # (minavg's and gaps' players place at random: there is no optimum to regret)
        raise ValueError("solution: the exact solution of an optimal player (babytris.solve) to compare with")
    # (a given opponent as the Solution itself: its piece choices and the opening it was given)
    opponent: object = solution.opponent
    if opponent == "given":
        opponent = solution
    elif opponent in ("minimax", "best_response"):  # (the piece worst for this policy, as worst for the optimum)
        opponent = "best_response"
    evaluated = solve_transitions(
        solution.transitions,
        discount=solution.discount,
        tol=tol,
        opponent=opponent,  # type: ignore[arg-type]
        player=policy,  # type: ignore[arg-type]
        reward=solution.reward,
    )
    return PolicyRegret(
        evaluated.values,
        solution.values,
        solution.values - evaluated.values,
        evaluated.start_value,
        solution.start_value,
        (np.diff(solution.transitions.offsets) >= 2).reshape(solution.values.shape),
    )
