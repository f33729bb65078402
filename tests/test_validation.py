"""One check for each kind of argument: numpy scalars are accepted where Python
numbers are, and bad values are refused with the field and its range."""

import numpy as np
import pytest

import babytris
from babytris.validation import check_bool, check_int, check_number


def test_numpy_integers_solve_like_python_integers():
    # np.float32(0.9) is 0.899999976...: the same game as that float
    plain = babytris.solve(width=4, height=4, discount=float(np.float32(0.9)))
    numpy = babytris.solve(width=np.int64(4), height=np.int32(4), max_iter=np.int64(1000), n_jobs=np.int64(1),
                           discount=np.float32(0.9), tol=np.float64(1e-8), accelerate=np.bool_(True))
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
