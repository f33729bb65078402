"""State-partition minimization: the quotient game has exactly the full game's values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import CATALOGUE, Reward, Rules, reference

PARTITIONS = json.loads((Path(__file__).parent / "data" / "partitions.json").read_text())


def mirror_bits(boards: np.ndarray, width: int, height: int) -> np.ndarray:
    out = np.zeros_like(boards)
    for row in range(height):
        for col in range(width):
            bit = (boards >> np.uint64(row * width + col)) & np.uint64(1)
            out |= bit << np.uint64(row * width + width - 1 - col)
    return out


@pytest.mark.long
@pytest.mark.parametrize("row", PARTITIONS, ids=[row["name"] for row in PARTITIONS])
def test_group_counts_match_the_reference_table(row):
    assert (row["preview"], row["hold"]) == (row["rules"].get("preview", 0), row["rules"].get("hold", False))
    t = babytris.enumerate_boards(Rules(**row["rules"]))
    reward = None if row["reward"] is None else Reward(**row["reward"])
    p = babytris.minimize(t, opponent=row["opponent"], reward=reward)
    assert (p.n_states, p.n_boards) == (row["states"], row["boards"])
    assert (p.n_classes, p.n_board_classes) == (row["state_classes"], row["board_classes"])
    if row["bisimulation_state_classes"] is None:
        return  # not computed by the reference (too slow there)
    bisimulation = babytris.minimize(t, opponent=row["opponent"], reward=reward, zero_states=False)
    assert (bisimulation.n_classes, bisimulation.n_board_classes) == (
        row["bisimulation_state_classes"],
        row["bisimulation_board_classes"],
    )


def test_mirrored_states_share_a_group(transitions_4x4):
    """I and L are their own mirror images (up to rotation) and equally likely:
    a board and its mirror image are in one group, piece for piece."""
    p = babytris.minimize(transitions_4x4)
    mirrored = transitions_4x4.indices(mirror_bits(transitions_4x4.boards, 4, 4))
    assert np.all(mirrored >= 0)
    assert np.array_equal(p.labels[mirrored], p.labels)
    assert np.array_equal(p.board_labels[mirrored], p.board_labels)
    assert p.n_classes < p.n_states / 6  # far more than mirroring merges


def test_unequal_probabilities_keep_pieces_apart():
    even = babytris.minimize(babytris.enumerate_boards(Rules(width=4, height=4)))
    odd = babytris.minimize(babytris.enumerate_boards(Rules(width=4, height=4, probabilities=(0.3, 0.7))))
    assert odd.n_classes >= even.n_classes


@pytest.mark.parametrize(
    "options",
    [
        dict(),
        dict(opponent="minimax"),
        dict(opponent="minavg"),
        dict(opponent="gaps"),
        dict(reward=Reward(lines=0, height=1, score=4, gaps=1.5)),
        dict(player="random"),
    ],
    ids=["random", "minimax", "minavg", "gaps", "weighted", "random player"],
)
def test_quotient_values_equal_the_full_solve(transitions_4x4, options):
    full = babytris.solve_transitions(transitions_4x4, tol=1e-12, **options)
    quotient = babytris.solve_transitions(transitions_4x4, tol=1e-12, minimize=True, **options)
    assert quotient.partition is not None and quotient.converged
    assert np.max(np.abs(quotient.values - full.values)) <= 1e-9
    # the full game's greedy sweep over the spread values changed nothing
    assert quotient.residual <= 1e-9
    # the moves recorded are worth the optimum (ties may pick another)
    if quotient.player == "optimal":
        for board in transitions_4x4.boards[::997]:
            for piece in ("I", "L"):
                move = quotient.best_action(int(board), piece)
                if move is not None:
                    q = quotient.action_values(int(board), piece)[move]
                    assert q == pytest.approx(full.value(int(board), piece), abs=1e-9)


def test_groups_hold_equal_values(transitions_4x4, solution_4x4):
    p = babytris.minimize(transitions_4x4)
    values = solution_4x4.values
    for group in range(0, p.n_classes, 37):
        members = values[p.labels == group]
        assert np.ptp(members) <= 1e-8


def test_given_policies_are_refused(transitions_4x4, solution_4x4):
    with pytest.raises(ValueError, match="named models"):
        babytris.minimize(transitions_4x4, player=solution_4x4)
    with pytest.raises(ValueError, match="minimize"):
        babytris.solve_transitions(transitions_4x4, minimize="yes")


@st.composite
def games(draw):
    # equal probabilities half the time, so interchangeable pieces get exercised
    rules = draw(small_rules(pool=tuple(p.cells for p in CATALOGUE.values()), line_scores=False, equal_chance=True))
    opponent = draw(st.sampled_from(["random", "minimax", "minavg", "gaps"]))
    reward = None
    if opponent != "gaps" and draw(st.booleans()):
        reward = Reward(
            lines=draw(st.sampled_from([0, 1])),
            height=draw(st.sampled_from([0, 1, 2])),
            score=draw(st.sampled_from([0, 1, 3])),
            gaps=draw(st.sampled_from([0, 1.5])),
            loss=draw(st.sampled_from([0, 2])),
        )
    discount = draw(st.floats(0.0, 0.95))
    zero_states = draw(st.booleans())
    return rules, opponent, reward, discount, zero_states


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(games())
def test_core_partition_equals_reference_and_quotient_values_equal_full(game):
    rules, opponent, reward, discount, zero_states = game
    try:
        t = babytris.enumerate_boards(rules, max_memory=2**24)
    except babytris.MemoryLimitError:
        assume(False)
    assume(t.n_boards <= 800)
    p = babytris.minimize(t, opponent=opponent, reward=reward, zero_states=zero_states)
    ref_states, ref_boards = reference.minimize(rules, opponent=opponent, reward=reward, zero_states=zero_states)
    # the same partition up to the groups' numbers: a bijection between labels
    pairs = {(int(p.labels[t.board_index(b), piece]), group) for (b, piece), group in ref_states.items()}
    assert len(pairs) == p.n_classes == len(set(ref_states.values()))
    pairs = {(int(p.board_labels[t.board_index(b)]), group) for b, group in ref_boards.items()}
    assert len(pairs) == p.n_board_classes == len(set(ref_boards.values()))
    full = babytris.solve_transitions(t, discount=discount, opponent=opponent, reward=reward, tol=1e-12)
    quotient = babytris.solve_transitions(
        t, discount=discount, opponent=opponent, reward=reward, tol=1e-12, minimize=True
    )
    assert np.max(np.abs(quotient.values - full.values)) <= 1e-9 * max(1.0, np.abs(full.values).max())
