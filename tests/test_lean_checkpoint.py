"""Checkpoints of the lean solve (issue 48, part 5): a solve stopped (Ctrl-C, an
exception, kill -9, even in the middle of a checkpoint's write) and started
again with the same directory ends with exactly the values of one never stopped."""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import numpy as np
import pytest
from children import start

from babytris.modes import checkpoint as checkpoints
from babytris.modes.checkpoint import CHECKPOINT_FILE
from babytris.modes.lean import solve_lean


class Stop(Exception):
    pass


def stop_at(sweep):
    """A progress callback that stops the solve after greedy sweep ``sweep``."""

    def progress(iteration, residual):
        if iteration == sweep:
            raise Stop

    return progress


@pytest.mark.parametrize("opponent", ["random", "minimax"])
@pytest.mark.parametrize("keep", ["moves", "placements"])
def test_a_resumed_solve_ends_with_the_values_of_one_never_stopped(tmp_path, opponent, keep):
    kw = dict(width=4, height=5, opponent=opponent, keep=keep, n_jobs=1)
    whole = solve_lean(**kw)
    with pytest.raises(Stop):
        solve_lean(**kw, checkpoint=tmp_path, checkpoint_seconds=0, progress=stop_at(4))
    # the checkpoint was taken before greedy sweep 4: three sweeps done, and their evaluations
    resumed = solve_lean(**kw, checkpoint=tmp_path, checkpoint_seconds=0)
    assert resumed.resumed == 3
    assert np.array_equal(resumed.board_values, whole.board_values)
    assert np.array_equal(resumed.residuals, whole.residuals)
    assert (resumed.iterations, resumed.evaluations) == (whole.iterations, whole.evaluations)
    assert whole.resumed == 0


def test_a_fresh_directory_starts_from_zero_and_a_finished_one_ends_at_once(tmp_path):
    first = solve_lean(width=4, height=4, checkpoint=tmp_path / "new", checkpoint_seconds=0)
    assert first.resumed == 0 and (tmp_path / "new" / CHECKPOINT_FILE).is_file()
    again = solve_lean(width=4, height=4, checkpoint=tmp_path / "new", checkpoint_seconds=0)
    # the last checkpoint came before the last greedy sweep, which finds the values converged
    assert again.resumed == first.iterations - 1 and again.iterations == first.iterations
    assert np.array_equal(again.board_values, first.board_values)


def test_checkpoints_wait_their_interval(tmp_path, monkeypatch):
    written = []
    original = checkpoints.Checkpointer.__call__

    def counted(self, values, state):
        original(self, values, state)
        written.append(self.written)

    monkeypatch.setattr(checkpoints.Checkpointer, "__call__", counted)
    solve_lean(width=4, height=5, checkpoint=tmp_path, checkpoint_seconds=3600)
    assert written and max(written) == 0  # asked before each greedy sweep, none due within the hour
    assert not (tmp_path / CHECKPOINT_FILE).exists()


@pytest.mark.parametrize(
    "change, words",
    [
        (dict(discount=0.8), "its discount is 0.9, this solve's 0.8"),
        (dict(opponent="minimax"), "its opponent is 'random'"),
        (dict(line_scores=(0, 1, 2, 3)), "its rules"),
        (dict(accelerate=False), "its accelerate is True"),
        (dict(tol=1e-6), "its tol"),
    ],
)
def test_a_checkpoint_of_another_solve_is_refused(tmp_path, change, words):
    with pytest.raises(Stop):
        solve_lean(width=4, height=4, checkpoint=tmp_path, checkpoint_seconds=0, progress=stop_at(2))
    kw = dict(width=4, height=4, checkpoint=tmp_path, checkpoint_seconds=0) | change
    with pytest.raises(ValueError, match=f"checkpoint .*{CHECKPOINT_FILE} is of another solve: {words}"):
        solve_lean(**kw)


def test_what_the_sweeps_keep_may_change_on_resuming(tmp_path):
    """The next board or the placement leading to it: the same sweeps, the same values
    (a resume with less memory may keep the placements only)."""
    whole = solve_lean(width=4, height=5, keep="moves")
    with pytest.raises(Stop):
        solve_lean(width=4, height=5, keep="moves", checkpoint=tmp_path, checkpoint_seconds=0, progress=stop_at(3))
    resumed = solve_lean(width=4, height=5, keep="placements", checkpoint=tmp_path, checkpoint_seconds=0)
    assert resumed.resumed == 2 and np.array_equal(resumed.board_values, whole.board_values)


def test_a_resume_needs_room_for_another_greedy_sweep(tmp_path):
    with pytest.raises(Stop):
        solve_lean(width=4, height=5, checkpoint=tmp_path, checkpoint_seconds=0, progress=stop_at(3))
    with pytest.raises(ValueError, match="max_iter=2: the checkpoint in .* has done 2 greedy sweeps already"):
        solve_lean(width=4, height=5, checkpoint=tmp_path, max_iter=2)


@pytest.mark.parametrize(
    "state, words",
    [
        ({"residuals": [1.0], "evaluations": [], "missed": 0, "accelerate": True, "jumped": False}, "not one"),
        ({"residuals": [], "evaluations": [], "missed": 0, "accelerate": True, "jumped": True}, "not one"),
        ({"residuals": [1.0], "evaluations": [2], "missed": -1, "accelerate": True, "jumped": False}, "not one"),
        ({"bogus": 1}, "bogus"),
        ([1, 2], "argument after"),
    ],
)
def test_a_checkpoint_in_a_state_no_solve_reaches_is_refused(tmp_path, state, words):
    with pytest.raises(Stop):
        solve_lean(width=4, height=4, checkpoint=tmp_path, checkpoint_seconds=0, progress=stop_at(2))
    path = tmp_path / CHECKPOINT_FILE
    with np.load(path) as data:
        values, meta = data["values"], json.loads(str(data["meta"][()]))
    meta["state"] = state
    np.savez(path, values=values, meta=np.array(json.dumps(meta)))
    with pytest.raises(ValueError, match=f"not a readable checkpoint .*{words}"):
        solve_lean(width=4, height=4, checkpoint=tmp_path)


def test_a_checkpoint_of_other_values_is_refused(tmp_path):
    with pytest.raises(Stop):
        solve_lean(width=4, height=4, checkpoint=tmp_path, checkpoint_seconds=0, progress=stop_at(2))
    path = tmp_path / CHECKPOINT_FILE
    with np.load(path) as data:
        values, meta = data["values"], data["meta"]
    for bad, words in ((values[:-1], "not 12,978 float64"), (values.astype(np.float32), "float32")):
        np.savez(path, values=bad, meta=meta)
        with pytest.raises(ValueError, match=words):
            solve_lean(width=4, height=4, checkpoint=tmp_path)
    values = values.copy()
    values[7] = np.nan
    np.savez(path, values=values, meta=meta)
    with pytest.raises(ValueError, match="not all finite"):
        solve_lean(width=4, height=4, checkpoint=tmp_path)


def test_a_damaged_checkpoint_is_refused_naming_it(tmp_path):
    with pytest.raises(Stop):
        solve_lean(width=4, height=4, checkpoint=tmp_path, checkpoint_seconds=0, progress=stop_at(2))
    path = tmp_path / CHECKPOINT_FILE
    data = bytearray(path.read_bytes())
    data[len(data) // 3 : len(data) // 3 + 64] = bytes(64)  # inside the values
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        solve_lean(width=4, height=4, checkpoint=tmp_path, checkpoint_seconds=0)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(checkpoint=""), "checkpoint must be a directory path"),
        (dict(checkpoint=3), "checkpoint must be a directory path \\(str, bytes or os.PathLike\\), got 3"),
        (dict(checkpoint_seconds=float("nan")), "checkpoint_seconds must be a number >= 0"),
        (dict(checkpoint_seconds=-1), "checkpoint_seconds must be a number >= 0"),
        (dict(keep="none"), "value iteration .* keeps no checkpoints"),
    ],
)
def test_bad_checkpoint_arguments_are_refused(tmp_path, kwargs, words):
    with pytest.raises(ValueError, match=words):
        solve_lean(width=4, height=4, **(dict(checkpoint=tmp_path) | kwargs))


def test_numpy_seconds_and_a_bytes_path_are_taken(tmp_path):
    folder = os.fsencode(str(tmp_path / "bytes"))
    solved = solve_lean(width=4, height=4, checkpoint=folder, checkpoint_seconds=np.float32(0))
    assert solved.converged and (tmp_path / "bytes" / CHECKPOINT_FILE).is_file()


def test_a_file_in_place_of_the_directory_is_refused(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="checkpoint must be a directory, got .*file.*not one"):
        solve_lean(width=4, height=4, checkpoint=tmp_path / "file")


def test_a_failed_checkpoint_write_leaves_the_one_before(tmp_path, monkeypatch):
    """A write that fails part way (as a kill in the middle of it would leave it) changes nothing."""
    with pytest.raises(Stop):
        solve_lean(width=4, height=5, checkpoint=tmp_path, checkpoint_seconds=0, progress=stop_at(3))
    before = (tmp_path / CHECKPOINT_FILE).read_bytes()

    def half_written(file, **arrays):
        file.write(b"PK\x03\x04 half of a zip")
        raise Stop

    monkeypatch.setattr(checkpoints.np, "savez", half_written)
    with pytest.raises(Stop):
        solve_lean(width=4, height=5, checkpoint=tmp_path, checkpoint_seconds=0)
    assert (tmp_path / CHECKPOINT_FILE).read_bytes() == before
    assert os.listdir(tmp_path) == [CHECKPOINT_FILE]  # no temporary file left behind
    monkeypatch.undo()
    assert solve_lean(width=4, height=5, checkpoint=tmp_path, checkpoint_seconds=0).resumed == 2


SOLVE = (
    "import sys, babytris; "
    "babytris.solve_lean(width=4, height=6, n_jobs=1, checkpoint=sys.argv[1], checkpoint_seconds=0, "
    "progress=lambda i, r: print('sweep', i, flush=True))"
)


@pytest.mark.long
@pytest.mark.parametrize("how, delay", [("SIGINT", 0.0), ("SIGINT", 0.15), ("SIGKILL", 0.05), ("SIGKILL", 0.2)])
def test_a_solve_stopped_by_a_signal_resumes_to_the_same_values(tmp_path, how, delay):
    """Ctrl-C stops within half a second; kill -9 at any point, in a write too, leaves a
    checkpoint the solve goes on from (or none, and it starts afresh)."""
    p = start([sys.executable, "-c", SOLVE, str(tmp_path)], tmp_path)
    try:
        for line in p.stdout:  # (sweep 3's checkpoint came before it)
            if line.startswith("sweep 3"):
                break
        else:
            pytest.fail("the solve ended before its third sweep")
        time.sleep(delay)
        sent = time.monotonic()
        p.send_signal(getattr(signal, how))
        _, err = p.communicate(timeout=30)
        latency = time.monotonic() - sent
    finally:
        p.kill()
    assert p.returncode == -getattr(signal, how), err
    if how == "SIGINT":
        assert "KeyboardInterrupt" in err and latency < 0.5, (latency, err)
    resumed = solve_lean(width=4, height=6, n_jobs=1, checkpoint=tmp_path, checkpoint_seconds=0)
    whole = solve_lean(width=4, height=6, n_jobs=1)
    assert resumed.resumed >= 2
    assert np.array_equal(resumed.board_values, whole.board_values)
    assert (resumed.iterations, resumed.evaluations) == (whole.iterations, whole.evaluations)


def test_the_command_line_goes_on_from_its_checkpoint(tmp_path, capsys):
    from babytris.cli import commands

    args = ["solve", "--width", "4", "--height", "5", "--json", "--checkpoint", str(tmp_path)]
    assert commands.main([*args, "--checkpoint-seconds", "0"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["mode"] == "lean" and "--checkpoint" in first["why"] and first["resumed_after_greedy_sweeps"] == 0
    assert commands.main([*args, "--checkpoint-seconds", "0"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["resumed_after_greedy_sweeps"] == first["iterations"] - 1
    assert again["start_value"] == first["start_value"]
    # an option that would be ignored is refused, naming it
    assert commands.main(["solve", "--checkpoint-seconds", "5"]) == commands.EXIT_BAD_ARGUMENTS
    assert "--checkpoint-seconds: give --checkpoint DIR too" in capsys.readouterr().err
    assert commands.main([*args, "--mode", "table"]) == commands.EXIT_BAD_ARGUMENTS
    assert "--checkpoint: only the lean mode checkpoints" in capsys.readouterr().err


def test_progress_estimates_the_time_left():
    import io

    from babytris.cli.lean import SweepProgress

    stream = io.StringIO()
    progress = SweepProgress(1e-8, stream)
    progress(1, 1.0)
    progress(2, 1e-2)  # a hundredth a sweep: three more to 1e-8
    first, second = stream.getvalue().splitlines()
    assert first == "greedy sweep 1: residual 1.00e+00"
    assert second.startswith("greedy sweep 2: residual 1.00e-02, about ") and second.endswith("(3 greedy sweeps)")
