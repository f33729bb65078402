"""A loaded solution proves itself: what a file reports is recomputed, not believed.

:func:`prove` runs after :func:`~babytris.files.persist.load` has checked the
file's form (names, dtypes, shapes, ranges, digests) and built its
:class:`~babytris.Solution`.  It checks, in this order:

1. **The table is the rules' own**: the engine builds the rules' move
   table on the saved boards (:func:`~babytris.engine.enumeration.table_of_boards`:
   every move its own, and the boards shown to be those play reaches from
   the start, each once: no search), and every array of the saved move
   table must equal the one it gives.  (:func:`~babytris.load` does this
   itself where the file holds digests: it compares the boards and matches
   the other arrays by their digests, leaving them compressed.)
2. **The values are this game's, as close as claimed**: one Bellman backup
   of the loaded values with the solver's own sweep (synchronous: every
   state backed up from the board values the loaded values give), for the
   saved rules, discount, opponent, player and reward, may move no state
   value by more than ``discount * residual`` (plus 16 ulps of the largest
   value).  That is what the last sweep of a solve leaves (it read board
   values within ``residual`` of the final ones), and it proves
   :attr:`~babytris.Solution.error_bound`: a backup is a contraction of
   modulus ``discount``, so values a backup moves by at most ``d`` lie
   within ``d / (1 - discount)`` of the exact ones.
3. **The policy is greedy in those values**: each chosen move is worth, in
   the backup, within the tie slack of its state's best (``2 * discount *
   error_bound`` once converged, else ``2 * discount * residual``: the
   moves of the last sweep, chosen before its board values settled); a
   player placing at random has no moves.
4. **An optimising opponent's pieces are its best choice**: each board's
   piece, and the opening row where one is saved, within the tie slack of
   the least valuable to the player (the most for ``"gaps"``).
5. **The tie rule claimed is the one the choices follow**
   (:mod:`babytris.files.tie_rule`): among the moves (and pieces, and start
   rows) surely tied, the rule's is taken ("first": none tied before it).

Cost, for a genuine file: under one enumeration and one sweep (the table built
without a search, a walk over its moves, the sweep, and the policy's and the
opponent's checks, a few passes over the states), against the many sweeps of a
solve.  A forged one is refused at the first check it fails: at the latest
once the table of its boards is built, within twice the memory a genuine file
of that many rows needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import NoReturn, cast

import numpy as np

from ..engine.enumeration import previews_bytes, table_of_boards
from ..engine.placements import most_moves
from ..engine.resources import DEFAULT_MAX_MEMORY, MemoryLimitError, format_bytes, table_bytes
from ..engine.transitions import TableError, Transitions
from ..game.rules import Rules
from ..results.saving import TABLE_ARRAYS
from ..results.solution import Solution, largest_magnitude
from ..solvers import _greedy, _sweep
from ..solvers.roles import MOVES_BEST, MOVES_MEAN, PIECES_BEST, PIECES_WORST, Roles, policy_rows, resolve
from ..solvers.sweep_arrays import SolverSettings, sweeps_for
from .errors import SolutionFileError
from .tie_rule import Chosen, Slacks, check_tie_rule, slacks_of

__all__ = ["Backup", "backup", "prove", "rules_table"]

#: Rounding allowed per backup, in ulps of the largest value (the convention of
#: :func:`babytris.results.solution.value_error_bound`).
ULPS = 16


def prove(
    path: str | os.PathLike, solution: Solution, *, table_proved: bool = False, max_memory: int = DEFAULT_MAX_MEMORY
) -> None:
    """Recompute what a loaded ``solution`` (read from ``path``) reports
    (``table_proved``: its table is the rules' own already, re-derived by the
    caller and matched with the file's by their digests).

    Returns:
        None; raises :class:`~babytris.files.errors.SolutionFileError` naming
        the first array or setting at fault and what differs.
    """
    if not table_proved:
        check_table(path, solution.transitions, max_memory)
    roles = _roles(path, solution)
    slacks = slacks_of(solution)
    done = check_values(path, solution, roles, slacks)
    chosen = check_policy(path, solution, roles, done, slacks)
    check_opponent(path, solution, roles, slacks)
    check_tie_rule(path, solution, roles, done.board_values, done.values, chosen, slacks)


def _fail(path: str | os.PathLike, field: str | None, problem: str) -> NoReturn:
    raise SolutionFileError(path, field, problem)


def rules_table(
    path: str | os.PathLike,
    rules: Rules,
    boards: np.ndarray,
    max_memory: int = DEFAULT_MAX_MEMORY,
    offsets: np.ndarray | None = None,
) -> Transitions:
    """The move table the engine derives from ``rules``, built on a file's
    table's ``boards`` (:func:`~babytris.engine.enumeration.table_of_boards`:
    no search, but a check that they are the boards play reaches, each
    once), in the engine's order: compare its boards with the file's.  A
    file costs what its rows allow (twice what a genuine table of that many
    rows needs, at most, and never over ``max_memory``), whatever rules it claims.
    ``offsets`` (the file's, with a plain table: none with previews, hold or
    a bag) spare the count of the moves, each row checked to hold its
    state's moves as they are written.

    Returns:
        the :class:`~babytris.Transitions`.

    Raises:
        SolutionFileError: the boards are not the rules' reachable ones, or
            an offset is not the rules' own.
        MemoryLimitError: building their table would take more than ``max_memory``.
    """
    # (its rows: with previews, hold or a bag each board once per node, and the nodes' table is built from the boards')
    n_rows, n_boards = len(boards), len(boards) // (rules.nodes_per_board if rules.node_tables else 1)
    need = table_bytes(rules, n_rows, n_rows * rules.n_pieces * (most_moves(rules) + 1))  # (+1: a hold)
    if rules.node_tables:
        need = max(need, previews_bytes(rules, n_boards, n_boards * rules.n_pieces * most_moves(rules)))
    budget = min(2 * need + 2**26, max_memory)
    try:
        return table_of_boards(rules, boards, offsets=offsets, max_memory=budget)
    except TableError as err:
        if err.field == "offsets":
            _fail(path, "table_offsets", err.problem)
        _fail(path, "table_boards", f"{err.problem}: the boards are not the rules' own (re-derived)")
    except MemoryLimitError as err:
        raise MemoryLimitError(
            f"{os.fspath(path)!r}: proving its table of {n_rows:,} rows would take more than "
            f"{format_bytes(budget)} ({err}); raise max_memory, or load it with verify=False"
        ) from None


def check_table(path: str | os.PathLike, table: Transitions, max_memory: int = DEFAULT_MAX_MEMORY) -> None:
    """Refuse a table that differs from the one the engine derives from its rules."""
    offsets = None if table.rules.node_tables else table.offsets  # (a node table's are the nodes')
    own = rules_table(path, table.rules, table.boards, max_memory, offsets)
    for name in TABLE_ARRAYS:
        saved, derived = getattr(table, name), getattr(own, name)
        if saved is None and derived is None:
            continue
        field = f"table_{name}"
        if saved is None or derived is None or len(saved) != len(derived):
            count = "none" if saved is None else f"{len(saved):,}"
            rules = "none" if derived is None else f"{len(derived):,}"
            _fail(path, field, f"holds {count} entries where the rules' own table (re-derived) holds {rules}")
        if not np.array_equal(saved, derived):
            i = int(np.flatnonzero(np.asarray(saved) != np.asarray(derived))[0])
            _fail(path, field, f"[{i:,}] is {saved[i]} where the rules' own table (re-derived) has {derived[i]}")


def _roles(path: str | os.PathLike, solution: Solution) -> Roles:
    """The sides the values were solved for, as the sweeps read them (given sides: the saved arrays)."""
    opponent: object = solution.opponent_policy if solution.opponent == "given" else solution.opponent
    player: object = solution.policy if solution.player == "given" else solution.player
    try:
        return resolve(solution.transitions, opponent, player, solution.reward)
    except ValueError as err:
        field = "solution_policy" if solution.player == "given" else "opponent"
        _fail(path, field, str(err))


@dataclass(frozen=True)
class Backup:
    """One synchronous Bellman backup of a solution's values (:func:`backup`)."""

    board_values: np.ndarray  # float64 (n_boards,): the board values the loaded values give, which it read
    values: np.ndarray  # float64 (n_states,): each state's value after it (the game-over value where no move)
    moves: np.ndarray  # int16 (n_states,): the move it took (offset in the row; -1: none, or not the best move)
    move_reward: np.ndarray | None  # float64 (n_moves,): each move's reward, or None for the rules' points
    moved: float  # the largest change of a state's value (NaN if one is NaN)
    n_threads: int  # the threads the sweep took (the tuner's choice for the machine's load)


def backup(solution: Solution, roles: Roles) -> Backup:
    """Each state's value backed up once by the solver's own sweep, synchronous
    (every state reads the board values the loaded values give), for the
    solution's rules, discount, sides and reward: the solve's own sweeper
    (:func:`babytris.solvers.sweep_arrays.sweeps_for`), started from the loaded values.

    Returns:
        a :class:`Backup`.
    """
    t = solution.transitions
    once = SolverSettings("jacobi", float(solution.discount), tol=1.0, max_iter=1, eval_sweeps=0, accelerate=False)
    sweeps = sweeps_for(t, roles, once, can_drop_states=False)
    with np.errstate(all="ignore"):  # (forged values may overflow: the check fails them)
        board_values = np.ascontiguousarray(solution.board_values, dtype=np.float64)
    sweeps.values[:] = solution.values.ravel()
    sweeps.board_values[:] = board_values  # (the sweep's own copy: it updates it in place)
    with np.errstate(all="ignore"):
        # (its residual is the largest change of a state's value or of a board's, which
        # moves no further than its states': the values' change, with no pass of its own)
        sweeper = cast(_sweep.Sweeper, sweeps.sweeper)
        moved = sweeper.greedy_sweep()
    values = sweeps.values
    unswept = np.flatnonzero(np.diff(t.offsets) == 0)  # (states with no move, on boards with none, are not swept)
    with np.errstate(all="ignore"):
        stuck = np.abs(values[unswept] - sweeps.dead)
    extra = float(stuck.max()) if stuck.size else 0.0
    if moved == moved and not extra <= moved:  # (a NaN stays a NaN)
        moved = extra
    values[unswept] = sweeps.dead
    return Backup(board_values, values, sweeps.policy, roles.move_reward, float(moved), sweeper.n_threads)


def check_values(path: str | os.PathLike, solution: Solution, roles: Roles, slacks: Slacks) -> Backup:
    """Back the loaded values up once; refuse them if a state moves by more
    than ``discount * residual`` (and rounding: ``slacks``, the loaded values' size).

    Returns:
        the :class:`Backup`.
    """
    discount = solution.discount
    loaded = solution.values.ravel()
    done = backup(solution, roles)
    # (the loaded values' largest: finite, load checked; the backup's may not be)
    allowed = discount * solution.residual + ULPS * np.finfo(np.float64).eps * slacks.largest
    if not done.moved <= allowed:  # (NaN fails too)
        with np.errstate(all="ignore"):
            change = np.abs(done.values - loaded)
        worst = int(np.nanargmax(change)) if not np.isnan(change).all() else 0
        moved = float(change[worst])
        _fail(
            path,
            "solution_values",
            f"one Bellman sweep over them moves {_state(solution, worst)} by {moved:.3g} (from {loaded[worst]:.6g} "
            f"to {done.values[worst]:.6g}), where the saved residual {solution.residual:.3g} allows at most "
            f"{allowed:.3g} at discount {discount}: they are not the values of these rules, discount, sides and "
            "reward, solved as far as claimed",
        )
    return done


def check_policy(
    path: str | os.PathLike, solution: Solution, roles: Roles, done: Backup, slacks: Slacks
) -> Chosen | None:
    """Refuse a best-move player's policy whose moves are not greedy in the
    values within the tie slack (a random player's must be -1 throughout).
    One compiled pass (:func:`~babytris.solvers._greedy.chosen_rows`) finds
    each chosen move in its row, at the backup's own best move first, and
    values it where it is not that one (ties, or a forgery); for the tie
    rule "first" it values the moves before it too, for the first surely
    tied one (``slacks.sure``), which
    :func:`~babytris.files.tie_rule.check_tie_rule` refuses.

    Returns:
        a best-move player's :class:`Chosen` moves, else None.
    """
    if roles.moves == MOVES_MEAN:
        if np.any(solution.policy >= 0):
            s = int(np.flatnonzero(solution.policy.ravel() >= 0)[0])
            _fail(path, "solution_policy", f"the player places at random, yet {_state(solution, s)} has a move")
        return None
    if roles.moves != MOVES_BEST:  # (a given player's moves are its own: its values were checked)
        return None
    t = solution.transitions
    policy = solution.policy
    if policy.dtype != np.int16 or policy.shape != (t.n_boards, solution.rules.n_pieces):
        _policy_rows(path, solution)  # (refused there unless every entry is a move: int16 then holds it)
        policy = policy.astype(np.int16)
    sure = slacks.sure if solution.ties == "first" else 0.0
    rows = np.empty(t.n_states, dtype=np.int16)
    scores = np.asarray(solution.rules.line_scores, dtype=np.float64)
    table = (t.offsets, t.next_board, t.lines, scores, done.board_values, float(solution.discount), t.placement)
    unknown, short, s, tied_at, tied_move = _greedy.chosen_rows(
        *table,
        np.ascontiguousarray(policy).reshape(-1),
        done.moves,
        done.values,
        rows,
        sure=sure,
        move_reward=done.move_reward,
        n_threads=done.n_threads,
    )
    if unknown >= 0:
        _policy_rows(path, solution)  # (refused there, naming the first state at fault)
        _fail(path, "solution_policy", f"{_state(solution, unknown)}: its placement is not one of its moves")
    slack = _slack(solution, slacks) + ULPS * np.finfo(np.float64).eps * largest_magnitude(done.values)
    if not short <= slack:  # (NaN fails too)
        move = int(t.offsets[s]) + int(rows[s])
        reward = done.move_reward[move] if done.move_reward is not None else scores[t.lines[move]]
        with np.errstate(all="ignore"):
            worth = reward + solution.discount * done.board_values[t.next_board[move]]
        _fail(
            path,
            "solution_policy",
            f"{_state(solution, s)} takes placement {int(solution.policy.ravel()[s])}, worth {worth:.6g} in the "
            f"values, where its best move is worth {done.values[s]:.6g}: not greedy within the tie slack {slack:.3g}",
        )
    return Chosen(rows, (tied_at, tied_move) if tied_at >= 0 else None)


def _policy_rows(path: str | os.PathLike, solution: Solution) -> np.ndarray:
    """The policy as offsets in the states' rows (:func:`~babytris.solvers.roles.policy_rows`); refused
    naming the first state whose placement is not a move of its row."""
    try:
        return policy_rows(solution.transitions, solution.policy)
    except ValueError as err:
        _fail(path, "solution_policy", str(err))


def check_opponent(path: str | os.PathLike, solution: Solution, roles: Roles, slacks: Slacks) -> None:
    """Refuse an optimising opponent's pieces (and saved opening row) that are not
    its best choice in the values within the tie slack."""
    if roles.pieces not in (PIECES_WORST, PIECES_BEST) or solution.opponent_policy is None:
        return
    t = solution.transitions
    sign = 1.0 if roles.pieces == PIECES_WORST else -1.0  # (the opponent's cost: the player's value, or minus it)
    cost = sign * solution.values
    if t.bags is not None:  # (only the pieces left in the bag can come)
        cost = np.where(t.draw_chances() > 0, cost, np.inf)
    least = cost.min(axis=1)
    chosen = cost[np.arange(t.n_boards), solution.opponent_policy]
    slack = slacks.tie_slack + ULPS * np.finfo(np.float64).eps * slacks.largest
    with np.errstate(all="ignore"):
        over = chosen - least
    if over.size and not over.max() <= slack:
        b = int(np.argmax(over))
        names = solution.rules.piece_names
        _fail(
            path,
            "solution_opponent_policy",
            f"board index {b}: the {solution.opponent} opponent gives piece {names[solution.opponent_policy[b]]!r}, "
            f"worth {sign * chosen[b]:.6g} to the player, where piece {names[int(np.argmin(cost[b]))]!r} is worth "
            f"{sign * least[b]:.6g}: not its best choice within the tie slack {slack:.3g}",
        )
    if solution.opening_row is not None:
        rows, _ = t.start_nodes()
        values = sign * solution.board_values[rows]
        row = int(np.flatnonzero(rows == solution.opening_row)[0])
        if not values[row] <= values.min() + slack:
            _fail(
                path,
                "opening_row",
                f"{solution.opening_row} is worth {sign * values[row]:.6g} to the player, where start row "
                f"{int(rows[np.argmin(values)])} is worth {sign * values.min():.6g}: not the {solution.opponent} "
                f"opponent's best opening within the tie slack {slack:.3g}",
            )


def _slack(solution: Solution, slacks: Slacks) -> float:
    """How far below its state's best a chosen move may be worth: the tie slack once
    converged; else twice what the last sweep's board values could still move
    (``discount * residual``), as it chose its moves before they settled."""
    return max(slacks.tie_slack, 2.0 * solution.discount * solution.residual)


def _state(solution: Solution, s: int) -> str:
    """State ``s`` in words."""
    b, p = divmod(s, solution.rules.n_pieces)
    return f"state {s:,} (board index {b:,}, piece {solution.rules.piece_names[p]!r})"
