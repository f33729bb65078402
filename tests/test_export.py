"""Exports to Storm (DRN), PRISM (explicit files) and QuantEcon: the same
start value in each tool as babytris's solve."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model_checking import storm_start_value
from strategies import small_rules

import babytris
from babytris import Rules
from babytris.formats.export import LABELS, explicit_model, to_drn, to_prism
from babytris.formats.interop import QuantEconModel, to_quantecon


def solved(discount=0.9, **fields):
    return babytris.solve(Rules(**fields), discount=discount, tol=1e-12)


def test_the_model_counts_states_choices_and_branches():
    s = solved(width=3, height=3)
    t, m = s.transitions, explicit_model(s)
    counts = np.diff(t.offsets)
    n_after = len(np.unique(t.next_board.astype(np.int64) * len(s.rules.line_scores) + t.lines))
    assert m.n_states == 1 + t.n_states + n_after + 1  # start, the game's states, afterstates, done
    assert m.n_choices == 1 + np.maximum(counts, 1).sum() + n_after + 1
    # the start draws each piece; a move goes to its afterstate; an afterstate draws or ends
    assert m.n_branches == 2 + np.maximum(counts, 1).sum() + 3 * n_after + 1
    assert set(m.labels) == set(LABELS)
    assert m.labels["over"].tolist() == (1 + np.flatnonzero(counts == 0)).tolist()
    sums = np.add.reduceat(m.probabilities, m.branch_starts[:-1])
    assert np.allclose(sums, 1.0, atol=1e-15, rtol=0)
    assert sorted(set(m.state_rewards.tolist())) == [0.0, 1.0, 3.0, 6.0]


@pytest.mark.parametrize(
    "fields",
    [
        dict(width=4, height=4),
        dict(width=4, height=4, discount=0.1),
        dict(width=3, height=4, discount=0.0),
        dict(width=3, height=3, preview=1),
        dict(width=3, height=3, hold=True),
        dict(width=3, height=3, hold=True, hold_start="drawn"),
        dict(width=3, height=4, randomizer="bag"),
        dict(width=3, height=3, preview=1, hold=True, randomizer="bag", bag_copies=2),
        dict(width=3, height=4, randomizer="bag", discount=0.0),
    ],
    ids=["4x4", "4x4-0.1", "3x4-0", "preview", "hold", "hold-drawn", "bag", "bag-preview-hold", "bag-0"],
)
def test_total_reward_of_the_model_is_the_start_value(fields):
    s = solved(**fields)
    assert explicit_model(s).total_reward()[0] == pytest.approx(s.start_value, abs=1e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=small_rules(variants=True), discount=st.floats(0, 0.95))
def test_random_rule_sets(rules, discount):
    if rules.objective != "points":
        with pytest.raises(ValueError, match="objective"):
            explicit_model(babytris.enumerate_boards(rules), discount=discount)
        return
    s = babytris.solve(rules, discount=discount, tol=1e-12)
    assert explicit_model(s).total_reward()[0] == pytest.approx(s.start_value, abs=1e-8)
    q = to_quantecon(s)
    v = _policy_values(q)
    assert q.start_value(v) == pytest.approx(s.start_value, abs=1e-8)


def _policy_values(q: QuantEconModel) -> np.ndarray:
    """Value iteration on QuantEcon's pair form, without QuantEcon."""
    v = np.zeros(q.Q.shape[1])
    starts = np.flatnonzero(np.r_[True, q.s_indices[1:] != q.s_indices[:-1]])
    for _ in range(100_000):
        new = np.maximum.reduceat(q.R + q.beta * (q.Q @ v), starts)
        if np.abs(new - v).max() <= 1e-13:
            return new
        v = new
    raise AssertionError("no convergence")


def test_drn_text(tmp_path):
    s = solved(width=3, height=3)
    to_drn(s, tmp_path / "g.drn")
    lines = (tmp_path / "g.drn").read_text().splitlines()
    m = explicit_model(s)
    at = lines.index("@type: MDP")
    assert lines[at : at + 11] == [
        "@type: MDP",
        "@parameters",
        "",
        "@reward_models",
        "points",
        "@nr_states",
        str(m.n_states),
        "@nr_choices",
        str(m.n_choices),
        "@model",
        "state 0 [0.0] init",
    ]
    assert lines[at + 11 : at + 14] == ["\taction start [0]", "\t\t1 : 0.5", "\t\t2 : 0.5"]
    assert sum(line.startswith("state ") for line in lines) == m.n_states
    assert sum(line.startswith("\taction ") for line in lines) == m.n_choices
    assert lines[-3:] == [f"state {m.n_states - 1} [0.0] done", "\taction end [0]", f"\t\t{m.n_states - 1} : 1.0"]


def test_prism_files(tmp_path):
    s = solved(width=3, height=3)
    m = explicit_model(s)
    written = to_prism(s, tmp_path / "g")
    assert written == [str(tmp_path / f"g{suffix}") for suffix in (".tra", ".lab", ".srew")]
    tra = (tmp_path / "g.tra").read_text().splitlines()
    assert tra[0] == f"{m.n_states} {m.n_choices} {m.n_branches}" and len(tra) == 1 + m.n_branches
    assert tra[1:3] == ["0 0 1 0.5 start", "0 0 2 0.5 start"]
    lab = (tmp_path / "g.lab").read_text().splitlines()
    assert lab[0] == '0="init" 1="deadlock" 2="done" 3="over"'
    assert lab[1] == "0: 0" and lab[-1] == f"{m.n_states - 1}: 2"
    srew = (tmp_path / "g.srew").read_text().splitlines()
    assert srew[0] == f"{m.n_states} {np.count_nonzero(m.state_rewards)}" and len(srew) == 1 + int(srew[0].split()[1])


def test_an_export_that_fails_leaves_the_old_file(tmp_path, monkeypatch):
    from babytris.formats import export

    path = tmp_path / "g.drn"
    path.write_text("old")

    def broken(model):
        yield "@type: MDP"
        raise KeyboardInterrupt

    monkeypatch.setattr(export, "_drn_lines", broken)
    with pytest.raises(KeyboardInterrupt):
        to_drn(solved(width=3, height=3), path)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["g.drn"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda t, s: explicit_model(t), "discount: required"),
        (lambda t, s: explicit_model(t, discount=1.0), "discount"),
        (lambda t, s: explicit_model(t, discount=np.float64(-0.1)), "discount"),
        (lambda t, s: to_quantecon(t, discount="0.9"), "discount"),
        (lambda t, s: explicit_model("4x4.npz"), "game must be"),
        (lambda t, s: explicit_model(babytris.solve(width=3, height=3, opponent="minavg")), "player is 'random'"),
        (lambda t, s: to_quantecon(babytris.solve(width=3, height=3, player="random")), "player"),
        (lambda t, s: explicit_model(t, discount=0.9, opponent="minimax"), "opponent"),
        (lambda t, s: explicit_model(t, discount=0.9, opponent=np.zeros(3, dtype=int)), "opponent must have shape"),
        (lambda t, s: explicit_model(babytris.solve(width=3, height=3, minimize=True)), "minimized"),
    ],
)
def test_bad_arguments(call, message):
    t = babytris.enumerate_boards(Rules(width=3, height=3))
    with pytest.raises(ValueError, match=message):
        call(t, None)


def test_a_built_model_is_written_as_is(tmp_path):
    s = solved(width=3, height=3)
    model = explicit_model(s)
    to_drn(model, tmp_path / "a.drn")
    to_drn(s, tmp_path / "b.drn")
    assert (tmp_path / "a.drn").read_bytes() == (tmp_path / "b.drn").read_bytes()
    with pytest.raises(ValueError, match="discount"):
        to_prism(model, tmp_path / "c", discount=0.5)


def test_numpy_discount_is_accepted():
    t = babytris.enumerate_boards(Rules(width=3, height=3))
    assert explicit_model(t, discount=np.float32(0.5)).discount == 0.5


def test_quantecon_save_and_load(tmp_path):
    pytest.importorskip("scipy")
    q = to_quantecon(solved(width=3, height=3, preview=1))
    q.save(tmp_path / "q.npz")
    back = QuantEconModel.load(tmp_path / "q.npz")
    for name in ("s_indices", "a_indices", "R", "placements", "start_states", "start_chances"):
        assert np.array_equal(getattr(back, name), getattr(q, name)), name
    assert back.beta == q.beta and (back.Q != q.Q).nnz == 0


# The peers themselves, where they install from the package index.


@pytest.mark.parametrize(
    "fields", [dict(width=4, height=4), dict(width=3, height=4, randomizer="bag")], ids=["iid", "bag"]
)
def test_storm_reads_the_drn_and_finds_the_start_value(tmp_path, fields):
    stormpy = pytest.importorskip("stormpy", reason="stormpy not installed (pip install 'babytris[export]')")
    s = solved(**fields)
    to_drn(s, tmp_path / "g.drn")
    model = stormpy.build_model_from_drn(str(tmp_path / "g.drn"))
    assert model.nr_states == explicit_model(s).n_states
    assert storm_start_value(stormpy, model) == pytest.approx(s.start_value, abs=1e-6)


def test_storm_reads_the_prism_files_and_finds_the_start_value(tmp_path):
    """PRISM is not on the package index; Storm's explicit parser reads the
    same transition lines under its own header and label syntax, so the
    files are translated line for line (nothing recomputed) and read by Storm."""
    stormpy = pytest.importorskip("stormpy", reason="stormpy not installed (pip install 'babytris[export]')")
    s = solved(width=3, height=4, hold=True)
    to_prism(s, tmp_path / "g")
    tra = (tmp_path / "g.tra").read_text().splitlines()
    (tmp_path / "s.tra").write_text("mdp\n" + "".join(" ".join(line.split()[:4]) + "\n" for line in tra[1:]))
    lab = (tmp_path / "g.lab").read_text().splitlines()
    names = {int(k): v.strip('"') for k, v in (item.split("=") for item in lab[0].split())}
    rows = [f"{state} {' '.join(names[int(i)] for i in ids.split())}" for state, ids in (x.split(":") for x in lab[1:])]
    (tmp_path / "s.lab").write_text("\n".join(["#DECLARATION", " ".join(names.values()), "#END", *rows]) + "\n")
    (tmp_path / "s.rew").write_text("".join(line + "\n" for line in (tmp_path / "g.srew").read_text().splitlines()[1:]))
    model = stormpy.build_model_from_explicit(
        str(tmp_path / "s.tra"), str(tmp_path / "s.lab"), state_rewards=str(tmp_path / "s.rew")
    )
    assert model.nr_states == int(tra[0].split()[0])
    assert storm_start_value(stormpy, model) == pytest.approx(s.start_value, abs=1e-6)


@pytest.mark.long
@pytest.mark.parametrize(
    "fields", [dict(width=4, height=4), dict(width=3, height=4, randomizer="bag", preview=1)], ids=["iid", "bag"]
)
def test_quantecon_solves_the_game_to_the_start_value(fields):
    quantecon = pytest.importorskip("quantecon", reason="quantecon not installed (pip install 'babytris[export]')")
    s = solved(**fields)
    q = to_quantecon(s)
    ddp = quantecon.markov.DiscreteDP(q.R, q.Q, q.beta, q.s_indices, q.a_indices)
    result = ddp.solve(method="modified_policy_iteration", epsilon=1e-10)  # (policy_iteration cycles on ties)
    assert q.start_value(result.v) == pytest.approx(s.start_value, abs=1e-6)
    # and its policy is optimal: each state's chosen move is worth the best
    moves = np.flatnonzero(q.placements >= 0)
    assert np.abs(result.v[: s.n_states] - s.values.ravel()).max() <= 1e-6
    assert len(moves) == s.transitions.n_moves


def test_cli_export(tmp_path):
    from babytris.cli import commands as cli

    assert cli.main(["export", "--format", "drn", "--out", str(tmp_path / "g.drn"), "--height", "3", "-q"]) == 0
    assert (tmp_path / "g.drn").read_text().count("\nstate ") == explicit_model(solved(width=4, height=3)).n_states
    assert cli.main(["export", "--format", "prism", "--out", str(tmp_path / "g"), "--height", "3", "-q"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.drn", "g.lab", "g.srew", "g.tra"]
    assert cli.main(["export", "--format", "xml", "--out", str(tmp_path / "x")]) == 2
