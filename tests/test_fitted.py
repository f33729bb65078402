"""Fitted value iteration: targets and greedy policies equal plain loops; exact regret of the policy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import reference
from babytris.big import fitted, lookahead
from babytris.big.features import feature_matrix, rows_from_bits
from babytris.big.games import BigGame, ExactGame
from babytris.engine.placements import engine

FEATURES = ("max_height", "holes", "covers")


def plain_targets(rules, boards, weights, features, discount, loss):
    """y(b) = sum_q p(q) max_a [points + discount * V(b')], one board and piece at a time."""

    def value(bits):
        return float(
            feature_matrix(rows_from_bits([bits], rules.width, rules.height), rules.width, features)[0] @ weights
        )

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
    model = ExactGame(t)
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
            q = [
                rules.line_scores[lines] + discount * float(value(rows_from_bits([nxt], rules.width, rules.height))[0])
                for _, nxt, lines in moves
            ]
            # A best move, to rounding: the two sides sum the same features in different orders, so
            # moves tied in exact arithmetic (equal weights) may differ in their last bits.
            chosen = [number for number, _, _ in moves].index(int(policy[i, piece]))
            assert q[chosen] >= max(q) - 1e-9 * (1 + abs(max(q)))


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
    model = ExactGame(t)
    states = fitted._sample(model, 500, None, 0.3, 0.9, np.random.default_rng(2))
    weights = result.value.weights
    y = sum(
        prob * fitted._segment_max(rewards + 0.9 * result.value(model.rows(nxt)), offsets, 0.0)
        for prob, (offsets, nxt, rewards) in zip(rules_probabilities(t), (model.moves(states, p) for p in (0, 1)))
    )
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


def test_a_fit_resampled_from_given_weights(monkeypatch):
    """sample_from: the first round samples that value's play (exploring), each
    later one the last round's; without it the first samples random play."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=5))
    given = fitted.LinearValue(FEATURES, np.array([1.0, -1.0, -2.0, -0.5]), 4)
    seen = []
    sample = fitted._sample

    def spy(model, n, value, epsilon, discount, rng):
        seen.append((value, epsilon))
        return sample(model, n, value, epsilon, discount, rng)

    monkeypatch.setattr(fitted, "_sample", spy)
    result = fitted.fitted_value_iteration(t, FEATURES, n_samples=200, rounds=2, epsilon=0.3, seed=1, sample_from=given)
    assert seen[0] == (given, 0.3) and seen[1][0] is not given and seen[1][0].features == FEATURES
    assert result.converged and len(result.iterations) == 2
    seen.clear()
    plain = fitted.fitted_value_iteration(t, FEATURES, n_samples=200, seed=1)
    assert seen[0][0] is None
    once = fitted.fitted_value_iteration(t, FEATURES, n_samples=200, seed=1, sample_from=given)
    assert not np.allclose(once.value.weights, plain.value.weights)  # other boards, another fit
    for bad in (fitted.LinearValue(FEATURES, np.zeros(4), 5), "weights"):
        with pytest.raises(ValueError, match="sample_from must be a LinearValue of width 4"):
            fitted.fitted_value_iteration(t, FEATURES, sample_from=bad)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(discount=1.0), "discount"),
        (dict(n_samples=0), "n_samples"),
        (dict(rounds=0), "rounds"),
        (dict(epsilon=1.5), "epsilon"),
        (dict(tol=0), "tol"),
        (dict(tol=float("nan")), "tol"),
        (dict(loss=float("inf")), "loss"),
        (dict(loss=-1), "loss"),
        (dict(features=("height",)), "unknown feature"),
    ],
)
def test_bad_arguments(kwargs, words):
    t = babytris.enumerate_boards(babytris.Rules(width=3, height=3))
    with pytest.raises(ValueError, match=words):
        fitted.fitted_value_iteration(t, **kwargs)
    with pytest.raises(ValueError, match="Transitions"):
        fitted.fitted_value_iteration("4x4")


def brute_lookahead(tetris, rows, pieces, value, discount, loss):
    """max over placement sequences of the discounted rewards and the final value, by recursion."""
    totals = brute_scores(tetris, rows, pieces, value, discount, loss)
    return max(totals, key=totals.get) if totals else -1  # the first of equals (dicts keep order)


def brute_scores(tetris, rows, pieces, value, discount, loss):
    """Each placement of ``pieces[0]`` -> its best discounted sum, by recursion."""
    scores = tetris.line_scores

    def best(board, rest, depth):
        if not rest:
            return discount**depth * float(value(board[None, :])[0])
        moves = tetris.successors(board, rest[0])
        if not moves:
            return -(discount**depth) * loss
        return max(discount**depth * scores[lines] + best(nxt, rest[1:], depth + 1) for _, nxt, lines in moves)

    return {k: scores[lines] + best(nxt, pieces[1:], 1) for k, nxt, lines in tetris.successors(rows, pieces[0])}


def test_lookahead_equals_a_brute_force_search():
    from babytris.big.playouts import sample_boards
    from babytris.big.tetris import Tetris

    tetris = Tetris(width=4, height=6, pieces="trominoes")
    value = fitted.LinearValue(("max_height", "holes", "wells"), np.array([1.0, -0.7, -1.3, -0.4]), 4)
    sample = sample_boards(tetris, 40, seed=3)
    rng = np.random.default_rng(0)
    for rows in sample.rows:
        pieces = [int(p) for p in rng.integers(0, 2, size=3)]
        for k in (1, 2, 3):
            assert lookahead.lookahead_placement(
                tetris, rows, pieces[:k], value, discount=0.8, loss=3.0
            ) == brute_lookahead(tetris, rows, pieces[:k], value, 0.8, 3.0)


def test_lookahead_ties_and_an_undiscounted_sum():
    """discount=1 sums the rewards and the value as they are (the brute force
    agrees); ties="random" draws among the equal best, "first" takes the first."""
    from babytris.big.playouts import sample_boards
    from babytris.big.tetris import Tetris

    tetris = Tetris(width=4, height=6, pieces="trominoes")
    value = fitted.LinearValue(("max_height", "holes"), np.array([0.5, -1.0, -2.0]), 4)
    for rows in sample_boards(tetris, 20, seed=4).rows:
        assert lookahead.lookahead_placement(tetris, rows, [0, 1], value, discount=1.0, loss=3.0) == brute_lookahead(
            tetris, rows, [0, 1], value, 1.0, 3.0
        )
    flat = fitted.LinearValue((), np.zeros(1), 4)  # no placement of one piece clears a row of the empty board: all tie
    every = [k for k, _, _ in tetris.successors(tetris.empty(), 0)]
    first = lookahead.lookahead_placement(tetris, tetris.empty(), [0], flat, loss=1.0)
    assert first == every[0]
    rng = np.random.default_rng(1)
    drawn = {
        lookahead.lookahead_placement(tetris, tetris.empty(), [0], flat, loss=1.0, ties="random", rng=rng)
        for _ in range(200)
    }
    assert drawn == set(every)
    # on boards met in play, the random rule draws among the brute force's best, and from all of them
    for rows in sample_boards(tetris, 10, seed=2).rows:
        totals = brute_scores(tetris, rows, [1, 0], value, 0.9, 3.0)
        if not totals:  # the last board of a lost game
            continue
        top = max(totals.values())
        equal = {k for k, v in totals.items() if v >= top - 1e-9}
        drawn = {
            lookahead.lookahead_placement(tetris, rows, [1, 0], value, loss=3.0, ties="random", rng=rng)
            for _ in range(10 * len(equal))
        }
        assert drawn == equal
    games = lookahead.play_lookahead(tetris, flat, loss=1.0, preview=1, n_games=4, max_placements=30, ties="random")
    again = lookahead.play_lookahead(tetris, flat, loss=1.0, preview=1, n_games=4, max_placements=30, ties="random")
    assert games.placements.tolist() == again.placements.tolist()
    with pytest.raises(ValueError, match="ties must be"):
        lookahead.play_lookahead(tetris, flat, loss=1.0, ties="sometimes")
    with pytest.raises(ValueError, match="ties must be"):
        lookahead.lookahead_placement(tetris, tetris.empty(), [0], flat, loss=1.0, ties=None)


def test_fitted_value_iteration_on_a_big_board():
    from babytris.big.playouts import greedy_placements
    from babytris.big.tetris import Tetris

    tetris = Tetris(width=6, height=8)
    result = fitted.fitted_value_iteration(tetris, FEATURES, n_samples=300, rounds=2, loss=8, seed=1)
    assert result.converged and len(result.iterations) == 2
    # Its targets: the compiled Bellman backup of the same weights equals the adapter's.
    model = BigGame(tetris)
    rows = model.sample(50, None, 0.0, 0.9, np.random.default_rng(0))
    for piece in range(tetris.n_pieces):
        offsets, nxt, rewards = model.moves(rows, piece)
        mine = fitted._segment_max(
            rewards + 0.9 * (tetris.feature_matrix(nxt, FEATURES) @ result.value.weights), offsets, -np.inf
        )
        choices = greedy_placements(
            tetris, rows, piece, result.value.weights, FEATURES, line_rewards="scores", discount=0.9
        )
        live = np.isfinite(mine)
        np.testing.assert_allclose(choices.value[live], mine[live], atol=1e-9)
    games = lookahead.play_lookahead(tetris, result.value, preview=1, n_games=3, max_placements=50, loss=8, seed=2)
    again = lookahead.play_lookahead(tetris, result.value, preview=1, n_games=3, max_placements=50, loss=8, seed=2)
    assert games.placements.tolist() == again.placements.tolist() and games.placements.min() > 0


def test_seed_model_tables_are_refused():
    for model in (
        babytris.block_drop(width=3, height=4),
        babytris.no_holes_tetris(width=3, height=4, pieces="trominoes"),
    ):
        t = babytris.enumerate_boards(model.rules)
        with pytest.raises(ValueError, match="top_out and no_holes"):
            fitted.fitted_value_iteration(t)
        with pytest.raises(ValueError, match="top_out and no_holes"):
            fitted.regret(t, np.zeros((t.n_boards, t.rules.n_pieces), dtype=np.int16))


def test_lookahead_arguments_are_checked():
    from babytris.big.tetris import Tetris

    tetris = Tetris(width=4, height=6, pieces="trominoes")
    value = fitted.LinearValue(FEATURES, np.zeros(4), 4)
    rows = tetris.empty()
    with pytest.raises(ValueError, match="at least"):
        lookahead.lookahead_placement(tetris, rows, [], value, loss=1.0)
    with pytest.raises(ValueError, match="Tetris"):
        lookahead.lookahead_placement(babytris.Rules(), rows, [0], value, loss=1.0)
    with pytest.raises(ValueError, match="fitted for width 4"):
        lookahead.lookahead_placement(Tetris(width=6, height=6), np.zeros(6, np.uint16), [0], value, loss=1.0)
    for kwargs, words in (
        (dict(discount=float("nan")), "discount"),
        (dict(discount=5), "discount"),
        (dict(loss=-1), "loss"),
    ):
        with pytest.raises(ValueError, match=words):
            lookahead.play_lookahead(tetris, value, **{"loss": 1.0, **kwargs})
    with pytest.raises(ValueError, match="seed"):
        lookahead.play_lookahead(tetris, value, loss=1.0, seed=-1)
