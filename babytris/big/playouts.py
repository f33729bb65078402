"""Games on big boards in the compiled engine: greedy play by a linear value
of features (:func:`play_greedy`), the greedy choices on given boards
(:func:`greedy_placements`), and boards sampled from play (:func:`sample_boards`).
The board and its rules are :class:`babytris.big.tetris.Tetris`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..analysis.evaluate import game_seeds
from ..engine.resources import DEFAULT_MAX_MEMORY, MemoryLimitError, check_max_memory, format_bytes
from ..game.rules import RulesError
from ..game.validation import check_int, check_number, is_number
from .tetris import Tetris, feature_codes, n_threads

__all__ = [
    "BoardSample",
    "GreedyChoices",
    "Playouts",
    "greedy_placements",
    "play_greedy",
    "sample_boards",
    "sample_bytes",
]

#: The most games one call plays, and the most boards one sample holds.
MAX_GAMES = 10**7
MAX_BOARDS = 10**9
NO_LIMIT = 2**62


class GreedyChoices(NamedTuple):
    """Result of :func:`greedy_placements`: per board, the chosen placement
    number (-1 where the piece fits nowhere) and its value (0.0 there)."""

    placement: np.ndarray
    value: np.ndarray


@dataclass(frozen=True, repr=False, eq=False)
class Playouts:
    """Result of :func:`play_greedy`.

    Attributes:
        placements: int64 ``(n_games,)``: placements made in each game (its
            lifespan): ``max_placements``, or fewer if the game was lost.
        lines: int64 ``(n_games,)``: rows cleared in each game.
        points: float64 ``(n_games,)``: the game's ``line_scores`` summed.
        max_placements: the placements a game was allowed (None: no limit).
        seed: the run's seed; game i used ``babytris.analysis.evaluate.game_seeds(seed, n_games)[i]``.
    """

    placements: np.ndarray
    lines: np.ndarray
    points: np.ndarray
    max_placements: int | None
    seed: int

    @property
    def n_games(self) -> int:
        return len(self.placements)

    @property
    def mean_lines(self) -> float:
        return float(self.lines.mean())

    @property
    def stderr_lines(self) -> float:
        """Standard error of :attr:`mean_lines`; NaN for a single game."""
        if self.n_games < 2:
            return math.nan
        return float(self.lines.std(ddof=1) / math.sqrt(self.n_games))

    @property
    def mean_placements(self) -> float:
        return float(self.placements.mean())

    @property
    def total_placements(self) -> int:
        return int(self.placements.sum())

    @property
    def games_over(self) -> int:
        """Games lost before ``max_placements``."""
        limit = NO_LIMIT if self.max_placements is None else self.max_placements
        return int(np.count_nonzero(self.placements < limit))

    def __repr__(self) -> str:
        spread = "" if self.n_games < 2 else f" ± {self.stderr_lines:,.4g}"
        limit = "" if self.max_placements is None else f" of up to {self.max_placements:,} placements"
        return (
            f"<Playouts {self.n_games:,} game{'s' if self.n_games != 1 else ''}{limit}: mean "
            f"{self.mean_lines:,.6g}{spread} lines, {self.mean_placements:,.6g} placements, "
            f"{self.games_over:,} lost>"
        )


@dataclass(frozen=True, repr=False, eq=False)
class BoardSample:
    """Result of :func:`sample_boards`: boards met in play, in game order.

    Attributes:
        rows: uint16 ``(n, height)``: each board, before its piece was placed.
        pieces: int16 ``(n,)``: the piece drawn on it.
        game: int64 ``(n,)``: the game it came from (games numbered from 0).
        step: int64 ``(n,)``: placements made in that game before it.
        seed: the run's seed.
    """

    rows: np.ndarray
    pieces: np.ndarray
    game: np.ndarray
    step: np.ndarray
    seed: int

    def __len__(self) -> int:
        return len(self.pieces)

    def __repr__(self) -> str:
        games = int(self.game[-1]) + 1 if len(self) else 0
        return f"<BoardSample {len(self):,} boards from {games:,} games>"


# --- policies and games ----------------------------------------------------------------------


def greedy_placements(
    tetris: Tetris,
    rows: np.ndarray,
    pieces: object,
    weights: Sequence[float],
    features: Sequence[str],
    *,
    line_rewards: None | str | float | Sequence[float] = None,
    discount: float = 1.0,
    n_jobs: int | None = 1,
) -> GreedyChoices:
    """The one-step greedy policy on many boards: for board ``rows[i]`` and
    piece ``pieces[i]`` (or one piece for all), the placement with the
    largest ``line_rewards[rows cleared] + discount * w . phi(afterstate)``
    (the first in placement order among equals) and that value: with
    ``line_rewards="scores"`` and a discount, the Bellman backup
    ``max_a [r(a) + discount * V(after)]`` of fitted value iteration.
    Arguments as for :func:`play_greedy`."""
    rows = tetris.check_rows(rows)
    if rows.ndim == 1:
        rows = rows[None, :]
    p = tetris._pieces(pieces, len(rows))
    codes, w, rewards = _policy(tetris, weights, features, line_rewards)
    discount = _unit("discount", discount)
    placement = np.empty(len(rows), dtype=np.int16)
    value = np.empty(len(rows), dtype=np.float64)
    tetris.engine.greedy(rows, p, codes, w, rewards, discount, placement, value, n_threads(n_jobs))
    return GreedyChoices(placement, value)


def play_greedy(
    tetris: Tetris,
    weights: Sequence[float] | None,
    features: Sequence[str] = (),
    *,
    line_rewards: None | str | float | Sequence[float] = None,
    discount: float = 1.0,
    epsilon: float = 0.0,
    n_games: int = 1,
    max_placements: int | None = None,
    start: np.ndarray | None = None,
    seed: int = 0,
    n_jobs: int | None = None,
    ties: str = "first",
) -> Playouts:
    """Play ``n_games`` games of the one-step greedy policy of a linear value function.

    Each turn a piece is drawn with the game's probabilities and placed where
    ``line_rewards[rows cleared] + discount * w . phi(afterstate)`` is
    largest; the game ends when the piece fits nowhere, or after ``max_placements``.

    Args:
        tetris: the game.
        weights: ``w``, one per entry of ``phi = [1, features...]`` (a
            constant first; ``heights`` has ``width`` entries and
            ``differences`` ``width - 1``); None for uniformly random
            placements (a baseline; ``features`` is then ignored).
        features: names from :data:`FEATURES`, in the order of ``weights[1:]``.
        line_rewards: reward of a placement by rows cleared: None (0: the
            value alone), ``"scores"`` (the game's ``line_scores``), a number
            r (r per row), or a sequence with an entry for 0 ..
            ``tetris.max_lines`` rows.
        discount: in [0, 1], weighs the value against the reward.
        epsilon: chance, in [0, 1], of a uniformly random legal placement
            instead of the greedy one (exploration).
        n_games: in [1, 10**7].
        max_placements: placements per game at most, in [0, 2**62]; None: no limit.
        start: the board every game starts on (``(height,)`` rows); default empty.
        seed: in [0, 2**64).  Game i draws its pieces from its own generator
            seeded with ``babytris.analysis.evaluate.game_seeds(seed, n_games)[i]``, so
            results depend on ``seed`` and the game's number, never on ``n_jobs``.
        n_jobs: threads sharing the games (None: every core).
        ties: among placements of equal value (to 1e-9 relative), ``"first"``
            takes the first in placement order, ``"random"`` one at random
            (each with the same chance, drawn from the game's generator).

    Returns:
        :class:`Playouts`: placements (lifespans), rows cleared and points per game.
    """
    if ties not in ("first", "random"):
        raise ValueError(f"ties must be 'first' or 'random', got {ties!r}")
    args = _game_args(tetris, weights, features, line_rewards, discount, epsilon, max_placements, start)
    n_games = _bounded_int("n_games", n_games, 1, MAX_GAMES)
    seeds = game_seeds(_bounded_int("seed", seed, 0, 2**64 - 1), n_games)
    placements = np.empty(n_games, dtype=np.int64)
    lines = np.empty(n_games, dtype=np.int64)
    points = np.empty(n_games, dtype=np.float64)
    start_rows, limit, probabilities, scores, codes, w, rewards, discount, epsilon = args
    tetris.engine.play(
        start_rows,
        seeds,
        limit,
        probabilities,
        scores,
        codes,
        w,
        rewards,
        discount,
        epsilon,
        placements,
        lines,
        points,
        n_threads(n_jobs),
        ties == "random",
    )
    return Playouts(placements, lines, points, max_placements, int(seed))


def sample_boards(
    tetris: Tetris,
    n: int,
    *,
    weights: Sequence[float] | None = None,
    features: Sequence[str] = (),
    line_rewards: None | str | float | Sequence[float] = None,
    discount: float = 1.0,
    epsilon: float = 0.0,
    max_placements: int | None = None,
    start: np.ndarray | None = None,
    seed: int = 0,
    n_jobs: int | None = None,
    max_memory: int = DEFAULT_MAX_MEMORY,
) -> BoardSample:
    """``n`` boards met in play: the states of fitted value iteration.

    Games 0, 1, 2, ... (seeded as in :func:`play_greedy`) are played by
    uniformly random placements (``weights=None``, the default) or by the
    greedy policy of ``weights`` and ``features`` exploring with chance
    ``epsilon``; every board on which a piece is drawn is kept (the last
    one of a lost game too), game after game, until there are ``n``.  A game
    stops after ``min(max_placements, n)`` placements.  The sample depends
    on the arguments and ``seed`` only, never on ``n_jobs``.  Refuses
    (:class:`~babytris.MemoryLimitError`, before playing) a sample whose
    bytes (:func:`sample_bytes`) would pass ``max_memory``.

    Returns:
        :class:`BoardSample`: rows ``(n, height)``, the piece drawn on each,
        its game and step.
    """
    n = _bounded_int("n", n, 1, MAX_BOARDS)
    max_memory = check_max_memory(max_memory)
    if isinstance(tetris, Tetris) and sample_bytes(tetris, n) > max_memory:
        raise MemoryLimitError(
            f"n: {n:,} boards of {tetris.width}x{tetris.height} need about {format_bytes(sample_bytes(tetris, n))} "
            f"(rows, pieces, games and steps, gathered then joined), more than max_memory={format_bytes(max_memory)}"
        )
    seed = _bounded_int("seed", seed, 0, 2**64 - 1)
    args = _game_args(tetris, weights, features, line_rewards, discount, epsilon, max_placements, start)
    start_rows, limit, probabilities, scores, codes, w, rewards, discount, epsilon = args
    limit = min(limit, n)
    threads = n_threads(n_jobs)
    rows, pieces, game, step = [], [], [], []
    have = played = 0
    batch = threads
    while have < n:
        seeds = game_seeds(seed, played + batch)[played:]
        games = tetris.engine.sample(
            start_rows, seeds, limit, probabilities, scores, codes, w, rewards, discount, epsilon, threads
        )
        for g, (r, p) in enumerate(games):
            take = min(len(p), n - have)
            rows.append(r[:take])
            pieces.append(p[:take])
            game.append(np.full(take, played + g, dtype=np.int64))
            step.append(np.arange(take, dtype=np.int64))
            have += take
            if have == n:
                break
        played += batch
        # Enough games for what is missing at the mean length so far, a quarter more.
        mean = max(have / played, 1.0)
        batch = int(min(max(math.ceil(1.25 * (n - have) / mean), threads), 64 * threads))
    return BoardSample(np.concatenate(rows), np.concatenate(pieces), np.concatenate(game), np.concatenate(step), seed)


def sample_bytes(tetris: Tetris, n: int) -> int:
    """Bytes :func:`sample_boards` holds at its peak for ``n`` boards: returns
    three times the sample (its rows, piece, game and step): the engine's
    growing records, their copies gathered game by game, then one array each
    (measured: 2.7 times, 451 MiB for 3 million boards of 10x20)."""
    return 3 * n * (2 * tetris.height + 2 + 8 + 8)


# --- argument checks -------------------------------------------------------------------------


def _unit(name: str, value: object) -> float:
    return check_number(name, value, 0.0, 1.0)


def _policy(tetris: Tetris, weights: object, features: object, line_rewards: object):
    """Feature codes, weights and line rewards as the engine takes them (checked)."""
    codes = feature_codes(features)
    n = tetris._n_values(codes)
    try:
        w = np.array(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"weights must be {n} numbers, got {weights!r}") from None
    if w.shape != (n,):
        raise ValueError(f"weights must be {n} numbers (a constant, then one per feature value), got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("weights must be finite")
    return codes, w, _line_rewards(tetris, line_rewards)


def _line_rewards(tetris: Tetris, line_rewards: object) -> np.ndarray:
    size = tetris.max_lines + 1
    if line_rewards is None:
        return np.zeros(size)
    if isinstance(line_rewards, str):
        if line_rewards != "scores":
            raise ValueError(f"line_rewards must be None, 'scores', a number or a sequence, got {line_rewards!r}")
        return np.array(tetris.line_scores[:size], dtype=np.float64)
    if is_number(line_rewards):
        out = float(line_rewards) * np.arange(size, dtype=np.float64)
    else:
        try:
            out = np.array(line_rewards, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"line_rewards must be None, 'scores', a number or a sequence, got {line_rewards!r}"
            ) from None
        if out.ndim != 1 or len(out) < size:
            raise ValueError(f"line_rewards needs an entry for 0..{size - 1} rows cleared, got {line_rewards!r}")
        out = np.ascontiguousarray(out[:size])
    if not np.isfinite(out).all():
        raise ValueError("line_rewards must be finite")
    return out


def _game_args(tetris, weights, features, line_rewards, discount, epsilon, max_placements, start):
    if not isinstance(tetris, Tetris):
        raise TypeError(f"tetris must be a babytris.big.tetris.Tetris, got {type(tetris).__name__}")
    if weights is None:
        codes = w = rewards = None
    else:
        codes, w, rewards = _policy(tetris, weights, features, line_rewards)
    discount = _unit("discount", discount)
    epsilon = _unit("epsilon", epsilon)
    limit = NO_LIMIT if max_placements is None else _bounded_int("max_placements", max_placements, 0, NO_LIMIT)
    start_rows = tetris.empty() if start is None else tetris.check_rows(start, name="start")
    if start_rows.ndim != 1:
        raise ValueError(f"start must be one board ({tetris.height},)")
    probabilities = np.array(tetris.probabilities, dtype=np.float64)
    scores = np.array(tetris.line_scores[: tetris.max_lines + 1], dtype=np.float64)
    return start_rows, limit, probabilities, scores, codes, w, rewards, discount, epsilon


def _bounded_int(name: str, value: object, lo: int, hi: int) -> int:
    return check_int(name, value, lo, hi, error=RulesError)
