"""Exact finite-horizon evaluation: the expected points of the next n
placements from every board, by backward induction over the rows a game
meets, against drawn pieces, an opponent's choices or the finite-horizon
adversary (``opponent="best_response"``).

>>> import babytris
>>> solution = babytris.solve(width=4, height=4)
>>> round(babytris.horizon_values(solution, n_placements=1000).start_value, 6)
1106.935335

The sides are given as to :func:`babytris.play` (see :mod:`babytris.evaluate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..engine.lazy import as_held, lazy_field
from ..engine.resources import resolve_n_jobs
from ..engine.transitions import HOLD_MOVE, Transitions
from ..game.rules import Rules
from ..game.validation import check_int
from ..results.solution import Solution
from ..solvers.match import Match
from ..solvers.roles import BEST_RESPONSE, Opponent, Player, Sides, is_named
from . import _play

__all__ = ["HorizonValues", "horizon_values", "MAX_PLACEMENTS"]

#: Largest ``n_placements`` (placements per game, or the horizon).
MAX_PLACEMENTS = 10**9

# The early exit of horizon_values (exact=False): stop once the L-step
# increment changes by at most EXTRAPOLATION_TOL * max(1, max |U|) at
# PATIENCE checkpoints in a row; L is a multiple of BASE_LAG (see _lag).
EXTRAPOLATION_TOL = 1e-13
PATIENCE = 3
BASE_LAG = 12

_STOPPED = ("horizon", "fixed point", "extrapolated")


@dataclass(frozen=True, repr=False, eq=False)
class HorizonValues:
    """Result of :func:`horizon_values`.

    Attributes:
        values: float64 array ``(n_boards,)``: ``values[b]``, the expected
            points of the next ``n_placements`` placements from board b (before
            its piece is drawn or chosen).  NaN on the boards not computed:
            those the game cannot reach from the start board under these
            player and opponent, unless ``all_boards=True``.
        n_placements: the horizon.
        steps: backups computed (``n_placements`` unless stopped early).
        stopped: ``"horizon"`` (all backups ran), ``"fixed point"`` (a backup
            changed no value, so every later one repeats it: exact), or
            ``"extrapolated"`` (``exact=False``: the rest was extrapolated).
        bound: 0.0, or when extrapolated the most the extrapolation can be
            off in exact arithmetic (a worst case, far above the actual error).
        n_computed: boards computed.
        starts: int64 array, the rows a game starts on (the start board; with
            previews, with each opening queue).
        start_weights: float64 array of their weights (the opening drawn, or
            the one row an opponent solution opens with), or None where the
            opponent is the best response and opens with the worst of them.
    """

    values: np.ndarray
    n_placements: int
    steps: int
    stopped: str
    bound: float
    n_computed: int
    starts: np.ndarray
    start_weights: np.ndarray | None

    @property
    def start_value(self) -> float:
        """The expected points of the next ``n_placements`` placements from the start board."""
        held = as_held(self, "values")
        at_starts = held.at(self.starts) if isinstance(held, _Computed) else held[self.starts]
        if self.start_weights is None:
            return float(at_starts.min())
        return float(at_starts @ self.start_weights)

    def __repr__(self) -> str:
        return (
            f"<HorizonValues n_placements={self.n_placements:,}: start_value={self.start_value:.10g}, "
            f"{self.n_computed:,} boards, {self.steps:,} steps ({self.stopped}"
            f"{f', bound {self.bound:.1e}' if self.stopped == 'extrapolated' else ''})>"
        )


@dataclass(frozen=True)
class _Computed:
    """The values of the rows computed (int64 ``rows`` ascending, float64
    ``values``), to spread over all ``n_rows`` when asked."""

    rows: np.ndarray
    values: np.ndarray
    n_rows: int

    def at(self, rows: np.ndarray) -> np.ndarray:
        """float64 array ``(len(rows),)``: the values at ``rows``, NaN where not computed."""
        i = np.minimum(np.searchsorted(self.rows, rows), len(self.rows) - 1)
        return np.where(self.rows[i] == rows, self.values[i], np.nan)


def _spread(result: HorizonValues, computed: _Computed) -> np.ndarray:
    """float64 array ``(n_boards,)``: the expected points from each board, NaN
    where not computed (see the class's attributes)."""
    values = np.full(computed.n_rows, np.nan)
    values[computed.rows] = computed.values
    return values


# Most callers read the start value alone: the values of every board are spread out when first read.
lazy_field(HorizonValues, "values", lambda held: isinstance(held, _Computed), _spread)


def horizon_values(
    game: Match | Solution | Transitions,
    player: Player | None = None,
    opponent: Opponent | None = None,
    *,
    n_placements: int = 10_000,
    exact: bool = False,
    all_boards: bool = False,
    n_jobs: int | None = None,
) -> HorizonValues:
    """Expected points of the next ``n_placements`` placements, for every board,
    by backward induction (finite horizon, undiscounted).

    ``U_0 = 0``; ``U_k(b) = sum_p w_p(b) Q_k(b, p)``, where ``w_p(b)`` is
    the rules' probability of piece p, or 1 for the piece the opponent gives
    on b and 0 for the others (with ``opponent="best_response"``, the worst case:
    ``U_k(b) = min_p Q_k(b, p)``, an opponent who knows the player's policy
    and how many placements are left giving the piece that leaves it the
    fewest points; not linear, so never extrapolated); ``Q_k(b, p) = points(m) + U_{k-1}(b')`` for the
    player's move m (or the mean over the legal moves for the random
    player), and 0 where p fits nowhere.  Each backup reads the previous
    one's values only (Jacobi), one pass over the boards.

    Only the boards reachable from the start board under these player and
    opponent are computed (for an optimal player on 4x5, 296 of 182,101),
    unless ``all_boards``: then every board, at a pass over the whole move
    table per step.

    Args:
        game, player, opponent: as for :func:`play`.
        n_placements: the horizon n, in [1, 10**9].
        exact: run all n backups.  By default (False) the rest is
            extrapolated once the increments settle.  Checkpoints are the
            steps k with ``n - k`` divisible by a lag L, a multiple of 12 and
            of the period the cell count forces on the game (``width /
            gcd(width, piece size)`` for each piece: a 4-wide board with
            trominoes can repeat a board only after a multiple of 4
            placements, so its increments never settle step by step).  When
            ``change = max |U_k - 2 U_{k-L} + U_{k-2L}|`` is at most
            ``1e-13 * max(1, max |U_k|)`` at 3 checkpoints in a row,
            ``U_n = U_k + (n - k) / L * (U_k - U_{k-L})``.  The change never
            grows from one checkpoint to the next (the backup is a
            non-expansion), so in exact arithmetic the error is at most
            ``change * q * (q + 1) / 2`` with ``q = (n - k) / L`` (reported
            as ``bound``, a worst case); in practice it is at rounding level.
            Increments that never settle (say, a cycle of boards whose length
            does not divide L) mean all n backups run.  Both modes stop,
            exactly, once a backup changes no value.
        all_boards: compute every board, not only the reachable ones.
        n_jobs: threads sharing each backup's boards (default None, as
            everywhere: one thread for the reachable boards, whose backups
            are short and would leave every thread waiting for the slowest;
            the free cores with ``all_boards``).  The result does not depend on it.

    Returns:
        :class:`HorizonValues`; ``.start_value`` is the empty board's.
    """
    n_placements = check_int("n_placements", n_placements, 1, MAX_PLACEMENTS, high_text="10**9")
    if not isinstance(exact, bool):
        raise ValueError(f"exact must be True or False, got {exact!r}")
    if not isinstance(all_boards, bool):
        raise ValueError(f"all_boards must be True or False, got {all_boards!r}")
    # The default: one thread for the boards a game reaches (a backup is short and every thread waits
    # for the slowest), the free cores for every board's.
    n_jobs = resolve_n_jobs(n_jobs) if n_jobs is not None or all_boards else 1
    match = Match.of(game, player, opponent)
    if is_named(match.opponent, BEST_RESPONSE):
        return _worst_case(match, n_placements, all_boards, n_jobs)
    sides = match.sides()
    t = sides.transitions
    n = t.n_boards
    kept = None
    if all_boards:
        board, col, weight, gain = _chain(t, sides.rows, sides.pieces)
    else:  # the rows a game meets, found by one walk; the chain of those alone, renumbered among them
        kept = np.flatnonzero(_reachable(sides, sides.pieces))
        board, col, weight, gain = _chain(t, sides.rows, sides.pieces, kept)
        board, col = np.searchsorted(kept, board), np.searchsorted(kept, col).astype(np.int32)
        n = len(kept)
    out = np.empty(n)
    lag = 0 if exact else math.lcm(_lag(t.rules), _cycle(board, col, weight, n, _starts_among(kept, sides.starts)))
    steps, status, change = _play.horizon_values(
        _row_starts(board, n),
        col,
        weight,
        np.bincount(board, gain, minlength=n).astype(np.float64, copy=False),
        n_placements,
        out,
        lag,
        EXTRAPOLATION_TOL,
        PATIENCE,
        n_jobs,
    )
    bound = 0.0
    if _STOPPED[status] == "extrapolated":
        q = (n_placements - steps) // lag
        bound = change * q * (q + 1) / 2
    values = out if kept is None else _Computed(kept, out, t.n_boards)  # (spread over every board when first read)
    return HorizonValues(
        values,  # type: ignore[arg-type]
        n_placements,
        int(steps),
        _STOPPED[status],
        float(bound),
        n,
        sides.starts,
        sides.start_weights,
    )


def _worst_case(match: Match, n_placements: int, all_boards: bool, n_jobs: int):
    """:func:`horizon_values` against the finite-horizon adversary: rows per
    (board, piece), each board the least of its pieces' rows, all n backups
    (or to a fixed point).  With hold, see :func:`_adversary_rows`."""
    sides = Match(match.rules, match.player, "random", table=match.transitions).sides()
    t = sides.transitions
    entry_row, col, weight, gain, row_board = _adversary_rows(t, *_state_chain(t, sides.rows))
    n = t.n_boards
    keep = None
    if not all_boards:  # every board some piece sequence reaches under this player
        keep = _reachable(sides, None)
        kept_rows = keep[row_board]
        inside = kept_rows[entry_row]
        renumber = np.cumsum(kept_rows, dtype=np.int64) - 1
        number = np.cumsum(keep, dtype=np.int64) - 1
        entry_row, col = renumber[entry_row[inside]], number[col[inside]]
        weight, gain, row_board = weight[inside], gain[inside], number[row_board[kept_rows]]
        n = int(np.count_nonzero(keep))
    n_rows = len(row_board)
    groups = _row_starts(row_board, n)  # (rows sorted by board: each board's group its rows)
    out = np.empty(n)
    steps, status, _ = _play.horizon_values(
        _row_starts(entry_row, n_rows),
        col.astype(np.int32),
        weight,
        np.bincount(entry_row, gain, minlength=n_rows).astype(np.float64, copy=False),
        n_placements,
        out,
        0,
        0.0,
        PATIENCE,
        n_jobs,
        groups=groups,
    )
    values = out if keep is None else np.full(t.n_boards, np.nan)
    if keep is not None:
        values[keep] = out
    return HorizonValues(values, n_placements, int(steps), _STOPPED[status], 0.0, n, sides.starts, None)


def _adversary_rows(t: Transitions, state, col, weight, gain, hold):
    """The finite-horizon adversary's choices as rows: one per (board, piece
    that can come there), its entries the player's moves in that state.  A
    hold is a step within a placement after which the adversary chooses
    again, with as many placements left: a state whose moves include the
    hold to the locked row L becomes a row per piece q that can come at L,
    the hold's entry replaced by L's state (L, q)'s entries scaled by its
    weight (the hold's own points kept at weight 0).  The least over a
    board's rows is then the least over the adversary's two choices:
    ``mean(a, min_q r_q) = min_q mean(a, r_q)`` as the other moves do not
    depend on q, and a locked row holds no more, so one level is all.

    Returns:
        ``(entry row, col, weight, gain, row board)``: the entries (int64
        rows ascending, int64 next boards, float64 weights and gains) and
        each row's board (int64, ascending).
    """
    P = t.rules.n_pieces
    starts = _row_starts(state, t.n_states)
    coming = np.flatnonzero((t.draw_chances() > 0).ravel())  # the states whose piece can come, by board
    held_to = np.full(t.n_states, -1, dtype=np.int64)  # the locked row a state's hold leads to
    held_weight = np.zeros(t.n_states)
    if hold is not None:
        held_to[state[hold]], held_weight[state[hold]] = col[hold], weight[hold]
    target = held_to[coming]
    can_come = t.draw_chances() > 0
    n_q = np.where(target >= 0, can_come[np.maximum(target, 0)].sum(axis=1), 1)
    row_state = np.repeat(coming, n_q)
    first = np.cumsum(n_q) - n_q
    nth = np.arange(len(row_state)) - np.repeat(first, n_q)
    row_q = np.full(len(row_state), -1, dtype=np.int64)
    holding = held_to[row_state] >= 0
    # the q-th piece that can come at the locked row, in piece order
    q_order = np.argsort(~can_come, axis=1, kind="stable")
    row_q[holding] = q_order[held_to[row_state[holding]], nth[holding]]
    own_row, own = _gather(starts, row_state)
    own_weight = np.where(hold[own], 0.0, weight[own]) if hold is not None else weight[own]
    later = np.flatnonzero(holding)
    extra_row, extra = _gather(starts, held_to[row_state[later]] * P + row_q[later])
    scale = held_weight[row_state[later]][extra_row]
    entry_row = np.concatenate((own_row, later[extra_row]))
    order = np.argsort(entry_row, kind="stable")
    return (
        entry_row[order],
        np.concatenate((col[own], col[extra]))[order].astype(np.int64),
        np.concatenate((own_weight, scale * weight[extra]))[order],
        np.concatenate((gain[own], scale * gain[extra]))[order],
        row_state // P,
    )


def _gather(starts: np.ndarray, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries of each of ``states`` (CSR ``starts``): ``(i, entry)``
    int64 arrays, entry an index into the entries of ``states[i]``."""
    counts = starts[states + 1] - starts[states]
    i = np.repeat(np.arange(len(states), dtype=np.int64), counts)
    return i, np.repeat(starts[states] - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))


def _state_chain(t: Transitions, rows: np.ndarray | None):
    """The player's moves as ``(state, col, weight, gain, hold)`` arrays sorted
    by state: weight 1 for its move (or ``1 / count`` each, placing at
    random), gain = weight * points, hold (bool; None without hold) where
    the move puts the piece on hold."""
    counts = np.diff(t.offsets)
    if rows is not None:
        state = np.flatnonzero(rows >= 0)
        move = t.offsets[state] + rows[state]
        weight = np.ones(len(state))
    else:
        state = np.repeat(np.arange(t.n_states, dtype=np.int64), counts)
        move = np.arange(t.n_moves, dtype=np.int64)
        weight = 1.0 / counts[state]
    scores = np.asarray(t.rules.line_scores, dtype=np.float64)
    hold = None if not t.rules.hold else t.placement[move] == HOLD_MOVE
    return state, t.next_board[move].astype(np.int64), weight, weight * scores[t.lines[move]], hold


# --------------------------------------------------------------------------
# The chain over boards: U_k = reward + M U_{k-1}
# --------------------------------------------------------------------------


def _chain(t: Transitions, rows: np.ndarray | None, pieces: np.ndarray | None, kept: np.ndarray | None = None):
    """M's entries as ``(board, col, weight, gain)`` arrays sorted by board:
    from board b to board col with chance weight, gain = weight * points
    (int64, int32, float64, float64).  Summed over a board, gain is its
    reward: the expected points of its next placement.  ``kept``: the rows
    to give entries (int64, ascending; default every row)."""
    P = t.rules.n_pieces
    kept = np.arange(t.n_boards, dtype=np.int64) if kept is None else kept
    states = (kept[:, None] * P + np.arange(P)).ravel()
    if pieces is None:  # drawn: the rules' probabilities, or with a bag each row's bag's shares
        w_state = np.ascontiguousarray(t.draw_chances(kept)).ravel()
    else:
        w_state = (pieces[kept][:, None] == np.arange(P)).astype(np.float64).ravel()
    counts = (t.offsets[states + 1] - t.offsets[states]).astype(np.int64)
    if rows is not None:
        chosen = (rows[states] >= 0) & (w_state > 0)
        state = states[chosen]
        move = t.offsets[state] + rows[state]
        weight = w_state[chosen]
    else:
        live = w_state > 0
        state_of = np.repeat(np.arange(len(states)), np.where(live, counts, 0))
        firsts = np.cumsum(np.where(live, counts, 0)) - np.where(live, counts, 0)
        state = states[state_of]
        move = t.offsets[state].astype(np.int64) + (np.arange(len(state_of)) - firsts[state_of])
        weight = w_state[state_of] / counts[state_of]
    scores = np.asarray(t.rules.line_scores, dtype=np.float64)
    hold = None if not t.rules.hold else t.placement[move] == HOLD_MOVE
    return _fold_holds(t, state // P, t.next_board[move], weight, weight * scores[t.lines[move]], hold)


def _reachable(sides: Sides, pieces: np.ndarray | None) -> np.ndarray:
    """bool ``(n_boards,)``: the rows a game reaches from ``sides.starts`` under
    its player's moves, with ``pieces`` given on each row (None: every piece
    that can come there)."""
    t = sides.transitions
    return _play.reachable_rows(t.offsets, t.next_board, t.rules.n_pieces, sides.starts, t.can_come, pieces, sides.rows)


def _fold_holds(t: Transitions, board, col, weight, gain, hold):
    """The chain with each hold entry (row b to the locked row c, weight w: a
    step that places nothing) replaced by c's own entries scaled by w, so that
    every entry is one placement.  A locked row holds no more, so one level
    of replacement is all.  The hold's own points (``line_scores[0]``, as
    the sweeps and the playouts count them) stay on b as an entry of weight
    0.  The entries stay sorted by row."""
    if hold is None or not hold.any():
        return board, col, weight, gain
    starts = _row_starts(board, t.n_boards)
    held = np.flatnonzero(hold)
    target = col[held].astype(np.int64)
    counts = starts[target + 1] - starts[target]
    source = np.repeat(held, counts)
    taken = np.repeat(starts[target] - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
    scale = weight[source]
    board = np.concatenate((board[~hold], board[held], board[source]))
    col = np.concatenate((col[~hold], col[held], col[taken]))
    weight = np.concatenate((weight[~hold], np.zeros(len(held)), scale * weight[taken]))
    gain = np.concatenate((gain[~hold], gain[held], scale * gain[taken]))
    order = np.argsort(board, kind="stable")
    return board[order], col[order], weight[order], gain[order]


def _row_starts(board: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(board, minlength=n), out=out[1:])
    return out


def _starts_among(kept: np.ndarray | None, starts: np.ndarray) -> np.ndarray:
    """The start rows numbered among the kept rows (as they are, all rows kept)."""
    return starts if kept is None else np.searchsorted(kept, starts)


def _cycle(board: np.ndarray, col: np.ndarray, weight: np.ndarray, n: int, starts: np.ndarray) -> int:
    """Where both sides are fixed, each row leads to one row (or ends the
    game): the length of the cycle every start's walk runs into (the least
    common multiple over the starts), which the checkpoint lag must be a
    multiple of for the increments to settle (a cycle of 8 rows never repeats
    every 12 placements); 1 where the chain branches or a walk ends."""
    if len(board) and (np.any(np.diff(board) == 0) or np.any(weight != 1.0)):
        return 1  # (pieces drawn, or a player placing at random: the chain branches)
    successor = np.full(n, -1, dtype=np.int64)
    successor[board] = col
    lag = 1
    for start in np.unique(starts):
        seen: dict[int, int] = {}
        row, step = int(start), 0
        while row >= 0 and row not in seen:
            seen[row] = step
            row, step = int(successor[row]), step + 1
        if row >= 0:
            lag = math.lcm(lag, step - seen[row])
    return lag


def _lag(rules: Rules) -> int:
    """The checkpoint lag: a multiple of BASE_LAG and of each piece's
    ``width / gcd(width, size)``.  A placement adds the piece's cells and a
    cleared row removes ``width``, so a board can recur only after a number
    of placements that is a multiple of that (for pieces of one size)."""
    lag = BASE_LAG
    for piece in rules.pieces:
        lag = math.lcm(lag, rules.width // math.gcd(rules.width, piece.size))
    return lag
