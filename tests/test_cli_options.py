"""No option silently ignored (issue 47.4): a plain install plays without the
draw extra; an option a command would ignore beside another is a conflict
naming both; the command line and the Python API refuse the same values."""

from __future__ import annotations

import json
import sys

import pytest

import babytris
from babytris.cli import commands as cli


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A 4x4 solution file (random pieces, discount 0.9)."""
    path = tmp_path_factory.mktemp("saved") / "4x4.npz"
    babytris.solve(width=4, height=4).save(path)
    return path


def fails(argv, capsys) -> str:
    """The one line of stderr of a command refused as bad arguments (exit 2)."""
    status = cli.main(argv)
    err = capsys.readouterr().err
    assert status == cli.EXIT_BAD_ARGUMENTS, err
    assert err.count("\n") == 1, err
    return err


def test_play_without_the_draw_extra_draws_nothing(saved, monkeypatch, capsys):
    """The README's play line on a plain install: no picture asked, none drawn (it exited 4)."""
    for module in ("resvg_py", "PIL"):
        monkeypatch.setitem(sys.modules, module, None)  # as if the draw extra were not installed
    assert cli.main(["play", "--solution", str(saved), "--placements", "5"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "stopped after 5 placements" in out and out.count("@") == 5 * 3
    # a picture asked for still needs it, and says so
    status = cli.main(["play", "--solution", str(saved), "--placements", "5", "--gif", str(saved.with_suffix(".gif"))])
    assert status == cli.EXIT_MISSING_EXTRA and "pip install 'babytris[draw]'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "options, named",
    [
        (["--width", "5"], "--width"),
        (["--opponent", "minimax"], "--opponent"),
        (["--discount=0.5"], "--discount"),
        (["--preview", "1", "--ties", "last"], "--preview, --ties"),
    ],
)
def test_play_refuses_game_options_beside_a_file(options, named, saved, capsys):
    err = fails(["play", "--solution", str(saved), "--placements", "2", *options], capsys)
    assert f"{named} and --solution conflict" in err and "the file holds the game" in err


def test_play_takes_a_file_with_its_own_options(saved, capsys):
    """A file with the options that do not set the game (the width left at its default is not given)."""
    argv = ["play", "--solution", str(saved), "--placements", "2", "--max-memory", "2", "--seed", "3", "-q"]
    assert cli.main(argv) == cli.EXIT_OK


def test_no_verify_without_a_file_is_refused(capsys):
    err = fails(["play", "--placements", "2", "--no-verify"], capsys)
    assert "--no-verify: only with --solution" in err


def test_play_refuses_placements_out_of_play_range(capsys):
    err = fails(["play", "--width", "3", "--height", "3", "--placements", str(10**9 + 1)], capsys)
    assert "--placements must be an integer in [1, 10**9], got 1000000001" in err
    assert "--placements must be an integer in [1, 10**9]" in fails(["play", "--placements", "0"], capsys)
    solution = babytris.solve(width=3, height=3)
    with pytest.raises(ValueError, match=r"n_placements must be an integer in \[1, 10\*\*9\], got 1000000001"):
        babytris.play(solution, n_placements=10**9 + 1)


def test_play_takes_the_seeds_play_takes(capsys):
    for seed in (-1, 2**64):
        assert f"--seed must be an integer in [0, 2**64 - 1], got {seed}" in fails(
            ["play", "--seed", str(seed)], capsys
        )
        with pytest.raises(ValueError, match=rf"seed must be an integer in \[0, 2\*\*64 - 1\], got {seed}"):
            babytris.play(babytris.solve(width=3, height=3), n_placements=2, seed=seed)
    assert cli.main(["play", "--width", "3", "--height", "3", "--seed", str(2**64 - 1), "-q"]) == cli.EXIT_OK


def test_an_empty_scheduler_is_refused_not_run_here(capsys):
    status = cli.main(["solve", "--width", "3", "--height", "3", "--scheduler", "", "-q"])
    err = capsys.readouterr().err
    assert status == cli.EXIT_BAD_ARGUMENTS and "--scheduler: the address is empty" in err, err


def test_the_sharded_solve_refuses_options_it_would_ignore(capsys):
    err = fails(["solve", "--scheduler", "local:1", "--jobs", "2", "--ties", "last"], capsys)
    assert "--jobs, --ties and --scheduler conflict" in err


def test_the_lean_mode_refuses_a_tie_rule_it_would_ignore(capsys):
    err = fails(["solve", "--mode", "lean", "--ties", "last", "-q"], capsys)
    assert "--ties and --mode lean conflict: a lean solve keeps the values only" in err
    assert cli.main(["solve", "--mode", "lean", "--width", "3", "--height", "3", "-q"]) == cli.EXIT_OK


def test_random_ties_need_a_seed_as_in_python(capsys):
    """The command line drew with seed 0 where Python refuses: now both refuse."""
    err = fails(["solve", "--width", "3", "--height", "3", "--ties", "random", "-q"], capsys)
    assert "--ties random" in err and "--tie-seed" in err and "[0, 2**63)" in err
    with pytest.raises(ValueError, match=r"tie_seed must be an integer in \[0, 2\*\*63\) with ties='random'"):
        babytris.solve(width=3, height=3, ties="random")
    assert cli.main(["solve", "--width", "3", "--height", "3", "--ties", "random", "--tie-seed", "0", "-q"]) == 0
    err = fails(["tournament", "--width", "3", "--height", "3", "--ties", "random", "-q"], capsys)
    assert "--tie-seed" in err


@pytest.mark.parametrize("discount, shown", [("1.5", "1.5"), ("nan", "nan"), ("-0.1", "-0.1")])
def test_opponent_discounts_errors_name_that_option(discount, shown, capsys):
    argv = ["tournament", "--width", "3", "--height", "3", "--opponent-discounts", "0.5", discount, "-q"]
    err = fails(argv, capsys)
    assert err.startswith("babytris tournament: error: --opponent-discounts must be numbers in [0, 1]"), err
    assert err.rstrip().endswith(f"got {shown}") and "--discount " not in err


def test_an_endless_opponent_discount_names_that_option(capsys):
    argv = ["tournament", "--width", "3", "--height", "3", "--opponent-discounts", "1", "--games", "2", "-q"]
    err = fails(argv + ["--placements", "10"], capsys)
    assert err.startswith("babytris tournament: error: --opponent-discounts 1:") and "keep it going forever" in err


def test_play_in_the_course_timing_shows_the_committed_piece(capsys):
    """With preview=1 the minimax opponent names the next piece before the placement: each line shows it,
    and it is the piece placed next."""
    argv = ["play", "--preview", "1", "--opponent", "minimax", "--placements", "6", "--delay", "0"]
    assert cli.main(argv) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "timing: the opponent names each piece before the placement, seeing the queue of 1" in out
    lines = [line.split() for line in out.splitlines() if line[:4].strip().rstrip(".").isdigit()]
    placed = [words[1] for words in lines]
    named = [words[words.index("next") + 1] for words in lines]
    assert len(lines) == 6 and named[:-1] == placed[1:], (placed, named)
    assert cli.main(argv + ["--json"]) == cli.EXIT_OK
    steps = json.loads(capsys.readouterr().out)["placements"]
    assert [step["preview"] for step in steps] == [[name] for name in named]


def test_export_says_whose_start_value_it_prints(tmp_path, capsys):
    """Against minavg the exported MDP's optimum is the optimal player's best response (8.756 on 4x4),
    not the random player's value `solve` prints (0.321): both labelled."""
    argv = ["export", "--opponent", "minavg", "--format", "drn", "--out", str(tmp_path / "m.drn")]
    assert cli.main(argv) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert (
        "start value  8.756029" in out and "the optimal player's best response to the minavg opponent's pieces" in out
    )
    assert "babytris solve prints 0.320989 for these options: the random player's points" in out
    assert cli.main(argv + ["--json"]) == cli.EXIT_OK
    record = json.loads(capsys.readouterr().out)
    assert round(record["start_value"], 3) == 8.756 and round(record["solved_start_value"], 3) == 0.321
    assert record["solved_player"] == "random" and "best response" in record["start_value_of"]
    assert cli.main(["solve", "--opponent", "minavg", "--json"]) == cli.EXIT_OK
    assert json.loads(capsys.readouterr().out)["start_value"] == record["solved_start_value"]
