"""Who plays: the one home of the player, opponent and reward models.

Every entry point (:func:`~babytris.solve`, :func:`~babytris.play`,
:func:`~babytris.evaluate`, the tournament, the long-run rate, minimization,
the environment) names the two sides with the same words, and this module
turns them into what the compiled kernels read.

``opponent`` (who gives the next piece):

======================  ====================================================
``"random"``            drawn with the rules' probabilities
``"minimax"``           the opponent gives the piece worst for the player
``"minavg"``            the least, for a player placing at random
``"gaps"``              the most holes: the opponent maximises the holes a
                        player placing at random creates (values count holes)
``"solution"``          (playing a Solution) that Solution's own piece choices
a Solution              its piece choices (:attr:`Solution.opponent_policy`)
an int array            a given piece index per board ``(n_boards,)``
======================  ====================================================

``player`` (who places it): ``"optimal"`` (the best placement; when playing a
Solution, that Solution's policy), ``"random"`` (uniform over the legal
placements), a Solution (its policy) or placement numbers
``(n_boards, n_pieces)``, -1 where the piece fits nowhere.  Solving against a
given side is a best response; with both given, policy evaluation.

``reward``: ``None`` (the rules' points) or a :class:`~babytris.Reward`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np

from ..engine import _moves
from ..engine.reward import Reward, check_reward, holes_created, move_rewards
from ..engine.transitions import Transitions
from ..game.rules import Rules
from ..game.validation import ArgumentTypeError, check_type
from ..results.solution import Solution

__all__ = [
    "BEST_RESPONSE",
    "OPPONENT_MODELS",
    "PLAYER_MODELS",
    "Opponent",
    "Player",
    "Roles",
    "Sides",
    "bind_to_game",
    "is_named",
    "opponent_pieces",
    "player_rows",
    "policy_rows",
    "resolve",
    "piece_chances",
    "pieces_and_opening",
    "transitions_of",
    "two_sided",
]

#: A player: "optimal", "random", a Solution, or placement numbers ``(n_boards, n_pieces)``.
Player = str | Solution | np.ndarray
#: An opponent: a name of OPPONENT_MODELS, "solution", a Solution, or piece indices ``(n_boards,)``.
Opponent = str | Solution | np.ndarray

#: Named opponent models a game can be solved for.
OPPONENT_MODELS = ("random", "minimax", "minavg", "gaps")
#: Named player models.
PLAYER_MODELS = ("optimal", "random")
#: The opponent answering a given player best (the least valuable piece for it on each row).
BEST_RESPONSE = "best_response"

# The sweeps' codes, defined once in _sweep.pyx.  How a board's value combines
# its pieces': drawn with the probabilities, the opponent's least or most
# valuable piece, a given piece.  How a state's value combines its moves': the
# best, the mean (a player placing at random), a given move.
from ._sweep import (  # noqa: E402
    MOVES_BEST,
    MOVES_FIXED,
    MOVES_MEAN,
    PIECES_BEST,
    PIECES_FIXED,
    PIECES_RANDOM,
    PIECES_WORST,
)

_P = TypeVar("_P")
_O = TypeVar("_O")
_PIECES = {"random": PIECES_RANDOM, "minimax": PIECES_WORST, "minavg": PIECES_WORST, "gaps": PIECES_BEST}


@dataclass(frozen=True)
class Roles:
    """A resolved game: labels, the core's modes and the arrays they read."""

    opponent: str  # one of OPPONENT_MODELS or "given"
    player: str  # one of PLAYER_MODELS or "given"
    pieces: int  # PIECES_*
    moves: int  # MOVES_*
    piece_choice: np.ndarray | None = None  # int16 per board, with "given" opponents
    fixed_move: np.ndarray | None = None  # int16 per state (offset in its row), with "given" players
    reward: Reward | None = None  # None: points
    opening_row: int | None = None  # the start row a given opponent Solution opens with (previews), else None
    move_reward: np.ndarray | None = None  # float64 per move where not the game's points (resolved with a table)

    @property
    def single_agent(self) -> bool:
        """Whether one side optimises against a fixed other (policy iteration applies)."""
        return self.pieces in (PIECES_RANDOM, PIECES_FIXED) and self.moves in (MOVES_BEST, MOVES_FIXED)

    @property
    def policy_iteration(self) -> bool:
        """Whether modified policy iteration applies: one side optimises
        against a fixed other, or the player optimises against an opponent
        giving the least valuable piece.  In that zero-sum game the
        evaluation sweeps keep the player's greedy moves and let the opponent
        go on choosing (each is the opponent's Bellman operator for the
        player's fixed policy): the generalized policy iteration of J. van der
        Wal, "Discounted Markov games: generalized policy iteration method",
        J. Optim. Theory Appl. 25 (1978) 125-138, which converges for any
        number of evaluation sweeps (see also Perolat, Scherrer, Piot and
        Pietquin, "Approximate dynamic programming for two-player zero-sum
        Markov games", ICML 2015).  Evaluating both sides' policies at once
        (Pollatschek and Avi-Itzhak) may cycle, so that is never done."""
        return self.single_agent or (self.moves == MOVES_BEST and self.pieces == PIECES_WORST)

    @property
    def strategy_iteration(self) -> bool:
        """Whether strategy iteration applies (at a discount below 1): the
        player takes the best move and the opponent gives the least valuable
        piece, a zero-sum game of perfect information in which, once the
        player's moves and the opponent's pieces are fixed, each board leads
        to one board, so the opponent's choices can be evaluated exactly (see
        :func:`babytris.solvers.sweeping.strategy_iteration`)."""
        return self.moves == MOVES_BEST and self.pieces == PIECES_WORST

    def move_rewards(self, transitions: Transitions) -> np.ndarray | None:
        """Each move's reward, or None for the game's points."""
        if self.opponent == "gaps":
            return holes_created(transitions)
        if self.reward is None or (self.reward.scores_points and not (transitions.rules.top_out and self.reward.loss)):
            return None
        return move_rewards(transitions, self.reward)

    def dead_value(self, rules: Rules) -> float:
        """The value of a state with no move (see :class:`~babytris.Reward`)."""
        return 0.0 if self.reward is None else self.reward.dead_value(rules)


def is_named(role: object, name: str) -> bool:
    """Whether a player or opponent is the model called ``name`` (not an array or a Solution)."""
    return isinstance(role, str) and role == name


def two_sided(opponent: object) -> bool:
    """Whether ``opponent`` names a model where the opponent optimises too."""
    return isinstance(opponent, str) and opponent in ("minimax", "minavg", "gaps")


def resolve(transitions: Transitions | None, opponent: object, player: object, reward: object) -> Roles:
    """Check the roles and resolve given policies against ``transitions``
    (None: check the names only).  Raises ``ValueError`` naming the argument."""
    if transitions is not None:
        check_type("transitions", transitions, Transitions, "a babytris.Transitions (from enumerate_boards)")
    if reward is not None and not isinstance(reward, Reward):
        raise ValueError(f"reward must be a babytris.Reward or None, got {reward!r}")
    if reward is not None and reward.is_points:
        reward = None
    if transitions is not None:
        check_reward(reward, transitions.rules)
    opening_row = None
    if isinstance(opponent, str) and opponent in ("minimax", BEST_RESPONSE):
        opponent = _minimax_or_best_response(opponent, player)
    if isinstance(opponent, str) and opponent == BEST_RESPONSE:
        pieces, choice, opponent_label = PIECES_WORST, None, BEST_RESPONSE
    elif isinstance(opponent, str):
        if opponent not in OPPONENT_MODELS:
            raise ValueError(
                f"opponent must be one of {', '.join(map(repr, (*OPPONENT_MODELS, BEST_RESPONSE)))}, a Solution or "
                f"an int array of piece indices, got {opponent!r}"
            )
        pieces, choice, opponent_label = _PIECES[opponent], None, opponent
    else:
        pieces, opponent_label = PIECES_FIXED, "given"
        choice = None if transitions is None else opponent_pieces(transitions, opponent)
        if transitions is not None and isinstance(opponent, Solution):
            opening_row = _opening_row(opponent)
    if opponent_label in ("minavg", "gaps"):
        if player not in (None, "random"):
            raise ValueError(
                f"player: opponent={opponent_label!r} plays against a player placing at random; "
                f"leave player unset or 'random', got {player!r}"
            )
        player = "random"
    if opponent_label == "gaps" and reward is not None:
        raise ValueError("reward: opponent='gaps' counts holes created; it takes no reward")
    if player is None:
        player = "optimal"
    if isinstance(player, str):
        if player not in PLAYER_MODELS:
            raise ValueError(
                f"player must be one of {', '.join(map(repr, PLAYER_MODELS))}, a Solution or an int array "
                f"of placement numbers, got {player!r}"
            )
        moves, rows, player_label = (MOVES_BEST if player == "optimal" else MOVES_MEAN), None, player
    else:
        if isinstance(player, Solution) and player.player == "random":
            raise _no_policy(player)
        moves, player_label = MOVES_FIXED, "given"
        rows = None if transitions is None else player_rows(transitions, player)
    roles = Roles(opponent_label, player_label, pieces, moves, choice, rows, reward, opening_row)
    if transitions is None:
        return roles
    # (the per-move rewards resolved here too, so that the sweeps read data, not reward code)
    with np.errstate(over="ignore", invalid="ignore"):  # huge weights are refused by the solve, with their size
        return replace(roles, move_reward=roles.move_rewards(transitions))


def _minimax_or_best_response(opponent: str, player: object) -> str:
    """One meaning per word: ``"minimax"`` is the equilibrium opponent of an
    optimal player; the opponent answering a given player best (the least
    valuable piece for it on each row) is ``"best_response"``, which against
    a player placing at random is ``"minavg"``."""
    optimal = player is None or (isinstance(player, str) and player == "optimal")
    if opponent == "minimax" and not optimal:
        raise ValueError(
            "opponent='minimax' is the equilibrium opponent of an optimal player; the opponent answering a given "
            "or random player best is opponent='best_response'"
        )
    if opponent == BEST_RESPONSE and optimal:
        raise ValueError(
            "opponent='best_response' answers a given player (player= a Solution, placement numbers or 'random'); "
            "against an optimal player it is the equilibrium opponent, opponent='minimax'"
        )
    return "minavg" if isinstance(player, str) and player == "random" and opponent == BEST_RESPONSE else opponent


def _opening_row(opponent: Solution) -> int | None:
    """The one start row an opponent Solution opens with, or None where the opening is drawn."""
    rows, _ = opponent.opening()
    return int(rows[0]) if len(rows) == 1 and len(opponent.transitions.start_nodes()[0]) > 1 else None


def policy_rows(transitions: Transitions, policy: np.ndarray, *, name: str = "policy") -> np.ndarray:
    """A policy of placement numbers as offsets into the move table.

    Args:
        transitions: the game graph.
        policy: int array ``(n_boards, n_pieces)``, the placement number
            chosen in each state, -1 exactly where the piece fits nowhere
            (like :attr:`Solution.policy`).
        name: the argument's name in error messages.

    Returns:
        int16 array ``(n_states,)``: state s's move is
        ``transitions.offsets[s] + rows[s]``; -1 where the piece fits nowhere.

    Raises:
        ValueError: naming the first state where the placement is not legal,
            or -1 is given where the piece fits, or a placement where it does not.
    """
    t = transitions
    shape = (t.n_boards, t.rules.n_pieces)
    policy = _int_array(name, policy, shape, "(n_boards, n_pieces)")
    flat = np.ascontiguousarray(policy.reshape(-1), dtype=np.int64)
    rows = np.empty(t.n_states, dtype=np.int16)
    s = _moves.placement_rows(t.offsets, t.placement, flat, rows)
    if s >= 0:
        b, p = divmod(s, t.rules.n_pieces)
        where = f"piece {t.rules.piece_names[p]!r} on board index {b} (board {int(t.boards[b])})"
        legal = t.state_placements(s).tolist()
        if not legal:
            raise ValueError(f"{name}: gives placement {flat[s]} for {where}, where it fits nowhere (must be -1)")
        if flat[s] == -1:
            raise ValueError(f"{name}: gives no move (-1) for {where}, which has legal placements {legal}")
        raise ValueError(f"{name}: placement {flat[s]} is not legal for {where}; legal placements: {legal}")
    return rows


def transitions_of(game: object) -> Transitions:
    """The move table of a :class:`Solution` or :class:`Transitions`; ``TypeError`` otherwise."""
    if isinstance(game, Solution):
        return game.transitions
    if isinstance(game, Transitions):
        return game
    raise ArgumentTypeError(f"game must be a babytris.Solution or Transitions, got {type(game).__name__}")


def bind_to_game(game: object, player: _P, opponent: _O) -> tuple[_P | Solution, _O | Solution]:
    """``player`` and ``opponent`` with the words that mean "the game's own"
    replaced by the game: ``player="optimal"`` by the Solution (its policy),
    ``opponent="solution"`` by the Solution (its piece choices), and
    ``opponent="minimax"`` by the Solution where it was solved against the
    minimax opponent (its equilibrium piece choices; the one meaning of
    "minimax" in every door).

    Returns:
        ``(player, opponent)``, the rest passed through unchecked.
    """
    bound_player: _P | Solution = player
    bound_opponent: _O | Solution = opponent
    if isinstance(player, str) and player == "optimal":
        if not isinstance(game, Solution):
            raise ValueError("player='optimal' needs a Solution as the game (a bare Transitions has no policy)")
        bound_player = game
    if isinstance(opponent, str) and opponent == "solution":
        if not isinstance(game, Solution):
            raise ValueError("opponent='solution' needs a Solution as the game")
        bound_opponent = game
    if isinstance(opponent, str) and opponent == "minimax":
        if not (isinstance(game, Solution) and game.opponent == "minimax"):
            raise ValueError(
                "opponent='minimax' is the equilibrium opponent of solve(opponent='minimax'): give that Solution "
                "as the game or as opponent=; the opponent answering this player best is 'best_response'"
            )
        bound_opponent = game
    return bound_player, bound_opponent


@dataclass(frozen=True)
class Sides:
    """Who plays a game over n placements, resolved against its move table.

    Attributes:
        transitions: the move table.
        rows: int16 ``(n_states,)``, the player's move in each state as its
            offset in the state's row (see :func:`policy_rows`), or None for a
            player placing at random.
        pieces: int16 ``(n_boards,)``, the piece the opponent gives on each
            row, or None for pieces drawn with their chances.
        starts, start_weights: the rows a game starts on (int64) and their
            weights (float64, summing to 1): the start board, with previews
            each opening queue drawn, or the one an optimising opponent opens
            with (:meth:`Solution.opening`).
    """

    transitions: Transitions
    rows: np.ndarray | None
    pieces: np.ndarray | None
    starts: np.ndarray
    start_weights: np.ndarray


def pieces_and_opening(t: Transitions, opponent: object) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """An opponent's pieces (:func:`opponent_pieces`, which checks a Solution is of
    this game) and the start rows with their weights: a Solution's opening, else drawn."""
    pieces = opponent_pieces(t, opponent)
    starts, weights = opponent.opening() if isinstance(opponent, Solution) else t.start_nodes()
    return pieces, starts, weights


def piece_chances(t: Transitions, opponent: object = "random") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How the pieces come against ``opponent``, as the exports write the
    game: ``"random"`` (drawn), a Solution solved against an opponent (its
    piece choices and its opening) or a piece array ``(n_boards,)`` (its
    choices; the opening drawn).

    Returns:
        ``(chances, starts, start_weights)``: float64 ``(n_boards,
        n_pieces)``, each row's chance of each piece (1.0 for the piece a
        fixed opponent gives); int64 start rows and their float64 weights.
    """
    pieces, starts, weights = pieces_and_opening(t, opponent)
    if pieces is None:
        return np.ascontiguousarray(t.draw_chances()), starts, weights
    chances = np.zeros((t.n_boards, t.rules.n_pieces))
    chances[np.arange(t.n_boards), pieces] = 1.0
    return chances, starts, weights


def player_rows(t: Transitions, player: object) -> np.ndarray | None:
    """The move rows of a player: None for ``"random"``, else int16 ``(n_states,)``
    as :func:`policy_rows` (``"optimal"`` must be bound to a game first)."""
    if isinstance(player, str):
        if player == "random":
            return None
        raise ValueError(f"player must be 'optimal', 'random', a Solution or an int array, got {player!r}")
    if isinstance(player, Solution):
        check_same_game("player", player, t)
        if player.player == "random":
            raise _no_policy(player)
        return _cached(_PLAYER_ROWS, player, t, lambda: policy_rows(t, player.policy, name="player"))
    if player is None or isinstance(player, (bool, int, float)):
        raise ValueError(f"player must be 'optimal', 'random', a Solution or an int array, got {player!r}")
    return policy_rows(t, player, name="player")  # type: ignore[arg-type]


def _no_policy(player: Solution) -> ValueError:
    return ValueError(
        f"player: the Solution (opponent={player.opponent!r}) has no player policy: "
        "its player places at random; use player='random'"
    )


def opponent_pieces(t: Transitions, opponent: object) -> np.ndarray | None:
    """The pieces of an opponent: None for ``"random"``, else int16 ``(n_boards,)``
    piece indices (``"solution"`` must be bound to a game first)."""
    if isinstance(opponent, str):
        if opponent == "random":
            return None
        raise ValueError(
            "opponent must be 'random', 'minimax', 'best_response', 'solution', a Solution or an int array, "
            f"got {opponent!r}"
        )
    if isinstance(opponent, Solution):
        check_same_game("opponent", opponent, t)
        if opponent.opponent == "random":
            raise ValueError(
                "opponent: the Solution was solved against random pieces and picks none; "
                "use opponent='random', or solve with opponent='minimax'"
            )
        # checked like an array (a Solution's arrays may come from an edited file), once per Solution
        solution = opponent
        return _cached(
            _OPPONENT_PIECES,
            solution,
            t,
            lambda: _checked_pieces(t, "opponent (the Solution's opponent_policy)", solution.opponent_policy),
        )
    elif opponent is None or isinstance(opponent, (bool, int, float)):
        raise ValueError(
            "opponent must be 'random', 'minimax', 'best_response', 'solution', a Solution or an int array, "
            f"got {opponent!r}"
        )
    return _checked_pieces(t, "opponent", opponent)


def _checked_pieces(t: Transitions, name: str, opponent: object) -> np.ndarray:
    """int16 ``(n_boards,)``: an array of piece indices, checked against the table."""
    pieces = _int_array(name, opponent, (t.n_boards,), "(n_boards,)")
    bad = np.flatnonzero((pieces < 0) | (pieces >= t.rules.n_pieces))
    if bad.size:
        raise ValueError(
            f"{name}: piece indices must be in [0, {t.rules.n_pieces - 1}], "
            f"got {int(pieces[bad[0]])} at board index {int(bad[0])}"
        )
    if t.bags is not None:  # with a bag, only a piece left in it can come
        lacking = np.flatnonzero(t.draw_chances()[np.arange(t.n_boards), pieces] == 0)
        if lacking.size:
            i = int(lacking[0])
            raise ValueError(
                f"{name}: gives {t.rules.pieces[int(pieces[i])].name} at row {i}, whose bag holds none "
                "(a bag deals only the pieces left in it)"
            )
    return pieces.astype(np.int16)


# A Solution's arrays are read-only, so what is derived from it once against
# its own table stays true: the player's move rows and the opponent's pieces,
# kept while the Solution lives.
_PLAYER_ROWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_OPPONENT_PIECES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _cached(cache: weakref.WeakKeyDictionary, solution: Solution, t: Transitions, compute: Callable[[], Any]) -> Any:
    """``compute()``, kept in ``cache`` for ``solution`` when ``t`` is its own table."""
    if t is not solution.transitions:
        return compute()
    if solution not in cache:
        value = compute()
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        cache[solution] = value
    return cache[solution]


def check_same_game(name: str, solution: Solution, t: Transitions) -> None:
    if solution.rules != t.rules or solution.n_boards != t.n_boards:
        raise ValueError(
            f"{name}: the Solution was solved on other rules ({solution.n_boards:,} boards of "
            f"{solution.rules!r}) than the game ({t.n_boards:,} boards of {t.rules!r})"
        )


def _int_array(name: str, value: object, shape: tuple[int, ...], shape_text: str) -> np.ndarray:
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an int array of shape {shape_text}, got {value!r}") from None
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be an int array of shape {shape_text} = {shape}, got dtype {array.dtype}")
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape_text} = {shape}, got {array.shape}")
    return array
