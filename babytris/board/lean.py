"""A lean solve (:func:`babytris.solve_lean`: board values only, 4x8 and up)
read as the board reads a :class:`~babytris.Solution`: a state's value and its
moves' values computed on demand from the board values.

A move's value is its points plus the discounted value of the board after it
(the board values already hold the opponent: the pieces' mean, or the least
valuable piece against ``minimax``), as the lean sweeps compute it; the
policy's move is :meth:`LeanSolution.values_and_moves`' (the first within the
tie slack).  The lean mode solves the plain game: no previews, hold, bag or
mirror merging, so a position is a board and a piece.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..engine.placements import placement_table
from ..engine.stepped import Game
from ..game.pieces import Placement
from ..modes.lean import LeanSolution

__all__ = ["LeanView"]


class LeanView:
    """``lean`` seen through :class:`~babytris.Solution`'s lookups (the ones the board reads).

    Attributes:
        rules, discount, opponent, error_bound, tie_slack, start_value: the lean solve's.
        player: ``"optimal"``; opponent_policy, reward: None (no piece per board is kept; points).
    """

    player = "optimal"
    opponent_policy = None
    reward = None

    def __init__(self, lean: LeanSolution) -> None:
        self.lean = lean
        self.rules = lean.rules
        self.discount = lean.discount
        self.opponent = lean.opponent
        self.error_bound = lean.error_bound
        self.tie_slack = lean.tie_slack
        self.start_value = lean.start_value

    def _state(self, board: int, piece: int) -> tuple[float, int]:
        """The value and the policy's placement number of ``piece`` on ``board``; KeyError if unreachable."""
        if self.lean.table.index(np.array([board], dtype=np.uint64))[0] < 0:
            raise KeyError(board)
        values, moves = self.lean.values_and_moves([board])
        return float(values[0, piece]), int(moves[0, piece])

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
        after = self.lean.table.index(np.array([m.board for m in moves], dtype=np.uint64))
        values = self.lean.board_values
        return {m.placement: m.points + self.discount * float(values[k]) for m, k in zip(moves, after)}
