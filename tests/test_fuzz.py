"""Fuzzing every public door (issue 18): random arguments, corrupted move
tables and corrupted files.  The only allowed outcomes are a result or a
ValueError / TypeError whose message names the field at fault (the CLI: exit
2 with one line).  Bounded to well under a minute; a longer run's counts are
in docs/results.md (``BABYTRIS_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py``)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import babytris
from babytris.cli import commands as cli

EXAMPLES = int(os.environ.get("BABYTRIS_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

#: Odd values of every kind: right and wrong types, numpy scalars, out of range, non-finite.
ODD = st.one_of(
    st.integers(-3, 70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            None,
            True,
            "4",
            "abc",
            [],
            (1,),
            {},
            np.int64(3),
            np.float32(0.5),
            np.bool_(True),
            np.int8(-1),
            10**30,
            -(10**30),
            0.5,
            1.0,
            0.0,
        ]
    ),
)


def named(err: Exception, names) -> bool:
    """Whether the error's message names one of ``names``."""
    return any(name in str(err) for name in names)


@FUZZ
@given(data=st.data())
def test_random_arguments_to_solve(data):
    good = {
        "width": 3,
        "height": 3,
        "discount": 0.9,
        "tol": 1e-6,
        "max_iter": 200,
        "opponent": "random",
        "preview": 0,
        "hold": False,
        "n_jobs": 1,
    }
    bad = data.draw(st.sets(st.sampled_from(sorted(good)), min_size=1, max_size=2))
    args = dict(good)
    for name in bad:
        args[name] = data.draw(
            st.one_of(ODD, st.sampled_from(["minimax", "gaps", "nope"])) if name == "opponent" else ODD
        )
    try:
        s = babytris.solve(**args, max_memory=2**26)
    except babytris.MemoryLimitError as err:  # too big for the budget: refused with the estimate
        assert "max_memory" in str(err) and "boards" in str(err), err
        event("refused: over the memory budget")
        return
    except (ValueError, TypeError) as err:
        assert named(err, bad | {"width * height", "pieces", "line_scores"}), (args, err)
        event("refused: ValueError naming the field")
        return
    event("solved")
    assert np.isfinite(s.values).all() and s.error_bound is not None


@pytest.fixture(scope="module")
def small_table():
    return babytris.enumerate_boards(babytris.Rules(width=3, height=3))


TABLE_FIELDS = ("boards", "layer_starts", "offsets", "next_board", "lines", "placement")


@FUZZ
@given(
    field=st.sampled_from(TABLE_FIELDS),
    where=st.floats(0, 1),
    value=st.integers(-(2**40), 2**40),
    door=st.sampled_from(["solve", "rate", "expected", "minimize"]),
)
def test_corrupted_tables(small_table, field, where, value, door):
    array = getattr(small_table, field).copy()
    i = min(int(where * len(array)), len(array) - 1)
    info = np.iinfo(array.dtype)
    array[i] = int(np.clip(value, info.min, info.max))
    try:
        t = dataclasses.replace(small_table, **{field: array})
        if door == "solve":
            babytris.solve_transitions(t)
        elif door == "rate":
            babytris.long_run_rate(t)
        elif door == "expected":
            babytris.expected_points(t, "random", "random", n_placements=5)
        else:
            babytris.minimize(t)
    except ValueError as err:
        assert named(err, TABLE_FIELDS + ("boards",)), err
        event("refused: ValueError naming the field")
        return
    event("ran (the edit left a valid table)")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "good.npz"
    babytris.solve(width=3, height=3, opponent="minimax").save(path)
    with np.load(path) as data:
        contents = {key: data[key] for key in data.files}
    meta = json.loads(str(contents["meta"]))
    del meta["digests"]  # (they would refuse every edit first; test_crafted_bytes keeps them)
    contents["meta"] = np.array(json.dumps(meta))
    return path, contents


@FUZZ
@given(data=st.data())
def test_corrupted_files_load_or_name_the_field(saved, tmp_path_factory, data):
    _, contents = saved
    contents = {k: v.copy() for k, v in contents.items()}
    key = data.draw(st.sampled_from(sorted(contents)))
    if key == "meta":
        meta = json.loads(str(contents["meta"]))
        field = data.draw(st.sampled_from(sorted(meta)))
        meta[field] = data.draw(st.one_of(st.integers(-5, 10**6), st.floats(), st.text(max_size=5), st.none()))
        contents["meta"] = np.array(json.dumps(meta))
        names = {field, "meta", "format"}
    else:
        array = contents[key]
        if array.size and array.dtype.kind in "iuf":
            i = data.draw(st.integers(0, array.size - 1))
            kind = array.dtype
            value = data.draw(
                st.floats() if kind.kind == "f" else st.integers(int(np.iinfo(kind).min), int(np.iinfo(kind).max))
            )
            array.reshape(-1)[i] = value
        else:
            contents[key] = array[:0]
        names = {key, key.removeprefix("table_"), key.removeprefix("solution_"), "residual", "converged"}
    path = Path(tmp_path_factory.mktemp("fuzz")) / "edited.npz"
    np.savez(path, **contents)
    try:
        s = babytris.load(path)
    except ValueError as err:
        assert named(err, names), (key, err)
        event("refused: ValueError naming the field")
        return
    event("loaded (the edit left a valid file)")
    assert np.isfinite(s.values).all()
    s.value(0, 0)  # a loaded file answers lookups


@settings(max_examples=max(10, EXAMPLES // 4), deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_cli_exits_0_1_or_2_with_one_line(data, capsys):
    argv = data.draw(
        st.lists(
            st.sampled_from(
                [
                    "--width",
                    "--height",
                    "--discount",
                    "--tol",
                    "--preview",
                    "--opponent",
                    "3",
                    "-1",
                    "0.5",
                    "nan",
                    "1e400",
                    "minimax",
                    "x",
                    "--json",
                    "--max-iter",
                    "2",
                ]
            ),
            max_size=6,
        )
    )
    code = cli.main(["solve", *argv])
    err = capsys.readouterr().err.strip()
    assert code in (0, 1, 2, 3), (argv, code, err)
    event(f"exit {code}")
    assert "Traceback" not in err, (argv, err)
    if code == 2:  # one line naming the argument (after argparse's usage, for its own parse errors)
        last = err.splitlines()[-1]
        given = [a.lstrip("-") for a in argv if a.startswith("--")]
        names = given + [a.replace("-", "_") for a in given]
        assert "--" in last or "argument" in last or any(name in last for name in names), err


@FUZZ
@given(data=st.data())
def test_crafted_bytes_are_refused_with_a_value_error(saved, tmp_path_factory, data):
    """A saved file with bytes overwritten anywhere (the zip's headers and
    sizes included): loaded, or refused with a ValueError, quickly."""
    import time

    raw = bytearray(saved[0].read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    path = Path(tmp_path_factory.mktemp("fuzz")) / "crafted.npz"
    path.write_bytes(bytes(raw))
    started = time.perf_counter()
    try:
        babytris.load(path)
        event("loaded (the bytes changed nothing read)")
    except ValueError as err:
        assert "pickle" not in str(err) and "Traceback" not in str(err)
        event("refused: ValueError")
    assert time.perf_counter() - started < 5


@FUZZ
@given(kind=st.sampled_from(["missing", "regular", "symlink", "dangling", "fifo", "empty", "directory", "device"]))
def test_writer_targets_are_regular_files_or_refused(tmp_path_factory, kind):
    """replace_atomically (every writer's door) on each kind of target:
    a regular file written, or a ValueError / IsADirectoryError with the
    target as it was; /dev/null is only checked, never written."""
    import stat

    from babytris.engine.writing import WriteTargetError, replace_atomically

    folder = Path(tmp_path_factory.mktemp("targets"))
    target = {"empty": "", "device": "/dev/null", "directory": str(folder)}.get(kind, str(folder / "out.bin"))
    if kind == "regular":
        Path(target).write_bytes(b"old")
    elif kind in ("symlink", "dangling"):
        if kind == "symlink":
            (folder / "run.bin").write_bytes(b"old")
        Path(target).symlink_to("run.bin")
    elif kind == "fifo":
        os.mkfifo(target)
    refused = (WriteTargetError, IsADirectoryError)
    if kind in ("empty", "fifo", "directory", "device"):
        with pytest.raises(refused):
            replace_atomically(target, lambda f: pytest.fail("wrote to a refused target"))
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
        if kind == "fifo":
            assert stat.S_ISFIFO(os.lstat(target).st_mode)
        return
    replace_atomically(target, lambda f: f.write(b"new"))
    assert Path(os.path.realpath(target)).read_bytes() == b"new"
    assert Path(target).is_symlink() == (kind in ("symlink", "dangling"))


@pytest.mark.parametrize("value", [0x00, 0xFF, 0x80])
def test_a_wrong_directory_offset_is_a_corrupt_file(saved, tmp_path, value):
    """The end record's offset of the central directory (bytes -6..-3 of an
    archive without a comment) pointing before the file's start made zipfile
    seek to a negative offset: an OSError (EINVAL) passed for the system's,
    found by the crafted-bytes fuzz above.  It is the file's fault: refused."""
    raw = bytearray(saved[0].read_bytes())
    assert raw[-22:-18] == b"PK\x05\x06"  # (the end of central directory record, no comment)
    for at in range(-6, -2):
        raw_at = bytearray(raw)
        raw_at[at] = value
        path = tmp_path / f"offset{at}.npz"
        path.write_bytes(bytes(raw_at))
        try:
            babytris.load(path)
        except ValueError:
            pass
