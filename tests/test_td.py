"""TD(lambda) with a small network: gradients, the exploration rule, one update by hand, learning a tiny game."""

import copy

import numpy as np
import pytest

import babytris
from babytris.big import fitted, td
from babytris.big.features import rows_from_bits
from babytris.placements import engine


def test_gradient_equals_finite_differences():
    net = td.ValueNetwork(3, 4, hidden=5, seed=1)
    x = np.random.default_rng(0).integers(0, 2, 12).astype(float)
    value, grads = net.value_and_gradient(x)
    assert value == pytest.approx(net.values(x[None, :])[0])
    for k, (name, g) in enumerate(zip(("W1", "b1", "w2", "b2"), grads)):
        numeric = np.zeros_like(g, dtype=float)
        for index in np.ndindex(np.shape(g)):
            for sign in (1, -1):
                bumped = copy.deepcopy(net)
                delta = tuple(np.zeros_like(d, dtype=float) for d in grads)
                delta[k][index] = 1.0
                bumped.step(delta, sign * 1e-6)
                numeric[index] += sign * bumped.values(x[None, :])[0] / 2e-6
        np.testing.assert_allclose(g, numeric, atol=1e-6, err_msg=name)


def test_exploration_follows_the_gain_over_the_worst_move():
    rng = np.random.default_rng(3)
    q = np.array([1.0, 4.0, 2.0, 1.0])  # gains 0, 3, 1, 0
    counts = np.bincount([td._explore(q, rng) for _ in range(20_000)], minlength=4)
    assert counts[0] == counts[3] == 0
    assert counts[1] / counts.sum() == pytest.approx(0.75, abs=0.015)
    assert set(td._explore(np.ones(3), rng) for _ in range(200)) == {0, 1, 2}  # all equal: uniform


def test_one_update_by_hand():
    rules = babytris.Rules(width=4, height=4)
    t = babytris.enumerate_boards(rules)
    net = td.ValueNetwork(4, 4, hidden=6, seed=2)
    before = copy.deepcopy(net)
    td.td_lambda(t, n_games=1, max_placements=1, explore=False, network=net, seed=9, learning_rate=0.1)
    piece = int(np.random.default_rng(9).choice(2, p=[0.5, 0.5]))  # the game's first draw
    moves = engine(rules).successors(0, piece)
    after = before(rows_from_bits([m[1] for m in moves], 4, 4))
    q = 1.0 + 5.0 * np.array([m[2] for m in moves]) + 0.9 * after
    value, grads = before.value_and_gradient(np.zeros(16))
    before.step(grads, 0.1 * (q.max() - value))
    for mine, theirs in zip((net.W1, net.b1, net.w2, net.b2), (before.W1, before.b1, before.w2, before.b2)):
        np.testing.assert_allclose(mine, theirs, atol=1e-12)


def test_learns_a_tiny_game_to_zero_regret():
    t = babytris.enumerate_boards(babytris.Rules(width=3, height=3))
    result = td.td_lambda(
        t,
        n_games=400,
        max_placements=40,
        points=True,
        game_over=0.0,
        explore=False,
        trace=0.0,
        learning_rate=0.05,
        report_every=100,
        seed=0,
    )
    report = fitted.regret(t, fitted.greedy_policy(t, result.network))
    assert report.regret == pytest.approx(0.0, abs=1e-8)
    assert result.games.tolist() == [100, 200, 300, 400] and (result.explored == 0).all()


def test_same_seed_same_curve():
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=3))
    a = td.td_lambda(t, n_games=60, report_every=20, seed=4, max_placements=30)
    b = td.td_lambda(t, n_games=60, report_every=20, seed=4, max_placements=30)
    assert a.lines_per_game.tolist() == b.lines_per_game.tolist()
    np.testing.assert_array_equal(a.network.W1, b.network.W1)
    assert 0 < a.explored[-1] < 1 and "60 games" in repr(a)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(n_games=0), "n_games"),
        (dict(n_games=5, trace=2.0), "trace"),
        (dict(n_games=5, hidden=0), "hidden"),
        (dict(n_games=5, report_every=0), "report_every"),
        (dict(n_games=5, line_reward=float("nan")), "line_reward"),
        (dict(n_games=5, game_over=float("-inf")), "game_over"),
        (dict(n_games=5, placement_reward=1e308), "placement_reward"),
    ],
)
def test_bad_arguments(kwargs, words):
    t = babytris.enumerate_boards(babytris.Rules(width=3, height=3))
    with pytest.raises(ValueError, match=words):
        td.td_lambda(t, **kwargs)
