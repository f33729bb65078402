"""Tournaments: exact expected points of players against opponents, with playouts as a check."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

import babytris


@pytest.fixture(scope="module")
def minimax(transitions_4x4):
    return babytris.solve_transitions(transitions_4x4, opponent="minimax")


@pytest.fixture(scope="module")
def small_table(transitions_4x4, solution_4x4, minimax):
    return babytris.tournament(
        transitions_4x4,
        {"optimal": solution_4x4, "max-min": minimax, "random": "random"},
        {"random": "random", "minimax": minimax},
        n_placements=200,
        n_games=400,
        seed=3,
    )


def test_table_holds_exact_expectations(small_table, solution_4x4, transitions_4x4, minimax):
    t = small_table
    assert t.expected.shape == t.playout_mean.shape == (3, 2)
    assert t.expected[0, 0] == babytris.expected_points(solution_4x4, n_placements=200)
    assert t.expected[2, 1] == babytris.expected_points(transitions_4x4, "random", minimax, n_placements=200)
    assert np.array_equal(t.worst, t.expected.min(axis=1))


def test_playouts_agree_with_the_exact_values(small_table):
    """Means of 400 games within 5 standard errors of the exact expectation
    (deterministic pairs, no randomness at all, match exactly)."""
    assert small_table.largest_gap <= 5
    # optimal and max-min policies against the minimax opponent's pieces: a deterministic game
    assert small_table.playout_stderr[0, 1] == 0.0
    assert small_table.playout_mean[0, 1] == small_table.expected[0, 1]


def test_exports(small_table):
    records = small_table.to_records()
    assert len(records) == 6 and records[0]["player"] == "optimal" and records[0]["opponent"] == "random"
    rows = list(csv.DictReader(io.StringIO(small_table.to_csv())))
    assert [r["player"] for r in rows] == [r["player"] for r in records]
    assert float(rows[3]["expected"]) == records[3]["expected"]
    text = str(small_table)
    assert "max-min" in text and "min" in text.splitlines()[0]
    assert small_table.to_markdown().startswith("| player | random | minimax | min |")


def test_standard_tournament_rows_and_columns():
    t = babytris.standard_tournament(
        width=3,
        height=4,
        n_placements=30,
        n_games=10,
        opponent_discounts=(0.5,),
        rewards=(babytris.Reward(height=1, score=1),),
    )
    assert t.players == ("optimal", "random", "max-min", "max-min 0/1/1/0")
    assert t.opponents == ("random", "minimax 0.5", "minavg 0.5", "gaps 0.5")
    assert t.expected.shape == (4, 4) and np.all(np.isfinite(t.expected))
    # a random player scores less than the optimal one against every opponent
    assert np.all(t.expected[1] < t.expected[0])


def test_bad_arguments(transitions_4x4):
    with pytest.raises(ValueError, match="at least one"):
        babytris.tournament(transitions_4x4, {}, {"random": "random"})
    with pytest.raises(ValueError, match="n_games"):
        babytris.tournament(transitions_4x4, {"r": "random"}, {"random": "random"}, n_games=-1)
    with pytest.raises(TypeError, match="Transitions"):
        babytris.tournament("4x4", {"r": "random"}, {"random": "random"})


def test_a_tournament_is_a_table(small_table, tmp_path):
    path = tmp_path / "table.csv"
    text = small_table.to_csv(path)
    assert path.read_text() == text and text.startswith("player,opponent,expected")
    html = small_table._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 1 + 3
    assert f"{small_table.expected[0, 0]:,.1f}" in html
    pandas = pytest.importorskip("pandas")
    frame = small_table.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and len(frame) == 6
    assert frame["expected"].tolist() == small_table.expected.ravel().tolist()


def test_the_course_timing_plays_in_a_tournament():
    """The opponents choose the next piece before the placement (preview=1):
    each exact entry equals expected_points, and the playouts check it."""
    rules = babytris.Rules(width=4, height=4, preview=1)
    t = babytris.enumerate_boards(rules)
    optimal = babytris.solve_transitions(t)
    minimax = babytris.solve_transitions(t, opponent="minimax")
    table = babytris.tournament(
        t,
        {"optimal": optimal, "max-min": minimax},
        {"random": "random", "minimax": minimax},
        n_placements=300,
        n_games=300,
    )
    assert table.expected[1, 1] == babytris.expected_points(minimax, "optimal", "solution", n_placements=300)
    assert table.expected[0, 0] == babytris.expected_points(optimal, n_placements=300)
    assert table.largest_gap <= 5
    assert (table.worst_case <= table.worst + 1e-9).all()


def test_a_tournament_with_hold():
    rules = babytris.Rules(width=3, height=4, hold=True)
    t = babytris.enumerate_boards(rules)
    optimal, minimax = babytris.solve_transitions(t), babytris.solve_transitions(t, opponent="minimax")
    table = babytris.tournament(t, {"optimal": optimal}, {"random": "random", "minimax": minimax}, n_placements=50)
    assert table.expected[0, 1] == babytris.expected_points(optimal, "optimal", minimax, n_placements=50)
    assert table.largest_gap <= 5
    worst = babytris.expected_points(optimal, "optimal", "best_response", n_placements=50)
    assert table.worst_case[0] == worst <= table.worst[0] + 1e-9


def test_every_output_records_the_rules_the_timing_and_the_tie_rule():
    """The course timing (preview=1) and the last tie rule, in the text, Markdown, HTML, CSV and
    the records (the JSON of `babytris tournament --json`)."""
    table = babytris.standard_tournament(
        width=3, height=4, preview=1, n_placements=30, n_games=10, opponent_discounts=(0.5,), rewards=(), ties="last"
    )
    assert table.rules == babytris.Rules(width=3, height=4, preview=1)
    timing = "preview=1: each piece chosen 1 placement ahead, known before them"
    for text in (str(table), table.to_markdown(), table._repr_html_()):
        assert timing in text and repr(table.rules).replace("'", "&#x27;") in text.replace("'", "&#x27;")
        assert "ties: last (every player with a policy)" in text
    record = table.to_records()[0]
    assert record["preview"] == 1 and record["rules"] == repr(table.rules) and record["ties"] == "last"
    row = next(csv.DictReader(io.StringIO(table.to_csv())))
    assert row["preview"] == "1" and row["rules"] == repr(table.rules) and row["ties"] == "last"
    plain = babytris.standard_tournament(
        width=3, height=4, n_placements=30, n_games=0, opponent_discounts=(), rewards=()
    )
    assert "preview=0: each piece chosen after the placement before it" in str(plain)
    assert "no playout check (fewer than 2 games a pair)" in str(plain)


def _table_with_gap(gap: float, n_games: int, n_pairs: int = 1) -> babytris.Tournament:
    """A Tournament of ``n_pairs`` pairs, the first one's playout mean ``gap`` standard errors off."""
    expected = np.full((1, n_pairs), 10.0)
    mean = expected.copy()
    mean[0, 0] += gap
    ones = np.ones(1)
    names = tuple(f"o{j}" for j in range(n_pairs))
    return babytris.Tournament(("p",), names, expected, mean, np.ones((1, n_pairs)), 100, n_games, 0.0, ones)


def test_the_agreement_check_states_its_threshold_and_keeps_to_it():
    """4.6 standard errors was called agreement; the threshold is now stated: 99% confidence that every
    pair stays within it (Student's t of n_games - 1 degrees, Sidak's correction over the pairs)."""
    from scipy import stats

    from babytris.analysis.tournament import student_t_quantile

    one = _table_with_gap(4.6, n_games=100)
    assert one.agreement_threshold == pytest.approx(stats.t.ppf(0.995, 99), rel=1e-6)  # 2.63
    assert one.largest_gap == pytest.approx(4.6) and not one.playouts_agree
    assert "DISAGREE: the largest gap from the exact value is 4.6 standard errors, over 2.63" in str(one)
    assert "99% confidence" in one.to_markdown() and "DISAGREE" in one._repr_html_()
    within = _table_with_gap(2.5, n_games=100)
    assert within.playouts_agree and "agree: the largest gap from the exact value is 2.5 standard errors" in str(within)
    # 63 pairs of 100 games: every gap within 3.50 with 99% confidence
    many = _table_with_gap(3.4, n_games=100, n_pairs=63)
    assert many.agreement_threshold == pytest.approx(stats.t.ppf(0.5 + 0.99 ** (1 / 63) / 2, 99), rel=1e-4)
    assert many.playouts_agree and not _table_with_gap(4.6, n_games=100, n_pairs=63).playouts_agree
    for df in (1, 2, 10, 19, 99, 999):
        for p in (0.975, 0.995, 0.99999):
            assert student_t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=2e-3)


def test_a_deterministic_pair_that_misses_its_exact_value_disagrees():
    table = _table_with_gap(0.5, n_games=100)
    zero = babytris.Tournament(
        table.players, table.opponents, table.expected, table.playout_mean, np.zeros((1, 1)), 100, 100, 0.0, np.ones(1)
    )
    assert zero.largest_gap == np.inf and not zero.playouts_agree
    exact = babytris.Tournament(
        table.players,
        table.opponents,
        table.expected,
        table.expected.copy(),
        np.zeros((1, 1)),
        100,
        100,
        0.0,
        np.ones(1),
    )
    assert exact.largest_gap == 0.0 and exact.playouts_agree


@pytest.mark.parametrize("bad", [1.5, -0.1, float("nan"), "0.5"])
def test_an_opponent_discount_out_of_range_is_named_as_given(bad):
    with pytest.raises(ValueError, match="opponent_discounts: each must be a number in \\[0, 1\\], got"):
        babytris.standard_tournament(width=3, height=3, opponent_discounts=(0.5, bad))
