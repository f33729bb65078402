"""Boards too big to solve (10x20 Tetris) on the board: a feature-based
player's evaluations in place of exact values, labelled as estimates.

The player is Dellacherie's: six features of the board after a placement
(landing height, eroded cells, row and column transitions, holes, wells, as
:mod:`babytris.big.features` defines them after mdptetris) weighted
``(-1, 1, -1, -1, -4, -1)``; it places each piece where that evaluation is
highest.  An evaluation is a score, not expected points: a move's "regret"
here is the best evaluation less its own, and no mark is given (the marks'
thresholds are in points).  The moves come from the big-board engine
(:class:`babytris.big.Tetris`); pieces are drawn at random (a seed and the ply,
as on the exact board) or given by hand.  The only module of the board that
imports ``big/`` (public names), and only when a big board is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..big import Tetris
from ..game.pieces import Piece
from .analyst import Analyst, move_id
from .opponents import random_piece
from .position import Position, position_text

__all__ = ["DELLACHERIE", "BigLayout", "EstimateAnalyst"]

#: Dellacherie's features and weights (the constant's weight first), as babytris.big.tetris's example writes them.
DELLACHERIE = (
    ("landing_height", "eroded_cells", "row_transitions", "column_transitions", "holes", "wells"),
    (0.0, -1.0, 1.0, -1.0, -1.0, -4.0, -1.0),
)


@dataclass(frozen=True)
class BigLayout:
    """A big board's game as the board's text form and API read a Rules: its size and pieces (no
    previews, hold or bag: the big engine has none)."""

    tetris: Tetris
    preview: int = 0
    hold: bool = False
    randomizer: str = "iid"
    bag_copies: int = 1
    moves: str = "hard"

    @property
    def width(self) -> int:
        return self.tetris.width

    @property
    def height(self) -> int:
        return self.tetris.height

    @property
    def pieces(self) -> tuple[Piece, ...]:
        return self.tetris.pieces

    @property
    def piece_names(self) -> tuple[str, ...]:
        return self.tetris.piece_names

    @property
    def line_scores(self) -> tuple[float, ...]:
        return self.tetris.line_scores

    @property
    def probabilities(self) -> tuple[float, ...]:
        return self.tetris.probabilities

    @property
    def n_pieces(self) -> int:
        return self.tetris.n_pieces


class _RandomPieces:
    """Who gives the pieces on a big board: drawn at random (or by hand, which the API passes)."""

    available = ("random",)

    def __init__(self, layout: BigLayout) -> None:
        self.layout = layout

    def check(self, opponent: object) -> str:
        if opponent != "random":
            raise ValueError(
                f"opponent must be random here (a big board's pieces are drawn), got {str(opponent)[:40]!r}"
            )
        return "random"

    def piece(self, opponent: str, after: Position, known: tuple[int, ...], *, seed: int, ply: int) -> int:
        return random_piece(self.layout, None, seed, ply)

    def start(self, opponent: str, seed: int) -> Position:
        return Position(0, random_piece(self.layout, None, seed, 0))


class _Evaluations:
    """What the API's game description reads of a solution, for estimates: no bound, no tie slack."""

    player, opponent, reward, discount = "optimal", "random", None, 1.0
    error_bound, tie_slack = None, 0.0

    def __init__(self, start_value: float) -> None:
        self.start_value = start_value


class EstimateAnalyst(Analyst):
    """The board's view of ``tetris`` (a :class:`babytris.big.Tetris`) under Dellacherie's player:
    every placement with its evaluation (an estimate), the player's choice the best one."""

    @property
    def kind(self) -> str:
        return "estimate"

    @property
    def comparable(self) -> tuple[str, ...]:
        return ()

    def __init__(self, tetris: Tetris) -> None:
        if not isinstance(tetris, Tetris):
            raise ValueError(f"tetris must be a babytris.big.Tetris, got {type(tetris).__name__}")
        self.tetris = tetris
        self.layout = BigLayout(tetris)
        # (the text form and the API read it as they read a Rules)
        self.rules = self.layout  # type: ignore[assignment]
        self.opponents = _RandomPieces(self.layout)  # type: ignore[assignment]
        self._weights = np.asarray(DELLACHERIE[1])
        # (the empty board before its first piece: each piece's best evaluation, by the pieces' chances)
        empty = sum(q * self.value(Position(0, p)) for p, q in enumerate(tetris.probabilities))
        self.solution = _Evaluations(float(empty))  # type: ignore[assignment]

    @classmethod
    def of_game(
        cls,
        width: int,
        height: int,
        *,
        pieces: object = ("tetrominoes",),
        probabilities: object = None,
        line_scores: object = None,
    ) -> EstimateAnalyst:
        """The board of the big engine's game of these fields (:class:`babytris.big.Tetris`'s)."""
        return cls(Tetris(width, height, pieces, probabilities, line_scores))  # type: ignore[arg-type]

    def _rows(self, board: int) -> np.ndarray:
        w = self.tetris.width
        rows = np.array([(board >> (r * w)) & ((1 << w) - 1) for r in range(self.tetris.height)], dtype=np.uint16)
        return self.tetris.check_rows(rows)

    def _evaluate(self, position: Position) -> tuple[Any, np.ndarray]:
        """The afterstates of ``position`` and each one's evaluation."""
        try:
            after = self.tetris.afterstates(self._rows(position.board), position.piece)
        except ValueError as err:  # (a full row: no game leaves one)
            raise ValueError(f"position: {err}") from None
        if not len(after):
            return after, np.zeros(0)
        return after, self.tetris.feature_matrix(after, DELLACHERIE[0]) @ self._weights

    def value(self, position: Position, solution: object = None) -> float:
        """The best evaluation of a placement of ``position``'s piece (0 where none fits)."""
        values = self._evaluate(position)[1]
        return float(values.max()) if len(values) else 0.0

    def analysis(self, position: Position, *, opponent: str = "random", compare: str | None = None) -> dict[str, Any]:
        """As :meth:`Analyst.analysis`, each move's ``value`` its evaluation (an estimate, unmarked)."""
        if compare:
            raise ValueError("compare: a big board has one player, Dellacherie's; leave compare out")
        after, values = self._evaluate(position)
        best = int(np.argmax(values)) if len(values) else -1
        placements = self.tetris.placements[position.piece]
        piece = self.tetris.pieces[position.piece]
        shapes = piece.placed_shapes(self.tetris.width, self.tetris.height)
        rows: list[dict[str, Any]] = []
        for k in range(len(after)):
            number = int(after.placement[k])
            _, column, shape = shapes[number]
            bottom = int(after.landing_row[k])
            rows.append(
                {
                    "id": move_id(placements[number]),
                    "value": float(values[k]),
                    "regret": float(values[best] - values[k]),
                    "mark": "",
                    "best": k == best,
                    "piece": piece.name,
                    "rotation": placements[number].rotation,
                    "column": column,
                    "row": None,
                    "cells": sorted([x + column, y + bottom] for x, y in shape),
                    "points": float(self.tetris.line_scores[int(after.lines[k])]),
                    "lines": int(after.lines[k]),
                    "loses": False,
                }
            )
        rows.sort(key=lambda r: r["regret"])
        return {
            "position": position_text(position, self.layout),
            "value": float(values.max()) if len(values) else 0.0,
            "over": not rows,
            "moves": rows,
            "chances": dict(zip(self.tetris.piece_names, map(float, self.tetris.probabilities))),
        }

    def play(
        self, position: Position, move: str, *, opponent: str, seed: int, ply: int, piece: int | None = None
    ) -> dict[str, Any]:
        """As :meth:`Analyst.play`: the placement made by the big engine, the next piece drawn or given."""
        after, _ = self._evaluate(position)
        ids = [move_id(self.tetris.placements[position.piece][int(n)]) for n in after.placement]
        if move not in ids:
            raise ValueError(f"move must be one of the legal moves here ({', '.join(ids) or 'none'}), got {move!r}")
        k = ids.index(move)
        w = self.tetris.width
        board = sum(int(r) << (i * w) for i, r in enumerate(after.rows[k]))
        came = random_piece(self.layout, None, seed, ply) if piece is None else piece
        lines = int(after.lines[k])
        return {
            "position": position_text(Position(board, came), self.layout),
            "came": self.tetris.piece_names[came],
            "move": move,
            "points": float(self.tetris.line_scores[lines]),
            "lines": lines,
        }
