"""Who gives the pieces and who places them, as the sweeps combine values.

A game is solved for one opponent model and one player model:

======================  ====================================================
``opponent``            a board's value from its pieces' values
======================  ====================================================
``"random"``            the mean, weighted by the rules' probabilities
``"minimax"``           the least: the opponent gives the worst piece
``"minavg"``            the least, for a player placing at random
``"gaps"``              the most holes: the opponent maximises the holes a
                        player placing at random creates (values count holes)
a Solution or array     a given piece per board (the player's best response)
======================  ====================================================

``player``: ``"optimal"`` (the best placement), ``"random"`` (the mean over
the placements) or a given policy (a Solution or placement numbers): with a
given policy the opponent's best response, or the policy's value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import OPPONENTS
from .policies import opponent_pieces, player_rows
from .reward import Reward, check_reward, holes_created, move_rewards
from .rules import Rules
from .solution import Solution
from .states import Transitions

__all__ = ["OPPONENT_MODELS", "PLAYER_MODELS", "Roles", "resolve", "two_sided"]

#: Named opponent models.
OPPONENT_MODELS = OPPONENTS
#: Named player models.
PLAYER_MODELS = ("optimal", "random")

# How a board's value combines its pieces' (the core's enum): drawn with the
# probabilities, the opponent's least or most valuable piece, a given piece.
PIECES_RANDOM, PIECES_WORST, PIECES_BEST, PIECES_FIXED = 0, 1, 2, 3
# How a state's value combines its moves': the best, the mean (a player
# placing at random), a given move.
MOVES_BEST, MOVES_MEAN, MOVES_FIXED = 0, 1, 2

_PIECES = {"random": PIECES_RANDOM, "minimax": PIECES_WORST, "minavg": PIECES_WORST, "gaps": PIECES_BEST}


@dataclass(frozen=True)
class Roles:
    """A resolved game: labels, the core's modes and the arrays they read."""

    opponent: str               # one of OPPONENT_MODELS or "given"
    player: str                 # one of PLAYER_MODELS or "given"
    pieces: int                 # PIECES_*
    moves: int                  # MOVES_*
    piece_choice: np.ndarray | None = None   # int16 per board, with "given" opponents
    fixed_move: np.ndarray | None = None     # int16 per state (offset in its row), with "given" players
    reward: Reward | None = None             # None: points

    @property
    def single_agent(self) -> bool:
        """Whether one side optimises against a fixed other (policy iteration applies)."""
        return self.pieces in (PIECES_RANDOM, PIECES_FIXED) and self.moves in (MOVES_BEST, MOVES_FIXED)

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


def two_sided(opponent: object) -> bool:
    """Whether ``opponent`` names a model where the opponent optimises too."""
    return isinstance(opponent, str) and opponent in ("minimax", "minavg", "gaps")


def resolve(transitions: Transitions | None, opponent: object, player: object, reward: object) -> Roles:
    """Check the roles and resolve given policies against ``transitions``
    (None: check the names only).  Raises ``ValueError`` naming the argument."""
    if reward is not None and not isinstance(reward, Reward):
        raise ValueError(f"reward must be a babytris.Reward or None, got {reward!r}")
    if reward is not None and reward.is_points:
        reward = None
    if transitions is not None:
        check_reward(reward, transitions.rules)
    if isinstance(opponent, str):
        if opponent not in OPPONENT_MODELS:
            raise ValueError(
                f"opponent must be one of {', '.join(map(repr, OPPONENT_MODELS))}, a Solution or an int array "
                f"of piece indices, got {opponent!r}"
            )
        pieces, choice, opponent_label = _PIECES[opponent], None, opponent
    else:
        pieces, opponent_label = PIECES_FIXED, "given"
        choice = None if transitions is None else opponent_pieces(None, transitions, opponent)
    if opponent_label in ("minavg", "gaps"):
        if player not in (None, "random"):
            raise ValueError(f"player: opponent={opponent_label!r} plays against a player placing at random; "
                             f"leave player unset or 'random', got {player!r}")
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
            raise ValueError("player: that Solution's player places at random and has no policy; use player='random'")
        moves, player_label = MOVES_FIXED, "given"
        rows = None if transitions is None else player_rows(None, transitions, player)
    return Roles(opponent_label, player_label, pieces, moves, choice, rows, reward)
