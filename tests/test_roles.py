"""Given policies on either side: best responses, policy evaluation, the gap
opponent and weighted rewards (Baby Tetris questions 2 and 3)."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import Reward, Rules, reference
from babytris.engine.reward import heights, holes

TOL = 1e-11


@pytest.fixture(scope="module")
def optimal(transitions_4x4):
    return babytris.solve_transitions(transitions_4x4, tol=TOL)


@pytest.fixture(scope="module")
def minimax(transitions_4x4):
    return babytris.solve_transitions(transitions_4x4, opponent="minimax", tol=TOL)


@pytest.fixture(scope="module")
def gaps(transitions_4x4):
    return babytris.solve_transitions(transitions_4x4, opponent="gaps", tol=TOL)


def test_evaluating_the_optimal_policy_gives_the_optimal_values(transitions_4x4, optimal):
    value = babytris.solve_transitions(transitions_4x4, player=optimal, tol=TOL)
    assert value.player == "given" and value.opponent == "random"
    assert np.max(np.abs(value.values - optimal.values)) <= 1e-9
    assert np.array_equal(value.policy, optimal.policy)


def test_best_response_opponent_scores_the_policy_no_higher_than_any_fixed_opponent(
    transitions_4x4, optimal, minimax, gaps
):
    """Against the optimal random-piece policy: the opponent's best response
    (min over pieces) is worth no more, board by board, than random pieces or
    any opponent policy held fixed."""
    worst = babytris.solve_transitions(transitions_4x4, player=optimal, opponent="best_response", tol=TOL)
    assert worst.opponent == "best_response" and worst.player == "given"
    fixed = {
        "random": "random",
        "minimax's pieces": minimax.opponent_policy,
        "gaps' pieces": gaps.opponent_policy,
        "always I": np.zeros(transitions_4x4.n_boards, dtype=np.int16),
        "always L": np.ones(transitions_4x4.n_boards, dtype=np.int16),
    }
    for name, opponent in fixed.items():
        other = babytris.solve_transitions(transitions_4x4, player=optimal, opponent=opponent, tol=TOL)
        assert np.all(worst.board_values <= other.board_values + 1e-9), name
    # and the robust (max-min) player is worth at least as much as this policy against its worst case
    assert minimax.start_value >= worst.start_value - 1e-9


def test_best_response_player_beats_any_fixed_player(transitions_4x4, optimal, minimax):
    """Against the minimax opponent's piece choices held fixed, the best
    response is worth at least as much as the optimal and the max-min policies."""
    pieces = minimax.opponent_policy
    best = babytris.solve_transitions(transitions_4x4, opponent=pieces, tol=TOL)
    assert best.opponent == "given" and best.player == "optimal"
    assert np.array_equal(best.opponent_policy, pieces)
    for player in (optimal, minimax):
        other = babytris.solve_transitions(transitions_4x4, opponent=pieces, player=player, tol=TOL)
        assert np.all(other.board_values <= best.board_values + 1e-9)
    # a fixed opponent is no worse for the player than the one choosing freely
    assert np.all(minimax.board_values <= best.board_values + 1e-9)


def test_given_opponent_board_value_is_its_piece(transitions_4x4, minimax):
    best = babytris.solve_transitions(transitions_4x4, opponent=minimax, tol=TOL)
    rows = np.arange(best.n_boards)
    assert np.array_equal(best.board_values, best.values[rows, minimax.opponent_policy])


def test_gap_opponent_maximises_holes_of_a_random_player(gaps, transitions_4x4, rules_4x4):
    """One more backup, recomputed here: U(b) = max over pieces of the mean over
    moves of (holes after - holes before + discount * U(after))."""
    assert gaps.converged and gaps.player == "random"
    t = gaps.transitions
    count = holes(t.boards, 4, 4)
    after = gaps.values.max(axis=1)
    assert np.array_equal(gaps.board_values, after)
    assert np.array_equal(gaps.opponent_policy, np.argmax(gaps.values, axis=1))
    for state in range(0, gaps.n_states, 41):
        b = state // 2
        q = [
            count[t.next_board[e]] - count[b] + 0.9 * after[t.next_board[e]]
            for e in range(t.offsets[state], t.offsets[state + 1])
        ]
        assert abs((sum(q) / len(q) if q else 0.0) - gaps.values.flat[state]) <= 1e-9
    assert gaps.start_value > 0  # a random player leaves holes
    with pytest.raises(ValueError, match="random"):
        gaps.best_action(0, "I")


def test_gap_opponent_matches_reference_on_a_small_game():
    rules = Rules(width=3, height=4)
    core = babytris.solve(rules, opponent="gaps", tol=1e-12)
    ref = reference.solve(rules, opponent="gaps", tol=1e-12)
    order = core.transitions.indices(np.array(ref.boards, dtype=np.uint64))
    assert np.abs(core.values[order] - np.array(ref.values)).max() <= 1e-9
    assert abs(core.start_value - ref.start_value) <= 1e-9


def test_points_reward_is_the_plain_game(transitions_4x4, optimal):
    plain = babytris.solve_transitions(transitions_4x4, reward=Reward(lines=0, height=0, score=1, gaps=0), tol=TOL)
    assert plain.reward is None
    assert np.array_equal(plain.values, optimal.values)


def test_weighted_reward_path_reproduces_the_plain_game(rules_4x4, transitions_4x4, optimal):
    """Through the per-move reward path: twice the points is worth twice as
    much, and counting lines with line scores (0, 1, 2, 3) is the game with
    those scores."""
    double = babytris.solve_transitions(transitions_4x4, reward=Reward(score=2), tol=TOL)
    assert double.reward == Reward(score=2)
    assert np.max(np.abs(double.values - 2 * optimal.values)) <= 1e-8
    assert np.array_equal(double.policy, optimal.policy)
    linear = Rules(width=4, height=4, line_scores=(0, 1, 2, 3))
    by_lines = babytris.solve(rules_4x4, reward=Reward(lines=1, score=0), tol=TOL)
    plain = babytris.solve(linear, tol=TOL)
    assert np.max(np.abs(by_lines.values - plain.values)) <= 1e-8


def test_weighted_reward_features():
    board = babytris.Board.from_rows(["....", ".#..", "#...", "..#."])
    assert heights(np.array([int(board)], dtype=np.uint64), 4, 4)[0] == 3
    assert holes(np.array([int(board)], dtype=np.uint64), 4, 4)[0] == 3  # 1 under column 0, 2 under column 1
    assert reference.holes(int(board), 4, 4) == 3 and reference.max_height(int(board), 4, 4) == 3
    assert holes(np.array([0], dtype=np.uint64), 4, 4)[0] == 0


@pytest.mark.parametrize(("width", "height"), [(3, 3), (4, 5), (10, 6), (8, 8)])
def test_holes_of_random_boards_equal_the_reference(width, height):
    """``holes`` smears each board down and counts the cells it added; the
    reference walks every column (64-cell boards included)."""
    rng = np.random.default_rng(width * 100 + height)
    cells = width * height
    boards = rng.integers(0, 2**62, size=500, dtype=np.uint64) * np.uint64(4) + rng.integers(
        0, 4, size=500, dtype=np.uint64
    )
    if cells < 64:
        boards &= np.uint64(2**cells - 1)
    counted = holes(boards, width, height)
    assert counted.dtype == np.int64 and counted.shape == (500,)
    assert counted.tolist() == [reference.holes(int(b), width, height) for b in boards]
    assert holes(boards.reshape(25, 20), width, height).tolist() == counted.reshape(25, 20).tolist()
    assert holes(boards[0], width, height).shape == () and holes(boards[0], width, height) == counted[0]


def test_robust_reward_solution_plays_by_its_reward(transitions_4x4):
    """A height penalty changes the values (in reward units) and the moves chosen."""
    r = Reward(lines=0, height=1, score=4, gaps=1.5)
    s = babytris.solve_transitions(transitions_4x4, opponent="minimax", reward=r, tol=TOL)
    assert s.reward == r and "Reward" in repr(s)
    plain = babytris.solve_transitions(transitions_4x4, opponent="minimax", tol=TOL)
    assert not np.array_equal(s.policy, plain.policy)
    q = s.action_values(0, "L")
    assert max(q.values()) == pytest.approx(s.value(0, "L"), abs=1e-9)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(opponent="gaps", player="optimal"), "player"),
        (dict(opponent="minavg", player="optimal"), "player"),
        (dict(opponent="gaps", reward=Reward(height=1)), "reward"),
        (dict(reward=(1, 2, 3, 4)), "reward"),
        (dict(player="greedy"), "player"),
        (dict(opponent=np.zeros(3, dtype=np.int16)), "opponent"),
        (dict(opponent=np.full(12_978, 2, dtype=np.int16)), "opponent"),
        (dict(player=np.zeros((12_978, 2), dtype=np.int16)), "player"),
        (dict(opponent="minavg", method="mpi"), "mpi"),
        (dict(player="random", method="mpi"), "mpi"),
    ],
)
def test_bad_roles(transitions_4x4, kwargs, field):
    with pytest.raises(ValueError, match=field):
        babytris.solve_transitions(transitions_4x4, **kwargs)


def test_a_given_player_against_an_optimising_opponent_is_value_iteration(transitions_4x4, solution_4x4):
    """The opponent's best response to given moves: nothing to evaluate between its sweeps."""
    with pytest.raises(ValueError, match="mpi"):
        babytris.solve_transitions(transitions_4x4, player=solution_4x4, opponent="best_response", method="mpi")
    assert babytris.solve_transitions(transitions_4x4, player=solution_4x4, opponent="best_response").method == "vi"


def test_reward_rejects_non_numbers():
    with pytest.raises(ValueError, match="Reward.height"):
        Reward(height=float("nan"))
    with pytest.raises(ValueError, match="Reward.gaps"):
        Reward(gaps="1")


def test_evaluate_discounted_and_horizon(optimal, minimax):
    assert babytris.evaluate(optimal, discount=0.9) == pytest.approx(optimal.start_value, abs=1e-9)
    worst = babytris.evaluate(optimal, opponent="best_response", discount=0.9)
    assert worst <= babytris.evaluate(optimal, opponent=minimax, discount=0.9) + 1e-9
    assert babytris.evaluate(optimal, n_placements=50) == babytris.expected_points(optimal, n_placements=50)
    with pytest.raises(ValueError, match="exactly one"):
        babytris.evaluate(optimal)
    with pytest.raises(ValueError, match="exactly one"):
        babytris.evaluate(optimal, n_placements=5, discount=0.9)


def test_evaluate_takes_a_policy_array_like_the_solution_it_came_from(solution_4x4, minimax):
    """A policy given as an array names the same player as its Solution: with
    random pieces its value is the optimal start value; against the minimax
    opponent it is the max-min value of no other policy, so at most the
    robust player's."""
    as_array = babytris.evaluate(solution_4x4, player=solution_4x4.policy.copy(), discount=0.9)
    as_solution = babytris.evaluate(solution_4x4, player=solution_4x4, discount=0.9)
    assert as_array == pytest.approx(solution_4x4.start_value, abs=1e-8)
    assert as_array == pytest.approx(as_solution, abs=1e-12)
    against = babytris.evaluate(solution_4x4, player=solution_4x4.policy.copy(), opponent="best_response", discount=0.9)
    assert against <= minimax.start_value + 1e-9
    pieces = babytris.evaluate(solution_4x4, player="random", opponent=minimax, discount=0.9)
    by_array = babytris.evaluate(solution_4x4, player="random", opponent=minimax.opponent_policy.copy(), discount=0.9)
    assert pieces == pytest.approx(by_array, abs=1e-12)


def test_the_words_for_the_games_own_sides_need_a_solution(transitions_4x4, solution_4x4):
    with pytest.raises(ValueError, match="player='optimal' needs a Solution"):
        babytris.evaluate(transitions_4x4, discount=0.9)
    with pytest.raises(ValueError, match="opponent: the Solution was solved against random pieces"):
        babytris.evaluate(solution_4x4, opponent="solution", discount=0.9)
    with pytest.raises(ValueError, match="opponent: the Solution was solved against random pieces"):
        babytris.play(solution_4x4, opponent="solution")


def test_piece_choices_is_a_deprecated_alias_of_opponent_policy(solution_4x4):
    minimax = babytris.solve_transitions(solution_4x4.transitions, discount=0.9, opponent="minimax")
    with pytest.warns(DeprecationWarning, match="opponent_policy"):
        assert minimax.piece_choices is minimax.opponent_policy
    rate = babytris.long_run_rate(babytris.Rules(width=3, height=3), opponent="minimax")
    with pytest.warns(DeprecationWarning, match="opponent_policy"):
        assert rate.piece_choices is rate.opponent_policy


def test_one_meaning_of_minimax_in_solve(transitions_4x4, solution_4x4):
    with pytest.raises(ValueError, match="opponent='minimax' is the equilibrium opponent of an optimal player"):
        babytris.solve_transitions(transitions_4x4, player=solution_4x4, opponent="minimax")
    with pytest.raises(ValueError, match="opponent='best_response' answers a given player"):
        babytris.solve_transitions(transitions_4x4, opponent="best_response")
    against_random = babytris.solve_transitions(transitions_4x4, player="random", opponent="best_response")
    assert against_random.opponent == "minavg"
