"""EXP3 over exact policies (issue 15, part 3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import babytris
from babytris.analysis.adaptive import exp3, exp3_study, standard_experts, standard_opponents


@pytest.fixture(scope="module")
def t44():
    return babytris.enumerate_boards(babytris.Rules(width=4, height=4))


@pytest.fixture(scope="module")
def optimal(t44):
    return babytris.solve_transitions(t44, discount=0.9)


@pytest.fixture(scope="module")
def minimax(t44):
    return babytris.solve_transitions(t44, discount=0.9, opponent="minimax")


def first_legal(t):
    """A poor player: each state's first placement in the table (-1 where none fits)."""
    counts = np.diff(t.offsets)
    first = np.where(counts > 0, t.placement[np.minimum(t.offsets[:-1], len(t.placement) - 1)].astype(np.int64), -1)
    return first.reshape(t.n_boards, t.rules.n_pieces)


def exp3_probabilities(result) -> np.ndarray:
    """Auer et al.'s figure 1, recomputed from the draws and rewards alone
    (one round a block of placements)."""
    K, g, b = len(result.experts), result.gamma, result.block
    w = np.ones(K)
    out = []
    for first in range(0, result.n_placements, b):
        i, x = result.chosen[first], result.points[first : first + b].sum() / (result.scale * b)
        assert (result.chosen[first : first + b] == i).all()
        p = (1 - g) * w / w.sum() + g / K
        out += [p] * len(result.points[first : first + b])
        w[i] *= math.exp(g * x / (p[i] * K))
        w /= w.max()  # (rescaled: only the ratios matter)
    return np.array(out)


def test_one_expert_is_that_expert(t44, optimal):
    r = exp3(t44, {"optimal": optimal}, "random", n_placements=500, seed=3)
    assert r.gamma == 1.0 and r.regret == 0.0 and r.bound == 0.0
    assert np.array_equal(r.points, r.expert_points[0]) and not r.chosen.any()
    assert np.all(r.probabilities == 1.0)


def test_identical_experts_have_no_regret(t44, optimal):
    r = exp3(t44, {"a": optimal, "b": optimal.policy, "c": optimal}, "random", n_placements=800, seed=1)
    assert r.regret == 0.0 and np.array_equal(r.expert_points[0], r.expert_points[2])
    assert len(set(r.chosen.tolist())) == 3  # all drawn, all the same moves


@pytest.mark.parametrize("block", [1, 7, 100])
def test_probabilities_follow_auer_et_al(t44, optimal, minimax, block):
    experts = {"optimal": optimal, "max-min": minimax, "poor": first_legal(t44)}
    r = exp3(t44, experts, "random", n_placements=3000, block=block)
    assert np.allclose(r.probabilities.sum(axis=1), 1.0)
    assert r.probabilities.min() >= r.gamma / 3 - 1e-15
    rounds = math.ceil(3000 / block)
    assert r.gamma == pytest.approx(math.sqrt(3 * math.log(3) / ((math.e - 1) * rounds)))
    assert r.bound == pytest.approx(2 * math.sqrt(math.e - 1) * math.sqrt(rounds * 3 * math.log(3)) * 6 * block)
    assert np.all(np.diff(r.bound_curve()) >= 0) and np.unique(r.bound_curve()).size == rounds
    assert np.allclose(r.probabilities, exp3_probabilities(r), rtol=0, atol=1e-12)


def test_gamma_one_draws_uniformly(t44, optimal, minimax):
    r = exp3(t44, {"optimal": optimal, "max-min": minimax}, "random", n_placements=2000, gamma=1.0, seed=5)
    assert np.all(r.probabilities == 0.5)
    assert abs(r.chosen.mean() - 0.5) < 4 * 0.5 / math.sqrt(2000)


def test_exp3_learns_to_follow_the_better_expert(t44, optimal):
    r = exp3(t44, {"poor": first_legal(t44), "optimal": optimal}, "random", n_placements=5000, seed=2)
    assert r.best_expert == "optimal"
    assert r.probabilities[-1, 1] > 0.9 and r.chosen[-1000:].mean() > 0.8
    assert 0 < r.regret < r.bound
    assert r.bound == 2 * math.sqrt(math.e - 1) * math.sqrt(5000 * 2 * math.log(2)) * 6
    curve = r.bound_curve()
    assert curve[-1] == r.bound and curve[0] == 2 * math.sqrt(math.e - 1) * math.sqrt(2 * math.log(2)) * 6
    assert r.regret_curve()[-1] == pytest.approx(r.regret)


def test_an_expert_alone_is_a_game_of_play(t44, optimal, minimax):
    """Against a deterministic opponent the runs alone are the games
    babytris.play plays (no piece drawn, no game over at 4x4)."""
    r = exp3(t44, {"optimal": optimal, "max-min": minimax}, minimax, n_placements=1000)
    for k, expert in enumerate((optimal, minimax)):
        game = babytris.play(t44, expert, minimax, n_placements=1000)
        assert game.placements[0] == 1000 and r.expert_points[k].sum() == game.points[0]
    assert r.opponent == "minimax" and r.games == 1


def test_a_lost_game_starts_a_new_one(t44):
    poor = first_legal(t44)
    r = exp3(t44, {"poor": poor}, "random", n_placements=300, seed=0)
    assert r.games > 1  # the first legal placement loses fast
    lost = babytris.play(t44, poor, "random", n_placements=300, n_games=50)
    assert (lost.placements < 300).all()


def test_the_study_covers_the_tournaments_opponents():
    t = babytris.enumerate_boards(babytris.Rules(width=3, height=4))
    opponents = standard_opponents(t)
    assert list(opponents) == ["random"] + [f"{m} {d}" for d in (0.1, 0.9) for m in ("minimax", "minavg", "gaps")]
    experts = standard_experts(t, opponents=opponents)
    assert list(experts)[:2] == ["optimal", "max-min"] and len(experts) == 8
    results = exp3_study(t, n_placements=300)
    assert list(results) == list(opponents)
    for result in results.values():
        assert result.experts == tuple(experts) and result.n_placements == 300


def test_plot_regret(t44, optimal, minimax):
    pytest.importorskip("matplotlib")
    from babytris.draw.pictures import plot_regret

    results = {
        name: exp3(t44, {"optimal": optimal, "max-min": minimax}, opp, n_placements=400, opponent_name=name)
        for name, opp in (("random", "random"), ("minimax", minimax))
    }
    ax = plot_regret(results)
    assert len(ax.lines) == 3
    assert np.array_equal(ax.lines[1].get_ydata(), results["minimax"].regret_curve())
    with pytest.raises(ValueError, match="results"):
        plot_regret({})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n_placements=0), "n_placements"),
        (dict(n_placements=np.int64(10**8)), "n_placements"),
        (dict(gamma=0.0), "gamma"),
        (dict(gamma=1.5), "gamma"),
        (dict(seed=-1), "seed"),
        (dict(block=0), "block"),
        (dict(n_placements=10, block=11), "block"),
        (dict(experts={}), "experts"),
        (dict(experts={"r": "random"}), "experts"),
        (dict(opponent="minimax"), "opponent"),
    ],
)
def test_bad_arguments(t44, optimal, kwargs, message):
    args = dict(experts={"optimal": optimal}, opponent="random") | kwargs
    experts, opponent = args.pop("experts"), args.pop("opponent")
    with pytest.raises(ValueError, match=message):
        exp3(t44, experts, opponent, **args)


def test_numpy_arguments_are_accepted(t44, optimal):
    r = exp3(t44, {"optimal": optimal}, "random", n_placements=np.int32(10), gamma=np.float64(0.5), seed=np.uint8(1))
    assert r.n_placements == 10 and r.gamma == 0.5


def test_previews_are_refused():
    t = babytris.enumerate_boards(babytris.Rules(width=3, height=3, preview=1))
    with pytest.raises(ValueError, match="previews"):
        exp3(t, {"x": np.zeros((t.n_boards, 2), dtype=int)}, "random")
