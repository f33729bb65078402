"""The lean mode against the default (table) mode (issue 14, parts 4 and 5):
time, and peak memory against each mode's own estimate.

``test_lean_against_table``: ``solve_lean`` and ``solve`` of the same board,
interleaved (medians of ``rounds``); records both and their ratio.  Target
(issue 48): the lean mode at most :data:`LEAN_OVER_TABLE` times the table's
time at 4x6 and 4x7.
``test_memory_estimate``: the peak resident memory a solve adds, measured in
a fresh interpreter (``bench/conftest.py``), against the estimate the memory
guard refuses work by (``lean_bytes``; ``table_bytes`` for the default
mode, given the boards and moves).  Target: within 20% of the measured peak.
``test_4x8_saved_and_loaded`` (issue 48, part 4; ``slow``, one run of some
minutes): 4x8 solved in the lean mode with every default and saved
(``LeanSolution.save``) in one fresh interpreter, loaded with its proof
(``load_lean``) and played from in another; records the file's size, the
save's and the load's seconds, each process's peak resident memory
(``VmHWM``), and the game the policy plays.  Targets: a file of at most
5 GiB, and the load within the solve's memory.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import babytris
from babytris.engine.resources import DEFAULT_MAX_MEMORY, table_bytes
from babytris.modes.lean import lean_plan
from babytris.solvers.solve import solver_bytes_per_board

TARGET = 0.2
LEAN_OVER_TABLE = 2.0

# (width, height, rounds)
SIZES = [
    pytest.param((4, 5, 5), id="4x5"),
    pytest.param((4, 6, 3), id="4x6", marks=pytest.mark.slow),
    pytest.param((4, 7, 3), id="4x7", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("size", SIZES)
def test_lean_against_table(benchmark, size):
    width, height, rounds = size
    lean, table = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        babytris.solve_lean(width=width, height=height)
        lean.append(time.perf_counter() - started)
        started = time.perf_counter()
        babytris.solve(width=width, height=height)
        table.append(time.perf_counter() - started)
    benchmark.group = "lean mode against the table mode"
    benchmark.extra_info.update(
        size=f"{width}x{height}",
        lean_seconds=statistics.median(lean),
        table_seconds=statistics.median(table),
        lean_over_table=statistics.median(lean) / statistics.median(table),
    )
    benchmark.pedantic(babytris.solve_lean, kwargs=dict(width=width, height=height), rounds=1)
    if height >= 6:
        ratio = statistics.median(lean) / statistics.median(table)
        assert ratio <= LEAN_OVER_TABLE, f"{width}x{height}: lean {ratio:.2f}x the table's time"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory from /proc")
@pytest.mark.parametrize("mode", ["solve_lean", "solve"])
@pytest.mark.parametrize(
    "size", [pytest.param((4, 6), id="4x6"), pytest.param((4, 7), id="4x7", marks=pytest.mark.slow)]
)
def test_memory_estimate(benchmark, peak_rss, mode, size):
    width, height = size
    rules = babytris.Rules(width=width, height=height)
    table = babytris.enumerate_boards(rules)
    if mode == "solve_lean":
        plan = lean_plan(rules, table.n_boards, DEFAULT_MAX_MEMORY)  # what the solve keeps, by default
        assert plan is not None
        estimate = plan.bytes
    else:  # the default solve: modified policy iteration, accelerated
        per_board = solver_bytes_per_board(rules, "mpi", True, table.n_boards)
        estimate = table_bytes(rules, table.n_boards, table.n_moves, per_board)
    measured = peak_rss.mib(mode, width, height) * 2**20
    off = estimate / measured - 1
    benchmark.group = "memory estimate against the measured peak"
    benchmark.extra_info.update(size=f"{width}x{height}", mode=mode, estimate=estimate, measured=measured, off=off)
    benchmark.pedantic(lambda: None, rounds=1)
    assert abs(off) <= TARGET, (
        f"{mode} {width}x{height}: estimate {estimate:.3g} B, measured {measured:.3g} B ({off:+.0%})"
    )


MAX_FILE = 5 * 2**30
START_VALUE = 10.830393075

#: The children of test_4x8_saved_and_loaded: each prints one line of JSON.
PEAK = """
import re
def peak():
    with open("/proc/self/status") as f:
        return int(re.search(r"VmHWM:\\s+(\\d+) kB", f.read()).group(1)) * 1024
"""
SOLVE_AND_SAVE = (
    PEAK
    + """
import json, os, sys, time, babytris
started = time.perf_counter()
lean = babytris.solve_lean(width=4, height=8)
solved = time.perf_counter()
lean.save(sys.argv[1])
saved = time.perf_counter()
print(json.dumps(dict(solve=solved - started, save=saved - solved, size=os.path.getsize(sys.argv[1]), peak=peak(),
                      n_boards=lean.n_boards, start_value=lean.start_value, error_bound=lean.error_bound)))
"""
)
LOAD_AND_PLAY = (
    PEAK
    + """
import cProfile, json, pstats, sys, time, babytris
profile = cProfile.Profile()
started = time.perf_counter()
lean = profile.runcall(babytris.load_lean, sys.argv[1])
loaded = time.perf_counter()
spent = {}  # (the load's parts: the search and the bitmap's reading, every reading, the sweep)
for (_, _, name), (_, _, _, cumulative, _) in pstats.Stats(profile).stats.items():
    if name in ("_table", "_read", "_prove_values"):
        spent[name] = spent.get(name, 0.0) + cumulative
game = lean.played_game()
played = time.perf_counter()
games = babytris.play(lean, n_placements=10_000, n_games=100, seed=0)
points = babytris.expected_points(lean, n_placements=1_000)
done = time.perf_counter()
print(json.dumps(dict(load=loaded - started, load_parts=spent, played_game=played - loaded, played_boards=game.n_boards,
                      play_and_expected_points=done - played, mean=games.mean, expected_points=points,
                      peak=peak(), verified=lean.verified, n_boards=lean.n_boards, start_value=lean.start_value,
                      error_bound=lean.error_bound, first_move=str(lean.best_action(0, "I")))))
"""
)


def _child(script: str, path: Path) -> dict:
    """``script`` run with ``path`` in a fresh interpreter, in the file's folder
    (not the source tree: the installed package); its line of JSON."""
    done = subprocess.run([sys.executable, "-c", script, str(path)], cwd=path.parent, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory from /proc")
def test_4x8_saved_and_loaded(benchmark):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "4x8.npz"
        solve = _child(SOLVE_AND_SAVE, path)
        load = _child(LOAD_AND_PLAY, path)
    benchmark.group = "4x8 saved and loaded"
    benchmark.extra_info.update(
        solve_seconds=solve["solve"],
        save_seconds=solve["save"],
        file_bytes=solve["size"],
        solve_peak=solve["peak"],
        load_seconds=load["load"],
        load_peak=load["peak"],
        load_parts=load["load_parts"],
        played_game_seconds=load["played_game"],
        played_boards=load["played_boards"],
        play_and_expected_points_seconds=load["play_and_expected_points"],
        mean_points=load["mean"],
        expected_points=load["expected_points"],
        start_value=load["start_value"],
        error_bound=load["error_bound"],
    )
    benchmark.pedantic(lambda: None, rounds=1)
    print(json.dumps(dict(solve=solve, load=load)))  # (the numbers of bench/README.md, with -s)
    assert solve["n_boards"] == load["n_boards"] == 499_182_027 and load["verified"]
    assert solve["size"] <= MAX_FILE, f"{solve['size'] / 2**30:.2f} GiB"
    assert load["peak"] <= solve["peak"], f"load {load['peak'] / 2**30:.2f} GiB, solve {solve['peak'] / 2**30:.2f} GiB"
    assert load["start_value"] == solve["start_value"] and load["error_bound"] == solve["error_bound"]
    assert abs(load["start_value"] - START_VALUE) <= load["error_bound"] + 5e-10  # (the quoted 9 decimals)
