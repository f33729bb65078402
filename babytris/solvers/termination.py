"""Whether every game ends, for the total reward until game over (``discount=1``).

The expected total reward of a game is finite for every play when no play
of either side can go on forever.  Such play exists exactly when some set S
of rows (boards, or nodes with previews, hold or a bag) is closed under it:
from each row of S, every piece that can be drawn (or, where an opponent
chooses, some piece it may give) has a move of the player into S: some move
where the player chooses (the optimal player), every move of its row where
it places at random (each is taken with some chance: one leading out ends
the game sooner or later), its own move where its moves are given.  The
largest such set is the greatest fixed point of that condition
(:func:`survivable_rows`); when it is empty, every play of both sides ends
with probability one, and the Bellman operator at discount 1 has one fixed
point, which the sweeps reach.

Their error is then bounded by the game's length: with N an upper bound on
the expected number of placements until game over under any play of both
sides (the player's own, where its moves are random or given; ``1 + max P N
<= N`` row by row, checked here), an in-place sweep G satisfies
``G(V + cN) <= G(V) + c(N - 1)``, so values ``V'`` whose last sweep
changed nothing by more than r are within ``r * N`` of the truth
(:func:`longest_games`; :attr:`babytris.Solution.error_bound` uses its
largest entry).  Imports the engine's table and the compiled sweeps.
"""

from __future__ import annotations

import numpy as np

from ..engine.transitions import Transitions, independent_layers, sweep_order
from . import _sweep
from .roles import MOVES_BEST, MOVES_FIXED, MOVES_MEAN
from .sweep_arrays import sweep_chances

__all__ = ["survivable_rows", "check_games_end", "longest_games", "GamesDoNotEnd"]

#: Sweeps of the longest-game iteration before it gives up (games this long are not worth a total).
MAX_LENGTH_SWEEPS = 100_000


class GamesDoNotEnd(ValueError):
    """``discount=1`` where some play goes on forever (with drawn pieces the total is unbounded; with an
    opponent's, the game's length, which bounds the sweeps' error)."""


def survivable_rows(
    transitions: Transitions,
    *,
    drawn: bool,
    chances: np.ndarray | None = None,
    moves: int = MOVES_BEST,
    fixed_move: np.ndarray | None = None,
) -> np.ndarray:
    """The rows from which some play of the player (and of the opponent,
    where it chooses the pieces) keeps the game going forever: bool array
    ``(n_boards,)``.  With pieces ``drawn``, every piece of positive chance must
    have a move into the set; where an opponent gives them (minimax, min-avg,
    gaps or a given policy: any of its pieces of positive chance), one.
    ``chances`` ``(n_boards, n_pieces)``: the pieces' chances on each row, if
    not the rules' draws (a fixed opponent's choices, as an export writes them).
    ``moves``: the player's (``MOVES_BEST``: it chooses, so some move into the
    set will do; ``MOVES_MEAN``: at random, so every move of the row must
    lead into it; ``MOVES_FIXED``: its move ``fixed_move[state]``, an offset
    in the state's row, must)."""
    t = transitions
    n, n_pieces = t.n_boards, t.rules.n_pieces
    dealt = np.asarray(t.draw_chances() if chances is None else chances) > 0  # (n_boards, n_pieces)
    offsets = t.offsets
    counts = np.diff(offsets)
    if moves == MOVES_FIXED:
        if fixed_move is None:
            raise ValueError("survivable_rows: moves=MOVES_FIXED needs fixed_move")
        chosen = np.flatnonzero(counts > 0)
        chosen_next = t.next_board[offsets[chosen] + fixed_move[chosen]]
    alive = np.ones(n, dtype=bool)
    while True:
        if moves == MOVES_FIXED:
            can_stay = np.zeros(t.n_states, dtype=bool)
            can_stay[chosen] = alive[chosen_next]
        else:
            kept = np.zeros(t.n_moves + 1, dtype=np.int64)  # moves into the set so far, in move order (a running count)
            np.cumsum(alive[t.next_board], out=kept[1:])
            inside = kept[offsets[1:]] - kept[offsets[:-1]]
            can_stay = inside > 0 if moves == MOVES_BEST else (inside == counts) & (counts > 0)
        per_piece = can_stay.reshape(n, n_pieces)
        board_stays = (per_piece | ~dealt).all(axis=1) if drawn else (per_piece & dealt).any(axis=1)
        still = alive & board_stays
        if np.array_equal(still, alive):
            return alive
        alive = still


def check_games_end(
    transitions: Transitions,
    *,
    drawn: bool,
    chances: np.ndarray | None = None,
    moves: int = MOVES_BEST,
    fixed_move: np.ndarray | None = None,
) -> None:
    """Refuse ``discount=1`` where some play never ends (pieces ``drawn``,
    or given by an opponent; ``chances``, ``moves`` and ``fixed_move`` as
    :func:`survivable_rows`): raises :class:`GamesDoNotEnd` (a
    ``ValueError``) with how many rows prove it and one of them."""
    alive = survivable_rows(transitions, drawn=drawn, chances=chances, moves=moves, fixed_move=fixed_move)
    if not alive.any():
        return
    rows = np.flatnonzero(alive)
    rules = transitions.rules
    player = {MOVES_BEST: "the player", MOVES_MEAN: "the random player", MOVES_FIXED: "the player's given moves"}
    who = player[moves] if drawn else f"{player[moves]} and the opponent together"
    pieces = "whatever pieces are drawn" if drawn else "the pieces the opponent may give"
    example = int(transitions.boards[rows[0]])
    # Drawn pieces: the player alone keeps the game going, so the total is unbounded.  An opponent's
    # pieces: it may still force the end; what fails is the sweeps' error bound, the longest game.
    why = (
        "so the total is unbounded"
        if drawn
        else "so no game length bounds the sweeps' error, which babytris needs at discount 1 (the total itself "
        "may be finite, where the opponent can force the end)"
    )
    raise GamesDoNotEnd(
        f"discount=1 (the total reward until game over) needs every game to end, but from {len(rows):,} of the "
        f"{transitions.n_boards:,} rows of this {rules.width}x{rules.height} game (e.g. board {example:#x}) "
        f"{who} can keep it going forever with {pieces}, {why}; use a discount below 1"
    )


def longest_games(
    transitions: Transitions,
    *,
    drawn: bool,
    n_threads: int = 1,
    moves: int = MOVES_BEST,
    fixed_move: np.ndarray | None = None,
) -> np.ndarray:
    """An upper bound on the expected number of placements until game over
    from each row, under any play of both sides (the player's ``moves`` and
    ``fixed_move`` as :func:`survivable_rows`): float64 array
    ``(n_boards,)``, proven (``1 + max P N <= N`` checked on every row, the
    max over the player's moves where it chooses, else the mean of its moves
    or its given move, and, where an opponent chooses, its pieces).
    Call it only where :func:`check_games_end` passes: otherwise some
    lengths are infinite.  Raises :class:`GamesDoNotEnd` if no bound is
    found within :data:`MAX_LENGTH_SWEEPS` sweeps."""
    t, rules = transitions, transitions.rules
    n, n_pieces = t.n_boards, rules.n_pieces
    probs, chance = sweep_chances(t)
    values, lengths = np.zeros(n * n_pieces), np.zeros(n)
    order, layer_starts = sweep_order(t)
    sweeper = _sweep.Sweeper(
        t.offsets,
        t.next_board,
        t.lines,
        np.ones(len(rules.line_scores)),  # (one per placement, whatever it clears)
        probs,
        1.0,
        values,
        lengths,
        np.full(n * n_pieces, -1, dtype=np.int16),
        order,
        layer_starts,
        pieces=_sweep.PIECES_RANDOM if drawn else _sweep.PIECES_BEST,
        moves=moves,
        fixed_move=fixed_move,
        chance=chance,
        independent_layers=independent_layers(t),
        n_threads=n_threads,
    )
    # From 0 the sweeps rise towards the longest expected games; scaled up a
    # little, a vector that has nearly stopped rising is above them, which
    # one backup proves (the sweeps' own numbers are never taken on trust).
    for sweep in range(MAX_LENGTH_SWEEPS):
        residual = sweeper.greedy_sweep()
        for _ in range(8 if moves != MOVES_MEAN else 0):  # (the evaluation sweeps read one chosen move a state)
            sweeper.evaluation_sweep()
        if sweep % 4 == 3 or residual < 1e-6 * max(1.0, float(lengths.max(initial=0.0))):
            bound = 1.01 * lengths + 0.01
            if _proves(transitions, drawn, bound, moves, fixed_move):
                return bound
    raise GamesDoNotEnd(f"discount=1: no bound on the games' length after {MAX_LENGTH_SWEEPS:,} sweeps")


def _proves(
    transitions: Transitions, drawn: bool, bound: np.ndarray, moves: int, fixed_move: np.ndarray | None
) -> bool:
    """Whether ``1 + max P bound <= bound`` on every row: each state's
    longest move (one placement, then the bound where it leads; 0 where no
    move fits; the mean of its moves for a random player, the given one for
    given moves), combined over the pieces by their chances, or the longest of
    those an opponent may give."""
    t = transitions
    n, n_pieces = t.n_boards, t.rules.n_pieces
    offsets = t.offsets
    counts = np.diff(offsets)
    longest = np.zeros(n * n_pieces)
    has_moves = counts > 0
    if t.n_moves:
        after = 1.0 + bound[t.next_board]
        if moves == MOVES_BEST:
            longest[has_moves] = np.maximum.reduceat(after, offsets[:-1][has_moves])
        elif moves == MOVES_MEAN:
            longest[has_moves] = np.add.reduceat(after, offsets[:-1][has_moves]) / counts[has_moves]
        elif fixed_move is not None:  # (MOVES_FIXED: the Sweeper refused it without its moves)
            longest[has_moves] = after[offsets[:-1][has_moves] + fixed_move[has_moves]]
    per_piece = longest.reshape(n, n_pieces)
    chances = np.asarray(t.draw_chances())
    backed = (per_piece * chances).sum(axis=1) if drawn else np.where(chances > 0, per_piece, 0.0).max(axis=1)
    return bool(np.all(backed <= bound))
