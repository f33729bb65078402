"""A lean solution's policy on demand: each state's value and first best move
by one greedy step from the board values, the opponent's piece, the policy
as a table for given boards, and the game the policy plays as a small
:class:`~babytris.Solution` that :func:`~babytris.play` and
:func:`~babytris.evaluate` take as they take any.

The game the policy plays (:func:`played_game`) holds every board the
optimal player reaches from the start, whatever pieces come, with one move
per state: the policy's.  It is small (141 of 4x4's 12,978 boards, 900 of
4x6's 2.5 million), so playouts and exact evaluations over n placements run
on it with the table mode's own loops.  What needs every move of every
board (a random or another given player, the equilibrium opponent of another
game) is refused with the size of the move table it would take.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Protocol, cast

import numpy as np

from ..engine.placements import placement_table
from ..engine.resources import format_bytes
from ..engine.transitions import Transitions, layers
from ..game.board import Board
from ..game.pieces import Placement
from ..game.rules import Rules
from ..results.solution import Solution
from ..results.tables import Solved, policy_array, policy_table

__all__ = [
    "Lean",
    "Played",
    "Steps",
    "best_action",
    "board_bits",
    "check_sides",
    "greedy_steps",
    "move_table_bytes",
    "piece_choices",
    "played_game",
    "policy_table_bytes",
    "policy_table_of",
    "walk_policy",
]

#: Boards one call of the compiled greedy step takes (tens of milliseconds).
SLICE_BOARDS = 2**15
#: Bytes per move of a table-mode move table (next board, rows cleared, placement) and per state (its offset).
MOVE_BYTES, STATE_BYTES = 7, 4


class Played(Protocol):
    """What the refusals of the game the policy plays read (:func:`check_sides`): a
    lean solution or a sharded one (:class:`~babytris.modes.sharded.lookups.ShardLookups`)."""

    @property
    def rules(self) -> Rules: ...
    @property
    def discount(self) -> float: ...
    @property
    def opponent(self) -> str: ...
    @property
    def n_boards(self) -> int: ...


class Lean(Played, Protocol):
    """What the policy reads of a lean solution (:class:`~babytris.LeanSolution`)."""

    @property
    def board_values(self) -> np.ndarray: ...
    @property
    def table(self) -> Any: ...
    @property
    def tie_slack(self) -> float: ...


@dataclass(frozen=True)
class Steps:
    """One greedy step from given boards' values (:func:`greedy_steps`), each ``(n, n_pieces)``."""

    boards: np.ndarray  # uint64 (n,)
    values: np.ndarray  # float64: each state's value
    moves: np.ndarray  # int16: its first best placement's number (-1: none fits)
    after: np.ndarray  # uint64: the board that move leads to (0 where none)
    lines: np.ndarray  # uint8: the rows it clears


_STEP_FIELDS = tuple(f.name for f in fields(Steps))


def greedy_steps(lean: Lean, boards: object) -> Steps:
    """Each reachable board's states' values and first best moves (the first
    within :attr:`~babytris.LeanSolution.tie_slack` in placement order, the
    default mode's rule), and where the moves lead.  ``ValueError`` for a
    board that is not reachable.  Returns :class:`Steps`."""
    keys = np.ascontiguousarray(np.asarray(boards, dtype=np.uint64).ravel())
    scores = np.asarray(lean.rules.line_scores, dtype=np.float64)
    slack = lean.tie_slack
    parts = [  # (in slices: Ctrl-C is answered between two)
        lean.table.greedy_steps(keys[first : first + SLICE_BOARDS], lean.board_values, scores, lean.discount, slack)
        for first in range(0, max(len(keys), 1), SLICE_BOARDS)
    ]
    return Steps(keys, *(np.concatenate([part[k] for part in parts]) for k in range(4)))


def piece_choices(lean: Lean, values: np.ndarray) -> np.ndarray | None:
    """The piece the opponent gives on each board of ``values`` (states'
    values, ``(n, n_pieces)``): against ``"minimax"`` the first of the least
    valuable within the tie slack (int16 ``(n,)``), as a table Solution's
    :attr:`~babytris.Solution.opponent_policy`; None where pieces are drawn."""
    if lean.opponent != "minimax":
        return None
    least = values.min(axis=1, keepdims=True)
    return np.argmax(values <= least + lean.tie_slack, axis=1).astype(np.int16)


def best_action(lean: Lean, board: int | Board, piece: object) -> Placement | None:
    """An optimal :class:`~babytris.Placement` of ``piece`` on ``board`` (the first of tied ones), None at game over."""
    rules = lean.rules
    p = rules.piece_index(piece)  # type: ignore[arg-type]
    number = int(greedy_steps(lean, [board_bits(rules, board)]).moves[0, p])
    return None if number < 0 else placement_table(rules).placements[p][number]


def policy_table_of(lean: Lean, boards: np.ndarray) -> Any:
    """:func:`babytris.results.tables.policy_table` of the states of ``boards``
    (reachable ones, in the order given), one greedy step each."""
    return policy_table(_rows(lean, boards))


def policy_table_bytes(lean: Lean) -> int:
    """The bytes of the full policy table as a structured array (one row per
    state, as :func:`policy_table_of` builds it), without building it."""
    start = np.array([lean.rules.start], dtype=np.uint64)
    return policy_array(_rows(lean, start)).dtype.itemsize * lean.n_boards * lean.rules.n_pieces


def _rows(lean: Lean, boards: np.ndarray) -> Solved:
    steps = greedy_steps(lean, boards)
    return cast(Solved, _Rows(lean.rules, steps, piece_choices(lean, steps.values)))


def move_table_bytes(game: Played) -> int:
    """A lower bound on the bytes of the full move table (what the table mode
    stores): a state's offset, and one move per state at least."""
    states = game.n_boards * game.rules.n_pieces
    return states * (STATE_BYTES + MOVE_BYTES)


def check_sides(game: Played, player: object, opponent: object, discount: object = None) -> None:
    """Refuse, with a ``ValueError`` naming the reason and the size, sides the
    game the policy plays cannot take: another player than the policy (its
    moves are the only ones it holds), piece arrays over the solution's
    boards, and the equilibrium opponent of another game.  ``game`` is a
    lean solution or a sharded one, named in the messages by its class."""
    kind = type(game).__name__
    size = f"the full move table would take at least {format_bytes(move_table_bytes(game))}"
    if player is not None and not (isinstance(player, str) and player == "optimal"):
        raise ValueError(
            f"player: a {kind} plays its own policy only ('optimal'); another player needs every move of "
            f"every board in one table ({size}; solve in the table mode)"
        )
    named = ("random", "solution", "best_response", "minimax")
    if opponent is not None and not (isinstance(opponent, str) and opponent in named):
        got = repr(opponent) if isinstance(opponent, str) else type(opponent).__name__
        raise ValueError(
            f"opponent: with a {kind} give 'random', 'solution', 'best_response' or 'minimax' (its own "
            f"game's), got {got} (piece arrays are over a table's boards; {size})"
        )
    if opponent == "minimax" and not (game.opponent == "minimax" and discount == game.discount):
        raise ValueError(
            f"opponent='minimax': the equilibrium opponent of another game than this {kind}'s needs every "
            f"move of every board ({size}); give 'best_response' (the worst pieces for this policy)"
        )


def played_game(lean: Lean) -> Solution:
    """The game the policy plays: a :class:`~babytris.Solution` over every
    board the optimal player reaches from the start whatever pieces come,
    each state with one move, the policy's (its values, policy and, against
    ``"minimax"``, the opponent's pieces as the lean solution gives them).
    :func:`~babytris.play`, :func:`~babytris.expected_points` and
    :func:`~babytris.evaluate` take it as any Solution."""
    own = cast(Any, lean)  # (the LeanSolution's own record of its solve)
    return walk_policy(
        lean.rules,
        lambda boards: greedy_steps(lean, boards),
        lambda values: piece_choices(lean, values),
        discount=lean.discount,
        opponent=lean.opponent,
        iterations=own.iterations,
        residual=own.residual,
        converged=own.converged,
        residuals=own.residuals,
        method=own.method,
        tol=own.tol,
        max_iter=max(1, own.iterations),
        seconds=dict(own.seconds),
        accelerated=own.plan.accelerate,
    )


def walk_policy(
    rules: Rules,
    steps_of: Callable[[np.ndarray], Steps],
    pieces_of: Callable[[np.ndarray], np.ndarray | None],
    **record: Any,
) -> Solution:
    """The game a policy plays, walked from the start board a level at a
    time: ``steps_of(boards)`` gives the policy's step from each board of a
    level (a lean solution's greedy step, a sharded one's rows asked of their
    owners), each board's step taken once; ``pieces_of(values)`` the piece the
    opponent gives on each board (None where pieces are drawn).

    Returns:
        a :class:`~babytris.Solution` over every board reached (numbered as a
        table's: by layer, ascending within one), one move per state, the
        policy's; its other fields are ``record``'s (discount, opponent, the
        solve's iterations, residual, ...), its ``seconds`` with the walk's.
    """
    started = time.perf_counter()
    found = frontier = np.array([rules.start], dtype=np.uint64)
    walked = []
    while frontier.size:
        walked.append(steps_of(frontier))
        after = np.unique(walked[-1].after[walked[-1].moves >= 0])
        frontier = np.setdiff1d(after, found, assume_unique=True)
        found = np.union1d(found, frontier)
    reached = Steps(*(np.concatenate([getattr(step, name) for step in walked]) for name in _STEP_FIELDS))
    layer_of = layers(rules)
    cells = np.bitwise_count(reached.boards) if hasattr(np, "bitwise_count") else _popcount(reached.boards)
    layer = layer_of[cells.astype(np.int64) % len(layer_of)]
    order = np.lexsort((reached.boards, layer))
    steps = Steps(*(getattr(reached, name)[order] for name in _STEP_FIELDS))
    boards = steps.boards
    layer_starts = np.searchsorted(layer[order], np.arange(len(layer_of) + 1)).astype(np.int64)
    has = steps.moves.ravel() >= 0
    by_board = np.argsort(boards)
    next_board = by_board[np.searchsorted(boards[by_board], steps.after.ravel()[has])]
    t = Transitions(
        rules,
        boards=boards,
        layer_starts=layer_starts,
        offsets=np.concatenate([[0], np.cumsum(has)]).astype(np.int32),
        next_board=next_board.astype(np.int32),
        lines=np.ascontiguousarray(steps.lines.ravel()[has]),
        placement=steps.moves.ravel()[has].astype(np.uint16),
        seconds=time.perf_counter() - started,
    )
    seconds = {**record.pop("seconds", {}), "walk": t.seconds}
    return Solution(
        rules=rules,
        values=steps.values,
        policy=steps.moves,
        transitions=t,
        opponent_policy=pieces_of(steps.values),
        seconds=seconds,
        **record,
    )


@dataclass(frozen=True)
class _Rows:
    """Given boards' states as :func:`~babytris.results.tables.policy_array`
    reads a solved game (:class:`~babytris.results.tables.Solved`): the rows
    are the boards given, whose pieces are drawn (``transitions`` answers
    their chances) or given by the opponent."""

    rules: Rules
    steps: Steps
    opponent_policy: np.ndarray | None
    player: str = "optimal"

    @property
    def transitions(self) -> _Chances:
        return _Chances(self.rules)

    @property
    def boards(self) -> np.ndarray:
        return self.steps.boards

    @property
    def n_boards(self) -> int:
        return len(self.steps.boards)

    @property
    def values(self) -> np.ndarray:
        return self.steps.values

    @property
    def policy(self) -> np.ndarray:
        return self.steps.moves


@dataclass(frozen=True)
class _Chances:
    """The chance of each piece on given rows of a plain game (no bag, previews or hold)."""

    rules: Rules
    bags: None = None
    queues: None = None
    slots: None = None

    def draw_chances(self, rows: np.ndarray) -> np.ndarray:
        return np.tile(np.asarray(self.rules.probabilities, dtype=np.float64), (len(rows), 1))


def board_bits(rules: Rules, board: int | Board) -> int:
    """A board given as an int or a :class:`~babytris.Board` of the rules' size, as its bits."""
    if isinstance(board, Board):
        if (board.width, board.height) != (rules.width, rules.height):
            raise ValueError(f"board is {board.width}x{board.height}, the rules are {rules.width}x{rules.height}")
        return board.bits
    if isinstance(board, bool) or not isinstance(board, (int, np.integer)):
        raise TypeError(f"board must be an int or a Board, got {type(board).__name__}")
    if not 0 <= int(board) < 2**rules.cells:
        raise ValueError(f"board must be in [0, 2**{rules.cells}) (its cells' bits), got {int(board)}")
    return int(board)


def _popcount(boards: np.ndarray) -> np.ndarray:
    """Each uint64's set bits (numpy < 2.0 has no ``bitwise_count``)."""
    counts = np.zeros(len(boards), dtype=np.int64)
    for k in range(64):
        counts += ((boards >> np.uint64(k)) & np.uint64(1)).astype(np.int64)
    return counts
