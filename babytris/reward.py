"""Rewards other than points: weighted board features (the robust player's
reward) and the holes a placement creates (the gap opponent's objective)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .rules import Rules
from .states import Transitions

__all__ = ["Reward", "heights", "holes", "move_sources", "move_rewards", "holes_created"]


@dataclass(frozen=True)
class Reward:
    """A placement's reward as a weighted sum of features:

        ``lines * lines_cleared - height * max_height + score * points - gaps * holes``

    ``lines_cleared`` and ``points`` are those of the placement (its full
    rows are counted as the piece lands, before they are cleared); ``max_height``
    (the highest filled row, 0 for an empty board) and ``holes`` (empty cells
    under a filled cell of their column) are measured on the board after the
    placement and its clear, the board the next piece falls on.

    ``Reward()`` (score 1, the rest 0) is the plain game.  The weights of the
    robust-player study are ``Reward(lines=0, height=1, score=4, gaps=1.5)``
    and the like.
    """

    lines: float = 0.0
    height: float = 0.0
    score: float = 1.0
    gaps: float = 0.0

    def __post_init__(self) -> None:
        for name in ("lines", "height", "score", "gaps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"Reward.{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))

    @property
    def is_points(self) -> bool:
        """Whether this is the plain game's reward (points only, weight 1)."""
        return (self.lines, self.height, self.score, self.gaps) == (0.0, 0.0, 1.0, 0.0)


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


def move_rewards(transitions: Transitions, reward: Reward) -> np.ndarray:
    """Each move's reward under ``reward`` (float64 array, one per move)."""
    rules: Rules = transitions.rules
    lines = transitions.lines
    per_lines = reward.lines * np.arange(len(rules.line_scores)) + reward.score * np.asarray(rules.line_scores)
    out = per_lines[lines]
    if reward.height or reward.gaps:
        boards = transitions.boards
        after = reward.height * heights(boards, rules.width, rules.height) + reward.gaps * holes(
            boards, rules.width, rules.height
        )
        out = out - after[transitions.next_board]
    return np.ascontiguousarray(out, dtype=np.float64)


def holes_created(transitions: Transitions) -> np.ndarray:
    """Each move's holes after it less holes before (float64 array, one per
    move): the gap opponent's reward.  Negative where a clear removes holes."""
    rules = transitions.rules
    count = holes(transitions.boards, rules.width, rules.height)
    return (count[transitions.next_board] - count[move_sources(transitions)]).astype(np.float64)
