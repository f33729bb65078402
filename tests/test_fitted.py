"""Fitted value iteration: targets and greedy policies equal plain loops; exact regret of the policy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import babytris
from babytris import fitted, reference
from babytris.features import feature_matrix, rows_from_bits
from babytris.states import engine
from strategies import small_rules

FEATURES = ("max_height", "holes", "covers")


def plain_targets(rules, boards, weights, features, discount, loss):
    """y(b) = sum_q p(q) max_a [points + discount * V(b')], one board and piece at a time."""
    def value(bits):
        return float(feature_matrix(rows_from_bits([bits], rules.width, rules.height), rules.width, features)[0]
                     @ weights)

    out = []
    for bits in boards:
        y = 0.0
        for piece, prob in enumerate(rules.probabilities):
            moves = engine(rules).successors(int(bits), piece)
            best = max((rules.line_scores[lines] + discount * value(nxt) for _, nxt, lines in moves), default=-loss)
            y += prob * best
        out.append(y)
    return np.array(out)


@settings(max_examples=25, deadline=None)
@given(rules=small_rules(sizes=(2, 3)), data=st.data())
def test_targets_and_greedy_policy_equal_plain_loops(rules, data):
    t = babytris.enumerate_boards(rules)
    model = fitted._ExactGame(t)
    weights = np.array(data.draw(st.lists(st.floats(-3, 3), min_size=4, max_size=4)))
    discount = data.draw(st.floats(0.0, 0.95))
    states = np.arange(t.n_boards)
    y = np.zeros(t.n_boards)
    phi_after = feature_matrix(model.rows_of_all, rules.width, FEATURES) @ weights
    for piece, prob in enumerate(rules.probabilities):
        offsets, nxt, rewards = model.moves(states, piece)
        y += prob * fitted._segment_max(rewards + discount * phi_after[nxt], offsets, -2.0)
    np.testing.assert_allclose(y, plain_targets(rules, t.boards, weights, FEATURES, discount, 2.0), atol=1e-9)

    value = fitted.LinearValue(FEATURES, weights, rules.width)
    policy = fitted.greedy_policy(t, value, discount=discount)
    for i, bits in enumerate(t.boards):
        for piece in range(rules.n_pieces):
            moves = engine(rules).successors(int(bits), piece)
            if not moves:
                assert policy[i, piece] == -1
                continue
            q = [rules.line_scores[lines] + discount * float(value(rows_from_bits([nxt], rules.width, rules.height))[0])
                 for _, nxt, lines in moves]
            assert policy[i, piece] == moves[int(np.argmax(q))][0]


def test_segment_argmax_takes_the_first_of_equals():
    values = np.array([1.0, 3.0, 3.0, 2.0, 5.0, 5.0])
    offsets = np.array([0, 4, 4, 6])
    assert fitted._segment_argmax(values, offsets).tolist() == [1, -1, 0]
    assert fitted._segment_max(values, offsets, -7.0).tolist() == [3.0, -7.0, 5.0]


def test_fit_reaches_its_fixed_point():
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
    result = fitted.fitted_value_iteration(t, FEATURES, n_samples=500, seed=2, tol=1e-9)
    assert result.converged and result.history.shape == (result.iterations[0], 4)
    np.testing.assert_allclose(result.history[-1], result.value.weights)
    # The targets of the final weights on the same sample fit back to those weights.
    model = fitted._ExactGame(t)
    states = fitted._sample(model, 500, None, 0.3, 0.9, np.random.default_rng(2))
    weights = result.value.weights
    y = sum(prob * fitted._segment_max(rewards + 0.9 * result.value(model.rows(nxt)), offsets, 0.0)
            for prob, (offsets, nxt, rewards) in zip(rules_probabilities(t), (model.moves(states, p) for p in (0, 1))))
    again, *_ = np.linalg.lstsq(feature_matrix(model.rows(states), 4, FEATURES), y, rcond=None)
    np.testing.assert_allclose(again, weights, atol=1e-7)


def rules_probabilities(t):
    return t.rules.probabilities


def numpy_policy_value(t, policy, discount):
    """V(b, p) of a policy by plain Jacobi iteration over the table (independent of the sweeps)."""
    rules = t.rules
    n, P = t.n_boards, rules.n_pieces
    state_of_edge = np.repeat(np.arange(n * P), np.diff(t.offsets))
    chosen = t.placement == policy.reshape(-1)[state_of_edge]
    edge = np.full(n * P, -1)
    edge[state_of_edge[chosen]] = np.flatnonzero(chosen)
    live = edge >= 0
    points = np.where(live, np.asarray(rules.line_scores)[t.lines[edge]], 0.0)
    nxt = np.where(live, t.next_board[edge], 0)
    values = np.zeros(n * P)
    for _ in range(400):  # 0.9 ** 400 < 1e-18
        board_values = values.reshape(n, P) @ np.asarray(rules.probabilities)
        values = np.where(live, points + discount * board_values[nxt], 0.0)
    return values.reshape(n, P)


@pytest.mark.parametrize("height", [3, 4])
def test_the_policys_exact_value_is_within_its_reported_regret(height):
    rules = babytris.Rules(width=4, height=height)
    t = babytris.enumerate_boards(rules)
    result = fitted.fitted_value_iteration(t, FEATURES, n_samples=1000, rounds=2, seed=0)
    policy = fitted.greedy_policy(t, result.value)
    report = fitted.regret(t, policy)
    mine = numpy_policy_value(t, policy, 0.9)
    optimal = babytris.solve(rules, tol=1e-10)
    start = t.board_index(0)
    assert report.policy == pytest.approx(mine[start] @ [0.5, 0.5], abs=1e-8)
    assert report.optimal == pytest.approx(optimal.start_value, abs=1e-9)
    assert report.mean_regret == pytest.approx(float(np.mean(optimal.values - mine)), abs=1e-8)
    assert report.policy >= report.optimal - report.regret - 1e-9
    assert 0 < report.regret < report.optimal and report.mean_regret > 0
    if height == 3:  # and the pure-Python reference, on the small board
        given = {(int(b), p): int(policy[i, p]) for i, b in enumerate(t.boards) for p in range(2) if policy[i, p] >= 0}
        assert reference.solve(rules, player=given, tol=1e-10).start_value == pytest.approx(report.policy, abs=1e-8)


def test_later_rounds_sample_the_greedy_play():
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=5))
    result = fitted.fitted_value_iteration(t, FEATURES, n_samples=300, rounds=3, seed=5)
    assert len(result.iterations) == 3 and result.history.shape[0] == sum(result.iterations)
    assert "rounds=3" in repr(result)


@pytest.mark.parametrize("kwargs, words", [
    (dict(discount=1.0), "discount"),
    (dict(n_samples=0), "n_samples"),
    (dict(rounds=0), "rounds"),
    (dict(epsilon=1.5), "epsilon"),
    (dict(tol=0), "tol"),
    (dict(loss=-1), "loss"),
    (dict(features=("height",)), "unknown feature"),
])
def test_bad_arguments(kwargs, words):
    t = babytris.enumerate_boards(babytris.Rules(width=3, height=3))
    with pytest.raises(ValueError, match=words):
        fitted.fitted_value_iteration(t, **kwargs)
    with pytest.raises(ValueError, match="Transitions"):
        fitted.fitted_value_iteration("4x4")
