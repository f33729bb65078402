"""TD(lambda) with a small network: gradients, the exploration rule, one update by hand, learning a tiny game,
and the compiled games against the numpy loop."""

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import babytris
from babytris.big import _td, fitted, td
from babytris.big.features import rows_from_bits
from babytris.big.tetris import Tetris
from babytris.engine.placements import engine


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
    rng = td._Draws(np.random.default_rng(3), np.array([1.0]))
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
    reward = 1.0 + 5.0 * np.array([m[2] for m in moves])
    best = int(np.argmax(reward + after))  # the paper's best move: argmax (r + V(s')), undiscounted
    value, grads = before.value_and_gradient(np.zeros(16))
    before.step(grads, 0.1 * (reward[best] + 0.9 * after[best] - value))  # eq. 1: toward r + gamma V*(s')
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


# --- the compiled games (babytris.big._td) against the numpy loop on the same draws ----------------


def _same_run(a, b):
    # The same games; the weights equal to rounding (sums in another order: BLAS against the kernel's).
    assert a.games.tolist() == b.games.tolist()
    assert a.lines_per_game.tolist() == b.lines_per_game.tolist()
    assert a.placements_per_game.tolist() == b.placements_per_game.tolist()
    assert a.explored.tolist() == b.explored.tolist()
    for mine, theirs in zip((a.network.W1, a.network.b1, a.network.w2), (b.network.W1, b.network.b1, b.network.w2)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-12)
    assert a.network.b2 == pytest.approx(b.network.b2, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("target, seed", [("best", 6), ("explored", 5)])
def test_compiled_games_equal_the_numpy_loop_on_10x20(target, seed):
    tetris = Tetris(width=10, height=20)
    a = td.td_lambda(tetris, n_games=12, report_every=5, seed=seed, target=target)  # compiled on a big board
    b = td.td_lambda(tetris, n_games=12, report_every=5, seed=seed, target=target, engine="numpy")
    _same_run(a, b)
    assert a.games.tolist() == [5, 10, 12] and a.placements_per_game.min() > 10
    # rows were cleared (the afterstates summed afresh) and the games ended with a piece that fits nowhere
    assert a.lines_per_game.sum() > 0 and a.placements_per_game.max() < 10_000
    assert 0 < a.explored.min()


def test_compiled_games_equal_the_numpy_loop_when_every_move_scores_alike():
    # A network of zeros values every board alike: the first moves tie, and the draw picks one uniformly.
    tetris = Tetris(width=5, height=8)
    runs = []
    for kind in ("compiled", "numpy"):
        net = td.ValueNetwork(5, 8, hidden=4, seed=0)
        net.W1[:], net.b1[:], net.w2[:], net.b2 = 0.0, 0.0, 0.0, 0.0
        runs.append(td.td_lambda(tetris, n_games=6, report_every=2, seed=11, network=net, engine=kind))
    _same_run(*runs)


# derandomize: the two loops add in other orders, and a near-tie between two moves (possible where
# the hidden units saturate) may round apart; fixed examples keep such a case from making CI flaky.
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    width=st.integers(3, 6),
    height=st.integers(4, 8),
    pieces=st.sampled_from([("tetrominoes",), ("I", "O"), ("L", "T", "S")]),
    points=st.booleans(),
    explore=st.booleans(),
    target=st.sampled_from(td.TARGETS),
    moves=st.sampled_from(td.MOVE_RULES),
    trace=st.sampled_from([0.0, 0.6, 1.0]),
    hidden=st.integers(1, 9),
    max_placements=st.integers(1, 40),
    seed=st.integers(0, 2**63 - 1),
)
def test_compiled_games_equal_the_numpy_loop(
    width, height, pieces, points, explore, target, moves, trace, hidden, max_placements, seed
):
    tetris = Tetris(width=width, height=height, pieces=pieces)
    kwargs = dict(
        n_games=7,
        report_every=3,
        seed=seed,
        points=points,
        explore=explore,
        target=target,
        moves=moves,
        trace=trace,
        hidden=hidden,
        max_placements=max_placements,
        learning_rate=0.05,
    )
    _same_run(td.td_lambda(tetris, engine="compiled", **kwargs), td.td_lambda(tetris, engine="numpy", **kwargs))


def test_a_run_is_the_start_of_a_longer_one():
    # What lets one 700,000-game run serve the 10,000 and 300,000 rows of `babytris reproduce`.
    tetris = Tetris(width=6, height=8)
    short = td.td_lambda(tetris, n_games=40, report_every=10, seed=3)
    again = td.td_lambda(tetris, n_games=40, report_every=40, seed=3)  # other blocks, the same games
    long = td.td_lambda(tetris, n_games=90, report_every=10, seed=3)
    assert short.lines_per_game.tolist() == long.lines_per_game[:4].tolist()
    assert short.placements_per_game.tolist() == long.placements_per_game[:4].tolist()
    assert again.placements_per_game[0] == pytest.approx(short.placements_per_game.mean(), rel=1e-12)
    np.testing.assert_array_equal(short.network.W1, again.network.W1)
    assert not np.array_equal(short.network.W1, long.network.W1)


def test_an_interrupted_run_keeps_the_games_played():
    tetris = Tetris(width=6, height=8)
    net = td.ValueNetwork(6, 8, seed=1)

    def stop(games, lines):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        td.td_lambda(tetris, n_games=50, report_every=10, seed=2, network=net, progress=stop)
    reference = td.td_lambda(tetris, n_games=10, seed=2, network=td.ValueNetwork(6, 8, seed=1)).network
    for mine, theirs in zip((net.W1, net.b1, net.w2), (reference.W1, reference.b1, reference.w2)):
        np.testing.assert_array_equal(mine, theirs)
    assert net.b2 == reference.b2 and net.W1.flags.c_contiguous


def test_the_kernel_draws_pieces_as_the_playouts_do():
    draws = _td.Draws(7, [0.25, 0.25, 0.5])
    pieces = np.array([draws.piece() for _ in range(40_000)])
    assert np.bincount(pieces, minlength=3) / len(pieces) == pytest.approx([0.25, 0.25, 0.5], abs=0.01)
    assert _td.seeded_state(7).dtype == np.uint64 and _td.seeded_state(7).tolist() != _td.seeded_state(8).tolist()
    with pytest.raises(ValueError, match="n must be"):
        draws.below(0)


def test_engine_choices():
    t = babytris.enumerate_boards(babytris.Rules(width=3, height=3))
    with pytest.raises(ValueError, match="engine: 'compiled' runs on big boards"):
        td.td_lambda(t, n_games=1, engine="compiled")
    with pytest.raises(ValueError, match="engine must be one of"):
        td.td_lambda(Tetris(width=4, height=6), n_games=1, engine="fast")
    with pytest.raises(ValueError, match="network: its inputs are 12 cells"):
        td.td_lambda(Tetris(width=4, height=6), n_games=1, network=td.ValueNetwork(3, 4))
    with pytest.raises(ValueError, match="seed"):
        td.td_lambda(Tetris(width=4, height=6), n_games=1, seed=-1)


def test_the_two_targets_differ_only_where_a_move_is_explored():
    """Without exploration the move played is the best: the two targets train
    the same network; with it, the paper's target steps toward the best move's
    score and the weights part."""
    tetris = Tetris(width=6, height=8)
    same = [td.td_lambda(tetris, n_games=5, seed=2, explore=False, target=target) for target in td.TARGETS]
    np.testing.assert_array_equal(same[0].network.W1, same[1].network.W1)
    explored = [td.td_lambda(tetris, n_games=5, seed=2, target=target) for target in td.TARGETS]
    assert explored[0].explored.min() > 0
    assert not np.allclose(explored[0].network.W1, explored[1].network.W1)
    with pytest.raises(ValueError, match="target must be one of 'best', 'explored'"):
        td.td_lambda(tetris, n_games=1, target="sarsa")


@pytest.mark.parametrize("moves", td.MOVE_RULES)
def test_exploration_weighs_the_afterstates_values_as_eq_5_writes(monkeypatch, moves):
    """eq. 5 weighs move k by V(s(a_k)) - min V: the afterstates' values, no
    reward; ``moves="discounted"`` by r + gamma V (babytris's earlier rule)."""
    seen: list[tuple[np.ndarray, np.ndarray]] = []  # (what exploration weighed, the afterstates' values)

    class Watched(td.ValueNetwork):
        def values(self, x):
            out = super().values(x)  # (the loop asks it only for the afterstates' values)
            seen.append((None, out))
            return out

    explore = td._explore

    def watched(q, draws):
        seen[-1] = (q.copy(), seen[-1][1])
        return explore(q, draws)

    monkeypatch.setattr(td, "_explore", watched)
    tetris = Tetris(width=6, height=6)
    net = Watched(6, 6, hidden=5, seed=1)
    td.td_lambda(tetris, n_games=6, seed=4, moves=moves, engine="numpy", network=net, line_reward=5.0)
    weighed = [(q, v) for q, v in seen if q is not None]
    assert len(weighed) > 20
    rewards = np.concatenate([q - 0.9 * v for q, v in weighed])
    if moves == "paper":
        assert all(np.array_equal(q, v) for q, v in weighed)
    else:  # what remains is the reward: 1 a placement, 5 a line
        np.testing.assert_allclose(rewards, np.round(rewards), atol=1e-9)
        assert set(np.round(rewards).tolist()) <= {1.0, 6.0, 11.0, 16.0, 21.0} and rewards.min() >= 1 - 1e-9
    with pytest.raises(ValueError, match="moves must be one of 'paper', 'discounted'"):
        td.td_lambda(tetris, n_games=1, moves="greedy")


def test_the_first_table_3_row_tests_one_cause_at_a_time(monkeypatch):
    """The 10,000-game row's causes, each one rerun changed alone (here on 200 games)."""
    from babytris.claims import pirnay

    monkeypatch.setattr(pirnay, "TABLE_3", {200: (0.21, 0.86)})
    monkeypatch.setattr(pirnay, "TD_BLOCK", 100)
    monkeypatch.setattr(pirnay, "CAUSES", pirnay.CAUSES[:1] + pirnay.CAUSES[3:4])
    run = td.td_lambda(Tetris(width=10, height=20), n_games=200, report_every=100, seed=0)
    text = pirnay._one_cause_at_a_time(run, 0.21)
    earlier = td.td_lambda(Tetris(width=10, height=20), n_games=200, report_every=100, seed=0, moves="discounted")
    assert f"first 100 games {run.lines_per_game[0]:.2f}, all 200 {run.lines_per_game.mean():.2f}" in text
    assert f"(babytris's earlier rule) {earlier.lines_per_game[-1]:.2f}" in text
    assert "initial weights three times as large" in text and "random placements clear 0.09" in text
