"""The lean mode (babytris.modes.lean): the same values and policy as the default mode, in far less memory."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import MemoryLimitError, Rules
from babytris.modes.lean import lean_bytes, solve_lean


def agree(lean, full):
    """Board values within both bounds, every state's value and best move as the default mode's."""
    index = lean.table.index(full.boards)
    assert np.all(index >= 0) and lean.n_boards == full.n_boards  # the same reachable boards
    bound = lean.error_bound + full.error_bound
    assert np.abs(lean.board_values[index] - full.board_values).max() <= bound
    values, moves = lean.values_and_moves(full.boards)
    assert np.abs(values - full.values).max() <= bound
    # The same first best move, but where the two modes' tie slacks differ (a
    # value gap below one's slack and above the other's): then a move worth the best to both slacks.
    slack = lean.tie_slack + full.tie_slack
    for b, p in np.argwhere(moves != full.policy):
        q = {placement.index: value for placement, value in full.action_values(int(full.boards[b]), int(p)).items()}
        assert q[int(moves[b, p])] >= max(q.values()) - slack, (b, p)
    assert lean.start_value == pytest.approx(full.start_value, abs=bound)


@pytest.mark.parametrize("size", [(4, 4), (4, 5), (5, 4)])
@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_lean_equals_the_default_mode(size, opponent):
    width, height = size
    lean = solve_lean(width=width, height=height, opponent=opponent)
    full = babytris.solve(width=width, height=height, opponent=opponent)
    assert lean.converged and lean.opponent == opponent
    agree(lean, full)


def test_the_known_facts_hold_in_lean_mode():
    lean = solve_lean(width=4, height=4, discount=0.9)
    assert lean.n_boards == 12_978
    assert lean.value(0, "I") == pytest.approx(babytris.solve(width=4, height=4).value(0, "I"), abs=1e-7)
    assert np.all(np.diff(lean.boards().astype(np.int64)) > 0)  # ascending: the order of board_values
    assert "12,978 boards" in repr(lean) and "converged" in repr(lean)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=small_rules(variants=True),
    discount=st.sampled_from([0.5, 0.9]),
    opponent=st.sampled_from(["random", "minimax"]),
)
def test_lean_equals_the_default_mode_over_random_rules(rules, discount, opponent):
    assume(not rules.mirror and rules.objective != "combo" and rules.moves == "hard")
    kw = dict(discount=discount, opponent=opponent, tol=1e-10)
    agree(solve_lean(rules, **kw), babytris.solve(rules, **kw))


def test_threads_do_not_change_the_values():
    one = solve_lean(width=4, height=5, n_jobs=1)
    two = solve_lean(width=4, height=5, n_jobs=2)
    assert np.array_equal(one.board_values, two.board_values)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(width=8, height=5), "at most 32 cells"),
        (dict(width=4, height=4, opponent="gaps"), "opponent"),
        (dict(width=4, height=4, preview=1), "preview"),
        (dict(width=4, height=4, hold=True), "hold"),
        (dict(width=4, height=4, objective="combo"), "combo"),
        (dict(width=4, height=4, moves="soft"), "moves='soft'"),
        (dict(width=4, height=4, discount=1.0), "discount"),
        (dict(width=4, height=4, tol=0), "tol"),
        (dict(width=4, height=4, accelerate="yes"), "accelerate"),
        (dict(width=4, height=4, progress=3), "progress"),
        (dict(width=4, height=4, max_memory=10), "max_memory"),
    ],
)
def test_bad_arguments_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        solve_lean(**kwargs)


def test_work_beyond_max_memory_is_refused_during_the_search():
    with pytest.raises(MemoryLimitError, match="lean mode needs more than max_memory"):
        solve_lean(width=4, height=6, max_memory=2**21)


def test_an_unreachable_board_is_refused():
    lean = solve_lean(width=4, height=4)
    with pytest.raises(ValueError, match="not reachable"):
        lean.values_and_moves([0b1111])  # a full row never survives


def test_the_estimate_counts_bitmap_ranks_and_values():
    rules = Rules(width=4, height=7)
    words = 2**28 // 64
    n = 35_655_859
    # the solve's peak: values, and each board's change (float32) in the sweep before a jump
    assert lean_bytes(rules, n) == 12 * words + 12 * n
    # without them, the search's: its queue, 4 bytes a board, up to 2.5 times over while it grows
    assert lean_bytes(rules, n, accelerate=False) == 8 * words + 10 * n


def test_acceleration_is_left_out_where_its_copy_of_the_values_would_not_fit(monkeypatch):
    from babytris.modes import lean

    rules = Rules(width=4, height=5)
    plain, accelerated = lean_bytes(rules, 182_101, accelerate=False), lean_bytes(rules, 182_101)
    monkeypatch.setattr(lean, "forecast_boards", lambda rules: 182_101)  # as for a board of over 30 cells
    squeezed = solve_lean(rules, max_memory=(plain + accelerated) // 2)
    roomy = solve_lean(rules, max_memory=2 * accelerated)
    assert squeezed.converged and squeezed.iterations > roomy.iterations  # no Aitken jumps: more sweeps
    assert np.abs(squeezed.board_values - roomy.board_values).max() <= squeezed.error_bound + roomy.error_bound


def test_huge_scores_converge_without_jumps_their_float32_changes_could_not_hold():
    """Values near 1e200 change by more than float32 holds (3.4e38): the sweeps record no changes
    for a jump there (sweeping.MAX_RECORDED_CHANGE) and converge to the scaled values of the game."""
    plain = babytris.solve(width=4, height=4)
    big = solve_lean(width=4, height=4, line_scores=(0, 1e200, 3e200, 6e200), tol=1e192)
    assert big.converged and np.isfinite(big.board_values).all()
    assert abs(big.start_value / 1e200 - plain.start_value) <= (big.error_bound / 1e200 + plain.error_bound)
