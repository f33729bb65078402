"""A sharded solve's answers, each from the shard that owns the board: the
lookups :func:`~babytris.modes.sharded.distributed.solve_sharded`'s live shards
(:class:`~babytris.modes.sharded.distributed.LiveShards`) and a saved directory
(:class:`babytris.files.sharded.ShardedValues`) share.  Nothing is gathered:
a lookup groups its boards by owner and asks each owner for its own.

The game the policy plays (:meth:`ShardLookups.played_game`) is walked the
same way, a level of boards at a time, as a lean solution's is
(:func:`~babytris.modes.lean_policy.walk_policy`): a small
:class:`~babytris.Solution` that :func:`~babytris.play`,
:func:`~babytris.expected_points` and :func:`~babytris.evaluate` take."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ...engine.placements import canonical_boards, engine, placement_table
from ...game.pieces import Placement
from ...game.rules import Rules
from ...results.solution import Solution
from ..lean_policy import Steps, walk_policy
from . import _shard
from .owners import shard_of

__all__ = ["ShardLookups"]


class ShardLookups:
    """Lookups over shards; a subclass gives :meth:`_rows` and :meth:`_n_boards`
    of one shard and the attributes ``rules``, ``opponent``, ``n_shards``,
    ``split``, ``tie_slack`` and the solve's record: ``discount``,
    ``iterations`` (rounds), ``residual``, ``converged``, ``tol``."""

    rules: Rules
    opponent: str
    n_shards: int
    split: str
    tie_slack: float
    discount: float
    iterations: int
    residual: float
    converged: bool
    tol: float

    def _rows(self, k: int, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Shard ``k``'s answer for ``boards`` (uint64, all owned by it):
        ``(found, values, policy)``, bool ``(m,)``, float64 and int16 ``(m, P)``
        (the placement number of each state's move, -1 at game over)."""
        raise NotImplementedError

    def _n_boards(self, k: int) -> int:
        """The boards shard ``k`` holds."""
        raise NotImplementedError

    @property
    def n_boards(self) -> int:
        """The reachable boards, summed over the shards (each asked its count)."""
        return sum(self._n_boards(k) for k in range(self.n_shards))

    def rows(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The values and moves of every piece on each of ``boards`` (uint64),
        each asked of its owner alone: float64 and int16 ``(m, P)``; a board no
        shard holds is a KeyError."""
        boards = np.asarray(boards, dtype=np.uint64)
        P = self.rules.n_pieces
        values, policy = np.empty((len(boards), P)), np.empty((len(boards), P), dtype=np.int16)
        owners = shard_of(boards, self.n_shards, self.split, self.rules)
        for k in np.unique(owners):
            mine = owners == k
            found, values[mine], policy[mine] = self._rows(int(k), boards[mine])
            if not found.all():
                board = int(boards[mine][np.flatnonzero(~found)[0]])
                raise KeyError(f"board {board} is not reachable from the start under these rules")
        return values, policy

    def value(self, board: int, piece: int | str) -> float:
        """The value of placing ``piece`` on ``board`` (bits), as :meth:`Solution.value`."""
        values, _ = self.rows(np.array([int(board)], dtype=np.uint64))
        return float(values[0, self.rules.piece_index(piece)])

    def best_action(self, board: int, piece: int | str) -> Placement | None:
        """An optimal :class:`~babytris.Placement`, or None at game over, as :meth:`Solution.best_action`."""
        p = self.rules.piece_index(piece)
        _, policy = self.rows(np.array([int(board)], dtype=np.uint64))
        number = int(policy[0, p])
        return None if number < 0 else placement_table(self.rules).placements[p][number]

    @property
    def start_value(self) -> float:
        """The start board's value before its first piece (drawn, or the minimax opponent's)."""
        values, _ = self.rows(self._start())
        if self.opponent == "minimax":
            return float(self._worst(values)[1][0])
        return float(values[0] @ np.asarray(self.rules.probabilities))

    def _start(self) -> np.ndarray:
        return canonical_boards(np.array([self.rules.start], dtype=np.uint64), self.rules)

    def _worst(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The minimax opponent's piece on each board (the first within the tie
        slack of the least valuable, of those that can come, as a Solution's
        ``opponent_policy``) and its value."""
        can = np.asarray(self.rules.probabilities) > 0
        masked = np.where(can, values, np.inf)
        least = masked.min(axis=1, keepdims=True)
        piece = np.argmax(masked <= least + self.tie_slack, axis=1)
        return piece, values[np.arange(len(values)), piece]

    def steps(self, boards: np.ndarray) -> Steps:
        """The policy's step from each of ``boards`` (uint64, reachable): each
        state's value and move asked of the board's owner (:meth:`rows`), where
        the move leads and the rows it clears by the engine's own drop.
        Returns :class:`~babytris.modes.lean_policy.Steps`."""
        boards = np.asarray(boards, dtype=np.uint64)
        values, policy = self.rows(boards)
        offsets, after, lines, number = _shard.expand(engine(self.rules), boards)
        chosen = policy.ravel().astype(np.int64)
        has = chosen >= 0
        # (a state's moves are numbered in ascending order: the chosen one is found by a search within them)
        firsts = offsets[:-1][has].astype(np.int64)
        move = firsts + _find_in_rows(number, firsts, np.diff(offsets)[has].astype(np.int64), chosen[has])
        next_bits, cleared = np.zeros(chosen.shape, dtype=np.uint64), np.zeros(chosen.shape, dtype=np.uint8)
        next_bits[has], cleared[has] = after[move], lines[move]  # (as the shards hold them: no mirror merged)
        return Steps(boards, values, policy, next_bits.reshape(policy.shape), cleared.reshape(policy.shape))

    def played_game(self) -> Solution:
        """The game the policy plays: a :class:`~babytris.Solution` over every
        board the policy reaches from the start whatever pieces come, one move
        per state, the policy's (and against ``"minimax"`` the opponent's
        pieces), walked a level at a time with each level's boards asked of
        their owners (:func:`~babytris.modes.lean_policy.walk_policy`); built
        once, then kept.  :func:`~babytris.play`, :func:`~babytris.expected_points`
        and :func:`~babytris.evaluate` take it as any Solution.  Its
        ``residuals`` hold the last round's alone (the shards keep no history)."""
        return self._played

    @cached_property
    def _played(self) -> Solution:
        return walk_policy(
            self.rules,
            self.steps,
            lambda values: self._worst(values)[0].astype(np.int16) if self.opponent == "minimax" else None,
            discount=self.discount,
            opponent=self.opponent,
            iterations=self.iterations,
            residual=self.residual,
            converged=self.converged,
            residuals=np.array([self.residual]),
            method="mpi",
            tol=self.tol,
            max_iter=max(1, self.iterations),
        )


def _find_in_rows(numbers: np.ndarray, firsts: np.ndarray, counts: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Per row ``i``, the offset within ``numbers[firsts[i]:firsts[i] + counts[i]]``
    (ascending) of ``wanted[i]``, which it holds."""
    lo, hi = np.zeros(len(firsts), dtype=np.int64), counts.copy()
    while np.any(active := lo < hi):
        mid = (lo + hi) // 2
        less = numbers[np.minimum(firsts + mid, len(numbers) - 1)] < wanted
        lo = np.where(active & less, mid + 1, lo)
        hi = np.where(active & ~less, mid, hi)
    return lo
