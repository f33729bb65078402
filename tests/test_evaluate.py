"""expected_points() and horizon_values(): exact finite-horizon evaluation, and
the argument checks shared with play()."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import random_legal_policy, small_rules

import babytris
from babytris import Rules, reference

evaluate = sys.modules["babytris.analysis.evaluate"]  # the module (babytris.evaluate is the function)

# Games with more reachable boards than this are skipped: the reference stays quick.
SMALL = 500


@pytest.fixture(scope="module")
def minimax_4x4(transitions_4x4):
    return babytris.solve_transitions(transitions_4x4, opponent="minimax", tol=1e-10)


@pytest.fixture(scope="module")
def minavg_4x4(transitions_4x4):
    return babytris.solve_transitions(transitions_4x4, opponent="minavg", tol=1e-10)


# --------------------------------------------------------------------------
# Exact values
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n_placements, value",
    [
        (1, 0.0),  # one piece clears no row of an empty 4-wide board
        (2, 53 / 720),
        (3, 0.33058320473251024),
        (10, 2.0589363089839883),  # = reference.expected_points (3.7 s)
        (10_000, 2.2941094720893824),  # the random player tops out: the sum converges
    ],
)
def test_random_player_on_4x4(transitions_4x4, n_placements, value):
    """A player placing uniformly at random against random pieces (no policy involved)."""
    assert evaluate.expected_points(transitions_4x4, "random", n_placements=n_placements) == pytest.approx(
        value, abs=1e-12
    )


def test_random_player_stops_at_a_fixed_point(transitions_4x4):
    h = babytris.horizon_values(transitions_4x4, "random", n_placements=10_000, exact=True)
    assert h.stopped == "fixed point" and h.steps < 1000 and h.bound == 0.0
    longer = babytris.horizon_values(transitions_4x4, "random", n_placements=10**9, exact=True)
    assert np.array_equal(longer.values, h.values, equal_nan=True)


def test_values_grow_with_the_horizon(solution_4x4):
    starts = [babytris.expected_points(solution_4x4, n_placements=n) for n in range(1, 40)]
    assert starts[0] == 0.0 and all(b >= a for a, b in zip(starts, starts[1:]))
    assert starts[-1] > starts[0]


@pytest.mark.parametrize("player, opponent", [("optimal", "random"), ("random", "random"), ("optimal", "solution")])
def test_extrapolated_equals_exact(minimax_4x4, player, opponent):
    """The early exit against all 10,000 backups, on every board."""
    kw = dict(n_placements=10_000, all_boards=True)
    fast = babytris.horizon_values(minimax_4x4, player, opponent, **kw)
    exact = babytris.horizon_values(minimax_4x4, player, opponent, exact=True, **kw)
    assert exact.steps == 10_000 or exact.stopped == "fixed point"
    assert np.max(np.abs(fast.values - exact.values)) <= 1e-12 * max(1.0, np.abs(exact.values).max())
    if player == "optimal" and opponent == "random":
        assert fast.stopped == "extrapolated" and fast.steps < 1000
        assert 0.0 < fast.bound < 1e-3


def test_reachable_boards_only(solution_4x4):
    """By default only the boards the game reaches are computed; their values are every board's."""
    some = babytris.horizon_values(solution_4x4, n_placements=500)
    every = babytris.horizon_values(solution_4x4, n_placements=500, all_boards=True)
    computed = ~np.isnan(some.values)
    assert some.n_computed == computed.sum() < solution_4x4.n_boards // 10
    assert every.n_computed == solution_4x4.n_boards and not np.isnan(every.values).any()
    assert np.max(np.abs(some.values[computed] - every.values[computed])) <= 1e-9
    assert computed[0] and some.start_value == every.start_value


def test_results_do_not_depend_on_n_jobs(solution_4x4):
    runs = [
        babytris.horizon_values(solution_4x4, "random", n_placements=20, all_boards=True, n_jobs=j) for j in (1, 2, 4)
    ]
    for h in runs[1:]:
        assert np.array_equal(h.values, runs[0].values) and h.steps == runs[0].steps


def test_result_object(solution_4x4):
    h = babytris.horizon_values(solution_4x4, n_placements=20)
    assert isinstance(h, babytris.HorizonValues)
    assert h.values.shape == (solution_4x4.n_boards,) and h.values.dtype == np.float64
    assert h.n_placements == 20 and h.steps == 20 and h.stopped == "horizon" and h.bound == 0.0
    assert h.start_value == babytris.expected_points(solution_4x4, n_placements=20)
    assert repr(h).startswith("<HorizonValues n_placements=20: start_value=")
    with pytest.raises(AttributeError):
        h.steps = 3


def test_minimax_guarantee_holds_against_random_pieces(minimax_4x4):
    """The robust player scores at least as much when pieces come at random as against its opponent."""
    worst = babytris.expected_points(minimax_4x4, "optimal", "solution", n_placements=1000)
    assert babytris.expected_points(minimax_4x4, "optimal", "random", n_placements=1000) >= worst - 1e-9


def test_policy_rows_find_the_policys_moves(solution_4x4):
    t = solution_4x4.transitions
    rows = evaluate.policy_rows(t, solution_4x4.policy)
    assert rows.shape == (t.n_states,) and rows.dtype == np.int16
    has = rows >= 0
    assert np.array_equal(has, np.diff(t.offsets) > 0)
    assert np.array_equal(t.placement[t.offsets[:-1][has] + rows[has]], solution_4x4.policy.ravel()[has])


# --------------------------------------------------------------------------
# Against the reference, on random small games
# --------------------------------------------------------------------------


@st.composite
def games(draw):
    rules = draw(small_rules())
    player = draw(st.sampled_from(["optimal", "random", "array"]))
    opponent = draw(st.sampled_from(["random", "array", "minimax", "worst case"]))
    n_placements = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 2**32 - 1))
    return rules, player, opponent, n_placements, seed


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(games())
def test_expected_points_equal_reference(game):
    rules, player_kind, opponent_kind, n_placements, seed = game
    t = babytris.enumerate_boards(rules)
    assume(t.n_boards <= SMALL)
    rng = np.random.default_rng(seed)
    solution = babytris.solve_transitions(t, opponent="minimax" if opponent_kind == "minimax" else "random")
    if player_kind == "optimal":
        policy = solution.policy
    elif player_kind == "array":  # any legal placement, at random
        policy = random_legal_policy(t, rng)
    pieces = None
    if opponent_kind == "minimax":
        pieces = solution.opponent_policy
    elif opponent_kind == "array":
        pieces = rng.integers(0, rules.n_pieces, t.n_boards)

    player = "random" if player_kind == "random" else policy
    opponent = {"random": "random", "worst case": "best_response"}.get(opponent_kind, pieces)
    core = babytris.expected_points(t, player, opponent, n_placements=n_placements)

    boards = t.boards.tolist()
    ref_player = (
        player
        if player_kind == "random"
        else {
            (b, p): int(policy[i, p]) for i, b in enumerate(boards) for p in range(rules.n_pieces) if policy[i, p] >= 0
        }
    )
    ref_opponent = (
        opponent if opponent_kind in ("random", "worst case") else {b: int(pieces[i]) for i, b in enumerate(boards)}
    )
    ref = reference.expected_points(rules, ref_player, ref_opponent, n_placements)
    assert abs(core - ref) <= 1e-9 * max(1.0, abs(ref))
    # every board the game can reach, through the whole table
    assert babytris.expected_points(t, player, opponent, n_placements=n_placements, exact=True) == core


# --------------------------------------------------------------------------
# Argument checks (play and the evaluation share them)
# --------------------------------------------------------------------------


def test_bad_numbers(solution_4x4):
    for value in (0, -1, 10**9 + 1, 1.5, True, "10", None):
        with pytest.raises(ValueError, match=r"n_placements must be an integer in \[1, 10\*\*9\]"):
            babytris.play(solution_4x4, n_placements=value)
        with pytest.raises(ValueError, match="n_placements"):
            babytris.expected_points(solution_4x4, n_placements=value)
    for value in (0, 10**7 + 1, 2.0, False):
        with pytest.raises(ValueError, match=r"n_games must be an integer in \[1, 10\*\*7\]"):
            babytris.play(solution_4x4, n_games=value)
    for value in (-1, 2**64, 0.5, "1"):
        with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*64 - 1\]"):
            babytris.play(solution_4x4, seed=value)
    with pytest.raises(ValueError, match="n_jobs"):
        babytris.play(solution_4x4, n_jobs=0)
    with pytest.raises(ValueError, match="n_jobs"):
        babytris.horizon_values(solution_4x4, n_jobs=2.0)
    with pytest.raises(ValueError, match="exact"):
        babytris.expected_points(solution_4x4, exact=1)
    with pytest.raises(ValueError, match="all_boards"):
        babytris.horizon_values(solution_4x4, all_boards="yes")


@pytest.mark.parametrize("function", [babytris.play, babytris.expected_points, babytris.horizon_values])
def test_bad_players_and_opponents(function, solution_4x4, transitions_4x4, minimax_4x4, minavg_4x4):
    t = transitions_4x4
    n, P = t.n_boards, t.rules.n_pieces

    def raises(match, *args, **kw):
        with pytest.raises(ValueError, match=match):
            function(*args, n_placements=5, **kw)

    raises("player must be one of 'optimal', 'random'", solution_4x4, "best")
    raises("player must be", solution_4x4, 3)
    raises(r"player='optimal' needs a Solution", t)
    raises("player: the Solution \\(opponent='minavg'\\) has no player policy", minavg_4x4)
    raises("player: the Solution was solved on other rules", babytris.solve(width=3, height=4), solution_4x4)
    raises(r"player must have shape \(n_boards, n_pieces\)", t, solution_4x4.policy.ravel())
    raises(r"player must have shape", t, solution_4x4.policy[:-1])
    raises("player must be an int array", t, solution_4x4.policy.astype(float))
    raises("player must be an int array", t, solution_4x4.policy >= 0)

    bad = solution_4x4.policy.astype(np.int64)
    bad[0, 0] = 99
    raises(
        r"player: placement 99 is not legal for piece 'I' on board index 0 .*legal placements: \[0, 1, 2, 3, 4, 5\]",
        t,
        bad,
    )
    bad = solution_4x4.policy.copy()
    bad[0, 1] = -1
    raises(r"player: gives no move \(-1\) for piece 'L' on board index 0", t, bad)
    bad = solution_4x4.policy.copy()
    i, p = np.argwhere(bad < 0)[0]
    bad[i, p] = 0
    raises(f"player: gives placement 0 for piece .* on board index {i} .*fits nowhere", t, bad)

    if function is babytris.play:
        raises(
            "opponent='best_response' .* is computed exactly by expected_points",
            solution_4x4,
            "optimal",
            "best_response",
        )
    raises("opponent must be one of 'random', 'minimax'", solution_4x4, "optimal", "maximin")
    raises("opponent='minimax' is the equilibrium opponent of solve", solution_4x4, "optimal", "minimax")
    raises("opponent must be", solution_4x4, "optimal", 1)
    raises("opponent='solution' needs a Solution", t, "random", "solution")
    raises("opponent: the Solution was solved against random pieces", solution_4x4, "optimal", "solution")
    raises(
        "opponent: the Solution was solved on other rules",
        t,
        "random",
        babytris.solve(width=4, height=3, opponent="minimax"),
    )
    raises(r"opponent must have shape \(n_boards,\)", t, "random", np.zeros(n - 1, dtype=int))
    raises(r"opponent must have shape", t, "random", np.zeros((n, P), dtype=int))
    raises("opponent must be an int array", t, "random", np.zeros(n))
    raises(
        r"opponent: piece indices must be in \[0, 1\], got 2 at board index 7",
        t,
        "random",
        np.where(np.arange(n) == 7, 2, 0),
    )
    raises(r"opponent: piece indices must be in \[0, 1\], got -1", t, "random", np.full(n, -1))

    with pytest.raises(TypeError, match="game must be a babytris.Match, Solution, Transitions or Rules"):
        function("4x4", "random")


def test_reference_rejects_bad_arguments():
    rules = Rules(width=3, height=3)
    with pytest.raises(ValueError, match="n_placements"):
        reference.expected_points(rules, n_placements=0)
    with pytest.raises(ValueError, match="player"):
        reference.expected_points(rules, "optimal")
    with pytest.raises(ValueError, match="opponent"):
        reference.expected_points(rules, "random", "maximin")
    with pytest.raises(ValueError, match="player: placement 99"):
        reference.expected_points(rules, {(0, 0): 99, (0, 1): 99}, n_placements=1)


# --------------------------------------------------------------------------
# The worst case over n placements (opponent="best_response")
# --------------------------------------------------------------------------


def test_the_worst_case_is_below_every_listed_opponent(solution_4x4, minimax_4x4):
    worst = babytris.expected_points(solution_4x4, opponent="best_response", n_placements=1000)
    assert worst == 997.0  # the optimal player, 4x4: 1,000 placements, 3 points lost at most
    for opponent in ("random", minimax_4x4, babytris.solve_transitions(solution_4x4.transitions, opponent="gaps")):
        assert babytris.expected_points(solution_4x4, opponent=opponent, n_placements=1000) >= worst
    assert babytris.expected_points(solution_4x4, "random", "best_response", n_placements=1000) == pytest.approx(
        0.4201860177, abs=1e-9
    )


def test_the_worst_case_grows_with_the_horizon_and_stops_where_the_game_can_be_ended(solution_4x4):
    values = [
        babytris.expected_points(solution_4x4, "random", "best_response", n_placements=n) for n in (1, 10, 100, 1000)
    ]
    assert values == sorted(values)
    worst = babytris.horizon_values(solution_4x4, "random", "best_response", n_placements=10**6)
    assert worst.stopped == "fixed point" and worst.steps < 100  # the opponent ends the game: no more points
    assert worst.start_value == pytest.approx(values[-1], abs=1e-12)


def test_the_tournament_shows_the_worst_case(solution_4x4, minimax_4x4):
    players = {"optimal": solution_4x4, "robust": minimax_4x4, "random": "random"}
    table = babytris.tournament(
        solution_4x4.transitions, players, {"random": "random", "minimax": minimax_4x4}, n_placements=500, n_games=0
    )
    assert np.all(table.worst_case <= table.worst + 1e-9)
    assert table.worst_case.tolist() == [
        babytris.expected_points(solution_4x4.transitions, p, "best_response", n_placements=500)
        for p in players.values()
    ]
    assert "worst case" in str(table) and "worst case" in table.to_markdown()
    assert {r["worst_case"] for r in table.to_records() if r["player"] == "random"} == {table.worst_case[2]}


def test_a_solutions_arrays_are_read_only_so_what_is_derived_once_stays_true(minimax_4x4):
    """The player's move rows and the opponent's pieces are checked once per
    Solution and kept: the arrays they come from cannot change under them."""
    for array in (minimax_4x4.values, minimax_4x4.policy, minimax_4x4.opponent_policy):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1
    first = babytris.horizon_values(minimax_4x4, "optimal", "solution", n_placements=500)
    again = babytris.horizon_values(minimax_4x4, "optimal", "solution", n_placements=500)
    assert first.start_value == again.start_value
    # the rows computed, spread over every board when read: NaN where a game never goes
    assert first.values.shape == (minimax_4x4.n_boards,)
    assert np.isnan(first.values).sum() == minimax_4x4.n_boards - first.n_computed
    assert first.values[minimax_4x4.transitions.start_index] == first.start_value


def test_a_random_players_total_until_game_over_is_its_own_games_length():
    # The random player's game surely ends on 3x3 (every row has a move out of any set it could
    # stay in), though an optimal player can keep it going forever: the check is the player's own.
    solution = babytris.solve(width=3, height=3)
    total = babytris.evaluate(solution, "random", discount=1, tol=1e-13)
    # the twin's exact expected points of the next 300 placements: a random game on 3x3 rarely lasts
    # 30 placements, so the rest is far below rounding
    twin = reference.expected_points(solution.rules, player="random", n_placements=300)
    assert total == pytest.approx(twin, abs=1e-10)
    assert total == pytest.approx(7.17406368586, abs=1e-10)
    # a linear solve of W = r + M W over the boards, from the move table
    t = solution.transitions
    P, n = t.rules.n_pieces, t.n_boards
    M, r = np.zeros((n, n)), np.zeros(n)
    scores = np.asarray(t.rules.line_scores, dtype=float)
    for s in range(t.n_states):
        lo, hi = t.offsets[s], t.offsets[s + 1]
        for e in range(lo, hi):
            chance = t.rules.probabilities[s % P] / (hi - lo)
            M[s // P, t.next_board[e]] += chance
            r[s // P] += chance * scores[t.lines[e]]
    W = np.linalg.solve(np.eye(n) - M, r)
    start = int(np.flatnonzero(t.boards == 0)[0])
    assert total == pytest.approx(W[start], abs=1e-10)
    random_solve = babytris.solve(width=3, height=3, player="random", discount=1)
    assert random_solve.longest_game is not None and 1 < random_solve.longest_game < 100
    with pytest.raises(babytris.solvers.termination.GamesDoNotEnd, match="the player's given moves can keep"):
        babytris.evaluate(solution, discount=1)  # (its optimal moves survive forever on 13 rows)
    with pytest.raises(ValueError, match="the player can keep it going forever"):
        babytris.solve(width=3, height=3, discount=1)


def test_a_random_player_that_can_go_on_forever_is_refused_at_discount_1():
    # on a 2-wide board the O piece's one placement clears both rows it fills: every game is endless
    rules = Rules(width=2, height=4, pieces=["O"])
    with pytest.raises(ValueError, match=r"the random player can keep it going forever"):
        babytris.solve(rules, player="random", discount=1)


@pytest.mark.parametrize(
    "rules", [Rules(width=3, height=3), Rules(width=4, height=4), Rules(width=3, height=4, pieces=["I", "L", "O"])]
)
@pytest.mark.parametrize("drawn", [True, False])
def test_a_random_players_survivors_are_the_twins(rules, drawn):
    from babytris.solvers.roles import MOVES_MEAN
    from babytris.solvers.termination import survivable_rows

    t = babytris.enumerate_boards(rules)
    alive = survivable_rows(t, drawn=drawn, moves=MOVES_MEAN)
    twin = reference.surviving_nodes(rules, "random" if drawn else "minimax", "random")
    assert {int(b) for b in t.boards[alive]} == twin
    assert alive.sum() <= survivable_rows(t, drawn=drawn).sum()  # (a random player keeps fewer going)
