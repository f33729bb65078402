"""The lean mode (babytris.modes.lean): the same values and policy as the default mode, in far less memory."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import MemoryLimitError, Rules
from babytris.modes.lean import LEAN_KEPT, lean_bytes, lean_plan, solve_lean


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
@pytest.mark.parametrize("keep", LEAN_KEPT)
def test_lean_equals_the_default_mode(size, opponent, keep):
    width, height = size
    lean = solve_lean(width=width, height=height, opponent=opponent, keep=keep)
    full = babytris.solve(width=width, height=height, opponent=opponent)
    assert lean.converged and lean.opponent == opponent and lean.plan.keep == keep
    assert lean.method == ("vi" if keep == "none" else "mpi") and (lean.evaluations > 0) == (keep != "none")
    agree(lean, full)


@pytest.mark.long
@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_lean_equals_the_default_mode_at_4x6(opponent):
    lean = solve_lean(width=4, height=6, opponent=opponent)
    assert lean.plan.keep == "moves" and lean.method == "mpi"
    agree(lean, babytris.solve(width=4, height=6, opponent=opponent))


def test_modified_policy_iteration_takes_fewer_greedy_sweeps_than_value_iteration():
    mpi, vi = solve_lean(width=4, height=5, keep="placements"), solve_lean(width=4, height=5, keep="none")
    assert mpi.iterations < vi.iterations / 2  # (8 greedy sweeps against 21 here)
    # the kept placement and the kept move are the same move: the same sweeps, the same values
    moves = solve_lean(width=4, height=5, keep="moves")
    assert np.array_equal(moves.board_values, mpi.board_values)
    assert (moves.iterations, moves.evaluations) == (mpi.iterations, mpi.evaluations)


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
    keep=st.sampled_from(LEAN_KEPT),
)
def test_lean_equals_the_default_mode_over_random_rules(rules, discount, opponent, keep):
    assume(not rules.mirror and rules.objective != "combo" and rules.moves == "hard")
    kw = dict(discount=discount, opponent=opponent, tol=1e-10)
    agree(solve_lean(rules, keep=keep, **kw), babytris.solve(rules, **kw))


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
        (dict(width=4, height=4, keep="all"), "keep must be one of 'moves', 'placements', 'none'"),
        (dict(width=4, height=4, ties="last"), "ties must be 'first' in lean mode"),
        (dict(width=4, height=4, eval_sweeps=-1), "eval_sweeps"),
    ],
)
def test_bad_arguments_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        solve_lean(**kwargs)


def test_work_beyond_max_memory_is_refused_during_the_search():
    # 4x6's two bitmaps take 4 MiB: 1 MiB more holds about 131,000 boards of the 2,546,847
    with pytest.raises(MemoryLimitError, match="lean mode needs more than max_memory.*the search stopped"):
        solve_lean(width=4, height=6, max_memory=2**22 + 2**20)
    with pytest.raises(MemoryLimitError, match="search.s two bitmaps .* take 4.0 MiB; refused before the search"):
        solve_lean(width=4, height=6, max_memory=2**21)


def test_an_unreachable_board_is_refused():
    lean = solve_lean(width=4, height=4)
    with pytest.raises(ValueError, match="not reachable"):
        lean.values_and_moves([0b1111])  # a full row never survives


def test_the_estimate_counts_bitmap_ranks_and_values():
    rules = Rules(width=4, height=7)
    words = 2**28 // 64
    n = 35_655_859
    # the solve's peak: bitmap and ranks, values, and each board's change (float32) in the sweep before a jump
    assert lean_bytes(rules, n) == 12 * words + 12 * n
    assert lean_bytes(rules, n, accelerate=False) == 12 * words + 8 * n
    # the search's two bitmaps, where few boards are reachable
    assert lean_bytes(rules, 1000) == 16 * words


def test_the_estimate_counts_what_is_kept():
    rules = Rules(width=4, height=8)  # two pieces: a byte each, or 5 bytes each
    words, n = 2**32 // 64, 499_182_027
    assert lean_bytes(rules, n, keep="placements") == 12 * words + (12 + 2) * n
    assert lean_bytes(rules, n, accelerate=False, keep="moves") == 12 * words + (8 + 10) * n


def test_the_plan_keeps_the_most_that_fits_and_says_why():
    rules, n = Rules(width=4, height=8), 499_182_027
    gib = 2**30
    default = lean_plan(rules, n, 8 * gib)  # 4x8 at the default max_memory
    assert (default.keep, default.accelerate, default.method) == ("placements", True, "mpi")
    assert "keep='moves' with Aitken jumps would need 10.98 GiB, over max_memory=8.00 GiB" == default.why
    roomy = lean_plan(rules, n, 12 * gib)
    assert (roomy.keep, roomy.accelerate, roomy.why) == ("moves", True, "the most that fits")
    assert roomy.bytes == lean_bytes(rules, n, True, "moves") <= 12 * gib
    tight = lean_plan(rules, n, 5.5 * gib)
    assert (tight.keep, tight.accelerate, tight.method) == ("placements", False, "mpi")
    tighter = lean_plan(rules, n, 5 * gib)
    assert (tighter.keep, tighter.accelerate, tighter.method) == ("none", False, "vi")
    assert lean_plan(rules, n, 4 * gib) is None
    assert lean_plan(rules, n, 8 * gib, keep="moves") is None  # asked for, and it does not fit


def test_acceleration_is_left_out_where_its_copy_of_the_values_would_not_fit(monkeypatch):
    from babytris.modes import lean

    rules = Rules(width=4, height=5)
    plain, accelerated = lean_bytes(rules, 182_101, accelerate=False), lean_bytes(rules, 182_101)
    monkeypatch.setattr(lean, "forecast_boards", lambda rules: 182_101)  # as for a board of over 30 cells
    squeezed = solve_lean(rules, keep="none", max_memory=(plain + accelerated) // 2)
    roomy = solve_lean(rules, keep="none", max_memory=2 * accelerated)
    assert not squeezed.plan.accelerate and roomy.plan.accelerate
    assert squeezed.converged and squeezed.iterations > roomy.iterations  # no Aitken jumps: more sweeps
    assert np.abs(squeezed.board_values - roomy.board_values).max() <= squeezed.error_bound + roomy.error_bound


def test_huge_scores_converge_without_jumps_their_float32_changes_could_not_hold():
    """Values near 1e200 change by more than float32 holds (3.4e38): the sweeps record no changes
    for a jump there (sweeping.MAX_RECORDED_CHANGE) and converge to the scaled values of the game."""
    plain = babytris.solve(width=4, height=4)
    big = solve_lean(width=4, height=4, line_scores=(0, 1e200, 3e200, 6e200), tol=1e192)
    assert big.converged and np.isfinite(big.board_values).all()
    assert abs(big.start_value / 1e200 - plain.start_value) <= (big.error_bound / 1e200 + plain.error_bound)


def test_the_command_line_says_what_the_lean_solve_kept_and_why(capsys):
    from babytris.cli import commands

    args = ["solve", "--width", "4", "--height", "5", "--mode", "lean", "--json"]
    assert commands.main([*args, "--max-memory", "0.003"]) == 0
    result = json.loads(capsys.readouterr().out)
    # 3 MiB: the bitmap, ranks, values and Aitken record fit, the next boards do not
    assert (result["method"], result["kept"], result["aitken"]) == ("mpi", "placements", True)
    assert result["plan"].startswith("keep='moves' with Aitken jumps would need ")
    assert result["evaluation_sweeps"] > 0 and result["iterations"] < 12
    assert commands.main([*args, "--method", "vi"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["method"], result["kept"], result["evaluation_sweeps"]) == ("vi", "none", 0)


@pytest.mark.parametrize("keep", ["moves", "placements"])
def test_an_evaluation_sweep_before_any_greedy_one_reads_no_move(keep):
    from babytris.engine.placements import engine
    from babytris.engine.transitions import layers
    from babytris.modes import _lean

    rules = Rules(width=4, height=4)
    table = _lean.LeanTable(engine(rules), 0, 10**6)
    W = np.full(table.n_boards, 1.5)
    scores, probs = np.asarray(rules.line_scores, dtype=float), np.asarray(rules.probabilities)
    sweeper = _lean.LeanSweeper(table, W, scores, probs, 0.9, np.asarray(layers(rules)), keep=keep)
    assert sweeper.evaluation_sweep() == 0.0 and np.all(W == 1.5)  # (nothing kept yet: every board keeps its value)
    with pytest.raises(ValueError, match="keeps no moves"):
        _lean.LeanSweeper(table, W, scores, probs, 0.9, np.asarray(layers(rules))).evaluation_sweep()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=small_rules(sizes=(2, 6), variants=True), seed=st.integers(0, 2**32 - 1))
def test_the_sweeps_find_the_moves_that_dropping_every_placement_finds(rules, seed):
    # The sweeps and the search settle only the placements that fit, at the rows a table by the board's
    # column profile gives (not with top_out: there every placement is dropped, as greedy_steps does).
    assume(not rules.mirror and rules.objective != "combo" and rules.moves == "hard")
    assume(rules.width * rules.height <= 20)
    from babytris.engine.placements import canonical_boards, engine
    from babytris.engine.transitions import layers
    from babytris.modes import _lean

    start = int(canonical_boards(np.array([rules.start], dtype=np.uint64), rules)[0])
    table = _lean.LeanTable(engine(rules), start, 10**6)
    boards = table.boards()
    scores, probs = np.asarray(rules.line_scores, dtype=float), np.asarray(rules.probabilities)
    W = np.random.default_rng(seed).uniform(0.0, 10.0, table.n_boards)
    # The values: one backup of every board from W, written nowhere, against every placement's.
    values, _, _, _ = table.greedy_steps(boards, W, scores, 0.9)
    changes = np.abs(values @ probs - W)
    sweeper = _lean.LeanSweeper(table, W, scores, probs, 0.9, np.asarray(layers(rules)), keep="moves")
    change, at = sweeper.bellman_residual()
    assert change == pytest.approx(changes.max(), rel=1e-12) and changes[at] == pytest.approx(change, rel=1e-12)
    # The moves kept: without discount each board's first best move by its rows cleared alone.
    _, moves, after, lines = table.greedy_steps(boards, W, scores, 0.0)
    fits = moves >= 0
    for keep in ("moves", "placements"):
        sweeper = _lean.LeanSweeper(table, W.copy(), scores, probs, 0.0, np.asarray(layers(rules)), keep=keep)
        sweeper.greedy_sweep()
        if keep == "placements":
            assert np.array_equal(sweeper.kept_placements, np.where(fits, moves, 255))
            continue
        nexts = np.where(fits, table.index(after.ravel()).reshape(after.shape), 0xFFFFFFFF)
        assert np.array_equal(sweeper.kept_next, nexts)
        assert np.array_equal(sweeper.kept_lines, np.where(fits, lines, 0))


@pytest.mark.parametrize("kind", ["table", "lean"])
def test_a_sweep_layer_by_layer_is_the_whole_sweep(kind):
    """``layer=k`` sweeps that layer's boards alone (the sharded solve exchanges values between them):
    the layers in order, greedy then evaluation, leave the values one whole sweep of each leaves, bit
    for bit; one layer alone changes no board of another; a layer out of range is refused."""
    from babytris.engine.enumeration import enumerate_boards
    from babytris.engine.placements import engine
    from babytris.engine.transitions import layers, sweep_order
    from babytris.modes import _lean
    from babytris.solvers import _sweep

    rules = Rules(width=4, height=5)
    scores, probs = np.asarray(rules.line_scores, dtype=float), np.asarray(rules.probabilities)
    n_layers = len(layers(rules))

    def sweeper(W: np.ndarray):
        if kind == "lean":
            return _lean.LeanSweeper(table, W, scores, probs, 0.9, np.asarray(layers(rules)), keep="placements")
        order, starts = sweep_order(table)
        return _sweep.Sweeper(
            table.offsets, table.next_board, table.lines, scores, probs, 0.9, None, W, None, order, starts,
            independent_layers=True,
        )  # fmt: skip

    table = _lean.LeanTable(engine(rules), 0, 10**6) if kind == "lean" else enumerate_boards(rules)
    start = np.random.default_rng(3).uniform(0.0, 10.0, table.n_boards)
    whole, parts = start.copy(), start.copy()
    by_sweep, by_layer = sweeper(whole), sweeper(parts)
    assert by_sweep.greedy_sweep() == max(by_layer.greedy_sweep(layer=k) for k in range(n_layers))
    assert np.array_equal(whole, parts)
    assert by_sweep.evaluation_sweep() == max(by_layer.evaluation_sweep(layer=k) for k in range(n_layers))
    assert np.array_equal(whole, parts)
    before = parts.copy()
    by_layer.greedy_sweep(layer=2)
    boards = table.boards() if kind == "lean" else table.boards
    other = layers(rules)[np.bitwise_count(boards) % n_layers] != 2
    assert np.array_equal(parts[other], before[other]) and not np.array_equal(parts, before)
    for bad in (-2, n_layers):
        with pytest.raises(ValueError, match="layer must be -1"):
            by_layer.greedy_sweep(layer=bad)
