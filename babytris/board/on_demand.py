"""The results that keep state values without a move table, read as the
board reads a :class:`~babytris.Solution`: a lean solve
(:func:`babytris.solve_lean`: board values only, 4x8 and up) and a sharded
solve saved to a directory (:func:`babytris.load_sharded`: each state's value
and move, a shard at a time).  A move's value is computed on demand.

A move's value is its points plus the discounted value of the board after it:
the lean solve's board value (the opponent already in it: the pieces' mean, or
the least valuable piece against ``minimax``), as its sweeps compute it, or
that combination of the sharded solve's state values.  Both solve the plain
game: no previews, hold, bag or mirror merging, so a position is a board and
a piece.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..engine.placements import placement_table
from ..engine.stepped import Game
from ..files.sharded import ShardedValues
from ..game.pieces import Placement
from ..game.rules import Rules
from ..modes.lean import LeanSolution

__all__ = ["LeanView", "ShardedView"]


class _OnDemand:
    """The lookups the board reads, over a result's state values (subclasses say where they come from).

    Attributes:
        rules, discount, opponent, error_bound, tie_slack, start_value: the result's.
        player: ``"optimal"``; reward: None (points).
        opponent_policy: ``"on demand"`` where the result's opponent chooses the pieces
            (``"minimax"``: :meth:`piece_policy` computes them), else None.
    """

    player = "optimal"
    reward = None
    rules: Rules
    discount: float
    opponent: str
    error_bound: float | None
    tie_slack: float
    start_value: float

    def _state(self, board: int, piece: int) -> tuple[float, int]:
        """The value and the policy's placement number of ``piece`` on ``board``; KeyError if unreachable."""
        raise NotImplementedError

    def _after(self, boards: list[int]) -> np.ndarray:
        """The value of each board (reachable: a move's board after) before its next piece comes."""
        raise NotImplementedError

    @property
    def opponent_policy(self) -> str | None:
        return "on demand" if self.opponent == "minimax" else None

    def piece_policy(self, board: int, *_: object, **__: object) -> str:
        """The piece the minimax opponent gives on ``board``: the least valuable
        to the player, the first of those within the tie slack (as a table
        Solution's opponent); ``ValueError`` against drawn pieces."""
        if self.opponent_policy is None:
            raise ValueError("piece_policy: pieces are drawn at random here (opponent='random')")
        values = [self._state(board, p)[0] for p in range(self.rules.n_pieces)]
        least = min(values)
        return self.rules.pieces[next(p for p, v in enumerate(values) if v <= least + self.tie_slack)].name

    def value(self, board: int, piece: int, preview: Sequence = (), *_: object) -> float:
        """The optimal value of placing ``piece`` (an index) on ``board``."""
        return self._state(board, piece)[0]

    def best_action(self, board: int, piece: int, preview: Sequence = (), *_: object) -> Placement | None:
        """The policy's placement (None: the piece fits nowhere)."""
        number = self._state(board, piece)[1]
        return None if number < 0 else placement_table(self.rules).placements[piece][number]

    def action_values(self, board: int, piece: int, preview: Sequence = (), *_: object) -> dict:
        """Every placement of ``piece`` on ``board`` with its points plus the discounted value after."""
        self._state(board, piece)  # (refuses an unreachable board)
        game = Game(self.rules, seed=0)
        game.board, game.piece = board, piece
        moves = game.moves()
        after = self._after([m.board for m in moves])
        return {m.placement: m.points + self.discount * float(w) for m, w in zip(moves, after)}


class LeanView(_OnDemand):
    """A lean solve's board values, read as a Solution (see the module)."""

    def __init__(self, lean: LeanSolution) -> None:
        self.lean = lean
        self.rules, self.discount, self.opponent = lean.rules, lean.discount, lean.opponent
        self.error_bound, self.tie_slack, self.start_value = lean.error_bound, lean.tie_slack, lean.start_value

    def _state(self, board: int, piece: int) -> tuple[float, int]:
        if self.lean.table.index(np.array([board], dtype=np.uint64))[0] < 0:
            raise KeyError(board)
        values, moves = self.lean.values_and_moves([board])
        return float(values[0, piece]), int(moves[0, piece])

    def _after(self, boards: list[int]) -> np.ndarray:
        return self.lean.board_values[self.lean.table.index(np.array(boards, dtype=np.uint64))]


class ShardedView(_OnDemand):
    """A sharded solve's saved state values, read as a Solution (see the module): the tie slack is
    ``2 * discount * error_bound``, as a Solution's (0 where the load proved no bound)."""

    def __init__(self, sharded: ShardedValues) -> None:
        self.sharded = sharded
        self.rules, self.discount, self.opponent = sharded.rules, sharded.discount, sharded.opponent
        self.error_bound, self.start_value = sharded.error_bound, sharded.start_value
        self.tie_slack = 0.0 if sharded.error_bound is None else 2 * sharded.discount * sharded.error_bound

    def _state(self, board: int, piece: int) -> tuple[float, int]:
        best = self.sharded.best_action(board, piece)
        return self.sharded.value(board, piece), -1 if best is None else best.index

    def _after(self, boards: list[int]) -> np.ndarray:
        values = np.array([[self.sharded.value(b, p) for p in range(self.rules.n_pieces)] for b in boards])
        if self.opponent == "minimax":
            return values.min(axis=1) if len(boards) else np.zeros(0)
        return values @ np.asarray(self.rules.probabilities)
