"""long_run_rate(): the optimal average points per placement in an endless game,
against randomly drawn pieces or an opponent choosing them, with certified bounds.

>>> import babytris
>>> rate = babytris.long_run_rate(width=4, height=4)
>>> print(f"{rate.gain:.8f} in [{rate.lower:.8f}, {rate.upper:.8f}]", rate.survives)
1.13030849 in [1.13030849, 1.13030849] True

What is computed.  The gain from the empty board,

    g = sup over player strategies of  lim inf_n  E[points of the first n placements] / n

(undiscounted; a lost game scores nothing from then on, so line scores
must be >= 0 for surviving to be worth it), against pieces
drawn with the rules' probabilities (``opponent="random"``), or the inf over
the opponent's strategies of that (``"minimax"``: the opponent picks each
piece after seeing the board; the player's strategy must score it whatever
the opponent does).  Points are ``line_scores[rows cleared]``, so the rate
is in points, not rows: :func:`ceiling` gives the most any game could
score (1.5 for the defaults: 3 cells a placement fill 3/4 of a 4-wide row,
and 3 rows cleared at once pay 6, 2 a row, the most per row).

The method, step by step.

1. **Survival kernel.**  S is the largest set of boards from which, for
   every piece (all have a positive probability), some placement leads back
   into S: the greatest fixed point, found by dropping, pass after pass, the
   boards where some piece has no move into what is left.  Off S the
   opponent can end the game: on a board dropped at pass k it gives the
   piece that has no move into the boards left before that pass, so the
   player surely makes at most k more placements (its *rank*;
   ``guaranteed_placements`` is the empty board's).  Against random pieces
   that sequence of pieces has a chance of at least ``min(prob) ** (k + 1)``,
   so wherever the player goes off S, it loses or enters S almost surely:
   no board off S is visited infinitely often.  So a game that never ends
   eventually stays in S for good, making only moves that stay in S.

2. **The gain on S** by relative value iteration with the aperiodicity
   transform, ``U <- U + tau (T U - U)`` (``TAU`` = 0.7; the game is
   periodic: on a 4-wide board with trominoes a board's cell count repeats
   every 4 placements), where ``T U(b) = combine_p max_a [points(a) +
   U(b')]`` over the moves a of piece p that stay in S, combine being the
   probability-weighted mean or the minimum, and U kept 0 on the empty
   board (or, off S, on the first board of S entered from it).  Every iteration gives bounds from ``delta = T U - U``
   (Odoni's, over the boards play can reach rather than all of S):

   - ``lower``: the least ``delta`` over the boards reachable from the
     empty board when the player plays the moves greedy for U and any piece
     comes.  Along such a game ``points + U(b') >= U(b) + delta(b)`` in
     expectation over the piece (random) or for every piece (minimax); summing
     over n placements, ``points >= U(start) - U(b_n) + n * lower``, so that
     policy (the one returned) scores at least ``lower`` per placement.
   - ``upper``: the greatest ``delta`` over S; against the opponent, if
     less, over the boards reachable when it gives the piece of least
     ``max_a [points + U(b')]`` and the player moves anyhow within S (that
     search, as long as a sweep, runs every 8th iteration and at the last).
     Any stationary policy's recurrent classes (optimal ones exist: a finite
     MDP, and positional strategies in the turn-based game) lie in S and use
     moves staying in S (step 1), where ``points + U(b') <= U(b) + delta(b)``;
     averaged over a class, its gain is at most ``upper``.  Leaving S lets
     the opponent win, scoring nothing from then on (line scores are >= 0).

   Iteration stops once ``upper - lower <= tol``.  No assumption that the
   gain is the same on every board of S is needed for the bounds to hold;
   they meet when the boards that optimal play can reach share the empty
   board's gain (as in each of some 500 rule sets tried while writing this,
   up to 5x5 with up to 4 pieces), and otherwise the result says
   ``converged=False`` with the valid bounds.
3. **When the empty board is off S.**  Against the opponent the gain is 0:
   it ends the game (the value iteration still runs, from the boards of S
   that play can enter from the empty board, for the policy on S, and
   ``iterations`` counts it).  Against random pieces the player may still
   reach S by luck.  The largest chance x of reaching S, ``x(b) = sum_p
   prob(p) max_a x(b')`` off S (1 on S, 0 where a piece fits nowhere), is
   bracketed by iterating from 0 (``x_lo``: the chance within k placements)
   and from 1 (``x_hi``: that of not having lost, or reached S, within k); they
   meet, since no board off S is visited forever.  Then ``x_lo * lower <= g
   <= x_hi * upper`` (with ``lower`` and ``upper`` taken as at least 0): g
   sums the gains of the classes in S that play reaches, weighted by their
   chances, and the player can reach S with chance ``x_lo``, then play the
   greedy moves; ``lower`` is here taken over the boards reachable, so
   played, from the boards of S that play can enter from the empty board.
   ``survival`` is x (1 when the empty board is in S, 0 when S is empty).

Bounds are exact in real arithmetic; in floating point they hold up to the
rounding of a sweep, about ``1e-16 * max |U|`` (U stays within some tens or
hundreds of points on the default games).

The policy: on S, the greedy move of the last sweep (among moves staying
in S, the first of equals).  Off S, against random pieces, the move to the
board with the greatest chance of reaching S; against the opponent, the
move to the board of greatest rank (the most placements it surely allows).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.enumeration import enumerate_boards
from ..engine.placements import most_moves
from ..engine.resources import DEFAULT_MAX_MEMORY, resolve_n_jobs
from ..engine.transitions import Transitions
from ..game.rules import Rules, make_rules
from ..game.validation import ArgumentTypeError, check_int, check_number
from . import _rate

__all__ = ["long_run_rate", "ceiling", "rate_bytes_per_board", "Rate", "OPPONENTS", "TAU", "MIN_BOARDS_PER_THREAD"]

#: Who picks the next piece: drawn with the rules' probabilities, or an
#: opponent picking the piece worst for the player.
OPPONENTS = ("random", "minimax")

#: The aperiodicity transform's weight: ``U <- (1 - TAU) U + TAU T U``.  Any
#: value in (0, 1) makes the iteration aperiodic; 1/2 damps a period-4 cycle
#: best, larger values let slowly mixing play converge faster.  Over the default
#: rules on 4x4, 4x5, 3x5 and 5x4, both opponents, 0.7 needs 888 sweeps in
#: all, 0.5 1,097, 0.6 956, 0.8 1,026, 0.9 1,663.
TAU = 0.7

#: Below this many boards per thread, a pass runs on one thread: the passes are
#: short (a millisecond over the 182,101 boards of 4x5), and on a machine whose
#: cores are busy a thread waiting for its core costs more than it saves.
MIN_BOARDS_PER_THREAD = 1_000_000


def rate_bytes_per_board(rules: Rules) -> int:
    """Upper bound of the bytes :func:`long_run_rate` allocates per board on
    top of the move table, as if every board were in the kernel with every
    placement legal: per board its rank and pass flag, the chances of
    reaching the kernel (2 float64 and 2 of scratch), its number in the
    kernel, the relative values, residuals, search marks and queue, the
    kernel flag, the bias and the piece; per state the compact row start,
    the moves (compact and full), the placement numbers and temporaries; per
    move the compact copy (next board int32, rows uint8, offset int16)."""
    n_moves = most_moves(rules)
    per_board = (4 + 1) + 4 * 8 + 4 + (8 + 8 + 8 + 4) + 1 + 8 + 2
    per_state = 8 + (2 + 2) + 2 + (8 + 1)
    return per_board + rules.n_pieces * per_state + n_moves * (4 + 1 + 2)


@dataclass(frozen=True, repr=False, eq=False)
class Rate:
    """Result of :func:`long_run_rate`.

    Attributes:
        rules: the rule set; ``opponent``: ``"random"`` or ``"minimax"``.
        gain: the optimal average points per placement from the empty board,
            ``(lower + upper) / 2``: within ``tol / 2`` of the exact rate when
            ``converged``.
        lower, upper: certified bounds of the exact rate (see the module
            docstring); ``lower`` is also what :attr:`policy` surely scores
            per placement in the long run when :attr:`survives`.
        iterations: relative value iteration sweeps (0 if none were needed).
        converged: whether ``upper - lower <= tol``.
        survives: whether the empty board is in the survival kernel: the
            player can then keep playing forever whatever pieces come.
        survival: the largest chance of never losing, from the empty board
            (to within ``tol``): 1.0 when it survives; against random pieces,
            when the empty board is off the kernel, the chance of reaching
            it; 0.0 against the opponent then.
        guaranteed_placements: the placements the player can make for sure
            from the empty board whatever the pieces (its rank), or None when
            it survives.
        kernel: bool array ``(n_boards,)``, the survival kernel S.
        policy: int16 array ``(n_boards, n_pieces)``: the placement number
            played in each state, -1 exactly where the piece fits nowhere
            (like :attr:`Solution.policy`; ``babytris.play`` takes it).
        opponent_policy: int16 array ``(n_boards,)``, the piece the opponent
            gives on each board (``"minimax"``; None for random pieces): on S
            the least valuable under the final values, off S the one ending
            the game soonest.
        bias: float64 array ``(n_boards,)``: the relative values U of the
            last sweep on S (0 on the empty board, or on an entry board of S
            when the empty board is off it), NaN off S.
        transitions: the game graph.
        tol, max_iter: as passed; seconds: wall time of the computation
            (without enumerating the boards).
    """

    rules: Rules
    opponent: str
    gain: float
    lower: float
    upper: float
    iterations: int
    converged: bool
    survives: bool
    survival: float
    guaranteed_placements: int | None
    kernel: np.ndarray
    policy: np.ndarray
    opponent_policy: np.ndarray | None
    bias: np.ndarray
    transitions: Transitions
    tol: float
    max_iter: int
    seconds: float

    @property
    def piece_choices(self) -> np.ndarray | None:
        """int16 array ``(n_boards,)`` or None: the same as :attr:`opponent_policy` (deprecated:
        one name, as on :class:`~babytris.Solution`)."""
        warnings.warn("Rate.piece_choices is deprecated; use Rate.opponent_policy", DeprecationWarning, stacklevel=2)
        return self.opponent_policy

    @property
    def n_boards(self) -> int:
        """The number of reachable boards."""
        return self.transitions.n_boards

    @property
    def n_kernel(self) -> int:
        """The number of boards in the survival kernel."""
        return int(np.count_nonzero(self.kernel))

    @property
    def ceiling(self) -> float:
        """The most any play could score per placement: :func:`ceiling`."""
        return ceiling(self.rules, opponent=self.opponent)

    def __repr__(self) -> str:
        r = self.rules
        status = "converged" if self.converged else f"NOT converged (tol {self.tol:.0e})"
        alive = "survives" if self.survives else f"does not survive (survival {self.survival:.6g})"
        return (
            f"<Rate {r.width}x{r.height} pieces={','.join(r.piece_names)} opponent={self.opponent}: "
            f"gain={self.gain:.10g} in [{self.lower:.10g}, {self.upper:.10g}] points per placement, "
            f"{status} after {self.iterations} iterations; {alive}; kernel {self.n_kernel:,} of "
            f"{self.n_boards:,} boards, {self.seconds:.3f}s>"
        )


def ceiling(rules: Rules, *, opponent: str = "random") -> float:
    """The most points per placement any play can average in the long run.

    With ``s = rules.line_scores`` and ``c = max_k (s[k] - s[0]) / k`` over
    k >= 1, one placement clearing L rows scores ``s[L] <= s[0] + c * L``.
    The board holds a bounded number of cells, so an endless game clears on
    average (cells a piece adds) / width rows per placement: against random
    pieces ``K = sum_p prob(p) * size(p)`` cells, against the opponent at
    most the largest piece's (the smallest if ``c < 0``).  A game that ends
    averages 0.  Returns ``max(0, s[0] + c * K / width)``: 1.5 for the
    default rules (trominoes on 4-wide boards, 3 rows at once paying 6).
    With ``rules.no_holes`` a placement may add up to ``height`` cells in
    each of its columns, so a piece counts ``size * height`` cells (a looser bound).
    """
    _check_opponent(opponent)
    s = rules.line_scores
    c = max((s[k] - s[0]) / k for k in range(1, len(s)))
    sizes = [piece.size * (rules.height if rules.no_holes else 1) for piece in rules.pieces]
    if opponent == "random":
        cells = math.fsum(q * size for q, size in zip(rules.probabilities, sizes))
    else:
        cells = max(sizes) if c >= 0 else min(sizes)
    return max(0.0, s[0] + c * cells / rules.width)


def long_run_rate(
    game: Rules | Transitions | None = None,
    /,
    *,
    opponent: str = "random",
    tol: float = 1e-9,
    max_iter: int = 100_000,
    n_jobs: int | None = None,
    max_memory: int = DEFAULT_MAX_MEMORY,
    **rule_fields: Any,
) -> Rate:
    """The optimal average points per placement from the empty board, undiscounted,
    with certified bounds (see the module docstring for the method).

    Args:
        game: a :class:`Rules`, a :class:`Transitions` (skips the search), or
            the rules' fields as keywords instead, e.g.
            ``long_run_rate(width=4, height=5)``.  Line scores must be >= 0.
        opponent: ``"random"`` (pieces drawn with the rules' probabilities)
            or ``"minimax"`` (an opponent picks the piece worst for the player).
        tol: stop once ``upper - lower <= tol`` (a finite number > 0).
        max_iter: at most this many value iteration sweeps, in [1, 10**7]
            (and as many passes for the chance of reaching the kernel).
        n_jobs: threads (default: every core) for the search and the passes
            over the whole table; the result does not depend on it.
        max_memory: as for :func:`~babytris.solve`, when ``game`` is rules
            (:class:`~babytris.MemoryLimitError` beyond it; the rate's own
            arrays are counted, see :func:`rate_bytes_per_board`).

    Returns:
        :class:`Rate`: ``gain``, ``lower``, ``upper``, the policy
        ``(n_boards, n_pieces)``, the survival kernel ``(n_boards,)``, ...
    """
    _check_opponent(opponent)
    tol = check_number("tol", tol, 0.0, open_low=True)
    max_iter = check_int("max_iter", max_iter, 1, 10**7, high_text="10**7")
    threads = resolve_n_jobs(n_jobs)
    if isinstance(game, Transitions):
        if rule_fields:
            raise ArgumentTypeError(
                f"pass either a Transitions or rule fields, not both (got {', '.join(rule_fields)})"
            )
        _check_scores(game.rules)
        t = game
    else:
        if game is not None and not isinstance(game, Rules):
            raise ArgumentTypeError(f"game must be a babytris.Rules or Transitions, got {type(game).__name__}")
        rules = make_rules(game, rule_fields)
        _check_scores(rules)
        t = enumerate_boards(
            rules, max_memory=max_memory, n_jobs=n_jobs, solver_bytes_per_board=rate_bytes_per_board(rules)
        )
    return _rate_of(t, opponent, float(tol), max_iter, threads)


def _rate_of(t: Transitions, opponent: str, tol: float, max_iter: int, n_jobs: int) -> Rate:
    started = time.perf_counter()
    rules = t.rules
    n, P = t.n_boards, rules.n_pieces
    start = t.start_index
    scores = np.asarray(rules.line_scores, dtype=np.float64)
    probabilities = np.asarray(rules.probabilities, dtype=np.float64)
    threads = _threads(n, n_jobs)

    rank = np.empty(n, dtype=np.int32)
    _rate.survival_kernel(t.offsets, t.next_board, P, rank, threads)
    kernel = rank < 0
    survives = bool(kernel[start])
    rows = np.full(t.n_states, -1, dtype=np.int16)
    pieces = np.zeros(n, dtype=np.int16)
    bias = np.full(n, np.nan)
    iterations, lower, upper, survival = 0, 0.0, 0.0, float(survives)
    chance = None

    if kernel.any():
        boards = np.flatnonzero(kernel).astype(np.int32)
        index = np.full(n, -1, dtype=np.int32)
        index[boards] = np.arange(len(boards), dtype=np.int32)
        c_offsets, c_next, c_lines, c_row = _rate.restrict(t.offsets, t.next_board, t.lines, P, boards, index)
        if survives:
            seeds = np.array([index[start]], dtype=np.int32)
        else:  # the boards of S that play can enter from the empty board (against the
            # opponent only for the policy on S: the rate is 0)
            entered = _rate.reachable(t.offsets, t.next_board, P, (~kernel).view(np.uint8), start).view(bool)
            seeds = index[entered & kernel]
            seeds = seeds[np.argsort(t.boards[boards[seeds]])]  # the smallest board first, as the reference
        m = len(boards)
        U = np.zeros(m)
        delta = np.empty(m)
        c_rows = np.empty(m * P, dtype=np.int16)
        c_pieces = np.empty(m, dtype=np.int16)
        iterations, lower, upper = _rate.relative_value_iteration(
            c_offsets,
            c_next,
            c_lines,
            scores,
            probabilities,
            opponent == "minimax",
            TAU,
            tol if survives else tol / 2,
            max_iter,
            seeds,
            -1 if opponent == "random" else int(seeds[0]),
            int(seeds[0]),
            U,
            delta,
            c_rows,
            c_pieces,
            _threads(m, n_jobs),
        )
        bias[boards] = U
        states = (boards.astype(np.int64)[:, None] * P + np.arange(P)).ravel()
        rows[states] = c_row[c_offsets[:-1] + c_rows]
        pieces[boards] = c_pieces
        if opponent == "random":
            outside = np.flatnonzero(~kernel).astype(np.int32)
            x_lo = kernel.astype(np.float64)
            x_hi = np.ones(n)
            _rate.reach(
                t.offsets,
                t.next_board,
                probabilities,
                outside,
                x_lo,
                x_hi,
                tol / (2 * max(1.0, upper)),
                max_iter,
                _threads(len(outside), n_jobs),
            )
            chance = x_lo
            if not survives:
                lower = float(x_lo[start]) * max(0.0, lower)
                upper = float(x_hi[start]) * max(0.0, upper)
                survival = float((x_lo[start] + x_hi[start]) / 2)
        elif not survives:
            lower = upper = 0.0
    _rate.fill_policy(t.offsets, t.next_board, P, rank, chance, rows, pieces)

    return Rate(
        rules=rules,
        opponent=opponent,
        gain=(lower + upper) / 2,
        lower=float(lower),
        upper=float(upper),
        iterations=int(iterations),
        converged=bool(upper - lower <= tol),
        survives=survives,
        survival=survival,
        guaranteed_placements=None if survives else int(rank[start]),
        kernel=kernel,
        policy=t.chosen_placements(rows).reshape(t.n_boards, t.rules.n_pieces),
        opponent_policy=pieces if opponent == "minimax" else None,
        bias=bias,
        transitions=t,
        tol=tol,
        max_iter=max_iter,
        seconds=time.perf_counter() - started,
    )


def _threads(n_boards: int, n_jobs: int) -> int:
    return max(1, min(n_jobs, n_boards // MIN_BOARDS_PER_THREAD))


def _check_opponent(opponent: object) -> None:
    if opponent not in OPPONENTS:
        raise ValueError(f"opponent must be one of {', '.join(map(repr, OPPONENTS))}, got {opponent!r}")


def _check_scores(rules: Rules) -> None:
    if rules.node_tables:
        raise ValueError(
            "long_run_rate: games with previews, hold or a bag (rules.preview > 0, rules.hold, "
            "rules.randomizer='bag') are not supported yet"
        )
    if min(rules.line_scores) < 0:
        raise ValueError(
            f"line_scores must all be >= 0 for the long-run rate (losing, which scores 0, "
            f"must never pay), got {rules.line_scores}"
        )
