"""Writes touch only regular files: every writer goes through one helper
(``persist.replace_atomically``) that refuses an empty path, a device, FIFO or
socket before anything is written, and replaces a symlink's target."""

import errno
import os
import socket
import stat
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import babytris
from babytris.engine.writing import WriteTargetError, check_write_target, replace_atomically
from babytris.results.tables import write_policy_csv


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


def _read_only_folder(monkeypatch):
    """Creating a file in the folder fails as in a read-only folder (even for root, who may write anywhere)."""

    def refused(*args, dir=None, prefix="", suffix="", **kwargs):
        hidden = os.path.join(dir, f"{prefix}x1y2z3{suffix}")
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), hidden)

    monkeypatch.setattr(tempfile, "mkstemp", refused)


def test_a_save_into_a_read_only_folder_names_the_users_path(tmp_path, monkeypatch, solution):
    # issue 47: the message named the hidden temporary file ('.s.npz.x1y2z3.tmp'), a file the user never asked for
    _read_only_folder(monkeypatch)
    path = tmp_path / "s.npz"
    with pytest.raises(PermissionError) as info:
        solution.save(path)
    assert info.value.filename == str(path) and info.value.errno == errno.EACCES
    assert str(info.value) == f"[Errno 13] Permission denied: {str(path)!r}"
    with pytest.raises(PermissionError, match=r"Permission denied: '.*/table\.csv'$"):
        write_policy_csv(solution, str(tmp_path / "table.csv"))
    assert os.listdir(tmp_path) == []


def test_a_failed_write_or_rename_names_the_users_path(tmp_path, monkeypatch):
    path = tmp_path / "out.bin"

    def full(f):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(OSError, match=r"No space left on device: '.*/out\.bin'$") as info:
        replace_atomically(path, full)
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(path)

    def refused(source, target):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), source, target)

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(PermissionError) as info:
        replace_atomically(os.fsencode(path), lambda f: f.write(b"x"))  # (a bytes path, as open() takes)
    assert info.value.filename == str(path) and ".tmp" not in str(info.value)
    assert os.listdir(tmp_path) == []  # (the temporary file removed)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_save_into_a_truly_read_only_folder_names_the_users_path(tmp_path, solution):
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o555)
    with pytest.raises(PermissionError) as info:
        solution.save(folder / "s.npz")
    assert info.value.filename == str(folder / "s.npz")
