"""The sources' setups babytris can express: rewards measured before the clear,
and an opponent that chooses the next piece before the placement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import Board, Reward, Rules, reference
from babytris.engine.reward import landed_boards, move_rewards
from babytris.reference.game import landed_board, moves

WEIGHTED = dict(lines=0, height=1, score=4, gaps=1.5)


def test_height_before_the_clear_counts_the_full_row():
    """A vertical I into the last gap of `###.`: landed, the stack is 3 high;
    after the clear, 2."""
    rules = Rules(width=4, height=4, pieces=["I"])
    start = Board.from_rows(["###."], height=4)
    t = babytris.enumerate_boards(Rules(width=4, height=4, pieces=["I"], start=start.bits))
    row = t.board_index(start.bits)
    moves_ = np.arange(t.offsets[row], t.offsets[row + 1])
    vertical = [m for m in moves_ if t.lines[m] == 1]
    assert len(vertical) == 1
    m = np.array(vertical)
    before = move_rewards(t, Reward(height=1, score=1, before_clear=True), m)
    after = move_rewards(t, Reward(height=1, score=1), m)
    assert (before[0], after[0]) == (1 - 3, 1 - 2)
    assert rules.line_scores[1] == 1


def test_landed_boards_equal_the_reference_drop():
    for rules in (Rules(width=3, height=4), Rules(width=3, height=3, hold=True), Rules(width=3, height=3, preview=1)):
        t = babytris.enumerate_boards(rules)
        states = np.repeat(np.arange(t.n_states), np.diff(t.offsets))
        every = np.arange(t.n_moves)
        landed = landed_boards(t, every, states)
        table = babytris.engine.placements.placement_table(rules)
        for m in every[:: max(1, t.n_moves // 400)]:
            node = states[m] // rules.n_pieces
            number = int(t.placement[m])
            if rules.hold:
                if number == babytris.engine.transitions.HOLD_MOVE:
                    assert landed[m] == t.boards[node]
                    continue
                piece = int(np.searchsorted(table.first, number, side="right")) - 1
                placement = table.placements[piece][number - table.first[piece]]
            elif rules.preview:
                piece = int(t.queues[node]) // rules.n_pieces ** (rules.preview - 1)
                placement = table.placements[piece][number]
            else:
                placement = table.placements[states[m] % rules.n_pieces][number]
            assert int(landed[m]) == landed_board(rules, int(t.boards[node]), placement)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(small_rules(sizes=(3, 4)), st.sampled_from(["random", "minimax"]), st.floats(0.0, 0.9))
def test_rewards_before_the_clear_equal_the_reference(rules, opponent, discount):
    assume(not rules.no_holes)
    reward = Reward(**WEIGHTED, before_clear=True)
    try:
        t = babytris.enumerate_boards(rules, max_memory=2**24)
    except babytris.MemoryLimitError:
        assume(False)
    assume(t.n_boards <= 600)
    core = babytris.solve_transitions(t, discount=discount, opponent=opponent, reward=reward, tol=1e-12)
    ref = reference.solve(rules, discount=discount, opponent=opponent, reward=reward, tol=1e-12)
    rows = [t.board_index(b) for b in ref.boards]
    scale = max(1.0, np.abs(core.values).max())
    assert np.abs(core.values[rows] - np.array(ref.values)).max() <= 1e-9 * scale


def test_before_clear_is_refused_with_no_holes_and_kept_by_save(tmp_path):
    with pytest.raises(ValueError, match="before_clear"):
        babytris.solve(Rules(width=4, height=4, no_holes=True), reward=Reward(height=1, before_clear=True))
    with pytest.raises(ValueError, match="Reward.before_clear"):
        Reward(before_clear="yes")
    s = babytris.solve(width=3, height=4, reward=Reward(**WEIGHTED, before_clear=True), tol=1e-10)
    s.save(tmp_path / "s.npz")
    assert babytris.load(tmp_path / "s.npz").reward == s.reward


def _before_placement_values(rules: Rules, discount: float, sweeps: int = 400) -> dict:
    """The course projects' adversary, written out: the opponent picks the
    next piece t seeing the board and the piece to place, then the player
    places it knowing t:  V(b, c) = min_t max_a [points + discount * V(b', t)]."""
    boards = reference.reachable_boards(rules)
    n = len(rules.pieces)
    value = {(b, c): 0.0 for b in boards for c in range(n)}
    options = {(b, c): moves(rules, b, c) for b in boards for c in range(n)}
    for _ in range(sweeps):
        value = {
            (b, c): min(
                max(
                    (rules.line_scores[rows] + discount * value[(after, t)] for _, after, rows in options[(b, c)]),
                    default=0.0,
                )
                for t in range(n)
            )
            for b, c in value
        }
    return value


def test_an_opponent_choosing_before_the_placement_is_a_one_piece_preview():
    """With one previewed piece the opponent's choice comes before the
    placement of the piece in hand: the board value of node (b, (c,)) is
    the course projects' V(b, c)."""
    rules = Rules(width=3, height=4)
    expected = _before_placement_values(rules, 0.5, sweeps=80)
    s = babytris.solve(Rules(width=3, height=4, preview=1), opponent="minimax", discount=0.5, tol=1e-13)
    t = s.transitions
    for (b, c), v in expected.items():
        assert s.board_values[t.board_index(b, (c,))] == pytest.approx(v, abs=1e-9)
    # and it is not babytris's default timing, where the opponent sees the placement
    after = babytris.solve(rules, opponent="minimax", discount=0.5, tol=1e-13)
    assert any(abs(after.value(b, c) - v) > 1e-6 for (b, c), v in expected.items())
