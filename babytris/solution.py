"""Solution: exact values and an optimal policy over the reachable states."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .board import Board
from .pieces import Piece, Placement
from .rules import Rules
from .states import Transitions, placement_table

__all__ = ["Solution"]


@dataclass(frozen=True, repr=False, eq=False)
class Solution:
    """Values and a greedy policy for every reachable (board, piece) state.

    Attributes:
        rules: the rule set solved.
        discount: the discount factor.
        values: float64 array ``(n_boards, n_pieces)``: ``values[i, p]`` is the
            optimal expected discounted score of board ``boards[i]`` with piece
            ``p`` to place, counting that placement's points.
        policy: int16 array ``(n_boards, n_pieces)``: the number of the best
            placement among the piece's placements, -1 where none fits.
        iterations: greedy (Bellman optimality) sweeps run.
        residual: the largest change of a value in the last greedy sweep.
        converged: whether ``residual <= tol``.
        residuals: float64 array ``(iterations,)``, the residual of each greedy sweep.
        transitions: the reachable game graph that was solved.
        method: ``"vi"`` or ``"mpi"``; ``tol``, ``max_iter`` as passed.
        opponent: ``"random"``, ``"minimax"`` or ``"minavg"`` (who picks the
            next piece; with ``"minavg"`` the player places at random and has
            no policy).
        seconds: wall time of ``{"enumerate": ..., "solve": ...}``.
    """

    rules: Rules
    discount: float
    values: np.ndarray
    policy: np.ndarray
    iterations: int
    residual: float
    converged: bool
    residuals: np.ndarray
    transitions: Transitions
    method: str
    tol: float
    max_iter: int
    seconds: dict = field(default_factory=dict)
    opponent: str = "random"

    @property
    def boards(self) -> np.ndarray:
        """uint64 array ``(n_boards,)`` of reachable boards, the empty board first
        (numbered as in :class:`~babytris.Transitions`: by layer, ascending within one)."""
        return self.transitions.boards

    @property
    def n_boards(self) -> int:
        return self.transitions.n_boards

    @property
    def n_states(self) -> int:
        return self.values.size

    @property
    def board_values(self) -> np.ndarray:
        """float64 array ``(n_boards,)``: each board's value before the next
        piece is drawn (``sum_p prob(p) V(b, p)``) or chosen by the opponent
        (``min_p V(b, p)``)."""
        return self._board_value(self.values)

    @property
    def start_value(self) -> float:
        """Value of the empty board before the first piece is drawn or chosen."""
        return float(self._board_value(self.values[self.index(0)]))

    def _board_value(self, state_values: np.ndarray) -> np.ndarray:
        """Combine values over the last axis (pieces) as the opponent does."""
        if self.opponent != "random":
            return state_values.min(axis=-1)
        return state_values @ np.asarray(self.rules.probabilities)

    @property
    def piece_choices(self) -> np.ndarray | None:
        """int16 array ``(n_boards,)``: the piece index the opponent gives on
        each board (the first of equals), or None when pieces are drawn at random."""
        if self.opponent == "random":
            return None
        return np.argmin(self.values, axis=1).astype(np.int16)

    def piece_policy(self, board: "int | Board") -> str:
        """The name of the piece the opponent gives on ``board`` (the first of equals)."""
        if self.opponent == "random":
            raise ValueError("piece_policy: pieces are drawn at random here (opponent='random')")
        return self.rules.pieces[int(np.argmin(self.values[self.index(board)]))].name

    @property
    def nbytes(self) -> int:
        return self.values.nbytes + self.policy.nbytes + self.residuals.nbytes + self.transitions.nbytes

    def index(self, board: "int | Board") -> int:
        """Position of ``board`` in :attr:`boards`; ``KeyError`` if it is not reachable."""
        return self.transitions.board_index(self._bits(board))

    def value(self, board: "int | Board", piece: "int | str | Piece") -> float:
        """Optimal value of placing ``piece`` on ``board`` (0 if it fits nowhere)."""
        return float(self.values[self.index(board), self.rules.piece_index(piece)])

    def best_action(self, board: "int | Board", piece: "int | str | Piece") -> Placement | None:
        """An optimal :class:`Placement`, or None at game over (the piece fits nowhere)."""
        if self.opponent == "minavg":
            raise ValueError("best_action: with opponent='minavg' the player places at random")
        p = self.rules.piece_index(piece)
        k = int(self.policy[self.index(board), p])
        return None if k < 0 else placement_table(self.rules).placements[p][k]

    def action_values(self, board: "int | Board", piece: "int | str | Piece") -> dict[Placement, float]:
        """Every legal placement with its value ``points + discount * value after``."""
        t = self.transitions
        p = self.rules.piece_index(piece)
        s = self.index(board) * self.rules.n_pieces + p
        after = self.board_values
        scores = self.rules.line_scores
        moves = placement_table(self.rules).placements[p]
        return {
            moves[t.placement[e]]: scores[t.lines[e]] + self.discount * float(after[t.next_board[e]])
            for e in range(t.offsets[s], t.offsets[s + 1])
        }

    def _bits(self, board: "int | Board") -> int:
        if isinstance(board, Board):
            if (board.width, board.height) != (self.rules.width, self.rules.height):
                raise ValueError(
                    f"board is {board.width}x{board.height}, the rules are {self.rules.width}x{self.rules.height}"
                )
            return board.bits
        if isinstance(board, bool) or not isinstance(board, (int, np.integer)):
            raise TypeError(f"board must be an int or a Board, got {type(board).__name__}")
        return int(board)

    def __repr__(self) -> str:
        r = self.rules
        status = "converged" if self.converged else "NOT converged"
        total = sum(self.seconds.values())
        return (
            f"<Solution {r.width}x{r.height} pieces={','.join(r.piece_names)} discount={self.discount}"
            f"{'' if self.opponent == 'random' else ' opponent=' + self.opponent}: "
            f"{self.n_boards:,} boards, start_value={self.start_value:.6f}, {self.iterations} iterations "
            f"({self.method}), residual={self.residual:.1e} {status}, {total:.3f}s>"
        )
