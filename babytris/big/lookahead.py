"""Look-ahead play over a fitted linear value: the placement that is best when
the previewed pieces are placed best too, and whole games of it, on a big
board (:class:`babytris.big.tetris.Tetris`), in Python over the compiled engine.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..game.validation import check_int, check_number
from .fitted import LinearValue
from .tetris import Tetris

__all__ = ["LookaheadGames", "lookahead_placement", "play_lookahead"]


@dataclass(frozen=True)
class LookaheadGames:
    """Result of :func:`play_lookahead`.

    Attributes:
        placements: int64 ``(n_games,)``, each game's lifespan in placements.
        lines: int64 ``(n_games,)``, rows cleared per game.
        lost: bool ``(n_games,)``, whether the game was lost (else stopped at ``max_placements``).
        above_half: int64 ``(n_games,)``, placements after which a column stood above half the board's height.
        seconds: wall time.
    """

    placements: np.ndarray
    lines: np.ndarray
    lost: np.ndarray
    above_half: np.ndarray
    seconds: float


def lookahead_placement(
    tetris: Any,
    rows: np.ndarray,
    pieces: Sequence[int],
    value: LinearValue,
    *,
    discount: float = 0.9,
    loss: float,
    ties: str = "first",
    rng: np.random.Generator | None = None,
) -> int:
    """The placement of ``pieces[0]`` on ``rows`` that is best when the next
    pieces ``pieces[1:]`` (previewed) are placed best too:
    ``max r1 + discount r2 + ... + discount**(k-1) rk + discount**k V(after)``
    over every sequence of placements (a piece that fits nowhere ends the
    line at ``-loss``: pass the loss the value was fitted with, or a value
    that is negative on high boards makes losing look good).  ``discount``
    is in [0, 1] (1: the rewards and the value summed as they are).  Among
    placements of equal score (to 1e-9 relative, as :func:`babytris.big.playouts.play_greedy`'s
    ``ties``), ``ties="first"`` takes the first in placement order,
    ``"random"`` one at random from ``rng`` (each with the same chance; None:
    a fresh generator).  Returns its placement number, -1 if ``pieces[0]``
    fits nowhere."""
    _check_lookahead(tetris, value, discount, loss)
    _check_ties(ties)
    if len(pieces) < 1:
        raise ValueError("pieces must name at least the piece to place")
    scores = np.asarray(tetris.line_scores, dtype=np.float64)
    first = tetris.afterstates(rows, pieces[0])
    if len(first) == 0:
        return -1
    boards, root = first.rows, np.arange(len(first))
    gathered = scores[first.lines.astype(np.int64)]
    best = np.full(len(first), -np.inf)
    for depth, piece in enumerate(pieces[1:], start=1):
        after = tetris.afterstates_batch(boards, piece)
        counts = np.diff(after.offsets)
        dead = counts == 0
        np.maximum.at(best, root[dead], gathered[dead] - discount**depth * loss)
        root, gathered = np.repeat(root, counts), np.repeat(gathered, counts)
        gathered = gathered + discount**depth * scores[after.lines.astype(np.int64)]
        boards = after.rows
    if len(boards):
        leaves = tetris.feature_matrix(boards, value.features) @ value.weights  # compiled features
        np.maximum.at(best, root, gathered + discount ** len(pieces) * leaves)
    if ties == "first":
        return int(first.placement[int(np.argmax(best))])
    top = float(np.max(best))
    slack = 1e-9 * (1.0 + abs(top)) if np.isfinite(top) else 0.0
    equal = np.flatnonzero(best >= top - slack)
    chosen = equal[0] if len(equal) == 1 else (rng or np.random.default_rng()).choice(equal)
    return int(first.placement[int(chosen)])


def play_lookahead(
    tetris: Any,
    value: LinearValue,
    *,
    loss: float,
    preview: int = 2,
    n_games: int = 10,
    max_placements: int = 10_000,
    discount: float = 0.9,
    seed: int = 0,
    ties: str = "first",
) -> LookaheadGames:
    """Games of the greedy policy of ``value`` looking ahead over ``preview``
    previewed pieces (:func:`lookahead_placement`; ``preview=0`` is the
    one-step greedy policy), pieces drawn at random, equal placements broken
    by ``ties`` (``"first"`` or ``"random"``, drawn from the games' generator);
    in Python over the compiled engine, so slow (about 2 ms a placement with
    two previews on 10x20, 0.2 ms with one).

    Returns:
        :class:`LookaheadGames`.
    """
    check_int("preview", preview, 0, 4)
    check_int("n_games", n_games, 1, 10**6)
    check_int("max_placements", max_placements, 1, 10**9)
    _check_lookahead(tetris, value, discount, loss)
    _check_ties(ties)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    n = len(tetris.probabilities)
    placements = np.zeros(n_games, dtype=np.int64)
    lines = np.zeros(n_games, dtype=np.int64)
    lost = np.zeros(n_games, dtype=bool)
    above_half = np.zeros(n_games, dtype=np.int64)
    for game in range(n_games):
        rows = tetris.empty()
        queue = [int(q) for q in rng.choice(n, size=1 + preview, p=tetris.probabilities)]
        while placements[game] < max_placements:
            k = lookahead_placement(tetris, rows, queue, value, discount=discount, loss=loss, ties=ties, rng=rng)
            if k < 0:
                lost[game] = True
                break
            after = tetris.afterstates(rows, queue[0])
            (i,) = np.flatnonzero(after.placement == k)
            rows, lines[game] = after.rows[i], lines[game] + int(after.lines[i])
            placements[game] += 1
            filled = np.flatnonzero(rows)  # (row 0 at the bottom: the stack's height is the top filled row + 1)
            above_half[game] += bool(len(filled)) and 2 * (int(filled[-1]) + 1) > tetris.height
            queue = queue[1:] + [int(rng.choice(n, p=tetris.probabilities))]
    return LookaheadGames(placements, lines, lost, above_half, time.perf_counter() - started)


def _check_lookahead(tetris: Any, value: Any, discount: float, loss: float) -> None:
    if not isinstance(tetris, Tetris):
        raise ValueError(f"tetris must be a babytris.big.tetris.Tetris, got {type(tetris).__name__}")
    if not isinstance(value, LinearValue):
        raise ValueError(f"value must be a LinearValue (FittedValueIteration.value), got {type(value).__name__}")
    if value.width != tetris.width:
        raise ValueError(f"value: fitted for width {value.width}, the board is {tetris.width} wide")
    check_number("discount", discount, 0.0, 1.0)
    check_number("loss", loss, 0.0, 1e12)


def _check_ties(ties: object) -> None:
    if ties not in ("first", "random"):
        raise ValueError(f"ties must be 'first' or 'random', got {ties!r}")
