"""Fitted value iteration over board features (Bodoia & Puranik), and the greedy play it yields.

The value of a board before its next piece is approximated by a linear
function of features, ``V(b) = w . phi(b)`` (``phi`` from
:mod:`babytris.big.features`, a constant first).  Each iteration computes, for a
fixed sample of boards, the exact one-step target over the next piece

    ``y(b) = sum_q prob(q) max_a [reward(b, q, a) + discount * V(b')]``

(``-loss`` for a piece that fits nowhere), then refits ``w`` by least
squares, until no weight moves more than ``tol``.  Boards are sampled by
random play, and in later rounds by the greedy policy of the current weights
with exploration ``epsilon`` (weights restart from zero after each sampling,
as in the paper).

The game is either an enumerated Baby Tetris table (:class:`~babytris.Transitions`),
where :func:`greedy_policy` turns the weights into a policy whose exact value
:func:`regret` measures, or a big board (:class:`babytris.big.tetris.Tetris`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.resources import DEFAULT_MAX_MEMORY, MemoryLimitError, check_max_memory, format_bytes
from ..engine.transitions import Transitions
from ..game.validation import check_int, check_number
from .features import feature_matrix
from .games import ExactGame, check_points_table, game_model

__all__ = [
    "LinearValue",
    "FittedValueIteration",
    "fitted_bytes",
    "fitted_value_iteration",
    "greedy_policy",
    "regret",
    "Regret",
]


#: Fitting stops (not converged) once a weight's magnitude reaches this: the iteration diverges.
MAX_WEIGHT = 1e9


@dataclass(frozen=True)
class LinearValue:
    """``V(b) = weights . [1, features(b)]``.

    Attributes:
        features: feature names (see :func:`babytris.big.features.feature_matrix`).
        weights: float64 ``(1 + k,)``, the constant's weight first.
        width: board columns the features are computed for.
    """

    features: tuple[str, ...]
    weights: np.ndarray
    width: int

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """Values of boards given as row bitmasks ``(n, height)``: float64 ``(n,)``."""
        return feature_matrix(rows, self.width, self.features) @ self.weights


@dataclass(frozen=True)
class FittedValueIteration:
    """Result of :func:`fitted_value_iteration`.

    Attributes:
        value: the fitted :class:`LinearValue` (of the last round).
        iterations: fitting iterations of each round.
        converged: whether the last round's weights settled within ``tol``
            (False if it hit ``max_iter`` or diverged past :data:`MAX_WEIGHT`).
        history: float64 ``(total iterations, 1 + k)``, the weights after each iteration.
        n_samples: boards per round; discount, loss, tol as given.
        seconds: wall time.
    """

    value: LinearValue
    iterations: tuple[int, ...]
    converged: bool
    history: np.ndarray
    n_samples: int
    discount: float
    loss: float
    tol: float
    seconds: float = field(default=0.0)

    def __repr__(self) -> str:
        weights = ", ".join(f"{w:.3g}" for w in self.value.weights)
        return (
            f"<FittedValueIteration features={list(self.value.features)} weights=({weights}) "
            f"rounds={len(self.iterations)} iterations={sum(self.iterations)} "
            f"{'converged' if self.converged else 'NOT converged'} {self.seconds:.2f}s>"
        )


def fitted_value_iteration(
    game: Any,
    features: Sequence[str] = ("max_height", "holes", "covers"),
    *,
    discount: float = 0.9,
    n_samples: int = 1000,
    rounds: int = 1,
    epsilon: float = 0.3,
    loss: float = 0.0,
    tol: float = 0.01,
    max_iter: int = 1000,
    seed: int = 0,
    max_memory: int = DEFAULT_MAX_MEMORY,
    sample_from: LinearValue | None = None,
) -> FittedValueIteration:
    """Fit a linear value function by fitted value iteration.

    Args:
        game: a :class:`~babytris.Transitions` (Baby Tetris, enumerated) or
            a :class:`babytris.big.tetris.Tetris` (big boards).
        features: feature names for :func:`babytris.big.features.feature_matrix`.
        discount: in [0, 1).
        n_samples: boards sampled per round (>= 1).
        rounds: sampling rounds (>= 1): the first samples random play (or
            ``sample_from``'s), each later one the greedy play of the last
            weights, a random placement with chance ``epsilon``.
        loss: the cost of losing: a piece that fits nowhere is worth ``-loss``.
        tol: stop a round when no weight changes more than this (> 0).
        max_iter: iterations per round at most.
        seed: seeds the sampling.
        max_memory: refuse (:class:`~babytris.MemoryLimitError`, before any
            sampling) when :func:`fitted_bytes` is more than this.
        sample_from: a :class:`LinearValue` of the game's width whose greedy
            play (exploring with chance ``epsilon``) the first round samples
            instead of random play: a fit resampled from given weights.

    Returns:
        :class:`FittedValueIteration`.
    """
    model = game_model(game)
    _check(discount, n_samples, rounds, epsilon, loss, tol, max_iter)
    rng = np.random.default_rng(seed)
    features = tuple(features)
    if sample_from is not None and not (isinstance(sample_from, LinearValue) and sample_from.width == model.width):
        raise ValueError(f"sample_from must be a LinearValue of width {model.width}, got {sample_from!r}")
    n_columns = feature_matrix(np.zeros((1, model.height), dtype=np.uint32), model.width, features).shape[1]
    max_memory = check_max_memory(max_memory)
    need = fitted_bytes(model, n_columns, n_samples)
    if need > max_memory:
        raise MemoryLimitError(
            f"n_samples: {n_samples:,} boards, each with every move of every piece and their features, need about "
            f"{format_bytes(need)}, more than max_memory={format_bytes(max_memory)}"
        )
    started = time.perf_counter()
    value: LinearValue | None = sample_from
    history: list = []
    iterations: list[int] = []
    converged = False
    for _ in range(rounds):
        states = _sample(model, n_samples, value, epsilon, discount, rng)
        weights, n_iter, converged, steps = _fit(model, states, features, discount, loss, tol, max_iter)
        value = LinearValue(features, weights, model.width)
        history.extend(steps)
        iterations.append(n_iter)
    assert value is not None  # (rounds >= 1 is checked above)
    return FittedValueIteration(
        value,
        tuple(iterations),
        converged,
        np.array(history),
        n_samples,
        float(discount),
        float(loss),
        float(tol),
        time.perf_counter() - started,
    )


def fitted_bytes(model: Any, n_columns: int, n_samples: int) -> int:
    """Bytes a round of :func:`fitted_value_iteration` holds at its peak for
    ``n_samples`` boards and ``n_columns`` features (the constant included),
    each piece's moves counted as its most on any board: returns the design
    matrix, every piece's successors' features, rewards and offsets, and
    one piece's afterstates and their features being computed (an upper
    bound: 458 MiB against 281 MiB measured for 40,000 boards of 10x20,
    whose boards in play have fewer moves than the most)."""
    if isinstance(model, ExactGame):
        t = model.t
        most = np.diff(t.offsets).reshape(t.n_boards, t.rules.n_pieces).max(axis=0)
        row_bytes = 8 * model.height
    else:
        most = np.array([len(p) for p in model.tetris.placements])
        row_bytes = 2 * model.height
    moves = n_samples * most.astype(np.int64)
    kept = int(moves.sum()) * (8 * n_columns + 8 + 8) + len(most) * 8 * (n_samples + 1)
    transient = int(moves.max()) * (row_bytes + 16 + 2 * 8 * n_columns)
    return n_samples * (8 * n_columns + row_bytes + 18) + kept + transient


def _fit(model, states, features, discount, loss, tol, max_iter):
    """Iterate targets and least squares on fixed samples; the successors'
    features are computed once."""
    phi = _features(model, model.rows(states), features)
    pieces = []
    for piece, prob in enumerate(model.probabilities):
        offsets, nxt, rewards = model.moves(states, piece)
        pieces.append((prob, offsets, _features(model, model.rows(nxt), features), rewards))
    weights = np.zeros(phi.shape[1])
    steps = []
    for iteration in range(1, max_iter + 1):
        y = np.zeros(len(states))
        for prob, offsets, phi_next, rewards in pieces:
            y += prob * _segment_max(rewards + discount * (phi_next @ weights), offsets, -loss)
        new, *_ = np.linalg.lstsq(phi, y, rcond=None)
        if not np.all(np.abs(new) < MAX_WEIGHT):  # diverging (it can, with function approximation): stop
            steps.append(new)
            return new, iteration, False, steps
        change = float(np.max(np.abs(new - weights)))
        weights = new
        steps.append(weights.copy())
        if change <= tol:
            return weights, iteration, True, steps
    return weights, max_iter, False, steps


def _features(model, rows: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """The design matrix of ``rows``: the model's own (compiled) features if it has them."""
    if hasattr(model, "features"):
        return model.features(rows, names)
    return feature_matrix(rows, model.width, names)


def _segment_max(values: np.ndarray, offsets: np.ndarray, empty: float) -> np.ndarray:
    """The largest value of each CSR segment; ``empty`` for an empty one."""
    out = np.full(len(offsets) - 1, float(empty))
    nonempty = offsets[1:] > offsets[:-1]
    if values.size:
        out[nonempty] = np.maximum.reduceat(values, offsets[:-1][nonempty])
    return out


def _segment_argmax(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Position (within its segment) of the first largest value of each
    nonempty segment; -1 for an empty one."""
    best = _segment_max(values, offsets, -np.inf)
    counts = np.diff(offsets)
    hit = values == np.repeat(best, counts)
    segment = np.repeat(np.arange(len(counts)), counts)
    first = np.full(len(counts), -1, dtype=np.int64)
    where = np.flatnonzero(hit)[::-1]  # the last write wins: write in reverse for the first
    first[segment[where]] = where - offsets[segment[where]]
    return first


def _sample(
    model, n: int, value: LinearValue | None, epsilon: float, discount: float, rng: np.random.Generator
) -> np.ndarray:
    """Boards visited by play from the start (restarting at game over): random
    placements, or greedy ones for ``value`` with random ones at chance ``epsilon``."""
    if hasattr(model, "sample"):
        return model.sample(n, value, epsilon, discount, rng)
    states = np.empty(n, dtype=np.int64)
    board = model.start()
    for i in range(n):
        states[i] = board
        piece = int(rng.choice(len(model.probabilities), p=model.probabilities))
        offsets, nxt, rewards = model.moves(np.array([board]), piece)
        if len(nxt) == 0:
            board = model.start()
            continue
        if value is None or rng.random() < epsilon:
            board = int(nxt[rng.integers(len(nxt))])
        else:
            board = int(nxt[np.argmax(rewards + discount * value(model.rows(nxt)))])
    return states


def greedy_policy(transitions: Transitions, value: LinearValue, *, discount: float = 0.9) -> np.ndarray:
    """The one-step greedy policy of ``value`` on every state of the table:
    ``argmax_a [points(a) + discount * V(b')]`` (the first of equals).

    Returns:
        int16 ``(n_boards, n_pieces)``: placement numbers, -1 where the piece
        fits nowhere (as :attr:`Solution.policy`; ``solve_transitions(t, player=...)`` takes it).
    """
    model = ExactGame(transitions)
    every = np.arange(transitions.n_boards)
    values_after = value(model.rows_of_all)
    policy = np.full((transitions.n_boards, transitions.rules.n_pieces), -1, dtype=np.int16)
    for piece in range(transitions.rules.n_pieces):
        offsets, nxt, rewards = model.moves(every, piece)
        position = _segment_argmax(rewards + discount * values_after[nxt], offsets)
        has = position >= 0
        edges = transitions.offsets[every * transitions.rules.n_pieces + piece] + np.maximum(position, 0)
        policy[has, piece] = transitions.placement[edges[has]]
    return policy


@dataclass(frozen=True)
class Regret:
    """The exact value of a policy against the optimum.

    Attributes:
        optimal: the optimal value of the start (before the first piece).
        policy: the policy's exact value there.
        regret: ``optimal - policy`` (>= 0 up to the tolerance).
        mean_regret: the mean over every (board, piece) state of the optimal
            value minus the policy's.
        discount: the discount of both values.
    """

    optimal: float
    policy: float
    regret: float
    mean_regret: float
    discount: float


def regret(transitions: Transitions, policy: np.ndarray, *, discount: float = 0.9, tol: float = 1e-10) -> Regret:
    """How much ``policy`` (placement numbers ``(n_boards, n_pieces)``) loses
    against optimal play, both evaluated exactly on the table.

    Returns:
        :class:`Regret`.
    """
    from ..solvers.solve import solve_transitions

    check_points_table(transitions)
    optimal = solve_transitions(transitions, discount=discount, tol=tol)
    mine = solve_transitions(transitions, discount=discount, tol=tol, player=policy)
    return Regret(
        optimal.start_value,
        mine.start_value,
        optimal.start_value - mine.start_value,
        float(np.mean(optimal.values - mine.values)),
        float(discount),
    )


def _check(discount, n_samples, rounds, epsilon, loss, tol, max_iter) -> None:
    check_number("discount", discount, 0.0, 1.0, open_high=True)
    check_number("epsilon", epsilon, 0.0, 1.0)
    check_number("loss", loss, 0.0, 1e12)
    check_number("tol", tol, 0.0, open_low=True)  # finite and > 0
    check_int("n_samples", n_samples, 1, 10**8)
    check_int("rounds", rounds, 1, 1000)
    check_int("max_iter", max_iter, 1, 10**6)
