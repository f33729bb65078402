"""Learning against the exact answer: an agent's choices read into a policy
array (babytris.policy_of) and measured exactly (babytris.policy_regret)."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import reference


@pytest.fixture(scope="module")
def small():
    return babytris.solve(width=3, height=4, tol=1e-12)


def test_the_optimal_choice_has_no_regret(small):
    policy = babytris.policy_of(small, lambda board, piece, legal: int(small.policy[small.index(board), piece]))
    assert np.array_equal(policy, small.policy)
    result = babytris.policy_regret(small, policy)
    assert np.abs(result.regret).max() <= 1e-9 and result.optimal_share == 1.0


def test_a_random_policys_values_equal_the_reference(small):
    rng = np.random.default_rng(4)
    policy = babytris.policy_of(small, lambda board, piece, legal: int(rng.choice(legal)))
    result = babytris.policy_regret(small, policy)
    boards = small.boards.tolist()
    given = {(b, p): int(policy[i, p]) for i, b in enumerate(boards) for p in range(2) if policy[i, p] >= 0}
    ref = reference.solve(small.rules, player=given, tol=1e-12)
    assert result.start_value == pytest.approx(ref.start_value, abs=1e-8)
    for i, b in enumerate(boards):
        for p in range(2):
            assert result.values[i, p] == pytest.approx(ref.value(b, p), abs=1e-8)
    assert (result.regret >= -1e-9).all() and result.start_regret > 0
    assert result.optimal_share < 1.0


def test_against_the_minimax_opponent_the_regret_is_the_robust_one():
    robust = babytris.solve(width=3, height=4, opponent="minimax", tol=1e-12)
    first = babytris.policy_of(robust, lambda board, piece, legal: legal[0])
    result = babytris.policy_regret(robust, first)
    assert result.start_value == pytest.approx(
        babytris.evaluate(robust, first, "best_response", discount=0.9), abs=1e-8
    )


def test_bad_choices_are_refused(small):
    with pytest.raises(
        ValueError, match=r"choose: returned 99 for piece 'I' on board 0; legal placements: \[0, 1, 2, 3\]"
    ):
        babytris.policy_of(small, lambda board, piece, legal: 99)
    with pytest.raises(ValueError, match="choose must be a callable"):
        babytris.policy_of(small, "first")
    with pytest.raises(ValueError, match="previews, hold or a bag"):
        babytris.policy_of(babytris.solve(width=3, height=3, preview=1), lambda b, p, legal: legal[0])
    with pytest.raises(ValueError, match="the exact solution of an optimal player"):
        babytris.policy_regret(babytris.solve(width=3, height=3, opponent="gaps"), small.policy)


def test_a_best_response_keeps_its_opponents_opening():
    """A best response to an opponent Solution in the course's timing: its own policy has no regret
    (the opponent's opening is kept, not drawn)."""
    minimax = babytris.solve(width=3, height=4, preview=1, opponent="minimax", tol=1e-12)
    answer = babytris.solve(width=3, height=4, preview=1, opponent=minimax, tol=1e-12)
    result = babytris.policy_regret(answer, answer.policy)
    assert abs(result.start_regret) <= 1e-9 and np.abs(result.regret).max() <= 1e-9
