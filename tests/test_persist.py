"""Saving and loading solutions."""

from __future__ import annotations

import json

import numpy as np
import pytest

import babytris
from babytris import Reward, Rules


@pytest.mark.parametrize(
    "fields, options",
    [(dict(width=4, height=4), dict()),
     (dict(width=4, height=4), dict(opponent="minimax", reward=Reward(height=1, score=4, gaps=1.5))),
     (dict(width=3, height=4, preview=1, hold=True, mirror=True), dict(opponent="gaps")),
     (dict(width=4, height=4, pieces=["S", "Z", [(0, 0), (1, 0)]], objective="combo", start=0b0011),
      dict(discount=1.0))],
    ids=["plain", "robust reward", "preview hold mirror gaps", "custom piece combo"],
)
def test_round_trip(tmp_path, fields, options):
    s = babytris.solve(Rules(**fields), tol=1e-10, **options)
    path = tmp_path / "s.npz"
    s.save(path)
    back = babytris.load(path, rules=s.rules)
    assert back.rules == s.rules
    assert np.array_equal(back.values, s.values) and np.array_equal(back.policy, s.policy)
    assert back.start_value == s.start_value
    assert (back.opponent, back.player, back.reward, back.method) == (s.opponent, s.player, s.reward, s.method)
    assert (back.iterations, back.residual, back.converged) == (s.iterations, s.residual, s.converged)
    for name in ("boards", "offsets", "next_board", "lines", "placement", "queues", "slots"):
        a, b = getattr(back.transitions, name), getattr(s.transitions, name)
        assert (a is None and b is None) or np.array_equal(a, b)
    if s.opponent_policy is not None:
        assert np.array_equal(back.piece_choices, s.piece_choices)
    board = int(s.boards[len(s.boards) // 2])
    assert repr(back) == repr(s)
    probe = np.array([board], dtype=np.uint64)
    assert np.array_equal(back.transitions.indices(probe), s.transitions.indices(probe))


def test_other_rules_are_refused(tmp_path):
    path = tmp_path / "s.npz"
    babytris.solve(width=3, height=3).save(path)
    with pytest.raises(ValueError, match="was solved for"):
        babytris.load(path, rules=Rules(width=3, height=4))


def test_corrupt_and_foreign_files_are_refused(tmp_path):
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file at all")
    with pytest.raises(ValueError, match="not a babytris solution file"):
        babytris.load(garbage)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, x=np.arange(3))
    with pytest.raises(ValueError, match="no readable metadata"):
        babytris.load(foreign)
    good = tmp_path / "good.npz"
    babytris.solve(width=3, height=3).save(good)
    with np.load(good) as data:
        contents = {k: data[k] for k in data.files}
    meta = json.loads(str(contents["meta"]))
    meta["format_version"] = 99
    np.savez(tmp_path / "future.npz", **{**contents, "meta": np.array(json.dumps(meta))})
    with pytest.raises(ValueError, match="format version 99"):
        babytris.load(tmp_path / "future.npz")
    del contents["solution_values"]
    np.savez(tmp_path / "cut.npz", **contents)
    with pytest.raises(ValueError, match="corrupt"):
        babytris.load(tmp_path / "cut.npz")
    with pytest.raises(FileNotFoundError):
        babytris.load(tmp_path / "missing.npz")
