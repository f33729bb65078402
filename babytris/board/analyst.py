"""A position's moves with their exact values and regrets, and a move played:
what the board's JSON API answers, read from a :class:`~babytris.Solution`.

The legal moves are :class:`~babytris.Game`'s (the compiled engine's), the
values :meth:`Solution.action_values` (points, or the reward the solution
counts, plus the discounted value after), the regret of a move the best
value less its own (0 within :attr:`Solution.tie_slack`), and its mark by the
regret, as chess annotators label moves: see :data:`MARKS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..engine.placements import lost_board
from ..engine.resources import check_max_memory
from ..engine.stepped import Game, Move
from ..game.board import Board
from ..game.drop import landing
from ..game.pieces import Placement
from ..game.validation import ArgumentTypeError
from ..results.solution import Solution
from .on_demand import LeanView, ShardedView
from .opponents import Opponents, after_deal
from .position import Position, position_text

__all__ = ["Analyst", "MARKS", "mark", "move_id", "HOLD"]

#: A move's mark by its regret (the best value less its own, in the values'
#: units: expected discounted points): at least 1.0 a blunder ``??``, at
#: least 0.3 a mistake ``?``, at least 0.1 an inaccuracy ``?!``.  (At 4x5
#: with discount 0.9 the start's worst placement throws away 0.68 of 10.38.)
MARKS: Sequence[tuple[float, str]] = ((1.0, "??"), (0.3, "?"), (0.1, "?!"))

#: The id of the hold move (with hold: the piece goes on hold, nothing is placed).
HOLD = "hold"


def mark(regret: float) -> str:
    """The mark of a move that throws ``regret`` away (``""``: none)."""
    return next((sign for threshold, sign in MARKS if regret >= threshold), "")


def move_id(move: Placement | str) -> str:
    """A move's id in the API and the URL: ``PIECE-NUMBER`` (``L-3``; with
    hold a swap names the held piece), or ``hold``."""
    return HOLD if isinstance(move, str) else f"{move.piece}-{move.index}"


class Analyst:
    """The board's view of ``solution``: positions checked, their moves valued, moves played.

    Args:
        solution: a Solution whose player optimises (its values are the
            player's: not a random player's, nor the ``gaps`` opponent's holes),
            or a lean or sharded result's view (:mod:`babytris.board.on_demand`: its
            moves valued on demand).
        max_memory: the bytes a named opponent's solve may take (see :class:`Opponents`).

    Raises:
        ValueError: for a solution whose values are not the player's, or a
            ``max_memory`` out of [2**20, 2**63) bytes.
    """

    def __init__(self, solution: Solution | LeanView | ShardedView, *, max_memory: int) -> None:
        if not isinstance(solution, (Solution, LeanView, ShardedView)):
            raise ArgumentTypeError(
                f"solution must be a babytris.Solution (or a LeanView or ShardedView of a lean or sharded result), "
                f"got {type(solution).__name__}"
            )
        check_max_memory(max_memory)
        if solution.player != "optimal" or solution.opponent == "gaps":
            raise ValueError(
                f"solution: the board shows an optimal player's values; this one's player is {solution.player!r} "
                f"against {solution.opponent!r} (gaps counts holes)"
            )
        self.solution = solution
        self.rules = solution.rules
        self.opponents = Opponents(solution, max_memory)

    def _game(self, position: Position) -> Game:
        """A Game standing on ``position`` (its moves are the engine's)."""
        game = Game(self.rules, seed=0)
        game.board, game.piece, game.held, game.locked = position.board, position.piece, position.held, position.locked
        game.queue.clear()
        game.queue.extend(position.queue)
        return game

    def _lookup(self, position: Position) -> tuple:
        """The arguments :meth:`Solution.value` takes for ``position``."""
        held = position.held if self.rules.hold else None
        return position.board, position.piece, position.queue, held, position.locked, position.bag

    def value(self, position: Position, solution: Solution | LeanView | ShardedView | None = None) -> float:
        """The value of ``position`` (``solution``'s, default the board's);
        ``ValueError`` (one line) where no game reaches it."""
        try:
            return (solution or self.solution).value(*self._lookup(position))
        except KeyError:
            raise ValueError(
                f"position: no game of these rules reaches {position_text(position, self.rules)!r} "
                "(a board with a full row, or one no sequence of placements leaves)"
            ) from None

    def moves(self, position: Position) -> list[Move | str]:
        """The legal moves of ``position``, in :meth:`Game.moves`' order, then ``hold`` where it is one."""
        game = self._game(position)
        return [*game.moves(), *([HOLD] if game.can_hold else [])]

    def analysis(self, position: Position, *, opponent: str = "random", compare: str | None = None) -> dict[str, Any]:
        """What the API answers for ``position``: its text, value, the pieces
        to come (chances, or ``opponent``'s answer after each move) and every
        legal move with its value, regret and mark, the cells where it lands,
        its points and whether the solution's policy plays it; with
        ``compare`` (an opponent word) each move's value under the
        solution solved against that opponent too (see :meth:`compared`).

        Returns:
            a dict of JSON types (``moves``: a list of dicts, best first).
        """
        value = self.value(position)
        values = self.solution.action_values(*self._lookup(position))
        best = max(values.values(), default=0.0)
        slack = self.solution.tie_slack
        chosen = self.solution.best_action(*self._lookup(position)) if values else None
        other = self._other_values(position, compare) if compare else None
        rows = []
        for move in self.moves(position):
            placement = move if isinstance(move, str) else move.placement
            v = values[placement]
            regret = 0.0 if best - v <= slack else best - v
            row: dict[str, Any] = {
                "id": move_id(placement),
                "value": v,
                "regret": regret,
                "mark": mark(regret),
                "best": placement == chosen,
                **self._describe(position, move),
            }
            if other is not None:
                row["compare"] = other[0][placement]
            if opponent != "random":
                after, known = self._after(position, move)
                row["answer"] = self.rules.piece_names[self.opponents.piece(opponent, after, known, seed=0, ply=0)]
            rows.append(row)
        rows.sort(key=lambda r: r["regret"])  # (stable: tied moves in placement order)
        return {
            "position": position_text(position, self.rules),
            "value": value,
            "over": not rows,
            "moves": rows,
            "chances": self._chances(position) if opponent == "random" else None,
            **({"compare": self._compare_summary(rows, str(compare), other[1])} if other is not None else {}),
        }

    def _describe(self, position: Position, move: Move | str) -> dict[str, Any]:
        """Where a move lands and what it scores (a hold: nothing)."""
        if isinstance(move, str):
            return {
                "piece": self.rules.piece_names[position.piece],
                "cells": [],
                "points": 0.0,
                "lines": 0,
                "loses": False,
            }
        p = move.placement
        tops_out = self.rules.top_out and move.board == lost_board(self.rules)
        try:
            cells = landing(Board(position.board, self.rules.width, self.rules.height), p, self.rules)
        except ValueError:  # (with top_out a piece may rest above the top row: a lost game, no cell on the board)
            cells = frozenset()
        return {
            "piece": p.piece,
            "rotation": p.rotation,
            "column": p.column,
            "row": p.row,
            "cells": sorted([col, row] for col, row in cells),
            "points": move.points,
            "lines": move.lines,
            "loses": tops_out,
        }

    def _chances(self, position: Position) -> dict[str, float]:
        """Each piece's chance to come next, drawn at random."""
        names = self.rules.piece_names
        if position.bag is None:
            return {name: float(p) for name, p in zip(names, self.rules.probabilities)}
        left = position.bag  # (a move deals nothing: the next piece comes from this bag)
        return {name: left.count(i) / len(left) for i, name in enumerate(names) if i in left}

    def _after(self, position: Position, move: Move | str) -> tuple[Position, tuple[int, ...]]:
        """The position once ``move`` is made, before the next piece comes
        (its ``piece`` still the one placed), and the pieces then in sight."""
        if isinstance(move, str):  # hold: the piece goes on the slot, locked
            after = replace(position, held=position.piece, locked=True)
        else:
            swap = move.placement.piece != self.rules.piece_names[position.piece]
            held = position.piece if swap else position.held
            after = replace(position, board=move.board, held=held, locked=False)
        return after, position.queue

    def play(
        self, position: Position, move: str, *, opponent: str, seed: int, ply: int, piece: int | None = None
    ) -> dict[str, Any]:
        """Make the move with id ``move`` on ``position``; the next piece is
        ``piece`` if given (by hand), else ``opponent``'s (random: the draw of
        ``seed`` at ``ply``).

        Returns:
            ``{"position": the new text, "came": the piece's name, "points", "lines"}``.

        Raises:
            ValueError: for a move that is not legal here, or a piece the bag does not hold.
        """
        self.value(position)  # (refuses a position no game reaches)
        moves = {move_id(m if isinstance(m, str) else m.placement): m for m in self.moves(position)}
        if move not in moves:
            raise ValueError(f"move must be one of the legal moves here ({', '.join(moves) or 'none'}), got {move!r}")
        made = moves[move]
        after, known = self._after(position, made)
        if piece is None:
            piece = self.opponents.piece(opponent, after, known, seed=seed, ply=ply)
        elif after.bag is not None and piece not in after.bag:
            raise ValueError(f"piece: the bag holds only {', '.join(self.rules.piece_names[p] for p in after.bag)}")
        pieces = (*known, piece)
        new = replace(after, piece=pieces[0], queue=pieces[1:], bag=after_deal(self.rules, after.bag, piece))
        points, lines = (0.0, 0) if isinstance(made, str) else (made.points, made.lines)
        return {
            "position": position_text(new, self.rules),
            "came": self.rules.piece_names[piece],
            "move": move,
            "points": points,
            "lines": lines,
        }

    def compared(self, opponent: str) -> Solution:
        """The solution of the same game whose player is solved against ``opponent`` (``random`` or
        ``minimax``: the optimal and the robust max-min player), solved on first use."""
        if not self.comparable:
            raise ValueError("compare: a lean solve holds one player's board values; leave compare out")
        if opponent not in self.comparable:
            raise ValueError(f"compare must be random or minimax (a player's model), got {str(opponent)[:40]!r}")
        return self.opponents.solved(opponent)

    @property
    def kind(self) -> str:
        """What the values are: ``table`` (a Solution), ``lean`` or ``sharded`` (exact, on demand), or
        ``estimate`` (a feature-based player's evaluations, :mod:`babytris.board.estimates`)."""
        if isinstance(self.solution, Solution):
            return "table"
        return "lean" if isinstance(self.solution, LeanView) else "sharded"

    @property
    def comparable(self) -> tuple[str, ...]:
        """The words ``compare`` takes: the optimal player's opponent models (none beside a lean solve)."""
        return ("random", "minimax") if isinstance(self.solution, Solution) else ()

    def _other_values(self, position: Position, compare: str | None) -> tuple[dict, str | None] | None:
        """The compared player's values of ``position``'s moves and the id of its move (None: none)."""
        if compare is None:
            return None
        other = self.compared(compare)
        chosen = other.best_action(*self._lookup(position))
        return other.action_values(*self._lookup(position)), None if chosen is None else move_id(chosen)

    def _compare_summary(self, rows: list[dict[str, Any]], compare: str, theirs: str | None) -> dict[str, Any]:
        """Where the two players disagree: each one's move and what it costs under the other's values."""
        mine = next((r for r in rows if r["best"]), None)
        if mine is None or theirs is None:
            return {"opponent": compare, "agree": True, "theirs": theirs}
        other = next(r for r in rows if r["id"] == theirs)
        return {
            "opponent": compare,
            "agree": other["regret"] == 0.0,  # (a move tied with the best here is no disagreement)
            "theirs": theirs,
            "theirs_costs_here": other["regret"],
            "mine_costs_there": max(0.0, other["compare"] - mine["compare"]),
        }
