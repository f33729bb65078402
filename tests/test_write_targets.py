"""Writes touch only regular files: every writer goes through one helper
(``persist.replace_atomically``) that refuses an empty path, a device, FIFO or
socket before anything is written, and replaces a symlink's target."""

import os
import socket
import stat
import subprocess
import sys

import numpy as np
import pytest

import babytris
from babytris.engine.writing import WriteTargetError, check_write_target, replace_atomically


@pytest.fixture(scope="module")
def solution():
    return babytris.solve(width=4, height=3)


def _never(f):
    raise AssertionError("the writer ran for a refused target")


def test_empty_path_refused_naming_the_field():
    with pytest.raises(WriteTargetError, match="--out.*empty"):
        replace_atomically("", _never, field="--out")


def test_fifo_refused_and_left_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(WriteTargetError, match="FIFO"):
        replace_atomically(fifo, _never)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["pipe"]  # no temporary file left behind


def test_socket_refused(tmp_path):
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        with pytest.raises(WriteTargetError, match="socket"):
            replace_atomically(path, _never)
        assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_device_refused_before_anything_is_written():
    # check_write_target alone: nothing is ever opened for writing here, even as root.
    with pytest.raises(WriteTargetError, match="character device"):
        check_write_target("/dev/null", field="--out")
    with pytest.raises(WriteTargetError, match="character device"):
        replace_atomically("/dev/null", _never)
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_symlink_to_a_device_refused(tmp_path):
    link = tmp_path / "out.npz"
    link.symlink_to("/dev/null")
    with pytest.raises(WriteTargetError, match="device"):
        replace_atomically(link, _never)
    assert link.is_symlink() and stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_symlink_keeps_pointing_at_its_new_target(tmp_path, solution):
    run = tmp_path / "run.npz"
    run.write_bytes(b"old")
    latest = tmp_path / "latest.npz"
    latest.symlink_to("run.npz")
    solution.save(latest)
    assert latest.is_symlink() and os.readlink(latest) == "run.npz"
    assert babytris.load(run).start_value == solution.start_value
    dangling = tmp_path / "next.npz"
    dangling.symlink_to("new-run.npz")
    solution.save(dangling)
    assert dangling.is_symlink() and (tmp_path / "new-run.npz").is_file()


def test_save_and_csv_refuse_a_fifo(tmp_path, solution):
    from babytris.results.tables import write_policy_csv

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for write in (solution.save, lambda p: write_policy_csv(solution, p)):
        with pytest.raises(WriteTargetError):
            write(fifo)
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "babytris", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "--width", "4", "--height", "3", "--out", ""],
        ["solve", "--width", "4", "--height", "3", "--policy-csv", ""],
        ["play", "--solution", ""],
        ["play", "--width", "4", "--height", "3", "--strip", ""],
        ["export", "--width", "4", "--height", "3", "--format", "drn", "--out", ""],
    ],
)
def test_cli_refuses_an_empty_path(argv):
    done = _cli(*argv)
    assert done.returncode == 2, done.stderr
    assert "empty" in done.stderr and "Traceback" not in done.stderr


def test_cli_refuses_a_fifo_before_solving(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for option in ("--out", "--policy-csv"):
        done = _cli("solve", "--width", "4", "--height", "3", option, str(fifo))
        assert done.returncode == 2 and "FIFO" in done.stderr, done.stderr
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    done = _cli("play", "--width", "4", "--height", "3", "--gif", str(fifo))
    assert done.returncode == 2 and "FIFO" in done.stderr, done.stderr


def test_helper_writes_a_regular_file_atomically(tmp_path):
    target = tmp_path / "a.bin"
    replace_atomically(target, lambda f: f.write(np.arange(3, dtype=np.uint8).tobytes()))
    assert target.read_bytes() == b"\x00\x01\x02" and sorted(os.listdir(tmp_path)) == ["a.bin"]
