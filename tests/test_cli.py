"""The `babytris` command line."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from children import start

import babytris
from babytris import Rules
from babytris.cli import commands as cli
from babytris.engine.stepped import Game


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
    assert captured.err.startswith(f"babytris {argv[0]}: error:") and captured.err.count("\n") == 1
    assert words in captured.err


def test_unparsable_width_exits_2(capsys):
    assert cli.main(["solve", "--width", "four"]) == 2
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
    assert "opponent minimax" in out and "(strategy)" in out


def test_solve_in_lean_mode(capsys):
    assert cli.main(["solve", "--width", "4", "--height", "5", "--mode", "lean", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["mode"] == "lean" and result["boards"] == 182_101
    assert result["start_value"] == pytest.approx(babytris.solve(width=4, height=5).start_value, abs=1e-7)
    assert result["error_bound"] < 1e-7 and result["peak_memory_bytes"] > 0


@pytest.mark.long
def test_solve_falls_back_to_lean_mode_where_the_table_would_not_fit(capsys):
    assert cli.main(["solve", "--width", "4", "--height", "6", "--max-memory", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "lean: the move table would not fit" in out and "2,546,847 reachable boards" in out
    # asked for the table itself, or for what the lean mode cannot do, the refusal stands
    assert cli.main(["solve", "--width", "4", "--height", "6", "--max-memory", "0.05", "--mode", "table"]) == 3
    assert cli.main(["solve", "--width", "4", "--height", "6", "--max-memory", "0.05", "--preview", "1"]) == 3
    assert "max_memory" in capsys.readouterr().err


def test_tournament(capsys):
    argv = [
        "tournament",
        "--width",
        "3",
        "--height",
        "4",
        "--placements",
        "50",
        "--games",
        "10",
        "--opponent-discounts",
        "0.5",
    ]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == [
        "player",
        "random",
        "minimax",
        "0.5",
        "minavg",
        "0.5",
        "gaps",
        "0.5",
        "min",
        "worst",
        "case",
    ]
    assert "max-min 0/1/4/1.5" in out
    assert cli.main(argv + ["--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("player,opponent,expected,")
    assert cli.main(argv + ["--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith("| player | random | minimax 0.5 |")
    # one statement of the playout check, with its threshold, and the rules, timing and ties beside it
    assert markdown.count("standard errors") == 1 and "99% confidence" in markdown
    assert "timing: preview=0" in markdown and "ties: first" in markdown
    assert cli.main(argv + ["--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["rules"]["width"] == 3 and record["rules"]["preview"] == 0 and "ties: first" in record["setup"]
    assert record["playouts_agree"] == (record["largest_gap"] <= record["agreement_threshold"])
    assert record["check"].startswith("playouts of 10 games agree" if record["playouts_agree"] else "playouts of 10")


def test_tournament_bad_arguments(capsys):
    assert cli.main(["tournament", "--placements", "0"]) == 2
    assert capsys.readouterr().err.startswith("babytris tournament: error: --placements must be an integer")


def test_tournament_and_play_count_placements_by_one_name(capsys):
    """``--placements`` is what play and tournament count, as ``n_placements`` in Python: one name."""
    argv = ["tournament", "--width", "3", "--height", "3", "--games", "2", "--json"]
    assert cli.main(argv + ["--placements", "7"]) == 0
    by_name = json.loads(capsys.readouterr().out)
    assert by_name["n_placements"] == 7
    assert cli.main(argv + ["--actions", "7"]) == 2


def test_rate(capsys):
    assert cli.main(["rate", "--width", "4", "--height", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["random", "1.130308492"]
    assert lines[2].split()[:2] == ["minimax", "1.000000000"]


def test_minimize(capsys):
    assert cli.main(["minimize", "--width", "4", "--height", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("4x4: 25,956 states, 12,978 boards")
    assert lines[2].split()[:4] == ["random", "3,832", "3,084", "3,844"]
    assert lines[5].split()[:4] == ["gaps", "4,805", "3,390", "4,808"]


def run_json(argv, capsys) -> dict:
    assert cli.main(argv + ["--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # no progress bars off a terminal
    return json.loads(captured.out)


def test_solve_json_and_quiet(capsys, tmp_path):
    path = tmp_path / "s.npz"
    summary = run_json(["solve", "--width", "4", "--height", "4", "--out", str(path)], capsys)
    assert (summary["boards"], summary["states"]) == (12_978, 25_956)
    assert summary["converged"] and summary["residual"] <= 1e-8 and summary["saved"] == str(path)
    assert round(summary["mean_value"], 3) == 4.151
    assert summary["rules"]["pieces"] == ["I", "L"] and summary["memory_bytes"] > 0
    loaded = babytris.load(path)
    assert loaded.start_value == summary["start_value"]
    assert cli.main(["solve", "--width", "3", "--height", "3", "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


def test_json_and_quiet_exclude_each_other(capsys):
    assert cli.main(["solve", "--json", "--quiet"]) == 2
    assert "not allowed with" in capsys.readouterr().err


@pytest.mark.parametrize("command", [[], ["solve"], ["play"], ["tournament"], ["bench"], ["rate"], ["minimize"]])
def test_help_explains_and_exits_0(command, capsys):
    assert cli.main(command + ["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: babytris") and "exit status" in out


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"babytris {babytris.__version__}"


def test_play_draws_each_placement(capsys):
    assert cli.main(["play", "--width", "4", "--height", "4", "--placements", "5"]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line[:4].strip().rstrip(".").isdigit()]
    assert [h.split(".")[0].strip() for h in headers] == ["1", "2", "3", "4", "5"]
    assert out.count("@") == 5 * 3  # every tromino drawn where it lands
    assert "stopped after 5 placements" in out


def test_play_json_follows_the_policy(capsys):
    game = run_json(["play", "--width", "4", "--height", "4", "--placements", "30", "--seed", "4"], capsys)
    solution = babytris.solve(width=4, height=4)
    assert len(game["placements"]) == 30 and not game["game_over"]
    assert game["score"] == sum(step["points"] for step in game["placements"])
    for step in game["placements"]:
        best = solution.best_action(step["board"], step["piece"])
        assert (best.rotation, best.column) == (step["rotation"], step["column"])
        assert step["value"] == pytest.approx(solution.value(step["board"], step["piece"]), abs=1e-8)
    assert run_json(["play", "--width", "4", "--height", "4", "--placements", "30", "--seed", "4"], capsys) == game


def test_play_a_saved_minimax_solution(capsys, tmp_path):
    path = tmp_path / "robust.npz"
    babytris.solve(width=4, height=4, opponent="minimax").save(path)
    game = run_json(["play", "--solution", str(path), "--placements", "12"], capsys)
    robust = babytris.load(path)
    assert game["opponent"] == "minimax"
    steps = game["placements"]
    for after in steps[1:]:  # each piece is the opponent's choice on the board it meets
        assert after["piece"] == robust.piece_policy(after["board"])
    assert steps[0]["piece"] == robust.piece_policy(0)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["play", "--placements", "0"], "--placements"),
        (["play", "--delay", "-1"], "--delay"),
        (["play", "--solution", "no-such-file.npz"], "No such file"),
        (["play", "--opponent", "gaps"], "optimal policy"),
        (["bench", "--sizes", "4y4"], "WxH"),
        (["bench", "--sizes", "6x6"], "30"),
        (["bench", "--repeat", "0"], "repeat"),
    ],
)
def test_bad_play_and_bench_arguments_return_2(argv, words, capsys):
    assert cli.main(argv) == 2
    assert words in capsys.readouterr().err


def test_play_refuses_a_corrupt_file(capsys, tmp_path):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"not a solution")
    assert cli.main(["play", "--solution", str(path)]) == 2
    assert "not a babytris solution file" in capsys.readouterr().err


def test_bench(capsys):
    result = run_json(["bench", "--sizes", "3x3", "4x3", "--repeat", "1", "--no-reference"], capsys)
    assert [(row["size"], row["boards"]) for row in result["rows"]] == [("3x3", 34), ("4x3", 1008)]
    assert all(row["solve"] > 0 and row["playouts"] > 0 for row in result["rows"]) and result["reference"] is None
    assert cli.main(["bench", "--sizes", "3x3", "--repeat", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:3] == ["size", "boards", "enumerate"]
    assert lines[2].split()[:2] == ["3x3", "34"]
    assert lines[3].startswith("4x3 full solve: babytris.reference")


def test_tournament_rate_and_minimize_json(capsys):
    table = run_json(
        [
            "tournament",
            "--width",
            "3",
            "--height",
            "4",
            "--placements",
            "50",
            "--games",
            "10",
            "--opponent-discounts",
            "0.5",
        ],
        capsys,
    )
    assert len(table["records"]) == len(table["players"]) * len(table["opponents"]) == 9 * 4
    rates = run_json(["rate", "--width", "4", "--height", "4"], capsys)
    assert [round(r["gain"], 9) for r in rates["rates"]] == [1.130308492, 1.0]
    groups = run_json(["minimize", "--width", "4", "--height", "4"], capsys)
    assert (groups["states"], groups["groups"][0]["state_groups"]) == (25_956, 3_832)
    assert groups["groups"][0]["bisimulation_state_groups"] == 3_844


def test_json_writes_missing_numbers_as_null(capsys):
    table = run_json(
        [
            "tournament",
            "--width",
            "3",
            "--height",
            "3",
            "--placements",
            "20",
            "--games",
            "1",
            "--opponent-discounts",
            "0.5",
        ],
        capsys,
    )
    assert all(r["playout_stderr"] is None for r in table["records"])  # one game: no spread
    assert (
        cli.main(
            [
                "tournament",
                "--width",
                "3",
                "--height",
                "3",
                "--placements",
                "20",
                "--games",
                "1",
                "--opponent-discounts",
                "0.5",
                "--format",
                "markdown",
            ]
        )
        == 0
    )
    assert "no playout check" in capsys.readouterr().out


def test_solve_json_counts_rows_and_boards_apart(capsys):
    summary = run_json(["solve", "--width", "4", "--height", "4", "--preview", "1"], capsys)
    assert (summary["rows"], summary["boards"], summary["states"]) == (25_956, 12_978, 51_912)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["play", "--seed", "-1"], "--seed"),
        (["play", "--opponent", "minavg"], "optimal policy"),
        (["solve", "--width", "3", "--height", "3", "--out", "/no/such/dir/x.npz"], "--out"),
    ],
)
def test_refused_before_any_work(argv, words, capsys):
    assert cli.main(argv) == 2
    assert words in capsys.readouterr().err


def test_over_the_memory_budget_is_exit_3(capsys):
    assert cli.main(["solve", "--width", "5", "--height", "5", "--max-memory", "0.01"]) == 3
    assert "max_memory" in capsys.readouterr().err


def test_play_with_mirror_rules_shows_the_real_boards(capsys, tmp_path):
    path = tmp_path / "mirror.npz"
    babytris.solve(width=4, height=5, mirror=True).save(path)
    game = run_json(["play", "--solution", str(path), "--placements", "25", "--seed", "3"], capsys)
    replay = Game(babytris.Rules(width=4, height=5), seed=3)
    for step in game["placements"]:  # each board is the one the previous placement left
        assert (step["board"], step["piece"]) == (replay.board, replay.piece_name)
        move = next(
            m
            for m in replay.moves()
            if (m.placement.rotation, m.placement.column) == (step["rotation"], step["column"])
        )
        assert replay.place(move.placement) == step["points"]
    assert replay.board == game["final_board"]


# --- Files, interrupts and exit statuses --------------------------------------------------------------


def test_out_is_checked_before_the_solve(tmp_path, capsys):
    started = time.perf_counter()
    # 5x6 would take minutes to solve: a refusal within seconds was made first.
    for out, words in ((tmp_path, "is a directory"), (tmp_path / "no" / "x.npz", "no directory")):
        assert cli.main(["solve", "--width", "5", "--height", "6", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("babytris solve: error: --out") and words in err and err.count("\n") == 1
    assert time.perf_counter() - started < 10


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere")
def test_out_in_a_read_only_directory_is_refused(tmp_path, capsys):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert cli.main(["solve", "--width", "5", "--height", "6", "--out", str(folder / "x.npz")]) == 2
        assert "cannot write" in capsys.readouterr().err
    finally:
        folder.chmod(0o700)


def bad_solution_files(folder):
    """Files `play --solution` must refuse with exit 2 (name, path)."""
    good = folder / "good.npz"
    babytris.solve(width=4, height=4).save(good)
    with np.load(good) as data:
        contents = {key: data[key] for key in data.files}
    meta = json.loads(str(contents["meta"]))
    files = {}

    def write(name, **changes):
        path = folder / f"{name}.npz"
        np.savez_compressed(path, **{**contents, **changes})
        files[name] = path

    write("discount abc", meta=np.array(json.dumps({**meta, "discount": "abc"})))
    write("string values", solution_values=contents["solution_values"].astype(str))
    policy = contents["solution_policy"].copy()
    policy[policy >= 0] = 900
    write("policy out of range", solution_policy=policy)
    np.save(folder / "plain.npy", contents["solution_values"])
    files["plain npy"] = folder / "plain.npy"
    (folder / "text.npz").write_text("not a solution")
    files["text"] = folder / "text.npz"
    (folder / "truncated.npz").write_bytes(good.read_bytes()[: good.stat().st_size // 2])  # a zip cut short
    files["truncated"] = folder / "truncated.npz"
    files["directory"] = folder
    files["missing"] = folder / "missing.npz"
    return files


def test_play_refuses_bad_files_with_exit_2(tmp_path, capsys):
    # (solution files failing their checks, or a zip cut short: 6; not solution files at all: 2)
    corrupt = ("discount abc", "string values", "policy out of range", "truncated")
    for name, path in bad_solution_files(tmp_path).items():
        expected = cli.EXIT_BAD_FILE if name in corrupt else cli.EXIT_BAD_ARGUMENTS
        assert cli.main(["play", "--solution", str(path)]) == expected, name
        err = capsys.readouterr().err
        assert err.startswith("babytris play: error:") and err.count("\n") == 1, (name, err)


def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(babytris, "solve", interrupted)
    assert cli.main(["solve", "--width", "4", "--height", "4"]) == 130
    assert capsys.readouterr() == ("", "babytris: interrupted\n")
    monkeypatch.setattr(cli, "_parser", interrupted)
    assert cli.main(["rate"]) == 130


# The `babytris` entry point, saying when its imports are done (a Ctrl-C before
# main() starts is Python's to report).
RUNNER = "import sys; from babytris.cli.commands import main; print('ready', flush=True); sys.exit(main(sys.argv[1:]))"


def test_ctrl_c_during_a_solve_keeps_the_previous_file(tmp_path):
    path = tmp_path / "x.npz"
    babytris.solve(width=3, height=3).save(path)
    before = path.read_bytes()
    argv = [sys.executable, "-c", RUNNER, "solve", "--width", "4", "--height", "6", "--out", str(path)]
    solver = start(argv, tmp_path)
    try:
        assert solver.stdout.readline() == "ready\n"
        time.sleep(1.0)  # into the solve (about 3 s here) or the save after it (about 6 s)
        solver.send_signal(signal.SIGINT)
        out, err = solver.communicate(timeout=60)
    finally:
        solver.kill()
    assert solver.returncode == 130, err
    assert err == "babytris: interrupted\n"
    assert path.read_bytes() == before and babytris.load(path).n_boards == 34
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npz"]


# One name, one default, one truth (issue 19): each command's help names only
# options it has, and its --json prints what its help says.


def _commands() -> dict:
    parser = cli._parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


QUICK_RUNS = {
    "solve": ["--width", "3", "--height", "3"],
    "play": ["--width", "3", "--height", "3", "--placements", "5"],
    "tournament": ["--width", "3", "--height", "3", "--placements", "10", "--games", "2"],
    "bench": ["--sizes", "3x3", "--no-reference", "--repeat", "1"],
    "rate": ["--width", "3", "--height", "3"],
    "minimize": ["--width", "3", "--height", "3"],
    "reproduce": ["--list"],
    "export": ["--width", "3", "--height", "3", "--format", "drn", "--out", "x.drn"],
    # (serves until Ctrl-C: its run and its --json are tests/test_board_cli.py's)
    "board": ["--width", "3", "--height", "3", "--port", "0", "--no-browser"],
}


def test_every_command_has_a_quick_run():
    assert set(QUICK_RUNS) == set(_commands()) == set(cli.COMMANDS)


@pytest.mark.parametrize("name", sorted(QUICK_RUNS))
def test_help_names_only_options_the_command_has(name):
    command = _commands()[name]
    options = {option for action in command._actions for option in action.option_strings}
    text = re.sub(r"-\n\s*", "-", command.format_help())  # (help wraps long words at their hyphens)
    for other, option in re.findall(r"babytris\s+(\w+)\s+(--[a-z][a-z-]*[a-z])", text):  # another command's
        assert option in {o for a in _commands()[other]._actions for o in a.option_strings}, (name, other, option)
    text = re.sub(r"babytris\s+\w+\s+--[a-z][a-z-]*[a-z]", "", text)
    mentioned = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", text))
    assert mentioned <= options, f"babytris {name} --help names {sorted(mentioned - options)}, which it lacks"


@pytest.mark.parametrize("name", sorted(set(QUICK_RUNS) - {"board"}))
def test_json_prints_what_the_help_says(name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (json_action,) = [a for a in _commands()[name]._actions if "--json" in a.option_strings]
    expected = dict if json_action.help.startswith("print one JSON object") else list
    assert json_action.help.startswith(("print one JSON object", "print a JSON list")), json_action.help
    assert cli.main([name, *QUICK_RUNS[name], "--json"]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), expected)


def test_every_command_defaults_to_the_rules_board():
    for name, command in _commands().items():
        defaults = {a.dest: a.default for a in command._actions if a.dest in ("width", "height")}
        if defaults:
            assert defaults == {"width": Rules().width, "height": Rules().height}, name


def test_the_gaps_opponents_values_are_labelled_holes(capsys):
    assert cli.main(["solve", "--width", "3", "--height", "3", "--opponent", "gaps"]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("start value")]
    assert line.split()[3] == "holes"
    assert cli.main(["solve", "--width", "3", "--height", "3", "--opponent", "gaps", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"] == "holes"
    assert cli.main(["solve", "--width", "3", "--height", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"] == "points"


def test_every_rules_field_is_an_option_of_every_command_that_builds_a_game(capsys):
    fields = [
        "--line-scores", "0", "1", "2", "4", "8", "--probabilities", "0.25", "0.75", "--start", "..../#...",
        "--no-holes", "--top-out",
    ]  # fmt: skip
    rules = babytris.Rules(
        width=4,
        height=4,
        line_scores=(0, 1, 2, 4, 8),
        probabilities=(0.25, 0.75),
        start=1,
        no_holes=True,
        top_out=True,
    )
    assert cli.main(["solve", *fields, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["start_value"] == pytest.approx(babytris.solve(rules).start_value)
    for command in (["rate"], ["minimize"], ["export", "--format", "drn", "--out", os.devnull + "x"]):
        parser_options = {a.dest for a in cli._parser()._subparsers._group_actions[0].choices[command[0]]._actions}
        assert {"line_scores", "probabilities", "start", "objective", "mirror", "no_holes", "top_out"} <= parser_options
    assert cli.main(["solve", "--start", "12a", "-q"]) == 2
    assert "--start takes an integer or rows" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["solve", "--widht", "4"],
            "babytris solve: error: unrecognized arguments: --widht 4 (see babytris solve --help)",
        ),
        (["tournament", "--opponent", "minimax"], "babytris tournament: error: unrecognized arguments: --opponent"),
        (["solve", "--opponent", "foo"], "babytris solve: error: argument --opponent: invalid choice: 'foo'"),
        (["solvee"], "babytris: error: argument COMMAND: invalid choice: 'solvee'"),
    ],
)
def test_a_usage_error_is_one_line_naming_the_command(argv, words, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(words) and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["solve", "--width", "99", "-q"], "babytris solve: error: --width must be an integer in [1, 64], got 99"),
        (["solve", "--max-iter", "0", "-q"], "babytris solve: error: --max-iter must be an integer"),
        (["tournament", "--games", "-1", "-q"], "babytris tournament: error: --games must be an integer"),
        (["solve", "--jobs", "0", "-q"], "babytris solve: error: --jobs must be"),
        (["solve", "--line-scores", "0", "1", "-q"], "babytris solve: error: --line-scores needs at least 4"),
    ],
)
def test_an_error_names_the_flag_not_the_python_argument(argv, words, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(words) and err.count("\n") == 1, err
