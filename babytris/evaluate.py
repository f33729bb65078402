"""Playouts and exact finite-horizon evaluation: the points a player scores in
n placements, against randomly drawn pieces or an opponent choosing them.

>>> import babytris
>>> solution = babytris.solve(width=4, height=4)
>>> babytris.play(solution, n_placements=1000, n_games=100, seed=1)
<PlayResult 100 games of up to 1,000 placements: mean 1,106.36 ± 0.7428 points, 1.10636 per placement, 0 over early>
>>> babytris.expected_points(solution, n_placements=1000)     # exact: the mean above converges to it
1106.935335127819

Who plays is given the same way to both:

- ``player``: ``"optimal"`` (the game's own solution policy), ``"random"``
  (uniform over the legal placements), another :class:`Solution` (its policy),
  or an int array ``(n_boards, n_pieces)`` of placement numbers (-1 exactly
  where the piece fits nowhere), like :attr:`Solution.policy`.
- ``opponent``: ``"random"`` (pieces drawn with the rules' probabilities),
  ``"solution"`` (the game's solution picks them: :attr:`Solution.opponent_policy`),
  another :class:`Solution` solved against an opponent (its piece choices),
  or an int array ``(n_boards,)`` of piece indices.

Games start on the rules' start board (the empty board by default) and count points, undiscounted, for at most
``n_placements`` placements; a game ends early when the piece fits nowhere (or tops out, ``Rules(top_out=True)``).
Only points count here, never a :class:`~babytris.Reward` (its ``loss`` included), except in
:func:`evaluate` with ``discount`` and ``reward``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _play
from .bags import bag_chances
from .match import Match
from .resources import resolve_n_jobs
from .reward import Reward
from .roles import (
    BEST_RESPONSE,
    Opponent,
    Player,
    Sides,
    opponent_pieces,
    policy_rows,
    transitions_of,
)
from .rules import Rules
from .solution import Solution
from .solve import solve_transitions
from .transitions import HOLD_MOVE, Transitions
from .validation import check_int

__all__ = [
    "evaluate",
    "play",
    "expected_points",
    "horizon_values",
    "policy_rows",
    "game_seeds",
    "PlayResult",
    "HorizonValues",
    "Player",
    "Opponent",
    "MAX_PLACEMENTS",
    "MAX_GAMES",
]


#: Largest ``n_placements`` (placements per game, or the horizon).
MAX_PLACEMENTS = 10**9
#: Largest ``n_games`` of one :func:`play` call.
MAX_GAMES = 10**7

# The early exit of horizon_values (exact=False): stop once the L-step
# increment changes by at most EXTRAPOLATION_TOL * max(1, max |U|) at
# PATIENCE checkpoints in a row; L is a multiple of BASE_LAG (see _lag).
EXTRAPOLATION_TOL = 1e-13
PATIENCE = 3
BASE_LAG = 12

_STOPPED = ("horizon", "fixed point", "extrapolated")


@dataclass(frozen=True, repr=False, eq=False)
class PlayResult:
    """Result of :func:`play`.

    Attributes:
        points: float64 array ``(n_games,)``, each game's points.
        placements: int64 array ``(n_games,)``, each game's placements made:
            ``n_placements``, or fewer if the game ended (a piece fitting nowhere).
        n_placements: the placements a game was allowed.
        seed: the run's seed; game i used ``game_seeds(seed, n_games)[i]``.
    """

    points: np.ndarray
    placements: np.ndarray
    n_placements: int
    seed: int

    @property
    def n_games(self) -> int:
        """The number of games played."""
        return len(self.points)

    @property
    def mean(self) -> float:
        """The mean points per game."""
        return float(self.points.mean())

    @property
    def stderr(self) -> float:
        """The standard error of :attr:`mean` (sample standard deviation / sqrt(n_games));
        NaN for a single game."""
        if self.n_games < 2:
            return math.nan
        return float(self.points.std(ddof=1) / math.sqrt(self.n_games))

    @property
    def points_per_placement(self) -> float:
        """All points over all placements made (0.0 if no placement was made)."""
        total = int(self.placements.sum())
        return float(self.points.sum()) / total if total else 0.0

    @property
    def games_over(self) -> int:
        """The number of games that ended before ``n_placements`` placements."""
        return int(np.count_nonzero(self.placements < self.n_placements))

    def __repr__(self) -> str:
        spread = "" if self.n_games < 2 else f" ± {self.stderr:,.4g}"
        return (
            f"<PlayResult {self.n_games:,} game{'s' if self.n_games != 1 else ''} of up to {self.n_placements:,} "
            f"placements: mean {self.mean:,.6g}{spread} points, {self.points_per_placement:.6g} per placement, "
            f"{self.games_over:,} over early>"
        )


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
        if self.start_weights is None:
            return float(self.values[self.starts].min())
        return float(self.values[self.starts] @ self.start_weights)

    def __repr__(self) -> str:
        return (
            f"<HorizonValues n_placements={self.n_placements:,}: start_value={self.start_value:.10g}, "
            f"{self.n_computed:,} boards, {self.steps:,} steps ({self.stopped}"
            f"{f', bound {self.bound:.1e}' if self.stopped == 'extrapolated' else ''})>"
        )


def play(
    game: Match | Solution | Transitions,
    player: Player | None = None,
    opponent: Opponent | None = None,
    *,
    n_placements: int = 10_000,
    seed: int = 0,
    n_games: int = 1,
    n_jobs: int | None = None,
) -> PlayResult:
    """Play ``n_games`` independent games from the start board.

    Before each placement the opponent gives a piece, then the player places
    it; points are ``rules.line_scores[rows cleared]``.  A game stops after
    ``n_placements`` placements, or when the piece fits nowhere.

    Args:
        game: a :class:`~babytris.Match` (then give no player or opponent:
            it carries them), a :class:`Solution` (its move table, policy and
            piece choices back ``"optimal"`` and ``"solution"``) or a
            :class:`Transitions`.
        player, opponent: see the module docstring (default ``"optimal"``
            and ``"random"``).
        n_placements: placements per game, in [1, 10**9].
        seed: an integer in [0, 2**64).  Game i draws from its own generator
            seeded with ``game_seeds(seed, n_games)[i]``, so results depend on
            ``seed`` and the game's number only, never on ``n_jobs``.
        n_games: in [1, 10**7].
        n_jobs: threads sharing the games (default: every core).

    Returns:
        :class:`PlayResult`: points (float64) and placements (int64) per game.

    Games are array lookups in the move table, run in C threads: an optimal
    player on 4x5 makes 60 to 130 million placements a second per core.
    """
    n_placements = check_int("n_placements", n_placements, 1, MAX_PLACEMENTS, high_text="10**9")
    seed = check_int("seed", seed, 0, 2**64 - 1, high_text="2**64 - 1")
    n_games = check_int("n_games", n_games, 1, MAX_GAMES, high_text="10**7")
    n_jobs = resolve_n_jobs(n_jobs)
    match = Match.of(game, player, opponent)
    if _named(match.opponent, BEST_RESPONSE):
        raise ValueError(
            "opponent='best_response' (the worst case over the placements left) is computed exactly by "
            "expected_points and horizon_values, not played; play against a Solution solved with "
            "opponent='minimax' (its piece choices), or 'random'"
        )
    sides = match.sides()
    t, rules = sides.transitions, sides.transitions.rules
    points = np.empty(n_games, dtype=np.float64)
    placements = np.empty(n_games, dtype=np.int64)
    _play.play_games(
        t.offsets,
        t.next_board,
        t.lines,
        np.asarray(rules.line_scores, dtype=np.float64),
        bag_chances(rules).ravel(),  # (one row of the rules' probabilities without a bag)
        sides.starts.astype(np.int32),
        sides.start_weights,
        n_placements,
        _play.game_seeds(seed, n_games),
        sides.pieces,
        sides.rows,
        points,
        placements,
        n_jobs,
        chance=None if t.bags is None else t.bags.astype(np.int32),
        holds=_holds(t),
    )
    return PlayResult(points, placements, n_placements, seed)


def game_seeds(seed: int, n_games: int) -> np.ndarray:
    """uint64 array ``(n_games,)``: the seed of each game of a :func:`play` run
    (the first ``n_games`` outputs of splitmix64 started from ``seed``).  A
    game's generator is xoshiro256** seeded from its seed by splitmix64."""
    seed = check_int("seed", seed, 0, 2**64 - 1, high_text="2**64 - 1")
    n_games = check_int("n_games", n_games, 1, MAX_GAMES, high_text="10**7")
    return _play.game_seeds(seed, n_games)


def expected_points(
    game: Match | Solution | Transitions,
    player: Player | None = None,
    opponent: Opponent | None = None,
    *,
    n_placements: int = 10_000,
    exact: bool = False,
    n_jobs: int | None = None,
) -> float:
    """The exact expected points of ``n_placements`` placements from the start
    board (``rules.start``, the empty board by default): what the mean of
    :func:`play` converges to.

    See :func:`horizon_values`, of which this is ``.start_value``.
    """
    return horizon_values(game, player, opponent, n_placements=n_placements, exact=exact, n_jobs=n_jobs).start_value


def evaluate(
    game: Match | Solution | Transitions,
    player: Player | None = None,
    opponent: Opponent | None = None,
    *,
    n_placements: int | None = None,
    discount: float | None = None,
    tol: float = 1e-10,
    reward: Reward | None = None,
) -> float:
    """The exact value of a player against an opponent, from the start board:
    the expected points of the next ``n_placements`` placements (undiscounted,
    :func:`expected_points`), or with ``discount`` the expected discounted
    points of the whole game (policy evaluation, to ``tol``), or with
    ``reward`` too its expected discounted :class:`~babytris.Reward` (say,
    points less ``loss`` when the game ends).

    ``player`` and ``opponent`` are given as to :func:`play`.  With
    ``discount``, ``opponent="minimax"`` is the equilibrium opponent of
    ``solve(opponent="minimax")`` at that discount (the game's own Solution
    where it is that solve, else solved here), and ``"best_response"`` the
    opponent that gives, on each row, the piece worst for this player.  Give
    exactly one of ``n_placements`` and ``discount``.  The values count points
    unless a ``reward`` is given: a Solution's own reward (weights, a loss)
    is not assumed.  The game starts as :attr:`Solution.start_value` says:
    an opponent that chooses pieces chooses the opening too.
    """
    if n_placements is not None and discount is None:
        if reward is not None:
            raise ValueError(
                "reward: with n_placements the value is the expected points; give discount to value a Reward"
            )
        return expected_points(game, player, opponent, n_placements=n_placements)
    if discount is None or n_placements is not None:
        raise ValueError("evaluate: give exactly one of n_placements (points of n placements) and discount")
    if isinstance(game, Match):  # its sides as a solve reads them: "optimal" is the optimum
        if reward is not None or player is not None or opponent is not None:
            raise ValueError("game: a Match carries its player, opponent and reward; give them in the Match, not again")
        given = game.opponent
        if _named(given, "minimax"):
            given = _minimax_opponent(game.transitions, discount, tol)
        match = Match(game.rules, game.player, given, game.reward, game.transitions)
    else:
        if _named(opponent, "minimax"):
            opponent = _minimax_opponent(game, discount, tol)
        match = Match.of(game, player, opponent, reward)
    if isinstance(match.opponent, str) and match.opponent not in ("random", BEST_RESPONSE):
        raise ValueError(
            "opponent must be 'random', 'minimax', 'best_response', 'solution', a Solution or an int array, "
            f"got {match.opponent!r}"
        )
    bound_opponent = match.opponent
    if isinstance(bound_opponent, Solution) and opponent_pieces(match.transitions, bound_opponent) is None:
        bound_opponent = "random"
    return solve_transitions(
        match.transitions, discount=discount, tol=tol, player=match.player, opponent=bound_opponent, reward=match.reward
    ).start_value


def _minimax_opponent(game: object, discount: float, tol: float) -> Solution:
    """The equilibrium opponent of ``solve(opponent="minimax")`` on ``game``'s
    table at ``discount``: the game itself where it is that solve."""
    if (
        isinstance(game, Solution)
        and game.opponent == "minimax"
        and game.player == "optimal"
        and game.reward is None
        and game.discount == discount
    ):
        return game
    return solve_transitions(transitions_of(game), discount=discount, tol=tol, opponent="minimax")


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
    if _named(match.opponent, BEST_RESPONSE):
        return _worst_case(match, n_placements, all_boards, n_jobs)
    sides = match.sides()
    t = sides.transitions
    n = t.n_boards
    keep = None
    if all_boards:
        board, col, weight, gain = _chain(t, sides.rows, sides.pieces)
    else:  # the rows a game meets, found by one walk; the chain of those alone
        keep = _reachable(sides, sides.pieces)
        board, col, weight, gain = _chain(t, sides.rows, sides.pieces, np.flatnonzero(keep))
        board, col, weight, gain = _restrict(keep, board, col, weight, gain)
        n = int(np.count_nonzero(keep))
    out = np.empty(n)
    lag = 0 if exact else _lag(t.rules)
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
    if keep is None:
        values = out
    else:
        values = np.full(t.n_boards, np.nan)
        values[keep] = out
    return HorizonValues(
        values, n_placements, int(steps), _STOPPED[status], float(bound), n, sides.starts, sides.start_weights
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
    can_come = (t.draw_chances() > 0).astype(np.uint8).ravel()
    return _play.reachable_rows(t.offsets, t.next_board, t.rules.n_pieces, sides.starts, can_come, pieces, sides.rows)


def _holds(t: Transitions) -> np.ndarray | None:
    """uint8 per move, 1 for the moves that put the piece on hold (None without hold)."""
    return (t.placement == HOLD_MOVE).astype(np.uint8) if t.rules.hold else None


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


def _named(role: object, name: str) -> bool:
    """Whether a player or opponent is the model called ``name`` (not an array or a Solution)."""
    return isinstance(role, str) and role == name


def _restrict(keep: np.ndarray, board, col, weight, gain):
    """The entries of the kept boards, renumbered among them."""
    number = np.cumsum(keep, dtype=np.int64) - 1
    inside = keep[board]
    return number[board[inside]], number[col[inside]].astype(np.int32), weight[inside], gain[inside]


def _lag(rules: Rules) -> int:
    """The checkpoint lag: a multiple of BASE_LAG and of each piece's
    ``width / gcd(width, size)``.  A placement adds the piece's cells and a
    cleared row removes ``width``, so a board can recur only after a number
    of placements that is a multiple of that (for pieces of one size)."""
    lag = BASE_LAG
    for piece in rules.pieces:
        lag = math.lcm(lag, rules.width // math.gcd(rules.width, piece.size))
    return lag
