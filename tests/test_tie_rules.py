"""Ties as a choice (babytris.ties): the first, the last or a seeded random one
of the moves (and an optimising opponent's pieces) within tie_slack of the
best, checked against a plain-Python reading of the move table."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris


def tied_moves(solution, state):
    """The placement numbers of state's moves worth the best within tie_slack, written out."""
    t = solution.transitions
    U = solution.board_values
    lo, hi = int(t.offsets[state]), int(t.offsets[state + 1])
    worth = [
        solution.rules.line_scores[int(t.lines[e])] + solution.discount * U[int(t.next_board[e])] for e in range(lo, hi)
    ]
    best = max(worth, default=0.0)
    return [int(t.placement[e]) for e, w in zip(range(lo, hi), worth) if w >= best - solution.tie_slack]


def tied_pieces(solution, board):
    row = solution.values[board]
    return [p for p, v in enumerate(row) if v <= row.min() + solution.tie_slack]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=small_rules(sizes=(2, 4)), opponent=st.sampled_from(["random", "minimax"]), seed=st.integers(0, 99))
def test_each_rule_takes_its_move_among_the_tied(rules, opponent, seed):
    solved = {
        rule: babytris.solve(
            rules, opponent=opponent, tol=1e-11, ties=rule, tie_seed=seed if rule == "random" else None
        )
        for rule in ("first", "last", "random")
    }
    first = solved["first"]
    for s in solved.values():  # the values do not depend on the rule
        assert np.array_equal(s.values, first.values)
    for state in range(first.n_states):
        tied = tied_moves(first, state)
        b, p = divmod(state, rules.n_pieces)
        assert first.policy[b, p] == (min(tied) if tied else -1)
        assert solved["last"].policy[b, p] == (max(tied) if tied else -1)
        assert solved["random"].policy[b, p] in (tied or [-1])
    if opponent == "minimax":
        for b in range(first.n_boards):
            tied = tied_pieces(first, b)
            assert first.opponent_policy[b] == min(tied) and solved["last"].opponent_policy[b] == max(tied)
            assert solved["random"].opponent_policy[b] in tied


def test_the_max_min_players_scores_move_with_the_tie_rule():
    """On 4x4 the max-min value is 7.970427 whatever the rule, but what the
    max-min player scores against random pieces is not."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
    scores = {}
    for seed in range(3):
        s = babytris.solve_transitions(t, opponent="minimax", ties="random", tie_seed=seed)
        assert s.start_value == pytest.approx(7.970427, abs=1e-6)
        scores[seed] = babytris.evaluate(s, "optimal", "random", discount=0.9)
    again = babytris.solve_transitions(t, opponent="minimax", ties="random", tie_seed=0)
    assert babytris.evaluate(again, "optimal", "random", discount=0.9) == scores[0]  # seeded: the same draw
    assert len({round(v, 9) for v in scores.values()}) > 1


def test_the_rule_is_kept_in_files_and_tournaments(tmp_path):
    s = babytris.solve(width=3, height=4, opponent="minimax", ties="random", tie_seed=np.int64(5))
    s.save(tmp_path / "s.npz")
    loaded = babytris.load(tmp_path / "s.npz")
    assert (loaded.ties, loaded.tie_seed) == ("random", 5)
    assert np.array_equal(loaded.policy, s.policy)
    last = babytris.solve(width=3, height=4, ties="last")
    table = babytris.tournament(last.transitions, {"last": last, "seeded": s, "random": "random"}, {"r": "random"},
                                n_placements=20, n_games=0)  # fmt: skip
    assert table.ties == ("last", "random seed 5", "")
    assert "ties: last last, seeded random seed 5;" in str(table)
    assert [r["ties"] for r in table.to_records()] == ["last", "random seed 5", ""]


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(ties="middle"), "ties must be one of 'first', 'last', 'random'"),
        (dict(ties="random"), "tie_seed must be an integer"),
        (dict(ties="random", tie_seed=-1), "tie_seed must be an integer"),
        (dict(ties="first", tie_seed=3), "tie_seed: only ties='random' draws"),
    ],
)
def test_bad_rules_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        babytris.solve(width=3, height=3, **kw)


def test_the_cli_takes_the_rule(capsys):
    import json

    from babytris import cli

    assert cli.main(["solve", "--height", "3", "--opponent", "minimax", "--ties", "last", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["start_value"] == pytest.approx(babytris.solve(width=4, height=3, opponent="minimax").start_value)
