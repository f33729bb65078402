"""One check for each kind of argument: numpy scalars are accepted where Python
numbers are, and bad values are refused with the field and its range."""

import dataclasses

import numpy as np
import pytest

import babytris
from babytris.game.validation import check_bool, check_int, check_number


def test_numpy_integers_solve_like_python_integers():
    # np.float32(0.9) is 0.899999976...: the same game as that float
    plain = babytris.solve(width=4, height=4, discount=float(np.float32(0.9)))
    numpy = babytris.solve(
        width=np.int64(4),
        height=np.int32(4),
        max_iter=np.int64(1000),
        n_jobs=np.int64(1),
        discount=np.float32(0.9),
        tol=np.float64(1e-8),
        accelerate=np.bool_(True),
    )
    assert numpy.rules == plain.rules
    assert type(numpy.rules.width) is int
    assert numpy.n_boards == 12978
    np.testing.assert_allclose(numpy.values, plain.values, atol=1e-9)


def test_numpy_flags_and_numbers_in_rules_and_reward():
    rules = babytris.Rules(width=np.int64(4), height=np.uint8(4), hold=np.bool_(True), preview=np.int16(1))
    assert (rules.width, rules.height, rules.hold, rules.preview) == (4, 4, True, 1)
    assert type(rules.hold) is bool and type(rules.preview) is int
    reward = babytris.Reward(lines=np.float32(1.5), height=np.int64(-1))
    assert (reward.lines, reward.height) == (1.5, -1.0)
    assert type(reward.lines) is float


@pytest.mark.parametrize("bad", [True, np.bool_(True), 4.0, "4", None, 0, 65, np.int64(0)])
def test_bad_width_names_the_field_and_range(bad):
    with pytest.raises(babytris.RulesError, match=r"width must be an integer in \[1, 64\]"):
        babytris.Rules(width=bad, height=4)


def test_checks_return_plain_python_values():
    assert type(check_int("n", np.int64(3), 0, 5)) is int
    assert type(check_number("x", np.float32(0.5), 0, 1)) is float
    assert type(check_bool("b", np.bool_(False))) is bool
    with pytest.raises(ValueError, match=r"x must be a number in \[0, 1\), got 1"):
        check_number("x", 1, 0, 1, open_high=True)
    with pytest.raises(ValueError, match="x must be a finite number > 0"):
        check_number("x", float("nan"), 0, open_low=True)
    with pytest.raises(ValueError, match="x must be a finite number"):
        check_number("x", np.float64("inf"))
    with pytest.raises(ValueError, match=r"n must be an integer >= 1, got True"):
        check_int("n", True, 1)
    with pytest.raises(ValueError, match="b must be True or False"):
        check_bool("b", 1)


# --- wrong types and shapes at the entry points (issue 18) ----------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: babytris.solve_transitions(42),
        lambda: babytris.minimize(42),
        lambda: babytris.enumerate_boards(42),
        lambda: babytris.to_mdptoolbox(42),
        lambda: babytris.long_run_rate(42),
        lambda: babytris.expected_points(42, n_placements=3),
        lambda: babytris.play(42),
        lambda: babytris.tournament(42, {"random": "random"}, {"random": "random"}),
    ],
    ids=[
        "solve_transitions",
        "minimize",
        "enumerate_boards",
        "to_mdptoolbox",
        "long_run_rate",
        "expected_points",
        "play",
        "tournament",
    ],
)
def test_a_wrong_first_argument_is_a_value_error_naming_it(call):
    with pytest.raises(ValueError, match=r"(transitions|rules|game) must be a babytris\.\w+.*got int") as err:
        call()
    assert isinstance(err.value, TypeError)  # and still a TypeError, as Python's own functions raise


def test_rows_given_as_one_string_are_refused():
    with pytest.raises(ValueError, match="rows must be a list of strings"):
        babytris.Board.from_rows("##..")
    with pytest.raises(ValueError, match="rows must be strings"):
        babytris.Board.from_rows(["##..", 3])
    assert babytris.Board.from_rows(["##.."]).bits == 0b0011


def test_piece_coordinates_must_be_integers_not_truncated():
    with pytest.raises(ValueError, match=r"\(x, y\) integer pairs"):
        babytris.Rules(pieces=[[(0.5, 0), (1, 0)]])
    domino = babytris.Rules(pieces=[[(np.int64(0), 0), (1, np.int32(0))]]).pieces[0]
    assert domino.cells == ((0, 0), (1, 0))


def test_out_of_range_piece_choices_in_a_solution_are_an_error_not_a_crash(transitions_4x4):
    s = babytris.solve_transitions(transitions_4x4, opponent="minimax")
    bad = s.opponent_policy.copy()
    bad[17] = 9
    corrupted = dataclasses.replace(s, opponent_policy=bad)
    with pytest.raises(ValueError, match=r"opponent_policy.*\[0, 1\], got 9 at board index 17"):
        babytris.play(corrupted, "random", "solution", n_placements=5, seed=0)
    with pytest.raises(ValueError, match="opponent_policy"):
        babytris.expected_points(corrupted, "random", "solution", n_placements=5)


@pytest.mark.parametrize(
    "game",
    [
        dict(line_scores=(0, 1e308, 1e308, 1e308)),
        dict(reward=babytris.Reward(height=1e308)),
        dict(line_scores=(0, 1e299, 1e299, 1e299), discount=0.99),  # finite scores, values past 1e300
    ],
    ids=["line_scores", "reward", "discounted_sum"],
)
def test_rewards_that_would_overflow_are_refused_before_the_sweeps(game):
    with pytest.raises(ValueError, match="too large"):
        babytris.solve(width=4, height=4, **game)


def test_large_but_safe_scores_scale_the_values_exactly(solution_4x4):
    big = babytris.solve(width=4, height=4, line_scores=(0, 1e200, 3e200, 6e200), tol=1e192)
    np.testing.assert_allclose(big.values / 1e200, solution_4x4.values, rtol=1e-6, atol=1e-6)


def test_numpy_scalars_at_the_smaller_doors(transitions_4x4):
    assert babytris.Board(np.uint64(3), np.int64(4), np.int32(4)) == babytris.Board(3, 4, 4)
    P, _ = babytris.to_mdptoolbox(transitions_4x4, penalty=np.float32(2.0))
    assert len(P) > 0
    with pytest.raises(ValueError, match=r"penalty must be a finite number > 0"):
        babytris.to_mdptoolbox(transitions_4x4, penalty=np.float64("inf"))
    with pytest.raises(ValueError, match=r"width must be an integer >= 1, got np.int64\(0\)"):
        babytris.Board(0, np.int64(0), 4)
