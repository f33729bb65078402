"""The arrays a solve sweeps, built from the move table and the resolved
roles before any sweep runs: the :class:`~babytris.solvers._sweep.Sweeper`
with its values, board values and moves (:func:`sweeps_for`), the same over
a minimized game's quotient (:func:`quotient_sweeper`), and the settings a
solve sweeps by (:class:`SolverSettings`).  Imports the engine's table and
the compiled sweeps; :mod:`babytris.solvers.solve` runs what it builds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ..engine.transitions import Transitions, independent_layers, sweep_order
from ..game.bags import bag_chances
from . import _sweep
from .minimize import Partition
from .roles import MOVES_BEST, PIECES_WORST, Roles
from .sweeping import Progress

__all__ = [
    "SolverSettings",
    "SweepArrays",
    "Sweeps",
    "sweeps_for",
    "sweep_chances",
    "quotient_sweeper",
    "check_value_range",
]

#: Tables of at most this many states have their evaluation sweeps read the
#: chosen moves from a cache of 5 bytes a state (at most 80 MiB: left out of
#: the memory estimates), which spares them a random load a move
#: (:meth:`_sweep.Sweeper.cache_chosen_moves`).
CHOSEN_MOVES_STATES = 2**24
#: Modified policy iteration over tables of more states than this, in the
#: common games (the best move, points, pieces drawn or the least valuable
#: given), keeps the board values alone while it sweeps, and writes the state
#: values once, from the converged board values, after the sweep order and
#: the jump's changes are freed (:func:`babytris.solvers._greedy.state_values`): 8
#: bytes a state less at the sweeps' peak.  (Smaller tables keep the state
#: values through the sweeps: one pass less.)
BOARD_VALUES_ONLY_STATES = 2**24

#: The largest value a solve may reach: far below float64's 1.8e308, so that
#: the sums of a sweep (probabilities times values) cannot overflow.
MAX_VALUE = 1e300


def check_value_range(scores: np.ndarray, move_reward: np.ndarray | None, dead: float, discount: float) -> None:
    """Refuse rewards so large that the values would overflow float64 (they
    would run every sweep and end as inf or NaN): a placement earns at most
    ``r`` = the largest line score plus the largest reward, so every value is
    at most ``r / (1 - discount)`` in size (``r`` times the longest game when
    undiscounted, where the objective is a combo of unit scores)."""
    with np.errstate(over="ignore", invalid="ignore"):
        largest = float(np.max(np.abs(scores))) + (
            0.0 if move_reward is None else float(np.max(np.abs(move_reward), initial=0.0))
        )
        bound = max(largest, abs(dead)) / (1.0 - discount) if discount < 1.0 else max(largest, abs(dead))
    if not (np.isfinite(bound) and bound <= MAX_VALUE):
        raise ValueError(
            f"line_scores and reward weights are too large: a placement may earn {largest:.3g} and the values "
            f"could reach {bound:.3g} at discount {discount}, beyond {MAX_VALUE:.0e} (float64 overflows at 1.8e308); "
            "scale the scores and weights down"
        )


@dataclass
class SweepArrays:
    """A sweeper with the arrays it updates."""

    sweeper: _sweep.Sweeper
    values: np.ndarray | None  # (None: board values only, see BOARD_VALUES_ONLY_STATES)
    board_values: np.ndarray
    first_touches: int  # bytes the first sweep writes first (the values, the moves chosen)
    changes: np.ndarray | None = None  # room for a jump's direction (modified policy iteration)


@dataclass(frozen=True)
class SolverSettings:
    """How a solve sweeps, its arguments checked: the method, the discount,
    the stopping test, modified policy iteration's evaluation sweeps and
    acceleration, the threads and the progress callback."""

    method: str
    discount: float
    tol: float
    max_iter: int
    eval_sweeps: int
    accelerate: bool
    n_jobs: int | None = None
    progress: Progress | None = None


@dataclass
class Sweeps:
    """A solve's sweeper over the move table and the arrays it fills: the
    flat state values, the board values, each state's move (an offset into
    its row).  ``boards_only``: the sweeps keep board values alone and the
    state values and moves are written once they are done (see
    :data:`BOARD_VALUES_ONLY_STATES`); till then those arrays' pages hold the
    sweeps' scratch (``changes``, the chosen moves' cache, the sweep order)."""

    sweeper: _sweep.Sweeper | None  # (None once the sweeps are done: their scratch freed)
    values: np.ndarray
    board_values: np.ndarray
    policy: np.ndarray
    boards_only: bool
    scores: np.ndarray
    dead: float
    probs: np.ndarray
    chance: np.ndarray | None
    modes: dict[str, Any]
    changes: np.ndarray | None

    def arrays(self) -> SweepArrays:
        """The sweeper with what its first sweep writes first, for :func:`_iterate`."""
        sweeper = cast(_sweep.Sweeper, self.sweeper)
        boards_only = self.boards_only
        # (the values and the moves chosen, 5 bytes a state in the cache)
        fresh = self.board_values.nbytes + (
            5 * len(self.policy) if boards_only else self.values.nbytes + self.policy.nbytes
        )
        return SweepArrays(sweeper, None if boards_only else self.values, self.board_values, fresh, self.changes)


def sweep_chances(transitions: Transitions) -> tuple[np.ndarray, np.ndarray | None]:
    """The pieces' chances as the Sweeper reads them: ``(probs, chance)``,
    float64 ``(P,)`` and None with independent draws, or with a bag float64
    ``(bags * P,)``, P per bag's contents, and int32 ``(n_boards,)``, each node's bag."""
    rules = transitions.rules
    if transitions.bags is None:
        return np.asarray(rules.probabilities, dtype=np.float64), None
    return bag_chances(rules).ravel(), transitions.bags.astype(np.int32)


def sweeps_for(transitions: Transitions, roles: Roles, settings: SolverSettings, *, can_drop_states: bool) -> Sweeps:
    """The sweeper over ``transitions`` for ``roles`` and the arrays it
    fills, as they start (see :class:`_Sweeps`; ``can_drop_states``: whether
    the state values may be written only at the end, which a warm start or a
    minimization, filling them first, rules out)."""
    rules = transitions.rules
    n, n_pieces, discount = transitions.n_boards, rules.n_pieces, settings.discount
    scores = np.asarray(rules.line_scores, dtype=np.float64)
    probs, chance = sweep_chances(transitions)
    dead = roles.dead_value(rules)
    modes: dict[str, Any] = dict(
        pieces=roles.pieces,
        moves=roles.moves,
        piece_choice=roles.piece_choice,
        fixed_move=roles.fixed_move,
        dead_value=dead,
        synchronous=settings.method == "jacobi",
    )
    move_reward = roles.move_reward  # (huge weights are refused just below, with their size)
    check_value_range(scores, move_reward, dead, discount)
    boards_only = (
        can_drop_states
        and settings.method == "mpi"
        and transitions.n_states > BOARD_VALUES_ONLY_STATES
        and roles.pieces in (_sweep.PIECES_RANDOM, PIECES_WORST)
        and roles.moves == MOVES_BEST
        and move_reward is None
    )
    values, board_values = initial_values(transitions.offsets, n_pieces, dead, states=not boards_only)
    # (with boards_only the state values and the moves are written once the sweeps are done, the
    # moves noted meanwhile in the sweeper's cache: till then their arrays are pages never
    # touched, which hold no memory)
    policy = np.empty(n * n_pieces, dtype=np.int16) if boards_only else np.full(n * n_pieces, -1, dtype=np.int16)
    # The state values' and moves' pages, written only once the sweeps are done, hold the sweeps'
    # scratch till then where there is room (P >= 2): the sweep order (4 bytes a live board) in the
    # moves', a jump's direction (4 bytes a board, zeros as allocated) and the chosen moves' cache
    # (5 bytes a state) in the values': 595 MB touched once, not twice, at 4x7.
    room_for_order = boards_only and n_pieces >= 2
    order, layer_starts = sweep_order(
        transitions, policy[: len(policy) // 2 * 2].view(np.int32) if room_for_order else None
    )
    changes = room = None
    if boards_only and 4 + 5 * n_pieces <= 8 * n_pieces:
        changes = values.view(np.float32)[:n]
        room = values.view(np.uint8)[4 * n :]
    sweeper = _sweep.Sweeper(
        transitions.offsets,
        transitions.next_board,
        transitions.lines,
        scores,
        probs,
        float(discount),
        None if boards_only else values,
        board_values,
        None if boards_only else policy,
        order,
        layer_starts,
        **modes,
        chance=chance,
        move_reward=move_reward,
        independent_layers=independent_layers(transitions),
        chosen_room=room,
    )
    if settings.method in ("mpi", "strategy") and transitions.n_states <= CHOSEN_MOVES_STATES:
        sweeper.cache_chosen_moves()
    return Sweeps(sweeper, values, board_values, policy, boards_only, scores, dead, probs, chance, modes, changes)


def initial_values(
    offsets: np.ndarray, n_pieces: int, dead: float, *, states: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Starting state and board values (flat, and per board): 0, but ``dead``
    for the states with no move, and for the boards with no move at all (the
    sweeps never visit those); ``states=False`` leaves the state values 0
    (a solve keeping board values alone writes them all at its end)."""
    values = np.zeros(len(offsets) - 1)
    board_values = np.zeros(values.size // n_pieces)
    if dead:
        no_move = np.diff(offsets) == 0
        if states:
            values[no_move] = dead
        board_values[no_move.reshape(-1, n_pieces).all(axis=1)] = dead
    return values, board_values


def quotient_sweeper(
    partition: Partition,
    scores: np.ndarray,
    probs: np.ndarray,
    discount: float,
    modes: dict,
    chance: np.ndarray | None = None,
) -> SweepArrays:
    """A sweeper over the quotient game: board groups, one row per (group, piece).
    One layer, swept from the last group to the first (a group's members need
    not share a cell count, and groups are numbered in board order, so moves
    that clear nothing mostly lead to later groups)."""
    n, n_pieces = partition.n_board_classes, partition.transitions.rules.n_pieces
    values, board_values = initial_values(partition.offsets, n_pieces, modes["dead_value"])
    live = np.flatnonzero(np.diff(partition.offsets[::n_pieces]) > 0).astype(np.int32)[::-1].copy()
    policy = np.full(n * n_pieces, -1, dtype=np.int16)
    sweeper = _sweep.Sweeper(
        partition.offsets,
        partition.next_board,
        partition.lines,
        scores,
        probs,
        discount,
        values,
        board_values,
        policy,
        live,
        np.array([0, live.size], dtype=np.int64),
        **modes,
        chance=None if chance is None else chance[partition.representatives].copy(),
        move_reward=partition.move_reward,
    )
    return SweepArrays(sweeper, values, board_values, values.nbytes + board_values.nbytes + policy.nbytes)
