"""State-partition minimization: merge the states that must share a value.

Start with every state in one group and every board in one group; split a
state group whose members' moves do not match one to one (equal rewards,
next boards in equal groups), and a board group whose members' pieces do not
match one to one (equal weights, states in equal groups); stop when nothing
splits.  The result is the coarsest such partition (a bisimulation): members
of a group have equal values under any discount, so the quotient, one
representative per group, solves to exactly the full game's values on far
fewer states.  Signatures are compared exactly, never only by hash.

Pieces count by their weight, not their name: with equal probabilities (or
an opponent choosing) pieces are interchangeable, so a board and its mirror
image merge when the piece set is closed under mirroring.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from . import _minimize
from .roles import MOVES_FIXED, PIECES_FIXED, PIECES_RANDOM, resolve
from .transitions import Transitions

__all__ = ["Partition", "minimize"]


@dataclass(frozen=True, repr=False, eq=False)
class Partition:
    """Groups of states (and of boards) that share a value, and the quotient game.

    Attributes:
        transitions: the game partitioned.
        labels: int64 array ``(n_boards, n_pieces)``: each state's group, numbered
            by first appearance (board order, then piece).
        board_labels: int64 array ``(n_boards,)``: each board's group.
        n_classes, n_board_classes: the number of groups.
        representatives: int64 array ``(n_board_classes,)``: the first board of
            each board group; its states are the quotient's.
        offsets, next_board, lines, move_reward: the quotient's move table (CSR
            over ``representatives`` x pieces; ``next_board`` holds board
            groups; ``move_reward`` None for points).
        rounds: refinement rounds run; seconds: their wall time.
    """

    transitions: Transitions
    labels: np.ndarray
    board_labels: np.ndarray
    n_classes: int
    n_board_classes: int
    representatives: np.ndarray
    offsets: np.ndarray
    next_board: np.ndarray
    lines: np.ndarray
    move_reward: np.ndarray | None
    rounds: int
    seconds: float

    @property
    def n_states(self) -> int:
        """The number of states of the game partitioned (``n_boards * n_pieces``)."""
        return self.transitions.n_states

    @property
    def n_boards(self) -> int:
        """The number of boards (table rows) of the game partitioned."""
        return self.transitions.n_boards

    @property
    def quotient_states(self) -> np.ndarray:
        """int64 array ``(n_classes,)``: for each state group, its state (a flat
        index ``group_of_board * n_pieces + piece``) in the quotient."""
        flat = self.labels[self.representatives].ravel()
        out = np.empty(self.n_classes, dtype=np.int64)
        out[flat] = np.arange(flat.size)  # every state group has a state on its board group's representative
        return out

    def expand(self, quotient_values: np.ndarray) -> np.ndarray:
        """The quotient's state values ``(n_board_classes, n_pieces)`` spread
        back to every state: float64 array ``(n_boards, n_pieces)``."""
        flat = np.asarray(quotient_values).ravel()
        return flat[self.quotient_states[self.labels]]

    def __repr__(self) -> str:
        return (
            f"<Partition {self.transitions.rules.width}x{self.transitions.rules.height}: {self.n_states:,} states "
            f"-> {self.n_classes:,} classes ({self.n_boards:,} boards -> {self.n_board_classes:,}), "
            f"{self.rounds} rounds, {self.seconds:.3f}s>"
        )


def minimize(
    transitions: Transitions, *, opponent: object = "random", player: object = None, reward: object = None
) -> Partition:
    """The coarsest partition of ``transitions``' states into groups of equal
    value for the given roles (see :func:`babytris.solve`; given policies are
    not supported: name the models).

    Returns:
        :class:`Partition`, with the quotient's move table.
    """
    roles = resolve(transitions, opponent, player, reward)
    if roles.pieces == PIECES_FIXED or roles.moves == MOVES_FIXED:
        raise ValueError("minimize: opponent and player must be named models, not given policies")
    started = time.perf_counter()
    t = transitions
    n_pieces = t.rules.n_pieces
    move_reward = roles.move_rewards(t)
    reward_id = _ids(np.asarray(t.rules.line_scores)[t.lines] if move_reward is None else move_reward)
    # A board's pieces count by weight: their probabilities when drawn, all
    # alike when an opponent chooses (it picks by value, not by name).
    weights = np.asarray(t.rules.probabilities) if roles.pieces == PIECES_RANDOM else np.zeros(n_pieces)
    weight_id = np.tile(_ids(weights), t.n_boards)
    board_starts = np.arange(0, t.n_states + 1, n_pieces, dtype=np.int64)
    states = np.zeros(t.n_states, dtype=np.int64)
    boards = np.zeros(t.n_boards, dtype=np.int64)
    n_states = n_boards = 1
    rounds = 0
    while True:
        rounds += 1
        codes = reward_id * n_boards + boards[t.next_board]
        states, new_n_states = _minimize.relabel(t.offsets, codes, states)
        codes = weight_id * new_n_states + states
        boards, new_n_boards = _minimize.relabel(board_starts, codes, boards)
        if (new_n_states, new_n_boards) == (n_states, n_boards):
            break
        n_states, n_boards = new_n_states, new_n_boards
    _, representatives = np.unique(boards, return_index=True)
    quotient_rows = (representatives[:, None] * n_pieces + np.arange(n_pieces)).ravel()
    counts = np.diff(t.offsets)[quotient_rows]
    offsets = np.zeros(quotient_rows.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    moves = np.repeat(t.offsets[quotient_rows] - offsets[:-1], counts) + np.arange(offsets[-1])
    return Partition(
        transitions=t,
        labels=states.reshape(t.n_boards, n_pieces),
        board_labels=boards,
        n_classes=n_states,
        n_board_classes=n_boards,
        representatives=representatives.astype(np.int64),
        offsets=offsets,
        next_board=boards[t.next_board[moves]].astype(np.int32),
        lines=t.lines[moves],
        move_reward=None if move_reward is None else move_reward[moves],
        rounds=rounds,
        seconds=time.perf_counter() - started,
    )


def _ids(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values (int64): equal values, equal ids."""
    return np.unique(values, return_inverse=True)[1].astype(np.int64).ravel()
