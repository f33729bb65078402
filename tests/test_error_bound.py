"""Solution.error_bound: a proven bound on the distance of the values from the exact ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=small_rules(variants=True),
    discount=st.sampled_from([0.1, 0.5, 0.9, 0.97]),
    method=st.sampled_from(["vi", "mpi", "jacobi"]),
    accelerate=st.booleans(),
    tol=st.sampled_from([1e-1, 1e-3, 1e-6]),
    max_iter=st.sampled_from([1, 2, 5, 1000]),
    opponent=st.sampled_from(["random", "minimax", "minavg"]),
)
def test_the_true_error_never_exceeds_the_bound(rules, discount, method, accelerate, tol, max_iter, opponent):
    if opponent == "minavg" and method == "mpi":
        method = "vi"  # a player placing at random has no policy to evaluate
    kw = dict(discount=discount, opponent=opponent)
    s = babytris.solve(rules, method=method, accelerate=accelerate, tol=tol, max_iter=max_iter, **kw)
    truth = babytris.solve(rules, method="vi", accelerate=False, tol=1e-13, max_iter=100_000, **kw)
    assert truth.converged
    error = float(np.max(np.abs(s.values - truth.values), initial=0.0))
    assert error <= s.error_bound + truth.error_bound
    assert s.error_bound >= discount * s.residual / (1 - discount)


def test_the_bound_is_tight_enough_to_use(solution_4x4):
    """At the default tolerance it is near tol * g / (1 - g), not a vacuous number."""
    s = babytris.solve(width=4, height=4, discount=0.9)
    assert s.error_bound <= 1e-8 * 0.9 / 0.1 * 1.001
    assert np.max(np.abs(s.values - solution_4x4.values)) <= s.error_bound + solution_4x4.error_bound
    assert f"error <= {s.error_bound:.1e}" in repr(s)


def test_undiscounted_games_are_bounded_by_their_length():
    """At discount 1 the bound is the residual times the longest expected
    game: a loose solve lies within it of a tight one."""
    rules = babytris.Rules(width=4, height=4, pieces="tetrominoes", line_scores=(0, 1, 1, 1, 1))
    loose = babytris.solve(rules, discount=1.0, tol=1e-3)
    tight = babytris.solve(rules, discount=1.0, tol=1e-12)
    assert loose.longest_game is not None and loose.longest_game > 1
    assert loose.error_bound == pytest.approx(loose.residual * loose.longest_game, rel=1e-6)
    assert 0 < np.max(np.abs(loose.values - tight.values)) <= loose.error_bound + tight.error_bound
    assert f"error <= {loose.error_bound:.1e}" in repr(loose)


def test_the_bound_survives_save_and_load(tmp_path, solution_4x4):
    path = tmp_path / "s.npz"
    solution_4x4.save(path)
    assert babytris.load(path).error_bound == pytest.approx(solution_4x4.error_bound, rel=0, abs=0)
