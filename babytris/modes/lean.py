"""Lean exact solves, for boards whose move table would not fit in memory.

The default solve stores every move (next board, rows cleared, placement) and
every state's value and move: about 60 bytes a board at 4x7, so 4x8's half a
billion boards would need some 30 GB.  The lean mode stores, for a board of
at most 32 cells, one bit per *possible* board (the reachable set as a
bitmap: 512 MiB at 4x8), a 4-byte rank per 64 of them (a board's index is the
number of reachable boards below it, a popcount away), and one float64 value
per reachable board; each greedy sweep recomputes the moves from the rules.

It runs modified policy iteration (with random pieces, as the default mode
does; against minimax too, whose evaluation sweeps still take the least
valuable piece, where the default mode runs strategy iteration): a greedy sweep
keeps each state's chosen move compactly, and the evaluation sweeps between
greedy ones read only the kept move.  What is kept depends on the memory
given (:func:`lean_plan`): the next board's index and the rows cleared (5
bytes a state: an evaluation recomputes nothing), else the placement's
number (a byte a state: it drops that one piece again), else nothing (value
iteration, every sweep greedy).  Sweeps run in place, layer by layer,
threads sharing a layer, with Aitken jumps where their float32 record fits.

The values are those of the default mode to the tolerance, and the policy
(computed on demand, ties broken the same way) is the same: see
``tests/test_lean.py``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any, NoReturn

import numpy as np

from ..engine.enumeration import forecast_boards
from ..engine.placements import canonical_boards, engine
from ..engine.resources import DEFAULT_MAX_MEMORY, MemoryLimitError, check_max_memory, format_bytes, resolve_n_jobs
from ..engine.transitions import layers
from ..game.board import Board
from ..game.pieces import Piece, Placement
from ..game.rules import Rules, make_rules
from ..game.validation import check_solver_args
from ..results.solution import Solution, tie_slack, value_error_bound
from ..solvers.sweeping import MAX_RECORDED_CHANGE, Progress, ThreadTuner, modified_policy_iteration, value_iteration
from . import _lean, lean_policy
from .checkpoint import DEFAULT_CHECKPOINT_SECONDS, Checkpointer
from .lean_saving import save_lean

__all__ = [
    "LeanSolution",
    "LeanPlan",
    "solve_lean",
    "lean_bytes",
    "lean_plan",
    "LEAN_MAX_CELLS",
    "LEAN_OPPONENTS",
    "LEAN_KEPT",
    "lean_rules_problem",
]

#: The largest board, in cells, the lean mode holds (its bitmap has ``2**cells`` bits).
LEAN_MAX_CELLS = int(_lean.MAX_CELLS)
#: The opponents the lean sweeps combine pieces for: drawn, or the least valuable given.
LEAN_OPPONENTS = ("random", "minimax")
#: What a greedy sweep may keep of each state's chosen move, most first (see :class:`LeanPlan`).
LEAN_KEPT = ("moves", "placements", "none")
#: Bytes kept per state (a board and a piece) by each of :data:`LEAN_KEPT`.
KEPT_BYTES = {"moves": 5, "placements": 1, "none": 0}
#: The plans :func:`lean_plan` tries, best first: what is kept, and Aitken jumps.  Keeping the
#: moves saves each evaluation sweep the drops and the rank lookups; the jumps save sweeps.
PLANS = (
    ("moves", True),
    ("placements", True),
    ("moves", False),
    ("placements", False),
    ("none", True),
    ("none", False),
)


def lean_bytes(rules: Rules, n_boards: int, accelerate: bool = True, keep: str = "none") -> int:
    """Bytes a lean solve of ``rules`` with ``n_boards`` reachable boards
    holds at its peak: while searching, two bitmaps (1 bit per possible
    board each: the boards found, and those not yet expanded); then the
    bitmap, the ranks (4 bytes per 64 possible boards), the values (8 bytes
    a board, and 4 more with ``accelerate``: each board's change in the sweep
    before a jump, in float32) and what is kept of each state's move
    (``keep``, see :data:`KEPT_BYTES`: per board, times the pieces)."""
    words = max(1, 2 ** (rules.width * rules.height) // 64)
    per_board = 8 + (4 if accelerate else 0) + KEPT_BYTES[keep] * rules.n_pieces
    return max(16 * words, 12 * words + per_board * n_boards)


@dataclass(frozen=True)
class LeanPlan:
    """How a lean solve spends its memory: what each greedy sweep keeps of a
    state's chosen move (``keep``, one of :data:`LEAN_KEPT`), whether it
    makes Aitken jumps, the method this gives (``"mpi"``, or ``"vi"`` where
    nothing is kept), its bytes (:func:`lean_bytes`) and why it was chosen."""

    keep: str
    accelerate: bool
    bytes: int
    why: str

    @property
    def method(self) -> str:
        return "vi" if self.keep == "none" else "mpi"


def lean_plan(
    rules: Rules, n_boards: int, max_memory: int, keep: str | None = None, accelerate: bool | None = None
) -> LeanPlan | None:
    """The first of :data:`PLANS` (as restricted by ``keep`` and
    ``accelerate``, where given) whose :func:`lean_bytes` for ``n_boards``
    fit in ``max_memory``; None if none does."""
    tried = [(k, a) for k, a in PLANS if (keep is None or k == keep) and (accelerate is None or a == accelerate)]
    for k, a in tried:
        need = lean_bytes(rules, n_boards, a, k)
        if need <= max_memory:
            first = tried[0]
            if (k, a) == first:
                why = "asked for" if keep is not None and accelerate is not None else "the most that fits"
            else:
                why = (
                    f"keep={first[0]!r}{' with Aitken jumps' if first[1] else ''} would need "
                    f"{format_bytes(lean_bytes(rules, n_boards, first[1], first[0]))}, over "
                    f"max_memory={format_bytes(max_memory)}"
                )
            return LeanPlan(k, a, need, why)
    return None


@dataclass(frozen=True, repr=False, eq=False)
class LeanSolution:
    """A lean solve: the board values, with state values and moves computed on demand.

    Attributes:
        rules, discount, opponent: the game solved.
        board_values: float64 array ``(n_boards,)``, each reachable board's
            value before its next piece, in board order (:meth:`boards`).
        iterations, residual, converged, residuals, tol: as in
            :class:`~babytris.Solution` (the greedy sweeps).
        method: ``"mpi"`` (modified policy iteration) or ``"vi"`` (value iteration).
        evaluations: the evaluation sweeps (modified policy iteration), in all.
        plan: what the sweeps kept and why (:class:`LeanPlan`).
        resumed: the greedy sweeps a checkpoint had done before this run went on from it (0: none).
        seconds: wall time of ``{"search": ..., "solve": ...}``.
        verified: False for a file read with ``load_lean(..., verify=False)``
            (its boards and values believed, not recomputed); True otherwise.

    What a table :class:`~babytris.Solution` holds for every state (``values``,
    ``policy``, ``transitions``) a lean solution computes for the boards asked
    (:meth:`values_and_moves`, :meth:`value`, :meth:`best_action`,
    :meth:`policy_table`); the attributes refuse with the size they would take.
    :func:`~babytris.play` and :func:`~babytris.evaluate` take it as the game
    its policy plays (:meth:`played_game`).
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
    method: str
    evaluations: int
    plan: LeanPlan
    seconds: dict = field(default_factory=dict)
    resumed: int = 0
    verified: bool = True

    @property
    def n_boards(self) -> int:
        """The number of reachable boards."""
        return int(self.table.n_boards)

    @cached_property  # (as tie_slack)
    def error_bound(self) -> float | None:
        """A proven bound on ``max |board_values - W*|`` (as :attr:`Solution.error_bound`)."""
        return value_error_bound(self.discount, self.residual, self.board_values)

    @cached_property  # (the values are a solve's or a file's, not changed after: one pass over them, at 4x8 4 GB)
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
        values, _ = self.values_and_moves([lean_policy.board_bits(self.rules, board)])
        return float(values[0, self.rules.piece_index(piece)])

    def action_values(
        self,
        board: int | Board,
        piece: int | str | Piece,
        preview: Sequence = (),
        held: object = None,
        locked: bool = False,
        bag_left: Sequence | None = None,
    ) -> dict[Placement, float]:
        """Every legal placement of ``piece`` on ``board`` with its value
        ``points + discount * value after``, as :meth:`Solution.action_values`
        (a lean solve plays the plain game: no queue, hold or bag).

        Returns:
            dict ``{Placement: value}``; ``ValueError`` for a board that is not reachable.
        """
        if tuple(preview) or held is not None or locked or bag_left is not None:
            raise ValueError("action_values: a lean solution plays without previews, hold or a bag")
        from ..engine.stepped import Game

        bits = lean_policy.board_bits(self.rules, board)
        self.values_and_moves([bits])  # (refuses a board that is not reachable)
        game = Game(self.rules, seed=0)
        game.board, game.piece = bits, self.rules.piece_index(piece)
        moves = game.moves()
        after = self.board_values[self.table.index(np.array([m.board for m in moves], dtype=np.uint64))]
        return {m.placement: m.points + self.discount * float(w) for m, w in zip(moves, after)}

    def best_action(self, board: int | Board, piece: int | str | Piece) -> Placement | None:
        """An optimal :class:`~babytris.Placement` of ``piece`` on ``board``
        (the first of those tied, as :meth:`Solution.best_action`), None at game over."""
        return lean_policy.best_action(self, board, piece)

    def policy_table(
        self, boards: Sequence[int] | np.ndarray | None = None, *, max_memory: int = DEFAULT_MAX_MEMORY
    ) -> Any:
        """The policy of the states of ``boards`` (reachable ones) as
        :meth:`Solution.policy_table` gives it for every state (a pandas
        ``DataFrame`` when pandas is installed, else a structured numpy
        array; one row per state, board-major).  None: every board, refused
        with a :class:`~babytris.engine.resources.MemoryLimitError` (as every
        refusal over ``max_memory``) naming its size where the table would take
        more than ``max_memory`` bytes (at 4x8, hundreds of GB)."""
        max_memory = check_max_memory(max_memory)
        if boards is None:
            need = lean_policy.policy_table_bytes(self)
            if need > max_memory:
                raise MemoryLimitError(
                    f"policy_table: the full table of {self.n_boards * self.rules.n_pieces:,} states would take "
                    f"{need:,} bytes ({format_bytes(need)}), over max_memory={format_bytes(max_memory)}: give the "
                    "boards wanted (policy_table(boards))"
                )
            boards = self.boards()
        return lean_policy.policy_table_of(self, np.asarray(boards, dtype=np.uint64))

    def played_game(self) -> Solution:
        """The game the policy plays (:func:`babytris.modes.lean_policy.played_game`):
        a small :class:`~babytris.Solution` over the boards the optimal player
        reaches, one move per state, which :func:`~babytris.play` and
        :func:`~babytris.evaluate` read (built once, then kept)."""
        return self._played

    @cached_property
    def _played(self) -> Solution:
        return lean_policy.played_game(self)

    def save(self, path: str | bytes | os.PathLike) -> None:
        """Write this solution to ``path`` (the reachable boards' bitmap, each
        board's value, the residuals and the settings; 4.2 GiB at 4x8); read
        it back, proved, with :func:`babytris.load_lean`.  The file is replaced
        atomically: a failed or interrupted save leaves the old one as it was.

        Returns:
            None.
        """
        settings = {
            "rules": self.rules,
            "discount": self.discount,
            "opponent": self.opponent,
            "n_boards": self.n_boards,
            "iterations": self.iterations,
            "residual": float(self.residual),
            "converged": bool(self.converged),
            "tol": self.tol,
            "method": self.method,
            "evaluations": self.evaluations,
            "plan": asdict(self.plan),
            "resumed": self.resumed,
            "seconds": {key: float(value) for key, value in self.seconds.items()},
            "ties": "first",
        }
        arrays = {"bits": self.table.bits, "board_values": self.board_values, "residuals": self.residuals}
        save_lean(settings, arrays, path)

    @property
    def values(self) -> NoReturn:
        """Never returns: raises ``ValueError`` with the bytes every state's value would take (a
        lean solution keeps board values; :meth:`values_and_moves` gives given boards' states')."""
        need = 8 * self.n_boards * self.rules.n_pieces
        raise ValueError(
            f"values: a LeanSolution keeps board values only (board_values); every state's value would take "
            f"{need:,} bytes ({format_bytes(need)}): use values_and_moves(boards) or value(board, piece)"
        )

    @property
    def policy(self) -> NoReturn:
        """Never returns: raises ``ValueError`` with the bytes every state's move would take (the
        moves are computed on demand: :meth:`best_action`, :meth:`values_and_moves`)."""
        need = 2 * self.n_boards * self.rules.n_pieces
        raise ValueError(
            f"policy: a LeanSolution computes its moves on demand; every state's would take {need:,} bytes "
            f"({format_bytes(need)}): use best_action(board, piece), values_and_moves(boards) or policy_table(boards)"
        )

    @property
    def transitions(self) -> NoReturn:
        """Never returns: raises ``ValueError`` with the bytes a move table would take at
        least (a lean solution keeps none; :meth:`played_game` holds the policy's moves)."""
        need = lean_policy.move_table_bytes(self)
        raise ValueError(
            f"transitions: a LeanSolution keeps no move table (it would take at least {need:,} bytes, "
            f"{format_bytes(need)}); played_game() is the table of the moves its policy makes"
        )

    def __repr__(self) -> str:
        return (
            f"<LeanSolution {self.rules.width}x{self.rules.height} discount={self.discount} "
            f"opponent={self.opponent}: {self.n_boards:,} boards, start_value={self.start_value:.6f}, "
            f"{self.iterations} greedy + {self.evaluations} evaluation sweeps ({self.method}), "
            f"residual={self.residual:.1e}"
            f"{' converged' if self.converged else ' NOT converged'}"
            f"{'' if self.verified else ', UNVERIFIED (loaded with verify=False)'}>"
        )


def solve_lean(
    rules: Rules | None = None,
    *,
    discount: float = 0.9,
    opponent: str = "random",
    tol: float = 1e-8,
    max_iter: int = 100_000,
    keep: str | None = None,
    eval_sweeps: int | None = None,
    accelerate: bool | None = None,
    ties: str = "first",
    n_jobs: int | None = None,
    max_memory: int = DEFAULT_MAX_MEMORY,
    progress: Progress | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_seconds: float = DEFAULT_CHECKPOINT_SECONDS,
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
        tol, max_iter, eval_sweeps, n_jobs: as for :func:`babytris.solve`
            (``max_iter`` counts greedy sweeps).
        keep: what each greedy sweep keeps of a state's chosen move for the
            evaluation sweeps of modified policy iteration: ``"moves"``
            (next board and rows cleared, 5 bytes a state), ``"placements"``
            (a byte a state), or ``"none"`` (value iteration).  None
            (default): the most that fits in ``max_memory`` by the forecast
            of the boards (:func:`lean_plan`; 4x8 keeps the placements).
        accelerate: Aitken jumps, which keep each board's change in the
            sweep before a jump (4 bytes a board; see :func:`lean_bytes`);
            None (default): where that fits, as ``keep``.
        ties: which of tied moves the policy takes: only ``"first"`` (the
            default mode's rule) in lean mode.
        max_memory: refuse, with :class:`~babytris.MemoryLimitError`, work
            needing more bytes than this (:func:`lean_bytes`): up front from
            a forecast of the boards, and during the search as they are found.
        progress: ``progress(iteration, residual)`` after each greedy sweep.
        checkpoint: a directory where the solve writes its values and where it
            stands, atomically, before a greedy sweep at most every
            ``checkpoint_seconds`` (:mod:`babytris.modes.checkpoint`); a solve
            of the same game and settings started again with it goes on from
            the last checkpoint and ends with the same values as one never
            stopped.  Modified policy iteration only (not ``keep="none"``).

    Returns:
        :class:`LeanSolution`.
    """
    rules = make_rules(rules, rule_fields)
    max_memory = check_max_memory(max_memory)
    if ties != "first":
        raise ValueError(
            f"ties must be 'first' in lean mode (its policy, computed on demand, takes the first of "
            f"tied moves), got {ties!r}"
        )
    if keep is not None and keep not in LEAN_KEPT:
        raise ValueError(f"keep must be one of {', '.join(map(repr, LEAN_KEPT))} or None, got {keep!r}")
    if accelerate is not None and not isinstance(accelerate, (bool, np.bool_)):
        raise ValueError(f"accelerate must be True, False or None, got {accelerate!r}")
    method = "vi" if keep == "none" else "mpi"
    discount, tol, max_iter, eval_sweeps, _ = check_solver_args(
        discount, tol, max_iter, method, eval_sweeps, True, undiscounted=False
    )
    n_threads = resolve_n_jobs(n_jobs)
    if opponent not in LEAN_OPPONENTS:
        raise ValueError(
            f"opponent must be one of {', '.join(map(repr, LEAN_OPPONENTS))} in lean mode, got {opponent!r}"
        )
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable(iteration, residual) or None, got {progress!r}")
    checkpointer = None
    if checkpoint is not None:
        if keep == "none":
            raise ValueError("checkpoint: value iteration (keep='none') keeps no checkpoints; leave keep to the plan")
        game = dict(rules=repr(rules), discount=discount, opponent=opponent, tol=tol, eval_sweeps=eval_sweeps)
        checkpointer = Checkpointer(checkpoint, game, checkpoint_seconds)
    cells = rules.width * rules.height
    problem = lean_rules_problem(rules)
    if problem is not None:
        raise ValueError(problem)
    forecast = forecast_boards(rules)
    least = (keep or "none", False if accelerate is None else bool(accelerate))
    asked = None if accelerate is None else bool(accelerate)
    if forecast is not None and lean_plan(rules, forecast, max_memory, keep, asked) is None:
        raise MemoryLimitError(
            f"{rules.width}x{rules.height} in lean mode needs more than max_memory={format_bytes(max_memory)}: "
            f"about {forecast:,} boards (forecast), {format_bytes(lean_bytes(rules, forecast, least[1], least[0]))} "
            "with the least it can keep; refused before the search"
        )
    words = max(1, 2**cells // 64)
    if 16 * words > max_memory:
        raise MemoryLimitError(
            f"{rules.width}x{rules.height} in lean mode needs more than max_memory={format_bytes(max_memory)}: "
            f"its search's two bitmaps over every possible board take {format_bytes(16 * words)}; refused "
            "before the search"
        )
    per_board = 8 + (4 if least[1] else 0) + KEPT_BYTES[least[0]] * rules.n_pieces
    max_boards = max(1, (max_memory - 12 * words) // per_board)
    started = time.perf_counter()
    start = int(canonical_boards(np.array([rules.start], dtype=np.uint64), rules)[0])
    table = _lean.LeanTable(engine(rules), start, max_boards, n_threads)
    if table.status == -4:
        raise KeyboardInterrupt
    if table.status == -1:
        raise MemoryError(f"lean search ran out of memory after {table.n_boards:,} boards")
    if table.status == -2:
        raise MemoryLimitError(
            f"{rules.width}x{rules.height} in lean mode needs more than max_memory={format_bytes(max_memory)}: "
            f"over {table.n_boards:,} boards reachable, whose lean solve would hold "
            f"{format_bytes(lean_bytes(rules, table.n_boards, least[1], least[0]))} (the search stopped before "
            "allocating it)"
        )
    searched = time.perf_counter()
    # (the boards are known now: the plan is made on their count, not the forecast's)
    plan = lean_plan(rules, table.n_boards, max_memory, keep, asked)
    assert plan is not None  # (the search stopped at max_boards, which the least plan fits)
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
        keep=plan.keep,
    )
    resume = None
    if checkpointer is not None:
        if plan.method != "mpi":
            raise MemoryLimitError(
                f"checkpoint: only modified policy iteration checkpoints, and max_memory={format_bytes(max_memory)} "
                f"leaves room for value iteration alone ({plan.why})"
            )
        # (what is kept does not change the values: the next board or the placement leading to it)
        checkpointer.game.update(n_boards=table.n_boards, accelerate=plan.accelerate)
        resume = checkpointer.load(W)
        if resume is not None and len(resume.residuals) >= max_iter:
            raise ValueError(
                f"max_iter={max_iter}: the checkpoint in {checkpointer.folder} has done {len(resume.residuals)} "
                "greedy sweeps already; give more"
            )
    evaluations: list[int] = []
    # (threads where they pay, as the default mode's sweeps: on a busy machine one thread is faster)
    tuned = ThreadTuner(sweeper, n_threads, first_touches=plan.bytes)
    if plan.method == "mpi":
        residuals = modified_policy_iteration(
            tuned,
            W,
            tol,
            max_iter,
            eval_sweeps,
            accelerate=plan.accelerate,
            progress=progress,
            linear=opponent == "random",
            evaluations=evaluations,
            resume=resume,
            on_round=None if checkpointer is None else lambda state: checkpointer(W, state),
        )
    else:
        residuals = value_iteration(
            tuned,
            np.empty(0),
            W,
            tol,
            max_iter,
            accelerate=plan.accelerate,
            progress=progress,
            history=_Changes(sweeper, table.n_boards) if plan.accelerate else None,
        )
    residual = residuals[-1] if residuals else 0.0
    return LeanSolution(
        rules=rules,
        discount=discount,
        opponent=opponent,
        board_values=W,
        table=table,
        iterations=len(residuals),
        residual=residual,
        converged=residual <= tol,
        residuals=np.array(residuals),
        tol=tol,
        method=plan.method,
        evaluations=sum(evaluations),
        plan=plan,
        seconds={"search": searched - started, "solve": time.perf_counter() - searched},
        resumed=0 if resume is None else len(resume.residuals),
    )


def lean_rules_problem(rules: Rules) -> str | None:
    """Why the lean mode cannot solve ``rules`` (too many cells, or more than
    the plain game), or None where it can."""
    cells = rules.width * rules.height
    if cells > LEAN_MAX_CELLS:
        return f"lean mode holds boards of at most {LEAN_MAX_CELLS} cells; width * height = {cells}"
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
        return f"lean mode solves the plain game: {', '.join(unsupported)} not supported"
    return None


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
