"""Playouts and exact finite-horizon evaluation: the points a player scores in
n placements, against randomly drawn pieces or an opponent choosing them.

>>> import babytris
>>> solution = babytris.solve(width=4, height=4)
>>> babytris.play(solution, n_placements=1000, n_games=100, seed=1)
<PlayResult 100 games of up to 1,000 placements: mean 1,106.36 ± 0.7428 points, 1.10636 per placement, 0 over early>
>>> babytris.expected_points(solution, n_placements=1000)     # exact: the mean above converges to it
1106.935335127819

Who plays is given the same way to both:

- ``player``: ``"optimal"`` (the game's own solution policy), ``"random"``
  (uniform over the legal placements), another :class:`Solution` (its policy),
  or an int array ``(n_boards, n_pieces)`` of placement numbers (-1 exactly
  where the piece fits nowhere), like :attr:`Solution.policy`.
- ``opponent``: ``"random"`` (pieces drawn with the rules' probabilities),
  ``"solution"`` (the game's solution picks them: :attr:`Solution.opponent_policy`),
  another :class:`Solution` solved against an opponent (its piece choices),
  or an int array ``(n_boards,)`` of piece indices.

A :class:`~babytris.LeanSolution` or a sharded solution (the live shards of
:func:`~babytris.solve_sharded`, a :class:`~babytris.ShardedValues` directory)
is taken as the game its policy plays (``played_game()``: every board the
policy reaches, its one move a state), with the player ``"optimal"`` and the
opponent ``"random"``, ``"solution"``, ``"best_response"`` or, at its discount, its own game's ``"minimax"``.

Games start on the rules' start board (the empty board by default) and count points, undiscounted, for at most
``n_placements`` placements; a game ends early when the piece fits nowhere (or tops out, ``Rules(top_out=True)``).
Only points count here, never a :class:`~babytris.Reward` (its ``loss`` included), except in
:func:`evaluate` with ``discount`` and ``reward``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..engine.resources import resolve_n_jobs
from ..engine.reward import Reward
from ..engine.transitions import HOLD_MOVE, Transitions
from ..game.bags import bag_chances
from ..game.validation import check_int
from ..modes.lean import LeanSolution
from ..modes.lean_policy import check_sides
from ..modes.sharded.lookups import ShardLookups
from ..results.solution import Solution
from ..solvers.match import Match
from ..solvers.roles import (
    BEST_RESPONSE,
    Opponent,
    Player,
    is_named,
    opponent_pieces,
    policy_rows,
    transitions_of,
)
from ..solvers.solve import solve_transitions
from . import _play
from .horizon import MAX_PLACEMENTS, horizon_values

__all__ = [
    "evaluate",
    "play",
    "expected_points",
    "policy_rows",
    "game_seeds",
    "PlayResult",
    "Player",
    "Opponent",
    "MAX_GAMES",
]


#: What :func:`play`, :func:`expected_points` and :func:`evaluate` take.
Game = Match | Solution | Transitions | LeanSolution | ShardLookups

#: Largest ``n_games`` of one :func:`play` call.
MAX_GAMES = 10**7


@dataclass(frozen=True, repr=False, eq=False)
class PlayResult:
    """Result of :func:`play`.

    Attributes:
        points: float64 array ``(n_games,)``, each game's points.
        placements: int64 array ``(n_games,)``, each game's placements made:
            ``n_placements``, or fewer if the game ended (a piece fitting nowhere).
        n_placements: the placements a game was allowed.
        seed: the run's seed; game i used ``game_seeds(seed, n_games)[i]``.
    """

    points: np.ndarray
    placements: np.ndarray
    n_placements: int
    seed: int

    @property
    def n_games(self) -> int:
        """The number of games played."""
        return len(self.points)

    @property
    def mean(self) -> float:
        """The mean points per game."""
        return float(self.points.mean())

    @property
    def stderr(self) -> float:
        """The standard error of :attr:`mean` (sample standard deviation / sqrt(n_games));
        NaN for a single game."""
        if self.n_games < 2:
            return math.nan
        return float(self.points.std(ddof=1) / math.sqrt(self.n_games))

    @property
    def points_per_placement(self) -> float:
        """All points over all placements made (0.0 if no placement was made)."""
        total = int(self.placements.sum())
        return float(self.points.sum()) / total if total else 0.0

    @property
    def games_over(self) -> int:
        """The number of games that ended before ``n_placements`` placements."""
        return int(np.count_nonzero(self.placements < self.n_placements))

    def __repr__(self) -> str:
        spread = "" if self.n_games < 2 else f" ± {self.stderr:,.4g}"
        return (
            f"<PlayResult {self.n_games:,} game{'s' if self.n_games != 1 else ''} of up to {self.n_placements:,} "
            f"placements: mean {self.mean:,.6g}{spread} points, {self.points_per_placement:.6g} per placement, "
            f"{self.games_over:,} over early>"
        )


def play(
    game: Game,
    player: Player | None = None,
    opponent: Opponent | None = None,
    *,
    n_placements: int = 10_000,
    seed: int = 0,
    n_games: int = 1,
    n_jobs: int | None = None,
) -> PlayResult:
    """Play ``n_games`` independent games from the start board.

    Before each placement the opponent gives a piece, then the player places
    it; points are ``rules.line_scores[rows cleared]``.  A game stops after
    ``n_placements`` placements, or when the piece fits nowhere.

    Args:
        game: a :class:`~babytris.Match` (then give no player or opponent:
            it carries them), a :class:`Solution` (its move table, policy and
            piece choices back ``"optimal"`` and ``"solution"``) or a
            :class:`Transitions`.
        player, opponent: see the module docstring (default ``"optimal"``
            and ``"random"``).
        n_placements: placements per game, in [1, 10**9].
        seed: an integer in [0, 2**64).  Game i draws from its own generator
            seeded with ``game_seeds(seed, n_games)[i]``, so results depend on
            ``seed`` and the game's number only, never on ``n_jobs``.
        n_games: in [1, 10**7].
        n_jobs: threads sharing the games (default: every core).

    Returns:
        :class:`PlayResult`: points (float64) and placements (int64) per game.

    Games are array lookups in the move table, run in C threads: an optimal
    player on 4x5 makes 60 to 130 million placements a second per core.
    """
    n_placements = check_int("n_placements", n_placements, 1, MAX_PLACEMENTS, high_text="10**9")
    seed = check_int("seed", seed, 0, 2**64 - 1, high_text="2**64 - 1")
    n_games = check_int("n_games", n_games, 1, MAX_GAMES, high_text="10**7")
    n_jobs = resolve_n_jobs(n_jobs)
    match = Match.of(_played(game, player, opponent), player, opponent)
    if is_named(match.opponent, BEST_RESPONSE):
        raise ValueError(
            "opponent='best_response' (the worst case over the placements left) is computed exactly by "
            "expected_points and horizon_values, not played; play against a Solution solved with "
            "opponent='minimax' (its piece choices), or 'random'"
        )
    sides = match.sides()
    t, rules = sides.transitions, sides.transitions.rules
    points = np.empty(n_games, dtype=np.float64)
    placements = np.empty(n_games, dtype=np.int64)
    _play.play_games(
        t.offsets,
        t.next_board,
        t.lines,
        np.asarray(rules.line_scores, dtype=np.float64),
        bag_chances(rules).ravel(),  # (one row of the rules' probabilities without a bag)
        sides.starts.astype(np.int32),
        sides.start_weights,
        n_placements,
        _play.game_seeds(seed, n_games),
        sides.pieces,
        sides.rows,
        points,
        placements,
        n_jobs,
        chance=None if t.bags is None else t.bags.astype(np.int32),
        holds=_holds(t),
    )
    return PlayResult(points, placements, n_placements, seed)


def game_seeds(seed: int, n_games: int) -> np.ndarray:
    """uint64 array ``(n_games,)``: the seed of each game of a :func:`play` run
    (the first ``n_games`` outputs of splitmix64 started from ``seed``).  A
    game's generator is xoshiro256** seeded from its seed by splitmix64."""
    seed = check_int("seed", seed, 0, 2**64 - 1, high_text="2**64 - 1")
    n_games = check_int("n_games", n_games, 1, MAX_GAMES, high_text="10**7")
    return _play.game_seeds(seed, n_games)


def expected_points(
    game: Game,
    player: Player | None = None,
    opponent: Opponent | None = None,
    *,
    n_placements: int = 10_000,
    exact: bool = False,
    n_jobs: int | None = None,
) -> float:
    """The exact expected points of ``n_placements`` placements from the start
    board (``rules.start``, the empty board by default): what the mean of
    :func:`play` converges to.

    See :func:`~babytris.horizon_values`, of which this is ``.start_value``.
    """
    played = _played(game, player, opponent)
    return horizon_values(played, player, opponent, n_placements=n_placements, exact=exact, n_jobs=n_jobs).start_value


def evaluate(
    game: Game,
    player: Player | None = None,
    opponent: Opponent | None = None,
    *,
    n_placements: int | None = None,
    discount: float | None = None,
    tol: float = 1e-10,
    reward: Reward | None = None,
) -> float:
    """The exact value of a player against an opponent, from the start board:
    the expected points of the next ``n_placements`` placements (undiscounted,
    :func:`expected_points`), or with ``discount`` the expected discounted
    points of the whole game (policy evaluation, to ``tol``), or with
    ``reward`` too its expected discounted :class:`~babytris.Reward` (say,
    points less ``loss`` when the game ends).

    ``player`` and ``opponent`` are given as to :func:`play`.  With
    ``discount``, ``opponent="minimax"`` is the equilibrium opponent of
    ``solve(opponent="minimax")`` at that discount (the game's own Solution
    where it is that solve, else solved here), and ``"best_response"`` the
    opponent that gives, on each row, the piece worst for this player.  Give
    exactly one of ``n_placements`` and ``discount``.  The values count points
    unless a ``reward`` is given: a Solution's own reward (weights, a loss)
    is not assumed.  The game starts as :attr:`Solution.start_value` says:
    an opponent that chooses pieces chooses the opening too.
    """
    game = _played(game, player, opponent, discount)
    if n_placements is not None and discount is None:
        if reward is not None:
            raise ValueError(
                "reward: with n_placements the value is the expected points; give discount to value a Reward"
            )
        return expected_points(game, player, opponent, n_placements=n_placements)
    if discount is None or n_placements is not None:
        raise ValueError("evaluate: give exactly one of n_placements (points of n placements) and discount")
    if isinstance(game, Match):  # its sides as a solve reads them: "optimal" is the optimum
        if reward is not None or player is not None or opponent is not None:
            raise ValueError("game: a Match carries its player, opponent and reward; give them in the Match, not again")
        given = game.opponent
        if is_named(given, "minimax"):
            given = _minimax_opponent(game.transitions, discount, tol)
        match = Match(game.rules, game.player, given, game.reward, game.transitions)
    else:
        if is_named(opponent, "minimax"):
            opponent = _minimax_opponent(game, discount, tol)
        match = Match.of(game, player, opponent, reward)
    if isinstance(match.opponent, str) and match.opponent not in ("random", BEST_RESPONSE):
        raise ValueError(
            "opponent must be 'random', 'minimax', 'best_response', 'solution', a Solution or an int array, "
            f"got {match.opponent!r}"
        )
    bound_opponent = match.opponent
    if isinstance(bound_opponent, Solution) and opponent_pieces(match.transitions, bound_opponent) is None:
        bound_opponent = "random"
    return solve_transitions(
        match.transitions, discount=discount, tol=tol, player=match.player, opponent=bound_opponent, reward=match.reward
    ).start_value


def _played(game: Game, player: object, opponent: object, discount: object = None) -> Match | Solution | Transitions:
    """A :class:`~babytris.LeanSolution` or a sharded solution as the game its
    policy plays (a small Solution: :meth:`~babytris.LeanSolution.played_game`,
    :meth:`~babytris.modes.sharded.lookups.ShardLookups.played_game`), once the
    sides are ones it can take (:func:`~babytris.modes.lean_policy.check_sides`);
    any other game as it is."""
    if not isinstance(game, (LeanSolution, ShardLookups)):
        return game
    check_sides(game, player, opponent, discount)
    return game.played_game()


def _minimax_opponent(game: object, discount: float, tol: float) -> Solution:
    """The equilibrium opponent of ``solve(opponent="minimax")`` on ``game``'s
    table at ``discount``: the game itself where it is that solve."""
    if (
        isinstance(game, Solution)
        and game.opponent == "minimax"
        and game.player == "optimal"
        and game.reward is None
        and game.discount == discount
    ):
        return game
    return solve_transitions(transitions_of(game), discount=discount, tol=tol, opponent="minimax")


def _holds(t: Transitions) -> np.ndarray | None:
    """uint8 per move, 1 for the moves that put the piece on hold (None without hold)."""
    return (t.placement == HOLD_MOVE).astype(np.uint8) if t.rules.hold else None
