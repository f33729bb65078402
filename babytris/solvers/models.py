"""Seed models solved exactly: Block Drop and No-Holes Tetris.

Both come from Bodoia and Puranik, *Applying Reinforcement Learning to
Competitive Tetris* (Stanford), who solved them with a generic POMDP solver
(ZMDP): Block Drop 4x4 in under a second, 5x4 in 16 s, 6x4 in over a minute,
nothing above 7x5; No-Holes Tetris 4x4 in about 20 s, 5x4 and 6x4 not to a
good policy.  The paper's ``m x n`` board has m rows and n columns: here
``height=m, width=n`` (babytris writes sizes width x height, so the paper's
5x4 is ``width=4, height=5``).

The paper's rules, as modelled here:

- Boards are column heights, each in 0..m-1: "the game ends if a column
  reaches height m".  Every placement is a move (``Rules(top_out=True)``);
  one that leaves a cell in the top row after its clears, or would rest
  above the board, loses: it leads to the lost board (the paper's terminal
  state) and costs m (``Reward(loss=m)``), paid on that move.  The check
  comes after the clears: a piece that completes rows may pass through the
  top row (with a single block on a board at least 2 wide it never can).
- Block Drop: one piece, a single block; reward 1 per line cleared.
- No-Holes Tetris (``Rules(no_holes=True)``): a landed piece fills every empty
  cell under it in its columns, then full rows are cleared (the cells filled
  count toward them); reward: lines cleared minus the cells filled (the holes
  the placement would have made), ``Reward(new_holes=1)``.

The paper counts ``m^n + 1`` states for Block Drop (every height vector and
the terminal state) and ``p m^n + 1`` for No-Holes Tetris with p pieces.
Height vectors whose columns are all at least 1 have a full bottom row, which
a placement always clears, so they never occur: Block Drop reaches exactly
``m^n - (m-1)^n`` boards and the lost one; No-Holes Tetris reaches at most
that many (a few fewer with some piece sets on small boards).  The paper does
not give a discount: :meth:`Model.solve` takes 0.9 by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.reward import Reward
from ..game.pieces import Piece
from ..game.rules import Rules, RulesError
from ..game.validation import check_int
from ..results.solution import Solution

__all__ = ["BLOCK", "Model", "block_drop", "no_holes_tetris"]

#: Block Drop's only piece: a single block.
BLOCK = Piece("block", ((0, 0),))


@dataclass(frozen=True)
class Model:
    """A named game: its rules and the reward it is scored by.

    ``rules, reward = model`` unpacks it; :meth:`solve` solves it.
    """

    name: str
    rules: Rules
    reward: Reward

    def __iter__(self):
        return iter((self.rules, self.reward))

    @property
    def size(self) -> str:
        """The paper's ``m x n``: rows by columns."""
        return f"{self.rules.height}x{self.rules.width}"

    @property
    def paper_states(self) -> int:
        """The paper's state count: ``p m^n + 1`` (p pieces; the terminal state)."""
        return self.rules.n_pieces * self.rules.height**self.rules.width + 1

    def solve(self, *, discount: float = 0.9, **options: Any) -> Solution:
        """The :class:`~babytris.Solution` of the rules with the model's reward,
        by :func:`babytris.solve`; other keywords as for it (``tol``,
        ``opponent``, ``max_memory``, ...)."""
        from .solve import solve  # solve imports much; models stay light

        return solve(self.rules, discount=discount, reward=self.reward, **options)

    def __repr__(self) -> str:
        return f"<Model {self.name} {self.size} (rows x columns): {self.rules!r}, {self.reward!r}>"


def block_drop(*, width: int, height: int, mirror: bool = False) -> Model:
    """The :class:`Model` of Block Drop on the paper's ``height x width``
    board (m = height rows, n = width columns): a single block dropped into
    one of the columns each turn; 1 per line cleared; a column reaching the
    top row loses, at a cost of ``height``.  ``mirror`` merges mirror-image
    boards (same values)."""
    _check_size(width, height)
    rules = Rules(width=width, height=height, pieces=[BLOCK], top_out=True, mirror=mirror)
    return Model("Block Drop", rules, Reward(loss=height))


def no_holes_tetris(*, width: int, height: int, pieces: Any = "tetrominoes", mirror: bool = False) -> Model:
    """The :class:`Model` of No-Holes Tetris on the paper's ``height x
    width`` board: the seven tetrominoes (or ``pieces``, as for :class:`~babytris.Rules`) drawn
    uniformly; boards are column heights (cells under a landed piece are
    filled, then full rows cleared); reward: lines cleared minus the cells
    filled; a column reaching the top row loses, at a cost of ``height``.
    Points are lines (``line_scores`` 0, 1, 2, ...), so playouts and
    :func:`~babytris.expected_points` count lines cleared."""
    _check_size(width, height)
    rules = Rules(
        width=width,
        height=height,
        pieces=pieces,
        line_scores=tuple(range(height + 1)),
        no_holes=True,
        top_out=True,
        mirror=mirror,
    )
    return Model("No-Holes Tetris", rules, Reward(new_holes=1, loss=height))


def _check_size(width: object, height: object) -> None:
    for name, value in (("width", width), ("height", height)):
        check_int(name, value, 1, 64, high_text="64 (width * height <= 64)", error=RulesError)
