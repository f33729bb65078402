"""Strategy iteration against the minimax opponent (issue 14, part 2): the
opponent's exact evaluation against a plain iteration, the rounds' schedule,
and the solve against the other methods."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris.engine.transitions import independent_layers, sweep_order
from babytris.game.bags import bag_chances
from babytris.game.validation import default_eval_sweeps, default_strategy_sweeps
from babytris.solvers import _strategy, _sweep, sweeping
from babytris.solvers.roles import resolve


def _sweeper(t, discount=0.9, pieces=_sweep.PIECES_WORST, layered=True, **kw):
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
        independent_layers=layered and independent_layers(t),
        **kw,
    )
    return sweeper, values, board_values, policy


def _joint_values(t, policy, pieces, discount, sweeps=2000, gains=None, dead=0.0, start=None):
    """Board values with the player's moves and the opponent's pieces fixed, by plain synchronous
    iteration from ``start`` (default zeros), and which boards are live: a live board's piece that
    fits nowhere is worth ``dead``; boards with no move keep their start value.  ``gains``: each
    move's reward (default: the line scores)."""
    n_pieces = t.rules.n_pieces
    if gains is None:
        gains = np.asarray(t.rules.line_scores, dtype=np.float64)[t.lines]
    live = np.diff(t.offsets[::n_pieces]) > 0
    state = np.arange(t.n_boards) * n_pieces + pieces
    move = policy[state].astype(np.int64)
    has = move >= 0
    edge = np.where(has, t.offsets[state] + np.maximum(move, 0), 0)
    gain = np.where(has, gains[edge], dead)
    after = np.where(has, t.next_board[edge], 0)
    values = np.zeros(t.n_boards) if start is None else start.copy()
    for _ in range(sweeps):
        values = np.where(live, np.where(has, gain + discount * values[after], dead), values)
    return values, live


@pytest.mark.long
@pytest.mark.parametrize("cached", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layered", [True, False])
@pytest.mark.parametrize("height", [4, 5])
def test_exact_evaluation_equals_a_long_plain_iteration(height, layered, threads, cached):
    """One walk gives what 2,000 synchronous sweeps of the fixed joint policy give (cycles included),
    with the layers settled one pass each (threads sharing a layer) or by walks alone, reading where
    each piece leads from the chosen moves' cache or from the arrays noted for the walk."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=height))
    sweeper, values, board_values, policy = _sweeper(t, layered=layered)
    sweeper.n_threads = threads
    if cached:
        sweeper.cache_chosen_moves()
    response = _strategy.OpponentResponse(sweeper)
    for _ in range(3):
        sweeper.greedy_sweep()
    response.start()
    assert sweeper.least_noted
    pieces = response.pieces
    response.step(0.0)
    expected, live = _joint_values(t, policy, pieces.astype(np.int64), 0.9)
    assert np.max(np.abs(board_values[live] - expected[live])) < 1e-10


@pytest.mark.parametrize("height", [4, 5])
def test_evaluate_alone_writes_what_a_step_writes_and_leaves_the_rest(height):
    """evaluate() gives the board values step() gives, the exact values of the pieces given, and
    changes neither the state values nor the pieces (the sweeps after it choose anew); twice in a
    row (the walks' status flips parity) it gives the same values again."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=height))
    twins = [_sweeper(t) for _ in range(2)]
    responses = [_strategy.OpponentResponse(sweeper) for sweeper, *_ in twins]
    for (sweeper, *_), response in zip(twins, responses):
        for _ in range(3):
            sweeper.greedy_sweep()
        response.start()
    (_, values, board_values, policy), (_, _, stepped, _) = twins
    pieces, values_before = responses[0].pieces, values.copy()
    with pytest.raises(ValueError, match="start"):
        _strategy.OpponentResponse(_sweeper(t)[0]).evaluate()
    responses[0].evaluate()
    responses[1].step(0.0)
    assert np.array_equal(board_values, stepped)
    assert np.array_equal(values, values_before) and np.array_equal(responses[0].pieces, pieces)
    expected, live = _joint_values(t, policy, pieces.astype(np.int64), 0.9)
    assert np.max(np.abs(board_values[live] - expected[live])) < 1e-10
    first = board_values.copy()
    responses[0].evaluate()
    assert np.array_equal(board_values, first)


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
    """A sweeper whose greedy residuals are given, and a response counting its
    exact evaluations per round, and those with an improvement (steps)."""

    def __init__(self, residuals, moves_per_step, sweep_residual=1.0):
        self.residuals = list(residuals)
        self.moves = list(moves_per_step)
        self.sweep_residual = sweep_residual
        self.steps: list[int] = []
        self.evaluations: list[int] = []

    def greedy_sweep(self, *_):
        self.steps.append(0)
        self.evaluations.append(0)
        return self.residuals.pop(0)

    def evaluation_sweep(self, *_):
        return self.sweep_residual

    def start(self):
        self.left = list(self.moves)

    def evaluate(self):
        self.evaluations[-1] += 1

    def step(self, margin):
        self.steps[-1] += 1
        self.evaluations[-1] += 1
        return self.left.pop(0)


def test_rounds_run_to_the_best_response_after_the_misses_then_sweep():
    """The first round by FIRST_ROUND_SWEEPS sweeps alone; then cut short (one exact evaluation, no
    improvement: the sweeps after it choose the pieces anew) while the residual keeps falling; after
    FULL_ROUNDS_AFTER misses every round runs its steps until no piece moves (Hoffman and Karp); after
    SWEEPS_ONLY_AFTER, a round that missed has no exact evaluation (van der Wal), and at least one
    evaluation sweep."""
    falling = [8.0, 4.0, 2.0, 1.0]
    stalled = [1.0] * (sweeping.SWEEPS_ONLY_AFTER + 2) + [1e-9]
    fake = _Scripted(falling + stalled, [5, 3, 1, 0])
    evaluations: list[int] = []
    residuals = sweeping.strategy_iteration(fake, fake, 1e-8, 100, 0, evaluations=evaluations)
    assert residuals == falling + stalled
    short = len(falling) + sweeping.FULL_ROUNDS_AFTER - 1
    full = sweeping.SWEEPS_ONLY_AFTER - sweeping.FULL_ROUNDS_AFTER
    assert fake.steps == [0] * short + [4] * full + [0] * (len(residuals) - short - full)
    assert fake.evaluations == [0] + [1] * (short - 1) + [4] * full + [0] * (len(residuals) - short - full)
    assert evaluations[0] == sweeping.FIRST_ROUND_SWEEPS
    assert evaluations[short + full : -1] == [1] * (len(residuals) - short - full - 1)
    assert evaluations[-1] == 0  # the last greedy sweep passed the test


def test_after_the_sweeps_take_over_rounds_that_gain_evaluate_exactly_until_given_up():
    """Past SWEEPS_ONLY_AFTER misses, a round whose residual fell by SHORT_ROUND_GAIN gets one exact
    evaluation (no improvement), one that missed none; past EXACT_GIVEN_UP_AFTER misses, none at all."""
    assert (sweeping.FULL_ROUNDS_AFTER, sweeping.SWEEPS_ONLY_AFTER, sweeping.EXACT_GIVEN_UP_AFTER) == (3, 6, 12)
    script = [8.0, 4.0, 2.0, 1.0] + [1.0] * 6 + [0.5, 0.25] + [0.25] * 6 + [0.1, 1e-9]
    fake = _Scripted(script, [5, 3, 1, 0])
    evaluations: list[int] = []
    assert sweeping.strategy_iteration(fake, fake, 1e-8, 100, 2, sweeps_alone=7, evaluations=evaluations) == script
    #                    falling    misses 1-2, 3-5 (full), 6   gain   misses 7-12    given up, end
    assert fake.evaluations == [0, 1, 1, 1] + [1, 1, 4, 4, 4, 0] + [1, 1] + [0] * 6 + [0, 0]
    assert fake.steps == [0] * 6 + [4, 4, 4] + [0] * 11
    # (sweeps_alone sweeps once the exact evaluations are given up, eval_sweeps before)
    assert evaluations == [sweeping.FIRST_ROUND_SWEEPS, 3, 3, 3, 3, 3, 6, 6, 6, 2, 3, 3] + [2] * 5 + [7, 7, 0]


def test_a_round_s_sweeps_stop_once_one_changes_nothing_beyond_the_tolerance():
    fake = _Scripted([8.0, 4.0, 2.0] + [2.0] * 6 + [1e-9], [1, 0], sweep_residual=1e-9)
    evaluations: list[int] = []
    sweeping.strategy_iteration(fake, fake, 1e-8, 100, 3, sweeps_alone=9, evaluations=evaluations)
    #                  first round, short rounds, full rounds (2 steps), sweeps alone, end
    assert evaluations == [1, 2, 2, 2, 2, 3, 3, 3, 1, 0]


@pytest.mark.parametrize("full_after, sweeps_after", [(0, 10**9), (0, 0)])
def test_full_rounds_and_sweeps_alone_reach_the_same_values(monkeypatch, full_after, sweeps_after):
    """Hoffman and Karp's rounds from the start, and van der Wal's sweeps alone."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=5))
    plain = babytris.solve_transitions(t, opponent="minimax", tol=1e-10)
    monkeypatch.setattr(sweeping, "FULL_ROUNDS_AFTER", full_after)
    monkeypatch.setattr(sweeping, "SWEEPS_ONLY_AFTER", sweeps_after)
    monkeypatch.setattr(sweeping, "EXACT_GIVEN_UP_AFTER", sweeps_after)
    other = babytris.solve_transitions(t, opponent="minimax", tol=1e-10)
    assert other.converged
    assert np.max(np.abs(other.values - plain.values)) <= other.error_bound + plain.error_bound
    assert np.array_equal(other.policy, plain.policy)
    if sweeps_after:  # each round's evaluations run until the opponent is settled, then 2 sweeps
        assert other.iterations < plain.iterations and other.evaluation_sweeps.max() > 3


def test_a_long_bag_game_converges_in_few_rounds():
    """A 3x4 bag game at discount 0.995: the best responses gain little a round, the misses run out,
    and sweeps alone (4 a round) took 400+ rounds; now an exact evaluation follows each round that
    gains, until 12 misses give the exact evaluations up, and a round's sweeps stop at ``tol``."""
    rules = babytris.Rules(
        width=3,
        height=4,
        pieces=[[(0, 0), (0, 1), (1, 0)], [(0, 0), (1, 0)], [(0, 0), (1, 0), (2, 0)]],
        randomizer="bag",
    )
    strategy = babytris.solve(rules, discount=0.995, opponent="minimax", tol=1e-10, max_iter=5000)
    mpi = babytris.solve(rules, discount=0.995, opponent="minimax", tol=1e-10, method="mpi", max_iter=5000)
    assert strategy.method == "strategy" and strategy.converged and mpi.converged
    assert strategy.iterations <= 25 < mpi.iterations  # (17 and 97)
    assert np.max(np.abs(strategy.values - mpi.values)) <= strategy.error_bound + mpi.error_bound


def test_once_exact_evaluations_are_given_up_rounds_run_mpi_s_sweeps(monkeypatch):
    """solve() hands strategy iteration modified policy iteration's number of sweeps for the
    rounds after the exact evaluations are given up (here from the start)."""
    for name in ("FULL_ROUNDS_AFTER", "SWEEPS_ONLY_AFTER", "EXACT_GIVEN_UP_AFTER"):
        monkeypatch.setattr(sweeping, name, 0)
    s = babytris.solve(width=4, height=4, discount=0.95, opponent="minimax", tol=1e-10)
    assert s.method == "strategy" and s.converged
    assert default_eval_sweeps(0.95) == 5 != default_strategy_sweeps(0.95)
    assert max(s.evaluation_sweeps[1:]) == 5


def test_values_beyond_the_tolerance_s_digits_still_converge():
    """Values near 1e8 at discount 0.999: exact evaluations land a few units in the last place off the
    sweeps' own fixed point, and tol=1e-8 is below one; the rounds then evaluate by sweeps and pass."""
    rules = babytris.Rules(width=4, height=4, line_scores=(0, 1e5, 3e5, 5e5))
    strategy = babytris.solve(rules, discount=0.999, opponent="minimax", max_iter=2000)
    mpi = babytris.solve(rules, discount=0.999, opponent="minimax", method="mpi", max_iter=2000)
    assert strategy.converged and mpi.converged
    assert abs(strategy.start_value - mpi.start_value) <= strategy.error_bound + mpi.error_bound


def test_a_response_refuses_a_sweeper_set_up_anew():
    """A re-run Sweeper.__init__ frees the arrays a response works on: it must refuse, not walk them."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
    sweeper, values, board_values, policy = _sweeper(t)
    response = _strategy.OpponentResponse(sweeper)
    sweeper.greedy_sweep()
    response.start()
    small = babytris.enumerate_boards(babytris.Rules(width=3, height=3))
    _, v, w, p = _sweeper(small)
    order, layer_starts = sweep_order(small)
    sweeper.__init__(
        small.offsets,
        small.next_board,
        small.lines,
        np.asarray(small.rules.line_scores, dtype=np.float64),
        np.asarray(small.rules.probabilities, dtype=np.float64),
        0.9,
        v,
        w,
        p,
        order,
        layer_starts,
        pieces=1,
    )
    _strategy.OpponentResponse(sweeper)  # (allocates the sweeper's arrays anew)
    for call in (response.start, lambda: response.step(0.0), lambda: response.pieces):
        with pytest.raises(ValueError, match="set up anew"):
            call()
    with pytest.raises(ValueError, match="not set up"):
        _strategy.OpponentResponse.__new__(_strategy.OpponentResponse).start()


def test_evaluation_sweeps_clear_the_noted_pieces():
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
    sweeper, *_ = _sweeper(t)
    _strategy.OpponentResponse(sweeper)
    sweeper.greedy_sweep()
    assert sweeper.least_noted
    sweeper.evaluation_sweep()
    assert not sweeper.least_noted


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
        (dict(opponent="best_response", player="random"), "strategy"),
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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    rules=small_rules(variants=True),
    discount=st.sampled_from([0.0, 0.3, 0.9, 0.99]),
    bag=st.booleans(),
    reward=st.sampled_from([None, babytris.Reward(loss=3.0, height=-0.25)]),
    threads=st.sampled_from([1, 3]),
    seed=st.integers(0, 2**31),
)
def test_the_response_on_random_games(rules, discount, bag, reward, threads, seed):
    """Bags (pieces of zero chance), a cost for losing (the dead value), rewards per move (no noting
    by the greedy sweep), random board values: start() gives the least valuable piece of positive
    chance (first of equals), and every step's values are the fixed point of the pieces it evaluated."""
    if bag and rules.objective != "combo":
        rules = dataclasses.replace(rules, randomizer="bag", probabilities=None)
    t = babytris.enumerate_boards(rules)
    assume(t.n_moves > 0)
    roles = resolve(t, "minimax", None, reward)
    n, n_pieces = t.n_boards, rules.n_pieces
    probs, chance = np.asarray(rules.probabilities, dtype=np.float64), None
    if t.bags is not None:
        chance, probs = t.bags.astype(np.int32), bag_chances(rules).ravel()
    dead = roles.dead_value(rules)
    values, board_values = np.zeros(n * n_pieces), np.zeros(n)
    live = np.diff(t.offsets[::n_pieces]) > 0
    board_values[live] = np.random.default_rng(seed).normal(size=int(live.sum())) * 3
    board_values[~live] = dead
    policy = np.full(n * n_pieces, -1, dtype=np.int16)
    order, layer_starts = sweep_order(t)
    rewards = roles.move_rewards(t)
    sweeper = _sweep.Sweeper(
        t.offsets, t.next_board, t.lines, np.asarray(rules.line_scores, dtype=np.float64), probs, discount,
        values, board_values, policy, order, layer_starts, pieces=1, dead_value=dead, chance=chance,
        move_reward=rewards, independent_layers=independent_layers(t), n_threads=threads,
    )  # fmt: skip
    response = _strategy.OpponentResponse(sweeper)
    sweeper.greedy_sweep()
    response.start()
    chances = probs.reshape(-1, n_pieces)[chance] if chance is not None else np.broadcast_to(probs, (n, n_pieces))
    masked = np.where(chances > 0, values.reshape(n, n_pieces), np.inf)
    assert np.array_equal(response.pieces[order], np.argmin(masked, axis=1)[order])
    for _ in range(20):
        pieces = response.pieces.astype(np.int64)
        moved = response.step(0.0)
        sweeps = 3000 if discount > 0.9 else 400
        expected, _ = _joint_values(t, policy, pieces, discount, sweeps, rewards, dead, board_values)
        assert np.max(np.abs(expected[live] - board_values[live])) <= 1e-8 * (1 + np.abs(expected).max())
        if moved == 0:
            break


@settings(max_examples=60, deadline=None)
@given(data=st.data(), least=st.booleans(), slack=st.sampled_from([0.0, 1e-12]))
def test_chosen_pieces_are_the_first_within_slack(data, least, slack):
    """The compiled choice against numpy: the first piece of positive chance within the slack of the
    row's least (most), piece 0 where a row has a NaN or no piece to give."""
    rows = data.draw(st.integers(0, 6))
    cell = st.sampled_from([0.0, 1.0, 1.0 + 1e-13, 2.0, -3.0, float("nan")])
    v = np.array(data.draw(st.lists(cell, min_size=3 * rows, max_size=3 * rows)), dtype=np.float64).reshape(-1, 3)
    chance = st.sampled_from([0.0, 0.5])
    c = np.array(data.draw(st.lists(chance, min_size=3 * rows, max_size=3 * rows)), dtype=np.float64).reshape(-1, 3)
    for chances in (None, c):
        allowed = np.ones_like(v, dtype=bool) if chances is None else chances > 0
        expected = np.zeros(len(v), dtype=np.int16)
        for b, row in enumerate(v):
            candidates = row[allowed[b]]
            if len(candidates) == 0 or np.isnan(candidates).any():
                continue
            extreme = candidates.min() if least else candidates.max()
            within = allowed[b] & ((row <= extreme + slack) if least else (row >= extreme - slack))
            expected[b] = np.argmax(within)
        assert np.array_equal(_strategy.chosen_pieces(v, slack, least, chances), expected)


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_the_chosen_moves_cache_changes_no_value(monkeypatch, opponent):
    """Evaluation sweeps reading the chosen moves from the cache equal those reading the move table."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=5))
    cached = babytris.solve_transitions(t, opponent=opponent)
    monkeypatch.setattr(sys.modules["babytris.solvers.sweep_arrays"], "CHOSEN_MOVES_STATES", 0)
    plain = babytris.solve_transitions(t, opponent=opponent)
    assert np.array_equal(cached.values, plain.values) and np.array_equal(cached.policy, plain.policy)
    assert cached.iterations == plain.iterations


def test_the_chosen_moves_cache_is_read_only_after_a_greedy_sweep():
    """Before any greedy sweep, and after the moves are re-chosen, evaluation sweeps read the table."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
    sweeper, values, board_values, policy = _sweeper(t, pieces=_sweep.PIECES_RANDOM)
    sweeper.cache_chosen_moves()
    sweeper.evaluation_sweep()  # no move chosen yet: every board is worth the dead value
    assert not board_values.any()
    reference, ref_values, ref_board_values, ref_policy = _sweeper(t, pieces=_sweep.PIECES_RANDOM)
    for s in (sweeper, reference):
        s.greedy_sweep()
        s.first_best_moves(0.5)  # wide ties: many moves change
        s.evaluation_sweep()
    assert np.array_equal(policy, ref_policy) and np.array_equal(board_values, ref_board_values)
