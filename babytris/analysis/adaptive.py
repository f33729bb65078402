"""An adaptive player against an unknown opponent: EXP3 over exact policies.

The player does not know which opponent it faces.  It holds several exact
policies (*experts*: optimal against random pieces, robust, best responses
to each known opponent) and before each placement lets one of them place the
piece, chosen by EXP3 (Auer, Cesa-Bianchi, Freund and Schapire, "The
nonstochastic multiarmed bandit problem", SIAM J. Comput. 32(1), 2002,
figure 1): with ``K`` experts and ``gamma`` in (0, 1], expert ``i`` is drawn
with chance ``p_i = (1 - gamma) w_i / sum(w) + gamma / K``; the placement's
points, scaled to [0, 1] by the largest line score, are the reward ``x``; the
drawn expert's weight is multiplied by ``exp(gamma * x / (p_i * K))``.  The
default ``gamma`` is their corollary 3.2's, ``min(1, sqrt(K ln K / ((e - 1)
g)))`` with ``g`` the number of placements (a bound on any expert's scaled
points), for which they prove a regret of at most ``2 sqrt(e - 1) sqrt(g K ln
K)`` against the best expert *on a fixed sequence of rewards*.

Here the rewards are not a fixed sequence: a placement changes the board the
next one is made on.  So the regret measured is against each expert playing
alone (the *best fixed policy in hindsight*): the same number of placements,
the same pieces drawn (common random numbers), a new game from the start
board whenever the piece fits nowhere.  Nothing proves the bound above for
this regret; :func:`exp3` measures it, and
:func:`babytris.draw.pictures.plot_regret` draws it.

>>> import babytris
>>> from babytris.analysis.adaptive import exp3, standard_experts
>>> t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
>>> experts = standard_experts(t)
>>> list(experts)[:3]
['optimal', 'max-min', 'best response to minimax 0.1']
>>> result = exp3(t, experts, "random", n_placements=2000, seed=1)
>>> result.best_expert
'optimal'
>>> bool(result.regret < result.bound)
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.transitions import Transitions
from ..game.validation import check_int, check_number
from ..results.solution import Solution
from ..solvers.roles import Opponent, opponent_pieces, player_rows, transitions_of
from ..solvers.solve import solve_transitions

__all__ = ["Exp3Result", "exp3", "standard_experts", "standard_opponents", "exp3_study"]


@dataclass(frozen=True, repr=False)
class Exp3Result:
    """One EXP3 run and each expert's run alone.

    Attributes:
        experts: the experts' names, in order.
        opponent: the opponent's name.
        points: float64 ``(n_placements,)``: EXP3's points at each placement.
        chosen: int64 ``(n_placements,)``: the expert drawn for each placement.
        probabilities: float64 ``(n_placements, K)``: the chances it was drawn with.
        expert_points: float64 ``(K, n_placements)``: each expert's points
            at each placement, playing alone on the same pieces.
        games: int: the games EXP3 played (1 + the times a piece fit nowhere).
        gamma: the exploration rate used.
        scale: the points of a placement that count as reward 1.
        block: placements per round (one draw of an expert, one update).
    """

    experts: tuple[str, ...]
    opponent: str
    points: np.ndarray
    chosen: np.ndarray
    probabilities: np.ndarray
    expert_points: np.ndarray
    games: int
    gamma: float
    scale: float
    block: int = 1

    @property
    def n_placements(self) -> int:
        return len(self.points)

    @property
    def best_expert(self) -> str:
        """The name of the expert with the most points alone."""
        return self.experts[int(np.argmax(self.expert_points.sum(axis=1)))]

    @property
    def regret(self) -> float:
        """The best expert's points alone less EXP3's, over all placements."""
        return float(self.expert_points.sum(axis=1).max() - self.points.sum())

    def regret_curve(self) -> np.ndarray:
        """float64 ``(n_placements,)``: the regret after each placement (the best
        expert's points alone so far, the best at that time, less EXP3's)."""
        return np.cumsum(self.expert_points, axis=1).max(axis=0) - np.cumsum(self.points)

    @property
    def bound(self) -> float:
        """Auer et al.'s regret bound in points for these settings, ``2 sqrt(e -
        1) sqrt(g K ln K)`` times the scale and the block, ``g`` the rounds
        (proved for a fixed reward sequence only: see the module docstring)."""
        return float(self.bound_curve()[-1])

    def bound_curve(self) -> np.ndarray:
        """float64 ``(n_placements,)``: :attr:`bound` after each placement (its rounds so far)."""
        K, steps = len(self.experts), np.arange(1, self.n_placements + 1)
        if K == 1:
            return np.zeros(self.n_placements)
        rounds = np.ceil(steps / self.block)
        return 2 * math.sqrt(math.e - 1) * np.sqrt(rounds * K * math.log(K)) * self.scale * self.block

    def __repr__(self) -> str:
        return (
            f"<Exp3Result against {self.opponent}: {self.n_placements:,} placements, {self.points.sum():,.0f} points; "
            f"best expert {self.best_expert!r} {self.expert_points.sum(axis=1).max():,.0f}; "
            f"regret {self.regret:,.1f} (bound {self.bound:,.0f})>"
        )


def exp3(
    game: Transitions | Solution,
    experts: Mapping[str, Solution | np.ndarray],
    opponent: Opponent,
    *,
    n_placements: int = 10_000,
    gamma: float | None = None,
    block: int = 1,
    seed: int = 0,
    opponent_name: str | None = None,
) -> Exp3Result:
    """EXP3 over ``experts`` against ``opponent`` for ``n_placements`` placements
    (see :mod:`babytris.analysis.adaptive`), and each expert alone on the same pieces.

    Args:
        game: the move table (or a Solution of it).  Plain games: no
            previews or hold.
        experts: ``{name: policy}``, each a :class:`Solution` with a player
            policy or an int array ``(n_boards, n_pieces)`` of placement
            numbers; at least one.
        opponent: ``"random"``, a :class:`Solution` solved against an
            opponent (its piece choices) or an int array ``(n_boards,)``.
        n_placements: placements, in [1, 10**7]; a game whose piece fits
            nowhere is followed by a new one from the start board.
        gamma: exploration rate in (0, 1]; default Auer et al.'s
            corollary 3.2 value for ``ceil(n_placements / block)`` rounds.
        block: placements per round, in [1, n_placements]: the expert drawn
            places ``block`` pieces in a row, and their points, scaled by
            ``block`` times the largest line score, are the round's reward.
        seed: an integer in [0, 2**63): the pieces drawn (shared by every
            run) and EXP3's draws come from generators seeded with it.
        opponent_name: the name to report (default: from ``opponent``).

    Returns:
        :class:`Exp3Result`.
    """
    t = transitions_of(game)
    if t.rules.node_tables:
        raise ValueError("exp3: plain games only (no previews, hold or bag)")
    n_placements = check_int("n_placements", n_placements, 1, 10**7)
    seed = check_int("seed", seed, 0, 2**63 - 1)
    if not isinstance(experts, Mapping) or not experts:
        raise ValueError(f"experts must be a non-empty mapping of names to policies, got {experts!r}")
    rows: list[np.ndarray] = []
    for expert, policy in experts.items():
        found = player_rows(t, policy)
        if found is None:
            raise ValueError(f"experts: {expert!r} must be a Solution with a policy or a policy array, not 'random'")
        rows.append(found)
    K = len(rows)
    block = check_int("block", block, 1, n_placements)
    rounds = math.ceil(n_placements / block)
    if gamma is None:
        gamma = min(1.0, math.sqrt(K * math.log(K) / ((math.e - 1) * rounds))) if K > 1 else 1.0
    gamma = check_number("gamma", gamma, 0.0, 1.0, open_low=True)
    pieces = opponent_pieces(t, opponent)
    name = opponent_name or (opponent if isinstance(opponent, str) else getattr(opponent, "opponent", "given"))
    scale = max(max(t.rules.line_scores), 1e-300)

    draws = np.random.default_rng([seed, 0]).random(n_placements)  # the pieces, shared by every run
    chances = np.cumsum(t.rules.probabilities)
    chances[-1] = 1.0
    game_runner = _Runner(t, pieces, draws, chances)
    expert_points = np.stack([game_runner.alone(r) for r in rows])

    rng = np.random.default_rng([seed, 1])
    log_w = np.zeros(K)
    points = np.empty(n_placements)
    chosen = np.empty(n_placements, dtype=np.int64)
    probabilities = np.empty((n_placements, K))
    game_runner.reset()
    for first in range(0, n_placements, block):
        w = np.exp(log_w - log_w.max())
        p = (1 - gamma) * w / w.sum() + gamma / K
        i = int(min(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"), K - 1))
        steps = range(first, min(first + block, n_placements))
        points[steps.start : steps.stop] = [game_runner.step(rows[i], step) for step in steps]
        chosen[steps.start : steps.stop], probabilities[steps.start : steps.stop] = i, p
        x = points[steps.start : steps.stop].sum() / (scale * block)
        log_w[i] += gamma * x / (p[i] * K)
    return Exp3Result(
        experts=tuple(experts),
        opponent=str(name),
        points=points,
        chosen=chosen,
        probabilities=probabilities,
        expert_points=expert_points,
        games=game_runner.games,
        gamma=float(gamma),
        scale=float(scale),
        block=block,
    )


class _Runner:
    """Placements on the move table: the opponent's piece (or the piece drawn
    by ``draws[step]``), the given player's move, a new game when it fits nowhere."""

    def __init__(self, t: Transitions, pieces: np.ndarray | None, draws: np.ndarray, chances: np.ndarray) -> None:
        self.t, self.pieces, self.draws, self.chances = t, pieces, draws, chances
        self.n_pieces = t.rules.n_pieces
        self.start = t.start_index
        self.scores = np.asarray(t.rules.line_scores, dtype=np.float64)
        self.offsets, self.next_board, self.lines = t.offsets, t.next_board, t.lines
        self.reset()

    def reset(self) -> None:
        self.board, self.games = self.start, 1

    def step(self, rows: np.ndarray, step: int) -> float:
        for _ in range(2):  # a game over starts a new game on the same piece draw
            if self.pieces is None:
                piece = int(np.searchsorted(self.chances, self.draws[step], side="right"))
            else:
                piece = int(self.pieces[self.board])
            s = self.board * self.n_pieces + piece
            row = int(rows[s])
            if row >= 0:
                move = int(self.offsets[s]) + row
                self.board = int(self.next_board[move])
                return float(self.scores[self.lines[move]])
            self.board, self.games = self.start, self.games + 1
        raise ValueError("exp3: the piece fits nowhere even on the start board")

    def alone(self, rows: np.ndarray) -> np.ndarray:
        self.reset()
        return np.array([self.step(rows, step) for step in range(len(self.draws))])


def standard_experts(
    t: Transitions, *, discount: float = 0.9, opponents: Mapping[str, Any] | None = None
) -> dict[str, Solution]:
    """The experts of the course projects' third question: ``optimal``
    (against random pieces), ``max-min`` (against the minimax opponent) and a
    best response (solved with ``discount`` against that opponent's piece
    choices) to each of ``opponents`` but random (default:
    :func:`standard_opponents`).

    Returns:
        ``{name: Solution}``.
    """
    experts: dict[str, Solution] = {
        "optimal": solve_transitions(t, discount=discount),
        "max-min": solve_transitions(t, discount=discount, opponent="minimax"),
    }
    for name, opponent in (standard_opponents(t) if opponents is None else opponents).items():
        if isinstance(opponent, Solution) and opponent.opponent_policy is not None:
            experts[f"best response to {name}"] = solve_transitions(
                t, discount=discount, opponent=opponent.opponent_policy
            )
    return experts


def standard_opponents(t: Transitions, discounts: tuple[float, ...] = (0.1, 0.9)) -> dict[str, Any]:
    """The opponents of :func:`~babytris.standard_tournament`: ``random``, and
    ``minimax``, ``minavg``, ``gaps`` solved with each discount.

    Returns:
        ``{name: "random" or Solution}``.
    """
    opponents: dict[str, Any] = {"random": "random"}
    for d in discounts:
        for model in ("minimax", "minavg", "gaps"):
            opponents[f"{model} {d:g}"] = solve_transitions(t, discount=d, opponent=model)
    return opponents


def exp3_study(t: Transitions, *, n_placements: int = 10_000, block: int = 1, seed: int = 0) -> dict[str, Exp3Result]:
    """EXP3 over :func:`standard_experts` against each of
    :func:`standard_opponents`, ``n_placements`` placements each in rounds of ``block``.

    Returns:
        ``{opponent name: Exp3Result}``.
    """
    opponents = standard_opponents(t)
    experts = standard_experts(t, opponents=opponents)
    return {
        name: exp3(t, experts, opponent, n_placements=n_placements, block=block, seed=seed, opponent_name=name)
        for name, opponent in opponents.items()
    }
