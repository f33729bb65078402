"""``babytris board``: it solves or loads, prints its URL, serves the API on
loopback, warns beyond it, refuses what conflicts, and stops on Ctrl-C within
half a second with its one line."""

from __future__ import annotations

import json
import signal
import socket
import sys
import time
import urllib.request

import pytest
from children import start

import babytris
from babytris.cli import commands as cli

RUNNER = "import sys; from babytris.cli.commands import main; sys.exit(main(sys.argv[1:]))"


def _served(argv, tmp_path):
    """The board started with ``argv`` and its first line of output (the URL once it serves)."""
    board = start([sys.executable, "-c", RUNNER, "board", "--no-browser", "--port", "0", *argv], tmp_path)
    return board, board.stdout.readline()


def _stop(board, delay: float = 0.0):
    """Ctrl-C after ``delay`` seconds; the seconds the board took to exit, its status and stderr."""
    time.sleep(delay)
    sent = time.monotonic()
    board.send_signal(signal.SIGINT)
    try:
        _, err = board.communicate(timeout=30)
    finally:
        board.kill()
    return time.monotonic() - sent, board.returncode, err


@pytest.mark.parametrize("delay", [0.0, 0.3, 1.0])
def test_the_board_serves_its_url_and_stops_on_ctrl_c_within_half_a_second(delay, tmp_path):
    board, line = _served(["--width", "4", "--height", "4", "--json"], tmp_path)
    try:
        url = json.loads(line)["url"]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "api/position?pos=....;L", timeout=10) as response:
            body = json.loads(response.read())
        assert body["value"] == pytest.approx(babytris.solve(width=4, height=4).value(0, "L"), abs=1e-7)
    finally:
        seconds, status, err = _stop(board, delay)
    assert status == cli.EXIT_INTERRUPTED and err == "babytris: interrupted\n", err
    assert seconds < 0.5, seconds  # (the exit counted too: 0.02 s measured)


def test_the_board_of_a_saved_solution_and_its_text(tmp_path):
    solution = babytris.solve(width=4, height=4, opponent="minimax")
    solution.save(tmp_path / "s.npz")
    board, line = _served(["--solution", str(tmp_path / "s.npz")], tmp_path)
    try:
        assert line.startswith("babytris board: http://127.0.0.1:") and "(Ctrl-C stops it)" in line
        url = line.split()[2]
        with urllib.request.urlopen(url + "api/game", timeout=10) as response:
            game = json.loads(response.read())
        assert game["opponent"] == "minimax" and "solution" in game["opponents"]
        assert game["start_value"] == solution.start_value
    finally:
        _stop(board)


def test_the_board_of_a_saved_lean_solve(tmp_path):
    rules = babytris.Rules(width=4, height=5)
    babytris.solve_lean(rules).save(tmp_path / "lean.npz")  # (babytris solve --mode lean --out's file)
    board, line = _served(["--solution", str(tmp_path / "lean.npz"), "--json"], tmp_path)
    try:
        url = json.loads(line)["url"]
        with urllib.request.urlopen(url + "api/game", timeout=10) as response:
            assert json.loads(response.read())["result"] == "lean"
        with urllib.request.urlopen(url + "api/position?pos=%23.../%23%23..;L", timeout=10) as response:
            moves = json.loads(response.read())["moves"]
        table = babytris.solve(rules).action_values(0b0001_0011, "L")
        assert {m["id"]: m["value"] for m in moves} == pytest.approx(
            {f"L-{p.index}": v for p, v in table.items()}, abs=1e-6
        )
    finally:
        _stop(board)


def test_the_lean_mode_serves_values_on_demand(tmp_path, capsys):
    board, line = _served(["--width", "4", "--height", "5", "--mode", "lean", "--json"], tmp_path)
    try:
        url = json.loads(line)["url"]
        with urllib.request.urlopen(url + "api/game", timeout=10) as response:
            game = json.loads(response.read())
        assert game["result"] == "lean" and game["opponents"] == ["random"] and game["compare"] == []
        assert game["start_value"] == pytest.approx(babytris.solve(width=4, height=5).start_value, abs=1e-7)
    finally:
        _stop(board)
    assert cli.main(["board", "--mode", "lean", "--hold", "--no-browser", "-q"]) == 2
    assert "--mode lean: solves the plain game" in capsys.readouterr().err


def test_a_board_too_big_to_solve_shows_estimates(tmp_path, capsys):
    board, line = _served(["--width", "10", "--height", "20", "--pieces", "tetrominoes", "--json"], tmp_path)
    try:
        url = json.loads(line)["url"]
        with urllib.request.urlopen(url + "api/game", timeout=10) as response:
            game = json.loads(response.read())
        assert (game["estimate"], game["width"], game["height"], len(game["pieces"])) == (True, 10, 20, 7)
        with urllib.request.urlopen(url + "api/position?pos=..........;T", timeout=10) as response:
            assert len(json.loads(response.read())["moves"]) == 34
    finally:
        _stop(board)
    argv = ["board", "--width", "10", "--height", "20", "--preview", "1", "--no-browser", "-q"]
    assert cli.main(argv) == 2
    assert (
        "--preview and 10x20 conflict: a board too big to solve plays the big engine's game" in capsys.readouterr().err
    )
    assert cli.main(["board", "--mode", "estimate", "--discount", "0.5", "--no-browser", "-q"]) == 2
    assert "--discount and --mode estimate conflict" in capsys.readouterr().err


def test_a_host_beyond_loopback_is_warned_about(tmp_path):
    board, line = _served(["--width", "3", "--height", "3", "--host", "0.0.0.0"], tmp_path)
    try:
        assert line.startswith("babytris board: http://0.0.0.0:")
    finally:
        _, _, err = _stop(board)
    assert "babytris board: warning: --host 0.0.0.0 serves the board beyond this machine" in err


def test_the_board_refuses_what_conflicts(tmp_path, capsys):
    assert cli.main(["board", "--solution", str(tmp_path / "s.npz"), "--width", "5", "--no-browser"]) == 2
    assert "--width and --solution conflict" in capsys.readouterr().err
    assert cli.main(["board", "--solution", str(tmp_path / "s.npz"), "--mode", "lean", "--no-browser"]) == 2
    assert "--mode and --solution conflict" in capsys.readouterr().err
    assert cli.main(["board", "--no-verify", "--no-browser"]) == 2
    assert "--no-verify: only with --solution" in capsys.readouterr().err
    assert cli.main(["board", "--port", "70000", "--no-browser"]) == 2
    assert "--port must be an integer in [0, 65535], got 70000" in capsys.readouterr().err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["board", "--width", "3", "--height", "3", "--port", str(port), "--no-browser", "-q"]) == 2
    assert f"--port {port}: cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
    argv = ["board", "--width", "3", "--height", "3", "--host", "192.0.2.1", "--port", "0", "--no-browser", "-q"]
    assert cli.main(argv) == 2  # (an address of no interface here: the host is at fault, not the port)
    err = capsys.readouterr().err
    assert "--host 192.0.2.1: cannot listen there" in err and "warning" not in err


def test_the_gaps_solution_is_refused_with_its_reason(tmp_path, capsys):
    argv = ["board", "--width", "3", "--height", "3", "--opponent", "gaps", "--no-browser", "-q"]
    assert cli.main(argv) == 2
    assert "the board shows an optimal player's values" in capsys.readouterr().err
