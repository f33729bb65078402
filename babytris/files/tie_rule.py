"""The tie rule a loaded file claims, proved: the policy's moves, an optimising
opponent's pieces and its opening row must be those the rule
(:mod:`babytris.solvers.ties`) takes among the tied.

Which moves tie is decided at the edge of the tie slack, where the solve's
board values and the proof's (recomputed from the saved values) differ by
rounding.  So a move is *surely tied* where it falls short of its state's best
by at most the slack less a margin (:data:`MARGIN_ULPS` ulps of the largest
value), and the rule's choice must come, in the rule's order, after every
surely tied move ("first": none before it; "last": none after it;
"random": none with a higher draw of the seeded generator, drawn in the order
:func:`~babytris.solvers.ties.break_ties` draws).  That the choice is tied at
all is :func:`~babytris.files.proof.check_policy`'s and
:func:`~babytris.files.proof.check_opponent`'s.  Where the slack is no wider
than the margin (a solve stopped before it converged has none), nothing is
surely tied by the slack.  Moves are then tied for sure only where they are
*twins*: moves of one row with the same reward and the same board after, whose
worth is one float however it is computed, so the solve took the rule's among
them (:func:`_twin_moves`); and an opponent's pieces tie for sure where the
player can place none of them (each state then worth 0 exactly).  An opening
row is then left unchecked.

Cost: for "first" (the default) none of its own: the proof's pass over the
chosen moves (:func:`~babytris.solvers._greedy.chosen_rows`) values the moves
before each one as it goes, and a few passes over the boards; "last" and
"random" value every move of the states with two or more.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import NoReturn

import numpy as np

from ..results.solution import Solution, largest_magnitude
from ..results.solution import tie_slack as tie_slack_of
from ..solvers.roles import MOVES_BEST, PIECES_BEST, PIECES_WORST, Roles
from .errors import SolutionFileError

__all__ = ["MARGIN_ULPS", "Chosen", "Slacks", "check_tie_rule", "slacks_of"]

#: The margin at the edge of the tie slack, in ulps of the largest value: twice the
#: rounding a backup is allowed (:data:`babytris.files.proof.ULPS`), as both a move's
#: worth and its state's best may be off by it.
MARGIN_ULPS = 32
#: States whose moves one slice of the twin and "last"/"random" checks holds (~50 bytes a move of temporaries).
SLICE_STATES = 2**16
#: The opponents whose pieces :func:`~babytris.solvers.ties.break_ties` draws keys for.
_CHOOSING = ("minimax", "best_response", "minavg", "gaps")


@dataclass(frozen=True)
class Chosen:
    """A best-move player's moves, as :func:`~babytris.files.proof.check_policy` found them."""

    rows: np.ndarray  # int16 (n_states,): each state's move as its offset in its row (-1: none)
    earlier_tied: tuple[int, int] | None  # "first": the first state with a surely tied move before its own, that move


@dataclass(frozen=True)
class Slacks:
    """What the proof's checks read from the size of the loaded values, read
    once (:func:`slacks_of`: each a pass or two over the values)."""

    largest: float  # max |values| of the loaded values
    tie_slack: float  # the solution's tie slack (:attr:`~babytris.Solution.tie_slack`)
    sure: float  # how far below its best a move, piece or start row is surely tied (none where not positive)


def slacks_of(solution: Solution) -> Slacks:
    """The :class:`Slacks` of ``solution``'s values: *surely tied* is within the tie
    slack less the margin (:data:`MARGIN_ULPS` ulps of the largest value)."""
    values = solution.values
    largest = largest_magnitude(values)
    # (the solution's tie slack, from the largest value read once: as Solution.tie_slack reads it)
    at_most = np.array([largest])
    tie_slack = tie_slack_of(solution.discount, solution.residual, at_most, solution.longest_game)
    tie_slack = tie_slack if solution.converged else 0.0
    return Slacks(largest, tie_slack, tie_slack - MARGIN_ULPS * float(np.finfo(np.float64).eps) * largest)


def check_tie_rule(
    path: str | os.PathLike,
    solution: Solution,
    roles: Roles,
    board_values: np.ndarray,
    best: np.ndarray,
    chosen: Chosen | None,
    slacks: Slacks,
) -> None:
    """Refuse a solution whose moves, pieces or opening row are not those its
    claimed tie rule (``solution.ties``) takes among the surely tied.

    Args:
        board_values: the board values the loaded values give (float64 ``(n_boards,)``).
        best: each state's best move's worth in them (float64 ``(n_states,)``).
        chosen: the policy's moves as :func:`~babytris.files.proof.check_policy`
            found them (for "first", with the first state that has a surely
            tied move before its own), or None where the player takes no best move.
        slacks: the solution's :class:`Slacks` (:func:`slacks_of`).

    Returns:
        None; raises :class:`SolutionFileError` naming ``ties``.
    """
    sure = slacks.sure
    t = solution.transitions
    rng = np.random.default_rng(solution.tie_seed) if solution.ties == "random" else None
    move_keys = rng.random(t.n_moves) if rng is not None and solution.player == "optimal" else None
    if roles.moves == MOVES_BEST and chosen is not None and (solution.ties != "random" or move_keys is not None):
        rows = chosen.rows
        if not sure > 0.0:
            _twin_moves(path, solution, roles, rows, move_keys)
        elif solution.ties == "first":
            if chosen.earlier_tied is not None:
                s, tied = chosen.earlier_tied
                _fail(path, solution, _moves_text(solution, s, int(rows[s]), tied, "an earlier"))
        else:
            _other_moves(path, solution, roles, board_values, best, rows, sure, move_keys)
    piece_keys = rng.random(solution.values.shape) if rng is not None and solution.opponent in _CHOOSING else None
    choice = solution.opponent_policy
    if roles.pieces in (PIECES_WORST, PIECES_BEST) and choice is not None:
        sign = 1.0 if roles.pieces == PIECES_WORST else -1.0  # (the opponent's cost: the player's value, or minus it)
        _pieces(path, solution, choice.astype(np.int64), sign, sure, piece_keys)
        if solution.opening_row is not None and sure > 0.0:
            _opening(path, solution, sign, slacks, rng)


def _fail(path: str | os.PathLike, solution: Solution, problem: str) -> NoReturn:
    raise SolutionFileError(path, "ties", f"the file claims ties={solution.ties!r}, but {problem}")


def _rows(t, states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The moves of ``states``' rows, one after another: ``(moves, sizes, segments)``,
    the moves' indices, each row's length and where it starts among them."""
    sizes = np.diff(t.offsets).astype(np.int64)[states]
    starts = t.offsets[states].astype(np.int64)
    segments = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    moves = np.repeat(starts - segments, sizes) + np.arange(int(sizes.sum()))
    return moves, sizes, segments


def _gains(solution: Solution, roles: Roles, moves: np.ndarray) -> np.ndarray:
    """The rewards of ``moves``: the roles' own, or the points of the rows they clear."""
    if roles.move_reward is not None:
        return roles.move_reward[moves]
    return np.asarray(solution.rules.line_scores, dtype=np.float64)[solution.transitions.lines[moves]]


def _twin_moves(
    path: str | os.PathLike, solution: Solution, roles: Roles, rows: np.ndarray, keys: np.ndarray | None
) -> None:
    """Where the slack is none: the chosen move's key at least its twins' (the
    moves of its row with its reward and its board after), "first" taking the
    earliest, "last" the latest, "random" the highest draw (``keys``)."""
    t = solution.transitions
    states = np.flatnonzero((np.diff(t.offsets) >= 2) & (rows >= 0))
    for first in range(0, states.size, SLICE_STATES):  # (in slices: Ctrl-C is answered between two)
        _twins_of(path, solution, roles, rows, keys, states[first : first + SLICE_STATES])


def _twins_of(
    path: str | os.PathLike,
    solution: Solution,
    roles: Roles,
    rows: np.ndarray,
    keys: np.ndarray | None,
    states: np.ndarray,
) -> None:
    """:func:`_twin_moves` on ``states`` (ascending): the first whose move is behind a twin is refused."""
    t = solution.transitions
    moves, sizes, segments = _rows(t, states)
    chosen = np.repeat(t.offsets[states].astype(np.int64) + rows[states], sizes)
    gains = _gains(solution, roles, moves)
    twin = (t.next_board[moves] == t.next_board[chosen]) & (gains == _gains(solution, roles, chosen))
    if keys is not None:
        key = keys[moves]
    else:
        key = moves.astype(np.float64) * (-1.0 if solution.ties == "first" else 1.0)
    top = np.maximum.reduceat(np.where(twin, key, -np.inf), segments)
    behind = np.flatnonzero(key[segments + rows[states]] < top)
    if behind.size:
        k = int(behind[0])
        s = int(states[k])
        row = slice(int(segments[k]), int(segments[k] + sizes[k]))
        tied = int(np.argmax(np.where(twin[row], key[row], -np.inf)))
        word = {"first": "an earlier", "last": "a later"}.get(solution.ties, "another")
        text = _moves_text(solution, s, int(rows[s]), tied, word, "move with its reward and board after")
        _fail(path, solution, text)


def _other_moves(
    path: str | os.PathLike,
    solution: Solution,
    roles: Roles,
    board_values: np.ndarray,
    best: np.ndarray,
    rows: np.ndarray,
    sure: float,
    keys: np.ndarray | None,
) -> None:
    """For "last" and "random": the chosen move's key at least every surely tied
    move's (``keys``: the random draws; None: the row order), over the states
    with two moves or more."""
    states = np.flatnonzero(np.diff(solution.transitions.offsets) >= 2)
    for first in range(0, states.size, SLICE_STATES):  # (in slices: Ctrl-C is answered between two)
        part = states[first : first + SLICE_STATES]
        _others_of(path, solution, roles, board_values, best, rows, sure, keys, part)


def _others_of(
    path: str | os.PathLike,
    solution: Solution,
    roles: Roles,
    board_values: np.ndarray,
    best: np.ndarray,
    rows: np.ndarray,
    sure: float,
    keys: np.ndarray | None,
    states: np.ndarray,
) -> None:
    """:func:`_other_moves` on ``states`` (ascending): the first whose move is behind a tied one is refused."""
    t = solution.transitions
    moves, sizes, segments = _rows(t, states)
    gains = _gains(solution, roles, moves)
    with np.errstate(all="ignore"):
        short = np.repeat(best[states], sizes) - (gains + solution.discount * board_values[t.next_board[moves]])
    key = moves.astype(np.float64) if keys is None else keys[moves]  # ("last": the row order)
    top = np.maximum.reduceat(np.where(short <= sure, key, -1.0), segments)
    chosen = key[segments + rows[states]]
    behind = np.flatnonzero(chosen < top)
    if behind.size:
        k = int(behind[0])
        s = int(states[k])
        row = slice(int(segments[k]), int(segments[k] + sizes[k]))
        tied = int(np.argmax(np.where(short[row] <= sure, key[row], -1.0)))
        word = "a later" if solution.ties == "last" else "another"
        _fail(path, solution, _moves_text(solution, s, int(rows[s]), tied, word))


def _moves_text(solution: Solution, s: int, chosen: int, tied: int, which: str, kind: str = "tied move") -> str:
    """State ``s``'s move ``chosen`` against the ``tied`` one the rule takes, in words."""
    t = solution.transitions
    b, p = divmod(s, solution.rules.n_pieces)
    where = f"state {s:,} (board index {b:,}, piece {solution.rules.piece_names[p]!r})"

    def move(k: int) -> str:
        return f"placement {int(t.placement[t.offsets[s] + k])}" if t.placement_stored else f"move {k} of its row"

    return f"{where} takes {move(chosen)} where {which} {kind}, {move(tied)}, is the rule's"


def _pieces(
    path: str | os.PathLike, solution: Solution, choice: np.ndarray, sign: float, sure: float, keys: np.ndarray | None
) -> None:
    """An optimising opponent's piece on each board (``choice``): its key at least every surely tied piece's."""
    t = solution.transitions
    cost = sign * solution.values
    if t.bags is not None:  # (only the pieces left in the bag can come)
        cost = np.where(t.draw_chances() > 0, cost, np.inf)
    with np.errstate(all="ignore"):
        tied = cost <= cost.min(axis=1, keepdims=True) + sure
    if not sure > 0.0:  # (no slack: only pieces the player cannot place tie for sure, each worth 0 exactly)
        dead = (np.diff(t.offsets) == 0).reshape(cost.shape) & (cost < np.inf)
        tied = dead & dead[np.arange(t.n_boards), choice][:, None]
    if keys is None:
        order = np.arange(cost.shape[1], dtype=np.float64)
        keys = np.broadcast_to(-order if solution.ties == "first" else order, cost.shape)
    top = np.where(tied, keys, -np.inf).max(axis=1)
    chosen = keys[np.arange(t.n_boards), choice]
    behind = np.flatnonzero(chosen < top)
    if behind.size:
        b = int(behind[0])
        names = solution.rules.piece_names
        rule = int(np.argmax(np.where(tied[b], keys[b], -np.inf)))
        _fail(
            path,
            solution,
            f"on board index {b:,} the {solution.opponent} opponent gives piece {names[choice[b]]!r} where the "
            f"rule takes the tied piece {names[rule]!r}",
        )


def _opening(
    path: str | os.PathLike, solution: Solution, sign: float, slacks: Slacks, rng: np.random.Generator | None
) -> None:
    """An optimising opponent's saved opening row: the rule's among the surely tied
    start rows (for "random", checked where which rows tie is beyond doubt)."""
    rows, _ = solution.transitions.start_nodes()
    if len(rows) < 2:
        return
    sure = slacks.sure
    values = sign * solution.board_values[rows]
    tied = np.flatnonzero(values <= values.min() + sure)
    chosen = int(np.flatnonzero(rows == solution.opening_row)[0])
    if rng is not None:
        edge = 2 * slacks.tie_slack - sure  # (the slack plus the margin)
        if len(tied) != np.count_nonzero(values <= values.min() + edge):
            return
        rule = int(rng.choice(tied))
        wrong = chosen != rule
    else:  # (a row beyond the surely tied ones may have tied in the solve's rounding)
        rule = int(tied[0] if solution.ties == "first" else tied[-1])
        wrong = chosen > rule if solution.ties == "first" else chosen < rule
    if wrong:
        _fail(
            path,
            solution,
            f"the {solution.opponent} opponent opens with start row {solution.opening_row} where the rule takes "
            f"the tied start row {int(rows[rule])}",
        )
