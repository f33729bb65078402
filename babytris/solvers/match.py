"""The resolved game: the rules, who places, who gives the pieces, and what counts.

A :class:`Match` is the one object every door reads: :func:`~babytris.solve`,
:func:`~babytris.evaluate`, :func:`~babytris.expected_points`,
:func:`~babytris.horizon_values`, :func:`~babytris.play`, the tournament, the
exports, :meth:`Match.stepped_game` and the command line build one
(or take one) and ask it for what they need.  The timing of who chooses what
is the rules' (``preview``: the opponent names pieces before the placement;
``hold``; a bag); the sides are :mod:`babytris.solvers.roles`' words.  A combination
that cannot be played, solved or exported is refused here, once, with the
reason.

>>> import babytris
>>> match = babytris.Match(babytris.Rules(width=4, height=4, preview=1), opponent="minimax")
>>> match.timing
'the opponent names each piece before the placement, seeing the queue of 1'
>>> solution = babytris.solve(match, discount=0.9)
>>> solution.opponent, solution.rules.preview
('minimax', 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..engine.reward import Reward, check_reward
from ..engine.stepped import Game
from ..engine.transitions import Transitions
from ..game.rules import Rules, make_rules
from ..game.validation import check_type
from ..results.solution import Solution
from .roles import (
    BEST_RESPONSE,
    OPPONENT_MODELS,
    Opponent,
    Player,
    Roles,
    Sides,
    bind_to_game,
    check_same_game,
    pieces_and_opening,
    player_rows,
    resolve,
)

__all__ = ["Match"]


@dataclass(frozen=True, eq=False)
class Match:
    """One game, resolved once: ``rules`` (with them the timing), ``player``,
    ``opponent`` and ``reward``, in :mod:`babytris.solvers.roles`' words.

    Attributes:
        rules: the :class:`~babytris.Rules`.
        player: ``"optimal"``, ``"random"``, a Solution (its policy) or
            placement numbers ``(n_boards, n_pieces)``.  Default (None, set
            here): ``"optimal"``; against ``"minavg"`` and ``"gaps"``,
            ``"random"``, the player they model.
        opponent: ``"random"``, ``"minimax"`` (the equilibrium opponent of an
            optimal player), ``"best_response"`` (the opponent answering a
            given player best: in a discounted solve against ``"random"``,
            ``"minavg"``; over n placements, the finite-horizon adversary),
            ``"minavg"``, ``"gaps"``, a Solution (its piece choices and
            opening) or piece indices ``(n_boards,)``.
        reward: None (the rules' points) or a :class:`~babytris.Reward`.
        table: the move table, when the match was built from one (a Solution
            or Transitions); else enumerated on first use.

    Raises:
        ValueError: naming the side and the reason, for a combination no
            door can take (a given player against ``"minimax"``, a player
            against ``"minavg"``, a reward with ``"gaps"``, a Solution of
            other rules, a reward the rules cannot score).
    """

    rules: Rules
    player: Player | None = None
    opponent: Opponent = "random"
    reward: Reward | None = None
    table: Transitions | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        check_type("rules", self.rules, Rules, "a babytris.Rules")
        if self.opponent is None or isinstance(self.opponent, (bool, int, float)):
            # (resolve() reads any other object as given pieces, checked only when a door reads them)
            raise ValueError(
                f"opponent must be one of {', '.join(map(repr, (*OPPONENT_MODELS, BEST_RESPONSE)))}, a Solution or "
                f"an int array of piece indices, got {self.opponent!r}"
            )
        roles = resolve(None, self.opponent, self.player, self.reward)  # names and combinations
        check_reward(roles.reward, self.rules)
        # (the opponent stays as named: "best_response" to a random player is
        # "minavg" in a discounted solve, the finite-horizon adversary over n placements)
        if roles.player != "given":
            object.__setattr__(self, "player", roles.player)
        object.__setattr__(self, "reward", roles.reward)
        if self.table is not None:
            check_type("table", self.table, Transitions, "a babytris.Transitions")
            if self.table.rules != self.rules:
                raise ValueError("table: the move table is of other rules than the match's")
        for name in ("player", "opponent"):
            side = getattr(self, name)
            if isinstance(side, Solution) and side.rules != self.rules:
                raise ValueError(f"{name}: the Solution was solved on other rules ({side.rules!r}) than the match's")

    @classmethod
    def of(
        cls,
        game: Rules | Transitions | Solution | Match,
        player: Player | None = None,
        opponent: Opponent | None = None,
        reward: Reward | None = None,
    ) -> Match:
        """The match a door is asked to play: ``game`` a Match (then give no
        sides), or a Solution, Transitions or Rules with the sides in the
        doors' words, where ``player="optimal"`` means a Solution's own policy,
        ``opponent="solution"`` its piece choices and ``opponent="minimax"``
        the equilibrium opponent of a Solution solved against it (see
        :func:`babytris.solvers.roles.bind_to_game`).

        Returns:
            :class:`Match`, its sides bound to the game's Solution where named so.
        """
        if isinstance(game, Match):
            if player is not None or opponent is not None or reward is not None:
                raise ValueError(
                    "game: a Match carries its player, opponent and reward; give them in the Match, not again"
                )
            return game
        player = "optimal" if player is None else player
        opponent = "random" if opponent is None else opponent
        if isinstance(game, Rules):
            return cls(game, player, opponent, reward)
        if not isinstance(game, (Solution, Transitions)):
            check_type("game", game, Transitions, "a babytris.Match, Solution, Transitions or Rules")
        table = game.transitions if isinstance(game, Solution) else game
        bound_player, bound_opponent = bind_to_game(game, player, opponent)
        for name, side in (("player", bound_player), ("opponent", bound_opponent)):
            if isinstance(side, Solution):
                check_same_game(name, side, table)
        return cls(table.rules, bound_player, bound_opponent, reward, table)

    @classmethod
    def played(cls, solution: Solution) -> Match:
        """The match a Solution's policy plays: against its own opponent's
        piece choices (and opening), or random pieces where it was solved
        against them.

        Returns:
            :class:`Match`, the Solution as player (but where its player
            places at random) and as opponent.
        """
        check_type("solution", solution, Solution, "a babytris.Solution")
        opponent = "random" if solution.opponent_policy is None else solution
        player = "random" if solution.player == "random" else solution  # (a minavg or gaps solve's player)
        return cls(solution.rules, player, opponent, table=solution.transitions)

    @classmethod
    def asked(
        cls,
        rules: Rules | Match | None,
        rule_fields: dict,
        player: Player | None = None,
        opponent: Opponent = "random",
        reward: Reward | None = None,
    ) -> Match:
        """The match :func:`~babytris.solve` is asked for: a Match as it is
        (its sides given nowhere else), or the rules (or their fields) with
        the sides given as keywords.

        Returns:
            :class:`Match`.
        """
        if isinstance(rules, Match):
            if rule_fields or player is not None or reward is not None or not _is_random(opponent):
                raise ValueError(
                    "rules: a Match carries its rules, player, opponent and reward; "
                    "give them in the Match, not as keywords"
                )
            return rules
        return cls(make_rules(rules, rule_fields), player, opponent, reward)

    @cached_property
    def transitions(self) -> Transitions:
        """The move table: the one given, a side's Solution's, or enumerated
        from the rules (once per match)."""
        if self.table is not None:
            return self.table
        for side in (self.player, self.opponent):
            if isinstance(side, Solution):
                return side.transitions
        from ..engine.enumeration import enumerate_boards

        return enumerate_boards(self.rules)

    @property
    def timing(self) -> str:
        """The timing of who chooses what, and when, in a sentence."""
        rules = self.rules
        if isinstance(self.opponent, str) and self.opponent == "random":
            drawn = "bag" if rules.randomizer == "bag" else "chance"
            when = f"pieces drawn by {drawn}" + (f", {rules.preview} shown ahead" if rules.preview else "")
        elif rules.preview:
            when = f"the opponent names each piece before the placement, seeing the queue of {rules.preview}"
        else:
            when = "the opponent names each piece after seeing the placement"
        return when + (", with hold" if rules.hold else "")

    def roles(self, transitions: Transitions | None = None) -> Roles:
        """What the sweeps read: the sides resolved against ``transitions``
        (default :attr:`transitions`).

        Returns:
            :class:`~babytris.solvers.roles.Roles`.
        """
        return resolve(
            self.transitions if transitions is None else transitions, self.opponent, self.player, self.reward
        )

    def sides(self) -> Sides:
        """The sides of a game played over n placements: the player's moves,
        the opponent's pieces and the start rows, checked against the table.

        Returns:
            :class:`~babytris.solvers.roles.Sides`.

        Raises:
            ValueError: where the match cannot be played as it stands: an
                optimal player with no policy (solve the match first), an
                optimising opponent named but not solved, or a reward (a game
                played counts points).
        """
        self.refuse_unplayable()
        t = self.transitions
        pieces, starts, weights = pieces_and_opening(t, self.opponent)
        return Sides(t, player_rows(t, self.player), pieces, starts, weights)

    def refuse_unplayable(self) -> None:
        """Raise ``ValueError`` with the reason where the match cannot be
        played over n placements as it stands.  Returns None otherwise."""
        if isinstance(self.player, str) and self.player == "optimal":
            raise ValueError(
                "player='optimal' has no policy to play until the match is solved: play solve(match) "
                "(a Solution) as the player or as the game"
            )
        if isinstance(self.opponent, str) and self.opponent in ("minimax", "minavg", "gaps"):
            raise ValueError(
                f"opponent={self.opponent!r} chooses pieces once solved: give solve(...) with that opponent "
                "(a Solution) as the opponent or as the game"
            )
        if self.reward is not None:
            raise ValueError("reward: a game played over n placements counts points; evaluate a Reward with discount")

    def check_exportable(self, discount: float | None) -> None:
        """Refuse, with the reason, a match the exports cannot write (the MDP
        of an optimal player against fixed piece choices): a given player, a
        reward, ``"best_response"``, or a named optimising opponent with no
        discount to solve it at.  Returns None."""
        # (against "minavg" and "gaps" the random player is the opponent's model of it: the
        # export is the optimal player's MDP against that opponent's choices)
        modelled = isinstance(self.opponent, str) and self.opponent in ("minavg", "gaps")
        if not (isinstance(self.player, str) and (self.player == "optimal" or modelled)):
            raise ValueError("player: an export is the MDP of an optimal player; another player's game is not exported")
        if self.reward is not None:
            raise ValueError("reward: the exports count points; a weighted Reward is not exported")
        if isinstance(self.opponent, str) and self.opponent == BEST_RESPONSE:
            raise ValueError("opponent='best_response' answers a given player; an export's player is optimal")
        if isinstance(self.opponent, str) and self.opponent != "random" and discount is None:
            raise ValueError(f"discount: needed to solve the {self.opponent!r} opponent whose choices are exported")

    def stepped_game(self, *, seed: int = 0) -> Game:
        """One :class:`~babytris.engine.stepped.Game` of this match stepped placement by
        placement (the caller places; the player side is not read), its
        pieces drawn or, against a Solution's piece choices, named by it in
        the game's timing: with previews before the placement, seeing the
        queue, and the opening queue too (:meth:`Solution.opening`), as
        :meth:`sides` plays it.

        Returns:
            :class:`~babytris.engine.stepped.Game`.
        """
        opponent, rules = self.opponent, self.rules
        if isinstance(opponent, str) and opponent == "random":
            return Game(rules, seed=seed)
        if not isinstance(opponent, Solution) or opponent.opponent_policy is None:
            raise ValueError("opponent: a game is stepped against random pieces or a Solution's piece choices")
        if rules.randomizer == "bag":
            raise ValueError(
                "a bag with an opponent choosing from it is solved, not yet stepped through; use random pieces"
            )
        policy = opponent

        def choose(board: int, known: tuple, held: int | None = None, locked: bool = False) -> int:
            return rules.piece_index(policy.piece_policy(board, queue=known or None, held=held, locked=locked))

        opening_held = None
        if rules.hold and rules.hold_start == "drawn":  # the slot the opponent's opening row fills
            rows, _ = opponent.opening()
            slot = int(rows[0]) % rules.hold_slots if len(rows) == 1 else 0
            opening_held = (slot - 1) % rules.n_pieces if slot else None
        return Game(rules, seed=seed, choose_piece=choose, opening=opponent.opening_queue(), opening_held=opening_held)

    def policy_table(self) -> Any:
        """The table of both sides (:func:`babytris.results.tables.policy_table`):
        the player's policy (a Solution) beside the match's opponent's piece
        choices (its ``gives`` column), or the chances of drawn pieces.

        Returns:
            a pandas ``DataFrame`` (or a structured numpy array without pandas).

        Raises:
            ValueError: where the player is not a Solution (a table needs its
                values), or the opponent is named but not solved.
        """
        from ..results.tables import policy_table

        if not isinstance(self.player, Solution):
            raise ValueError("player: a table shows a Solution's policy and values; give the Solution as player")
        if isinstance(self.opponent, str) and self.opponent != "random":
            raise ValueError(f"opponent={self.opponent!r} chooses pieces once solved: give that Solution as opponent")
        pieces = pieces_and_opening(self.transitions, self.opponent)[0]
        return policy_table(self.player, pieces="random" if pieces is None else pieces)

    def given(self, side: str) -> Solution | np.ndarray | None:
        """The policy given for ``side`` (``"player"`` or ``"opponent"``): a
        Solution, placement numbers (int64 array ``(n_boards, n_pieces)``) or
        piece indices (int64 array ``(n_boards,)``), as given; None where the side is named."""
        value = getattr(self, side)
        return None if isinstance(value, str) else value


def _is_random(opponent: object) -> bool:
    return isinstance(opponent, str) and opponent == "random"
