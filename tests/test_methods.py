"""The course's methods: synchronous (Jacobi) and Gauss-Seidel value
iteration, with and without acceleration, against the reference (which is
synchronous value iteration) and against each other."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import Rules, reference
from babytris.cli import commands as cli
from babytris.game.validation import default_eval_sweeps


@pytest.mark.parametrize(
    "fields",
    [dict(width=3, height=4), dict(width=4, height=3), dict(width=3, height=5), dict(width=3, height=4, preview=1)],
)
@pytest.mark.parametrize("discount", [0.5, 0.9])
def test_plain_jacobi_is_the_references_value_iteration_sweep_for_sweep(fields, discount):
    # Both start from zero (a lost game is worth 0 here; with Reward(loss=...)
    # babytris starts dead states at -loss, a sweep ahead) and read only the last
    # sweep's values, and a board's change never exceeds its states': the same
    # sweeps, the same stopping sweep.
    rules = Rules(**fields)
    fast = babytris.solve(rules, discount=discount, tol=1e-8, method="jacobi", accelerate=False)
    slow = reference.solve(rules, discount=discount, tol=1e-8)
    assert fast.iterations == slow.iterations
    assert fast.residual == pytest.approx(slow.residual, rel=1e-9)
    assert fast.start_value == pytest.approx(slow.start_value, abs=1e-12)


def test_each_sweep_is_one_synchronous_bellman_step():
    # Three sweeps by hand on the table: W <- mean over pieces of the best move under the old W.
    t = babytris.enumerate_boards(Rules(width=4, height=4))
    scores, probs = np.array(t.rules.line_scores), np.array(t.rules.probabilities)
    W = np.zeros(t.n_boards)
    changes = []
    for _ in range(3):
        q = scores[t.lines] + 0.9 * W[t.next_board]
        counts = np.diff(t.offsets)
        best = np.full(t.n_states, 0.0)
        live = counts > 0
        best[live] = np.maximum.reduceat(q, t.offsets[:-1][live])
        new = best.reshape(t.n_boards, -1) @ probs
        changes.append(max(np.abs(new - W).max(), 0.0))
        W = new
    solution = babytris.solve_transitions(t, discount=0.9, method="jacobi", accelerate=False, max_iter=3)
    assert np.allclose(solution.board_values, W, atol=1e-12)
    assert len(solution.residuals) == 3
    assert solution.residuals[0] == pytest.approx(6.0)  # a triple clear is the best first move anywhere


@pytest.mark.parametrize("size", [(4, 4), (4, 5)])
def test_every_method_reaches_the_same_values(size):
    width, height = size
    exact = babytris.solve(width=width, height=height, tol=1e-12)
    counts = {}
    for method in ("vi", "jacobi", "mpi"):
        for accelerate in (False, True):
            s = babytris.solve(width=width, height=height, method=method, accelerate=accelerate)
            assert s.converged and s.method == method
            assert np.max(np.abs(s.values - exact.values)) <= s.error_bound + 1e-12
            counts[method, accelerate] = s.iterations
    # What docs/guide.md quotes: synchronous sweeps take several times the in-place ones.
    assert counts["jacobi", False] > 3 * counts["vi", False] > 3 * counts["mpi", False]
    assert counts["jacobi", True] < counts["jacobi", False] and counts["vi", True] < counts["vi", False]


def test_a_synchronous_sweep_does_not_depend_on_threads():
    one = babytris.solve(width=4, height=5, method="jacobi", n_jobs=1)
    two = babytris.solve(width=4, height=5, method="jacobi", n_jobs=2)
    assert one.iterations == two.iterations and np.array_equal(one.values, two.values)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=small_rules(variants=True), discount=st.floats(0.0, 0.95), opponent=st.sampled_from(["random", "minimax"]))
def test_jacobi_equals_gauss_seidel_over_random_rules(rules, discount, opponent):
    kw = dict(discount=discount, opponent=opponent, tol=1e-11)
    a = babytris.solve(rules, method="jacobi", **kw)
    b = babytris.solve(rules, method="vi", **kw)
    assert np.allclose(a.values, b.values, atol=1e-8)


def test_the_cli_runs_textbook_value_iteration(capsys, tmp_path):
    argv = ["solve", "--method", "jacobi", "--no-accelerate", "--json", "--out", str(tmp_path / "j.npz")]
    assert cli.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["method"], summary["iterations"]) == ("jacobi", 178)
    assert babytris.load(tmp_path / "j.npz").method == "jacobi"
    assert cli.main(["solve", "--method", "jacobi", "--mode", "lean"]) != 0
    assert "--method: the lean mode runs modified policy iteration (mpi) or value iteration (vi), got 'jacobi'" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("period", [0, -1, 1.5, True])
def test_a_bad_period_is_refused(period):
    from babytris.solvers.sweeping import value_iteration

    with pytest.raises(ValueError, match="period must be an integer >= 1"):
        value_iteration(None, np.zeros(1), np.zeros(1), 1e-8, 10, accelerate=True, period=period)


def test_every_method_records_its_evaluation_sweeps():
    mpi = babytris.solve(width=4, height=5, method="mpi")
    assert mpi.evaluation_sweeps.shape == (mpi.iterations,) and mpi.evaluation_sweeps.dtype == np.int32
    assert mpi.evaluation_sweeps.sum() > 0 and mpi.evaluation_sweeps[-1] == 0  # none after the last greedy sweep
    assert np.all(mpi.evaluation_sweeps <= default_eval_sweeps(0.9))  # eval_sweeps by default
    for method in ("vi", "jacobi"):
        s = babytris.solve(width=4, height=4, method=method)
        assert s.evaluation_sweeps.tolist() == [0] * s.iterations
    both = babytris.solve(width=4, height=4, minimize=True)  # the quotient's sweeps, then the game's
    assert both.evaluation_sweeps.shape == (both.iterations,)


@pytest.mark.parametrize(
    ("discount", "sweeps"), [(0.0, 4), (0.5, 4), (0.9, 4), (0.95, 5), (0.97, 8), (0.99, 25), (0.999, 40), (1.0, 4)]
)
def test_evaluation_sweeps_by_default_grow_with_the_horizon(discount, sweeps):
    assert default_eval_sweeps(discount) == sweeps


def test_the_default_evaluation_sweeps_are_those_of_the_discount(transitions_4x4):
    for discount in (0.9, 0.99):
        default = babytris.solve_transitions(transitions_4x4, discount=discount)
        sweeps = default_eval_sweeps(discount)
        given = babytris.solve_transitions(transitions_4x4, discount=discount, eval_sweeps=sweeps)
        assert default.evaluation_sweeps.tolist() == given.evaluation_sweeps.tolist()
        np.testing.assert_array_equal(default.values, given.values)
    assert babytris.solve_transitions(transitions_4x4, discount=0.99).evaluation_sweeps.max() > 6


def test_a_recorded_evaluation_sweep_keeps_each_boards_change_in_float32(transitions_4x4):
    """mpi's jump direction: evaluation_sweep(changes) writes float32(new W - old W) for each board
    it sweeps and nothing else (boards with no move keep 0); the wrong shape or dtype is refused."""
    from test_strategy import _sweeper  # (the same Sweeper over a table as the strategy tests build)

    from babytris.engine.transitions import sweep_order
    from babytris.solvers import _sweep

    t = transitions_4x4
    n = t.n_boards
    sweeper, _, board_values, _ = _sweeper(t, pieces=_sweep.PIECES_RANDOM)
    order, _ = sweep_order(t)
    sweeper.greedy_sweep()
    before = board_values.copy()
    changes = np.zeros(n, dtype=np.float32)
    residual = sweeper.evaluation_sweep(changes)
    assert np.array_equal(changes, (board_values - before).astype(np.float32))
    assert residual == np.max(np.abs(board_values - before)) > 0
    dead = np.ones(n, dtype=bool)
    dead[order] = False
    assert dead.any() and not changes[dead].any()
    with pytest.raises(ValueError, match="changes shape"):
        sweeper.evaluation_sweep(np.zeros(n + 1, dtype=np.float32))
    with pytest.raises(ValueError, match="mismatch"):
        sweeper.evaluation_sweep(np.zeros(n))  # float64: the changes are float32


def test_synchronous_value_iteration_runs_as_textbooks_write_it_unless_asked(tmp_path):
    """method="jacobi" is plain by default: the course's 178 sweeps on 4x4 at 0.9 (docs/course.md);
    acceleration is opt-in there and on by default elsewhere; the Solution says which ran."""
    plain = babytris.solve(width=4, height=4, method="jacobi")
    assert (plain.iterations, plain.accelerated) == (178, False)
    assert plain.iterations == babytris.solve(width=4, height=4, method="jacobi", accelerate=False).iterations
    jumped = babytris.solve(width=4, height=4, method="jacobi", accelerate=True)
    assert jumped.accelerated and jumped.iterations < plain.iterations
    assert babytris.solve(width=4, height=4, method="vi").accelerated
    plain.save(tmp_path / "j.npz")
    assert babytris.load(tmp_path / "j.npz").accelerated is False


def test_the_plot_says_which_run_was_accelerated():
    pytest.importorskip("matplotlib")
    from babytris.draw.pictures import plot_convergence

    runs = [babytris.solve(width=4, height=4, method="jacobi", accelerate=a) for a in (False, True)]
    ax = plot_convergence(*runs)
    assert [line.get_label() for line in ax.lines[:2]] == [
        f"jacobi plain, {runs[0].iterations} sweeps",
        f"jacobi + Aitken, {runs[1].iterations} sweeps",
    ]
