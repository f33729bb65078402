"""The games the approximate methods learn on, behind one interface.

An enumerated Baby Tetris table (:class:`ExactGame`: states are board
indices, moves come from the table) or a big board (:class:`BigGame`: states
are boards as row bitmasks, moves come from the compiled engine).  Fitted
value iteration and TD(lambda) see either through :func:`game_model`:
``width``, ``height``, ``probabilities``, ``scores`` (points by rows
cleared), ``rows(states)``, ``moves(states, piece)``,
``moves_lines(states, piece)`` and ``start()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine.transitions import Transitions
from .features import rows_from_bits
from .playouts import sample_boards
from .tetris import Tetris

__all__ = ["ExactGame", "BigGame", "game_model", "check_points_table"]


class ExactGame:
    """An enumerated table seen as sampled boards (indices) and their moves."""

    def __init__(self, transitions: Transitions) -> None:
        check_points_table(transitions)
        rules = transitions.rules
        self.t = transitions
        self.width, self.height = rules.width, rules.height
        self.probabilities = np.asarray(rules.probabilities)
        self.scores = np.asarray(rules.line_scores, dtype=np.float64)
        self.rows_of_all = rows_from_bits(transitions.boards, self.width, self.height)

    def rows(self, states: np.ndarray) -> np.ndarray:
        return self.rows_of_all[states]

    def moves(self, states: np.ndarray, piece: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR of the moves of ``piece`` on each state: (offsets, next states, points)."""
        offsets, nxt, lines = self.moves_lines(states, piece)
        return offsets, nxt, self.scores[lines]

    def moves_lines(self, states: np.ndarray, piece: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR of the moves of ``piece`` on each state: (offsets, next states, rows cleared)."""
        t, n_pieces = self.t, len(self.probabilities)
        s = np.asarray(states, dtype=np.int64) * n_pieces + piece
        starts, ends = t.offsets[s], t.offsets[s + 1]
        counts = ends - starts
        offsets = np.zeros(len(s) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        edges = np.repeat(starts - offsets[:-1], counts) + np.arange(offsets[-1])
        return offsets, t.next_board[edges].astype(np.int64), t.lines[edges].astype(np.int64)

    def start(self) -> int:
        return self.t.board_index(self.t.rules.start)


class BigGame:
    """A big board (:class:`babytris.big.tetris.Tetris`): states are boards as
    row bitmasks ``(n, height)``, moves come from the compiled engine."""

    def __init__(self, tetris: Any) -> None:
        self.tetris = tetris
        self.width, self.height = tetris.width, tetris.height
        self.probabilities = np.asarray(tetris.probabilities)
        self.scores = np.asarray(tetris.line_scores, dtype=np.float64)

    def rows(self, states: np.ndarray) -> np.ndarray:
        return states

    def features(self, rows: np.ndarray, names: Sequence[str]) -> np.ndarray:
        return self.tetris.feature_matrix(rows, names) if len(rows) else np.zeros((0, 1 + len(names)))

    def moves_lines(self, states: np.ndarray, piece: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        after = self.tetris.afterstates_batch(states, piece)
        return after.offsets, after.rows, after.lines.astype(np.int64)

    def moves(self, states: np.ndarray, piece: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        offsets, nxt, lines = self.moves_lines(states, piece)
        return offsets, nxt, self.scores[lines]

    def start(self) -> np.ndarray:
        return self.tetris.empty()

    def sample(self, n: int, value: Any, epsilon: float, discount: float, rng: np.random.Generator) -> np.ndarray:
        greedy = (
            {}
            if value is None
            else dict(
                weights=value.weights,
                features=value.features,
                line_rewards="scores",
                discount=discount,
                epsilon=epsilon,
            )
        )
        return sample_boards(self.tetris, n, seed=int(rng.integers(2**63)), **greedy).rows


def check_points_table(transitions: Transitions) -> None:
    """Refuse tables whose game is not "points per placement" on plain boards:
    the approximate methods score moves by ``line_scores`` alone."""
    rules = transitions.rules
    if rules.node_tables:
        raise ValueError(
            "transitions: the table has previews, hold or a bag; fitted values and regret need plain rules"
        )
    if rules.top_out or rules.no_holes:
        raise ValueError(
            "transitions: top_out and no_holes rules (the seed models) score moves with a Reward "
            "(loss, new holes) that fitted values and regret do not count; use plain rules"
        )


def game_model(game: Any) -> ExactGame | BigGame:
    """The model of ``game``: a :class:`~babytris.Transitions` or a :class:`babytris.big.tetris.Tetris`."""
    if isinstance(game, Transitions):
        return ExactGame(game)
    if isinstance(game, Tetris):
        return BigGame(game)
    raise ValueError(f"game must be a Transitions or a babytris.big.tetris.Tetris, got {type(game).__name__}")
