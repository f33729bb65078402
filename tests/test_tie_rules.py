"""Ties as a choice (babytris.solvers.ties): the first, the last or a seeded random one
of the moves (and an optimising opponent's pieces) within tie_slack of the
best, checked against a plain-Python reading of the move table."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris


def tied_moves(solution, state):
    """The placement numbers of state's moves worth the best within tie_slack, written out, in the
    row's order (by placement number; with hold the own placements, the held piece's, the hold)."""
    t = solution.transitions
    U = solution.board_values
    lo, hi = int(t.offsets[state]), int(t.offsets[state + 1])
    worth = [
        solution.rules.line_scores[int(t.lines[e])] + solution.discount * U[int(t.next_board[e])] for e in range(lo, hi)
    ]
    best = max(worth, default=0.0)
    return [int(t.placement[e]) for e, w in zip(range(lo, hi), worth) if w >= best - solution.tie_slack]


def tied_pieces(solution, board):
    """The pieces that can come to the row (with a bag, those left in it) worth the least within tie_slack."""
    can = [p for p, c in enumerate(solution.transitions.draw_chances([board])[0]) if c > 0]
    least = min(solution.values[board, p] for p in can)
    return [p for p in can if solution.values[board, p] <= least + solution.tie_slack]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=small_rules(sizes=(2, 3), max_pieces=2),
    variant=st.sampled_from([{}, {"preview": 1}, {"hold": True}, {"randomizer": "bag"}]),
    opponent=st.sampled_from(["random", "minimax"]),
    seed=st.integers(0, 99),
)
def test_each_rule_takes_its_move_among_the_tied(rules, variant, opponent, seed):
    if variant.get("randomizer") == "bag":
        variant = {**variant, "probabilities": [1 / rules.n_pieces] * rules.n_pieces}  # (a bag deals evenly)
    rules = dataclasses.replace(rules, **variant)
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
        assert first.policy[b, p] == (tied[0] if tied else -1)
        assert solved["last"].policy[b, p] == (tied[-1] if tied else -1)
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


def test_the_cli_takes_the_rule(capsys, tmp_path):

    from babytris.cli import commands as cli

    path = tmp_path / "last.npz"
    assert (
        cli.main(["solve", "--height", "3", "--opponent", "minimax", "--ties", "last", "--out", str(path), "-q"]) == 0
    )
    last = babytris.solve(width=4, height=3, opponent="minimax", ties="last")
    loaded = babytris.load(path)
    assert loaded.ties == "last" and np.array_equal(loaded.policy, last.policy)
    assert not np.array_equal(loaded.policy, babytris.solve(width=4, height=3, opponent="minimax").policy)
    assert cli.main(["solve", "--ties", "random", "--tie-seed", "-1", "-q"]) == 2
    assert "--tie-seed must be an integer" in capsys.readouterr().err


def test_an_optimising_opponent_opens_by_the_rule_too():
    """The course's timing on 4x4: both opening queues are worth the same to the max-min player, so
    "first" and "last" open with different ones, and the start value does not move."""
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4, preview=1))
    rows, _ = t.start_nodes()
    first = babytris.solve_transitions(t, opponent="minimax", ties="first")
    last = babytris.solve_transitions(t, opponent="minimax", ties="last")
    assert first.opening()[0].tolist() == [rows[0]] and last.opening()[0].tolist() == [rows[-1]]
    assert first.start_value == last.start_value
