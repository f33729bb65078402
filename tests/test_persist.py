"""Saving and loading solutions."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import babytris
from babytris import Reward, Rules


@pytest.mark.parametrize(
    "fields, options",
    [
        (dict(width=4, height=4), dict()),
        (dict(width=4, height=4), dict(opponent="minimax", reward=Reward(height=1, score=4, gaps=1.5))),
        (dict(width=3, height=4, preview=1, hold=True, mirror=True), dict(opponent="gaps")),
        (dict(width=3, height=4, hold=True, hold_start="drawn"), dict()),  # hold without previews, too
        (
            dict(width=4, height=4, pieces=["S", "Z", [(0, 0), (1, 0)]], objective="combo", start=0b0011),
            dict(discount=1.0),
        ),
    ],
    ids=["plain", "robust reward", "preview hold mirror gaps", "drawn hold", "custom piece combo"],
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
        assert np.array_equal(back.opponent_policy, s.opponent_policy)
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


# --- Every field of a file is checked on load -------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small solution's file, its contents, and a function writing an edited copy."""
    folder = tmp_path_factory.mktemp("files")
    path = folder / "good.npz"
    babytris.solve(width=4, height=4, opponent="minimax").save(path)
    with np.load(path) as data:
        contents = {key: data[key] for key in data.files}
    return folder, contents


def edited(folder, contents, name="edited.npz", meta=None, **arrays):
    """Write ``contents`` with ``meta`` fields and ``arrays`` replaced (None: removed), without the
    saved digests (which would refuse any edit first: tests/test_file_trust.py) so that the checks
    behind them are reached."""
    out = dict(contents)
    fields = json.loads(str(out["meta"]))
    fields.update(meta or {})
    fields.pop("digests", None)
    out["meta"] = np.array(json.dumps(fields))
    for key, value in arrays.items():
        if value is None:
            del out[key]
        else:
            out[key] = value
    path = folder / name
    np.savez_compressed(path, **out)
    return path


def test_the_fixture_file_loads(saved):
    folder, contents = saved
    assert babytris.load(edited(folder, contents)).n_boards == 12_978


def values_with(contents, name, index, value):
    array = contents[name].copy()
    array[index] = value
    return array


@pytest.mark.parametrize(
    "meta, field",
    [
        (dict(discount=5.0), "discount"),  # issue 18: action_values then returned 50.49 for 9.09
        (dict(discount="abc"), "discount"),  # issue 18: `babytris play` exited 0
        (dict(discount=1.0), "discount"),  # 1 only where every game ends (not 4x4 Baby Tetris)
        (dict(discount=-0.1), "discount"),
        (dict(tol=0), "tol"),
        (dict(tol="small"), "tol"),
        (dict(iterations=-1), "iterations"),
        (dict(iterations=2.5), "iterations"),
        (dict(residual=float("nan")), "residual"),
        (dict(converged="yes"), "converged"),
        (dict(converged=False), "converged"),  # the residual is below tol: it did converge
        (dict(method="newton"), "method"),
        (dict(max_iter=0), "max_iter"),
        (dict(seconds=[1, 2]), "seconds"),
        (dict(seconds={"solve": -1}), "seconds"),
        (dict(opponent="nobody"), "opponent"),
        (dict(player=3), "player"),
        (dict(reward={"no_such_weight": 1}), "reward"),
        (dict(table_seconds=None), "table_seconds"),
        (dict(rules={"width": 4, "height": 100, "pieces": []}), "rules"),
        (dict(rules=[4, 4]), "rules"),
    ],
)
def test_bad_metadata_is_refused(saved, meta, field):
    folder, contents = saved
    path = edited(folder, contents, meta=meta)
    with pytest.raises(babytris.files.persist.SolutionFileError, match=f"{field}") as info:
        babytris.load(path)
    assert info.value.field == field and str(path) in str(info.value)


def test_missing_metadata_field_is_refused(saved):
    folder, contents = saved
    fields = json.loads(str(contents["meta"]))
    del fields["discount"]
    path = edited(folder, {**contents, "meta": np.array(json.dumps(fields))})
    with pytest.raises(ValueError, match="discount: missing"):
        babytris.load(path)


def test_rules_edited_to_a_smaller_board_are_refused(tmp_path):
    # issue 18: 4x5 arrays with the rules edited to 4x4 loaded as a 4x4 solution of 182,101 boards
    babytris.solve(width=4, height=5).save(tmp_path / "4x5.npz")
    with np.load(tmp_path / "4x5.npz") as data:
        contents = {key: data[key] for key in data.files}
    fields = json.loads(str(contents["meta"]))
    fields["rules"]["height"] = 4
    path = edited(tmp_path, contents, meta=dict(rules=fields["rules"]))
    with pytest.raises(
        ValueError, match="table_boards: (a board has cells beyond the 16 of a 4x4 board|declares 1,456,936 bytes)"
    ):
        babytris.load(path)


def test_arrays_are_checked(saved):
    folder, contents = saved
    n = len(contents["table_boards"])
    n_moves = len(contents["table_next_board"])
    offsets = contents["table_offsets"]
    swapped = offsets.copy()
    swapped[[1000, 1001]] = swapped[[1001, 1000]] + [5, -5]  # out of order
    cases = [
        (dict(solution_values=np.full_like(contents["solution_values"], np.nan)), "solution_values"),  # issue 18
        (dict(solution_values=values_with(contents, "solution_values", (5, 1), np.inf)), "solution_values"),
        (dict(solution_values=contents["solution_values"].astype(np.float32)), "solution_values: dtype"),
        (dict(solution_values=contents["solution_values"].astype(str)), "solution_values: (dtype|declares)"),
        (dict(solution_values=contents["solution_values"][:-1]), "solution_values: shape"),
        (dict(solution_values=None), "solution_values: missing"),
        (dict(solution_policy=values_with(contents, "solution_policy", (3, 0), 999)), "solution_policy"),
        (dict(solution_policy=values_with(contents, "solution_policy", (3, 0), -2)), "solution_policy"),
        (dict(solution_policy=values_with(contents, "solution_policy", (n - 1, 1), 0)), "solution_policy"),
        (dict(solution_residuals=contents["solution_residuals"][:-1]), "solution_residuals: shape"),
        (
            dict(solution_opponent_policy=values_with(contents, "solution_opponent_policy", 7, 2)),
            "solution_opponent_policy",
        ),  # issue 18: a segfault
        (
            dict(solution_opponent_policy=values_with(contents, "solution_opponent_policy", 7, -1)),
            "solution_opponent_policy",
        ),
        (dict(solution_opponent_policy=None), "solution_opponent_policy: missing"),
        (dict(table_offsets=values_with(contents, "table_offsets", 1000, 10**9)), "table_offsets"),  # issue 18
        (dict(table_offsets=swapped), "table_offsets"),
        (dict(table_offsets=values_with(contents, "table_offsets", 0, 1)), "table_offsets"),
        (dict(table_offsets=values_with(contents, "table_offsets", -1, n_moves - 1)), "table_offsets"),
        (dict(table_offsets=offsets.astype(np.int32)), "table_offsets: dtype"),
        # (int32 in memory: a value 2**32 off would wrap back onto the right one)
        (
            dict(table_offsets=values_with(contents, "table_offsets", 1000, int(offsets[1000]) + 2**32)),
            "table_offsets: \\[1,000\\] is .* where the rules' own table \\(re-derived\\) has",
        ),
        (dict(table_next_board=values_with(contents, "table_next_board", 10, n)), "table_next_board"),
        (dict(table_next_board=values_with(contents, "table_next_board", 10, -1)), "table_next_board"),
        (dict(table_lines=values_with(contents, "table_lines", 10, 200)), "table_lines"),
        (dict(table_placement=values_with(contents, "table_placement", 10, 500)), "table_placement"),
        (dict(table_boards=values_with(contents, "table_boards", 5, 2**40)), "table_boards"),
        (dict(table_boards=contents["table_boards"][::-1].copy()), "table_boards"),
        (dict(table_layer_starts=values_with(contents, "table_layer_starts", -1, n + 1)), "table_layer_starts"),
        (dict(table_queues=np.zeros(n, dtype=np.int64)), "table_queues: not expected"),
        (dict(extra=np.arange(3)), "extra: not an array"),
    ]
    for arrays, words in cases:
        path = edited(folder, contents, **arrays)
        with pytest.raises(ValueError, match=f"{words}") as info:
            babytris.load(path)
        assert str(path) in str(info.value), words
    # unverified, the table is the file's: its offsets are checked before their cast to int32
    wrapped_offsets = values_with(contents, "table_offsets", 1000, int(offsets[1000]) + 2**32)
    wrapped = edited(folder, contents, table_offsets=wrapped_offsets)
    with pytest.raises(ValueError, match="table_offsets: offsets\\[1000\\] = .* lies outside"):
        babytris.load(wrapped, verify=False)


def test_a_plain_npy_file_is_refused(tmp_path):
    np.save(tmp_path / "values.npy", np.zeros(5))
    with pytest.raises(ValueError, match="one numpy array"):
        babytris.load(tmp_path / "values.npy")
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(ValueError, match="not a babytris solution file"):
        babytris.load(tmp_path / "text.npz")


def test_a_damaged_archive_is_refused(saved, tmp_path):
    folder, contents = saved
    data = bytearray((folder / "good.npz").read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)  # zeros in the middle of a compressed array
    (tmp_path / "damaged.npz").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="babytris solution file"):
        babytris.load(tmp_path / "damaged.npz", verify=False)  # (every member read)
    with pytest.raises(ValueError, match="babytris solution file"):
        babytris.load(tmp_path / "damaged.npz")  # (every member read too, the table's compared with the rules')


# --- Saving never destroys the previous file ------------------------------------------------------


def test_save_replaces_the_file_and_leaves_nothing_else(tmp_path):
    path = tmp_path / "s.npz"
    path.write_bytes(b"old")
    babytris.solve(width=3, height=3).save(path)
    assert babytris.load(path).n_boards == 34
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.npz"]


def test_a_failing_save_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "s.npz"
    good = babytris.solve(width=3, height=3)
    good.save(path)
    before = path.read_bytes()
    for failure in (OSError(28, "No space left on device"), KeyboardInterrupt()):

        def broken(*args, failure=failure, **kwargs):
            raise failure

        monkeypatch.setattr(np, "savez_compressed", broken)
        with pytest.raises(type(failure)):
            good.save(path)
        assert path.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["s.npz"]


def test_saving_onto_a_directory_fails_cleanly(tmp_path):
    with pytest.raises(IsADirectoryError):
        babytris.solve(width=3, height=3).save(tmp_path)
    assert list(tmp_path.iterdir()) == []


SAVER = """
import sys, babytris
solution = babytris.load(sys.argv[1])
print("ready", flush=True)
while True:
    solution.save(sys.argv[2])
"""


@pytest.mark.long
def test_a_killed_save_leaves_the_previous_file(tmp_path):
    good = tmp_path / "good.npz"
    babytris.solve(width=4, height=5).save(good)
    original = babytris.load(good)
    target = tmp_path / "x.npz"
    target.write_bytes(good.read_bytes())
    for delay in (0.0, 0.05, 0.13, 0.21, 0.34, 0.55, 0.89):
        saver = subprocess.Popen(
            [sys.executable, "-c", SAVER, str(good), str(target)], cwd=tmp_path, stdout=subprocess.PIPE, text=True
        )
        try:
            assert saver.stdout.readline().strip() == "ready"
            time.sleep(delay)
            os.kill(saver.pid, signal.SIGKILL)
        finally:
            saver.kill()
            saver.wait(timeout=30)
            saver.stdout.close()
        back = babytris.load(target)
        assert np.array_equal(back.values, original.values) and np.array_equal(back.policy, original.policy)
        assert back.rules == original.rules and back.transitions.n_moves == original.transitions.n_moves
    # The kills came mid-write: they left temporary files (a killed process cannot remove its own).
    assert {p.name for p in tmp_path.iterdir()} - {"good.npz", "x.npz"}


def test_evaluation_sweeps_are_kept_and_optional(saved):
    folder, contents = saved
    kept = contents["solution_evaluation_sweeps"]
    assert babytris.load(edited(folder, contents)).evaluation_sweeps.tolist() == kept.tolist()
    older = babytris.load(edited(folder, contents, solution_evaluation_sweeps=None))  # a file from before
    assert older.evaluation_sweeps is None
    with pytest.raises(ValueError, match="solution_evaluation_sweeps: values below 0"):
        babytris.load(edited(folder, contents, solution_evaluation_sweeps=np.full_like(kept, -1)))
    with pytest.raises(ValueError, match="solution_evaluation_sweeps: shape"):
        babytris.load(edited(folder, contents, solution_evaluation_sweeps=kept[:-1]))


@pytest.mark.parametrize("row", [0, 99, "0", True])
def test_an_opening_row_must_be_a_given_opponents_start_row(saved, row):
    """The fixture's opponent is minimax (it picks its own opening) and it has one start row: no
    opening may be saved for it."""
    folder, contents = saved
    with pytest.raises(babytris.files.persist.SolutionFileError, match="opening_row"):
        babytris.load(edited(folder, contents, meta={"opening_row": row}))


def test_a_path_is_what_open_takes(tmp_path):
    # issue 47: a bytes path was called a corrupt file
    solution = babytris.solve(width=3, height=3)
    solution.save(os.fsencode(tmp_path / "s.npz"))
    for path in (os.fsencode(tmp_path / "s.npz"), tmp_path / "s.npz", str(tmp_path / "s.npz")):
        for verify in (True, False):
            assert babytris.load(path, verify=verify).start_value == solution.start_value
    with pytest.raises(
        babytris.files.persist.SolutionFileError, match=re.escape(f"{str(tmp_path / 'x.npz')!r} is a corrupt")
    ):
        (tmp_path / "x.npz").write_bytes(b"PK\x03\x04 not much of an archive")
        babytris.load(os.fsencode(tmp_path / "x.npz"))  # (named as the text of the path)
    for wrong in (3, None, ["s.npz"]):
        with pytest.raises(
            ValueError, match=f"path must be a file path \\(str, bytes or os.PathLike\\), got {type(wrong).__name__}"
        ):
            babytris.load(wrong)
