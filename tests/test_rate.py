"""long_run_rate(): the optimal average points per placement of an endless game,
undiscounted, with certified bounds; cross-checked against playouts, exact
finite-horizon values, discounted solutions and the pure-Python reference."""

from __future__ import annotations

import importlib.machinery
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from strategies import small_rules

import babytris
from babytris import Rules, reference
from babytris.analysis import rate
from babytris.solvers.roles import policy_rows

TOL = 1e-9

# The rates of the default games (trominoes I and L, line scores 0, 1, 3, 6,
# uniform pieces), from the empty board, to 12 decimals (bounds 1e-13 apart
# with tol=1e-13), and the survival kernel's size.  Against the opponent the
# player gets one point a placement (4 placements clear 3 rows; the opponent
# holds them to a single and a double).
KNOWN = {
    (4, 4, "random"): (1.130308491615, 1_143),
    (4, 4, "minimax"): (1.0, 1_143),
    (4, 5, "random"): (1.358502193929, 16_656),
    (4, 5, "minimax"): (1.0, 16_656),
}


@pytest.fixture(scope="module")
def transitions_4x5():
    return babytris.enumerate_boards(Rules(width=4, height=5))


@pytest.fixture(scope="module")
def games(transitions_4x4, transitions_4x5):
    return {(4, 4): transitions_4x4, (4, 5): transitions_4x5}


@pytest.fixture(scope="module")
def rates(games):
    return {(w, h, o): babytris.long_run_rate(games[w, h], opponent=o) for w, h, o in KNOWN}


def span(r: babytris.Rate) -> float:
    """The spread of the relative values: how far the points of n placements
    can be from ``n * gain`` (plus ``n * (upper - lower)``)."""
    return float(np.nanmax(r.bias) - np.nanmin(r.bias))


# --------------------------------------------------------------------------
# The default games
# --------------------------------------------------------------------------


@pytest.mark.parametrize("key", list(KNOWN), ids=[f"{w}x{h}-{o}" for w, h, o in KNOWN])
def test_known_rates(rates, key):
    r = rates[key]
    gain, n_kernel = KNOWN[key]
    assert r.converged and r.upper - r.lower <= TOL
    assert r.lower <= r.gain <= r.upper
    assert r.lower - 1e-12 <= gain <= r.upper + 1e-12
    assert abs(r.gain - gain) <= TOL / 2 + 1e-12
    assert r.survives and r.survival == 1.0 and r.guaranteed_placements is None
    assert r.n_kernel == n_kernel
    assert 0.0 < r.gain <= r.ceiling == 1.5


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_tight_tolerance(transitions_4x4, opponent):
    r = babytris.long_run_rate(transitions_4x4, opponent=opponent, tol=1e-12)
    assert r.converged and r.upper - r.lower <= 1e-12
    assert abs(r.gain - KNOWN[4, 4, opponent][0]) <= 1e-12


@pytest.mark.parametrize("size", [(4, 4), (4, 5)])
def test_an_opponent_costs_points(rates, size):
    random, worst = rates[(*size, "random")], rates[(*size, "minimax")]
    assert 0.0 < worst.upper <= random.lower
    assert np.array_equal(random.kernel, worst.kernel)  # the kernel does not depend on who picks
    # The robust policy, facing random pieces, scores no more than the optimal one.
    n = 100_000
    points = babytris.expected_points(worst.transitions, worst.policy, n_placements=n)
    assert worst.lower <= points / n <= random.upper + span(random) / n


def test_taller_is_better(rates):
    assert rates[4, 4, "random"].upper < rates[4, 5, "random"].lower


def test_ceiling():
    """s[L] <= s[0] + c L with c = max_k (s[k] - s[0]) / k, and an endless game
    clears (cells per piece) / width rows per placement on average."""
    assert rate.ceiling(Rules()) == 1.5  # 3/4 of a row per placement, 2 points a row at best
    assert rate.ceiling(Rules(), opponent="minimax") == 1.5
    assert rate.ceiling(Rules(width=4, height=4, pieces="tetrominoes")) == 2.5  # one row per placement, 10 for 4
    assert rate.ceiling(Rules(width=4, height=4, pieces=["I", "O"], probabilities=(0.25, 0.75))) == 2 * 3.75 / 4
    assert rate.ceiling(Rules(width=4, height=4, pieces=["I", "O"]), opponent="minimax") == 2.0  # all O
    flat = Rules(width=4, height=4, line_scores=(1, 1, 1, 1))
    assert rate.ceiling(flat) == 1.0
    # Paying for placements, not rows (c < 0): fewer rows pay more, and the pieces' size bounds
    # the rows from below (all three cells here).
    assert rate.ceiling(Rules(width=4, height=4, line_scores=(2, 0, 0, 0)), opponent="minimax") == 1.5
    assert rate.ceiling(Rules(width=2, height=4, pieces=["I", "O"], line_scores=(0, 0, 0, 0))) == 0.0


# --------------------------------------------------------------------------
# Independent estimates of the same number
# --------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(4, 4), (4, 5)])
def test_playouts_score_the_gain(rates, size):
    """The mean points per placement of the rate's policy in 200 games of
    10,000 placements: within 5 standard errors, plus the start-up bias
    (at most the spread of the relative values over n placements)."""
    r = rates[(*size, "random")]
    n = 10_000
    result = babytris.play(r.transitions, r.policy, n_placements=n, n_games=200, seed=7)
    assert result.games_over == 0  # the policy never leaves the kernel
    assert abs(result.points_per_placement - r.gain) <= 5 * result.stderr / n + span(r) / n + TOL


@pytest.mark.parametrize("key", list(KNOWN), ids=[f"{w}x{h}-{o}" for w, h, o in KNOWN])
def test_expected_points_approach_the_gain(rates, key):
    """Exactly (no sampling): the expected points of n placements of the
    greedy policy are ``n * gain`` to within ``span + n * (upper - lower)``,
    by the telescoping sum behind the bounds."""
    r = rates[key]
    opponent = "random" if r.opponent == "random" else r.opponent_policy
    for n in (100, 1000, 100_000, 10**6):
        points = babytris.expected_points(r.transitions, r.policy, opponent, n_placements=n)
        assert n * r.lower - span(r) - 1e-9 * n <= points <= n * r.upper + span(r) + 1e-9 * n
    assert abs(points / n - r.gain) <= (span(r) + 1) / n


@pytest.mark.parametrize("size", [(4, 4), (4, 5)])
def test_minimax_bounds_hold_against_anyone(rates, size):
    """``lower`` holds for the robust policy whatever the pieces; ``upper``
    holds for any player against the opponent's piece choices (a player
    leaving the kernel scores a few placements' points, then loses)."""
    worst = rates[(*size, "minimax")]
    t = worst.transitions
    n = 10_000
    rng = np.random.default_rng(3)
    for opponent in ("random", rng.integers(0, 2, t.n_boards), np.zeros(t.n_boards, dtype=int)):
        points = babytris.expected_points(t, worst.policy, opponent, n_placements=n)
        assert points >= n * worst.lower - span(worst) - 1e-9 * n
    player = rates[(*size, "random")].policy
    points = babytris.expected_points(t, player, worst.opponent_policy, n_placements=n)
    assert points <= n * worst.upper + span(worst) + 100
    assert babytris.expected_points(t, "random", worst.opponent_policy, n_placements=n) <= n * worst.upper + 100


def test_discounted_values_approach_the_gain(rates, transitions_4x4, solution_4x4):
    """``(1 - discount) V(empty)`` tends to the gain as the discount tends to 1,
    the error about ``(1 - discount)`` times a relative value; the policy
    optimal for discount 0.9 scores less in the long run."""
    r = rates[4, 4, "random"]
    discount = 0.99
    s = babytris.solve_transitions(transitions_4x4, discount=discount, tol=1e-8)
    assert abs((1 - discount) * s.start_value - r.gain) <= (1 - discount) * (span(r) + 1)
    n = 100_000
    assert babytris.expected_points(solution_4x4, n_placements=n) / n < r.lower - 0.01


def test_policy_is_legal_and_stays_in_the_kernel(rates):
    for r in rates.values():
        t = r.transitions
        rows = policy_rows(t, r.policy)  # raises unless legal, -1 exactly where nothing fits
        states = np.flatnonzero(np.repeat(r.kernel, t.rules.n_pieces))
        assert (rows[states] >= 0).all()
        assert r.kernel[t.next_board[t.offsets[states] + rows[states]]].all()


def test_bounds_hold_before_convergence(transitions_4x4):
    """The bounds are certified at every iteration, not only at the end."""
    lower, upper = KNOWN[4, 4, "random"][0] - 1e-12, KNOWN[4, 4, "random"][0] + 1e-12
    widths = []
    for max_iter in (1, 2, 5, 20, 60):
        r = babytris.long_run_rate(transitions_4x4, max_iter=max_iter)
        assert r.iterations == max_iter and not r.converged
        assert r.lower <= lower and upper <= r.upper
        widths.append(r.upper - r.lower)
    assert widths[-1] < widths[0]


# --------------------------------------------------------------------------
# Games the player cannot survive
# --------------------------------------------------------------------------


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_survival_impossible(opponent):
    """4x2 with the default pieces: an I stands up in no column (3 rows), and
    the kernel is empty: from every board some piece sequence ends the game.
    The opponent ends it after exactly 2 placements of the best player."""
    r = babytris.long_run_rate(width=4, height=2, opponent=opponent)
    assert r.gain == r.lower == r.upper == 0.0 and r.converged and r.iterations == 0
    assert not r.survives and r.survival == 0.0 and r.n_kernel == 0
    assert r.guaranteed_placements == 2
    t = r.transitions
    if opponent == "minimax":
        games = babytris.play(t, r.policy, r.opponent_policy, n_placements=1000)
        assert games.placements.tolist() == [2]
        others = babytris.play(t, "random", r.opponent_policy, n_placements=1000, n_games=500, seed=2)
        assert others.placements.max() <= 2
    else:
        games = babytris.play(t, r.policy, n_placements=1000, n_games=500, seed=2)
        assert games.games_over == 500


def test_kernel_reached_by_luck():
    """2x4 with O, L and I.  On the empty board an O clears both rows (the
    board stays empty), an L reaches the kernel, and an I stands up (the
    only way it fits), after which an O fits nowhere: the chance x of
    reaching the kernel solves ``x = x/3 + 1/3 + (1/3) (1/3 + x/3)``, so
    x = 4/5.  In the kernel the player scores 7/3 a placement forever: the
    rate is 4/5 * 7/3 = 28/15.  The opponent gives the I, then the O."""
    rules = Rules(width=2, height=4, pieces=["O", "L", "I"])
    r = babytris.long_run_rate(rules)
    assert not r.survives and r.guaranteed_placements == 1 and r.n_kernel == 4
    assert abs(r.survival - 0.8) <= TOL and abs(r.gain - 28 / 15) <= TOL
    assert r.lower <= 28 / 15 <= r.upper and r.converged
    # The points before reaching the kernel or losing are few: (span + 20) / n.
    n = 100_000
    assert abs(babytris.expected_points(r.transitions, r.policy, n_placements=n) / n - 28 / 15) <= (span(r) + 20) / n
    n, games = 1000, 4000
    played = babytris.play(r.transitions, r.policy, n_placements=n, n_games=games, seed=5)
    assert abs((played.placements == n).mean() - 0.8) <= 4 * math.sqrt(0.8 * 0.2 / games)
    assert abs(played.mean / n - 28 / 15) <= 4 * played.stderr / n + 20 / n
    worst = babytris.long_run_rate(rules, opponent="minimax")
    assert worst.gain == 0.0 and worst.survival == 0.0 and worst.guaranteed_placements == 1
    assert worst.n_kernel == 4 and worst.iterations > 0  # the policy on the kernel is still solved
    assert babytris.play(r.transitions, worst.policy, worst.opponent_policy).placements.tolist() == [1]


# --------------------------------------------------------------------------
# Against the reference, on random small games
# --------------------------------------------------------------------------

# Games with more reachable boards than this are skipped: the reference stays quick.
SMALL = 200


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(small_rules())
def test_equals_reference(rules):
    """Both run the same steps in the same floating-point operations, so
    beyond the gain (to 1e-7) the iterations and the policy agree exactly."""
    t = babytris.enumerate_boards(rules)
    assume(t.n_boards <= SMALL)
    boards = t.boards.tolist()
    index = {b: i for i, b in enumerate(boards)}
    rates = {}
    for opponent in ("random", "minimax"):
        core = rates[opponent] = babytris.long_run_rate(t, opponent=opponent)
        ref = reference.long_run_rate(rules, opponent=opponent)
        event(
            f"{opponent}: "
            + ("survives" if core.survives else "kernel off the start" if core.n_kernel else "no kernel")
        )
        assert abs(core.gain - ref.gain) <= 1e-7 * max(1.0, abs(ref.gain))
        assert abs(core.lower - ref.lower) <= 1e-7 * max(1.0, abs(ref.lower))
        assert abs(core.upper - ref.upper) <= 1e-7 * max(1.0, abs(ref.upper))
        assert core.survives == ref.survives and abs(core.survival - ref.survival) <= 1e-7
        assert core.guaranteed_placements == ref.guaranteed_placements
        assert core.converged == ref.converged and core.iterations == ref.iterations
        assert {boards[i] for i in np.flatnonzero(core.kernel)} == ref.kernel
        for i, b in enumerate(ref.boards):
            assert [-1 if m is None else m.index for m in ref.policy[i]] == core.policy[index[b]].tolist()
            if opponent == "minimax":
                assert ref.piece_choices[i] == core.opponent_policy[index[b]]
        # what any play could score
        # (a gain of 0 may come out a rounding below: the bounds are differences of values)
        assert -1e-12 <= core.lower and core.upper <= rate.ceiling(rules, opponent=opponent) + 1e-9
    random, worst = rates["random"], rates["minimax"]
    assert worst.lower <= random.upper + 1e-9
    assert np.array_equal(random.kernel, worst.kernel) and worst.survival <= random.survival


# --------------------------------------------------------------------------
# The result object and the arguments
# --------------------------------------------------------------------------


def test_result_object(rates, transitions_4x4):
    r = rates[4, 4, "random"]
    assert isinstance(r, babytris.Rate)
    n = transitions_4x4.n_boards
    assert r.n_boards == n and r.transitions is transitions_4x4 and r.rules == Rules()
    assert r.policy.shape == (n, 2) and r.policy.dtype == np.int16
    assert r.kernel.shape == (n,) and r.kernel.dtype == bool
    assert r.bias.shape == (n,) and r.bias[0] == 0.0
    assert np.isnan(r.bias[~r.kernel]).all() and not np.isnan(r.bias[r.kernel]).any()
    assert r.opponent_policy is None
    worst = rates[4, 4, "minimax"]
    assert worst.opponent_policy.shape == (n,) and worst.opponent_policy.dtype == np.int16
    assert set(np.unique(worst.opponent_policy)) <= {0, 1}
    assert r.tol == TOL and r.max_iter == 100_000 and r.seconds >= 0
    assert repr(r).startswith("<Rate 4x4 pieces=I,L opponent=random: gain=1.130308492 in [")
    assert "converged after" in repr(r) and "kernel 1,143 of 12,978 boards" in repr(r)
    with pytest.raises(AttributeError):
        r.gain = 2.0


def test_games_given_three_ways(transitions_4x4):
    by_fields = babytris.long_run_rate(width=3, height=4, opponent="minimax")
    by_rules = babytris.long_run_rate(Rules(width=3, height=4), opponent="minimax")
    by_table = babytris.long_run_rate(babytris.enumerate_boards(Rules(width=3, height=4)), opponent="minimax")
    for r in (by_rules, by_table):
        assert r.gain == by_fields.gain and r.iterations == by_fields.iterations
        assert np.array_equal(r.policy, by_fields.policy)


def test_results_do_not_depend_on_threads(transitions_4x4, monkeypatch):
    monkeypatch.setattr(rate, "MIN_BOARDS_PER_THREAD", 100)  # threads even on small passes
    for opponent in ("random", "minimax"):
        runs = [babytris.long_run_rate(transitions_4x4, opponent=opponent, n_jobs=j) for j in (1, 2, 3)]
        for r in runs[1:]:
            assert (r.gain, r.lower, r.upper, r.iterations) == (
                runs[0].gain,
                runs[0].lower,
                runs[0].upper,
                runs[0].iterations,
            )
            assert np.array_equal(r.policy, runs[0].policy) and np.array_equal(r.kernel, runs[0].kernel)
            assert np.array_equal(r.bias, runs[0].bias, equal_nan=True)


def test_bad_arguments(transitions_4x4):
    t = transitions_4x4
    for value in ("minavg", "solution", None, 1):
        with pytest.raises(ValueError, match="opponent must be one of 'random', 'minimax'"):
            babytris.long_run_rate(t, opponent=value)
        with pytest.raises(ValueError, match="opponent"):
            rate.ceiling(Rules(), opponent=value)
    for value in (0, -1e-9, math.nan, math.inf, True, "1e-9", None):
        with pytest.raises(ValueError, match=r"tol must be a finite number > 0"):
            babytris.long_run_rate(t, tol=value)
    for value in (0, -1, 10**7 + 1, 1.5, True, "10"):
        with pytest.raises(ValueError, match=r"max_iter must be an integer in \[1, 10\*\*7\]"):
            babytris.long_run_rate(t, max_iter=value)
    for value in (0, 2.0, "all"):
        with pytest.raises(ValueError, match="n_jobs"):
            babytris.long_run_rate(t, n_jobs=value)
    with pytest.raises(ValueError, match="max_memory"):
        babytris.long_run_rate(width=3, height=3, max_memory=10)
    with pytest.raises(ValueError, match=r"line_scores must all be >= 0"):
        babytris.long_run_rate(width=3, height=3, line_scores=(0, 1, -1, 6))
    with pytest.raises(babytris.RulesError, match="width"):
        babytris.long_run_rate(width=0)
    with pytest.raises(TypeError, match="game must be a babytris.Rules or Transitions"):
        babytris.long_run_rate("4x4")
    with pytest.raises(TypeError, match="not both"):
        babytris.long_run_rate(t, width=4)
    with pytest.raises(TypeError, match="not both"):
        babytris.long_run_rate(Rules(), height=5)


def test_memory_guard():
    with pytest.raises(babytris.MemoryLimitError, match="max_memory"):
        babytris.long_run_rate(width=4, height=5, max_memory=2**20)
    assert rate.rate_bytes_per_board(Rules()) > 0


def test_reference_rejects_bad_arguments():
    for kw, match in [
        (dict(opponent="minavg"), "opponent"),
        (dict(tol=0), "tol"),
        (dict(max_iter=0), "max_iter"),
        (dict(line_scores=(0, 1, -3, 6)), "line_scores"),
    ]:
        with pytest.raises(ValueError, match=match):
            reference.long_run_rate(width=3, height=3, **kw)


def test_rate_kernels_are_compiled():
    assert rate._rate.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    assert isinstance(rate._rate.__loader__, importlib.machinery.ExtensionFileLoader)
