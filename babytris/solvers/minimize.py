"""State-partition minimization: merge the states that must share a value.

Start with every state in one group and every board in one group; split a
state group whose members' moves do not match (equal rewards, next boards in
equal groups), and a board group whose members' pieces do not match (equal
weights, states in equal groups); stop when nothing splits.  Members of a
group have equal values under any discount, so the quotient, one
representative per group, solves to exactly the full game's values on far
fewer states.  Signatures are compared exactly, never only by hash.

What "match" means follows who plays, so that the partition is the coarsest
for the roles asked:

* a state's moves are compared as a **set** of (reward, next board's group)
  when the player picks the best move (optimal and robust players: a move
  repeated changes no maximum), as a **multiset** when the player places at
  random (minavg, gaps: each move counts in the mean);
* a board's pieces are compared as a multiset of (probability, state's
  group) when pieces are drawn, as a set of state groups when an opponent
  chooses them (a minimum or maximum); with a bag, a piece the node's bag
  does not hold counts as one entry alike on every board (it cannot come);
* every state that is worth zero under any play (no reachable move has a
  reward, and a state without moves is worth zero) is in one group, dead
  states included, however different its moves (``zero_states=True``).

For the optimal player against drawn pieces, the default partition is the
coarsest strong bisimulation of the game with its rewards (Givan, Dean &
Greig, 2003): Storm's strong bisimulation of the same MDP preserving the
expected total reward has the same groups (tests/test_minimize_storm.py).
With ``zero_states=False`` it is the one that also keeps game over as a
label (Storm's preserving ``F "over"``).

Pieces count by their weight, not their name: with equal probabilities (or
an opponent choosing) pieces are interchangeable, so a board and its mirror
image merge when the piece set is closed under mirroring.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..engine.transitions import Transitions, offsets_from_counts
from ..game.validation import check_bool
from . import _minimize
from .roles import MOVES_BEST, MOVES_FIXED, PIECES_FIXED, PIECES_RANDOM, Roles, resolve

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
    transitions: Transitions,
    *,
    opponent: object = "random",
    player: object = None,
    reward: object = None,
    zero_states: bool = True,
) -> Partition:
    """The coarsest partition of ``transitions``' states into groups of equal
    value for the given roles (see :func:`babytris.solve`; given policies are
    not supported: name the models).

    Args:
        zero_states: put every state worth zero under any play in one group
            (False: the bisimulation that keeps game over as a label, see the module's notes).

    Returns:
        :class:`Partition`, with the quotient's move table.
    """
    return partition_for(transitions, resolve(transitions, opponent, player, reward), zero_states=zero_states)


def partition_for(transitions: Transitions, roles: Roles, *, zero_states: bool = True) -> Partition:
    """:func:`minimize` for sides already resolved against ``transitions``.

    Returns:
        :class:`Partition`, with the quotient's move table.
    """
    zero_states = check_bool("zero_states", zero_states)
    if roles.pieces == PIECES_FIXED or roles.moves == MOVES_FIXED:
        raise ValueError("minimize: opponent and player must be named models, not given policies")
    started = time.perf_counter()
    t = transitions
    n_pieces = t.rules.n_pieces
    move_reward = roles.move_reward
    rewards = np.asarray(t.rules.line_scores, dtype=np.float64)[t.lines] if move_reward is None else move_reward
    reward_id = _ids(rewards)
    moves_as_set = roles.moves == MOVES_BEST
    pieces_as_set = roles.pieces != PIECES_RANDOM
    zero = _zero_states(t, rewards, roles.dead_value(t.rules)) if zero_states else None
    # A board's pieces count by weight: their probabilities when drawn, all
    # alike when an opponent chooses (it picks by value, not by name).
    # With a bag a piece's chance is its node's bag's share of it; a piece the
    # bag lacks (chance 0, no move) counts as nothing, whatever its state.
    chances = t.draw_chances().ravel()
    weights = chances if roles.pieces == PIECES_RANDOM else np.zeros(t.n_states)
    weight_id = _ids(weights)
    absent = chances == 0
    board_starts = np.arange(0, t.n_states + 1, n_pieces, dtype=np.int64)
    states = np.zeros(t.n_states, dtype=np.int64)
    boards = np.zeros(t.n_boards, dtype=np.int64)
    n_states = n_boards = 1
    rounds = 0
    while True:
        rounds += 1
        codes = reward_id * n_boards + boards[t.next_board]
        states, new_n_states = _minimize.relabel(t.offsets, codes, states, moves_as_set)
        if zero is not None and zero.any():
            states, new_n_states = _merge(states, zero)
        codes = weight_id * (new_n_states + 1) + np.where(absent, new_n_states, states)
        boards, new_n_boards = _minimize.relabel(board_starts, codes, boards, pieces_as_set)
        if (new_n_states, new_n_boards) == (n_states, n_boards):
            break
        n_states, n_boards = new_n_states, new_n_boards
    _, representatives = np.unique(boards, return_index=True)
    quotient_rows = (representatives[:, None] * n_pieces + np.arange(n_pieces)).ravel()
    counts = np.diff(t.offsets)[quotient_rows]
    offsets = offsets_from_counts(counts)
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


def _zero_states(t: Transitions, rewards: np.ndarray, dead_value: float) -> np.ndarray:
    """bool ``(n_states,)``: the states worth zero under any play, whatever
    the discount: a state without moves when ``dead_value`` is 0, a state whose
    every move has reward 0 and leads to a board all of whose states are
    such (the greatest fixed point, reached from "all states")."""
    counts = np.diff(t.offsets)
    state_of_move = np.repeat(np.arange(t.n_states), counts)
    zero: np.ndarray = np.ones(t.n_states, dtype=bool) if dead_value == 0 else counts > 0
    if t.bags is not None:  # a piece the bag lacks cannot come: its state is worth nothing to anyone
        zero |= t.draw_chances().ravel() == 0
    rewarding = np.asarray(rewards) != 0
    while True:
        zero_board = np.all(zero.reshape(t.n_boards, -1), axis=1)
        bad = rewarding | ~zero_board[t.next_board]
        still = zero & (np.bincount(state_of_move[bad], minlength=t.n_states) == 0)
        if np.array_equal(still, zero):
            return zero
        zero = still


def _merge(labels: np.ndarray, members: np.ndarray) -> tuple[np.ndarray, int]:
    """``labels`` with every member of ``members`` (bool) in the first member's
    group, renumbered by first appearance: ``(labels, n_labels)``."""
    labels = labels.copy()
    labels[members] = labels[np.argmax(members)]
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse.ravel()], int(first.size)


def _ids(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values (int64): equal values, equal ids."""
    return np.unique(values, return_inverse=True)[1].astype(np.int64).ravel()
