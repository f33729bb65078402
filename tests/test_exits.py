"""The CLI's exit statuses (issue 38.6): one table in babytris.cli.commands.commands, the same
in docs/guide.md, and one line on stderr for each way a command ends badly."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from children import start

import babytris
from babytris.cli import commands as cli

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide.md"


def test_the_exit_statuses_are_distinct_and_the_guide_lists_each():
    table = {name: getattr(cli, name) for name in cli.__all__ if name.startswith("EXIT_")}
    assert len(set(table.values())) == len(table) == 8
    paragraph = GUIDE.read_text().split("The exit status is", 1)[1].split("\n\n", 1)[0]
    listed = {int(n) for n in re.findall(r"\b(\d+) (?:when|for)\b", paragraph)} | {0}
    assert listed == set(table.values()), paragraph


def test_the_readme_table_lists_every_exit_status():
    """The README's table of exit statuses is the code's (it listed 0-3 while the CLI used 0-6 and 130)."""
    table = {getattr(cli, name) for name in cli.__all__ if name.startswith("EXIT_")}
    readme = (GUIDE.parents[1] / "README.md").read_text()
    section = readme.split("| Status | Meaning |", 1)[1].split("\n\n", 1)[0]
    listed = [int(n) for n in re.findall(r"^\| *(\d+) *\|", section, flags=re.MULTILINE)]
    assert listed == sorted(table), section


def test_a_missing_extra_is_one_line_naming_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "scipy", None)  # as if scipy were not installed
    status = cli.main(
        ["export", "--format", "quantecon", "--width", "3", "--height", "3", "--out", str(tmp_path / "m")]
    )
    err = capsys.readouterr().err
    assert status == cli.EXIT_MISSING_EXTRA == 4, err
    assert err.count("\n") == 1 and "scipy" in err and "pip install 'babytris[export]'" in err, err


def test_the_sharded_solve_without_dask_names_its_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert cli.main(["solve", "--scheduler", "local:1"]) == cli.EXIT_MISSING_EXTRA
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'babytris[dask]'" in err, err


def test_scheduler_with_lean_mode_is_refused(capsys):
    assert cli.main(["solve", "--scheduler", "local:1", "--mode", "lean"]) == cli.EXIT_BAD_ARGUMENTS
    err = capsys.readouterr().err
    assert err.startswith("babytris solve: error: --scheduler") and "lean" in err and err.count("\n") == 1, err


class StubCluster:
    """A dask Client (and LocalCluster) whose every call on the workers raises ``error``."""

    error: Exception = OSError()

    def __init__(self, *args, **kwargs):
        pass

    def scheduler_info(self):
        return {"workers": {"tcp://127.0.0.1:1": {}, "tcp://127.0.0.1:2": {}}}

    def submit(self, *args, **kwargs):
        raise self.error

    def close(self):
        pass


def dask_error(lost: str) -> Exception:
    """What dask raises when a worker dies, in each way met (or a RuntimeError of babytris's own)."""
    distributed = pytest.importorskip("distributed")
    return {
        "OSError": OSError("Unable to contact Actor's worker"),  # dask's words for a killed worker
        "CommClosedError": distributed.comm.core.CommClosedError("in <TCP (closed)>: Stream is closed"),
        # (a CI run met it: the kill came between two calls on an actor)
        "actor lost": RuntimeError("Worker holding Actor was lost.  Status: error"),
        "KilledWorker": distributed.KilledWorker("shard-0", SimpleNamespace(address="tcp://127.0.0.1:1"), 3),
        "cancelled": distributed.client.FutureCancelledError("shard-0", "lost"),
        "own RuntimeError": RuntimeError("a bug of babytris's own"),
        "own file error": PermissionError(13, "Permission denied", "/shards/manifest.json"),
    }[lost]


LOST = ["OSError", "CommClosedError", "actor lost", "KilledWorker", "cancelled"]


@pytest.mark.parametrize("lost", LOST + ["own RuntimeError", "own file error"])
def test_a_lost_worker_is_one_line_saying_what_to_do(lost, monkeypatch, capsys):
    """The sharded solve's own error (babytris.modes.sharded.distributed.LostWorkerError) for each of dask's,
    in the Python API and on the command line (one line, exit 5); babytris's own errors surface as they are."""
    import distributed

    import babytris.modes.sharded.distributed as sharded

    error = dask_error(lost)
    monkeypatch.setattr(StubCluster, "error", error)
    monkeypatch.setattr(distributed, "Client", StubCluster)
    monkeypatch.setattr(distributed, "LocalCluster", StubCluster)
    rules = babytris.Rules(width=3, height=3)
    if lost.startswith("own"):  # (not taken for a lost worker)
        with pytest.raises(type(error), match=str(error.args[-1])):
            sharded.solve_sharded(rules, StubCluster())
        if isinstance(error, OSError):  # (the command's one line for a file, exit 2)
            assert cli.main(["solve", "--scheduler", "local:2"]) == cli.EXIT_BAD_ARGUMENTS
            assert "Permission denied: '/shards/manifest.json'" in capsys.readouterr().err
        else:
            with pytest.raises(type(error)):
                cli.main(["solve", "--scheduler", "local:2"])
        return
    with pytest.raises(sharded.LostWorkerError, match="a worker was lost mid-solve .*restart them") as caught:
        sharded.solve_sharded(rules, StubCluster())
    assert caught.value.__cause__ is error and type(error).__name__ in str(caught.value)
    assert cli.main(["solve", "--scheduler", "local:2"]) == cli.EXIT_LOST_WORKER == 5
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("babytris solve: error: --scheduler: a worker was lost"), err
    assert "restart" in err


def _spawned_children(pid: int) -> list[int]:
    """The processes ``pid`` started that run multiprocessing's spawn (dask's local workers)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            try:
                if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.append(child)
            except OSError:
                pass
            found += _spawned_children(child)
    return found


@pytest.mark.long
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the workers in /proc")
def test_a_worker_killed_mid_solve_ends_the_command_in_one_line(tmp_path):
    pytest.importorskip("distributed")
    argv = [sys.executable, "-m", "babytris", "solve", "--width", "4", "--height", "7", "--scheduler", "local:2"]
    solver = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(workers := _spawned_children(solver.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(5)  # into the sharded search or the sweeps (4x7 takes longer on 2 workers)
        os.kill(workers[-1], signal.SIGKILL)
        _, err = solver.communicate(timeout=120)
    finally:
        solver.kill()
    assert solver.returncode == cli.EXIT_LOST_WORKER, err
    assert err.count("\n") == 1 and "worker was lost" in err, err


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.long
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the workers in /proc")
@pytest.mark.parametrize("delay", [None, 0.2, 1.0, 2.0])
def test_ctrl_c_stops_the_sharded_solve_and_its_workers(delay, tmp_path):
    """Ctrl-C while the local cluster starts (None: 0.5 s after the command), or ``delay`` seconds after
    its two workers are up (the sharded search, the sweeps of 4x6, which end about 3 s after the workers
    are up since the shards exchange by layer: 4 s was past the solve): one line, exit 130, and no worker
    left running (a graceful close took 1-2.4 s and could leave one; a cluster interrupted while starting
    printed dask's traceback at exit).  Measured: 0.01-0.29 s from the signal to the exit (27 delays from
    0.3 to 14 s, 2 cores at a load of 7-8)."""
    pytest.importorskip("distributed")
    argv = [sys.executable, "-m", "babytris", "solve", "--width", "4", "--height", "6", "--scheduler", "local:2"]
    solver = start(argv, tmp_path)
    try:
        if delay is None:
            time.sleep(0.5)
        else:
            deadline = time.monotonic() + 60
            while len(_spawned_children(solver.pid)) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(delay)
        workers = _spawned_children(solver.pid)
        solver.send_signal(signal.SIGINT)
        _, err = solver.communicate(timeout=30)
    finally:
        solver.kill()
    assert solver.returncode == cli.EXIT_INTERRUPTED, err
    assert err == "babytris: interrupted\n", err
    assert delay is None or len(workers) == 2, "the workers were not found: the test would prove nothing"
    time.sleep(0.2)  # (a killed worker, orphaned, is reaped by init)
    assert not [pid for pid in workers if _running(pid)]
