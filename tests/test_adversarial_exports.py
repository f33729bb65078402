"""A fixed opponent's game exported: the MDP its piece choices induce, in
Storm's DRN, PRISM's files, QuantEcon's arrays and pymdptoolbox's matrices,
solved by each tool to babytris's values (the equilibrium opponent's MDP to
the max-min value; min-avg's and gaps' to the optimal player's best
response to them)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from model_checking import storm_start_value

import babytris
from babytris import Rules
from babytris.formats.export import explicit_model, to_drn, to_prism
from babytris.formats.interop import to_mdptoolbox, to_quantecon


@pytest.fixture(scope="module", params=[0, 1], ids=["after", "before"])
def game(request):
    """3x4 in both timings, with the three optimising opponents solved."""
    t = babytris.enumerate_boards(Rules(width=3, height=4, preview=request.param))
    return t, {
        model: babytris.solve_transitions(t, opponent=model, tol=1e-12) for model in ("minimax", "minavg", "gaps")
    }


def best_response(t, opponent):
    """The optimal player's value against ``opponent``'s fixed choices (and opening), by babytris."""
    return babytris.solve_transitions(t, opponent=opponent, tol=1e-12)


@pytest.mark.parametrize("model", ["minimax", "minavg", "gaps"])
def test_the_model_of_a_fixed_opponent_totals_the_best_response(game, model):
    t, solved = game
    expected = best_response(t, solved[model]).start_value
    explicit = explicit_model(t, discount=0.9, opponent=solved[model])
    assert explicit.total_reward()[0] == pytest.approx(expected, abs=1e-9)
    if model == "minimax":  # against the equilibrium opponent the best response is the max-min value
        assert expected == pytest.approx(solved[model].start_value, abs=1e-9)
        assert explicit_model(solved[model]).total_reward()[0] == pytest.approx(expected, abs=1e-9)


def test_a_piece_array_is_an_opponent_too(game):
    t, _ = game
    pieces = np.random.default_rng(3).integers(0, 2, t.n_boards)
    explicit = explicit_model(t, discount=0.9, opponent=pieces)
    assert explicit.total_reward()[0] == pytest.approx(best_response(t, pieces).start_value, abs=1e-9)


@pytest.mark.parametrize("model", ["minimax", "gaps"])
def test_storm_finds_the_value_from_the_drn(game, model, tmp_path):
    stormpy = pytest.importorskip("stormpy", reason="stormpy not installed (pip install 'babytris[export]')")
    t, solved = game
    expected = best_response(t, solved[model]).start_value
    to_drn(t, tmp_path / "g.drn", discount=0.9, opponent=solved[model])
    assert storm_start_value(stormpy, stormpy.build_model_from_drn(str(tmp_path / "g.drn"))) == pytest.approx(
        expected, abs=1e-6
    )
    # PRISM's files are written from the same model (Storm reads them translated: tests/test_export.py)
    tra, _, _ = to_prism(t, tmp_path / "g", discount=0.9, opponent=solved[model])
    explicit = explicit_model(t, discount=0.9, opponent=solved[model])
    with open(tra) as f:
        assert f.readline().split() == [str(explicit.n_states), str(explicit.n_choices), str(explicit.n_branches)]


@pytest.mark.parametrize("model", ["minimax", "minavg"])
def test_quantecon_solves_the_fixed_opponents_game(game, model):
    quantecon = pytest.importorskip("quantecon", reason="quantecon not installed (pip install 'babytris[export]')")
    t, solved = game
    answer = best_response(t, solved[model])
    q = to_quantecon(t, discount=0.9, opponent=solved[model])
    result = quantecon.markov.DiscreteDP(q.R, q.Q, q.beta, q.s_indices, q.a_indices).solve(
        method="modified_policy_iteration", epsilon=1e-10
    )
    assert q.start_value(result.v) == pytest.approx(answer.start_value, abs=1e-6)
    assert np.abs(result.v[: t.n_states] - answer.values.ravel()).max() <= 1e-6


def test_pymdptoolbox_solves_the_minimax_opponents_game():
    mdptoolbox = pytest.importorskip("mdptoolbox")
    t = babytris.enumerate_boards(Rules(width=3, height=4))
    minimax = babytris.solve_transitions(t, opponent="minimax", tol=1e-12)
    P, R = to_mdptoolbox(t, opponent=minimax)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vi = mdptoolbox.mdp.ValueIteration(P, R, 0.9, epsilon=1e-12)
        vi.run()
    assert np.abs(np.asarray(vi.V[:-1]) - minimax.values.ravel()).max() < 1e-7


def test_the_cli_exports_the_minimax_game(tmp_path, capsys):
    import json

    from babytris.cli import commands as cli

    out = tmp_path / "g.drn"
    assert (
        cli.main(["export", "--format", "drn", "--out", str(out), "--height", "3", "--opponent", "minimax", "--json"])
        == 0
    )
    record = json.loads(capsys.readouterr().out)
    minimax = babytris.solve(width=4, height=3, opponent="minimax")
    assert record["opponent"] == "minimax" and record["start_value"] == pytest.approx(minimax.start_value, abs=1e-9)
    assert explicit_model(minimax).total_reward()[0] == pytest.approx(minimax.start_value, abs=1e-7)
    assert out.read_text().count("\nstate ") == explicit_model(minimax).n_states
