"""babytris's partitions against Storm's strong bisimulation (stormpy) on the plain model.

The plain model: the (board, piece) states of 4x4 against drawn pieces plus
one absorbing game-over state, each legal placement a choice with its points
as choice reward.  Storm's strong bisimulation preserving the expected total
reward (``Rmax=? [ C ]``, no label kept) is babytris's default partition;
preserving the label ``over`` too (``Rmax=? [ F "over" ]``) it is the
partition ``zero_states=False``, plus the game-over state's own block.
"""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import Rules

stormpy = pytest.importorskip("stormpy")
pytest.importorskip("stormpy.transformations")


def _plain_model(t):
    import stormpy.datastructures
    import stormpy.models

    n_pieces, n = t.rules.n_pieces, t.n_states
    scores = np.asarray(t.rules.line_scores, dtype=float)
    builder = stormpy.datastructures.SparseMatrixBuilder(0, 0, 0, False, True, 0)
    rewards: list[float] = []
    for state in range(n):
        builder.new_row_group(len(rewards))
        lo, hi = int(t.offsets[state]), int(t.offsets[state + 1])
        if lo == hi:  # the piece fits nowhere: the game is over
            builder.add_next_value(len(rewards), n, 1.0)
            rewards.append(0.0)
        for move in range(lo, hi):
            after = int(t.next_board[move])
            for piece in range(n_pieces):
                builder.add_next_value(len(rewards), after * n_pieces + piece, 1.0 / n_pieces)
            rewards.append(float(scores[t.lines[move]]))
    builder.new_row_group(len(rewards))
    builder.add_next_value(len(rewards), n, 1.0)
    rewards.append(0.0)
    labels = stormpy.models.StateLabeling(n + 1)
    labels.add_label("over")
    labels.add_label_to_state("over", n)
    labels.add_label("init")  # Storm needs the label; left empty, it splits nothing
    components = stormpy.models.SparseModelComponents(
        transition_matrix=builder.build(),
        state_labeling=labels,
        reward_models={"points": stormpy.models.SparseRewardModel(optional_state_action_reward_vector=rewards)},
    )
    return stormpy.models.SparseMdp(components)


def _storm_blocks(model, prop: str) -> int:
    import stormpy.transformations

    return stormpy.transformations.perform_bisimulation(model, stormpy.parse_properties(prop)).nr_states


@pytest.mark.parametrize("width, height", [(3, 3), (4, 4)])
def test_storm_strong_bisimulation_is_the_default_partition(width, height):
    t = babytris.enumerate_boards(Rules(width=width, height=height))
    model = _plain_model(t)
    assert model.nr_states == t.n_states + 1
    default = babytris.minimize(t).n_classes
    keeping_over = babytris.minimize(t, zero_states=False).n_classes
    assert keeping_over > default  # the two partitions differ, so the comparisons below can tell them apart
    assert _storm_blocks(model, "Rmax=? [ C ]") == default
    assert _storm_blocks(model, 'Rmax=? [ F "over" ]') == keeping_over + 1  # + the game-over state
