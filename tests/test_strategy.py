"""Strategy iteration against the minimax opponent (issue 14, part 2): the
opponent's exact evaluation against a plain iteration, the rounds' schedule,
and the solve against the other methods."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import _strategy, _sweep, sweeping
from babytris.transitions import independent_layers, sweep_order


def _sweeper(t, discount=0.9, pieces=_sweep.PIECES_WORST, **kw):
    n, n_pieces = t.n_boards, t.rules.n_pieces
    values, board_values = np.zeros(n * n_pieces), np.zeros(n)
    policy = np.full(n * n_pieces, -1, dtype=np.int16)
    order, layer_starts = sweep_order(t)
    sweeper = _sweep.Sweeper(
        t.offsets,
        t.next_board,
        t.lines,
        np.asarray(t.rules.line_scores, dtype=np.float64),
        np.asarray(t.rules.probabilities, dtype=np.float64),
        discount,
        values,
        board_values,
        policy,
        order,
        layer_starts,
        pieces=pieces,
        independent_layers=independent_layers(t),
        **kw,
    )
    return sweeper, values, board_values, policy


def _joint_values(t, policy, pieces, discount, sweeps=2000):
    """Board values with the player's moves and the opponent's pieces fixed, by plain synchronous iteration."""
    n_pieces = t.rules.n_pieces
    scores = np.asarray(t.rules.line_scores, dtype=np.float64)
    live = np.diff(t.offsets[::n_pieces]) > 0
    state = np.arange(t.n_boards) * n_pieces + pieces
    move = policy[state].astype(np.int64)
    has = live & (move >= 0)
    edge = t.offsets[state] + np.maximum(move, 0)
    edge = np.where(has, edge, 0)
    gain = np.where(has, scores[t.lines[edge]], 0.0)
    after = np.where(has, t.next_board[edge], 0)
    values = np.zeros(t.n_boards)
    for _ in range(sweeps):
        values = np.where(has, gain + discount * values[after], 0.0)
    return values, live


@pytest.mark.parametrize("height", [4, 5])
def test_exact_evaluation_equals_a_long_plain_iteration(height):
    """One walk gives what 2,000 synchronous sweeps of the fixed joint policy give (cycles included)."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=height))
    sweeper, values, board_values, policy = _sweeper(t)
    response = _strategy.OpponentResponse(sweeper)
    for _ in range(3):
        sweeper.greedy_sweep()
    response.start()
    assert sweeper.least_noted
    pieces = response.pieces
    response.step(0.0)
    expected, live = _joint_values(t, policy, pieces.astype(np.int64), 0.9)
    assert np.max(np.abs(board_values[live] - expected[live])) < 1e-10


def test_start_without_noting_gives_the_same_pieces():
    """The pass start() runs when the greedy sweep noted nothing gives the pieces the sweep notes."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
    noted, *_ = _sweeper(t)
    response = _strategy.OpponentResponse(noted)
    for _ in range(2):
        noted.greedy_sweep()
    response.start()
    by_sweep = response.pieces
    noted.least_noted = False  # as after a sweep that noted nothing
    response.start()
    assert np.array_equal(response.pieces, by_sweep)
    assert 0 < by_sweep.sum() < t.n_boards  # both pieces are given somewhere


def test_steps_until_none_moves_give_the_opponents_best_response():
    """Howard's iteration ends at pieces no single change improves, and the values are then the
    fixed point of the opponent's choice against the player's moves."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
    sweeper, values, board_values, policy = _sweeper(t)
    response = _strategy.OpponentResponse(sweeper)
    for _ in range(2):
        sweeper.greedy_sweep()
    response.start()
    steps = [response.step(0.0) for _ in range(30)]
    assert steps[0] > 0 and 0 in steps
    settled = board_values.copy()
    assert response.step(0.0) == 0
    # the least piece of every live board is the one given, and W is its value
    n_pieces = t.rules.n_pieces
    live = np.diff(t.offsets[::n_pieces]) > 0
    least = values.reshape(-1, n_pieces).min(axis=1)
    assert np.max(np.abs(least[live] - settled[live])) < 1e-12


def test_the_response_refuses_what_it_cannot_evaluate():
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
    with pytest.raises(ValueError, match="least-valuable"):
        _strategy.OpponentResponse(_sweeper(t, pieces=_sweep.PIECES_RANDOM)[0])
    with pytest.raises(ValueError, match="discount"):
        _strategy.OpponentResponse(_sweeper(t, discount=1.0)[0])
    with pytest.raises(ValueError, match="synchronous"):
        _strategy.OpponentResponse(_sweeper(t, synchronous=True)[0])
    response = _strategy.OpponentResponse(_sweeper(t)[0])
    with pytest.raises(ValueError, match="start"):
        response.step(0.0)
    response.start()
    with pytest.raises(ValueError, match="margin"):
        response.step(-1.0)
    with pytest.raises(ValueError, match="margin"):
        response.step(float("nan"))


class _Scripted:
    """A sweeper whose greedy residuals are given, and a response counting its steps."""

    def __init__(self, residuals, moves_per_step):
        self.residuals = list(residuals)
        self.moves = list(moves_per_step)
        self.steps: list[int] = []

    def greedy_sweep(self, *_):
        self.steps.append(0)
        return self.residuals.pop(0)

    def evaluation_sweep(self, *_):
        return 0.0

    def start(self):
        self.left = list(self.moves)

    def step(self, margin):
        self.steps[-1] += 1
        return self.left.pop(0)


def test_rounds_run_to_the_best_response_after_the_misses():
    """Cut short (one step) while the residual keeps falling; after MAX_SHORT_MISSES misses every
    round runs its steps until no piece moves (Hoffman and Karp), so the run must end."""
    falling = [8.0, 4.0, 2.0, 1.0]
    stalled = [1.0] * sweeping.MAX_SHORT_MISSES + [1.0, 1.0, 1e-9]
    fake = _Scripted(falling + stalled, [5, 3, 1, 0])
    residuals = sweeping.strategy_iteration(fake, fake, 1e-8, 100, 0)
    assert residuals == falling + stalled
    short = len(falling) + sweeping.MAX_SHORT_MISSES - 1
    assert fake.steps[:short] == [1] * short
    assert fake.steps[short:-1] == [4] * (len(fake.steps) - short - 1)
    assert fake.steps[-1] == 0  # the last greedy sweep passed the test


@pytest.mark.parametrize("discount", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("height", [4, 5])
def test_strategy_iteration_equals_the_other_methods(height, discount):
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=height))
    kw = dict(discount=discount, opponent="minimax", tol=1e-10)
    strategy = babytris.solve_transitions(t, **kw)
    assert strategy.method == "strategy" and strategy.converged
    for method in ("mpi", "vi"):
        other = babytris.solve_transitions(t, method=method, **kw)
        bound = strategy.error_bound + other.error_bound
        assert np.max(np.abs(strategy.values - other.values)) <= bound
        # ties broken alike: the same policy and opponent's choices
        assert np.array_equal(strategy.policy, other.policy)
        assert np.array_equal(strategy.opponent_policy, other.opponent_policy)


def test_strategy_iteration_does_not_depend_on_threads_or_sweeps():
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=5))
    one = babytris.solve_transitions(t, opponent="minimax", n_jobs=1)
    two = babytris.solve_transitions(t, opponent="minimax", n_jobs=2)
    assert np.array_equal(one.values, two.values)
    for sweeps in (0, 1, 6):
        other = babytris.solve_transitions(t, opponent="minimax", eval_sweeps=sweeps, tol=1e-10)
        assert np.max(np.abs(other.values - one.values)) <= one.error_bound + other.error_bound


def test_strategy_iteration_with_a_reward_and_a_bag():
    """The generic greedy path (a reward per move) and pieces of zero chance in a bag."""
    rules = babytris.Rules(width=4, height=4, randomizer="bag")
    for reward in (None, babytris.Reward(loss=5.0, height=-0.5)):
        strategy = babytris.solve(rules, opponent="minimax", reward=reward, tol=1e-10)
        mpi = babytris.solve(rules, opponent="minimax", reward=reward, tol=1e-10, method="mpi")
        assert strategy.method == "strategy"
        assert np.max(np.abs(strategy.values - mpi.values)) <= strategy.error_bound + mpi.error_bound


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(opponent="random"), "strategy"),
        (dict(opponent="minavg"), "strategy"),
        (dict(opponent="minimax", player="random"), "strategy"),
    ],
)
def test_strategy_iteration_refuses_other_games(kw, match):
    with pytest.raises(ValueError, match=match):
        babytris.solve(width=4, height=4, method="strategy", **kw)


def test_undiscounted_minimax_keeps_modified_policy_iteration():
    rules = babytris.Rules(width=4, height=4, objective="combo")
    assert babytris.solve(rules, discount=1.0, opponent="minimax").method == "mpi"
    with pytest.raises(ValueError, match="discount"):
        babytris.solve(rules, discount=1.0, opponent="minimax", method="strategy")
