"""Who gives the next piece on the board: drawn at random with a seed, a named
opponent (solved once, on first use, for the same rules and discount), the
solution's own opponent, or a piece given by hand.

The words are :mod:`babytris.solvers.roles`' (``random``, ``minimax``,
``minavg``, ``gaps``, ``solution``); the timing is :class:`~babytris.Game`'s:
the opponent names the new piece seeing the board after the placement and the
pieces already in sight, as :meth:`Match.stepped_game` plays it.
"""

from __future__ import annotations

import threading
from typing import Protocol

import numpy as np

from ..game.rules import Rules
from ..results.solution import Solution
from ..solvers.match import Match
from ..solvers.roles import OPPONENT_MODELS
from .on_demand import LeanView, ShardedView
from .position import Position

__all__ = ["OPPONENTS", "Opponents", "random_piece"]

#: Every word the board takes for who gives the next piece (``solution``: the
#: solution's own opponent, where it has one).
OPPONENTS = (*OPPONENT_MODELS, "solution")


class Chances(Protocol):
    """What a random draw reads of a game: a :class:`~babytris.Rules`, or a big board's layout."""

    @property
    def n_pieces(self) -> int: ...
    @property
    def probabilities(self) -> tuple[float, ...]: ...


def random_piece(rules: Chances, bag: tuple[int, ...] | None, seed: int, ply: int) -> int:
    """The piece drawn at ``ply`` (placements and holds so far) of a game of
    ``seed``: with ``rules.probabilities``, or with a bag from the pieces left
    in it (each copy equally likely); the same piece for the same seed and ply."""
    rng = np.random.default_rng([seed, ply])
    if bag is None:
        return int(rng.choice(rules.n_pieces, p=rules.probabilities))
    return int(bag[rng.integers(len(bag))])


def after_deal(rules: Rules, bag: tuple[int, ...] | None, piece: int) -> tuple[int, ...] | None:
    """The bag once ``piece`` was dealt from it (refilled when that empties it); None without a bag."""
    if bag is None:
        return None
    left = list(bag)
    left.remove(piece)
    return tuple(left) if left else tuple(p for p in range(rules.n_pieces) for _ in range(rules.bag_copies))


class Opponents:
    """The opponents a board offers for ``solution``'s game, the named ones
    solved on first use (a lock keeps two tabs from solving one twice).

    Args:
        solution: the game shown.
        max_memory: the bytes a named opponent's solve may take.
    """

    def __init__(self, solution: Solution | LeanView | ShardedView, max_memory: int) -> None:
        self.solution = solution
        self.rules = solution.rules
        self._max_memory = max_memory
        self._solved: dict[str, Solution] = {}
        self._lock = threading.Lock()

    @property
    def available(self) -> tuple[str, ...]:
        """The words :meth:`piece` takes here: ``solution`` only where the solution has an opponent of its own;
        the named ones only without a bag (a bag with an opponent choosing from it is not stepped through)
        and beside a table (a lean solve's game is too big to solve again for each)."""
        table = isinstance(self.solution, Solution)
        named = () if self.rules.randomizer == "bag" or not table else OPPONENT_MODELS[1:]
        own = ("solution",) if self.solution.opponent_policy is not None else ()
        return ("random", *named, *own)

    def check(self, opponent: object) -> str:
        """``opponent`` if the board offers it here; else ``ValueError`` naming the words it takes."""
        if opponent not in self.available:
            raise ValueError(f"opponent must be one of {', '.join(self.available)} here, got {str(opponent)[:40]!r}")
        return str(opponent)

    def solved(self, opponent: str) -> Solution:
        """The solution of this game against ``opponent`` (an optimal player's,
        but for ``minavg`` and ``gaps``, which are solved against a random
        one): the board's own where it is that, or for ``solution``; its ties broken by the
        board's rule (``ties``, ``tie_seed``), as the opponent's pieces and the player's moves are."""
        table = self.solution
        if not isinstance(table, Solution):  # (neither `available` nor a compare offers it there)
            raise ValueError(f"opponent {opponent!r}: a lean or sharded result's game is not solved again")
        if opponent in ("solution", table.opponent):
            return table
        with self._lock:
            if opponent not in self._solved:
                from ..solvers.solve import solve

                self._solved[opponent] = solve(
                    Match(self.rules, opponent=opponent),
                    discount=table.discount,
                    max_memory=self._max_memory,
                    ties=table.ties,
                    tie_seed=table.tie_seed,
                )
            return self._solved[opponent]

    def piece(self, opponent: str, after: Position, known: tuple[int, ...], *, seed: int, ply: int) -> int:
        """The piece ``opponent`` gives on ``after`` (its board, slot and bag
        once the placement is made), seeing ``known`` (the pieces in sight);
        ``seed`` and ``ply`` draw a random one."""
        if opponent == "random":
            return random_piece(self.rules, after.bag, seed, ply)
        if not isinstance(self.solution, Solution):  # (a lean or sharded result's own opponent, on demand)
            return self.rules.piece_index(self.solution.piece_policy(after.board))
        held = None if after.held is None else int(after.held)
        name = self.solved(opponent).piece_policy(
            after.board, queue=known or None, held=held if self.rules.hold else None, locked=after.locked
        )
        return self.rules.piece_index(name)

    def start(self, opponent: str, seed: int) -> Position:
        """The position a game of ``seed`` starts on against ``opponent``
        (the opening queue and a drawn hold as :meth:`Match.stepped_game` deals them)."""
        if opponent != "random" and not isinstance(self.solution, Solution):  # (its own opponent: plain rules)
            start = self.rules.start
            return Position(start, self.rules.piece_index(self.solution.piece_policy(start)), (), None, False, None)
        who: str | Solution = "random" if opponent == "random" else self.solved(opponent)
        game = Match(self.rules, opponent=who).stepped_game(seed=seed)
        bag = None if game.bag_left is None else tuple(sorted(game.bag_left))
        held = None if game.held is None else int(game.held)
        return Position(int(game.board), int(game.piece), tuple(game.queue), held, bool(game.locked), bag)
