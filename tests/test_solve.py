"""solve(): optimal values and policy by value iteration, and the Solution object."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import Board, Placement, Rules, reference
from babytris.engine.placements import placement_table


def bellman_backup(solution) -> np.ndarray:
    """One Jacobi Bellman optimality backup of ``solution.values``, from the transition table."""
    t = solution.transitions
    rules = solution.rules
    after = solution.values @ np.asarray(rules.probabilities)
    q = np.asarray(rules.line_scores)[t.lines] + solution.discount * after[t.next_board]
    out = np.zeros(t.n_states)
    counts = np.diff(t.offsets)
    has = counts > 0
    if t.n_moves:
        out[has] = np.maximum.reduceat(q, t.offsets[:-1][has])
    return out.reshape(solution.values.shape)


def mirror_bits(bits: np.ndarray, width: int, height: int) -> np.ndarray:
    out = np.zeros_like(bits)
    one = np.uint64(1)
    for r in range(height):
        for c in range(width):
            src = np.uint64(r * width + c)
            dst = np.uint64(r * width + width - 1 - c)
            out |= ((bits >> src) & one) << dst
    return out


# --------------------------------------------------------------------------
# Published values
# --------------------------------------------------------------------------


def test_mean_value_discount_09(solution_4x4):
    assert solution_4x4.n_boards == 12_978
    assert round(float(solution_4x4.values.mean()), 3) == 4.151


def test_mean_value_discount_01(solution_4x4_low_discount):
    assert round(float(solution_4x4_low_discount.values.mean()), 3) == 0.566


@pytest.mark.parametrize("method", ["vi", "mpi"])
@pytest.mark.parametrize("discount, mean", [(0.9, 4.151), (0.1, 0.566)])
def test_published_means_with_default_tolerance(method, discount, mean):
    s = babytris.solve(width=4, height=4, discount=discount, method=method)
    assert s.converged
    assert round(float(s.values.mean()), 3) == mean


# --------------------------------------------------------------------------
# The Solution object
# --------------------------------------------------------------------------


def test_solution_shapes(solution_4x4, transitions_4x4):
    s = solution_4x4
    assert s.rules == Rules()
    assert s.discount == 0.9
    assert s.n_boards == 12_978
    assert s.n_states == 25_956
    assert s.values.shape == (12_978, 2) and s.values.dtype == np.float64
    assert s.policy.shape == (12_978, 2)
    assert np.array_equal(s.boards, transitions_4x4.boards)
    assert s.boards[0] == 0 and len(np.unique(s.boards)) == s.n_boards
    assert s.board_values.shape == (12_978,)
    assert np.allclose(s.board_values, s.values.mean(axis=1))
    assert s.method == "mpi" and s.tol == 1e-10


def test_convergence_record(solution_4x4):
    s = solution_4x4
    assert s.converged is True
    assert s.iterations >= 1
    assert s.residuals.shape == (s.iterations,)
    assert s.residual == s.residuals[-1]
    assert s.residual <= s.tol
    assert np.all(s.residuals[:-1] > s.tol)  # it stopped at the first sweep under tol
    assert set(s.seconds) == {"enumerate", "solve"}


def test_not_converged_when_max_iter_runs_out():
    s = babytris.solve(width=4, height=4, method="vi", max_iter=2)
    assert s.iterations == 2
    assert s.converged is False
    assert s.residual > s.tol
    assert len(s.residuals) == 2
    assert "NOT converged" in repr(s)


def test_values_are_nonnegative_and_bounded(solution_4x4):
    # at most 6 points per placement (3 lines): V <= 6 / (1 - 0.9)
    assert solution_4x4.values.min() >= 0.0
    assert solution_4x4.values.max() <= 6 / (1 - 0.9)


def test_value_lookup(solution_4x4):
    s = solution_4x4
    i = 1234
    b = int(s.boards[i])
    for p, name in enumerate(["I", "L"]):
        expected = float(s.values[i, p])
        assert s.value(b, p) == expected
        assert s.value(b, name) == expected
        assert s.value(Board(b, 4, 4), name) == expected
        assert s.value(np.uint64(b), p) == expected
        assert s.value(b, s.rules.pieces[p]) == expected
    assert s.index(b) == i


def test_start_value(solution_4x4):
    s = solution_4x4
    assert s.start_value == pytest.approx(0.5 * s.value(0, "I") + 0.5 * s.value(0, "L"), abs=1e-12)
    assert s.start_value == pytest.approx(float(s.board_values[0]), abs=1e-12)


def test_start_value_weighted():
    rules = Rules(probabilities=(0.8, 0.2))
    s = babytris.solve(rules)
    assert s.start_value == pytest.approx(0.8 * s.value(0, 0) + 0.2 * s.value(0, 1), abs=1e-12)


def test_bad_lookups(solution_4x4):
    s = solution_4x4
    with pytest.raises(KeyError):
        s.value(0b1111, 0)  # a full row is never on the board
    with pytest.raises(KeyError):
        s.best_action(2**16, 0)
    with pytest.raises(KeyError):
        s.value(-1, 0)
    with pytest.raises(ValueError):
        s.value(0, "O")
    with pytest.raises(ValueError):
        s.value(0, 2)
    with pytest.raises(ValueError):
        s.value(Board(0, 4, 5), 0)  # wrong size
    with pytest.raises(TypeError):
        s.value("0", 0)
    with pytest.raises(TypeError):
        s.value(True, 0)


def test_best_action_achieves_value(solution_4x4):
    s = solution_4x4
    table = placement_table(s.rules)
    for i in range(0, s.n_boards, 37):
        b = int(s.boards[i])
        for p, name in enumerate(s.rules.piece_names):
            q = s.action_values(b, p)
            best = s.best_action(b, name)
            legal = [m for m, _, _ in reference.moves(s.rules, b, p)]
            assert sorted(q, key=lambda m: m.index) == legal
            if not legal:
                assert best is None
                assert s.value(b, p) == 0.0
                continue
            assert isinstance(best, Placement)
            assert best in q and best.piece == name
            assert table.placements[p][best.index] == best
            assert q[best] == pytest.approx(s.value(b, p), abs=1e-9)
            assert max(q.values()) == pytest.approx(s.value(b, p), abs=1e-9)


def test_action_values_on_empty_board(solution_4x4):
    s = solution_4x4
    q_i = s.action_values(0, "I")
    q_l = s.action_values(0, "L")
    assert len(q_i) == 6 and len(q_l) == 12
    assert max(q_i.values()) == pytest.approx(s.value(0, "I"), abs=1e-9)
    assert max(q_l.values()) == pytest.approx(s.value(0, "L"), abs=1e-9)


def test_game_over_states(solution_4x4):
    s = solution_4x4
    over = np.argwhere(s.policy < 0)
    assert len(over) > 0
    assert np.all(s.values[s.policy < 0] == 0.0)
    for i, p in over[:: max(1, len(over) // 200)]:
        b = int(s.boards[i])
        assert s.best_action(b, int(p)) is None
        assert s.action_values(b, int(p)) == {}
        assert reference.moves(s.rules, b, int(p)) == []
    # and every state with a move has a policy
    counts = np.diff(s.transitions.offsets).reshape(s.values.shape)
    assert np.array_equal(counts == 0, s.policy < 0)


def test_repr(solution_4x4):
    text = repr(solution_4x4)
    assert text.startswith("<Solution 4x4")
    assert "pieces=I,L" in text and "12,978 boards" in text and "converged" in text
    assert f"start_value={solution_4x4.start_value:.6f}" in text


def test_nbytes(solution_4x4):
    assert solution_4x4.nbytes >= solution_4x4.values.nbytes + solution_4x4.transitions.nbytes


# --------------------------------------------------------------------------
# Bellman equations and symmetry
# --------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["solution_4x4", "solution_4x4_low_discount"])
def test_values_are_a_bellman_fixed_point(fixture, request):
    s = request.getfixturevalue(fixture)
    assert np.max(np.abs(bellman_backup(s) - s.values)) <= 1e-9


def test_bellman_fixed_point_tetrominoes():
    s = babytris.solve(width=4, height=5, pieces="tetrominoes", discount=0.95, tol=1e-11)
    assert s.converged
    assert np.max(np.abs(bellman_backup(s) - s.values)) <= 1e-9


def test_policy_is_greedy_in_the_values(solution_4x4):
    s = solution_4x4
    t = s.transitions
    after = s.board_values
    states = np.flatnonzero(s.policy.ravel() >= 0)
    placement_of = s.policy.ravel()[states]
    # the chosen move's Q-value, found by its placement number in the state's row
    q_best = np.empty(len(states))
    for j, (state, k) in enumerate(zip(states, placement_of)):
        row = np.arange(t.offsets[state], t.offsets[state + 1])
        (e,) = row[t.placement[row] == k]
        q_best[j] = s.rules.line_scores[t.lines[e]] + s.discount * after[t.next_board[e]]
    assert np.max(np.abs(q_best - s.values.ravel()[states])) <= 1e-9


@pytest.mark.parametrize("discount", [0.0, 0.5, 0.99])
def test_discount_bounds(discount):
    s = babytris.solve(width=4, height=3, discount=discount, tol=1e-12, max_iter=100_000)
    assert s.converged
    assert np.max(np.abs(bellman_backup(s) - s.values)) <= 1e-9
    if discount == 0.0:
        # the value is the best immediate score
        t = s.transitions
        for state in range(t.n_states):
            row = range(t.offsets[state], t.offsets[state + 1])
            best = max((s.rules.line_scores[t.lines[e]] for e in row), default=0.0)
            assert s.values.ravel()[state] == best


def test_vi_and_mpi_agree(rules_4x4, transitions_4x4):
    tol, discount = 1e-8, 0.9
    vi = babytris.solve_transitions(transitions_4x4, discount=discount, tol=tol, method="vi")
    mpi = babytris.solve_transitions(transitions_4x4, discount=discount, tol=tol, method="mpi")
    assert vi.converged and mpi.converged
    assert vi.method == "vi" and mpi.method == "mpi"
    # each is within tol * discount / (1 - discount) of the fixed point
    assert np.max(np.abs(vi.values - mpi.values)) <= 2 * tol / (1 - discount)


def test_eval_sweeps_zero_is_value_iteration(transitions_4x4):
    a = babytris.solve_transitions(transitions_4x4, method="mpi", eval_sweeps=0)
    b = babytris.solve_transitions(transitions_4x4, method="vi", accelerate=False)
    assert np.array_equal(a.values, b.values)
    assert a.iterations == b.iterations


@pytest.mark.parametrize("method", ["vi", "mpi"])
@pytest.mark.parametrize("discount", [0.5, 0.9, 0.95])
def test_acceleration_needs_no_more_sweeps_and_keeps_the_answer(transitions_4x4, discount, method):
    plain = babytris.solve_transitions(transitions_4x4, discount=discount, method=method, accelerate=False, tol=1e-10)
    fast = babytris.solve_transitions(transitions_4x4, discount=discount, method=method, accelerate=True, tol=1e-10)
    exact = babytris.solve_transitions(transitions_4x4, discount=discount, method="vi", accelerate=False, tol=1e-13)
    assert fast.converged and fast.iterations <= plain.iterations
    # Both stop on the same test; a Gauss-Seidel residual r bounds the error by r / (1 - discount).
    bound = 1e-10 / (1 - discount)
    assert np.abs(fast.values - exact.values).max() <= bound
    assert np.abs(plain.values - exact.values).max() <= bound


def test_keyword_rules_equal_rules_object():
    a = babytris.solve(width=4, height=4)
    b = babytris.solve(Rules(width=4, height=4))
    assert a.rules == b.rules
    assert np.array_equal(a.boards, b.boards)
    assert np.array_equal(a.values, b.values)
    assert np.array_equal(a.policy, b.policy)


def test_solve_transitions_equals_solve(rules_4x4, transitions_4x4, solution_4x4):
    again = babytris.solve_transitions(transitions_4x4, discount=0.9, tol=1e-10)
    assert np.array_equal(again.values, solution_4x4.values)


def test_rules_and_fields_together_rejected():
    with pytest.raises(TypeError):
        babytris.solve(Rules(), width=4)
    with pytest.raises(TypeError):
        babytris.solve("4x4")


def test_mirror_symmetry_trominoes(solution_4x4):
    s = solution_4x4
    mirrored = mirror_bits(s.boards, 4, 4)
    assert sorted(mirrored.tolist()) == sorted(s.boards.tolist())  # mirror images are reachable
    idx = s.transitions.indices(mirrored)
    assert np.array_equal(s.boards[idx], mirrored)
    assert np.max(np.abs(s.values[idx] - s.values)) <= 1e-8
    assert s.rules.mirror_map() == (0, 1)
    # spot check the helper against Board.mirror
    for i in range(0, s.n_boards, 997):
        assert int(Board(int(s.boards[i]), 4, 4).mirror()) == int(mirrored[i])


@pytest.mark.parametrize("width, height", [(4, 4), (5, 3)])
def test_mirror_symmetry_tetrominoes(width, height):
    s = babytris.solve(width=width, height=height, pieces="tetrominoes", tol=1e-10)
    m = s.rules.mirror_map()
    assert m is not None
    assert [s.rules.piece_names[j] for j in m] == ["I4", "O", "T", "Z", "S", "L4", "J"]
    mirrored = mirror_bits(s.boards, width, height)
    idx = s.transitions.indices(mirrored)
    assert np.array_equal(s.boards[idx], mirrored)
    # V(mirror(b), mirror(p)) == V(b, p)
    assert np.max(np.abs(s.values[idx][:, list(m)] - s.values)) <= 1e-8
    # and the asymmetric pieces really differ somewhere, so the map matters
    assert np.max(np.abs(s.values[idx] - s.values)) > 1e-3


def test_mirror_asymmetric_probabilities():
    """With P(S) != P(Z) the game is not symmetric; with the pieces swapped as well it is."""
    a = babytris.solve(width=4, height=4, pieces=["S", "Z"], probabilities=(0.7, 0.3), tol=1e-10)
    b = babytris.solve(width=4, height=4, pieces=["S", "Z"], probabilities=(0.3, 0.7), tol=1e-10)
    mirrored = mirror_bits(a.boards, 4, 4)
    idx = b.transitions.indices(mirrored)
    assert np.array_equal(b.boards[idx], mirrored)
    assert np.max(np.abs(b.values[idx][:, [1, 0]] - a.values)) <= 1e-8


# --------------------------------------------------------------------------
# Small games against the reference
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(width=3, height=3),
        dict(width=3, height=4, discount=0.5),
        dict(width=4, height=3, pieces=["I"], line_scores=(0, 2, 0, 0)),
        dict(width=3, height=4, pieces=["I", "L"], probabilities=(0.9, 0.1), discount=0.95),
    ],
)
def test_small_games_equal_reference(kwargs):
    discount = kwargs.pop("discount", 0.9)
    rules = Rules(**kwargs)
    core = babytris.solve(rules, discount=discount, tol=1e-12)
    ref = reference.solve(rules, discount=discount, tol=1e-12)
    assert core.converged and ref.converged
    assert sorted(core.boards.tolist()) == sorted(ref.boards)
    for j, b in enumerate(ref.boards):
        for p in range(rules.n_pieces):
            assert core.value(b, p) == pytest.approx(ref.values[j][p], abs=1e-9)
    assert core.start_value == pytest.approx(ref.start_value, abs=1e-9)


# --------------------------------------------------------------------------
# Argument checks
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(discount=1.0), "discount"),
        (dict(discount=-0.1), "discount"),
        (dict(discount=1.5), "discount"),
        (dict(discount=float("nan")), "discount"),
        (dict(discount=True), "discount"),
        (dict(discount="0.9"), "discount"),
        (dict(tol=0), "tol"),
        (dict(tol=-1e-8), "tol"),
        (dict(tol=float("inf")), "tol"),
        (dict(tol=float("nan")), "tol"),
        (dict(max_iter=0), "max_iter"),
        (dict(max_iter=-5), "max_iter"),
        (dict(max_iter=10.0), "max_iter"),
        (dict(max_iter=True), "max_iter"),
        (dict(method="x"), "method"),
        (dict(method="VI"), "method"),
        (dict(method=3), "method"),
        (dict(eval_sweeps=-1), "eval_sweeps"),
        (dict(eval_sweeps=2.0), "eval_sweeps"),
    ],
)
def test_bad_solver_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        babytris.solve(width=3, height=3, **kwargs)


def test_bad_solver_arguments_to_solve_transitions(transitions_4x4):
    with pytest.raises(ValueError, match="discount"):
        babytris.solve_transitions(transitions_4x4, discount=1.0)
    with pytest.raises(ValueError, match="method"):
        babytris.solve_transitions(transitions_4x4, method="pi")


def test_bad_rule_fields_through_solve():
    with pytest.raises(babytris.RulesError, match="width"):
        babytris.solve(width=0, height=4)
    with pytest.raises(TypeError):
        babytris.solve(widht=4)


@pytest.mark.parametrize("method", ["vi", "mpi"])
def test_values_that_would_overflow_are_refused_not_swept(method):
    """They used to run every sweep and end as inf/NaN "not converged"."""
    rules = Rules(width=3, height=1, pieces=["I"], line_scores=(0, 1e308))
    with pytest.raises(ValueError, match=r"too large: a placement may earn 1e\+308"):
        babytris.solve(rules, method=method, max_iter=50)


@pytest.mark.parametrize("method", ["vi", "mpi"])
def test_stopping_at_max_iter_leaves_the_last_greedy_sweep(transitions_4x4, method):
    """No evaluation sweep or jump follows the last allowed greedy sweep."""
    one = babytris.solve_transitions(transitions_4x4, method=method, max_iter=1)
    plain = babytris.solve_transitions(transitions_4x4, method="vi", accelerate=False, max_iter=1)
    assert not one.converged and one.iterations == 1
    assert np.array_equal(one.values, plain.values)
    assert np.array_equal(one.policy, plain.policy)


def test_accelerate_must_be_a_bool(transitions_4x4):
    with pytest.raises(ValueError, match="accelerate"):
        babytris.solve_transitions(transitions_4x4, accelerate=1)


def test_numpy_piece_index(solution_4x4):
    assert solution_4x4.value(0, np.int64(1)) == solution_4x4.value(0, 1)


@pytest.mark.parametrize("method", ["vi", "mpi"])
def test_progress_sees_every_optimality_sweep(transitions_4x4, method):
    seen = []
    s = babytris.solve_transitions(transitions_4x4, method=method, progress=lambda i, r: seen.append((i, r)))
    assert [i for i, _ in seen] == list(range(1, s.iterations + 1))
    assert [r for _, r in seen] == list(s.residuals)


def test_progress_must_be_callable(transitions_4x4):
    with pytest.raises(ValueError, match="progress"):
        babytris.solve_transitions(transitions_4x4, progress=3)


@pytest.mark.parametrize("opponent", ["random", "minimax", "minavg"])
def test_threads_share_layers_without_changing_the_answer(transitions_4x4, opponent):
    """The default game is layered (no move stays in its layer), so sweeps
    share each layer among threads; every value must be bit-for-bit the same."""
    assert len(transitions_4x4.layer_starts) == 5
    one = babytris.solve_transitions(transitions_4x4, opponent=opponent, n_jobs=1)
    two = babytris.solve_transitions(transitions_4x4, opponent=opponent, n_jobs=2)
    assert one.iterations == two.iterations
    assert np.array_equal(one.values, two.values)
    assert np.array_equal(one.policy, two.policy)


def test_one_layer_sweeps_on_one_thread_whatever_n_jobs():
    """Tetrominoes on a 4-wide board keep the cell count mod 4: one layer,
    whose boards lead to each other, so the sweep stays sequential and the
    values cannot depend on the threads."""
    t = babytris.enumerate_boards(Rules(width=4, height=4, pieces="tetrominoes"))
    assert len(t.layer_starts) == 2
    one = babytris.solve_transitions(t, n_jobs=1, tol=1e-12)
    two = babytris.solve_transitions(t, n_jobs=2, tol=1e-12)
    assert np.array_equal(one.values, two.values)


def test_lookups_say_how_to_reach_a_board_they_cannot(solution_4x4):
    with pytest.raises(ValueError, match=r"Board.from_rows\(rows, height=4\) pads the rows"):
        solution_4x4.value(babytris.Board.from_rows(["#..."]), "L")
    tower = babytris.Board.from_rows(["#...", "...."], height=4)  # (a floating cell: no drop leaves one)
    with pytest.raises(KeyError, match=rf"solve the game that starts there: Rules\(start={int(tower)}"):
        solution_4x4.value(tower, "L")
    assert babytris.solve(width=4, height=4, start=tower).value(tower, "L") >= 0.0
