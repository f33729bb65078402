"""The total reward until game over (``discount=1``, issue 39): accepted
where every play of both sides ends, refused with the rows that prove
otherwise, solved with a certified bound, and checked against the reference
twin (its own survival test and its own Jacobi sweeps)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import Rules, reference
from babytris.engine.enumeration import enumerate_boards
from babytris.solvers.termination import GamesDoNotEnd, longest_games, survivable_rows

TETROMINOES_4X4 = Rules(width=4, height=4, pieces="tetrominoes", line_scores=(0, 1, 1, 1, 1))


@pytest.mark.parametrize(
    "rules, drawn, survivors",
    [
        (Rules(width=4, height=4), True, 1_143),  # Baby Tetris: safe play goes on forever
        (Rules(width=4, height=4), False, 7_970),
        (Rules(width=3, height=3), True, 13),
        (TETROMINOES_4X4, True, 0),  # some drawn sequence ends every game
    ],
    ids=["4x4", "4x4 chosen", "3x3", "tetrominoes 4x4"],
)
def test_the_survivors_are_the_reference_twins(rules, drawn, survivors):
    t = enumerate_boards(rules)
    alive = survivable_rows(t, drawn=drawn)
    assert alive.sum() == survivors
    twin = reference.surviving_nodes(rules, "random" if drawn else "minimax")
    assert {int(b) for b in t.boards[alive]} == twin


def test_the_survivors_are_the_long_run_rates_kernel():
    """Two routes to the same set: the long-run rate's survival kernel (boards
    from which the player can go on forever whatever comes) is these rows."""
    rate = babytris.long_run_rate(width=4, height=4)
    alive = survivable_rows(rate.transitions, drawn=True)
    assert rate.n_kernel == alive.sum() == 1_143


def test_a_game_that_need_not_end_is_refused_with_its_proof():
    with pytest.raises(GamesDoNotEnd, match=r"from 1,143 of the 12,978 rows of this 4x4 game .* forever"):
        babytris.solve(width=4, height=4, discount=1)
    with pytest.raises(ValueError, match="the player and the opponent together") as refused:
        babytris.solve(TETROMINOES_4X4, discount=1, opponent="minimax")  # (it may give I pieces forever)
    # the opponent may force the end, so the total need not be unbounded: the error bound is what fails
    assert "unbounded" not in str(refused.value) and "bounds the sweeps' error" in str(refused.value)
    with pytest.raises(ValueError, match="so the total is unbounded"):  # drawn pieces: the player alone goes on
        babytris.solve(width=4, height=4, discount=1)
    with pytest.raises(ValueError, match="some play never ends"):
        reference.solve(Rules(width=3, height=3), discount=1)


def test_the_total_equals_the_reference_within_the_bound():
    fast = babytris.solve(TETROMINOES_4X4, discount=1, tol=1e-10)
    twin = reference.solve(TETROMINOES_4X4, discount=1, tol=1e-12, max_iter=100_000)
    assert fast.converged and twin.converged
    assert fast.error_bound is not None and fast.error_bound < 1e-7
    assert fast.start_value == pytest.approx(twin.start_value, abs=fast.error_bound + 1e-9)
    assert fast.start_value == pytest.approx(6.0695277, abs=1e-6)  # (lines cleared until game over)


def test_the_length_bound_is_proven_and_tight():
    """The bound lies above the longest expected game (solved as its own
    total: one point a placement, the player keeping the game going) and
    within 1% of it."""
    t = enumerate_boards(TETROMINOES_4X4)
    bound = longest_games(t, drawn=True)
    every_placement = Rules(width=4, height=4, pieces="tetrominoes", line_scores=(1, 1, 1, 1, 1))
    longest = babytris.solve(every_placement, discount=1, tol=1e-12)
    board_values = longest.board_values
    assert np.all(board_values <= bound + 1e-9)
    assert np.all(bound <= 1.01 * board_values + 0.01 + 1e-9)


def test_a_combo_against_every_opponent():
    rules = Rules(width=4, height=4, objective="combo", start=0b0111_0111_0111)
    for opponent in ("random", "minimax", "minavg", "gaps"):
        fast = babytris.solve(rules, discount=1, opponent=opponent, tol=1e-12)
        twin = reference.solve(rules, discount=1, opponent=opponent, tol=1e-13, max_iter=100_000)
        assert fast.start_value == pytest.approx(twin.start_value, abs=fast.error_bound + 1e-9), opponent
    assert babytris.solve(rules, discount=1).start_value == pytest.approx(2.181640625, abs=1e-9)


def test_a_saved_total_proves_its_bound_again(tmp_path):
    fast = babytris.solve(TETROMINOES_4X4, discount=1)
    fast.save(tmp_path / "total.npz")
    back = babytris.load(tmp_path / "total.npz")
    assert back.longest_game == fast.longest_game and back.error_bound == fast.error_bound


def test_the_command_line_refuses_or_solves(capsys):
    from babytris.cli import commands

    assert commands.main(["solve", "--discount", "1"]) == 2
    assert "1,143 of the 12,978 rows" in capsys.readouterr().err
    line_a_point = ["--pieces", "tetrominoes", "--line-scores", "0", "1", "1", "1", "1"]
    assert commands.main(["solve", "--discount", "1", *line_a_point]) == 0
    assert "start value  6.069528 points" in capsys.readouterr().out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    rules=small_rules(sizes=(2, 3), variants=True),
    opponent=st.sampled_from(["random", "minimax", "minavg", "gaps"]),
)
def test_random_rule_sets_agree_with_the_reference(rules, opponent):
    """Both refuse, or both solve to the same values within the bound."""
    try:
        fast = babytris.solve(rules, discount=1, opponent=opponent, tol=1e-11)
    except GamesDoNotEnd:
        event("refused: some play never ends")
        with pytest.raises(ValueError, match="never ends"):
            reference.solve(rules, discount=1, opponent=opponent)
        return
    # (games expected to last hundreds of placements converge as slowly: the reference's Jacobi
    # sweeps would take minutes; their bound is tested above)
    assume(fast.longest_game is not None and fast.longest_game <= 100)
    event("solved")
    twin = reference.solve(rules, discount=1, opponent=opponent, tol=1e-12, max_iter=100_000)
    assert fast.converged and twin.converged
    slack = fast.error_bound + 1e-8 * max(1.0, abs(twin.start_value))
    assert fast.start_value == pytest.approx(twin.start_value, abs=slack)
    for i, node in enumerate(twin.boards):
        if isinstance(node, int):
            row = fast.transitions.board_index(node)
            assert np.allclose(fast.values[row], twin.values[i], atol=slack)


#: S and Z pieces on 3x5: every play of both sides ends (an opponent cannot prolong it), lines still score.
S_AND_Z = Rules(width=3, height=5, pieces=["S", "Z"])


@pytest.mark.parametrize(
    "rules, opponent",
    [(TETROMINOES_4X4, "random"), (S_AND_Z, "random"), (S_AND_Z, "minimax"), (S_AND_Z, "minavg"), (S_AND_Z, "gaps")],
    ids=["tetrominoes", "S and Z", "S and Z minimax", "S and Z minavg", "S and Z gaps"],
)
def test_the_exports_carry_the_total(tmp_path, rules, opponent):
    """Storm computes total rewards: the exported game (against the
    solution's opponent, fixed) has no branch to "done" but game over, and
    Storm's sound value iteration finds the optimal player's total against it."""
    chooser = babytris.solve(rules, discount=1, opponent=opponent, tol=1e-12)
    # (against a fixed opponent the optimal player's total: the solution's own, or its best response)
    solution = babytris.solve(rules, discount=1, opponent=chooser, tol=1e-12) if opponent != "random" else chooser
    if opponent == "minimax":
        assert solution.start_value == pytest.approx(chooser.start_value, abs=1e-9)  # (the max-min value)
    model = babytris.explicit_model(solution)
    assert model.total_reward()[0] == pytest.approx(solution.start_value, abs=solution.error_bound + 1e-9)
    stormpy = pytest.importorskip("stormpy", reason="stormpy not installed (pip install 'babytris[export]')")
    from model_checking import storm_start_value

    babytris.to_drn(solution, tmp_path / "total.drn")
    storm = stormpy.build_model_from_drn(str(tmp_path / "total.drn"))
    assert storm_start_value(stormpy, storm) == pytest.approx(solution.start_value, abs=solution.error_bound + 1e-8)
    with pytest.raises(ValueError, match="DiscreteDP solves discounted MDPs"):
        babytris.to_quantecon(solution)


def test_an_export_of_a_game_that_need_not_end_is_refused():
    t = enumerate_boards(Rules(width=4, height=4))
    with pytest.raises(GamesDoNotEnd, match="1,143 of the 12,978 rows"):
        babytris.explicit_model(t, discount=1)
