"""Modified policy iteration keeping board values alone (big tables: see
``babytris.solvers.sweep_arrays.BOARD_VALUES_ONLY_STATES``): the sweeps write no state
values, and the state values come from the converged board values after.
Here the threshold is lowered to 0, so that small games take that path and
are checked against the usual one and against the pure-Python reference."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import reference
from babytris.solvers import _strategy, _sweep

solve_module = sys.modules["babytris.solvers.solve"]
arrays_module = sys.modules["babytris.solvers.sweep_arrays"]


@pytest.fixture
def boards_only(monkeypatch):
    monkeypatch.setattr(arrays_module, "BOARD_VALUES_ONLY_STATES", 0)


def _both(monkeypatch, rules, **kw):
    usual = babytris.solve(rules, **kw)
    monkeypatch.setattr(arrays_module, "BOARD_VALUES_ONLY_STATES", 0)
    lean = babytris.solve(rules, **kw)
    monkeypatch.undo()
    return usual, lean


@pytest.mark.parametrize("opponent", ["random", "minimax"])
@pytest.mark.parametrize("size", [(4, 4), (4, 5), (5, 4)])
def test_the_same_values_and_policy_as_the_usual_sweeps(monkeypatch, opponent, size):
    rules = babytris.Rules(width=size[0], height=size[1])
    usual, lean = _both(monkeypatch, rules, opponent=opponent, method="mpi", n_jobs=1)
    assert usual.converged and lean.converged
    assert np.abs(lean.values - usual.values).max() <= lean.error_bound + usual.error_bound
    assert np.array_equal(lean.policy, usual.policy)  # (ties broken the same way)
    assert lean.start_value == pytest.approx(usual.start_value, abs=1e-7)


def test_the_error_bound_holds_against_the_reference(boards_only):
    rules = babytris.Rules(width=4, height=4)
    solution = babytris.solve(rules, method="mpi", tol=1e-6)
    exact = babytris.solve(rules, method="vi", tol=1e-13)
    assert solution.converged
    assert np.abs(solution.values - exact.values).max() <= solution.error_bound
    assert round(float(np.mean(solution.values)), 3) == 4.151  # (the known mean at discount 0.9)


def test_the_residual_is_the_board_values_change(boards_only):
    """The stopping test: the last greedy sweep changed no board value by more than tol."""
    solution = babytris.solve(babytris.Rules(width=4, height=5), method="mpi", tol=1e-6)
    assert solution.converged and solution.residual <= 1e-6
    assert solution.residuals[-1] == solution.residual


@pytest.mark.parametrize("threads", [1, 2])
def test_the_answer_does_not_depend_on_threads(boards_only, threads):
    rules = babytris.Rules(width=4, height=5)
    one = babytris.solve(rules, method="mpi", n_jobs=1)
    many = babytris.solve(rules, method="mpi", n_jobs=threads)
    assert np.array_equal(one.policy, many.policy)
    assert np.abs(one.values - many.values).max() <= one.error_bound + many.error_bound


def test_other_games_keep_the_usual_sweeps(boards_only):
    """Only the best move, points and drawn or least valuable pieces keep board values alone."""
    rules = babytris.Rules(width=4, height=4)
    for kw in (dict(opponent="minavg"), dict(opponent="gaps"), dict(player="random"), dict(method="vi")):
        solution = babytris.solve(rules, **kw)
        assert solution.converged and np.isfinite(solution.values).all()


def test_the_sweeper_refuses_board_values_only_where_it_cannot(transitions_4x4):
    t = transitions_4x4
    n = t.n_boards
    args = (
        t.offsets, t.next_board, t.lines, np.asarray(t.rules.line_scores, dtype=np.float64),
        np.asarray(t.rules.probabilities), 0.9, None, np.zeros(n), np.full(2 * n, -1, dtype=np.int16),
        np.arange(n, dtype=np.int32), np.array([0, n], dtype=np.int64),
    )  # fmt: skip
    with pytest.raises(ValueError, match="V=None"):
        _sweep.Sweeper(*args, moves=_sweep.MOVES_MEAN)
    with pytest.raises(ValueError, match="V=None"):
        _sweep.Sweeper(*args, pieces=_sweep.PIECES_BEST)
    with pytest.raises(ValueError, match="V=None"):
        _sweep.Sweeper(*args, move_reward=np.zeros(t.n_moves))
    sweeper = _sweep.Sweeper(*args, pieces=_sweep.PIECES_WORST)
    with pytest.raises(ValueError, match="V_prev"):
        sweeper.greedy_sweep(np.zeros(2 * n), np.zeros(n))
    with pytest.raises(ValueError, match="state values"):
        _strategy.OpponentResponse(sweeper)
    no_policy = args[:8] + (None,) + args[9:]
    with pytest.raises(ValueError, match="policy=None only with V=None"):
        _sweep.Sweeper(*no_policy[:6], np.zeros(2 * n), *no_policy[7:])
    sweeper = _sweep.Sweeper(*no_policy)
    with pytest.raises(ValueError, match="no move chosen yet"):
        sweeper.evaluation_sweep()  # (the moves live in the cache a greedy sweep fills)
    with pytest.raises(ValueError, match="keeps no policy"):
        sweeper.first_best_moves(0.0)
    sweeper.greedy_sweep()
    sweeper.evaluation_sweep()


def test_a_boards_only_sweep_moves_the_board_values_as_the_usual_one(transitions_4x4):
    t = transitions_4x4
    n = t.n_boards
    from babytris.engine.transitions import independent_layers, sweep_order

    order, starts = sweep_order(t)
    common = (t.offsets, t.next_board, t.lines, np.asarray(t.rules.line_scores, dtype=np.float64),
              np.asarray(t.rules.probabilities), 0.9)  # fmt: skip
    V, W1, W2, W3 = np.zeros(2 * n), np.zeros(n), np.zeros(n), np.zeros(n)
    p1, p2 = np.full(2 * n, -1, dtype=np.int16), np.full(2 * n, -1, dtype=np.int16)
    kw = dict(independent_layers=independent_layers(t))
    usual = _sweep.Sweeper(*common, V, W1, p1, order, starts, **kw)
    lean = _sweep.Sweeper(*common, None, W2, p2, order, starts, **kw)
    leanest = _sweep.Sweeper(*common, None, W3, None, order, starts, n_threads=2, **kw)  # (moves in the cache)
    for _ in range(5):
        usual.greedy_sweep()
        r = lean.greedy_sweep()
        assert leanest.greedy_sweep() == r
        assert np.array_equal(W1, W2) and np.array_equal(p1, p2) and np.array_equal(W1, W3)
        usual.evaluation_sweep()
        lean.evaluation_sweep()
        leanest.evaluation_sweep()
        assert np.array_equal(W1, W2) and np.array_equal(W1, W3)
    assert r > 0


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    rules=small_rules(sizes=(2, 3)),
    opponent=st.sampled_from(["random", "minimax"]),
    discount=st.sampled_from([0.5, 0.9]),
)
def test_random_rule_sets_agree_with_the_reference(monkeypatch, rules, opponent, discount):
    monkeypatch.setattr(arrays_module, "BOARD_VALUES_ONLY_STATES", 0)
    solution = babytris.solve(rules, opponent=opponent, method="mpi", discount=discount, tol=1e-9)
    ref = reference.solve(rules, discount=discount, opponent=opponent, tol=1e-12, max_iter=10_000)
    assert solution.converged and ref.converged
    slack = solution.error_bound + 1e-8
    assert solution.start_value == pytest.approx(ref.start_value, abs=slack)
    for i, board in enumerate(solution.boards):
        for piece in range(rules.n_pieces):
            assert solution.values[i, piece] == pytest.approx(ref.value(int(board), piece), abs=slack)


def test_a_loss_is_the_value_of_states_without_a_move(monkeypatch):
    """The state values are written at the end, the dead value (-loss) included; the
    sweeps' scratch in their pages (a jump's direction starts from zeros) is not disturbed by it."""
    calls = []
    real = solve_module._greedy.state_values
    monkeypatch.setattr(solve_module._greedy, "state_values", lambda *a, **k: calls.append(1) or real(*a, **k))
    rules = babytris.Rules(width=4, height=5)
    reward = babytris.Reward(score=1, loss=5)
    usual, lean = _both(monkeypatch, rules, reward=reward, method="mpi")
    assert calls == [1]  # (the usual solve writes its state values as it sweeps)
    assert lean.values.min() == -5.0 and np.array_equal(lean.values == -5.0, usual.values == -5.0)
    assert np.abs(lean.values - usual.values).max() <= lean.error_bound + usual.error_bound
    assert np.array_equal(lean.policy, usual.policy)


def test_the_cache_in_the_callers_room_is_checked(transitions_4x4):
    t = transitions_4x4
    n = t.n_boards
    args = (
        t.offsets, t.next_board, t.lines, np.asarray(t.rules.line_scores, dtype=np.float64),
        np.asarray(t.rules.probabilities), 0.9, None, np.zeros(n), None,
        np.arange(n, dtype=np.int32), np.array([0, n], dtype=np.int64),
    )  # fmt: skip
    with pytest.raises(
        ValueError, match=rf"chosen_room must hold 5 bytes a state \({5 * 2 * n}\), got {5 * 2 * n - 1}"
    ):
        _sweep.Sweeper(*args, chosen_room=np.zeros(5 * 2 * n - 1, dtype=np.uint8))
    with pytest.raises(ValueError, match="chosen_room must start on a 4-byte boundary"):
        _sweep.Sweeper(*args, chosen_room=np.zeros(5 * 2 * n + 8, dtype=np.uint8)[1:])
    with_policy = args[:8] + (np.full(2 * n, -1, dtype=np.int16),) + args[9:]
    with pytest.raises(ValueError, match="chosen_room only with policy=None"):
        _sweep.Sweeper(*with_policy, chosen_room=np.zeros(5 * 2 * n, dtype=np.uint8))
    room = np.zeros(5 * 2 * n, dtype=np.uint8)
    sweeper = _sweep.Sweeper(*args, chosen_room=room)
    sweeper.greedy_sweep()
    chosen_next = room[: 4 * 2 * n].view(np.int32)
    assert (chosen_next >= -1).all() and (chosen_next < n).all() and (chosen_next >= 0).any()
    del sweeper  # (the room is the caller's: nothing freed twice)
    assert room.sum() > 0
    with pytest.raises(ValueError, match="set up already"):
        _sweep.Sweeper(*args).cache_chosen_moves(np.zeros(5 * 2 * n, dtype=np.uint8))


def test_a_sweeper_collected_in_a_cycle_leaves_the_callers_room_alone():
    """The garbage collector clears a sweeper's Python fields before freeing it: the cache in the
    caller's room must not be taken for the sweeper's own (a review found free() called on it)."""
    import subprocess

    script = """
import gc, numpy as np, babytris
from babytris.solvers import _sweep
t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
n = t.n_boards
for _ in range(3):
    room = np.zeros(5 * 2 * n, dtype=np.uint8)
    s = _sweep.Sweeper(t.offsets, t.next_board, t.lines, np.asarray(t.rules.line_scores, dtype=np.float64),
                       np.asarray(t.rules.probabilities), 0.9, None, np.zeros(n), None,
                       np.arange(n, dtype=np.int32), np.array([0, n], dtype=np.int64), chosen_room=room)
    s.greedy_sweep()
    class Holder: pass
    h = Holder(); h.me = h; h.sweeper = s
    del s, h, room
    gc.collect()
print("survived")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "survived" in done.stdout, done.stderr[-2000:]
