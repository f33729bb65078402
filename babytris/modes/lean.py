"""Lean exact solves, for boards whose move table would not fit in memory.

The default solve stores every move (next board, rows cleared, placement) and
every state's value and move: about 60 bytes a board at 4x7, so 4x8's half a
billion boards would need some 30 GB.  The lean mode stores, for a board of
at most 32 cells, one bit per *possible* board (the reachable set as a
bitmap: 512 MiB at 4x8), a 4-byte rank per 64 of them (a board's index is the
number of reachable boards below it, a popcount away), and one float64 value
per reachable board; each sweep recomputes the moves from the rules.  It is
value iteration (in place, layer by layer, threads sharing a layer, Aitken
jumps), so it takes more sweeps than the default modified policy iteration,
each several times slower: use it where the default does not fit.

The values are those of the default mode to the tolerance, and the policy
(computed on demand, ties broken the same way) is the same: see
``tests/test_lean.py``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.enumeration import forecast_boards
from ..engine.placements import canonical_boards, engine
from ..engine.resources import DEFAULT_MAX_MEMORY, MemoryLimitError, check_max_memory, format_bytes, resolve_n_jobs
from ..engine.transitions import layers
from ..game.board import Board
from ..game.pieces import Piece
from ..game.rules import Rules
from ..game.validation import check_solver_args, make_rules
from ..results.solution import tie_slack, value_error_bound
from ..solvers.sweeping import MAX_RECORDED_CHANGE, Progress, value_iteration
from . import _lean

__all__ = ["LeanSolution", "solve_lean", "lean_bytes", "LEAN_MAX_CELLS", "LEAN_OPPONENTS"]

#: The largest board, in cells, the lean mode holds (its bitmap has ``2**cells`` bits).
LEAN_MAX_CELLS = int(_lean.MAX_CELLS)
#: The opponents the lean sweeps combine pieces for: drawn, or the least valuable given.
LEAN_OPPONENTS = ("random", "minimax")


def lean_bytes(rules: Rules, n_boards: int, accelerate: bool = True) -> int:
    """Bytes a lean solve of ``rules`` with ``n_boards`` reachable boards
    holds at its peak: the bitmap (1 bit per possible board) and, while
    searching, a queue of 4-byte boards (which grows by half when full, so up
    to 2.5 times its length during a reallocation); then the bitmap, the
    ranks (4 bytes per 64 possible boards) and the values (8 bytes a board,
    and 4 more with ``accelerate``: each board's change in the sweep before
    a jump, in float32)."""
    words = max(1, 2 ** (rules.width * rules.height) // 64)
    search = 8 * words + 10 * n_boards
    solve = 12 * words + (12 if accelerate else 8) * n_boards
    return max(search, solve)


@dataclass(frozen=True, repr=False, eq=False)
class LeanSolution:
    """A lean solve: the board values, with state values and moves computed on demand.

    Attributes:
        rules, discount, opponent: the game solved.
        board_values: float64 array ``(n_boards,)``, each reachable board's
            value before its next piece, in board order (:meth:`boards`).
        iterations, residual, converged, residuals, tol: as in
            :class:`~babytris.Solution` (value iteration's greedy sweeps).
        seconds: wall time of ``{"search": ..., "solve": ...}``.
    """

    rules: Rules
    discount: float
    opponent: str
    board_values: np.ndarray
    table: Any  # babytris.modes._lean.LeanTable
    iterations: int
    residual: float
    converged: bool
    residuals: np.ndarray
    tol: float
    seconds: dict = field(default_factory=dict)

    @property
    def n_boards(self) -> int:
        """The number of reachable boards."""
        return int(self.table.n_boards)

    @property
    def error_bound(self) -> float | None:
        """A proven bound on ``max |board_values - W*|`` (as :attr:`Solution.error_bound`)."""
        return value_error_bound(self.discount, self.residual, self.board_values)

    @property
    def tie_slack(self) -> float:
        """The float by which two moves' values may differ and still tie (as :attr:`Solution.tie_slack`)."""
        return tie_slack(self.discount, self.residual, self.board_values) if self.converged else 0.0

    @property
    def start_value(self) -> float:
        """The value of the start board before the first piece."""
        start = canonical_boards(np.array([self.rules.start], dtype=np.uint64), self.rules)
        return float(self.board_values[self.table.index(start)[0]])

    def boards(self) -> np.ndarray:
        """uint64 array ``(n_boards,)``: the reachable boards, ascending (the order of :attr:`board_values`)."""
        return np.asarray(self.table.boards())

    def values_and_moves(self, boards: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The optimal value and best placement of each piece on reachable ``boards``.

        Returns:
            ``(values, moves)``: float64 array ``(len(boards), n_pieces)``,
            the optimal value of each piece on each board; int16 array of the
            same shape, its best placement's number (the first within
            :attr:`tie_slack`, as the default mode's policy; -1 where none
            fits).  ``ValueError`` for a board that is not reachable.
        """
        keys = np.ascontiguousarray(np.asarray(boards, dtype=np.uint64).ravel())
        return self.table.state_values(keys, self.board_values, _scores(self.rules), self.discount, self.tie_slack)

    def value(self, board: int | Board, piece: int | str | Piece) -> float:
        """The optimal value of placing ``piece`` on ``board``."""
        values, _ = self.values_and_moves([int(board)])
        return float(values[0, self.rules.piece_index(piece)])

    def __repr__(self) -> str:
        return (
            f"<LeanSolution {self.rules.width}x{self.rules.height} discount={self.discount} "
            f"opponent={self.opponent}: {self.n_boards:,} boards, start_value={self.start_value:.6f}, "
            f"{self.iterations} sweeps, residual={self.residual:.1e}"
            f"{' converged' if self.converged else ' NOT converged'}>"
        )


def solve_lean(
    rules: Rules | None = None,
    *,
    discount: float = 0.9,
    opponent: str = "random",
    tol: float = 1e-8,
    max_iter: int = 100_000,
    accelerate: bool | None = None,
    n_jobs: int | None = None,
    max_memory: int = DEFAULT_MAX_MEMORY,
    progress: Progress | None = None,
    **rule_fields: Any,
) -> LeanSolution:
    """Solve ``rules`` exactly in the lean mode (see :mod:`babytris.modes.lean`).

    Args:
        rules: a :class:`Rules` of at most :data:`LEAN_MAX_CELLS` cells, or
            keyword fields (``width=4, height=8``).  Points only: no
            previews, hold, mirror merging or combo objective.
        discount: in [0, 1).
        opponent: ``"random"`` (pieces drawn) or ``"minimax"`` (the least
            valuable piece given).  The player is optimal.
        tol, max_iter, n_jobs: as for :func:`babytris.solve` (value iteration).
        accelerate: Aitken jumps, which keep each board's change in the
            sweep before a jump (4 bytes a board; see :func:`lean_bytes`);
            None (default): where that fits in ``max_memory`` by the
            forecast of the boards (4x8: 6.8 GB with it, 4.8 GB without).
        max_memory: refuse, with :class:`~babytris.MemoryLimitError`, work
            needing more bytes than this (:func:`lean_bytes`): up front from
            a forecast of the boards, and during the search as they are found.
        progress: ``progress(iteration, residual)`` after each sweep.

    Returns:
        :class:`LeanSolution`.
    """
    rules = make_rules(rules, rule_fields)
    max_memory = check_max_memory(max_memory)
    forecast = forecast_boards(rules) if rules.width * rules.height <= LEAN_MAX_CELLS else None
    if accelerate is None:
        accelerate = forecast is None or lean_bytes(rules, forecast, True) <= max_memory
    check_solver_args(discount, tol, max_iter, "vi", 0, accelerate, undiscounted=False)
    n_threads = resolve_n_jobs(n_jobs)
    if opponent not in LEAN_OPPONENTS:
        raise ValueError(
            f"opponent must be one of {', '.join(map(repr, LEAN_OPPONENTS))} in lean mode, got {opponent!r}"
        )
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable(iteration, residual) or None, got {progress!r}")
    cells = rules.width * rules.height
    if cells > LEAN_MAX_CELLS:
        raise ValueError(f"lean mode holds boards of at most {LEAN_MAX_CELLS} cells; width * height = {cells}")
    unsupported = [
        name
        for name, used in (
            ("preview", rules.preview),
            ("hold", rules.hold),
            ("mirror", rules.mirror),
            ("objective='combo'", rules.objective == "combo"),
            ("moves='soft'", rules.moves == "soft"),
            ("randomizer='bag'", rules.randomizer == "bag"),
        )
        if used
    ]
    if unsupported:
        raise ValueError(f"lean mode solves the plain game: {', '.join(unsupported)} not supported")
    if forecast is not None and lean_bytes(rules, forecast, accelerate) > max_memory:
        raise MemoryLimitError(
            f"{rules.width}x{rules.height} in lean mode needs more than max_memory={format_bytes(max_memory)}: "
            f"about {forecast:,} boards (forecast), {format_bytes(lean_bytes(rules, forecast, accelerate))}; "
            "refused before the search"
        )
    words = max(1, 2**cells // 64)
    per_board = 12 if accelerate else 8
    max_boards = max(1, min((max_memory - 12 * words) // per_board, (max_memory - 8 * words) // 10))
    started = time.perf_counter()
    start = int(canonical_boards(np.array([rules.start], dtype=np.uint64), rules)[0])
    table = _lean.LeanTable(engine(rules), start, max_boards)
    if table.status == -4:
        raise KeyboardInterrupt
    if table.status == -1:
        raise MemoryError(f"lean search ran out of memory after {table.n_boards:,} boards")
    if table.status == -2:
        raise MemoryLimitError(
            f"{rules.width}x{rules.height} in lean mode needs more than max_memory={format_bytes(max_memory)}: "
            f"over {table.n_boards:,} boards reachable, whose lean solve would hold "
            f"{format_bytes(lean_bytes(rules, table.n_boards, accelerate))} (the search stopped before allocating it)"
        )
    searched = time.perf_counter()
    W = np.zeros(table.n_boards)
    sweeper = _lean.LeanSweeper(
        table,
        W,
        _scores(rules),
        np.asarray(rules.probabilities, dtype=np.float64),
        float(discount),
        np.asarray(layers(rules), dtype=np.int64),
        combine=0 if opponent == "random" else 1,
        n_threads=n_threads,
    )
    residuals = value_iteration(
        sweeper,
        np.empty(0),
        W,
        float(tol),
        int(max_iter),
        accelerate=bool(accelerate),
        progress=progress,
        history=_Changes(sweeper, table.n_boards) if accelerate else None,
    )
    residual = residuals[-1] if residuals else 0.0
    return LeanSolution(
        rules=rules,
        discount=float(discount),
        opponent=opponent,
        board_values=W,
        table=table,
        iterations=len(residuals),
        residual=residual,
        converged=residual <= tol,
        residuals=np.array(residuals),
        tol=float(tol),
        seconds={"search": searched - started, "solve": time.perf_counter() - searched},
    )


class _Changes:
    """The lean mode's :class:`~babytris.solvers.sweeping.History`: each board's
    change in the recorded sweep, in float32 (4 bytes a board where a copy
    of the values takes 8; a jump's precision only sets how far it gets,
    and the sweeps after it decide convergence)."""

    #: (float32's range: see :data:`~babytris.solvers.sweeping.MAX_RECORDED_CHANGE`)
    max_change = MAX_RECORDED_CHANGE

    def __init__(self, sweeper: _lean.LeanSweeper, n_boards: int) -> None:
        self.sweeper = sweeper
        self.changes = np.zeros(n_boards, dtype=np.float32)

    def buffers(self) -> tuple[np.ndarray, np.ndarray]:
        return np.empty(0), self.changes

    def jump(self, ratio: float) -> None:
        self.sweeper.jump(ratio / (1.0 - ratio), self.changes)


def _scores(rules: Rules) -> np.ndarray:
    return np.asarray(rules.line_scores, dtype=np.float64)
