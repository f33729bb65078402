"""The `babytris` command line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from babytris import cli


def mean_value(out: str) -> float:
    (line,) = [line for line in out.splitlines() if line.startswith("mean value")]
    return float(line.split()[2])


def test_solve_4x4(capsys):
    assert cli.main(["solve", "--width", "4", "--height", "4"]) == 0
    out = capsys.readouterr().out
    assert "12,978 reachable" in out
    assert "25,956 states" in out
    assert "converged" in out and "NOT converged" not in out
    assert round(mean_value(out), 3) == 4.151  # published, discount 0.9


def test_solve_options(capsys):
    argv = ["solve", "--width", "4", "--height", "4", "--discount", "0.1", "--method", "vi", "--tol", "1e-10"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert round(mean_value(out), 3) == 0.566
    assert "(vi)" in out


def test_solve_pieces(capsys):
    assert cli.main(["solve", "--width", "4", "--height", "4", "--pieces", "tetrominoes"]) == 0
    out = capsys.readouterr().out
    assert "2,582 reachable" in out
    assert "I4 O T S Z J L4" in out


def test_not_converged_returns_1(capsys):
    assert cli.main(["solve", "--width", "4", "--height", "4", "--method", "vi", "--max-iter", "1"]) == 1
    assert "NOT converged" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, words",
    [
        (["solve", "--width", "0", "--height", "4"], "width"),
        (["solve", "--width", "9", "--height", "8"], "width * height"),
        (["solve", "--width", "4", "--height", "4", "--discount", "1.0"], "discount"),
        (["solve", "--width", "4", "--height", "4", "--pieces", "X"], "unknown piece"),
        (["solve", "--width", "4", "--height", "4", "--tol", "0"], "tol"),
    ],
)
def test_bad_arguments_return_2(argv, words, capsys):
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("babytris: error:")
    assert words in captured.err


def test_unparsable_width_exits_2(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["solve", "--width", "four"])
    assert info.value.code == 2
    assert "--width" in capsys.readouterr().err


def test_python_dash_m(tmp_path):
    # run outside the repository so the installed package is the one imported
    done = subprocess.run(
        [sys.executable, "-m", "babytris", "solve", "--width", "3", "--height", "3"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "34 reachable" in done.stdout


@pytest.mark.parametrize("value", ["inf", "1e12", "0"])
def test_bad_max_memory_is_exit_2(value, capsys):
    assert cli.main(["solve", "--width", "4", "--height", "4", "--max-memory", value]) == 2
    assert "max-memory" in capsys.readouterr().err


def test_solve_against_an_opponent(capsys):
    assert cli.main(["solve", "--width", "4", "--height", "4", "--opponent", "minimax"]) == 0
    out = capsys.readouterr().out
    assert "opponent minimax" in out and "(vi)" in out


def test_tournament(capsys):
    argv = ["tournament", "--width", "3", "--height", "4", "--actions", "50", "--games", "10",
            "--opponent-discounts", "0.5"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["player", "random", "minimax", "0.5", "minavg", "0.5", "gaps", "0.5", "min"]
    assert "max-min 0/1/4/1.5" in out
    assert cli.main(argv + ["--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("player,opponent,expected,")
    assert cli.main(argv + ["--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("| player | random | minimax 0.5 |")


def test_tournament_bad_arguments(capsys):
    assert cli.main(["tournament", "--actions", "0"]) == 2
    assert "n_actions" in capsys.readouterr().err


def test_rate(capsys):
    assert cli.main(["rate", "--width", "4", "--height", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["random", "1.130308492"]
    assert lines[2].split()[:2] == ["minimax", "1.000000000"]


def test_minimize(capsys):
    assert cli.main(["minimize", "--width", "4", "--height", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("4x4: 25,956 states, 12,978 boards")
    assert lines[2].split()[:3] == ["random", "3,925", "3,192"]
    assert lines[5].split()[:3] == ["gaps", "4,808", "3,414"]
