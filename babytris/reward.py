"""Rewards other than points: weighted board features (the robust player's
reward), the cells the no-holes rule fills, a cost for losing, and the holes a
placement creates (the gap opponent's objective)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _core
from .rules import Rules
from .states import HOLD_MOVE, Transitions, lost_board, placement_table

__all__ = ["Reward", "heights", "holes", "move_sources", "move_rewards", "holes_created", "holes_filled",
           "check_reward"]


@dataclass(frozen=True)
class Reward:
    """A placement's reward as a weighted sum of features:

        ``lines * lines_cleared - height * max_height + score * points - gaps * holes
        - new_holes * cells_filled``

    and a cost for losing the game, ``loss`` (>= 0).

    ``lines_cleared`` and ``points`` are those of the placement (its full
    rows are counted as the piece lands, before they are cleared); ``max_height``
    (the highest filled row, 0 for an empty board) and ``holes`` (empty cells
    under a filled cell of their column) are measured on the board after the
    placement and its clear, the board the next piece falls on.
    ``cells_filled`` are the holes the placement would have made: the empty
    cells under the landed piece that ``Rules(no_holes=True)`` fills (only
    with those rules).

    ``loss`` is paid when the game ends: a state where the piece to place
    fits nowhere is worth ``-loss`` (instead of 0) to the player, whatever the
    opponent; with ``Rules(top_out=True)`` the game ends by a move instead, a
    placement that tops out, whose reward is then ``score * line_scores[0] -
    loss`` (it clears no row; no board features: the game is over), and the
    lost board after it is worth 0.

    ``Reward()`` (score 1, the rest 0) is the plain game.  The weights of the
    robust-player study are ``Reward(lines=0, height=1, score=4, gaps=1.5)``
    and the like; No-Holes Tetris (:func:`babytris.models.no_holes_tetris`)
    is ``Reward(lines=1, score=0, new_holes=1, loss=m)``.
    """

    lines: float = 0.0
    height: float = 0.0
    score: float = 1.0
    gaps: float = 0.0
    new_holes: float = 0.0
    loss: float = 0.0

    def __post_init__(self) -> None:
        for name in ("lines", "height", "score", "gaps", "new_holes", "loss"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"Reward.{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.loss < 0:
            raise ValueError(f"Reward.loss must be a finite number >= 0 (a cost), got {self.loss!r}")

    @property
    def is_points(self) -> bool:
        """Whether this is the plain game's reward (points only, weight 1)."""
        return self.scores_points and self.loss == 0.0

    @property
    def scores_points(self) -> bool:
        """Whether every placement that does not top out scores its points
        (weight 1, no other feature); ``loss`` may still be set."""
        return (self.lines, self.height, self.score, self.gaps, self.new_holes) == (0.0, 0.0, 1.0, 0.0, 0.0)

    def dead_value(self, rules: Rules) -> float:
        """The value of a state where the piece fits nowhere: ``-loss``, or 0
        with ``rules.top_out`` (only the lost board has such states, and the
        move that led there paid the loss)."""
        return 0.0 if rules.top_out else -self.loss


def check_reward(reward: "Reward | None", rules: Rules) -> None:
    """Raise ``ValueError`` if ``reward`` weighs a feature ``rules`` lack."""
    if reward is not None and reward.new_holes and not rules.no_holes:
        raise ValueError(f"reward: Reward.new_holes weighs the cells Rules(no_holes=True) fills, and these rules "
                         f"keep holes (no_holes=False); got new_holes={reward.new_holes!r} (use gaps)")


def heights(boards: np.ndarray, width: int, height: int) -> np.ndarray:
    """Highest filled row (1-based; 0 if empty) of each board, int64 array."""
    boards = np.asarray(boards, dtype=np.uint64)
    full_row = np.uint64((1 << width) - 1)
    out = np.zeros(boards.shape, dtype=np.int64)
    for row in range(height):
        filled = ((boards >> np.uint64(row * width)) & full_row) != 0
        out[filled] = row + 1
    return out


def holes(boards: np.ndarray, width: int, height: int) -> np.ndarray:
    """Empty cells lying under a filled cell of their column, per board (int64 array)."""
    boards = np.asarray(boards, dtype=np.uint64)
    out = np.zeros(boards.shape, dtype=np.int64)
    one = np.uint64(1)
    for col in range(width):
        covered = np.zeros(boards.shape, dtype=bool)
        for row in reversed(range(height)):
            filled = ((boards >> np.uint64(row * width + col)) & one) != 0
            out += covered & ~filled
            covered |= filled
    return out


def move_sources(transitions: Transitions) -> np.ndarray:
    """The board each move starts from (int64 array, one per move)."""
    n_pieces = transitions.rules.n_pieces
    per_board = np.diff(transitions.offsets[::n_pieces])
    return np.repeat(np.arange(transitions.n_boards), per_board)


def _states_of(transitions: Transitions, moves: np.ndarray | None) -> np.ndarray:
    """The state each move (every move, or those numbered ``moves``) belongs to (int64)."""
    t = transitions
    if moves is None:
        return np.repeat(np.arange(t.n_states, dtype=np.int64), np.diff(t.offsets))
    return np.searchsorted(t.offsets, moves, side="right").astype(np.int64) - 1


def topped_out(transitions: Transitions, moves: np.ndarray | None = None) -> np.ndarray:
    """Whether each move (every move, or those numbered ``moves``) tops out:
    leads to the lost board (bool array; all False without ``rules.top_out``)."""
    t = transitions
    nxt = t.next_board if moves is None else t.next_board[moves]
    if not t.rules.top_out:
        return np.zeros(nxt.shape, dtype=bool)
    return t.boards[nxt] == np.uint64(lost_board(t.rules))


def holes_filled(transitions: Transitions, moves: np.ndarray | None = None) -> np.ndarray:
    """The cells ``rules.no_holes`` fills under the piece for each move (every
    move, or those numbered ``moves``), int64: the cells after it and the
    rows it cleared, less the cells before and the piece's own; 0 for moves
    that top out or put a piece on hold, and without ``no_holes``."""
    t, rules = transitions, transitions.rules
    moves_ = np.arange(t.n_moves) if moves is None else np.asarray(moves, dtype=np.int64)
    if not rules.no_holes or moves_.size == 0:
        return np.zeros(moves_.shape, dtype=np.int64)
    state = _states_of(t, None if moves is None else moves_)
    node, drawn = np.divmod(state, rules.n_pieces)
    placement = t.placement[moves_]
    sizes = np.array([p.size for p in rules.pieces] + [0], dtype=np.int64)   # [-1]: a hold places nothing
    if rules.hold:
        piece = np.searchsorted(placement_table(rules).first, placement, side="right") - 1
        piece = np.where(placement == HOLD_MOVE, -1, piece)
    elif rules.preview:
        piece = t.queues[node] // rules.n_pieces ** (rules.preview - 1)   # the queue's first
    else:
        piece = drawn
    cells = _core.popcounts(t.boards)
    nxt = t.next_board[moves_]
    out = (cells[nxt].astype(np.int64) + rules.width * t.lines[moves_].astype(np.int64)
           - cells[node].astype(np.int64) - sizes[piece])
    out[topped_out(t, moves_)] = 0
    return out


def move_rewards(transitions: Transitions, reward: Reward, moves: np.ndarray | None = None) -> np.ndarray:
    """Each move's reward under ``reward`` (float64 array, one per move, or
    per move numbered in ``moves``)."""
    t, rules = transitions, transitions.rules
    moves_ = slice(None) if moves is None else np.asarray(moves, dtype=np.int64)
    lines = t.lines[moves_]
    per_lines = reward.lines * np.arange(len(rules.line_scores)) + reward.score * np.asarray(rules.line_scores)
    out = per_lines[lines]
    if reward.height or reward.gaps:
        if moves is None:   # per board, then per move: far fewer boards than moves
            after = reward.height * heights(t.boards, rules.width, rules.height) + reward.gaps * holes(
                t.boards, rules.width, rules.height)
            out = out - after[t.next_board]
        else:
            boards = t.boards[t.next_board[moves_]]
            out = out - (reward.height * heights(boards, rules.width, rules.height)
                         + reward.gaps * holes(boards, rules.width, rules.height))
    if reward.new_holes:
        out = out - reward.new_holes * holes_filled(t, None if moves is None else moves_)
    if rules.top_out:
        out = np.where(topped_out(t, None if moves is None else moves_),
                       reward.score * rules.line_scores[0] - reward.loss, out)
    return np.ascontiguousarray(out, dtype=np.float64)


def holes_created(transitions: Transitions) -> np.ndarray:
    """Each move's holes after it less holes before (float64 array, one per
    move): the gap opponent's reward.  Negative where a clear removes holes;
    0 for a move that tops out (the lost board's empty rows are no holes)."""
    rules = transitions.rules
    count = holes(transitions.boards, rules.width, rules.height)
    out = (count[transitions.next_board] - count[move_sources(transitions)]).astype(np.float64)
    out[topped_out(transitions)] = 0.0
    return out
