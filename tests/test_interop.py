"""The game as pymdptoolbox's (P, R): its value iteration finds our values."""

from __future__ import annotations

import warnings

import mdptoolbox
import numpy as np
import pytest

import babytris
from babytris import Rules
from babytris.formats.interop import to_mdptoolbox


@pytest.mark.long
@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
def test_mdptoolbox_value_iteration_equals_solve(dense):
    rules = Rules(width=4, height=3) if not dense else Rules(width=3, height=3)
    t = babytris.enumerate_boards(rules)
    P, R = to_mdptoolbox(t, dense=dense)
    most = len(babytris.engine.placements.placement_table(rules).placements[1])  # L has the most placements
    assert len(P) == most == 4 * (rules.width - 1) and R.shape == (t.n_states + 1, most)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's efficiency warnings inside pymdptoolbox's checks
        vi = mdptoolbox.mdp.ValueIteration(P, R, 0.9, epsilon=1e-10)
        vi.run()
    ours = babytris.solve_transitions(t, discount=0.9, tol=1e-12)
    assert np.abs(np.array(vi.V)[:-1] - ours.values.ravel()).max() <= 1e-8
    assert vi.V[-1] == 0.0  # game over


def test_rows_are_stochastic():
    t = babytris.enumerate_boards(Rules(width=3, height=3))
    P, _ = to_mdptoolbox(t, dense=True)
    assert np.allclose(P.sum(axis=2), 1.0)


def test_bad_arguments():
    t = babytris.enumerate_boards(Rules(width=4, height=4))
    with pytest.raises(ValueError, match="dense"):
        to_mdptoolbox(t, dense=True)
    with pytest.raises(ValueError, match="penalty"):
        to_mdptoolbox(t, penalty=0)
    with pytest.raises(ValueError, match="previews, hold or a bag"):
        to_mdptoolbox(babytris.enumerate_boards(Rules(width=3, height=3, preview=1)))


@pytest.mark.parametrize("opponent", ["minimax", "solution", None])
def test_a_named_opponent_is_refused_by_a_list_without_it(opponent):
    # the message once listed "minimax" as allowed and refused it; it lists what the export takes
    table = babytris.enumerate_boards(babytris.Rules(width=3, height=3))
    with pytest.raises(ValueError) as refused:
        babytris.to_mdptoolbox(table, opponent=opponent)
    message = str(refused.value)
    assert message.startswith("opponent: the export takes 'random' (drawn pieces), a Solution")
    assert message.endswith(f"got {opponent!r}") and "'minimax'," not in message
    if opponent is not None:  # (the game's own opponent is the model exports' default)
        with pytest.raises(ValueError, match=r"^opponent: the export takes None \(the game's own opponent\), 'random'"):
            babytris.explicit_model(table, discount=0.9, opponent=opponent)
    minimax = babytris.solve(width=3, height=3, opponent="minimax")
    P, R = babytris.to_mdptoolbox(table, opponent=minimax)  # (the way the message names)
    assert len(P) == R.shape[1] and R.shape[0] == table.n_states + 1
