"""TD(lambda) learning of a neural value function (Pirnay & Arabagi), in numpy.

The value of a board (its cells in, one hidden layer of sigmoid units, one
linear output) is learned from games the network plays itself.  At each
placement the best move is ``argmax (r + V(b'))`` over the afterstates
``b'`` (the paper's section 2.1), and the move played is drawn with chance
proportional to how much its afterstate's value beats the worst one,
``V(b'_k) - min V(b'_r)`` (its exploration rule, eq. 5-6), or is the best
when ``explore=False``.  After each move the weights follow

    ``delta = r* + discount * V(b*) - V(b)``, ``e <- trace * e + grad V(b)``, ``w <- w + rate * delta * e``

(eq. 1-3: the trace decays by ``trace`` alone, as in the paper), where
``b*`` is the best move's afterstate and ``r*`` its reward: "the value
function is only updated based on the most optimal next action", whichever
move the exploration plays (``target="best"``, the paper's).
``target="explored"`` steps toward the move played's ``r + discount * V``
instead (a SARSA-like target, babytris's own variant).  ``moves="discounted"``
takes the best move and weighs exploration by ``r + discount * V(b')``
instead (babytris's choice until 2026-11-29, which the paper does not
write).  A piece that fits nowhere ends the game with ``delta = game_over - V(b)``.

The paper's rewards are +1 per placement, +5 per line and -10 at game
over; ``points=True`` rewards the rules' line scores instead, the objective
the exact solvers optimise, so a learned policy's regret can be measured
exactly (:func:`babytris.big.fitted.regret`).

On a big board (:class:`babytris.big.tetris.Tetris`) the games run compiled
(:mod:`babytris.big._td`, about 10x the numpy loop) and draw from the
playouts' xoshiro256** stream; on an enumerated Baby Tetris table they run
in numpy and draw from ``numpy.random.default_rng(seed)``.  ``engine="numpy"``
runs the numpy loop on a big board too, drawing from the compiled stream
(:class:`babytris.big._td.Draws`): it then plays the same games as the kernel
and is its reference in the tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..game.validation import check_int, check_number
from . import _td
from .features import cells
from .games import BigGame, game_model

__all__ = ["ValueNetwork", "TDResult", "td_lambda", "ENGINES", "MOVE_RULES", "TARGETS"]

#: Where the games run: ``auto`` (compiled on a big board, numpy on an enumerated table), or one of the two.
ENGINES = ("auto", "compiled", "numpy")
#: What a TD step moves the value toward: the best move's score (the paper's) or the move played's.
TARGETS = ("best", "explored")
#: How moves are scored: ``"paper"`` (the best by r + V(b'), exploration by V(b'): eq. 1 and 5 as written)
#: or ``"discounted"`` (both by r + discount * V(b')).
MOVE_RULES = ("paper", "discounted")


class ValueNetwork:
    """``V(x) = w2 . sigmoid(W1 x + b1) + b2`` for board cells ``x`` (0/1).

    Args:
        width, height: the board; the inputs are its ``width * height`` cells.
        hidden: sigmoid units (the paper: 80).
        seed: seeds the initial weights (uniform in +-``scale / sqrt(inputs)``).
    """

    def __init__(self, width: int, height: int, *, hidden: int = 80, seed: int = 0, scale: float = 1.0) -> None:
        check_int("hidden", hidden, 1, 10_000)
        rng = np.random.default_rng(seed)
        self.width, self.height = width, height
        n = width * height
        self.W1 = rng.uniform(-scale, scale, (hidden, n)) / np.sqrt(n)
        self.b1 = np.zeros(hidden)
        self.w2 = rng.uniform(-scale, scale, hidden) / np.sqrt(hidden)
        self.b2 = 0.0

    def inputs(self, rows: np.ndarray) -> np.ndarray:
        """Board cells as inputs: float64 ``(n, width * height)``, row 0 first."""
        return cells(rows, self.width).reshape(len(rows), -1).astype(np.float64)

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """Values of boards given as row bitmasks ``(n, height)``: float64 ``(n,)``."""
        return self.values(self.inputs(rows))

    def values(self, x: np.ndarray) -> np.ndarray:
        """Values of input rows ``x`` ``(n, inputs)``: float64 ``(n,)``."""
        return _sigmoid(x @ self.W1.T + self.b1) @ self.w2 + self.b2

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, tuple[np.ndarray, ...]]:
        """``V(x)`` of one input vector and its gradient ``(dW1, db1, dw2, db2)``."""
        hidden = _sigmoid(self.W1 @ x + self.b1)
        slope = self.w2 * hidden * (1.0 - hidden)
        return float(hidden @ self.w2 + self.b2), (np.outer(slope, x), slope, hidden, np.ones(()))

    def step(self, direction: tuple[np.ndarray, ...], size: float) -> None:
        """Move the weights by ``size * direction`` (a gradient-shaped tuple)."""
        self.W1 += size * direction[0]
        self.b1 += size * direction[1]
        self.w2 += size * direction[2]
        self.b2 += size * float(direction[3])


@dataclass(frozen=True)
class TDResult:
    """Result of :func:`td_lambda`.

    Attributes:
        network: the trained :class:`ValueNetwork` (callable on row bitmasks).
        games: int64 ``(k,)``, games played at each report.
        lines_per_game: float64 ``(k,)``, mean lines per game since the last report.
        placements_per_game: float64 ``(k,)``, likewise.
        explored: float64 ``(k,)``, the share of moves that were not the best (N_E).
        seconds: wall time.
    """

    network: ValueNetwork
    games: np.ndarray
    lines_per_game: np.ndarray
    placements_per_game: np.ndarray
    explored: np.ndarray
    seconds: float = field(default=0.0)

    def __repr__(self) -> str:
        last = f", last {self.lines_per_game[-1]:.3f} lines/game" if len(self.games) else ""
        return f"<TDResult {int(self.games[-1]) if len(self.games) else 0} games{last}, {self.seconds:.1f}s>"


def td_lambda(
    game: Any,
    *,
    n_games: int,
    hidden: int = 80,
    learning_rate: float = 0.01,
    trace: float = 0.6,
    discount: float = 0.9,
    placement_reward: float = 1.0,
    line_reward: float = 5.0,
    game_over: float = -10.0,
    points: bool = False,
    explore: bool = True,
    target: str = "best",
    moves: str = "paper",
    max_placements: int = 10_000,
    report_every: int = 1000,
    seed: int = 0,
    network: ValueNetwork | None = None,
    progress: Callable[[int, float], None] | None = None,
    engine: str = "auto",
) -> TDResult:
    """Train a :class:`ValueNetwork` by TD(lambda) on ``n_games`` games.

    Args:
        game: a :class:`~babytris.Transitions` (Baby Tetris) or a
            :class:`babytris.big.tetris.Tetris` (big boards).
        n_games: games to play, >= 1.
        hidden, learning_rate (eta), trace (lambda), discount (gamma): the
            paper's 80, 0.01, 0.6, 0.9 by default.
        placement_reward, line_reward, game_over: rewards per placement, per
            line cleared, and at game over (the paper's +1, +5, -10).
        points: reward the rules' line scores instead (and nothing per
            placement; ``game_over`` still applies: pass 0 for the plain game).
        explore: draw moves by the paper's rule; False: always the best.
        target: what each step moves the value toward: ``"best"``, the best
            move's score (the paper's eq. 1), or ``"explored"``, the score
            of the move played (babytris's own variant; the same without
            exploration).
        moves: ``"paper"``: the best move maximises ``r + V(b')`` and
            exploration weighs ``V(b') - min V``, as eq. 1 and 5 write
            them; ``"discounted"``: both use ``r + discount * V(b')``
            (babytris's earlier choice).
        max_placements: a game stops (untaught) after this many placements.
        report_every: games per point of the learning curve.
        network: continue training this network (default: a new one).
        progress: called as ``progress(games, lines_per_game)`` at each report.
        engine: ``"auto"`` (compiled on a big board, numpy on a table),
            ``"compiled"`` (big boards only) or ``"numpy"``.

    Returns:
        :class:`TDResult`.
    """
    model = game_model(game)
    for name, count in (("n_games", n_games), ("max_placements", max_placements), ("report_every", report_every)):
        check_int(name, count, 1, 10**9)
    for name, number in (("learning_rate", learning_rate), ("trace", trace), ("discount", discount)):
        check_number(name, number, 0, 1)
    # finite and far from overflow: a NaN or inf reward would end the training with NaN weights
    for name, number in (
        ("placement_reward", placement_reward),
        ("line_reward", line_reward),
        ("game_over", game_over),
    ):
        check_number(name, number, -1e12, 1e12)
    seed = check_int("seed", seed, 0, 2**63 - 1, high_text="2**63 - 1")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(map(repr, TARGETS))}, got {target!r}")
    if moves not in MOVE_RULES:
        raise ValueError(f"moves must be one of {', '.join(map(repr, MOVE_RULES))}, got {moves!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    big = isinstance(model, BigGame)
    if engine == "compiled" and not big:
        raise ValueError("engine: 'compiled' runs on big boards (babytris.big.tetris.Tetris) only; use 'numpy'")
    net = network if network is not None else ValueNetwork(model.width, model.height, hidden=hidden, seed=seed)
    if net.W1.shape[1] != model.width * model.height:
        raise ValueError(f"network: its inputs are {net.W1.shape[1]} cells, the board has {model.width * model.height}")
    scores = np.asarray(model.scores) if points else None
    rewards = (placement_reward, line_reward, game_over)
    choices = (target == "best", moves == "paper")  # (toward the best move; eq. 1 and 5 as written)
    settings = (learning_rate, trace, discount, *rewards, scores, explore, max_placements, *choices)
    started = time.perf_counter()
    if isinstance(model, BigGame) and engine != "numpy":
        blocks = _compiled_blocks(model, net, seed, n_games, report_every, settings)
    else:
        probabilities = np.asarray(model.probabilities, dtype=np.float64)
        draws = _td.Draws(seed, probabilities) if big else _Draws(np.random.default_rng(seed), probabilities)
        blocks = _numpy_blocks(model, net, draws, n_games, report_every, settings)
    curve: list[tuple[int, float, float, float]] = []
    played = 0
    try:
        for lines, placed, explored in blocks:
            played += len(lines)
            curve.append((played, lines.mean(), placed.mean(), explored.sum() / max(placed.sum(), 1)))
            if progress is not None:
                progress(played, float(lines.mean()))
    finally:  # now, not when the generator is collected: the network must hold the games played
        blocks.close()
    games, per_game, placements, explored_share = (np.array(c) for c in zip(*curve))
    return TDResult(net, games.astype(np.int64), per_game, placements, explored_share, time.perf_counter() - started)


def _block_sizes(n_games: int, report_every: int) -> list[int]:
    return [report_every] * (n_games // report_every) + ([n_games % report_every] if n_games % report_every else [])


#: Games per call of the compiled kernel: Ctrl-C is seen between calls.
GAMES_PER_CALL = 1000


def _compiled_blocks(
    model: BigGame, net: ValueNetwork, seed: int, n_games: int, report_every: int, settings: tuple
) -> Generator[tuple[np.ndarray, np.ndarray, np.ndarray], None, None]:
    """Per block of games, (rows cleared, placements, explored moves) int64
    arrays, the games played by the compiled kernel on ``net``, whose
    weights hold every game played whenever a block is handed out (and when
    the run is interrupted)."""
    rate, trace, discount, placement_reward, line_reward, game_over, scores, explore, max_placements = settings[:9]
    best, as_written = settings[9:]
    engine = model.tetris.engine
    W1T = np.ascontiguousarray(net.W1.T, dtype=np.float64)
    net.b1 = np.ascontiguousarray(net.b1, dtype=np.float64)  # trained in place
    net.w2 = np.ascontiguousarray(net.w2, dtype=np.float64)
    b2 = np.array([net.b2], dtype=np.float64)
    probabilities = np.asarray(model.probabilities, dtype=np.float64)
    state = _td.seeded_state(seed)

    def write_back() -> None:
        net.W1 = np.ascontiguousarray(W1T.T)
        net.b2 = float(b2[0])

    try:
        for size in _block_sizes(n_games, report_every):
            out = (np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64))
            for lo in range(0, size, GAMES_PER_CALL):
                hi = min(size, lo + GAMES_PER_CALL)
                engine.td_train(
                    W1T,
                    net.b1,
                    net.w2,
                    b2,
                    state,
                    probabilities,
                    scores,
                    rate,
                    trace,
                    discount,
                    placement_reward,
                    line_reward,
                    game_over,
                    explore,
                    max_placements,
                    *(column[lo:hi] for column in out),
                    toward_best=best,
                    as_written=as_written,
                )
            write_back()
            yield out
    finally:  # also when interrupted: the network keeps the games played
        write_back()


def _numpy_blocks(
    model: Any, net: ValueNetwork, draws: Any, n_games: int, report_every: int, settings: tuple
) -> Generator[tuple[np.ndarray, np.ndarray, np.ndarray], None, None]:
    """:func:`_compiled_blocks` in numpy, drawing from ``draws``."""
    for size in _block_sizes(n_games, report_every):
        out = np.array([_play_and_learn(model, net, draws, *settings) for _ in range(size)], dtype=np.int64)
        yield out[:, 0], out[:, 1], out[:, 2]


class _Draws:
    """numpy's generator behind the draws the numpy loop makes (as :class:`babytris.big._td.Draws`)."""

    def __init__(self, rng: np.random.Generator, probabilities: np.ndarray) -> None:
        self.rng = rng
        self.probabilities = probabilities

    def piece(self) -> int:
        return int(self.rng.choice(len(self.probabilities), p=self.probabilities))

    def uniform(self) -> float:
        return float(self.rng.random())

    def below(self, n: int) -> int:
        return int(self.rng.integers(n))


def _play_and_learn(
    model,
    net: ValueNetwork,
    draws,
    rate,
    trace,
    discount,
    placement_reward,
    line_reward,
    game_over,
    scores,
    explore,
    max_placements,
    toward_best,
    as_written,
) -> tuple[int, int, int]:
    """One game; returns (lines, placements, explored moves)."""
    state = model.start()
    x = net.inputs(model.rows(_one(state)))[0]
    value, gradient = net.value_and_gradient(x)
    trail = tuple(np.zeros_like(g) for g in gradient)
    lines_total = explored = placed = 0
    while placed < max_placements:
        piece = draws.piece()
        offsets, nxt, lines = model.moves_lines(_one(state), piece)
        trail = tuple(trace * e + g for e, g in zip(trail, gradient))
        if len(lines) == 0:
            net.step(trail, rate * (game_over - value))
            break
        inputs = net.inputs(model.rows(nxt))
        after = net.values(inputs)
        reward = scores[lines] if scores is not None else placement_reward + line_reward * lines
        q = reward + after if as_written else reward + discount * after
        best = int(np.argmax(q))
        choice = _explore(after if as_written else q, draws) if explore else best
        explored += choice != best
        k = best if toward_best else choice  # (eq. 1: toward the best)
        net.step(trail, rate * (reward[k] + discount * after[k] - value))
        state = nxt[choice]
        lines_total += int(lines[choice])
        placed += 1
        value, gradient = net.value_and_gradient(inputs[choice])
    return lines_total, placed, explored


def _explore(q: np.ndarray, draws) -> int:
    """The paper's rule (eq. 5-6): move k with chance proportional to ``q[k] - min q``
    (uniform if all equal); ``q`` the afterstates' values (or their scores)."""
    cumulative = np.cumsum(q - q.min())
    total = cumulative[-1]
    if not total > 0:
        return int(draws.below(len(q)))
    return min(int(np.searchsorted(cumulative, draws.uniform() * total, side="right")), len(q) - 1)


def _one(state):
    return np.asarray(state)[None, ...] if np.ndim(state) else np.array([state])


def _sigmoid(z: np.ndarray) -> np.ndarray:
    # the compiled games' formula, so that near-ties round alike; exp(-z) = inf gives 0, as it should
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))
