"""A lean solution saved and loaded (LeanSolution.save, babytris.load_lean): the
file proves itself, and the loaded result answers as the table mode's Solution does."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
import zipfile

import numpy as np
import pytest
from children import start
from test_lean import agree

import babytris
from babytris import SolutionFileError, load_lean
from babytris.cli import commands as cli
from babytris.engine.resources import MemoryLimitError
from babytris.engine.writing import WriteTargetError
from babytris.modes.lean import solve_lean
from babytris.modes.lean_saving import array_digest, meta_digest
from babytris.results import saving


@pytest.fixture(scope="module")
def solved():
    """4x5's lean and table solves, against drawn pieces and against minimax."""
    return {
        opponent: (
            solve_lean(width=4, height=5, opponent=opponent),
            babytris.solve(width=4, height=5, opponent=opponent),
        )
        for opponent in ("random", "minimax")
    }


@pytest.fixture
def saved(tmp_path, solved):
    path = tmp_path / "4x5.npz"
    solved["random"][0].save(path)
    return path


def members(path) -> tuple[dict, dict[str, np.ndarray]]:
    with np.load(path, allow_pickle=False) as f:
        meta = json.loads(str(f["meta"]))
        return meta, {name: f[name] for name in ("bits", "board_values", "residuals")}


def rewrite(path, meta, arrays, *, redigest: bool) -> None:
    """The file written again with ``meta`` and ``arrays``; ``redigest``: with digests made anew (a forger's)."""
    if redigest:
        meta = dict(meta, digests={name: array_digest(a) for name, a in arrays.items()})
        meta["digests"]["meta"] = meta_digest(meta)
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)


@pytest.mark.parametrize("opponent", ["random", "minimax"])
@pytest.mark.parametrize("size", [(4, 4), (4, 5)])
def test_a_saved_lean_solution_loads_as_it_was_and_as_the_table_solve(tmp_path, size, opponent):
    lean = solve_lean(width=size[0], height=size[1], opponent=opponent)
    lean.save(tmp_path / "lean.npz")
    loaded = load_lean(tmp_path / "lean.npz")
    assert loaded.verified and loaded.rules == lean.rules and loaded.opponent == opponent
    assert np.array_equal(loaded.board_values, lean.board_values) and np.array_equal(loaded.boards(), lean.boards())
    assert (loaded.iterations, loaded.evaluations, loaded.residual, loaded.plan) == (
        lean.iterations,
        lean.evaluations,
        lean.residual,
        lean.plan,
    )
    assert loaded.error_bound == lean.error_bound and loaded.error_bound < 1e-7
    agree(loaded, babytris.solve(width=size[0], height=size[1], opponent=opponent))


@pytest.mark.long
@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_the_round_trip_at_4x6(tmp_path, opponent):
    lean = solve_lean(width=4, height=6, opponent=opponent)
    lean.save(tmp_path / "4x6.npz")
    # the boards' bitmap (2**24 bits) and a value per board, with the headers: no more
    assert os.path.getsize(tmp_path / "4x6.npz") < 2**24 // 8 + 8 * lean.n_boards + 8 * 4096
    loaded = load_lean(tmp_path / "4x6.npz")
    assert np.array_equal(loaded.board_values, lean.board_values)
    agree(loaded, babytris.solve(width=4, height=6, opponent=opponent))


def test_the_file_holds_the_bitmap_and_a_value_per_board(saved, solved):
    lean = solved["random"][0]
    with zipfile.ZipFile(saved) as archive:
        sizes = {info.filename: info.file_size for info in archive.infolist()}
        assert all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())  # (read in slices)
    assert set(sizes) == {"meta.npy", "bits.npy", "board_values.npy", "residuals.npy"}
    assert sizes["bits.npy"] - 128 == 2**20 // 8 and sizes["board_values.npy"] - 128 == 8 * lean.n_boards
    meta, _ = members(saved)
    assert meta["format"] == "babytris.modes.lean" and meta["ties"] == "first" and meta["n_boards"] == 182_101


def test_the_digests_are_those_a_table_file_keeps(saved):
    meta, arrays = members(saved)
    assert meta["digests"] == saving.digests(meta, arrays)


@pytest.mark.parametrize("member", ["board_values", "bits"])
def test_a_damaged_member_is_refused_by_name(tmp_path, saved, member):
    data = bytearray(saved.read_bytes())
    with zipfile.ZipFile(saved) as archive:
        info = archive.getinfo(f"{member}.npy")
    at = info.header_offset + 30 + len(info.filename) + 200  # (inside the member's data, past its header)
    data[at] ^= 0x10
    saved.write_bytes(bytes(data))
    with pytest.raises(SolutionFileError, match=f"{member}: the member is damaged"):
        load_lean(saved)


def test_a_truncated_file_is_refused(saved):
    data = saved.read_bytes()
    saved.write_bytes(data[: len(data) // 2])
    with pytest.raises(SolutionFileError, match="not a readable numpy .npz archive"):
        load_lean(saved)


def test_a_value_edited_by_one_ulp_is_refused_by_its_digest(saved):
    meta, arrays = members(saved)
    arrays["board_values"][1000] = np.nextafter(arrays["board_values"][1000], np.inf)
    rewrite(saved, meta, arrays, redigest=False)
    with pytest.raises(SolutionFileError, match="board_values: its SHA-256 differs: the file was changed"):
        load_lean(saved)


def test_a_setting_edited_is_refused_by_the_metadata_digest(saved):
    meta, arrays = members(saved)
    rewrite(saved, dict(meta, residual=meta["residual"] * 2), arrays, redigest=False)
    with pytest.raises(SolutionFileError, match="meta: its SHA-256 differs"):
        load_lean(saved)


def test_forged_values_are_refused_by_the_sweep(saved, solved):
    """Digests made anew catch nothing: one Bellman sweep over the values does."""
    meta, arrays = members(saved)
    arrays["board_values"][1000] += 1e-6  # (160 times the residual the file claims)
    rewrite(saved, meta, arrays, redigest=True)
    with pytest.raises(SolutionFileError, match="board_values: one Bellman sweep over them moves board index"):
        load_lean(saved)
    # believed, unproved, where asked not to prove it; its digests still checked
    loaded = load_lean(saved, verify=False)
    assert not loaded.verified and "UNVERIFIED" in repr(loaded)
    assert loaded.board_values[1000] == solved["random"][0].board_values[1000] + 1e-6


def test_a_claimed_residual_below_the_values_own_is_refused(saved):
    meta, arrays = members(saved)
    arrays["residuals"][-1] = meta["residual"] / 100
    rewrite(saved, dict(meta, residual=meta["residual"] / 100), arrays, redigest=True)
    with pytest.raises(SolutionFileError, match="board_values: one Bellman sweep"):
        load_lean(saved)


def test_a_dead_board_worth_more_than_nothing_is_refused(saved, solved):
    lean = solved["random"][0]
    full = lean.boards()
    values, _ = lean.values_and_moves(full)
    dead = int(np.flatnonzero((values == 0).all(axis=1) & (lean.board_values == 0))[0])  # (no piece fits)
    meta, arrays = members(saved)
    arrays["board_values"][dead] = 1.0
    rewrite(saved, meta, arrays, redigest=True)
    with pytest.raises(SolutionFileError, match=f"moves board index {dead:,} "):
        load_lean(saved)


def test_a_board_added_or_removed_is_refused_naming_it(saved, solved):
    lean = solved["random"][0]
    meta, arrays = members(saved)
    bits, values = arrays["bits"], arrays["board_values"]
    unreachable = int(np.flatnonzero(~((bits[0] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).astype(bool))[0])
    added = bits.copy()
    added[0] |= np.uint64(1) << np.uint64(unreachable)
    index = int(np.searchsorted(lean.boards(), unreachable))
    more = np.insert(values, index, 0.0)
    rewrite(
        saved, dict(meta, n_boards=meta["n_boards"] + 1), dict(arrays, bits=added, board_values=more), redigest=True
    )
    with pytest.raises(SolutionFileError, match=f"bits: board {unreachable} is in the file but play never reaches it"):
        load_lean(saved)
    removed = bits.copy()
    last = int(lean.boards()[-1])
    removed[last >> 6] &= ~(np.uint64(1) << np.uint64(last & 63))
    fewer = dict(arrays, bits=removed, board_values=values[:-1])
    rewrite(saved, dict(meta, n_boards=meta["n_boards"] - 1), fewer, redigest=True)
    with pytest.raises(SolutionFileError, match=f"bits: board {last} is reachable .* but missing from the file"):
        load_lean(saved)
    # with the digests as saved, the change is named as damage
    rewrite(saved, dict(meta, n_boards=meta["n_boards"] - 1), fewer, redigest=False)
    with pytest.raises(SolutionFileError, match="SHA-256 differs"):
        load_lean(saved)


@pytest.mark.parametrize(
    "change, words",
    [
        (dict(ties="last"), "ties must be one of 'first'"),
        (dict(converged=False), "converged: False with residual"),
        (dict(opponent="gaps"), "opponent must be one of 'random', 'minimax'"),
        (dict(discount=1.0), "discount must be a number in [0, 1)"),
        (dict(method="vi"), "method: 'vi', where the plan kept"),
        (dict(iterations=3), "residuals: (7,) float64, where the rules and the settings make it (3,)"),
        (dict(n_boards=5), "n_boards: 5, where the bitmap holds 182,101 boards"),
    ],
)
def test_settings_out_of_range_or_inconsistent_are_refused_by_name(saved, change, words):
    meta, arrays = members(saved)
    rewrite(saved, dict(meta, **change), arrays, redigest=True)
    with pytest.raises(SolutionFileError, match=re.escape(words)):
        load_lean(saved)


def test_a_member_too_many_or_missing_is_refused(saved):
    meta, arrays = members(saved)
    np.savez(saved, meta=np.array(json.dumps(meta)), extra=np.zeros(3), **arrays)
    with pytest.raises(SolutionFileError, match="extra: not a member a lean solution file holds"):
        load_lean(saved)
    np.savez(saved, meta=np.array(json.dumps(meta)), bits=arrays["bits"], residuals=arrays["residuals"])
    with pytest.raises(SolutionFileError, match="board_values: missing from the file"):
        load_lean(saved)


def test_each_loader_names_the_other_for_the_other_form(tmp_path, saved):
    with pytest.raises(ValueError, match="holds a lean solution .*: read it with babytris.load_lean"):
        babytris.load(saved)
    babytris.solve(width=4, height=4).save(tmp_path / "table.npz")
    with pytest.raises(ValueError, match="holds a table solution .*: read it with babytris.load"):
        load_lean(tmp_path / "table.npz")
    (tmp_path / "text").write_text("no zip")
    with pytest.raises(ValueError, match="not a zip archive"):
        load_lean(tmp_path / "text")
    with pytest.raises(ValueError, match="was solved for"):
        load_lean(saved, rules=babytris.Rules(width=4, height=4))
    with pytest.raises(ValueError, match="path must be a file path"):
        load_lean(5)  # type: ignore[arg-type]


def test_a_bytes_path_and_a_symlink_are_taken_and_a_device_refused(tmp_path, solved):
    lean = solved["random"][0]
    target = tmp_path / "run.npz"
    link = tmp_path / "latest.npz"
    link.symlink_to(target)
    lean.save(os.fsencode(link))  # (the link is kept, its target written)
    assert link.is_symlink() and target.is_file()
    assert load_lean(os.fsencode(link)).n_boards == lean.n_boards
    with pytest.raises(WriteTargetError, match="path: cannot write to '/dev/null': it is a character device"):
        lean.save("/dev/null")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(WriteTargetError, match="it is a FIFO"):
        lean.save(tmp_path / "fifo")


SAVE = (
    "import sys, time, numpy as np, babytris\n"
    "lean = babytris.solve_lean(width=4, height=5, n_jobs=1)\n"
    "write = np.lib.format.write_array\n"
    "def slow(f, array, *args, **kwargs):\n"
    "    write(f, array, *args, **kwargs)\n"
    "    if array.size > 1000:\n"
    "        print('writing', flush=True)\n"
    "        time.sleep(60)\n"
    "np.lib.format.write_array = slow\n"
    "lean.save(sys.argv[1])\n"
)


def test_a_save_killed_mid_write_leaves_the_file_before(tmp_path, solved):
    before = solve_lean(width=4, height=4)
    target = tmp_path / "lean.npz"
    before.save(target)
    p = start([sys.executable, "-c", SAVE, str(target)], tmp_path)
    try:
        for line in p.stdout:
            if line.startswith("writing"):
                break
        else:
            pytest.fail(f"the save ended before its write: {p.stderr.read()}")
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == -signal.SIGKILL
    assert np.array_equal(load_lean(target).board_values, before.board_values)  # the old file, whole


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_play_and_evaluate_from_a_loaded_lean_result_equal_the_table_solutions(tmp_path, solved, opponent):
    lean, full = solved[opponent]
    lean.save(tmp_path / "lean.npz")
    loaded = load_lean(tmp_path / "lean.npz")
    pieces = "solution" if opponent == "minimax" else "random"
    for seed in (0, 7):
        mine = babytris.play(loaded, opponent=pieces, n_placements=300, n_games=40, seed=seed)
        theirs = babytris.play(full, opponent=pieces, n_placements=300, n_games=40, seed=seed)
        assert np.array_equal(mine.points, theirs.points) and np.array_equal(mine.placements, theirs.placements)
    assert babytris.expected_points(loaded, opponent=pieces, n_placements=500) == pytest.approx(
        babytris.expected_points(full, opponent=pieces, n_placements=500), rel=1e-12
    )
    assert babytris.evaluate(loaded, opponent=pieces, n_placements=50) == pytest.approx(
        babytris.evaluate(full, opponent=pieces, n_placements=50), rel=1e-12
    )
    assert babytris.evaluate(loaded, opponent="best_response", discount=0.9) == pytest.approx(
        babytris.evaluate(full, opponent="best_response", discount=0.9), abs=1e-8
    )
    # the policy's own value, at its own discount, is the game's start value
    own = "minimax" if opponent == "minimax" else "random"
    assert babytris.evaluate(loaded, opponent=own, discount=0.9) == pytest.approx(full.start_value, abs=1e-7)


def test_the_game_the_policy_plays_is_small(solved):
    played = solved["random"][0].played_game()
    assert played.n_boards == 296 and played.transitions.n_moves <= played.n_states  # (one move a state)
    assert played.transitions.rules.start in played.boards


def test_the_game_the_policy_plays_takes_each_boards_step_once(solved, monkeypatch):
    from babytris.modes import lean_policy

    lean = solved["random"][0]
    stepped = []
    steps = lean_policy.greedy_steps
    monkeypatch.setattr(
        lean_policy, "greedy_steps", lambda own, boards: stepped.append(len(boards)) or steps(own, boards)
    )
    played = lean_policy.played_game(lean)
    assert sum(stepped) == played.n_boards == 296  # (the walk's steps are the table's: no second pass)
    values, moves = lean.values_and_moves(played.boards)
    assert np.array_equal(played.values, values) and np.array_equal(played.policy, moves)


def test_lookups_equal_the_table_solutions(solved):
    lean, full = solved["random"]
    rng = np.random.default_rng(5)
    for i in rng.choice(full.n_boards, 50, replace=False):
        board = int(full.boards[i])
        for piece in full.rules.piece_names:
            assert lean.best_action(board, piece) == full.best_action(board, piece)
            assert lean.value(board, piece) == pytest.approx(full.value(board, piece), abs=1e-7)
    boards = full.boards[:40]
    mine, theirs = lean.policy_table(boards), full.policy_table()
    theirs = theirs[np.isin(np.asarray(theirs["board"]), boards)]
    assert list(mine["placement"]) == list(theirs["placement"])
    assert np.allclose(np.asarray(mine["value"]), np.asarray(theirs["value"]), atol=1e-7)
    assert list(mine["rows"]) == list(theirs["rows"])


def test_what_a_lean_result_cannot_hold_is_refused_with_its_size(solved):
    lean = solved["random"][0]
    states = 182_101 * 2
    with pytest.raises(ValueError, match=f"values: a LeanSolution keeps board values only .* {8 * states:,} bytes"):
        lean.values  # noqa: B018
    with pytest.raises(ValueError, match=f"policy: .* {2 * states:,} bytes"):
        lean.policy  # noqa: B018
    with pytest.raises(ValueError, match=f"transitions: a LeanSolution keeps no move table .* {11 * states:,} bytes"):
        lean.transitions  # noqa: B018
    with pytest.raises(
        MemoryLimitError, match=r"policy_table: the full table of 364,202 states would take [\d,]+ bytes"
    ):
        lean.policy_table(max_memory=2**20)
    with pytest.raises(ValueError, match="player: a LeanSolution plays its own policy only .* at least"):
        babytris.play(lean, "random")
    with pytest.raises(ValueError, match="opponent: with a LeanSolution give"):
        babytris.expected_points(lean, opponent=np.zeros(lean.n_boards, dtype=np.int16))
    with pytest.raises(ValueError, match=r"'best_response' or 'minimax' \(its own game's\), got 'gaps' \(piece"):
        babytris.expected_points(lean, opponent="gaps")
    with pytest.raises(ValueError, match="opponent='minimax': the equilibrium opponent of another game"):
        babytris.evaluate(lean, opponent="minimax", discount=0.9)
    with pytest.raises(ValueError, match="is not reachable"):
        lean.best_action(2**20 - 1, "I")
    with pytest.raises(ValueError, match=r"board must be in \[0, 2\*\*20\)"):
        lean.best_action(-1, "I")


def test_the_command_line_saves_a_lean_solve(tmp_path, capsys):
    path = tmp_path / "lean.npz"
    argv = ["solve", "--width", "4", "--height", "5", "--mode", "lean", "--out", str(path), "--json"]
    assert cli.main(argv) == cli.EXIT_OK
    result = json.loads(capsys.readouterr().out)
    assert result["saved"] == str(path) and result["mode"] == "lean"
    assert load_lean(path).start_value == result["start_value"]
    csv = ["solve", "--width", "4", "--height", "4", "--mode", "lean", "--policy-csv", str(tmp_path / "p.csv")]
    assert cli.main(csv) == cli.EXIT_BAD_ARGUMENTS
    assert "--policy-csv: a lean solution holds board values only (its moves are computed" in capsys.readouterr().err


def test_action_values_equal_the_table_solutions(solved):
    for lean, full in solved.values():
        for i in np.random.default_rng(6).choice(full.n_boards, 30, replace=False):
            board = int(full.boards[i])
            for piece in full.rules.piece_names:
                mine, theirs = lean.action_values(board, piece), full.action_values(board, piece)
                assert list(mine) == list(theirs)
                assert np.allclose(list(mine.values()), list(theirs.values()), atol=1e-7, rtol=0)
    with pytest.raises(ValueError, match="action_values: a lean solution plays without previews, hold or a bag"):
        lean.action_values(0, "I", ("L",))


def test_every_lookup_refuses_a_board_of_another_size_as_the_table_solution(solved):
    lean, full = solved["random"]
    other = babytris.Board(5, full.rules.width + 1, full.rules.height)  # (its bits a board of these rules too)
    for lookup in ("value", "best_action", "action_values"):
        for solution in (lean, full):
            with pytest.raises(ValueError, match=f"board is {other.width}x{other.height}, the rules are 4x5"):
                getattr(solution, lookup)(other, "I")
    with pytest.raises(ValueError, match="is not reachable"):
        lean.action_values(2**20 - 1, "I")


def test_the_command_line_plays_a_lean_file_as_the_table_file(tmp_path, capsys, solved):
    lean, full = solved["random"]
    lean.save(tmp_path / "lean.npz")
    full.save(tmp_path / "table.npz")
    games = {}
    for name in ("lean", "table"):
        pictures = ["--strip", str(tmp_path / f"{name}.png")]
        argv = ["play", "--solution", str(tmp_path / f"{name}.npz"), "--placements", "30", "--seed", "7", *pictures]
        assert cli.main(argv) == cli.EXIT_OK
        games[name] = capsys.readouterr().out
    lean_lines = games["lean"].splitlines()
    assert lean_lines[1].startswith("a lean solution: its policy plays on the boards it reaches (")
    assert [*lean_lines[:1], *lean_lines[2:]] == games["table"].splitlines()  # (the same moves, values and score)
    # every move drawn with its value: the pictures are the table file's, byte for byte
    assert (tmp_path / "lean.png").read_bytes() == (tmp_path / "table.png").read_bytes()


def test_a_policy_table_for_every_board_where_it_fits(solved):
    lean, full = solved["random"]
    mine, theirs = lean.policy_table(), full.policy_table()  # (boards ascending; the table's by layer)
    assert np.array_equal(np.asarray(mine["board"]), np.repeat(lean.boards(), 2))
    rows = (np.argsort(full.boards)[:, None] * 2 + np.arange(2)).ravel()
    assert np.array_equal(np.asarray(mine["placement"]), np.asarray(theirs["placement"])[rows])
    assert np.abs(np.asarray(mine["value"]) - np.asarray(theirs["value"])[rows]).max() < 1e-7


LOAD_AGAIN = "import sys, babytris\nprint('loading', flush=True)\nwhile True:\n    babytris.load_lean(sys.argv[1])\n"


@pytest.mark.long
@pytest.mark.parametrize("delay", [0.3, 0.75, 1.2])
def test_a_load_answers_ctrl_c_within_half_a_second(tmp_path, delay):
    """Loads of 4x6 one after another (about 0.4 s each: the search, the reading, the sweep),
    interrupted at some point of one."""
    solve_lean(width=4, height=6).save(tmp_path / "4x6.npz")
    p = start([sys.executable, "-c", LOAD_AGAIN, str(tmp_path / "4x6.npz")], tmp_path)
    try:
        assert p.stdout.readline().startswith("loading")
        time.sleep(delay)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        latency = time.monotonic() - sent
    finally:
        p.kill()
    assert "KeyboardInterrupt" in err and latency < 0.5, (latency, err[-500:])
